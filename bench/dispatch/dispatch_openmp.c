/* Dispatch benchmark, GCC OpenMP implementation: `#pragma omp parallel for schedule(static)`,
 * `reduction(+:sum)`, and for the bandwidth kernel the STREAM-like
 * `#pragma omp parallel for simd reduction(+:sum) schedule(static)` loop.
 *
 * Pinning, for a fair comparison with taskdag's pinned pool: unless the caller set them, the
 * program sets OMP_PROC_BIND=close and OMP_PLACES=cores and re-executes itself, because libgomp
 * reads them once when it is loaded. OMP_WAIT_POLICY stays at libgomp's default (spin for a
 * while, then sleep), which is what taskdag's workers do. */
#include <omp.h>

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <unistd.h>

#define IMPL_NAME "openmp"
#include "dispatch_driver.h"

/* Runs before main: sets the binding variables and re-executes, so libgomp sees them. */
__attribute__((constructor)) static void bind_threads(int argc, char **argv) {
    (void)argc;
    if (getenv("OMP_PROC_BIND") == NULL && getenv("OMP_PLACES") == NULL) {
        setenv("OMP_PROC_BIND", "close", 1);
        setenv("OMP_PLACES", "cores", 1);
        execv("/proc/self/exe", argv);
        /* execv failed: continue unbound; impl_info reports it. */
    }
}

static int impl_setup(int threads, char *err, size_t n) {
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
    if (omp_get_max_threads() != threads) {
        snprintf(err, n, "omp_get_max_threads() is %d after omp_set_num_threads(%d)", omp_get_max_threads(),
                 threads);
        return 1;
    }
    return 0;
}

static int impl_for(int64_t n) {
    int64_t i;
#pragma omp parallel for schedule(static)
    for (i = 0; i < n; ++i) dispatch_touch(i);
    return 0;
}

static int impl_reduce(int64_t n, int64_t *sum) {
    int64_t s = 0, i;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (i = 0; i < n; ++i) s += i + 1;
    *sum = s;
    return 0;
}

static int impl_fill(double *a, int64_t n) {
    int64_t i;
#pragma omp parallel for schedule(static)
    for (i = 0; i < n; ++i) a[i] = dispatch_value(i);
    return 0;
}

static int impl_sum(const double *a, int64_t n, double *sum) {
    double s = 0.0;
    int64_t i;
#pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (i = 0; i < n; ++i) s += a[i];
    *sum = s;
    return 0;
}

static void impl_info(FILE *f) {
    const char *bind = getenv("OMP_PROC_BIND"), *places = getenv("OMP_PLACES");
    fprintf(f, ",\"version\":\"OpenMP %d\",\"omp_proc_bind\":", _OPENMP);
    bench_json_string(f, bind ? bind : "(unset)");
    fprintf(f, ",\"omp_places\":");
    bench_json_string(f, places ? places : "(unset)");
}

static void impl_teardown(void) {}
