/*
 * spawn_then_compute.c: a task that spawns work and then computes itself, with long tasks.
 *
 * The root task spawns `children` tasks of `child_us` microseconds each and then works
 * `own_us` microseconds before it returns (a solver that sends off independent blocks and then
 * treats its own). Its worker does not come back to the scheduler until then, so the idle
 * workers take the queued children themselves (docs/tasks.md, "A worker that does not come
 * back"); the whole takes about max(own_us, all the work / workers) instead of
 * own_us followed by the children. The program prints the time of each run against both, and
 * checks that every child ran once.
 *
 * Usage: spawn_then_compute [children [child_us [own_us [runs]]]]   (default 64 1000 10000 3)
 */
#include <taskdag.h>

#include <stdatomic.h>
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

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Stands for real work: keeps the thread busy, as a computation would. */
static void work_for(double us)
{
    const double end = now_us() + us;
    while (now_us() < end) {
    }
}

static atomic_long g_ran;          /* children that ran */
static atomic_int g_spawn_failed;  /* a spawn failed (the run then reports it) */

typedef struct root_state {
    long children;
    double child_us;
    double own_us;
} root_state;

static void child_task(td_task_ctx *ctx, void *state)
{
    (void)ctx;
    work_for(*(const double *)state);
    atomic_fetch_add_explicit(&g_ran, 1, memory_order_relaxed);
}

static void root_task(td_task_ctx *ctx, void *state)
{
    root_state *r = state;
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    closure.function = child_task;
    closure.state = &r->child_us;
    closure.state_size = sizeof r->child_us;
    for (long i = 0; i < r->children; i++) {
        td_future *f = td_task_spawn(ctx, &policy, &closure);
        if (!f) {
            fprintf(stderr, "td_task_spawn failed: %s\n", td_last_error_message());
            atomic_store(&g_spawn_failed, 1);
            return;
        }
        td_future_release(f); /* nobody waits for a child: the wait does */
    }
    work_for(r->own_us);
}

int main(int argc, char **argv)
{
    root_state root = {64, 1000.0, 10000.0};
    int runs = 3;
    if (argc > 1) root.children = atol(argv[1]);
    if (argc > 2) root.child_us = atof(argv[2]);
    if (argc > 3) root.own_us = atof(argv[3]);
    if (argc > 4) runs = atoi(argv[4]);
    if (root.children < 0 || root.child_us < 0 || root.own_us < 0 || runs < 1) {
        fprintf(stderr, "usage: %s [children [child_us [own_us [runs]]]]\n", argv[0]);
        return 2;
    }

    td_init_args init = TD_INIT_ARGS_INIT;
    CHECK(td_initialize(&init));
    td_pool_args pool_args = TD_POOL_ARGS_INIT;
    td_pool *pool = NULL;
    pool_args.min_total_alloc_size = (size_t)16 << 20;
    CHECK(td_pool_create(&pool_args, &pool));
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    td_scheduler *sched = NULL;
    args.pool = pool;
    CHECK(td_scheduler_create(&args, &sched));
    size_t workers = 0;
    CHECK(td_scheduler_concurrency(sched, &workers));

    /* No schedule beats the work spread evenly, nor the root's own part; children that waited
     * for the root's worker would add its own part to the spread children. */
    const double total = root.children * root.child_us + root.own_us;
    const double best = total / (double)workers > root.own_us ? total / (double)workers : root.own_us;
    const double waiting = root.own_us + root.children * root.child_us / (double)workers;
    printf("%zu workers: a task spawns %ld children of %.0f us, then works %.0f us itself; "
           "at best %.1f ms, %.1f ms if the children waited for its worker\n",
           workers, root.children, root.child_us, root.own_us, best / 1e3, waiting / 1e3);
    for (int run = 0; run < runs; run++) {
        td_task_policy policy = TD_TASK_POLICY_INIT;
        td_task_closure closure = TD_TASK_CLOSURE_INIT;
        policy.scheduler = sched;
        closure.function = root_task;
        closure.state = &root;
        closure.state_size = sizeof root;
        atomic_store(&g_ran, 0);
        const double t0 = now_us();
        td_future *f = td_host_spawn(&policy, &closure);
        if (!f) {
            fprintf(stderr, "td_host_spawn failed: %s\n", td_last_error_message());
            return 1;
        }
        CHECK(td_wait(sched));
        const double took = now_us() - t0;
        td_future_release(f);
        const long ran = atomic_load(&g_ran);
        printf("run %d: %.1f ms, %ld of %ld children ran\n", run + 1, took / 1e3, ran,
               root.children);
        if (atomic_load(&g_spawn_failed) || ran != root.children) {
            fprintf(stderr, "spawn_then_compute: %ld children did not run\n", root.children - ran);
            return 1;
        }
    }
    td_scheduler_stats stats = TD_SCHEDULER_STATS_INIT;
    CHECK(td_scheduler_statistics(sched, &stats));
    printf("tasks taken by other workers: %llu\n", (unsigned long long)stats.steals);
    /* Nonzero when another busy process shares the cores: workers that were late to leave a run
     * sat out the next ones (docs/tasks.md, "Threads"). */
    printf("workers that sat out a run: %llu\n", (unsigned long long)stats.workers_sat_out);

    td_scheduler_release(sched);
    td_pool_release(pool);
    CHECK(td_finalize());
    printf("spawn_then_compute.c: done\n");
    return 0;
}
