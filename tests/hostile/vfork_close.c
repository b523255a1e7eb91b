// A vfork child shares the parent's memory until it execs or exits, but has
// its own fd table: closing every fd there must not stop the parent's
// recording. The parent then reads a file (the trace check finds those reads).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    int fd = open("after.bin", O_CREAT | O_TRUNC | O_RDWR, 0644);
    char buf[4096] = {1};
    write(fd, buf, sizeof buf);
    pid_t pid = vfork();
    if (pid == 0) {
        for (int i = 3; i < 2048; i++) close(i);
        _exit(7);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    long sum = 0;
    for (int i = 0; i < 300; i++) sum += pread(fd, buf, sizeof buf, 0);
    printf("child exit %d; parent read %ld bytes\n", WEXITSTATUS(st), sum);
    return 0;
}
