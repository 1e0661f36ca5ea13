/* Pool benchmark, glibc malloc/free peer (all thread counts). */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>

#define IMPL_NAME "malloc"
#define IMPL_MAX_THREADS 0
#include "pool_driver.h"

static void *impl_alloc(size_t size) { return malloc(size); }
static int impl_free(void *ptr, size_t size) {
    (void)size;
    free(ptr);
    return 0;
}
static void impl_describe_failure(char *err, size_t n) { snprintf(err, n, "malloc returned NULL"); }


static int impl_setup(const pool_params *p, char *err, size_t n) {
    (void)p, (void)err, (void)n;
    return 0;
}
/* glibc offers no exact "bytes in use" that excludes its thread caches; the per-block checks
 * of the driver are the validation here. */
static int impl_check(char *err, size_t n) {
    (void)err, (void)n;
    return 0;
}
static void impl_info(FILE *f) {
    fprintf(f, ",\"version\":\"glibc %s\"", gnu_get_libc_version());
}
static void impl_teardown(void) {}
