// A server that blocks every signal in every thread and takes SIGTERM with
// sigwait, then shuts down gracefully. A thread with an open mask (the
// shim's) would take SIGTERM and kill it instead.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int stop;

static void *worker(void *arg) {
    (void)arg;
    while (!stop) usleep(2000);
    return NULL;
}

int main(void) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, NULL);
    printf("serving\n");
    fflush(stdout);
    FILE *p = fopen("pid.tmp", "w");
    fprintf(p, "%d\n", getpid());
    fclose(p);
    rename("pid.tmp", "pid");
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    int sig = 0;
    sigwait(&term, &sig);
    stop = 1;
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    printf("got signal %d, shut down gracefully\n", sig);
    unlink("pid");
    return 0;
}
