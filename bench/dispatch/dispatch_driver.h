/*
 * dispatch_driver.h: the data-parallel dispatch benchmark, shared by every implementation
 * (taskdag, GCC OpenMP, oneTBB). Compiles as C and as C++.
 *
 * An implementation file defines IMPL_NAME before including this header, and after it:
 *   static int     impl_setup(int threads, char *err, size_t n);   0 = ok; `threads` in all,
 *                                                                  the calling thread included
 *   static int     impl_for(int64_t n);           parallel_for over [0, n) calling
 *                                                 dispatch_touch(i) for each i; 0 = ok
 *   static int     impl_reduce(int64_t n, int64_t *sum);  sum of (i + 1) over [0, n); 0 = ok
 *   static int     impl_fill(double *a, int64_t n);       a[i] = dispatch_value(i), in parallel
 *                                                         with the split impl_sum uses (first
 *                                                         touch puts the pages near the threads)
 *   static int     impl_sum(const double *a, int64_t n, double *sum);  sum of a[0..n) with
 *                                                 dispatch_sum_block on each thread's part
 *   static void    impl_info(FILE *f);            extra ,"key":value fields for the info line
 *   static void    impl_teardown(void);
 * The driver calls them directly, so each implementation's loop bodies are inlined as its own
 * users would write them.
 *
 * Kernels (--kernel):
 *   for        `--dispatches D` empty parallel_for dispatches over [0, threads) (one index per
 *              thread); each index increments its own cache-line-padded counter, and every
 *              counter must read 2·D after the repetition. Figures: wall time of D back-to-back
 *              dispatches / D in µs (us_per_dispatch), then the median of D more dispatches
 *              timed one by one (us_median: robust against the multi-millisecond stalls a
 *              shared machine inflicts on the mean, but it includes one clock read).
 *   reduce     as `for` with parallel_reduce dispatches over [0, threads), each sum checked
 *              (= threads·(threads+1)/2).
 *   bandwidth  a sum over `--mib M` MiB of doubles (values i mod 1024, so every association of
 *              the sum is exact and checked), `--passes P` sums per repetition. Figure: GB/s
 *              (bytes read / wall time) and the wall time per pass.
 */
#ifndef TASKDAG_DISPATCH_DRIVER_H
#define TASKDAG_DISPATCH_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_util.h"

typedef struct dispatch_params {
    int threads;
    int reps;
    int warmup;
    const char *kernel; /* "for", "reduce", "bandwidth" */
    long long dispatches;
    long long mib;
    int passes;
} dispatch_params;

/* One counter per index on its own pair of cache lines. */
typedef struct dispatch_slot {
    volatile int64_t count;
    char pad[128 - sizeof(int64_t)];
} dispatch_slot;

static dispatch_params g_params;
static dispatch_slot *g_slots;
static double *g_single_ns; /* one entry per individually timed dispatch */

static int impl_setup(int threads, char *err, size_t n);
static int impl_for(int64_t n);
static int impl_reduce(int64_t n, int64_t *sum);
static int impl_fill(double *a, int64_t n);
static int impl_sum(const double *a, int64_t n, double *sum);
static void impl_info(FILE *f);
static void impl_teardown(void);

static inline void dispatch_touch(int64_t i) { g_slots[i].count = g_slots[i].count + 1; }

static inline double dispatch_value(int64_t i) { return (double)(i & 1023); }

/* The reduction loop every implementation runs on its part of the array. `omp simd` (enabled
 * with -fopenmp-simd, no OpenMP runtime) lets the compiler vectorize the sum by reassociating
 * it, as a STREAM-like OpenMP loop with `parallel for simd reduction` does. */
static inline double dispatch_sum_block(const double *a, int64_t begin, int64_t end) {
    double acc = 0.0;
    int64_t i;
#pragma omp simd reduction(+ : acc)
    for (i = begin; i < end; ++i) acc += a[i];
    return acc;
}

static void dispatch_usage(void) {
    fprintf(stderr,
            "usage: bench_dispatch_%s --kernel for|reduce|bandwidth [--threads N] [--reps N]\n"
            "       [--warmup N] [--dispatches D] [--mib M] [--passes P]\n"
            "Prints one JSON object per line; exits 0 only when every result was checked.\n",
            IMPL_NAME);
}

static void dispatch_parse(int argc, char **argv) {
    int i;
    g_params.threads = 1;
    g_params.reps = 5;
    g_params.warmup = 1;
    g_params.kernel = "for";
    g_params.dispatches = 20000;
    g_params.mib = 512;
    g_params.passes = 5;
    for (i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            dispatch_usage();
            exit(0);
        } else if (!strcmp(o, "--kernel")) {
            if (!v) bench_die(BENCH_EXIT_UNSUPPORTED, "--kernel needs a value");
            g_params.kernel = v, ++i;
        } else if (!strcmp(o, "--threads")) {
            g_params.threads = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--reps")) {
            g_params.reps = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--warmup")) {
            g_params.warmup = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--dispatches")) {
            g_params.dispatches = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--mib")) {
            g_params.mib = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--passes")) {
            g_params.passes = (int)bench_parse_int(o, v), ++i;
        } else {
            dispatch_usage();
            bench_die(BENCH_EXIT_UNSUPPORTED, "unknown option '%s'", o);
        }
    }
    if (strcmp(g_params.kernel, "for") && strcmp(g_params.kernel, "reduce") &&
        strcmp(g_params.kernel, "bandwidth"))
        bench_die(BENCH_EXIT_UNSUPPORTED, "--kernel must be for, reduce or bandwidth, not '%s'",
                  g_params.kernel);
    if (g_params.threads < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--threads must be >= 1");
    if (g_params.reps < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--reps must be >= 1");
    if (g_params.dispatches < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--dispatches must be >= 1");
    if (g_params.mib < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--mib must be >= 1");
    if (g_params.passes < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--passes must be >= 1");
}

static void dispatch_print_common(FILE *f) {
    fprintf(f, "\"bench\":\"dispatch\",\"impl\":\"%s\",\"kernel\":\"%s\",\"threads\":%d", IMPL_NAME,
            g_params.kernel, g_params.threads);
}

static int dispatch_compare_doubles(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* `median_ns` is the median of the individually timed dispatches (for and reduce kernels). */
static void dispatch_measurement(int rep, double wall_ns, double median_ns) {
    printf("{\"type\":\"measurement\",");
    dispatch_print_common(stdout);
    printf(",\"rep\":%d,\"warmup\":%s,\"wall_ns\":%.0f", rep - g_params.warmup,
           rep < g_params.warmup ? "true" : "false", wall_ns);
    if (!strcmp(g_params.kernel, "bandwidth")) {
        const double bytes = (double)g_params.mib * 1048576.0 * g_params.passes;
        printf(",\"gb_per_s\":%.4f,\"ms_per_pass\":%.4f", bytes / wall_ns,
               wall_ns / 1e6 / g_params.passes);
    } else {
        printf(",\"us_per_dispatch\":%.5f,\"us_median\":%.5f", wall_ns / 1e3 / (double)g_params.dispatches,
               median_ns / 1e3);
    }
    printf("}\n");
    fflush(stdout);
}

/* One for or reduce dispatch over [0, n), checked. */
static void dispatch_once(int is_for, int64_t n, long long d, int rep) {
    const int64_t expected = n * (n + 1) / 2;
    if (is_for) {
        if (impl_for(n) != 0) bench_die(BENCH_EXIT_WRONG, "parallel_for %lld of repetition %d failed", d, rep);
    } else {
        int64_t sum = -1;
        if (impl_reduce(n, &sum) != 0)
            bench_die(BENCH_EXIT_WRONG, "parallel_reduce %lld of repetition %d failed", d, rep);
        if (sum != expected)
            bench_die(BENCH_EXIT_WRONG, "parallel_reduce %lld of repetition %d: sum %lld, expected %lld", d, rep,
                      (long long)sum, (long long)expected);
    }
}

/* One repetition of the for or reduce kernel: D dispatches timed together (returns their wall
 * time in ns), then D timed one by one (their median goes to *median_ns). */
static double dispatch_overhead_rep(int rep, double *median_ns) {
    const int64_t n = g_params.threads;
    const int is_for = !strcmp(g_params.kernel, "for");
    uint64_t t0, t1;
    long long d;
    int64_t i;
    for (i = 0; i < n; ++i) g_slots[i].count = 0;
    t0 = bench_now_ns();
    for (d = 0; d < g_params.dispatches; ++d) dispatch_once(is_for, n, d, rep);
    t1 = bench_now_ns();
    for (d = 0; d < g_params.dispatches; ++d) {
        const uint64_t s0 = bench_now_ns();
        dispatch_once(is_for, n, d, rep);
        g_single_ns[d] = (double)(bench_now_ns() - s0);
    }
    qsort(g_single_ns, (size_t)g_params.dispatches, sizeof *g_single_ns, dispatch_compare_doubles);
    *median_ns = g_single_ns[g_params.dispatches / 2];
    if (is_for)
        for (i = 0; i < n; ++i)
            if (g_slots[i].count != 2 * g_params.dispatches)
                bench_die(BENCH_EXIT_WRONG, "repetition %d: index %lld was visited %lld times, expected %lld", rep,
                          (long long)i, (long long)g_slots[i].count, 2 * g_params.dispatches);
    return (double)(t1 - t0);
}

/* One repetition of the bandwidth kernel; returns its wall time in ns. */
static double dispatch_bandwidth_rep(int rep, const double *a, int64_t n, double expected) {
    uint64_t t0, t1;
    int p;
    t0 = bench_now_ns();
    for (p = 0; p < g_params.passes; ++p) {
        double sum = -1.0;
        if (impl_sum(a, n, &sum) != 0) bench_die(BENCH_EXIT_WRONG, "sum %d of repetition %d failed", p, rep);
        if (sum != expected)
            bench_die(BENCH_EXIT_WRONG, "sum %d of repetition %d: %.17g, expected %.17g", p, rep, sum, expected);
    }
    t1 = bench_now_ns();
    return (double)(t1 - t0);
}

int main(int argc, char **argv) {
    char err[1024];
    int rep, bandwidth;
    double *a = NULL;
    int64_t n = 0;
    double expected = 0.0;

    dispatch_parse(argc, argv);
    bandwidth = !strcmp(g_params.kernel, "bandwidth");
    err[0] = '\0';
    if (impl_setup(g_params.threads, err, sizeof err) != 0)
        bench_die(BENCH_EXIT_UNSUPPORTED, "%s setup failed: %s", IMPL_NAME, err);
    g_slots = (dispatch_slot *)aligned_alloc(128, sizeof(dispatch_slot) * (size_t)g_params.threads);
    g_single_ns = (double *)malloc(sizeof(double) * (size_t)g_params.dispatches);
    if (!g_slots || !g_single_ns) bench_die(BENCH_EXIT_WRONG, "out of memory");
    if (bandwidth) {
        int64_t i;
        n = (int64_t)(g_params.mib * 1048576 / (long long)sizeof(double));
        a = (double *)aligned_alloc(4096, (size_t)n * sizeof(double));
        if (!a) bench_die(BENCH_EXIT_WRONG, "could not allocate %lld MiB", g_params.mib);
        if (impl_fill(a, n) != 0) bench_die(BENCH_EXIT_WRONG, "filling the array failed");
        for (i = 0; i < n; ++i) expected += dispatch_value(i);
        for (i = 0; i < n; i += 4099)
            if (a[i] != dispatch_value(i)) bench_die(BENCH_EXIT_WRONG, "a[%lld] = %g after the fill", (long long)i, a[i]);
    }

    printf("{\"type\":\"info\",");
    dispatch_print_common(stdout);
    if (bandwidth)
        printf(",\"mib\":%lld,\"passes\":%d", g_params.mib, g_params.passes);
    else
        printf(",\"dispatches\":%lld", g_params.dispatches);
    impl_info(stdout);
    printf("}\n");
    fflush(stdout);

    for (rep = 0; rep < g_params.warmup + g_params.reps; ++rep) {
        double median = 0.0;
        const double wall =
            bandwidth ? dispatch_bandwidth_rep(rep, a, n, expected) : dispatch_overhead_rep(rep, &median);
        dispatch_measurement(rep, wall, median);
    }
    impl_teardown();
    free(a);
    free(g_single_ns);
    free(g_slots);
    printf("{\"type\":\"done\",\"valid\":true,");
    dispatch_print_common(stdout);
    printf("}\n");
    return 0;
}

#endif /* TASKDAG_DISPATCH_DRIVER_H */
