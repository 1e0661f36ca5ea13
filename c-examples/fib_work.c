/*
 * fib_work.c: naive Fibonacci as a static work graph, following 000 Fig. 3.6 (the Kokkos
 * WorkGraphPolicy example).
 *
 * form_graph expands fib(n) breadth-first: item 0 computes fib(n), and an item whose input k is
 * >= 2 has two children computing fib(k-1) and fib(k-2). Row i of the graph holds the parent of
 * item i: the parent executes after it (the figure's m_graph). The transpose lists each item's
 * children (m_depend), which the work function reads to sum its inputs. The plan is made once
 * and run on one thread and on every thread of the pool, and checked against a loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskdag.h"

static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

/* The work function's view of m_depend and the values, as in the figure's functor. */
struct fib_state {
  int64_t *depend_row_map;
  int64_t *depend_entries;
  long *values;
};

/* m_values(i) += m_values(child 0) + m_values(child 1), for items with children. */
static void fib_item(int64_t i, void *user) {
  const struct fib_state *s = user;
  const int64_t k = s->depend_row_map[i];
  if (k < s->depend_row_map[i + 1]) {
    s->values[i] += s->values[s->depend_entries[k]] + s->values[s->depend_entries[k + 1]];
  }
}

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 20;
  check(td_initialize(NULL), "td_initialize");

  /* form_graph: breadth-first expansion, each entry's input and parent. */
  size_t count = 1, cap = 1024;
  long *input = malloc(cap * sizeof *input);
  int64_t *parent = malloc(cap * sizeof *parent);
  input[0] = n;
  parent[0] = -1;
  for (size_t i = 0; i < count; ++i) {
    if (input[i] < 2) continue;
    if (count + 2 > cap) {
      cap *= 2;
      input = realloc(input, cap * sizeof *input);
      parent = realloc(parent, cap * sizeof *parent);
    }
    input[count] = input[i] - 1, parent[count++] = (int64_t)i;
    input[count] = input[i] - 2, parent[count++] = (int64_t)i;
  }
  /* m_graph: row_map(i + 1) = i, entries(i - 1) = parent of i. */
  int64_t *row_map = malloc((count + 1) * sizeof *row_map);
  row_map[0] = 0;
  for (size_t i = 0; i < count; ++i) row_map[i + 1] = (int64_t)i;
  td_crs *graph, *depend;
  check(td_crs_create((int64_t)count, row_map, (int64_t)count - 1, parent + 1, &graph),
        "td_crs_create");
  check(td_crs_transpose(graph, &depend), "td_crs_transpose");

  struct fib_state state;
  state.depend_row_map = malloc((count + 1) * sizeof(int64_t));
  state.depend_entries = malloc((count - 1) * sizeof(int64_t));
  check(td_crs_export(depend, state.depend_row_map, count + 1, state.depend_entries, count - 1),
        "td_crs_export");
  state.values = malloc(count * sizeof(long));

  td_work_graph *plan;
  check(td_work_graph_create(graph, NULL, &plan), "td_work_graph_create");
  td_crs_release(graph); /* the plan keeps its own reference */
  td_crs_release(depend);

  long expected = 0, next = 1;
  for (long k = 0; k < n; ++k) {
    const long sum = expected + next;
    expected = next, next = sum;
  }

  td_space *serial, *threads;
  check(td_space_serial(&serial), "td_space_serial");
  check(td_space_threads(&threads), "td_space_threads");
  size_t workers = 0;
  check(td_space_concurrency(threads, &workers), "td_space_concurrency");
  const struct {
    td_space *space;
    const char *name;
  } runs[] = {{serial, "serial"}, {threads, "threads"}};
  int failures = 0;
  for (size_t r = 0; r < 2; ++r) {
    for (size_t i = 0; i < count; ++i) state.values[i] = input[i] < 2 ? input[i] : 0;
    check(td_work_graph_run(plan, runs[r].space, fib_item, &state), "td_work_graph_run");
    printf("Fibonacci (%ld) = %ld  [%zu work items, %s space, %zu thread(s)]\n", n,
           state.values[0], count, runs[r].name, r == 0 ? (size_t)1 : workers);
    failures += state.values[0] != expected;
  }
  if (failures) {
    fprintf(stderr, "fib_work.c: expected fib(%ld) = %ld\n", n, expected);
    return EXIT_FAILURE;
  }

  td_space_release(serial);
  td_space_release(threads);
  td_work_graph_release(plan);
  free(state.depend_row_map);
  free(state.depend_entries);
  free(state.values);
  free(row_map);
  free(parent);
  free(input);
  check(td_finalize(), "td_finalize");
  printf("fib_work.c: done\n");
  return 0;
}
