/*
 * taskdag showcase: what the library can do today, in one run.
 *
 *   1. Start the runtime and print its configuration (topology, GPUs).
 *   2. Share one lock-free memory pool between all cores: every thread allocates blocks of mixed
 *      sizes, stamps and verifies them, and frees them; report throughput and usage statistics.
 *   3. Exhaust a small pool on purpose and show how taskdag reports it.
 *
 * Run with scripts/demo.sh.
 */
#include <taskdag.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                 \
    do {                                                                            \
        td_status s_ = (call);                                                      \
        if (s_ != TD_OK) {                                                          \
            fprintf(stderr, "%s failed: %s: %s\n", #call, td_status_string(s_),     \
                    td_last_error_message());                                       \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

enum { LIVE = 256, ROUNDS = 400000 };

struct worker {
    td_pool *pool;
    unsigned id;
    uint64_t bytes;
    int failed;
};

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Keeps LIVE blocks alive per thread, replacing a random one each round, so allocations from
 * different threads interleave in the pool. Each block carries the thread's stamp. */
static void *churn(void *arg)
{
    struct worker *w = arg;
    void *block[LIVE] = {0};
    size_t size[LIVE] = {0};
    unsigned char stamp[LIVE] = {0};
    uint64_t seed = 0x9e3779b97f4a7c15ull * (w->id + 1);
    for (unsigned r = 0; r < ROUNDS && !w->failed; r++) {
        unsigned i = (unsigned)(xorshift(&seed) % LIVE);
        if (block[i]) {
            unsigned char *p = block[i];
            if (p[0] != (unsigned char)w->id || p[size[i] - 1] != stamp[i]) {
                fprintf(stderr, "thread %u: block %p was overwritten\n", w->id, block[i]);
                w->failed = 1;
            }
            CHECK(td_pool_deallocate(w->pool, block[i], size[i]));
        }
        size[i] = 16 + xorshift(&seed) % 4081; /* 16 B .. 4 KiB */
        block[i] = td_pool_allocate(w->pool, size[i], 4);
        if (!block[i]) {
            fprintf(stderr, "thread %u: %s\n", w->id, td_last_error_message());
            w->failed = 1;
            break;
        }
        unsigned char *p = block[i];
        p[0] = (unsigned char)w->id;
        stamp[i] = (unsigned char)r;
        p[size[i] - 1] = stamp[i];
        w->bytes += size[i];
    }
    for (unsigned i = 0; i < LIVE; i++)
        if (block[i])
            CHECK(td_pool_deallocate(w->pool, block[i], size[i]));
    return NULL;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_stats(const char *title, td_pool *pool)
{
    td_pool_stats st = TD_POOL_STATS_INIT;
    CHECK(td_pool_usage_statistics(pool, &st));
    printf("%s\n", title);
    printf("  capacity       %10llu bytes in %llu superblocks of %llu bytes\n",
           (unsigned long long)st.capacity_bytes, (unsigned long long)st.capacity_superblocks,
           (unsigned long long)st.superblock_bytes);
    printf("  in use now     %10llu bytes in %llu blocks\n", (unsigned long long)st.consumed_bytes,
           (unsigned long long)st.consumed_blocks);
    printf("  high water     %10llu bytes\n", (unsigned long long)st.high_water_bytes);
    printf("  failed allocs  %10llu\n", (unsigned long long)st.failed_allocations);
}

int main(void)
{
    CHECK(td_initialize(NULL));
    char *config = NULL;
    CHECK(td_configuration_string(&config));
    printf("== taskdag %s ==\n%s\n", td_version_string(), config);
    td_string_free(config);

    /* 2. One pool, all cores. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned nthreads = cores > 0 ? (unsigned)cores : 1;
    td_pool_args args = TD_POOL_ARGS_INIT;
    args.min_total_alloc_size = (size_t)nthreads * LIVE * 4096 * 2;
    td_pool *pool = NULL;
    CHECK(td_pool_create(&args, &pool));

    struct worker *w = calloc(nthreads, sizeof *w);
    pthread_t *tid = calloc(nthreads, sizeof *tid);
    double t0 = seconds();
    for (unsigned i = 0; i < nthreads; i++) {
        w[i] = (struct worker){.pool = pool, .id = i};
        pthread_create(&tid[i], NULL, churn, &w[i]);
    }
    int failed = 0;
    uint64_t bytes = 0;
    for (unsigned i = 0; i < nthreads; i++) {
        pthread_join(tid[i], NULL);
        failed |= w[i].failed;
        bytes += w[i].bytes;
    }
    double dt = seconds() - t0;
    double ops = 2.0 * nthreads * ROUNDS;
    printf("Memory pool: %u threads, %.0f allocate/deallocate calls of 16 B..4 KiB in %.3f s\n",
           nthreads, ops, dt);
    printf("  %.1f M calls/s, %.1f ns per call per thread, %.1f GiB handed out, every block "
           "verified: %s\n\n",
           ops / dt * 1e-6, dt * 1e9 * nthreads / ops, (double)bytes / (1 << 30),
           failed ? "NO" : "yes");
    print_stats("Pool after all threads finished:", pool);
    CHECK(td_pool_release(pool));

    /* 3. Exhaustion is a status, not a crash. */
    args.min_total_alloc_size = 16384;
    CHECK(td_pool_create(&args, &pool));
    unsigned got = 0;
    void *blocks[64];
    while (got < 64 && (blocks[got] = td_pool_allocate(pool, 1024, 1)) != NULL)
        got++;
    printf("\nA 16 KiB pool gave %u blocks of 1 KiB, then: %s: %s\n", got,
           td_status_string(td_last_error()), td_last_error_message());
    for (unsigned i = 0; i < got; i++)
        CHECK(td_pool_deallocate(pool, blocks[i], 1024));
    print_stats("Small pool after freeing everything:", pool);
    CHECK(td_pool_release(pool));

    free(w);
    free(tid);
    CHECK(td_finalize());
    return failed;
}
