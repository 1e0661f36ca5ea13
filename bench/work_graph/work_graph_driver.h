/*
 * work_graph_driver.h: the work-graph benchmark, shared by every implementation.
 *
 * An implementation file (work_graph_taskdag.c, work_graph_kokkos.cpp, work_graph_levels.c)
 * defines IMPL_NAME and IMPL_MAX_THREADS (0 = any) before including this header, and after it:
 *   static int  impl_setup(const wg_problem *p, char *err, size_t n);  plan once; 0 = ok
 *   static int  impl_run(char *err, size_t n);   one execution of the whole graph; 0 = ok
 *   static void impl_info(FILE *f);              extra ,"key":value fields for the info line
 *   static void impl_teardown(void);
 * Each implementation calls wg_work(i) for every item i in an order that respects the graph.
 *
 * Workload (identical for every implementation):
 *   --shape fib --size n     the naive-Fibonacci graph of 000 Fig. 3.6: item 0 computes fib(n),
 *                            an item of input k >= 2 executes after the items of k-1 and k-2
 *                            (2 fib(n+1) - 1 items, numbered breadth-first as in the figure);
 *   --shape random --size N --degree d --window w
 *                            N items in a random topological order (fixed seed), each with a
 *                            uniform 0..2d successors among the next w items in that order
 *                            (w = N: anywhere later; small w: long chains, many levels).
 * wg_work(i) reads the outputs of the items i executes after through the transposed graph
 * (int32 arrays, as in Fig. 3.6) and writes its own: fib sums its two inputs; random mixes
 * its inputs' values into a hash of i.
 *
 * Timing: before each execution the outputs are reset (untimed); an execution is timed from
 * the call to its return, and checked afterwards (untimed): fib(n) at item 0, or every random
 * item's value against a serial reference. A repetition runs executions until it has covered
 * at least 2^21 items, and reports ns_per_item = timed ns / items executed (wall time, so lower
 * is better and speed-up with T threads = ns_per_item(1) / ns_per_item(T)), and
 * mitems_per_s. --quick shrinks the problem (fib n <= 15, random N <= 5000) for smoke tests.
 *
 * The info line, printed once the implementation has planned, reports how much of the
 * process's anonymous memory the kernel backs with transparent huge pages ("anon_huge_mib",
 * from /proc/self/smaps_rollup; -1 where that cannot be read): taskdag maps a plan's per-item
 * arrays for huge pages unless TASKDAG_HUGE_PAGES=0 (docs/work-graph.md); the driver's own
 * arrays come from calloc, so they get huge pages only where glibc is told to
 * (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) or THP is "always".
 *
 * Each measurement line also reports gap_us_max, the longest untimed time in the repetition
 * from the end of one execution to the start of the next (the check, the output line and the
 * reset; the first execution of a repetition counts from the previous repetition's last): when
 * it exceeds a pool's idle spin (taskdag: 5 ms unless --idle-spin-us says otherwise), the
 * workers have parked and the execution begins by waking them (docs/work-graph.md, "Runs apart
 * in time").
 *
 * Every measurement line also reports what the graph allows at all: span = the items on its
 * longest path (no execution can take fewer steps) and parallelism = items / span (work over
 * span, counted in items): the mean number of items that can run at once, so no schedule of
 * equal items gets a larger speed-up than that.
 */
#ifndef TASKDAG_WORK_GRAPH_DRIVER_H
#define TASKDAG_WORK_GRAPH_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_util.h"

#define WG_SHAPE_FIB 0
#define WG_SHAPE_RANDOM 1
#define WG_ITEMS_PER_REP (1ll << 21)

typedef struct wg_problem {
    int shape;
    int threads;
    int reps;
    int warmup;
    int quick;
    long long idle_spin_us; /* taskdag: td_init_args.idle_spin_us; -1 = the library's default */
    long long size;   /* fib: n; random: items */
    long long degree; /* random: mean successors */
    long long window; /* random: successors among the next `window` items; 0 = all */
    uint64_t seed;
    /* The execute-after graph: row i lists the items that run after item i. */
    int64_t n;
    int64_t nz;
    int64_t *row_map; /* n + 1 */
    int64_t *entries; /* nz */
    /* Its transpose, read by the work function: row j lists the items j runs after. */
    int32_t *pred_row; /* n + 1 */
    int32_t *pred_ent; /* nz */
    int64_t *values;   /* outputs */
    int64_t *initial;  /* outputs before an execution */
    int64_t *expected; /* random: outputs of a serial execution */
    int64_t fib_value; /* fib: expected fib(n) */
    int64_t span;      /* items on the longest path */
} wg_problem;

static wg_problem g_wg;

static int impl_setup(const wg_problem *p, char *err, size_t n);
static int impl_run(char *err, size_t n);
static void impl_info(FILE *f);
static void impl_teardown(void);

/* The work function: one call per item, after the calls of the items it executes after. */
static inline void wg_work(int64_t i) {
    const int32_t *pr = g_wg.pred_row;
    const int32_t *pe = g_wg.pred_ent;
    int64_t *v = g_wg.values;
    int32_t k = pr[i], e = pr[i + 1];
    if (g_wg.shape == WG_SHAPE_FIB) {
        if (k < e) v[i] = v[pe[k]] + v[pe[k + 1]];
    } else {
        uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
        for (; k < e; ++k) h ^= (uint64_t)v[pe[k]] + 0x7F4A7C15ull + (h << 6) + (h >> 2);
        v[i] = (int64_t)h;
    }
}

static void *wg_alloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) bench_die(BENCH_EXIT_WRONG, "out of memory (%zu x %zu bytes)", count, size);
    return p;
}

static void wg_alloc_rows(int64_t n, int64_t nz) {
    g_wg.n = n;
    g_wg.nz = nz;
    g_wg.row_map = (int64_t *)wg_alloc((size_t)n + 1, sizeof(int64_t));
    g_wg.entries = (int64_t *)wg_alloc((size_t)nz, sizeof(int64_t));
}

/* Fills row_map/entries from the edges (from[k], to[k]): to[k] executes after from[k]. */
static void wg_build_rows(int64_t n, int64_t nz, const int64_t *from, const int64_t *to) {
    int64_t i, k;
    int64_t *fill;
    wg_alloc_rows(n, nz);
    for (k = 0; k < nz; ++k) g_wg.row_map[from[k] + 1]++;
    for (i = 0; i < n; ++i) g_wg.row_map[i + 1] += g_wg.row_map[i];
    fill = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    memcpy(fill, g_wg.row_map, (size_t)n * sizeof(int64_t));
    for (k = 0; k < nz; ++k) g_wg.entries[fill[from[k]]++] = to[k];
    free(fill);
}

/* The transpose (predecessor rows) as int32, in increasing order of predecessor. */
static void wg_build_predecessors(void) {
    int64_t n = g_wg.n, i, k;
    int32_t *fill;
    g_wg.pred_row = (int32_t *)wg_alloc((size_t)n + 1, sizeof(int32_t));
    g_wg.pred_ent = (int32_t *)wg_alloc((size_t)g_wg.nz, sizeof(int32_t));
    for (k = 0; k < g_wg.nz; ++k) g_wg.pred_row[g_wg.entries[k] + 1]++;
    for (i = 0; i < n; ++i) g_wg.pred_row[i + 1] += g_wg.pred_row[i];
    fill = (int32_t *)wg_alloc((size_t)n, sizeof(int32_t));
    memcpy(fill, g_wg.pred_row, (size_t)n * sizeof(int32_t));
    for (i = 0; i < n; ++i)
        for (k = g_wg.row_map[i]; k < g_wg.row_map[i + 1]; ++k) g_wg.pred_ent[fill[g_wg.entries[k]]++] = (int32_t)i;
    free(fill);
}

/* 000 Fig. 3.6: breadth-first expansion of fib(n); the parent executes after each child. */
static void wg_build_fib(int64_t fib_n) {
    int64_t cap = 16, count = 1, i, a = 0, b = 1;
    int64_t *input = (int64_t *)wg_alloc((size_t)cap, sizeof(int64_t));
    int64_t *parent = (int64_t *)wg_alloc((size_t)cap, sizeof(int64_t));
    input[0] = fib_n;
    parent[0] = -1;
    for (i = 0; i < count; ++i) {
        if (input[i] < 2) continue;
        if (count + 2 > cap) {
            cap *= 2;
            input = (int64_t *)realloc(input, (size_t)cap * sizeof(int64_t));
            parent = (int64_t *)realloc(parent, (size_t)cap * sizeof(int64_t));
            if (!input || !parent) bench_die(BENCH_EXIT_WRONG, "out of memory");
        }
        input[count] = input[i] - 1, parent[count++] = i;
        input[count] = input[i] - 2, parent[count++] = i;
    }
    /* Row i (i >= 1) holds its parent: the figure's m_graph. */
    wg_alloc_rows(count, count - 1);
    for (i = 0; i < count; ++i) g_wg.row_map[i + 1] = i;
    for (i = 1; i < count; ++i) g_wg.entries[i - 1] = parent[i];
    g_wg.initial = (int64_t *)wg_alloc((size_t)count, sizeof(int64_t));
    for (i = 0; i < count; ++i) g_wg.initial[i] = input[i] < 2 ? input[i] : 0;
    for (i = 0; i < fib_n; ++i) {
        int64_t t = a + b;
        a = b, b = t;
    }
    g_wg.fib_value = a;
    free(input);
    free(parent);
}

static void wg_build_random(int64_t n, int64_t degree, int64_t window, uint64_t seed) {
    uint64_t rng = seed ? seed : 1;
    int64_t *order = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    int64_t cap = n * (2 * degree + 1) + 1, nz = 0, p, k;
    int64_t *from = (int64_t *)wg_alloc((size_t)cap, sizeof(int64_t));
    int64_t *to = (int64_t *)wg_alloc((size_t)cap, sizeof(int64_t));
    if (window <= 0 || window > n) window = n;
    for (p = 0; p < n; ++p) order[p] = p;
    for (p = n - 1; p > 0; --p) {
        int64_t q = (int64_t)(bench_xorshift64(&rng) % (uint64_t)(p + 1)), t = order[p];
        order[p] = order[q], order[q] = t;
    }
    for (p = 0; p + 1 < n; ++p) {
        int64_t later = n - p - 1 < window ? n - p - 1 : window;
        int64_t count = (int64_t)(bench_xorshift64(&rng) % (uint64_t)(2 * degree + 1));
        for (k = 0; k < count; ++k) {
            from[nz] = order[p];
            to[nz++] = order[p + 1 + (int64_t)(bench_xorshift64(&rng) % (uint64_t)later)];
        }
    }
    wg_build_rows(n, nz, from, to);
    free(from);
    free(to);
    g_wg.initial = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    /* The reference: the work function in the generating order, which is topological. */
    wg_build_predecessors();
    g_wg.values = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    for (p = 0; p < n; ++p) wg_work(order[p]);
    g_wg.expected = g_wg.values;
    g_wg.values = NULL;
    free(order);
}

/* The items on the longest path: Kahn's algorithm, each item one more than its deepest input. */
static int64_t wg_span(void) {
    int64_t n = g_wg.n, head = 0, tail = 0, i, k, span = 0;
    int64_t *missing = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    int64_t *depth = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    int64_t *queue = (int64_t *)wg_alloc((size_t)n, sizeof(int64_t));
    for (k = 0; k < g_wg.nz; ++k) missing[g_wg.entries[k]]++;
    for (i = 0; i < n; ++i)
        if (missing[i] == 0) queue[tail++] = i, depth[i] = 1;
    while (head < tail) {
        i = queue[head++];
        if (depth[i] > span) span = depth[i];
        for (k = g_wg.row_map[i]; k < g_wg.row_map[i + 1]; ++k) {
            int64_t j = g_wg.entries[k];
            if (depth[j] < depth[i] + 1) depth[j] = depth[i] + 1;
            if (--missing[j] == 0) queue[tail++] = j;
        }
    }
    free(missing);
    free(depth);
    free(queue);
    return span;
}

static void wg_reset(void) { memcpy(g_wg.values, g_wg.initial, (size_t)g_wg.n * sizeof(int64_t)); }

/* Checks one execution; 0 = correct. */
static int wg_check(char *err, size_t n) {
    int64_t i;
    if (g_wg.shape == WG_SHAPE_FIB) {
        if (g_wg.values[0] != g_wg.fib_value) {
            snprintf(err, n, "fib(%lld) = %lld, expected %lld (an item ran before its inputs?)", g_wg.size,
                     (long long)g_wg.values[0], (long long)g_wg.fib_value);
            return 1;
        }
        return 0;
    }
    for (i = 0; i < g_wg.n; ++i)
        if (g_wg.values[i] != g_wg.expected[i]) {
            snprintf(err, n, "item %lld computed %lld, expected %lld (ran before one of its inputs?)", (long long)i,
                     (long long)g_wg.values[i], (long long)g_wg.expected[i]);
            return 1;
        }
    return 0;
}

static void wg_usage(void) {
    fprintf(stderr,
            "usage: %s [--shape fib|random] [--size N] [--degree D] [--window W] [--threads T]\n"
            "       [--reps R] [--warmup W] [--seed S] [--quick] [--idle-spin-us US (taskdag only)]\n"
            "Prints one JSON object per line; exits 0 only when every result was checked.\n",
            IMPL_NAME);
}

static void wg_parse(int argc, char **argv) {
    int i;
    g_wg.shape = WG_SHAPE_FIB;
    g_wg.size = 20;
    g_wg.degree = 4;
    g_wg.window = 0;
    g_wg.threads = 1;
    g_wg.reps = 5;
    g_wg.warmup = 1;
    g_wg.seed = 0x5DEECE66Dull;
    g_wg.idle_spin_us = -1;
    for (i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            wg_usage();
            exit(0);
        } else if (!strcmp(o, "--shape")) {
            if (v && !strcmp(v, "fib"))
                g_wg.shape = WG_SHAPE_FIB;
            else if (v && !strcmp(v, "random"))
                g_wg.shape = WG_SHAPE_RANDOM;
            else
                bench_die(BENCH_EXIT_UNSUPPORTED, "--shape must be fib or random");
            ++i;
        } else if (!strcmp(o, "--size")) {
            g_wg.size = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--degree")) {
            g_wg.degree = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--window")) {
            g_wg.window = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--threads")) {
            g_wg.threads = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--reps")) {
            g_wg.reps = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--warmup")) {
            g_wg.warmup = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--seed")) {
            g_wg.seed = (uint64_t)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--idle-spin-us")) {
            g_wg.idle_spin_us = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--quick")) {
            g_wg.quick = 1;
        } else {
            wg_usage();
            bench_die(BENCH_EXIT_UNSUPPORTED, "unknown option '%s'", o);
        }
    }
    if (g_wg.threads < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--threads must be >= 1");
    if (IMPL_MAX_THREADS > 0 && g_wg.threads > IMPL_MAX_THREADS)
        bench_die(BENCH_EXIT_UNSUPPORTED, "%s supports at most %d thread(s), asked for %d", IMPL_NAME,
                  IMPL_MAX_THREADS, g_wg.threads);
    if (g_wg.reps < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--reps must be >= 1");
    if (g_wg.quick) {
        if (g_wg.shape == WG_SHAPE_FIB && g_wg.size > 15) g_wg.size = 15;
        if (g_wg.shape == WG_SHAPE_RANDOM && g_wg.size > 5000) g_wg.size = 5000;
    }
    if (g_wg.shape == WG_SHAPE_FIB && (g_wg.size < 2 || g_wg.size > 40))
        bench_die(BENCH_EXIT_UNSUPPORTED, "--size for fib must be in [2, 40]");
    if (g_wg.shape == WG_SHAPE_RANDOM && (g_wg.size < 1 || g_wg.size > (1ll << 28) || g_wg.degree > 64))
        bench_die(BENCH_EXIT_UNSUPPORTED, "--size for random must be in [1, 2^28], --degree <= 64");
}

static void wg_print_common(FILE *f) {
    fprintf(f, "\"bench\":\"work_graph\",\"impl\":\"%s\",\"shape\":\"%s\",\"size\":%lld", IMPL_NAME,
            g_wg.shape == WG_SHAPE_FIB ? "fib" : "random", g_wg.size);
    if (g_wg.shape == WG_SHAPE_RANDOM) fprintf(f, ",\"degree\":%lld,\"window\":%lld", g_wg.degree, g_wg.window);
    fprintf(f, ",\"threads\":%d,\"items\":%lld,\"dependences\":%lld", g_wg.threads, (long long)g_wg.n,
            (long long)g_wg.nz);
}

int main(int argc, char **argv) {
    char err[1024];
    int rep;
    long long runs_per_rep, checked = 0;
    uint64_t last_end = 0;

    wg_parse(argc, argv);
    if (g_wg.shape == WG_SHAPE_FIB) {
        wg_build_fib(g_wg.size);
        wg_build_predecessors();
    } else {
        wg_build_random(g_wg.size, g_wg.degree, g_wg.window, g_wg.seed);
    }
    g_wg.values = (int64_t *)wg_alloc((size_t)g_wg.n, sizeof(int64_t));
    g_wg.span = wg_span();
    runs_per_rep = (WG_ITEMS_PER_REP + g_wg.n - 1) / g_wg.n;
    if (g_wg.quick) runs_per_rep = 2;

    err[0] = '\0';
    if (impl_setup(&g_wg, err, sizeof err) != 0) bench_die(BENCH_EXIT_WRONG, "%s setup failed: %s", IMPL_NAME, err);

    printf("{\"type\":\"info\",");
    wg_print_common(stdout);
    printf(",\"runs_per_rep\":%lld,\"anon_huge_mib\":%ld", runs_per_rep, bench_anon_huge_mib());
    impl_info(stdout);
    printf("}\n");
    fflush(stdout);

    for (rep = 0; rep < g_wg.warmup + g_wg.reps; ++rep) {
        uint64_t timed = 0, gap_max = 0;
        long long r;
        double per_item;
        for (r = 0; r < runs_per_rep; ++r) {
            uint64_t t0, t1;
            wg_reset();
            err[0] = '\0';
            t0 = bench_now_ns();
            if (impl_run(err, sizeof err) != 0) bench_die(BENCH_EXIT_WRONG, "%s run failed: %s", IMPL_NAME, err);
            t1 = bench_now_ns();
            timed += t1 - t0;
            if (last_end && t0 - last_end > gap_max) gap_max = t0 - last_end;
            last_end = t1;
            if (wg_check(err, sizeof err) != 0)
                bench_die(BENCH_EXIT_WRONG, "repetition %d, execution %lld: %s", rep, r, err);
            checked += g_wg.n;
        }
        per_item = (double)timed / (double)(runs_per_rep * g_wg.n);
        printf("{\"type\":\"measurement\",");
        wg_print_common(stdout);
        printf(",\"rep\":%d,\"warmup\":%s,\"runs\":%lld,\"timed_ns\":%llu,\"ns_per_item\":%.4f,"
               "\"mitems_per_s\":%.4f,\"gap_us_max\":%.1f,\"span\":%lld,\"parallelism\":%.2f}\n",
               rep - g_wg.warmup, rep < g_wg.warmup ? "true" : "false", runs_per_rep, (unsigned long long)timed,
               per_item, 1e3 / per_item, (double)gap_max / 1e3, (long long)g_wg.span,
               g_wg.span ? (double)g_wg.n / (double)g_wg.span : 0.0);
        fflush(stdout);
    }
    impl_teardown();
    printf("{\"type\":\"done\",\"valid\":true,");
    wg_print_common(stdout);
    printf(",\"checked_items\":%lld}\n", checked);
    return 0;
}

#endif /* TASKDAG_WORK_GRAPH_DRIVER_H */
