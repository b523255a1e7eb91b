// At its fd limit with N idle threads (whose /proc files a sampler reads):
// takes every fd number but the last, then opens and closes that last one
// ROUNDS times. Each open must get it; prints how many did not.
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
    int rounds = argc > 2 ? atoi(argv[2]) : 100000;
    pthread_t *t = calloc(n, sizeof *t);
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, idle, NULL);
    usleep(300000);
    int fd, last = -1;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0) last = fd;
    if (last < 0) return 9;
    close(last);
    int failed = 0;
    for (int i = 0; i < rounds; i++) {
        fd = open("/dev/null", O_RDONLY);
        if (fd < 0)
            failed++;
        else
            close(fd);
    }
    printf("%d threads; the last free fd failed to open %d times in %d\n", n, failed, rounds);
    pthread_mutex_lock(&m);
    go = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}
