/*
 * pool.c: a memory pool shared by several threads.
 *
 * Each thread allocates blocks of mixed sizes, fills them with a pattern of its own, checks that
 * no other thread wrote into them, and frees them. Afterwards the example exhausts the pool on
 * purpose to show how a full pool reports itself: a NULL block, TD_ERROR_POOL_EXHAUSTED in
 * td_last_error(), and a count in the statistics. Exits nonzero if anything is not as expected.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskdag.h"

enum {
  THREADS = 4,
  ROUNDS = 200,
  BLOCKS_PER_ROUND = 64,
  MAX_BLOCK = 4096,
  /* Search rounds per allocation. One round can come back empty-handed while other threads race
     for the same empty superblock even though the pool has room; a few more rounds make that
     vanishingly rare (000 §3.1). */
  ATTEMPT_LIMIT = 8,
};

static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

struct worker {
  td_pool *pool;
  unsigned id;
  int failures;  /* NULL blocks or corrupted patterns seen by this thread */
};

/* xorshift32: a small, thread-local random number generator. */
static uint32_t next_random(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

static void *work(void *arg) {
  struct worker *w = arg;
  uint32_t random = 0x9e3779b9u * (w->id + 1);
  void *blocks[BLOCKS_PER_ROUND];
  size_t sizes[BLOCKS_PER_ROUND];

  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < BLOCKS_PER_ROUND; ++i) {
      sizes[i] = 1 + next_random(&random) % MAX_BLOCK;  /* 1 .. 4096 bytes */
      blocks[i] = td_pool_allocate(w->pool, sizes[i], ATTEMPT_LIMIT);
      if (blocks[i] == NULL) {
        fprintf(stderr, "thread %u: allocate(%zu): %s\n", w->id, sizes[i], td_last_error_message());
        ++w->failures;
        continue;
      }
      memset(blocks[i], (int)(w->id + 1), sizes[i]);
    }
    for (int i = 0; i < BLOCKS_PER_ROUND; ++i) {
      if (blocks[i] == NULL) continue;
      const unsigned char *bytes = blocks[i];
      for (size_t b = 0; b < sizes[i]; ++b) {
        if (bytes[b] != (unsigned char)(w->id + 1)) {
          fprintf(stderr, "thread %u: block %p was overwritten at byte %zu\n", w->id, blocks[i], b);
          ++w->failures;
          break;
        }
      }
      check(td_pool_deallocate(w->pool, blocks[i], sizes[i]), "td_pool_deallocate");
    }
  }
  return NULL;
}

static td_pool_stats statistics(const td_pool *pool) {
  td_pool_stats stats = TD_POOL_STATS_INIT;
  check(td_pool_usage_statistics(pool, &stats), "td_pool_usage_statistics");
  return stats;
}

static void print_statistics(const char *when, const td_pool_stats *s) {
  printf("%s: capacity %llu bytes in %llu superblocks of %llu; %llu superblocks in use; "
         "%llu blocks (%llu bytes) allocated; %llu free blocks (%llu bytes) in thread caches; "
         "high water %llu bytes; failed allocations %llu\n",
         when, (unsigned long long)s->capacity_bytes, (unsigned long long)s->capacity_superblocks,
         (unsigned long long)s->superblock_bytes, (unsigned long long)s->consumed_superblocks,
         (unsigned long long)s->consumed_blocks, (unsigned long long)s->consumed_bytes,
         (unsigned long long)s->cached_blocks, (unsigned long long)s->cached_bytes,
         (unsigned long long)s->high_water_bytes, (unsigned long long)s->failed_allocations);
}

int main(void) {
  check(td_initialize(NULL), "td_initialize");

  /* 4 MiB in superblocks of 64 KiB, blocks from 64 to 4096 bytes. */
  td_pool_args args = TD_POOL_ARGS_INIT;
  args.min_total_alloc_size = 4u << 20;
  args.min_block_alloc_size = 64;
  args.max_block_alloc_size = MAX_BLOCK;
  args.min_superblock_size = 64u << 10;
  td_pool *pool = NULL;
  check(td_pool_create(&args, &pool), "td_pool_create");

  /* Phase 1: threads allocate at most 1 MiB at a time, well within capacity: no failures. */
  pthread_t threads[THREADS];
  struct worker workers[THREADS];
  for (unsigned t = 0; t < THREADS; ++t) {
    workers[t] = (struct worker){pool, t, 0};
    if (pthread_create(&threads[t], NULL, work, &workers[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return EXIT_FAILURE;
    }
  }
  int failures = 0;
  for (unsigned t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    failures += workers[t].failures;
  }
  td_pool_stats after_threads = statistics(pool);
  print_statistics("after threads", &after_threads);

  /* Phase 2: fill the pool with the largest blocks until it is exhausted. */
  size_t capacity = 0;
  check(td_pool_capacity(pool, &capacity), "td_pool_capacity");
  size_t max_blocks = capacity / MAX_BLOCK + 1;
  void **filled = calloc(max_blocks, sizeof *filled);
  size_t count = 0;
  while (count < max_blocks && (filled[count] = td_pool_allocate(pool, MAX_BLOCK, ATTEMPT_LIMIT)) != NULL) {
    ++count;
  }
  td_status exhausted = td_last_error();
  printf("exhausted after %zu blocks of %d bytes: %s: %s\n", count, MAX_BLOCK,
         td_status_string(exhausted), td_last_error_message());
  td_pool_stats full = statistics(pool);
  for (size_t i = 0; i < count; ++i) {
    check(td_pool_deallocate(pool, filled[i], MAX_BLOCK), "td_pool_deallocate");
  }
  free(filled);
  /* The blocks just freed wait in this thread's cache (td_pool_args.thread_cache) for its next
   * allocations; a thread that is done with the pool for a while hands them back. */
  td_pool_stats freed = statistics(pool);
  print_statistics("after freeing", &freed);
  check(td_pool_flush_thread_cache(pool), "td_pool_flush_thread_cache");
  td_pool_stats after = statistics(pool);
  print_statistics("at the end", &after);

  int ok = failures == 0
           && after_threads.consumed_bytes == 0 && after_threads.failed_allocations == 0
           && exhausted == TD_ERROR_POOL_EXHAUSTED
           && count == capacity / MAX_BLOCK && full.failed_allocations == 1
           && after.consumed_bytes == 0 && after.consumed_blocks == 0
           && freed.cached_blocks > 0 && after.cached_blocks == 0 && after.cached_bytes == 0;

  check(td_pool_release(pool), "td_pool_release");
  check(td_finalize(), "td_finalize");
  if (!ok) {
    fprintf(stderr, "pool.c: unexpected results (%d thread failures, %zu of %zu blocks filled)\n",
            failures, count, capacity / MAX_BLOCK);
    return EXIT_FAILURE;
  }
  printf("pool.c: done\n");
  return EXIT_SUCCESS;
}
