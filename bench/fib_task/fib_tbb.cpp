// Fibonacci benchmark, oneTBB peer: every call F(k) with k > 1 runs F(k-1) and F(k-2) as tasks of
// a tbb::task_group and waits for them (the idiomatic TBB recursion, one task per node), inside
// a tbb::task_arena of T threads.
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

#include <cstdio>

#define IMPL_NAME "tbb"
#define IMPL_MAX_THREADS 0
#include "fib_driver.h"

static tbb::task_arena *g_arena;

static long fib(long n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    tbb::task_group g;
    g.run([&] { a = fib(n - 1); });
    g.run([&] { b = fib(n - 2); });
    g.wait();
    return a + b;
}

static int impl_setup(int threads, char *, size_t) {
    g_arena = new tbb::task_arena(threads);
    return 0;
}

static long impl_fib(int n, char *, size_t) {
    long result = 0;
    g_arena->execute([&] { result = fib(n); });
    return result;
}

static void impl_info(FILE *f) {
    std::fprintf(f, ",\"version\":\"oneTBB %d.%d\"", TBB_VERSION_MAJOR, TBB_VERSION_MINOR);
}

static void impl_teardown(void) { delete g_arena; }
