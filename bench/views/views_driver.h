/*
 * views_driver.h: the deep_copy benchmark, shared by every implementation.
 *
 * An implementation file (views_taskdag.c, views_memcpy.c, views_kokkos.cpp) defines IMPL_NAME
 * and IMPL_MAX_THREADS (0 = any number) before including this header (and IMPL_DST_LAYOUT(p)
 * when its destination is not in p->dst_layout, as the memcpy peer's), and after it:
 *   static int     impl_setup(const views_params *p, char *err, size_t n);  0 = ok; allocates
 *                  the source (layout p->src_layout) and the destination (p->dst_layout)
 *   static double *impl_src(const size_t *index);   address of source element `index`
 *   static double *impl_dst(const size_t *index);   address of destination element `index`
 *   static int     impl_copy(char *err, size_t n);   one copy of the whole array; 0 = ok
 *   static void    impl_info(FILE *f);              extra ,"key":value fields for the info line
 *   static void    impl_teardown(void);
 *
 * Workload (identical for every implementation): one array of doubles of `rank` 2 or 3 and the
 * extents below, about --mib MiB (256 by default), copied from a source in one layout to a
 * destination in another: LayoutLeft -> LayoutRight ("l2r"), LayoutRight -> LayoutLeft ("r2l"),
 * or LayoutRight -> LayoutRight ("same", contiguous). The memcpy peer copies the same bytes
 * with memcpy (its destination has the source's layout). The process is restricted to the
 * first --threads CPUs it may run on, so that every implementation sizes its threads from the
 * same CPU set.
 *
 * Before any timed copy the driver writes every element of both arrays, each in its own memory
 * order (the source its values, the destination a sentinel that no source element holds), so
 * that every page of both is faulted in, in the same way for every implementation, and the
 * timed copies measure the copy, not first touches. The info line reports how much of the
 * process's anonymous memory the kernel then backs with transparent huge pages
 * ("anon_huge_mib", from /proc/self/smaps_rollup; -1 where that cannot be read).
 *
 * Figure per repetition: gb_per_s = bytes of one array / wall time of the copy / 1e9; --warmup
 * untimed copies come first (1 by default), and the harness reports the median.
 *
 * Validation: the source holds a value unique to each element; after the last repetition every
 * destination element must hold the value of the source element with the same indices, and the
 * source must be unchanged. Any mismatch prints a JSON error line and exits 1.
 */
#ifndef TASKDAG_VIEWS_DRIVER_H
#define TASKDAG_VIEWS_DRIVER_H

/* sched_setaffinity and CPU_*: the including file defines _GNU_SOURCE before any header (C++
   compilers define it). */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_util.h"

enum { VIEWS_LEFT = 0, VIEWS_RIGHT = 1 };

/* The layout of the implementation's destination array (memory order of the prefault). */
#ifndef IMPL_DST_LAYOUT
#define IMPL_DST_LAYOUT(p) ((p)->dst_layout)
#endif

/* Written to every destination element before the timed copies: no source element holds it
   (source values are >= 0.5). */
#define VIEWS_SENTINEL (-1.0)

typedef struct views_params {
    int threads;
    int reps;
    int warmup;
    int rank;                 /* 2 or 3 */
    size_t extents[3];
    size_t elements;
    int src_layout, dst_layout; /* VIEWS_LEFT or VIEWS_RIGHT */
    const char *copy_case;    /* "l2r", "r2l" or "same" */
} views_params;

static int impl_setup(const views_params *p, char *err, size_t n);
static double *impl_src(const size_t *index);
static double *impl_dst(const size_t *index);
static int impl_copy(char *err, size_t n);
static void impl_info(FILE *f);
static void impl_teardown(void);

static views_params g_params;

/* Element offset of `index` in a compact array of `layout` (for the peers' own arrays). */
static inline size_t views_offset(const views_params *p, int layout, const size_t *index) {
    size_t offset = 0;
    int d;
    if (layout == VIEWS_RIGHT) {
        for (d = 0; d < p->rank; ++d) offset = offset * p->extents[d] + index[d];
    } else {
        for (d = p->rank - 1; d >= 0; --d) offset = offset * p->extents[d] + index[d];
    }
    return offset;
}

/* The value of source element `index`: its C-order position, exact in a double. */
static inline double views_value(const size_t *index) {
    return (double)views_offset(&g_params, VIEWS_RIGHT, index) + 0.5;
}

/* The index after `index` in the memory order of `layout` (first index fastest for
   LayoutLeft, last for LayoutRight); 0 after the last one. */
static int views_next(int layout, size_t *index) {
    int k;
    for (k = 0; k < g_params.rank; ++k) {
        const int d = layout == VIEWS_LEFT ? k : g_params.rank - 1 - k;
        if (++index[d] < g_params.extents[d]) return 1;
        index[d] = 0;
    }
    return 0;
}

/* Visits every index of the array, last index fastest. */
#define VIEWS_FOR_EACH(index)                                                          \
    for (index[0] = 0; index[0] < g_params.extents[0]; ++index[0])                     \
        for (index[1] = 0; index[1] < g_params.extents[1]; ++index[1])                 \
            for (index[2] = 0; index[2] < (g_params.rank == 3 ? g_params.extents[2] : 1); ++index[2])

static void views_usage(void) {
    fprintf(stderr,
            "usage: %s [--case l2r|r2l|same] [--rank 2|3] [--mib M | --extents A,B[,C]]\n"
            "       [--threads N] [--reps N] [--warmup N]\n"
            "Prints one JSON object per line; exits 0 only when the copy was checked.\n",
            IMPL_NAME);
}

/* Extents of about `mib` MiB of doubles: a square or cube, rounded down. */
static void views_shape(views_params *p, long long mib) {
    double elements = (double)mib * 131072.0; /* 2^20 / 8 */
    size_t edge = 1;
    int d;
    if (p->rank == 2) {
        while ((double)(edge + 1) * (double)(edge + 1) <= elements) ++edge;
    } else {
        while ((double)(edge + 1) * (double)(edge + 1) * (double)(edge + 1) <= elements) ++edge;
    }
    for (d = 0; d < p->rank; ++d) p->extents[d] = edge;
}

static void views_parse(int argc, char **argv) {
    int i;
    long long mib = 256;
    const char *extents = NULL;
    g_params.threads = 1;
    g_params.reps = 5;
    g_params.warmup = 1;
    g_params.rank = 2;
    g_params.copy_case = "l2r";
    for (i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            views_usage();
            exit(0);
        } else if (!strcmp(o, "--case") && v) {
            g_params.copy_case = v, ++i;
        } else if (!strcmp(o, "--rank")) {
            g_params.rank = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--mib")) {
            mib = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--extents") && v) {
            extents = v, ++i;
        } else if (!strcmp(o, "--threads")) {
            g_params.threads = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--reps")) {
            g_params.reps = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--warmup")) {
            g_params.warmup = (int)bench_parse_int(o, v), ++i;
        } else {
            views_usage();
            bench_die(BENCH_EXIT_UNSUPPORTED, "unknown option '%s'", o);
        }
    }
    if (g_params.rank != 2 && g_params.rank != 3) bench_die(BENCH_EXIT_UNSUPPORTED, "--rank must be 2 or 3");
    if (!strcmp(g_params.copy_case, "l2r")) {
        g_params.src_layout = VIEWS_LEFT, g_params.dst_layout = VIEWS_RIGHT;
    } else if (!strcmp(g_params.copy_case, "r2l")) {
        g_params.src_layout = VIEWS_RIGHT, g_params.dst_layout = VIEWS_LEFT;
    } else if (!strcmp(g_params.copy_case, "same")) {
        g_params.src_layout = VIEWS_RIGHT, g_params.dst_layout = VIEWS_RIGHT;
    } else {
        bench_die(BENCH_EXIT_UNSUPPORTED, "--case must be l2r, r2l or same, not '%s'", g_params.copy_case);
    }
    if (extents) {
        int d = 0;
        const char *s = extents;
        while (d < 3 && *s) {
            char *end = NULL;
            g_params.extents[d++] = (size_t)strtoull(s, &end, 10);
            s = *end == ',' ? end + 1 : end;
        }
        if (d != g_params.rank) bench_die(BENCH_EXIT_UNSUPPORTED, "--extents needs %d values", g_params.rank);
    } else {
        views_shape(&g_params, mib);
    }
    g_params.elements = 1;
    for (i = 0; i < g_params.rank; ++i) {
        if (g_params.extents[i] == 0) bench_die(BENCH_EXIT_UNSUPPORTED, "extents must be >= 1");
        g_params.elements *= g_params.extents[i];
    }
    if (g_params.rank == 2) g_params.extents[2] = 1;
    if (g_params.threads < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--threads must be >= 1");
    if (IMPL_MAX_THREADS > 0 && g_params.threads > IMPL_MAX_THREADS)
        bench_die(BENCH_EXIT_UNSUPPORTED, "%s supports at most %d thread(s), asked for %d", IMPL_NAME,
                  IMPL_MAX_THREADS, g_params.threads);
    if (g_params.reps < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--reps must be >= 1");
}

/* Restricts the process to the first `threads` CPUs of its affinity mask. */
static void views_restrict_cpus(int threads) {
    cpu_set_t allowed, chosen;
    int cpu, kept = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    if (CPU_COUNT(&allowed) < threads)
        bench_die(BENCH_EXIT_UNSUPPORTED, "%d threads asked for, but only %d CPUs are available", threads,
                  CPU_COUNT(&allowed));
    CPU_ZERO(&chosen);
    for (cpu = 0; cpu < CPU_SETSIZE && kept < threads; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) CPU_SET(cpu, &chosen), ++kept;
    if (sched_setaffinity(0, sizeof chosen, &chosen) != 0)
        bench_die(BENCH_EXIT_UNSUPPORTED, "sched_setaffinity to %d CPUs failed", threads);
}

static void views_print_common(FILE *f) {
    fprintf(f, "\"bench\":\"views\",\"impl\":\"%s\",\"case\":\"%s\",\"rank\":%d,\"extents\":[%zu,%zu",
            IMPL_NAME, g_params.copy_case, g_params.rank, g_params.extents[0], g_params.extents[1]);
    if (g_params.rank == 3) fprintf(f, ",%zu", g_params.extents[2]);
    fprintf(f, "],\"bytes\":%zu,\"threads\":%d", g_params.elements * sizeof(double), g_params.threads);
}

int main(int argc, char **argv) {
    char err[1024];
    size_t index[3] = {0, 0, 0};
    int rep;

    views_parse(argc, argv);
    views_restrict_cpus(g_params.threads);
    err[0] = '\0';
    if (impl_setup(&g_params, err, sizeof err) != 0) bench_die(BENCH_EXIT_WRONG, "%s setup failed: %s", IMPL_NAME, err);
    do *impl_src(index) = views_value(index);
    while (views_next(g_params.src_layout, index));
    do *impl_dst(index) = VIEWS_SENTINEL;
    while (views_next(IMPL_DST_LAYOUT(&g_params), index));

    printf("{\"type\":\"info\",");
    views_print_common(stdout);
    impl_info(stdout);
    printf(",\"anon_huge_mib\":%ld}\n", bench_anon_huge_mib());
    fflush(stdout);

    for (rep = 0; rep < g_params.warmup + g_params.reps; ++rep) {
        uint64_t t0, t1;
        double seconds;
        err[0] = '\0';
        t0 = bench_now_ns();
        if (impl_copy(err, sizeof err) != 0) bench_die(BENCH_EXIT_WRONG, "copy failed: %s", err);
        t1 = bench_now_ns();
        seconds = (double)(t1 - t0) * 1e-9;
        printf("{\"type\":\"measurement\",");
        views_print_common(stdout);
        printf(",\"rep\":%d,\"warmup\":%s,\"seconds\":%.6f,\"gb_per_s\":%.4f}\n", rep - g_params.warmup,
               rep < g_params.warmup ? "true" : "false", seconds,
               (double)(g_params.elements * sizeof(double)) / seconds * 1e-9);
        fflush(stdout);
    }

    VIEWS_FOR_EACH(index) {
        const double expected = views_value(index);
        if (*impl_dst(index) != expected || *impl_src(index) != expected)
            bench_die(BENCH_EXIT_WRONG, "element (%zu, %zu, %zu): destination %.1f, source %.1f, expected %.1f",
                      index[0], index[1], index[2], *impl_dst(index), *impl_src(index), expected);
    }
    impl_teardown();
    printf("{\"type\":\"done\",\"valid\":true,");
    views_print_common(stdout);
    printf(",\"checked_elements\":%zu}\n", g_params.elements);
    return 0;
}

#endif /* TASKDAG_VIEWS_DRIVER_H */
