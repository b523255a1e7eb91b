// F_DUPFD hands out the lowest free fd at or above its argument: an fd the
// shim holds there moves the answer.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    int fd = open("data.txt", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    int mins[] = {600, 699, 700, 700, 701, 900, 1000};
    for (unsigned i = 0; i < sizeof mins / sizeof mins[0]; i++) {
        int n = fcntl(fd, (i & 1) ? F_DUPFD_CLOEXEC : F_DUPFD, mins[i]);
        printf("F_DUPFD %d -> %d\n", mins[i], n);
        dprintf(n, "via %d\n", n);
    }
    return 0;
}
