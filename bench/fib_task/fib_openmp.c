/* Fibonacci benchmark, OpenMP peer (GCC's libgomp): every call F(k) with k > 1 creates F(k-1)
 * and F(k-2) as explicit tasks and waits for them with taskwait (one task per node), inside a
 * parallel region of T threads whose single thread starts the recursion. */
#include <omp.h>

#include <stdio.h>

#define IMPL_NAME "openmp"
#define IMPL_MAX_THREADS 0
#include "fib_driver.h"

static int g_threads;

static long fib(long n) {
    long a = 0, b = 0;
    if (n < 2) return n;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

static int impl_setup(int threads, char *err, size_t n) {
    (void)err;
    (void)n;
    g_threads = threads;
    omp_set_dynamic(0);
    return 0;
}

static long impl_fib(int n, char *err, size_t errn) {
    long result = -1;
    (void)err;
    (void)errn;
#pragma omp parallel num_threads(g_threads)
#pragma omp single
    result = fib(n);
    return result;
}

static void impl_info(FILE *f) { fprintf(f, ",\"version\":\"GCC libgomp, OpenMP %d\"", _OPENMP); }

static void impl_teardown(void) {}
