/*
 * team_scratch.c: the team policy with team-shared scratch memory: a histogram per block.
 *
 * The data (n values in [0, BINS)) is cut into LEAGUE blocks, one league entry each. The team
 * that runs an entry builds the block's histogram in its scratch memory: each member counts its
 * share of the block (td_team_parallel_for) into its own row of the scratch memory, a barrier
 * makes the rows visible, and the members then add the rows up, each for its own bins, into the
 * block's histogram; a team reduction gives every member the block's total count.
 * The result is checked against a serial count. Exits nonzero if anything is not as expected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskdag.h"

enum { BINS = 16, LEAGUE = 64, BLOCK = 10000 };

struct job {
  const uint8_t *values;           /* LEAGUE * BLOCK values in [0, BINS) */
  int64_t histograms[LEAGUE][BINS];
  int64_t totals[LEAGUE];          /* each block's total, from the team reduction */
};

/* What a member counts with td_team_parallel_for: its row of the scratch memory. */
struct count_args {
  const uint8_t *block;
  int64_t *row;
};

static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

static void count_values(int64_t begin, int64_t end, void *user) {
  const struct count_args *a = user;
  for (int64_t i = begin; i < end; ++i) ++a->row[a->block[i]];
}

static void block_histogram(const td_team *team, void *user) {
  struct job *job = user;
  const int64_t rank = td_team_rank(team), size = td_team_size(team);
  const int64_t entry = td_team_league_rank(team);
  int64_t *rows = td_team_scratch(team, NULL); /* size rows of BINS counters */

  /* Scratch memory persists across the entries a team runs: clear this member's row. */
  int64_t *row = rows + rank * BINS;
  memset(row, 0, BINS * sizeof *row);
  struct count_args args = {job->values + entry * BLOCK, row};
  check(td_team_parallel_for(team, 0, BLOCK, count_values, &args), "td_team_parallel_for");
  check(td_team_barrier(team), "td_team_barrier"); /* every row is complete */

  /* Each member adds up the rows for its own bins (rank, rank + size, ...) and writes them to
     the block's histogram; the members write distinct bins. */
  int64_t mine = 0;
  for (int64_t bin = rank; bin < BINS; bin += size) {
    int64_t sum = 0;
    for (int64_t r = 0; r < size; ++r) sum += rows[r * BINS + bin];
    job->histograms[entry][bin] = sum;
    mine += sum;
  }
  /* Every member learns the block's total. */
  check(td_team_reduce(team, TD_REDUCE_SUM, TD_SCALAR_INT64, &mine), "td_team_reduce");
  if (rank == 0) job->totals[entry] = mine;
}

int main(void) {
  check(td_initialize(NULL), "td_initialize");
  td_space *threads = NULL;
  check(td_space_threads(&threads), "td_space_threads");
  size_t concurrency = 0;
  check(td_space_concurrency(threads, &concurrency), "td_space_concurrency");

  static struct job job;
  uint8_t *values = malloc((size_t)LEAGUE * BLOCK);
  if (values == NULL) return EXIT_FAILURE;
  uint32_t state = 12345;
  for (int64_t i = 0; i < (int64_t)LEAGUE * BLOCK; ++i) {
    state = state * 1664525u + 1013904223u;
    values[i] = (uint8_t)((state >> 24) % BINS);
  }
  job.values = values;

  /* Teams of all threads (at least one team); scratch: one row of BINS counters per member. */
  td_team_policy policy = TD_TEAM_POLICY_INIT;
  policy.league_size = LEAGUE;
  policy.team_size = (int64_t)concurrency;
  policy.scratch_bytes = concurrency * BINS * sizeof(int64_t);
  check(td_parallel_team(threads, &policy, block_histogram, &job), "td_parallel_team");

  int wrong = 0;
  for (int entry = 0; entry < LEAGUE; ++entry) {
    int64_t serial[BINS] = {0};
    for (int i = 0; i < BLOCK; ++i) ++serial[values[entry * BLOCK + i]];
    for (int bin = 0; bin < BINS; ++bin) wrong += serial[bin] != job.histograms[entry][bin];
    wrong += job.totals[entry] != BLOCK;
  }
  printf("%d block histograms of %d values in %d bins, teams of %zu thread(s): %s\n", LEAGUE,
         BLOCK, BINS, concurrency, wrong == 0 ? "all verified" : "WRONG");
  printf("block 0: ");
  for (int bin = 0; bin < BINS; ++bin) printf("%lld ", (long long)job.histograms[0][bin]);
  printf("\n");

  free(values);
  check(td_space_release(threads), "td_space_release");
  check(td_finalize(), "td_finalize");
  if (wrong != 0) return EXIT_FAILURE;
  printf("team_scratch.c: done\n");
  return EXIT_SUCCESS;
}
