// Thread caches of host pools through the C API: td_pool_args.thread_cache, the cached_* fields
// of td_pool_stats, td_pool_flush_thread_cache, double frees of cached blocks, and the C++ and
// old-struct_size views of the same.
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"
#include "taskdag.hpp"

using taskdag_test::pool_args;
using taskdag_test::pool_ref;
using taskdag_test::statistics;

TEST_CASE("thread caches are on by default and show in the statistics") {
  const td_pool_args defaults = TD_POOL_ARGS_INIT;
  CHECK(defaults.thread_cache == 1);
  pool_ref pool(1 << 20);
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) {
    blocks.push_back(td_pool_allocate(pool, 200, 1));
    REQUIRE(blocks.back() != nullptr);
  }
  for (void* p : blocks) REQUIRE(td_pool_deallocate(pool, p, 200) == TD_OK);
  td_pool_stats s = statistics(pool);
  CHECK(s.cached_blocks == 10);
  CHECK(s.cached_bytes == 10 * 256);
  CHECK(s.consumed_blocks == 0);
  CHECK(s.consumed_bytes == 0);
  CHECK(s.reserved_bytes >= s.cached_bytes);
  CHECK(s.consumed_bytes + s.reserved_bytes == s.consumed_superblocks * s.superblock_bytes);
  // The next allocations of that size take the cached blocks back, last freed first.
  void* again = td_pool_allocate(pool, 256, 1);
  CHECK(again == blocks.back());
  CHECK(statistics(pool).cached_blocks == 9);
  REQUIRE(td_pool_deallocate(pool, again, 256) == TD_OK);
  // Flushing returns them to the pool.
  REQUIRE(td_pool_flush_thread_cache(pool) == TD_OK);
  s = statistics(pool);
  CHECK(s.cached_blocks == 0);
  CHECK(s.cached_bytes == 0);
  CHECK(s.consumed_blocks == 0);
}

TEST_CASE("a double free of a cached block is rejected and leaves the pool unchanged") {
  pool_ref pool(1 << 20);
  void* p = td_pool_allocate(pool, 64, 1);
  REQUIRE(p != nullptr);
  REQUIRE(td_pool_deallocate(pool, p, 64) == TD_OK);
  const td_pool_stats before = statistics(pool);
  CHECK(before.cached_blocks == 1);
  CHECK_FAILS(td_pool_deallocate(pool, p, 64), TD_ERROR_INVALID_ARGUMENT, "td_pool_deallocate",
              "not allocated", "double free");
  const td_pool_stats after = statistics(pool);
  CHECK(after.cached_blocks == before.cached_blocks);
  CHECK(after.consumed_blocks == before.consumed_blocks);
  CHECK(after.reserved_blocks == before.reserved_blocks);
  // Handed out once: the second allocation gets another block.
  void* first = td_pool_allocate(pool, 64, 1);
  void* second = td_pool_allocate(pool, 64, 1);
  CHECK(first == p);
  CHECK(second != p);
  REQUIRE(td_pool_deallocate(pool, first, 64) == TD_OK);
  REQUIRE(td_pool_deallocate(pool, second, 64) == TD_OK);
}

TEST_CASE("the fast paths still reject bad pointers and sizes of cached-size blocks") {
  pool_ref pool(1 << 20);
  // Warm the thread's cache so that the fast path is taken for what is valid.
  void* warm = td_pool_allocate(pool, 128, 1);
  REQUIRE(td_pool_deallocate(pool, warm, 128) == TD_OK);
  void* p = td_pool_allocate(pool, 128, 1);
  REQUIRE(p == warm);
  auto* bytes = static_cast<unsigned char*>(p);
  CHECK_FAILS(td_pool_deallocate(pool, bytes + 64, 64), TD_ERROR_INVALID_ARGUMENT, "into a block");
  CHECK_FAILS(td_pool_deallocate(pool, p, 129), TD_ERROR_INVALID_ARGUMENT, "128 bytes");
  CHECK_FAILS(td_pool_deallocate(pool, p, 0), TD_ERROR_INVALID_ARGUMENT, "size 0");
  CHECK_FAILS(td_pool_allocate(pool, 128, 0) == nullptr ? td_last_error() : TD_OK,
              TD_ERROR_INVALID_ARGUMENT, "attempt_limit");
  CHECK(statistics(pool).consumed_blocks == 1);
  REQUIRE(td_pool_deallocate(pool, p, 128) == TD_OK);
  CHECK(statistics(pool).cached_blocks == 1);
}

TEST_CASE("blocks cached by a thread that exited are allocated again when the pool runs out") {
  pool_ref pool(64 << 10);
  std::vector<void*> blocks;
  while (void* p = td_pool_allocate(pool, 1024, 1)) blocks.push_back(p);
  CHECK(td_last_error() == TD_ERROR_POOL_EXHAUSTED);
  const std::size_t all = blocks.size();
  REQUIRE(all == 64);
  std::thread([&] {
    for (void* p : blocks) REQUIRE(td_pool_deallocate(pool, p, 1024) == TD_OK);
  }).join();
  CHECK(statistics(pool).cached_blocks > 0);
  std::size_t again = 0;
  std::vector<void*> taken;
  while (void* p = td_pool_allocate(pool, 1024, 1)) taken.push_back(p);
  again = taken.size();
  // This process runs one test at a time, so no other thread took the exited thread's lane.
  CHECK(again == all);
  for (void* p : taken) REQUIRE(td_pool_deallocate(pool, p, 1024) == TD_OK);
}

TEST_CASE("thread_cache = 0 returns every freed block at once") {
  td_pool_args args = pool_args(1 << 20);
  args.thread_cache = 0;
  pool_ref pool(args);
  void* p = td_pool_allocate(pool, 64, 1);
  REQUIRE(p != nullptr);
  REQUIRE(td_pool_deallocate(pool, p, 64) == TD_OK);
  const td_pool_stats s = statistics(pool);
  CHECK(s.cached_blocks == 0);
  CHECK(s.consumed_blocks == 0);
  CHECK_FAILS(td_pool_deallocate(pool, p, 64), TD_ERROR_INVALID_ARGUMENT, "not allocated");
  CHECK(td_pool_flush_thread_cache(pool) == TD_OK);
}

TEST_CASE("thread_cache other than 0 or 1 is rejected, naming the field") {
  for (int value : {-1, 2, 100}) {
    CAPTURE(value);
    td_pool_args args = pool_args(1 << 16);
    args.thread_cache = value;
    td_pool* pool = nullptr;
    CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_INVALID_ARGUMENT, "thread_cache",
                std::to_string(value));
    CHECK(pool == nullptr);
  }
}

TEST_CASE("callers compiled before thread_cache and cached_blocks existed keep working") {
  // An old td_pool_args: thread_cache is not there, and the default (on) applies.
  td_pool_args args = pool_args(1 << 20);
  args.struct_size = offsetof(td_pool_args, thread_cache);
  args.thread_cache = 12345;  // beyond the old struct: never read
  pool_ref pool(args);
  void* p = td_pool_allocate(pool, 64, 1);
  REQUIRE(td_pool_deallocate(pool, p, 64) == TD_OK);
  // An old td_pool_stats: the new fields are not written.
  td_pool_stats s = TD_POOL_STATS_INIT;
  s.struct_size = offsetof(td_pool_stats, cached_blocks);
  s.cached_blocks = 777;
  s.cached_bytes = 888;
  REQUIRE(td_pool_usage_statistics(pool, &s) == TD_OK);
  CHECK(s.struct_size == offsetof(td_pool_stats, cached_blocks));
  CHECK(s.capacity_bytes == (1u << 20));
  CHECK(s.cached_blocks == 777);
  CHECK(s.cached_bytes == 888);
  CHECK(statistics(pool).cached_blocks == 1);
}

TEST_CASE("flushing needs a live host pool handle") {
  CHECK_FAILS(td_pool_flush_thread_cache(nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_pool_flush_thread_cache", "pool");
}

TEST_CASE("C++: memory_pool::flush_thread_cache returns the thread's cached blocks") {
  taskdag::memory_pool pool(1 << 20);
  double* x = pool.allocate<double>(100);
  REQUIRE(x != nullptr);
  pool.deallocate(x, 100);
  CHECK(pool.usage_statistics().cached_blocks == 1);
  pool.flush_thread_cache();
  CHECK(pool.usage_statistics().cached_blocks == 0);
}
