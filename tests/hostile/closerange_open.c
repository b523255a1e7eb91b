// Closes every fd from 3 up (close_range), then opens N files and keeps them
// open while threads run, writes through each again and checks every file.
// A shim that kept an fd among them, or re-opened one, shows up as a wrong
// file. With "stderr" it also closes fd 2 first, so the first file gets fd 2.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *work(void *arg) {
    (void)arg;
    char buf[64];
    int fd = open("/dev/zero", O_RDONLY);
    for (int i = 0; i < 20000; i++) pread(fd, buf, sizeof buf, 0);
    close(fd);
    usleep(20000);
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int close_stderr = argc > 2 && strcmp(argv[2], "stderr") == 0;
    mkdir("m", 0755);
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
        for (int fd = 3; fd < 4096; fd++) close(fd);
    if (close_stderr) close(2);
    int *fds = calloc(n, sizeof *fds);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "m/%04d", i);
        fds[i] = open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
        if (fds[i] < 0) { printf("open %d failed\n", i); return 3; }
        dprintf(fds[i], "%d\n", i);
    }
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    if (fork() == 0) _exit(0);
    for (int i = 0; i < n; i++) {
        dprintf(fds[i], "%d\n", i);
        // With "stderr", the first file (fd 2) stays open to the end, where
        // a stallscope: line sent to fd 2 would land in it.
        if (!(close_stderr && i == 0)) close(fds[i]);
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char name[64], want[64], got[64] = {0};
        snprintf(name, sizeof name, "m/%04d", i);
        snprintf(want, sizeof want, "%d\n%d\n", i, i);
        int fd = open(name, O_RDONLY);
        read(fd, got, sizeof got - 1);
        close(fd);
        bad += strcmp(got, want) != 0;
    }
    printf("%d files, %d wrong\n", n, bad);
    return bad != 0;
}
