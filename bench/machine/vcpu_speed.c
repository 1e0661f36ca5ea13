/* How fast is each CPU of this machine, now? Pins itself to each CPU in turn and times the same
 * integer loop (8 independent chains, so it needs a whole core's issue width), for several
 * rounds. On a dedicated machine every CPU takes the same time in every round; on a VM whose
 * vCPUs share physical cores with other tenants, a vCPU runs at half speed whenever its core's
 * sibling is busy, which no scheduling inside the VM can see or avoid.
 *
 * Build and run:  cc -O2 -o vcpu_speed bench/machine/vcpu_speed.c && ./vcpu_speed [rounds]
 * Prints one line per round: the milliseconds each CPU took, then the slowest / fastest ratio
 * and the sum of the CPUs' speeds relative to the fastest (the most a perfectly balanced
 * parallel run could gain over one thread on the fastest CPU). */
#define _GNU_SOURCE
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

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        double fastest = 1e9, slowest = 0, ms[CPU_SETSIZE];
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
            if (ms[n] > slowest) slowest = ms[n];
            n++;
        }
        double speeds = 0;
        printf("round %d, ms per cpu:", r);
        for (int k = 0; k < n; k++) {
            printf(" %d:%.0f", cpus[k], ms[k]);
            speeds += fastest / ms[k];
        }
        printf("  slowest/fastest %.2f  sum of speeds %.1f of %d\n", slowest / fastest, speeds, n);
        fflush(stdout);
    }
    sched_setaffinity(0, sizeof allowed, &allowed);
    return 0;
}
