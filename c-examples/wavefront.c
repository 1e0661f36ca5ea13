/*
 * wavefront.c: a blocked wavefront as a static work graph: the longest common subsequence
 * (LCS) of two strings by dynamic programming.
 *
 * The table L(i, j) = L(i-1, j-1) + 1 if a[i] == b[j], else max(L(i-1, j), L(i, j-1)) is cut
 * into BLOCK x BLOCK tiles; tile (r, c) needs the tiles above it and to its left, so the work
 * item of tile (r, c) executes after the items of (r-1, c) and (r, c-1): a 2-D wavefront whose
 * anti-diagonals run in parallel. The graph is built the natural way, each tile listing the
 * tiles it waits for, and transposed into the execute-after rows a work graph takes. The result
 * is checked against the same table computed by a plain loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskdag.h"

enum { LENGTH = 3000, BLOCK = 100, TILES = LENGTH / BLOCK };

static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

struct lcs {
  const char *a, *b;
  int *table; /* (LENGTH + 1) x (LENGTH + 1), row 0 and column 0 are zero */
};

static int *cell(const struct lcs *s, int i, int j) { return &s->table[i * (LENGTH + 1) + j]; }

/* Fills cells [i0, i0 + BLOCK) x [j0, j0 + BLOCK) (1-based table coordinates). */
static void fill_tile(const struct lcs *s, int i0, int j0) {
  for (int i = i0; i < i0 + BLOCK; ++i)
    for (int j = j0; j < j0 + BLOCK; ++j) {
      const int up = *cell(s, i - 1, j), left = *cell(s, i, j - 1);
      *cell(s, i, j) = s->a[i - 1] == s->b[j - 1] ? *cell(s, i - 1, j - 1) + 1
                                                  : (up > left ? up : left);
    }
}

/* Work item t is tile (t / TILES, t % TILES). */
static void tile_item(int64_t t, void *user) {
  fill_tile(user, 1 + (int)(t / TILES) * BLOCK, 1 + (int)(t % TILES) * BLOCK);
}

int main(void) {
  check(td_initialize(NULL), "td_initialize");

  /* Two random strings over a small alphabet (fixed seed). */
  static char a[LENGTH], b[LENGTH];
  uint64_t seed = 0x2545F4914F6CDD1Dull;
  for (int k = 0; k < LENGTH; ++k) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    a[k] = (char)('A' + seed % 4);
    b[k] = (char)('A' + (seed >> 32) % 4);
  }

  /* Each tile lists the tiles it waits for (up, left): rows of "j waits for i". */
  int64_t waits_row_map[TILES * TILES + 1], waits[2 * TILES * TILES];
  int64_t nz = 0;
  for (int r = 0; r < TILES; ++r)
    for (int c = 0; c < TILES; ++c) {
      waits_row_map[r * TILES + c] = nz;
      if (r > 0) waits[nz++] = (r - 1) * TILES + c;
      if (c > 0) waits[nz++] = r * TILES + c - 1;
    }
  waits_row_map[TILES * TILES] = nz;
  td_crs *waits_for, *graph;
  check(td_crs_create(TILES * TILES, waits_row_map, nz, waits, &waits_for), "td_crs_create");
  check(td_crs_transpose(waits_for, &graph), "td_crs_transpose"); /* row i: tiles after i */
  td_work_graph *plan;
  check(td_work_graph_create(graph, NULL, &plan), "td_work_graph_create");

  struct lcs parallel = {a, b, calloc((size_t)(LENGTH + 1) * (LENGTH + 1), sizeof(int))};
  struct lcs serial = {a, b, calloc((size_t)(LENGTH + 1) * (LENGTH + 1), sizeof(int))};
  td_space *space;
  check(td_space_threads(&space), "td_space_threads");
  size_t workers = 0;
  check(td_space_concurrency(space, &workers), "td_space_concurrency");
  check(td_work_graph_run(plan, space, tile_item, &parallel), "td_work_graph_run");

  for (int i = 1; i <= LENGTH; i += BLOCK)
    for (int j = 1; j <= LENGTH; j += BLOCK) fill_tile(&serial, i, j);
  const size_t cells = (size_t)(LENGTH + 1) * (LENGTH + 1);
  const int same = memcmp(parallel.table, serial.table, cells * sizeof(int)) == 0;
  printf("LCS of two %d-character strings: %d (%dx%d tiles of %dx%d cells on %zu thread(s))\n",
         LENGTH, *cell(&parallel, LENGTH, LENGTH), TILES, TILES, BLOCK, BLOCK, workers);
  printf("table equal to the serial computation: %s\n", same ? "yes" : "NO");

  td_space_release(space);
  td_work_graph_release(plan);
  td_crs_release(graph);
  td_crs_release(waits_for);
  free(parallel.table);
  free(serial.table);
  check(td_finalize(), "td_finalize");
  if (!same) return EXIT_FAILURE;
  printf("wavefront.c: done\n");
  return 0;
}
