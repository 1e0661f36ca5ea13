/* Dispatch benchmark, taskdag implementation: the root Threads instance of a runtime
 * initialized with td_init_args.num_threads = threads (pinned one thread per CPU when the
 * machine has that many), td_parallel_for / td_parallel_reduce with the default range policy
 * (one contiguous block per thread). Bodies are C callbacks over [begin, end). */
#include <taskdag.h>

#include <stdio.h>
#include <stddef.h>

#define IMPL_NAME "taskdag"
#include "dispatch_driver.h"

static td_space *g_space;

static int impl_setup(int threads, char *err, size_t n) {
    td_init_args init = TD_INIT_ARGS_INIT;
    size_t concurrency = 0;
    td_status s;
    init.num_threads = threads;
    s = td_initialize(&init);
    if (s == TD_OK) s = td_space_threads(&g_space);
    if (s == TD_OK) s = td_space_concurrency(g_space, &concurrency);
    if (s != TD_OK) {
        snprintf(err, n, "%s: %s", td_status_string((int)s), td_last_error_message());
        return 1;
    }
    if (concurrency != (size_t)threads) {
        snprintf(err, n, "the Threads space has %zu threads, asked for %d", concurrency, threads);
        return 1;
    }
    return 0;
}

static void for_body(int64_t begin, int64_t end, void *user) {
    int64_t i;
    (void)user;
    for (i = begin; i < end; ++i) dispatch_touch(i);
}

static td_range_policy range(int64_t n) {
    td_range_policy policy = TD_RANGE_POLICY_INIT;
    policy.end = n;
    return policy;
}

static int impl_for(int64_t n) {
    const td_range_policy policy = range(n);
    return td_parallel_for(g_space, &policy, for_body, NULL) == TD_OK ? 0 : 1;
}

static void reduce_body(int64_t begin, int64_t end, void *value, void *user) {
    int64_t acc = *(int64_t *)value, i;
    (void)user;
    for (i = begin; i < end; ++i) acc += i + 1;
    *(int64_t *)value = acc;
}

static int impl_reduce(int64_t n, int64_t *sum) {
    const td_range_policy policy = range(n);
    return td_parallel_reduce(g_space, &policy, reduce_body, NULL, TD_REDUCE_SUM, TD_SCALAR_INT64, sum) == TD_OK
               ? 0
               : 1;
}

static void fill_body(int64_t begin, int64_t end, void *user) {
    double *a = (double *)user;
    int64_t i;
    for (i = begin; i < end; ++i) a[i] = dispatch_value(i);
}

static int impl_fill(double *a, int64_t n) {
    const td_range_policy policy = range(n);
    return td_parallel_for(g_space, &policy, fill_body, a) == TD_OK ? 0 : 1;
}

static void sum_body(int64_t begin, int64_t end, void *value, void *user) {
    *(double *)value += dispatch_sum_block((const double *)user, begin, end);
}

static int impl_sum(const double *a, int64_t n, double *sum) {
    const td_range_policy policy = range(n);
    return td_parallel_reduce(g_space, &policy, sum_body, (void *)a, TD_REDUCE_SUM, TD_SCALAR_DOUBLE, sum) ==
                   TD_OK
               ? 0
               : 1;
}

static void impl_info(FILE *f) {
    char *text = NULL;
    fprintf(f, ",\"version\":");
    bench_json_string(f, td_version_string());
    if (td_configuration_string(&text) == TD_OK) {
        fprintf(f, ",\"configuration\":");
        bench_json_string(f, text);
        td_string_free(text);
    }
}

static void impl_teardown(void) {
    td_space_release(g_space);
    td_finalize();
}
