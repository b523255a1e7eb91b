// Starts N threads that sleep, lets a sampler notice them, then opens files
// until the fd limit and prints how many it got. With ROUNDS, it then frees
// the last number and opens and closes it ROUNDS times: each open must get
// it (the shim's own fds must not take it), and it prints how many did not.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go;

static void *idle(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!go) pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 40;
    int rounds = argc > 2 ? atoi(argv[2]) : 0;
    pthread_t *t = calloc(n, sizeof *t);
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, idle, NULL);
    usleep(300000);
    int opened = 0, fd, last = -1;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0) {
        opened++;
        last = fd;
    }
    printf("%d threads; opened %d files before %s\n", n, opened,
           errno == EMFILE ? "EMFILE" : "another error");
    if (rounds > 0 && last >= 0) {
        close(last);
        int failed = 0;
        for (int i = 0; i < rounds; i++) {
            fd = open("/dev/null", O_RDONLY);
            if (fd < 0)
                failed++;
            else
                close(fd);
        }
        printf("the last free fd failed to open %d times in %d\n", failed, rounds);
    }
    pthread_mutex_lock(&m);
    go = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}
