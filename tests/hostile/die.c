// Ends as asked: exit N, or death by a signal.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "exit";
    printf("dying by %s\n", how);
    fflush(stdout);
    if (!strcmp(how, "segv")) { volatile int *p = NULL; return *p; }
    if (!strcmp(how, "abort")) abort();
    if (!strcmp(how, "kill")) raise(SIGKILL);
    if (!strcmp(how, "term")) raise(SIGTERM);
    if (!strcmp(how, "fpe")) raise(SIGFPE);
    if (!strcmp(how, "_exit")) _exit(argc > 2 ? atoi(argv[2]) : 0);
    return argc > 2 ? atoi(argv[2]) : 0;
}
