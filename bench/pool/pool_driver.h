/*
 * pool_driver.h: the alloc+free pair benchmark, shared by every allocator implementation.
 *
 * An implementation file (pool_taskdag.c, pool_malloc.c, ...) defines IMPL_NAME ("name" in the
 * JSON output) and IMPL_MAX_THREADS (0 = any number) before including this header, and after it:
 *   static int   impl_setup(const pool_params *p, char *err, size_t n);  0 = ok
 *   static void *impl_alloc(size_t size);                                NULL = failure
 *   static int   impl_free(void *ptr, size_t size);                      0 = ok
 *   static void  impl_describe_failure(char *err, size_t n);   why the last alloc/free failed,
 *                                                              called on the failing thread
 *   static int   impl_check(char *err, size_t n);   after each repetition, threads idle; 0 = ok
 *   static void  impl_info(FILE *f);                extra ,"key":value fields for the info line
 *   static void  impl_teardown(void);
 * The driver calls impl_alloc/impl_free directly (no function pointers) so an inlinable
 * allocator is not penalised.
 *
 * Workload (identical for every implementation): T threads, started together by a barrier. Each
 * repetition every thread does `pairs` alloc+free pairs in rounds of `batch`: allocate `batch`
 * blocks (sizes from the thread's pre-generated size array), write two marker bytes into each
 * (first and last requested byte), then read every marker back and free the blocks. The size
 * array (65536 entries per thread, cycled) is either one size or uniform in [64, 4096] from
 * xorshift64 with a fixed per-thread seed, so all implementations see the same sizes.
 *
 * Figures per repetition: wall = (last thread's end) - (first thread's start);
 * ns_per_pair = wall * T / (T * pairs) = wall / pairs (time per pair seen by one thread);
 * mpairs_per_s = T * pairs / wall / 1e6 (aggregate throughput). The wall time is the slowest
 * thread's, so on a machine whose CPUs' speeds differ (a VM whose vCPUs share cores with other
 * tenants: bench/machine/vcpu_speed.c) these two measure the slowest CPU as much as the
 * allocator. Also reported: mpairs_per_s_threads = sum over threads of pairs / (the thread's
 * own time) / 1e6, the aggregate rate of the threads each at its own pace, and
 * slowest_thread_ns.
 *
 * Validation: every pointer non-NULL, every free succeeds, every marker reads back intact (a
 * block handed out twice while live is caught when another owner overwrote the marker), and
 * impl_check after each repetition (taskdag: no bytes still consumed, no failed allocations).
 * Any violation prints a JSON error line and exits 1; no figure is reported for it.
 */
#ifndef TASKDAG_POOL_DRIVER_H
#define TASKDAG_POOL_DRIVER_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/bench_util.h"

#define POOL_SIZES_LEN 65536u /* power of two */
#define POOL_MIXED_MIN 64u
#define POOL_MIXED_MAX 4096u

typedef struct pool_params {
    int threads;
    long long pairs;  /* per thread per repetition, a multiple of batch */
    int batch;
    int reps;
    int warmup;
    int pin;          /* 1 = thread t runs on the t-th CPU the process may use */
    unsigned size;    /* 0 = mixed */
    uint64_t seed;
    size_t total_bytes;
    size_t min_block;
    size_t max_block;
    size_t superblock; /* 0 = implementation default (max block for taskdag and Kokkos here) */
} pool_params;

/* Provided by the implementation file (static; gcc inlines them where it can). */
static int impl_setup(const pool_params *p, char *err, size_t n);
static void *impl_alloc(size_t size);
static int impl_free(void *ptr, size_t size);
static void impl_describe_failure(char *err, size_t n);
static int impl_check(char *err, size_t n);
static void impl_info(FILE *f);
static void impl_teardown(void);

typedef struct pool_thread {
    pthread_t handle;
    int tid;
    uint16_t *sizes;
    unsigned char **ptrs;
    uint64_t t0, t1;
    char pad[64];
} pool_thread;

static pool_params g_params;
static pool_thread *g_threads;
static pthread_barrier_t g_start, g_end;
static int g_failed; /* set atomically by the first failing thread */
static char g_failure[1024];

static void pool_fail(const char *fmt, ...) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&g_failed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g_failure, sizeof g_failure, fmt, ap);
        va_end(ap);
    }
}

static inline unsigned char pool_marker(int tid, long long i) {
    return (unsigned char)(tid * 61 + i * 7 + 1);
}

/* One repetition of one thread; returns 0 on success. */
static int pool_work(pool_thread *th) {
    const long long pairs = g_params.pairs;
    const int batch = g_params.batch;
    const uint16_t *sizes = th->sizes;
    unsigned char **ptrs = th->ptrs;
    unsigned k = 0;
    long long done;
    for (done = 0; done < pairs; done += batch) {
        int i;
        for (i = 0; i < batch; ++i) {
            size_t s = sizes[(k + (unsigned)i) & (POOL_SIZES_LEN - 1)];
            unsigned char *p = (unsigned char *)impl_alloc(s);
            unsigned char m = pool_marker(th->tid, done + i);
            if (!p) {
                char why[512];
                impl_describe_failure(why, sizeof why);
                pool_fail("thread %d: allocation of %zu bytes returned NULL (pair %lld): %s", th->tid, s,
                          done + i, why);
                return 1;
            }
            ((volatile unsigned char *)p)[0] = m;
            ((volatile unsigned char *)p)[s - 1] = (unsigned char)(m ^ 0xA5);
            ptrs[i] = p;
        }
        for (i = 0; i < batch; ++i) {
            size_t s = sizes[(k + (unsigned)i) & (POOL_SIZES_LEN - 1)];
            unsigned char *p = ptrs[i];
            unsigned char m = pool_marker(th->tid, done + i);
            if (((volatile unsigned char *)p)[0] != m ||
                ((volatile unsigned char *)p)[s - 1] != (unsigned char)(m ^ 0xA5)) {
                pool_fail("thread %d: block %p of %zu bytes was overwritten while allocated (pair %lld): "
                          "a block was handed out twice or blocks overlap",
                          th->tid, (void *)p, s, done + i);
                return 1;
            }
            if (impl_free(p, s) != 0) {
                char why[512];
                impl_describe_failure(why, sizeof why);
                pool_fail("thread %d: free of %p (%zu bytes) failed: %s", th->tid, (void *)p, s, why);
                return 1;
            }
        }
        k += (unsigned)batch;
    }
    return 0;
}

/* Pins the calling thread to the n-th CPU (counting from 0, wrapping) of the process's
 * affinity, through the raw system calls, so that no feature macro must precede the
 * implementation's own includes. Returns 0 on success. */
static int pool_pin_to_nth_cpu(int n) {
    unsigned long allowed[16] = {0}, one[16] = {0};
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof allowed, allowed);
    int cpus = 0, cpu, k;
    if (bytes <= 0) return 1;
    for (cpu = 0; cpu < (int)(8 * bytes); ++cpu)
        if (allowed[cpu / 64] >> (cpu % 64) & 1) ++cpus;
    if (cpus == 0) return 1;
    for (cpu = 0, k = n % cpus;; ++cpu)
        if ((allowed[cpu / 64] >> (cpu % 64) & 1) && k-- == 0) break;
    one[cpu / 64] = 1ul << (cpu % 64);
    return syscall(SYS_sched_setaffinity, 0, sizeof one, one) == 0 ? 0 : 1;
}

static void *pool_thread_main(void *arg) {
    pool_thread *th = (pool_thread *)arg;
    int total = g_params.warmup + g_params.reps;
    int rep;
    if (g_params.pin && pool_pin_to_nth_cpu(th->tid) != 0)
        pool_fail("thread %d: could not pin it to a CPU (--pin)", th->tid);
    for (rep = 0; rep < total; ++rep) {
        pthread_barrier_wait(&g_start);
        th->t0 = bench_now_ns();
        if (!__atomic_load_n(&g_failed, __ATOMIC_ACQUIRE)) pool_work(th);
        th->t1 = bench_now_ns();
        pthread_barrier_wait(&g_end);
    }
    return NULL;
}

static void pool_usage(void) {
    fprintf(stderr,
            "usage: %s-bench [--size 64|256|1024|4096|mixed] [--threads N] [--pairs N] [--batch N]\n"
            "       [--reps N] [--warmup N] [--seed N] [--total BYTES] [--min-block B] [--max-block B]\n"
            "       [--pin]   (thread t on the t-th CPU the process may use)\n"
            "       [--superblock B]\n"
            "Prints one JSON object per line; exits 0 only when every result was checked.\n",
            IMPL_NAME);
}

static void pool_parse(int argc, char **argv) {
    int i;
    g_params.threads = 1;
    g_params.pairs = 1 << 20;
    g_params.batch = 64;
    g_params.reps = 5;
    g_params.warmup = 1;
    g_params.size = 0;
    g_params.seed = 0x5DEECE66Dull;
    g_params.total_bytes = (size_t)64 << 20;
    g_params.min_block = 64;
    g_params.max_block = 4096;
    g_params.superblock = 0;
    for (i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            pool_usage();
            exit(0);
        } else if (!strcmp(o, "--size")) {
            if (v && !strcmp(v, "mixed"))
                g_params.size = 0;
            else
                g_params.size = (unsigned)bench_parse_int(o, v);
            ++i;
        } else if (!strcmp(o, "--threads")) {
            g_params.threads = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--pairs")) {
            g_params.pairs = bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--batch")) {
            g_params.batch = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--reps")) {
            g_params.reps = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--warmup")) {
            g_params.warmup = (int)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--pin")) {
            g_params.pin = 1;
        } else if (!strcmp(o, "--seed")) {
            g_params.seed = (uint64_t)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--total")) {
            g_params.total_bytes = (size_t)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--min-block")) {
            g_params.min_block = (size_t)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--max-block")) {
            g_params.max_block = (size_t)bench_parse_int(o, v), ++i;
        } else if (!strcmp(o, "--superblock")) {
            g_params.superblock = (size_t)bench_parse_int(o, v), ++i;
        } else {
            pool_usage();
            bench_die(BENCH_EXIT_UNSUPPORTED, "unknown option '%s'", o);
        }
    }
    if (g_params.threads < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--threads must be >= 1");
    if (IMPL_MAX_THREADS > 0 && g_params.threads > IMPL_MAX_THREADS)
        bench_die(BENCH_EXIT_UNSUPPORTED, "%s supports at most %d thread(s), asked for %d", IMPL_NAME,
                  IMPL_MAX_THREADS, g_params.threads);
    if (g_params.batch < 1 || g_params.batch > 4096) bench_die(BENCH_EXIT_UNSUPPORTED, "--batch must be in [1, 4096]");
    if (g_params.reps < 1) bench_die(BENCH_EXIT_UNSUPPORTED, "--reps must be >= 1");
    if (g_params.pairs < g_params.batch) g_params.pairs = g_params.batch;
    g_params.pairs = (g_params.pairs + g_params.batch - 1) / g_params.batch * g_params.batch;
    if (g_params.size != 0 && (g_params.size < 1 || g_params.size > g_params.max_block))
        bench_die(BENCH_EXIT_UNSUPPORTED, "--size %u outside [1, max block %zu]", g_params.size, g_params.max_block);
    if (g_params.size == 0 && g_params.max_block < POOL_MIXED_MAX)
        bench_die(BENCH_EXIT_UNSUPPORTED, "mixed sizes need --max-block >= %u", POOL_MIXED_MAX);
    /* Live blocks at any time: threads * batch * max size; keep well inside the pool. */
    if ((size_t)g_params.threads * (size_t)g_params.batch * g_params.max_block > g_params.total_bytes / 2)
        bench_die(BENCH_EXIT_UNSUPPORTED,
                  "threads*batch*max block = %zu bytes exceeds half the pool (%zu bytes); lower --batch",
                  (size_t)g_params.threads * (size_t)g_params.batch * g_params.max_block, g_params.total_bytes);
}

static void pool_print_common(FILE *f) {
    fprintf(f, "\"bench\":\"pool\",\"impl\":\"%s\",\"size\":", IMPL_NAME);
    if (g_params.size)
        fprintf(f, "\"%u\"", g_params.size);
    else
        fprintf(f, "\"mixed\"");
    if (g_params.pin) fprintf(f, ",\"pinned\":true");
    fprintf(f, ",\"threads\":%d,\"batch\":%d,\"pairs_per_thread\":%lld", g_params.threads, g_params.batch,
            g_params.pairs);
}

int main(int argc, char **argv) {
    char err[1024];
    int t, rep;
    long long checked = 0;

    pool_parse(argc, argv);

    err[0] = '\0';
    if (impl_setup(&g_params, err, sizeof err) != 0) bench_die(BENCH_EXIT_WRONG, "%s setup failed: %s", IMPL_NAME, err);

    printf("{\"type\":\"info\",");
    pool_print_common(stdout);
    printf(",\"seed\":%llu,\"total_bytes\":%zu,\"min_block\":%zu,\"max_block\":%zu,\"superblock\":%zu",
           (unsigned long long)g_params.seed, g_params.total_bytes, g_params.min_block, g_params.max_block,
           g_params.superblock);
    impl_info(stdout);
    printf("}\n");
    fflush(stdout);

    g_threads = (pool_thread *)calloc((size_t)g_params.threads, sizeof *g_threads);
    if (!g_threads) bench_die(BENCH_EXIT_WRONG, "out of memory");
    for (t = 0; t < g_params.threads; ++t) {
        pool_thread *th = &g_threads[t];
        uint64_t rng = bench_thread_seed(g_params.seed, t);
        unsigned j;
        th->tid = t;
        th->sizes = (uint16_t *)malloc(POOL_SIZES_LEN * sizeof(uint16_t));
        th->ptrs = (unsigned char **)calloc((size_t)g_params.batch, sizeof(unsigned char *));
        if (!th->sizes || !th->ptrs) bench_die(BENCH_EXIT_WRONG, "out of memory");
        for (j = 0; j < POOL_SIZES_LEN; ++j) {
            if (g_params.size)
                th->sizes[j] = (uint16_t)g_params.size;
            else
                th->sizes[j] =
                    (uint16_t)(POOL_MIXED_MIN + bench_xorshift64(&rng) % (POOL_MIXED_MAX - POOL_MIXED_MIN + 1));
        }
    }

    pthread_barrier_init(&g_start, NULL, (unsigned)g_params.threads + 1);
    pthread_barrier_init(&g_end, NULL, (unsigned)g_params.threads + 1);
    for (t = 0; t < g_params.threads; ++t)
        if (pthread_create(&g_threads[t].handle, NULL, pool_thread_main, &g_threads[t]) != 0)
            bench_die(BENCH_EXIT_WRONG, "pthread_create failed for thread %d", t);

    for (rep = 0; rep < g_params.warmup + g_params.reps; ++rep) {
        uint64_t t0 = UINT64_MAX, t1 = 0;
        double wall, thread_rates, slowest;
        pthread_barrier_wait(&g_start);
        pthread_barrier_wait(&g_end);
        if (__atomic_load_n(&g_failed, __ATOMIC_ACQUIRE)) bench_die(BENCH_EXIT_WRONG, "%s", g_failure);
        err[0] = '\0';
        if (impl_check(err, sizeof err) != 0)
            bench_die(BENCH_EXIT_WRONG, "after repetition %d: %s", rep, err);
        thread_rates = 0;
        slowest = 0;
        for (t = 0; t < g_params.threads; ++t) {
            double own = (double)(g_threads[t].t1 - g_threads[t].t0);
            if (g_threads[t].t0 < t0) t0 = g_threads[t].t0;
            if (g_threads[t].t1 > t1) t1 = g_threads[t].t1;
            thread_rates += (double)g_params.pairs / own * 1e3;
            if (own > slowest) slowest = own;
        }
        wall = (double)(t1 - t0);
        checked += g_params.pairs * g_params.threads;
        printf("{\"type\":\"measurement\",");
        pool_print_common(stdout);
        printf(",\"rep\":%d,\"warmup\":%s,\"wall_ns\":%.0f,\"ns_per_pair\":%.4f,\"mpairs_per_s\":%.4f"
               ",\"mpairs_per_s_threads\":%.4f,\"slowest_thread_ns\":%.0f}\n",
               rep - g_params.warmup, rep < g_params.warmup ? "true" : "false", wall,
               wall / (double)g_params.pairs,
               (double)g_params.pairs * g_params.threads / wall * 1e3, thread_rates, slowest);
        fflush(stdout);
    }
    for (t = 0; t < g_params.threads; ++t) pthread_join(g_threads[t].handle, NULL);
    impl_teardown();
    printf("{\"type\":\"done\",\"valid\":true,");
    pool_print_common(stdout);
    printf(",\"checked_pairs\":%lld}\n", checked);
    return 0;
}

#endif /* TASKDAG_POOL_DRIVER_H */
