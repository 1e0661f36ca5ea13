/*
 * throttle.c: the driver pattern of 002 §2.2.4. A million tasks go through a pool that holds
 * a few thousand: a driver task spawns a batch of computational tasks at regular priority, then
 * respawns itself at low priority. A low-priority task runs only when no higher-priority task is
 * ready, so the driver resumes once the batch has (nearly) drained and the completed tasks have
 * returned their memory. The number of tasks alive stays bounded by about one batch.
 *
 * Usage: throttle [total [batch]]   (default 1000000 tasks in batches of 1000)
 */
#include <taskdag.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                 \
    do {                                                                            \
        td_status s_ = (call);                                                      \
        if (s_ != TD_OK) {                                                          \
            fprintf(stderr, "%s failed: %s: %s\n", #call, td_status_string(s_),     \
                    td_last_error_message());                                       \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static atomic_llong g_done;   /* computational tasks that ran */
static atomic_llong g_sum;    /* the sum of their values, to check nothing ran twice */

typedef struct work_state {
    long long value;
} work_state;

static void work_task(td_task_ctx *ctx, void *state)
{
    (void)ctx;
    const work_state *w = state;
    atomic_fetch_add_explicit(&g_sum, w->value, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_done, 1, memory_order_relaxed);
}

typedef struct driver_state {
    long long next;       /* next value to spawn */
    long long total;
    long long batch;
    long long refused;    /* spawns that found the pool full (retried after a respawn) */
    long long runs;
} driver_state;

static void driver_task(td_task_ctx *ctx, void *state)
{
    driver_state *d = state;
    d->runs++;
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    work_state w;
    closure.function = work_task;
    closure.state = &w;
    closure.state_size = sizeof w;
    for (long long i = 0; i < d->batch && d->next < d->total; i++) {
        w.value = d->next;
        td_future *f = td_task_spawn(ctx, &policy, &closure);
        if (f == NULL) {
            if (td_last_error() != TD_ERROR_POOL_EXHAUSTED) {
                fprintf(stderr, "td_task_spawn: %s\n", td_last_error_message());
                exit(1);
            }
            d->refused++;
            break; /* the pool is full: let the spawned tasks drain first */
        }
        CHECK(td_future_release(f)); /* nobody waits for its result: free it on completion */
        d->next++;
    }
    if (d->next < d->total)
        CHECK(td_task_respawn(ctx, NULL, TD_PRIORITY_LOW));
}

int main(int argc, char **argv)
{
    long long total = argc > 1 ? atoll(argv[1]) : 1000000;
    long long batch = argc > 2 ? atoll(argv[2]) : 1000;
    if (total < 1 || batch < 1) {
        fprintf(stderr, "usage: throttle [total [batch]]\n");
        return 2;
    }
    CHECK(td_initialize(NULL));
    td_pool_args pool_args = TD_POOL_ARGS_INIT;
    td_pool *pool;
    pool_args.min_total_alloc_size = 512 * 1024; /* 4096 blocks of 128 bytes */
    CHECK(td_pool_create(&pool_args, &pool));
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    td_scheduler *sched;
    args.pool = pool;
    CHECK(td_scheduler_create(&args, &sched));

    driver_state d = {0, total, batch, 0, 0};
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    policy.scheduler = sched;
    policy.priority = TD_PRIORITY_LOW;
    closure.function = driver_task;
    closure.state = &d;
    closure.state_size = sizeof d;
    closure.result_size = sizeof d; /* the driver's final state, read back below */
    td_future *driver = td_host_spawn(&policy, &closure);
    if (driver == NULL) {
        fprintf(stderr, "td_host_spawn: %s\n", td_last_error_message());
        return 1;
    }
    CHECK(td_wait(sched));
    CHECK(td_future_release(driver));

    td_scheduler_stats st = TD_SCHEDULER_STATS_INIT;
    td_pool_stats ps = TD_POOL_STATS_INIT;
    CHECK(td_scheduler_statistics(sched, &st));
    CHECK(td_pool_usage_statistics(pool, &ps));
    long long done = atomic_load(&g_done), sum = atomic_load(&g_sum);
    int ok = done == total && sum == total * (total - 1) / 2;
    printf("%lld tasks ran through a pool of %llu bytes (%llu tasks fit at once)\n", done,
           (unsigned long long)ps.capacity_bytes, (unsigned long long)(ps.capacity_bytes / 128));
    printf("  driver respawns %llu, peak tasks alive %llu (%llu bytes), pool high water %llu "
           "bytes, spawns refused %llu\n",
           (unsigned long long)st.tasks_respawned, (unsigned long long)st.peak_alive,
           (unsigned long long)st.peak_bytes, (unsigned long long)ps.high_water_bytes,
           (unsigned long long)st.allocation_failures);
    printf("  every task ran exactly once: %s\n", ok ? "yes" : "NO");
    CHECK(td_scheduler_release(sched));
    CHECK(td_pool_release(pool));
    CHECK(td_finalize());
    printf("throttle.c: done\n");
    return ok ? 0 : 1;
}
