// N threads each write their own file; prints the total.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *work(void *arg) {
    long i = (long)arg;
    char name[64];
    snprintf(name, sizeof name, "t%03ld.txt", i);
    FILE *f = fopen(name, "w");
    for (int k = 0; k < 100; k++) fprintf(f, "%ld %d\n", i, k);
    fclose(f);
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300;
    pthread_t *t = calloc(n, sizeof *t);
    for (long i = 0; i < n; i++) pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    printf("%d threads wrote their files\n", n);
    return 0;
}
