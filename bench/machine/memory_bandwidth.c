/* How much memory bandwidth does this process get? T threads (pinned one per CPU) each first
 * touch, then repeatedly read, their share of one array; prints the aggregate GB/s of each
 * pass. Run it as several processes in a row: on a VM whose memory may lie on either socket of
 * the host, or whose last-level cache is shared with other tenants, the figure can differ from
 * one process to the next while staying steady within one.
 *
 * Build and run:  cc -O2 -pthread -o memory_bandwidth bench/machine/memory_bandwidth.c
 *                 ./memory_bandwidth [threads] [MiB] [passes] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    int cpu;
    uint64_t *part;
    size_t words;
    int passes;
    pthread_barrier_t *barrier;
    uint64_t sum;
} worker;

static double g_pass_start[64];

static void *run(void *arg) {
    worker *w = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(w->cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    for (size_t i = 0; i < w->words; i++) w->part[i] = i;
    for (int p = 0; p < w->passes; p++) {
        pthread_barrier_wait(w->barrier);
        if (w->cpu == 0) g_pass_start[p] = seconds();
        uint64_t s = 0;
        for (size_t i = 0; i < w->words; i++) s += w->part[i];
        w->sum += s;
    }
    pthread_barrier_wait(w->barrier);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
    int passes = argc > 3 ? atoi(argv[3]) : 5;
    if (threads < 1 || threads > 64 || passes < 1 || passes > 63) return 2;
    size_t words = mib * 1024 * 1024 / 8 / (size_t)threads;
    uint64_t *array = malloc(words * (size_t)threads * 8);
    pthread_t tid[64];
    worker w[64];
    pthread_barrier_t barrier;
    if (!array) return 1;
    pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
    for (int t = 0; t < threads; t++) {
        w[t] = (worker){t, array + (size_t)t * words, words, passes, &barrier, 0};
        pthread_create(&tid[t], NULL, run, &w[t]);
    }
    printf("%d threads, %zu MiB, GB/s per pass:", threads, mib);
    for (int p = 0; p <= passes; p++) {
        pthread_barrier_wait(&barrier);
        if (p > 0) printf(" %.1f", (double)(words * 8 * (size_t)threads) / (seconds() - g_pass_start[p - 1]) / 1e9);
    }
    printf("\n");
    for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    return 0;
}
