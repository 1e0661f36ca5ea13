/*
 * fib_driver.h: the naive task-parallel Fibonacci benchmark (000 §3.2.4), shared by every
 * implementation: taskdag, Kokkos TaskScheduler, oneTBB task_group, OpenMP tasks.
 *
 * Each call F(k) of the recursion is one task ("node"): F(k) for k > 1 spawns F(k-1) and F(k-2)
 * and combines their results (taskdag and Kokkos: spawn the children, respawn on their when_all;
 * TBB and OpenMP: spawn both children and wait). F(n) has 2 F(n+1) - 1 nodes.
 *
 * An implementation file defines IMPL_NAME and IMPL_MAX_THREADS (0 = any) before including this
 * header, and IMPL_HAS_WORKERS if it reads fib_workers (--workers; others refuse the option); and
 * after it:
 *   static int  impl_setup(int threads, char *err, size_t n);   0 = ok
 *   static long impl_fib(int n, char *err, size_t errn);         F(n), or -1 with err set
 *   static void impl_info(FILE *f);        extra ,"key":value fields for the info line
 *   static void impl_teardown(void);
 *
 * Figures per repetition: wall = time of impl_fib (all tasks of one F(n), including the
 * scheduler's start and end); ns_per_node = wall / nodes (wall time per node with all threads);
 * mnodes_per_s = nodes / wall / 1e6.
 * Validation: the result must equal F(n) computed iteratively, on every repetition.
 */
#ifndef TASKDAG_FIB_DRIVER_H
#define TASKDAG_FIB_DRIVER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_util.h"

static int impl_setup(int threads, char *err, size_t n);
static long impl_fib(int n, char *err, size_t errn);
static void impl_info(FILE *f);
static void impl_teardown(void);

/* In quick mode, n is capped here so every implementation finishes in milliseconds. */
#define FIB_QUICK_MAX_N 16

/* --workers W: the waits run on W of the T threads (taskdag: a masked space); 0 = all T. */
static int fib_workers = 0;

static long fib_reference(int n) {
    long a = 0, b = 1;
    int i;
    for (i = 0; i < n; ++i) {
        long c = a + b;
        a = b;
        b = c;
    }
    return a;
}

static void fib_usage(void) {
    fprintf(stderr,
            "usage: %s [--n N] [--threads T] [--workers W (taskdag only)] [--reps R] [--warmup W]\n"
            "       [--quick]\n"
            "Computes Fibonacci(N) with one task per call; prints JSON lines; exits 0 only when\n"
            "every result was F(N). --workers: the tasks run on the first W of the T threads.\n",
            IMPL_NAME);
}

int main(int argc, char **argv) {
    int n = 25, threads = 1, reps = 5, warmup = 1, quick = 0, i, rep;
    long expected;
    double nodes;
    char err[1024];
    for (i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            fib_usage();
            return 0;
        } else if (!strcmp(o, "--n")) {
            n = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--threads")) {
            threads = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--workers")) {
            fib_workers = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--reps")) {
            reps = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--warmup")) {
            warmup = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--quick")) {
            quick = 1;
        } else {
            fib_usage();
            bench_die(BENCH_EXIT_UNSUPPORTED, "unknown option '%s'", o);
        }
    }
    if (threads < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--threads must be >= 1");
#ifndef IMPL_HAS_WORKERS
    if (fib_workers != 0) bench_die(BENCH_EXIT_UNSUPPORTED, "%s does not support --workers", IMPL_NAME);
#endif
    if (fib_workers < 0 || fib_workers > threads)
        bench_die(BENCH_EXIT_UNSUPPORTED, "--workers must be in [1, --threads] (0 = all)");
    if (IMPL_MAX_THREADS > 0 && threads > IMPL_MAX_THREADS)
        bench_die(BENCH_EXIT_UNSUPPORTED, "%s supports at most %d thread(s), asked for %d", IMPL_NAME,
                  IMPL_MAX_THREADS, threads);
    if (n < 0 || n > 45) bench_die(BENCH_EXIT_UNSUPPORTED, "--n must be in [0, 45]");
    if (reps < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--reps must be >= 1");
    if (quick && n > FIB_QUICK_MAX_N) n = FIB_QUICK_MAX_N;
    expected = fib_reference(n);
    nodes = 2.0 * (double)fib_reference(n + 1) - 1.0;

    err[0] = '\0';
    if (impl_setup(threads, err, sizeof err) != 0) bench_die(BENCH_EXIT_WRONG, "%s setup failed: %s", IMPL_NAME, err);
    printf("{\"type\":\"info\",\"bench\":\"fib_task\",\"impl\":\"%s\",\"n\":%d,\"threads\":%d,\"nodes\":%.0f",
           IMPL_NAME, n, threads, nodes);
    if (fib_workers != 0) printf(",\"workers\":%d", fib_workers);
    impl_info(stdout);
    printf("}\n");
    fflush(stdout);

    for (rep = 0; rep < warmup + reps; ++rep) {
        uint64_t t0, t1;
        long got;
        double wall;
        err[0] = '\0';
        t0 = bench_now_ns();
        got = impl_fib(n, err, sizeof err);
        t1 = bench_now_ns();
        if (got < 0) bench_die(BENCH_EXIT_WRONG, "%s: F(%d) failed: %s", IMPL_NAME, n, err);
        if (got != expected)
            bench_die(BENCH_EXIT_WRONG, "%s: F(%d) = %ld, expected %ld", IMPL_NAME, n, got, expected);
        wall = (double)(t1 - t0);
        printf("{\"type\":\"measurement\",\"bench\":\"fib_task\",\"impl\":\"%s\",\"n\":%d,\"threads\":%d,"
               "\"rep\":%d,\"warmup\":%s,\"wall_ns\":%.0f,\"ns_per_node\":%.4f,\"mnodes_per_s\":%.4f}\n",
               IMPL_NAME, n, threads, rep - warmup, rep < warmup ? "true" : "false", wall, wall / nodes,
               nodes / wall * 1e3);
        fflush(stdout);
    }
    impl_teardown();
    printf("{\"type\":\"done\",\"valid\":true,\"bench\":\"fib_task\",\"impl\":\"%s\",\"n\":%d,\"threads\":%d}\n",
           IMPL_NAME, n, threads);
    return 0;
}

#endif /* TASKDAG_FIB_DRIVER_H */
