/*
 * fib_task.c: the naive task-parallel Fibonacci of 000 Fig. 3.4 with taskdag's C API.
 *
 * Each call F(k) is a task. For k > 1 the task spawns F(k-2) at high priority (that branch is
 * shorter, so running it first frees memory sooner, 002 §2.2.6) and F(k-1) at regular priority,
 * respawns itself once both have completed, and on its second run adds their results. Its
 * destroy callback releases the children's futures when it completes (002 §2.2.5).
 *
 * The respawn is td_task_respawn_when_all_private: Fig. 3.4's respawn on the when_all of the
 * children in one call, which makes no future and, when only one child is still incomplete (the
 * usual case on one worker), no when_all either. "Private": the children's futures are this
 * task's own (no other task waits on them through its references), so with several workers the
 * children the call runs ahead complete without an atomic read-modify-write. The three-call form
 * it replaces:
 *     td_future *all = td_when_all(td_task_scheduler(ctx), s->child, 2);
 *     td_task_respawn(ctx, all, TD_PRIORITY_HIGH);
 *     td_future_release(all);
 *
 * A spawn that finds the pool exhausted returns NULL (TD_ERROR_POOL_EXHAUSTED), and so does the
 * respawn when it needs a when_all: the task then gives up cleanly (result -1) and the failure
 * propagates to the root. The second run below shows it with a pool that is too small.
 *
 * Usage: fib_task [n]   (default 30)
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <taskdag.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                 \
    do {                                                                            \
        td_status s_ = (call);                                                      \
        if (s_ != TD_OK) {                                                          \
            fprintf(stderr, "%s failed: %s: %s\n", #call, td_status_string(s_),     \
                    td_last_error_message());                                       \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

typedef struct fib_state {
    long n;
    td_future *child[2];
} fib_state;

static void fib_destroy(void *state)
{
    fib_state *s = state;
    td_future_release(s->child[0]);
    td_future_release(s->child[1]);
}

static void fib_task(td_task_ctx *ctx, void *state);

/* Spawns F(n) from a task; NULL when the pool is exhausted. */
static td_future *spawn_fib(td_task_ctx *ctx, long n, td_priority priority)
{
    fib_state child = {n, {NULL, NULL}};
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    policy.priority = priority;
    closure.function = fib_task;
    closure.state = &child;
    closure.state_size = sizeof child;
    closure.result_size = sizeof(long);
    closure.destroy = fib_destroy;
    return td_task_spawn(ctx, &policy, &closure);
}

static void fib_task(td_task_ctx *ctx, void *state)
{
    fib_state *s = state;
    long *result = td_task_result(ctx);
    if (s->n < 2) {
        *result = s->n;
    } else if (s->child[0] != NULL) {
        long a, b;
        CHECK(td_future_get(s->child[0], &a, sizeof a));
        CHECK(td_future_get(s->child[1], &b, sizeof b));
        *result = (a < 0 || b < 0) ? -1 : a + b;
    } else {
        s->child[0] = spawn_fib(ctx, s->n - 2, TD_PRIORITY_HIGH);
        s->child[1] = s->child[0] ? spawn_fib(ctx, s->n - 1, TD_PRIORITY_REGULAR) : NULL;
        if (s->child[1] == NULL) {
            /* Pool exhausted: give up this branch. The destroy callback releases child[0]. */
            *result = -1;
            return;
        }
        td_status st = td_task_respawn_when_all_private(ctx, s->child, 2, TD_PRIORITY_HIGH);
        if (st == TD_ERROR_POOL_EXHAUSTED) {
            *result = -1; /* no room for the when_all: this task completes now */
            return;
        }
        CHECK(st);
    }
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Computes F(n) on a scheduler over a pool of `pool_bytes`; prints what happened. */
static long run(long n, size_t pool_bytes)
{
    td_pool_args pool_args = TD_POOL_ARGS_INIT;
    td_pool *pool;
    pool_args.min_total_alloc_size = pool_bytes;
    CHECK(td_pool_create(&pool_args, &pool));
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    td_scheduler *sched;
    args.pool = pool;
    CHECK(td_scheduler_create(&args, &sched));
    size_t workers;
    CHECK(td_scheduler_concurrency(sched, &workers));

    fib_state root = {n, {NULL, NULL}};
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    policy.scheduler = sched;
    closure.function = fib_task;
    closure.state = &root;
    closure.state_size = sizeof root;
    closure.result_size = sizeof(long);
    closure.destroy = fib_destroy;

    double t0 = seconds();
    td_future *f = td_host_spawn(&policy, &closure);
    if (f == NULL) {
        fprintf(stderr, "td_host_spawn: %s\n", td_last_error_message());
        exit(1);
    }
    CHECK(td_wait(sched));
    double dt = seconds() - t0;
    long value;
    CHECK(td_future_get(f, &value, sizeof value));
    CHECK(td_future_release(f));

    td_scheduler_stats st = TD_SCHEDULER_STATS_INIT;
    td_pool_stats ps = TD_POOL_STATS_INIT;
    CHECK(td_scheduler_statistics(sched, &st));
    CHECK(td_pool_usage_statistics(pool, &ps));
    double nodes = (double)st.tasks_spawned;
    printf("F(%ld) = %ld on %zu worker(s) with a %zu-byte pool\n", n, value, workers,
           (size_t)ps.capacity_bytes);
    printf("  %llu tasks, %llu respawns, %llu when_alls in %.3f s (%.1f ns per task)\n",
           (unsigned long long)st.tasks_spawned, (unsigned long long)st.tasks_respawned,
           (unsigned long long)st.when_alls_created, dt, dt * 1e9 / (nodes > 0 ? nodes : 1));
    printf("  peak tasks alive %llu (%llu bytes of pool blocks), spawns refused %llu, "
           "now in use %llu bytes\n",
           (unsigned long long)st.peak_alive, (unsigned long long)st.peak_bytes,
           (unsigned long long)st.allocation_failures, (unsigned long long)ps.consumed_bytes);
    CHECK(td_scheduler_release(sched));
    CHECK(td_pool_release(pool));
    return value;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 30;
    if (n < 0 || n > 45) {
        fprintf(stderr, "usage: fib_task [n], 0 <= n <= 45\n");
        return 2;
    }
    CHECK(td_initialize(NULL));
    long expected = 0, next = 1;
    for (long i = 0; i < n; i++) {
        long t = expected + next;
        expected = next;
        next = t;
    }
    long value = run(n, (size_t)64 << 20);
    if (value != expected) {
        fprintf(stderr, "wrong result: F(%ld) = %ld, expected %ld\n", n, value, expected);
        return 1;
    }
    /* 4 KiB hold 32 tasks: not enough for F(25) on several workers (on one, the scheduler runs
     * ready tasks before it allocates new ones, 002 §3.3.2, and F(25) may fit). */
    long small = run(25, 4096);
    printf("F(25) in a 4 KiB pool: %s\n",
           small < 0 ? "pool exhausted; every spawn after that failed cleanly"
                     : "fit (one worker runs ready tasks before it allocates)");
    CHECK(td_finalize());
    printf("fib_task.c: done\n");
    return 0;
}
