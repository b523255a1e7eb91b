// dup2 a data file onto each fd given on the command line (700 is the shim's
// old trace fd), write through it while threads make the shim record and claim
// chunks, then print each file's size and content.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *work(void *arg) {
    (void)arg;
    int fd = open("/dev/zero", O_RDONLY);
    char buf[64];
    for (int i = 0; i < 3000; i++) pread(fd, buf, sizeof buf, 0);
    close(fd);
    usleep(30000);
    return NULL;
}

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        int target = atoi(argv[a]);
        char name[64];
        snprintf(name, sizeof name, "f%d.txt", target);
        int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (write(fd, "123456789", 9) != 9) return 10;
        if (dup2(fd, target) != target) { perror("dup2"); return 11; }
        close(fd);
        pthread_t t[4];
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, NULL);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        if (write(target, "abc\n", 4) != 4) { perror("write"); return 12; }
        close(target);
    }
    for (int a = 1; a < argc; a++) {
        char name[64], buf[256] = {0};
        snprintf(name, sizeof name, "f%s.txt", argv[a]);
        FILE *f = fopen(name, "r");
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        printf("%s: %zu bytes: %s", name, n, buf);
    }
    return 0;
}
