/*
 * instances.c: two execution-space instances, each running its own task scheduler (003, the
 * Uintah/DARMA use case).
 *
 * The root Threads instance is split into two disjoint sub-instances with
 * td_space_run_instances. Each sub-instance's control thread creates a scheduler over its own
 * instance and pool, computes a Fibonacci number with tasks (000 Fig. 3.4) and records the
 * hardware threads its tasks ran on. The program checks both results and that no hardware thread
 * served both instances.
 *
 * Usage: instances [n]   (default 24)
 */
#include <taskdag.h>

#include <stdatomic.h>
#include <stdint.h>
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

enum { MAX_CPUS = 1024 };

/* What one instance reports back. `cpus` is written only by that instance's tasks. */
typedef struct instance_report {
    long n, value;
    size_t threads;
    atomic_uchar cpus[MAX_CPUS];
} instance_report;

typedef struct fib_state {
    long n;
    instance_report *report;
    td_future *child[2];
} fib_state;

static void fib_destroy(void *state)
{
    fib_state *s = state;
    td_future_release(s->child[0]);
    td_future_release(s->child[1]);
}

static void fib_task(td_task_ctx *ctx, void *state);

static td_future *spawn_fib(td_task_ctx *ctx, long n, instance_report *report)
{
    fib_state child = {n, report, {NULL, NULL}};
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
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
    int64_t cpu = td_hardware_thread_id();
    if (cpu >= 0 && cpu < MAX_CPUS)
        atomic_store_explicit(&s->report->cpus[cpu], 1, memory_order_relaxed);
    if (s->n < 2) {
        *result = s->n;
    } else if (s->child[0] != NULL) {
        long a, b;
        CHECK(td_future_get(s->child[0], &a, sizeof a));
        CHECK(td_future_get(s->child[1], &b, sizeof b));
        *result = a + b;
    } else {
        s->child[0] = spawn_fib(ctx, s->n - 2, s->report);
        s->child[1] = spawn_fib(ctx, s->n - 1, s->report);
        if (s->child[0] == NULL || s->child[1] == NULL) {
            fprintf(stderr, "spawn failed: %s\n", td_last_error_message());
            exit(1);
        }
        td_future *all = td_when_all(td_task_scheduler(ctx), s->child, 2);
        if (all == NULL) {
            fprintf(stderr, "td_when_all failed: %s\n", td_last_error_message());
            exit(1);
        }
        CHECK(td_task_respawn(ctx, all, TD_PRIORITY_REGULAR));
        CHECK(td_future_release(all));
    }
}

/* Runs on the control thread of sub-instance `index`: a scheduler of its own over it. */
static void control(td_space *instance, size_t index, void *user)
{
    instance_report *report = (instance_report *)user + index;
    CHECK(td_space_concurrency(instance, &report->threads));

    td_pool_args pool_args = TD_POOL_ARGS_INIT;
    td_pool *pool;
    pool_args.min_total_alloc_size = (size_t)16 << 20;
    CHECK(td_pool_create(&pool_args, &pool));
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    td_scheduler *sched;
    args.space = instance;
    args.pool = pool;
    CHECK(td_scheduler_create(&args, &sched));

    fib_state root = {report->n, report, {NULL, NULL}};
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    policy.scheduler = sched;
    closure.function = fib_task;
    closure.state = &root;
    closure.state_size = sizeof root;
    closure.result_size = sizeof(long);
    closure.destroy = fib_destroy;
    td_future *f = td_host_spawn(&policy, &closure);
    if (f == NULL) {
        fprintf(stderr, "td_host_spawn: %s\n", td_last_error_message());
        exit(1);
    }
    CHECK(td_wait(sched));
    CHECK(td_future_get(f, &report->value, sizeof report->value));
    CHECK(td_future_release(f));
    CHECK(td_scheduler_release(sched));
    CHECK(td_pool_release(pool));
}

static long fib(long n)
{
    long a = 0, b = 1;
    for (long i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 24;
    CHECK(td_initialize(NULL));
    td_space *threads;
    CHECK(td_space_threads(&threads));
    size_t total;
    CHECK(td_space_concurrency(threads, &total));
    if (total < 2) {
        printf("instances.c: this machine has %zu thread; two instances need 2 (skipped)\n", total);
        CHECK(td_space_release(threads));
        CHECK(td_finalize());
        printf("instances.c: done\n");
        return 0;
    }

    /* Two halves of the pool, the first one the larger when the count is odd. */
    td_instance_request requests[2] = {TD_INSTANCE_REQUEST_INIT, TD_INSTANCE_REQUEST_INIT};
    requests[0].num_threads = (total + 1) / 2;
    requests[1].num_threads = total / 2;
    static instance_report reports[2];
    reports[0].n = n;
    reports[1].n = n - 1;
    CHECK(td_space_run_instances(threads, requests, 2, control, reports));

    int ok = 1;
    for (int i = 0; i < 2; i++) {
        size_t used = 0;
        for (int c = 0; c < MAX_CPUS; c++)
            used += atomic_load(&reports[i].cpus[c]);
        printf("instance %d: %zu thread(s), F(%ld) = %ld on %zu hardware thread(s)\n", i,
               reports[i].threads, reports[i].n, reports[i].value, used);
        if (reports[i].value != fib(reports[i].n)) {
            fprintf(stderr, "instance %d: wrong result (expected %ld)\n", i, fib(reports[i].n));
            ok = 0;
        }
    }
    for (int c = 0; c < MAX_CPUS; c++) {
        if (atomic_load(&reports[0].cpus[c]) && atomic_load(&reports[1].cpus[c])) {
            fprintf(stderr, "hardware thread %d served both instances\n", c);
            ok = 0;
        }
    }
    CHECK(td_space_release(threads));
    CHECK(td_finalize());
    if (!ok)
        return 1;
    printf("instances.c: disjoint instances, both results correct\n");
    return 0;
}
