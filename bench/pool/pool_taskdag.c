/* Pool benchmark, taskdag implementation: one td_pool shared by all threads,
 * td_pool_allocate(pool, size, 1) / td_pool_deallocate(pool, ptr, size). */
#include <taskdag.h>

#include <stdio.h>
#include <stddef.h>

#define IMPL_NAME "taskdag"
#define IMPL_MAX_THREADS 0
#include "pool_driver.h"

static td_pool *g_pool;

static void *impl_alloc(size_t size) { return td_pool_allocate(g_pool, size, 1); }
static int impl_free(void *ptr, size_t size) { return td_pool_deallocate(g_pool, ptr, size) == TD_OK ? 0 : 1; }
static void impl_describe_failure(char *err, size_t n) {
    snprintf(err, n, "%s: %s", td_status_string((int)td_last_error()), td_last_error_message());
}


static int impl_setup(const pool_params *p, char *err, size_t n) {
    /* The pool benchmark uses no runtime workers; one keeps them from competing for cores. */
    td_init_args init = TD_INIT_ARGS_INIT;
    td_pool_args args = TD_POOL_ARGS_INIT;
    td_status s;
    init.num_threads = 1;
    s = td_initialize(&init);
    if (s != TD_OK) {
        snprintf(err, n, "td_initialize: %s: %s", td_status_string((int)s), td_last_error_message());
        return 1;
    }
    args.min_total_alloc_size = p->total_bytes;
    args.min_block_alloc_size = p->min_block;
    args.max_block_alloc_size = p->max_block;
    args.min_superblock_size = p->superblock;
    s = td_pool_create(&args, &g_pool);
    if (s != TD_OK) {
        snprintf(err, n, "td_pool_create: %s: %s", td_status_string((int)s), td_last_error_message());
        return 1;
    }
    return 0;
}

static int impl_check(char *err, size_t n) {
    td_pool_stats st = TD_POOL_STATS_INIT;
    td_status s = td_pool_usage_statistics(g_pool, &st);
    if (s != TD_OK) {
        snprintf(err, n, "td_pool_usage_statistics: %s: %s", td_status_string((int)s), td_last_error_message());
        return 1;
    }
    if (st.consumed_bytes != 0 || st.consumed_blocks != 0 || st.failed_allocations != 0) {
        snprintf(err, n,
                 "taskdag pool statistics after all blocks were freed: consumed_bytes=%llu consumed_blocks=%llu "
                 "failed_allocations=%llu (all must be 0)",
                 (unsigned long long)st.consumed_bytes, (unsigned long long)st.consumed_blocks,
                 (unsigned long long)st.failed_allocations);
        return 1;
    }
    return 0;
}

static void impl_info(FILE *f) {
    td_pool_stats st = TD_POOL_STATS_INIT;
    fprintf(f, ",\"version\":");
    bench_json_string(f, td_version_string());
    if (td_pool_usage_statistics(g_pool, &st) == TD_OK)
        fprintf(f, ",\"capacity_bytes\":%llu,\"superblock_bytes\":%llu", (unsigned long long)st.capacity_bytes,
                (unsigned long long)st.superblock_bytes);
}

static void impl_teardown(void) {
    td_pool_release(g_pool);
    td_finalize();
}
