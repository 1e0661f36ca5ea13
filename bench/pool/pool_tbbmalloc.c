/* Pool benchmark, oneTBB scalable allocator peer (scalable_malloc/scalable_free, all thread counts). */
#include <stdio.h>
#include <tbb/scalable_allocator.h>

#define IMPL_NAME "tbbmalloc"
#define IMPL_MAX_THREADS 0
#include "pool_driver.h"

#ifndef BENCH_TBB_VERSION /* set by CMake from find_package(TBB); tbb/version.h is C++ only */
#define BENCH_TBB_VERSION "unknown"
#endif

static void *impl_alloc(size_t size) { return scalable_malloc(size); }
static int impl_free(void *ptr, size_t size) {
    (void)size;
    scalable_free(ptr);
    return 0;
}
static void impl_describe_failure(char *err, size_t n) { snprintf(err, n, "scalable_malloc returned NULL"); }


static int impl_setup(const pool_params *p, char *err, size_t n) {
    (void)p, (void)err, (void)n;
    return 0;
}
static int impl_check(char *err, size_t n) {
    (void)err, (void)n;
    return 0;
}
static void impl_info(FILE *f) {
    fprintf(f, ",\"version\":\"oneTBB %s\"", BENCH_TBB_VERSION);
}
static void impl_teardown(void) {}
