/* How fast is each CPU of this machine, now? Pins itself to each CPU in turn and times the same
 * integer loop (8 independent chains, so it needs a whole core's issue width), for several
 * rounds. On a dedicated machine every CPU takes the same time in every round; on a VM whose
 * vCPUs share physical cores with other tenants, a vCPU runs at half speed whenever its core's
 * sibling is busy, which no scheduling inside the VM can see or avoid.
 *
 * Each round has two lines. "alone": the CPUs one at a time. "together": one pinned thread per
 * CPU, all at once, as a parallel run uses the machine; on a VM whose vCPUs are SMT siblings of
 * each other (which it may not tell), or whose host is oversubscribed, this is where the
 * machine's parallel capacity shows.
 *
 * Build and run:  cc -O2 -pthread -o vcpu_speed bench/machine/vcpu_speed.c && ./vcpu_speed [rounds]
 * Each line gives the milliseconds each CPU took, then the slowest / fastest ratio and the sum of
 * the CPUs' speeds relative to the fastest CPU of the "alone" line (the most a perfectly
 * balanced parallel run could gain over one thread on that CPU). */
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

static double timed_loop(void) {
    uint64_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double start = seconds();
    for (uint64_t i = 0; i < 100000000u; i++) {
        __asm__ volatile("" : "+r"(x[0]));
        x[0] += i, x[1] ^= i, x[2] += x[0], x[3] ^= x[1];
        x[4] += i, x[5] ^= x[4], x[6] += x[5], x[7] ^= i;
    }
    __asm__ volatile("" ::"r"(x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7]));
    return seconds() - start;
}

typedef struct together_arg {
    int cpu;
    pthread_barrier_t *start;
    double ms;
} together_arg;

static void *together_thread(void *p) {
    together_arg *a = (together_arg *)p;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(a->cpu, &one);
    a->ms = -1;
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
        pthread_barrier_wait(a->start);
        return NULL;
    }
    pthread_barrier_wait(a->start);
    a->ms = 1e3 * timed_loop();
    return NULL;
}

static void print_line(const char *what, int round, const int *cpus, const double *ms, int n,
                       double reference) {
    double fastest = 1e9, slowest = 0, speeds = 0;
    printf("round %d %s, ms per cpu:", round, what);
    for (int k = 0; k < n; k++) {
        printf(" %d:%.0f", cpus[k], ms[k]);
        if (ms[k] < fastest) fastest = ms[k];
        if (ms[k] > slowest) slowest = ms[k];
        speeds += reference / ms[k];
    }
    printf("  slowest/fastest %.2f  sum of speeds %.1f of %d\n", slowest / fastest, speeds, n);
    fflush(stdout);
}

/* Every CPU of `cpus` runs the loop at the same time; returns 0 on success. */
static int run_together(const int *cpus, int n, double *ms) {
    static pthread_t threads[CPU_SETSIZE];
    static together_arg args[CPU_SETSIZE];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int k = 0; k < n; k++) {
        args[k] = (together_arg){cpus[k], &start, 0};
        if (pthread_create(&threads[k], NULL, together_thread, &args[k]) != 0) {
            fprintf(stderr, "vcpu_speed: pthread_create failed\n");
            exit(1);
        }
    }
    int ok = 0;
    for (int k = 0; k < n; k++) {
        pthread_join(threads[k], NULL);
        ms[k] = args[k].ms;
        if (ms[k] < 0) ok = -1;
    }
    pthread_barrier_destroy(&start);
    return ok;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        double fastest = 1e9, ms[CPU_SETSIZE];
        int cpus[CPU_SETSIZE], n = 0;
        for (int c = 0; c < CPU_SETSIZE; c++) {
            cpu_set_t one;
            if (!CPU_ISSET(c, &allowed)) continue;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
            cpus[n] = c;
            ms[n] = 1e3 * timed_loop();
            if (ms[n] < fastest) fastest = ms[n];
            n++;
        }
        print_line("alone", r, cpus, ms, n, fastest);
        double together[CPU_SETSIZE];
        if (run_together(cpus, n, together) != 0) {
            fprintf(stderr, "vcpu_speed: could not pin a thread to each CPU\n");
            return 1;
        }
        print_line("together", r, cpus, together, n, fastest);
    }
    sched_setaffinity(0, sizeof allowed, &allowed);
    return 0;
}
