/* Fibonacci benchmark, taskdag implementation: 000 Fig. 3.4 through the C API. F(k-2) is spawned
 * at high priority, F(k-1) at regular priority, and the task respawns (high priority) once both
 * have completed; the second run adds the children's results, and the destroy callback releases
 * the children's futures (leaves hold none: they are spawned without one, and only a task's last
 * run asks for its result pointer). The respawn is one td_task_respawn_when_all_private call (the
 * children's futures are the task's own); built with FIB_BORROWED (program
 * bench_fib_taskdag_borrowed) it is td_task_respawn_when_all, and with FIB_SEPARATE_WHEN_ALL
 * (program bench_fib_taskdag_when_all) Fig. 3.4's own sequence: td_when_all, td_task_respawn on
 * its future, td_future_release. td_initialize(num_threads = T); the scheduler runs on the root
 * Threads instance of T threads, or with --workers W on the instance masked to its first W
 * (td_space_mask), and allocates from a 64 MiB pool. */
#include <taskdag.h>

#include <stdio.h>

#ifdef FIB_SEPARATE_WHEN_ALL
#define IMPL_NAME "taskdag-when-all"
#elif defined(FIB_BORROWED)
#define IMPL_NAME "taskdag-borrowed"
#else
#define IMPL_NAME "taskdag"
#endif
#define IMPL_MAX_THREADS 0
#define IMPL_HAS_WORKERS
#include "fib_driver.h"

typedef struct fib_state {
    long n;
    td_future *child[2];
} fib_state;

static td_pool *g_pool;
static td_scheduler *g_sched;
static td_scheduler_stats g_stats;

static void fib_destroy(void *state) {
    fib_state *s = (fib_state *)state;
    td_future_release(s->child[0]);
    td_future_release(s->child[1]);
}

static void fib_task(td_task_ctx *ctx, void *state) {
    fib_state *s = (fib_state *)state;
    if (s->n < 2) {
        *(long *)td_task_result(ctx) = s->n;
    } else if (s->child[0]) {
        long a = 0, b = 0;
        td_future_get(s->child[0], &a, sizeof a);
        td_future_get(s->child[1], &b, sizeof b);
        *(long *)td_task_result(ctx) = a + b;
    } else {
        td_task_policy policy = TD_TASK_POLICY_INIT;
        td_task_closure closure = TD_TASK_CLOSURE_INIT;
        fib_state child = {s->n - 2, {NULL, NULL}};
#ifdef FIB_SEPARATE_WHEN_ALL
        td_future *all;
#endif
        closure.function = fib_task;
        closure.state = &child;
        closure.state_size = sizeof child;
        closure.result_size = sizeof(long);
        closure.destroy = child.n < 2 ? NULL : fib_destroy;
        policy.priority = TD_PRIORITY_HIGH;
        s->child[0] = td_task_spawn(ctx, &policy, &closure);
        child.n = s->n - 1;
        closure.destroy = child.n < 2 ? NULL : fib_destroy;
        policy.priority = TD_PRIORITY_REGULAR;
        s->child[1] = td_task_spawn(ctx, &policy, &closure);
        if (!s->child[0] || !s->child[1]) {
            fprintf(stderr, "fib_taskdag: spawn failed: %s\n", td_last_error_message());
            return; /* the missing result makes the run fail validation */
        }
#ifdef FIB_SEPARATE_WHEN_ALL
        all = td_when_all(td_task_scheduler(ctx), s->child, 2);
        td_task_respawn(ctx, all, TD_PRIORITY_HIGH);
        td_future_release(all);
#elif defined(FIB_BORROWED)
        td_task_respawn_when_all(ctx, s->child, 2, TD_PRIORITY_HIGH);
#else
        td_task_respawn_when_all_private(ctx, s->child, 2, TD_PRIORITY_HIGH);
#endif
    }
}

static int impl_setup(int threads, char *err, size_t n) {
    td_init_args init = TD_INIT_ARGS_INIT;
    td_pool_args pool = TD_POOL_ARGS_INIT;
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    td_space *root = NULL, *masked = NULL;
    td_status s;
    init.num_threads = threads;
    if ((s = td_initialize(&init)) != TD_OK) goto fail;
    pool.min_total_alloc_size = (size_t)64 << 20;
    if ((s = td_pool_create(&pool, &g_pool)) != TD_OK) goto fail;
    args.pool = g_pool;
    if (fib_workers != 0 && fib_workers < threads) {
        /* td_space_mask keeps the first ceil(fraction x T) threads: W for (W - 0.5) / T. */
        if ((s = td_space_threads(&root)) != TD_OK) goto fail;
        if ((s = td_space_mask(root, ((double)fib_workers - 0.5) / threads, &masked)) != TD_OK) goto fail;
        args.space = masked;
    }
    s = td_scheduler_create(&args, &g_sched);
    td_space_release(masked);
    td_space_release(root);
    if (s != TD_OK) goto fail;
    return 0;
fail:
    snprintf(err, n, "%s: %s", td_status_string((int)s), td_last_error_message());
    return 1;
}

static long impl_fib(int n, char *err, size_t errn) {
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    fib_state root = {n, {NULL, NULL}};
    td_future *f;
    long result = -1;
    td_status s;
    policy.scheduler = g_sched;
    closure.function = fib_task;
    closure.state = &root;
    closure.state_size = sizeof root;
    closure.result_size = sizeof(long);
    closure.destroy = fib_destroy;
    f = td_host_spawn(&policy, &closure);
    if (!f || (s = td_wait(g_sched)) != TD_OK || (s = td_future_get(f, &result, sizeof result)) != TD_OK) {
        snprintf(err, errn, "%s", td_last_error_message());
        td_future_release(f);
        return -1;
    }
    td_future_release(f);
    return result;
}

static void impl_info(FILE *f) {
    fprintf(f, ",\"version\":");
    bench_json_string(f, td_version_string());
}

static void impl_teardown(void) {
    /* Not in impl_fib: the statistics include the pool's, which walk every superblock. */
    g_stats = (td_scheduler_stats)TD_SCHEDULER_STATS_INIT;
    td_scheduler_statistics(g_sched, &g_stats);
    fprintf(stderr,
            "taskdag: %llu tasks spawned, peak alive %llu (%llu bytes), steals %llu, workers sat "
            "out %llu\n",
            (unsigned long long)g_stats.tasks_spawned, (unsigned long long)g_stats.peak_alive,
            (unsigned long long)g_stats.peak_bytes, (unsigned long long)g_stats.steals,
            (unsigned long long)g_stats.workers_sat_out);
    td_scheduler_release(g_sched);
    td_pool_release(g_pool);
    td_finalize();
}
