/* The task DAG in a library loaded with dlopen (TASKDAG_DLOPEN: the path of the shared library),
 * or linked statically. The library keeps the thread's worker in an initial-exec thread-local
 * (src/task/thread_worker.rs): dlopen must find room for it in the static TLS block, and the
 * static link relaxes its accesses to local-exec. Either way, tasks on several workers check
 * their context through it, and a context kept past its task is refused. */
#include <stdio.h>
#include <stdlib.h>

#include <taskdag.h>

#ifdef TASKDAG_DLOPEN
#include <dlfcn.h>
#define API(name) static __typeof__(&name) p_##name;
#define API_LIST                                                                                    \
    API(td_initialize) API(td_finalize) API(td_pool_create) API(td_pool_release)                    \
    API(td_scheduler_create) API(td_scheduler_release) API(td_host_spawn) API(td_task_spawn)        \
    API(td_task_respawn_when_all) API(td_task_result) API(td_future_get) API(td_future_release)     \
    API(td_wait) API(td_last_error) API(td_last_error_message)
API_LIST
#undef API
#define CALL(name) p_##name
#define MODE "dlopen"
static int load(void) {
    void *lib = dlopen(TASKDAG_DLOPEN, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", TASKDAG_DLOPEN, dlerror());
        return 0;
    }
/* POSIX's form for a function from dlsym: ISO C has no cast from void * to a function pointer. */
#define API(name)                                                                                   \
    if (!(*(void **)&p_##name = dlsym(lib, #name))) {                                               \
        fprintf(stderr, "dlsym %s: %s\n", #name, dlerror());                                        \
        return 0;                                                                                   \
    }
    API_LIST
#undef API
    return 1;
}
#else
#define CALL(name) name
#define MODE "static"
static int load(void) { return 1; }
#endif

typedef struct fib_state {
    long n;
    td_future *child[2];
} fib_state;

#define ROOT_N 20

/* The root task's context, kept past its run (only the root writes it: its runs are ordered). */
static td_task_ctx *kept_ctx;

static void fib_destroy(void *state) {
    fib_state *s = (fib_state *)state;
    CALL(td_future_release)(s->child[0]);
    CALL(td_future_release)(s->child[1]);
}

static void fib(td_task_ctx *ctx, void *state) {
    fib_state *s = (fib_state *)state;
    long *result = (long *)CALL(td_task_result)(ctx);
    if (s->n == ROOT_N) kept_ctx = ctx;
    if (s->n < 2) {
        *result = s->n;
    } else if (s->child[0]) {
        long a = 0, b = 0;
        CALL(td_future_get)(s->child[0], &a, sizeof a);
        CALL(td_future_get)(s->child[1], &b, sizeof b);
        *result = a + b;
    } else {
        td_task_policy policy = TD_TASK_POLICY_INIT;
        td_task_closure closure = TD_TASK_CLOSURE_INIT;
        fib_state child = {s->n - 1, {NULL, NULL}};
        int i;
        closure.function = fib;
        closure.state = &child;
        closure.state_size = sizeof child;
        closure.result_size = sizeof(long);
        closure.destroy = fib_destroy;
        for (i = 0; i < 2; ++i, --child.n) {
            s->child[i] = CALL(td_task_spawn)(ctx, &policy, &closure);
        }
        if (s->child[0] && s->child[1]) {
            CALL(td_task_respawn_when_all)(ctx, s->child, 2, TD_PRIORITY_HIGH);
        }
    }
}

int main(void) {
    td_init_args init = TD_INIT_ARGS_INIT; /* every hardware thread a worker */
    td_pool_args pool_args = TD_POOL_ARGS_INIT;
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    td_task_policy policy = TD_TASK_POLICY_INIT;
    td_task_closure closure = TD_TASK_CLOSURE_INIT;
    fib_state root = {ROOT_N, {NULL, NULL}};
    td_pool *pool = NULL;
    td_scheduler *sched = NULL;
    td_future *f;
    long result = -1;
    int ok;
    if (!load()) return EXIT_FAILURE;
    pool_args.min_total_alloc_size = (size_t)8 << 20;
    if (CALL(td_initialize)(&init) != TD_OK || CALL(td_pool_create)(&pool_args, &pool) != TD_OK) {
        fprintf(stderr, "setup: %s\n", CALL(td_last_error_message)());
        return EXIT_FAILURE;
    }
    args.pool = pool;
    if (CALL(td_scheduler_create)(&args, &sched) != TD_OK) {
        fprintf(stderr, "td_scheduler_create: %s\n", CALL(td_last_error_message)());
        return EXIT_FAILURE;
    }
    policy.scheduler = sched;
    closure.function = fib;
    closure.state = &root;
    closure.state_size = sizeof root;
    closure.result_size = sizeof(long);
    closure.destroy = fib_destroy;
    f = CALL(td_host_spawn)(&policy, &closure);
    ok = f && CALL(td_wait)(sched) == TD_OK && CALL(td_future_get)(f, &result, sizeof result) == TD_OK;
    if (!ok || result != 6765) {
        fprintf(stderr, "F(20): %ld (%s)\n", result, CALL(td_last_error_message)());
        return EXIT_FAILURE;
    }
    /* A context kept past its task, used from a thread that runs none: refused unread. */
    if (CALL(td_task_spawn)(kept_ctx, &policy, &closure) != NULL ||
        CALL(td_last_error)() != TD_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "a stale context was not refused\n");
        return EXIT_FAILURE;
    }
    CALL(td_future_release)(f);
    CALL(td_scheduler_release)(sched);
    CALL(td_pool_release)(pool);
    CALL(td_finalize)();
    printf("task loading (" MODE "): all checks passed\n");
    return EXIT_SUCCESS;
}
