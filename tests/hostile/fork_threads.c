// Threads that each fork; each child writes a file and exits with its index.
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int codes[8];

static void *work(void *arg) {
    long i = (long)arg;
    pid_t pid = fork();
    if (pid == 0) {
        char name[32];
        snprintf(name, sizeof name, "child%ld.txt", i);
        FILE *f = fopen(name, "w");
        fprintf(f, "child %ld\n", i);
        fclose(f);
        _exit((int)i + 10);
    }
    int st;
    waitpid(pid, &st, 0);
    codes[i] = WEXITSTATUS(st);
    return NULL;
}

int main(void) {
    pthread_t t[8];
    for (long i = 0; i < 8; i++) pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 8; i++) printf("child %d exited %d\n", i, codes[i]);
    return 0;
}
