/*
 * dot.c: a dot product with td_parallel_reduce on the Threads space.
 *
 * x[i] = i and y[i] = 2, so x . y = n (n - 1) exactly (every partial sum is an integer well
 * below 2^53, whatever the split). The body gets a range [begin, end) and folds it into this
 * thread's value; taskdag joins the threads' values in thread order, so the result is the same on
 * every run with the same thread count (004 "deterministic result"). Exits nonzero if anything
 * is not as expected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskdag.h"

struct vectors {
  const double *x, *y;
};

static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

/* Fills x and y over [begin, end). */
static void fill(int64_t begin, int64_t end, void *user) {
  double *x = user;
  for (int64_t i = begin; i < end; ++i) x[i] = (double)i;
}

/* Folds x[i] * y[i] over [begin, end) into this thread's partial sum. */
static void dot(int64_t begin, int64_t end, void *value, void *user) {
  const struct vectors *v = user;
  double acc = *(double *)value;
  for (int64_t i = begin; i < end; ++i) acc += v->x[i] * v->y[i];
  *(double *)value = acc;
}

int main(void) {
  const int64_t n = 10 * 1000 * 1000;
  check(td_initialize(NULL), "td_initialize");
  td_space *threads = NULL;
  check(td_space_threads(&threads), "td_space_threads");
  size_t concurrency = 0;
  check(td_space_concurrency(threads, &concurrency), "td_space_concurrency");

  double *x = malloc((size_t)n * sizeof *x);
  double *y = malloc((size_t)n * sizeof *y);
  if (x == NULL || y == NULL) {
    fprintf(stderr, "out of memory\n");
    return EXIT_FAILURE;
  }
  td_range_policy range = TD_RANGE_POLICY_INIT;
  range.begin = 0;
  range.end = n;
  /* Each thread first touches the part of x it later reads. */
  check(td_parallel_for(threads, &range, fill, x), "td_parallel_for");
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0;

  const struct vectors v = {x, y};
  double result = 0.0;
  check(td_parallel_reduce(threads, &range, dot, (void *)&v, TD_REDUCE_SUM, TD_SCALAR_DOUBLE,
                           &result),
        "td_parallel_reduce");
  const double expected = (double)n * (double)(n - 1);
  printf("x . y over %lld elements on %zu thread(s) = %.17g (expected %.17g)\n", (long long)n,
         concurrency, result, expected);

  /* The same reduction again, in chunks of 4096 indices handed out round-robin: still exact. */
  range.chunk_size = 4096;
  double chunked = 0.0;
  check(td_parallel_reduce(threads, &range, dot, (void *)&v, TD_REDUCE_SUM, TD_SCALAR_DOUBLE,
                           &chunked),
        "td_parallel_reduce (chunked)");

  const int ok = result == expected && chunked == expected;
  printf("dot product %s\n", ok ? "verified" : "WRONG");
  free(x);
  free(y);
  check(td_space_release(threads), "td_space_release");
  check(td_finalize(), "td_finalize");
  if (!ok) return EXIT_FAILURE;
  printf("dot.c: done\n");
  return EXIT_SUCCESS;
}
