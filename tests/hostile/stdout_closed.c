// Run with stdout closed: writes to fd 1 must fail with EBADF, not land in a
// file the shim opened there. Then opens a file, which must get fd 1.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    int r = write(1, "lost\n", 5);
    fprintf(stderr, "write to closed stdout: %s\n", r < 0 ? strerror(errno) : "succeeded");
    int fd = open("out.txt", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    fprintf(stderr, "first open got fd %d\n", fd);
    dprintf(fd, "data through fd %d\n", fd);
    return 0;
}
