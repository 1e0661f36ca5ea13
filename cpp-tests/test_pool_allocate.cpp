// td_pool_allocate and td_pool_allocate_block_size: block sizes, alignment, invalid requests,
// size 0, attempt limits and exhaustion.
#include <climits>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using taskdag_test::check_last_error;
using taskdag_test::last_message;
using taskdag_test::next_power_of_two;
using taskdag_test::pool_ref;
using taskdag_test::statistics;

TEST_CASE("allocate_block_size is the smallest power of two at least max of size and min block") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  const struct {
    std::size_t size, block;
  } table[] = {{0, 64},      {1, 64},      {63, 64},     {64, 64},     {65, 128},
               {127, 128},   {128, 128},   {129, 256},   {255, 256},   {256, 256},
               {257, 512},   {1000, 1024}, {1024, 1024}, {1025, 2048}, {2048, 2048},
               {2049, 4096}, {4095, 4096}, {4096, 4096}};
  for (const auto& row : table) {
    CAPTURE(row.size);
    std::size_t block = 0;
    REQUIRE(td_pool_allocate_block_size(pool, row.size, &block) == TD_OK);
    CHECK(block == row.block);
  }
}

TEST_CASE("allocate_block_size never goes below a larger min block") {
  pool_ref pool(1 << 20, 512, 8192, 1 << 16);
  for (std::size_t size : {1, 100, 511, 512}) {
    CAPTURE(size);
    std::size_t block = 0;
    REQUIRE(td_pool_allocate_block_size(pool, size, &block) == TD_OK);
    CHECK(block == 512);
  }
  std::size_t block = 0;
  REQUIRE(td_pool_allocate_block_size(pool, 513, &block) == TD_OK);
  CHECK(block == 1024);
}

TEST_CASE("allocate_block_size rejects sizes above the max block size and writes nothing") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  for (std::size_t size : {std::size_t(4097), std::size_t(1) << 20, SIZE_MAX}) {
    CAPTURE(size);
    std::size_t block = 12345;
    CHECK_FAILS(td_pool_allocate_block_size(pool, size, &block), TD_ERROR_INVALID_ARGUMENT,
                "td_pool_allocate_block_size", "size", std::to_string(size), "4096");
    CHECK(block == 12345);
  }
}

TEST_CASE("allocate returns blocks aligned to their block size") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  for (std::size_t size = 1; size <= 4096; size = size * 2 + 1) {
    CAPTURE(size);
    const std::size_t block_size = next_power_of_two(size < 64 ? 64 : size);
    std::vector<void*> blocks;
    for (int i = 0; i < 5; ++i) {
      void* p = td_pool_allocate(pool, size, 1);
      INFO(last_message());
      REQUIRE(p != nullptr);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % block_size == 0);
      blocks.push_back(p);
    }
    for (void* p : blocks) CHECK(td_pool_deallocate(pool, p, size) == TD_OK);
  }
}

TEST_CASE("allocate above the max block size returns NULL with TD_ERROR_INVALID_ARGUMENT") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  for (std::size_t size : {std::size_t(4097), std::size_t(1) << 30, SIZE_MAX}) {
    CAPTURE(size);
    CHECK(td_pool_allocate(pool, size, 1) == nullptr);
    check_last_error(TD_ERROR_INVALID_ARGUMENT, {"td_pool_allocate", std::to_string(size), "4096"});
  }
  // Misuse is not exhaustion.
  CHECK(statistics(pool).failed_allocations == 0);
  CHECK(statistics(pool).consumed_blocks == 0);
}

TEST_CASE("allocate of size 0 returns NULL and leaves the last error unchanged") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  // A known earlier failure on this thread ...
  std::size_t block = 0;
  REQUIRE(td_pool_allocate_block_size(pool, 5000, &block) == TD_ERROR_INVALID_ARGUMENT);
  const std::string message = last_message();

  CHECK(td_pool_allocate(pool, 0, 1) == nullptr);
  // ... is still the last error: size 0 is not a failure.
  CHECK(td_last_error() == TD_ERROR_INVALID_ARGUMENT);
  CHECK(last_message() == message);

  // On a thread that never failed, the last error stays TD_OK.
  td_status fresh = TD_ERROR_INTERNAL;
  void* result = reinterpret_cast<void*>(1);
  std::thread([&] {
    result = td_pool_allocate(pool, 0, 1);
    fresh = td_last_error();
  }).join();
  CHECK(result == nullptr);
  CHECK(fresh == TD_OK);

  const td_pool_stats stats = statistics(pool);
  CHECK(stats.consumed_blocks == 0);
  CHECK(stats.failed_allocations == 0);
}

TEST_CASE("allocate rejects an attempt_limit below 1") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  for (int limit : {0, -1, INT_MIN}) {
    CAPTURE(limit);
    CHECK(td_pool_allocate(pool, 64, limit) == nullptr);
    check_last_error(TD_ERROR_INVALID_ARGUMENT, {"td_pool_allocate", "attempt_limit",
                                                 std::to_string(limit)});
  }
  CHECK(statistics(pool).consumed_blocks == 0);
}

TEST_CASE("allocate accepts attempt limits above 1") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  for (int limit : {2, 10, INT_MAX}) {
    CAPTURE(limit);
    void* p = td_pool_allocate(pool, 100, limit);
    REQUIRE(p != nullptr);
    CHECK(td_pool_deallocate(pool, p, 100) == TD_OK);
  }
}

TEST_CASE("a pool filled with min blocks reports TD_ERROR_POOL_EXHAUSTED until a block is freed") {
  // 64 KiB in 16 superblocks of 4 KiB: 1024 blocks of 64 bytes.
  pool_ref pool(1 << 16, 64, 1024, 4096);
  std::size_t capacity = 0;
  REQUIRE(td_pool_capacity(pool, &capacity) == TD_OK);
  const std::size_t expected_blocks = capacity / 64;

  std::vector<void*> blocks;
  for (std::size_t i = 0; i < expected_blocks; ++i) {
    void* p = td_pool_allocate(pool, 64, 1);
    INFO("block " << i << ": " << last_message());
    REQUIRE(p != nullptr);
    blocks.push_back(p);
  }
  td_pool_stats stats = statistics(pool);
  CHECK(stats.consumed_blocks == expected_blocks);
  CHECK(stats.consumed_bytes == capacity);
  CHECK(stats.failed_allocations == 0);

  CHECK(td_pool_allocate(pool, 64, 1) == nullptr);
  check_last_error(TD_ERROR_POOL_EXHAUSTED,
                   {"td_pool_allocate", "block of 64 bytes", std::to_string(capacity)});
  CHECK(td_pool_allocate(pool, 1, 8) == nullptr);
  CHECK(td_last_error() == TD_ERROR_POOL_EXHAUSTED);
  // A larger block cannot fit either.
  CHECK(td_pool_allocate(pool, 1024, 1) == nullptr);
  CHECK(td_last_error() == TD_ERROR_POOL_EXHAUSTED);
  CHECK(statistics(pool).failed_allocations == 3);

  // Freeing one block makes exactly one allocation possible again.
  void* freed = blocks.back();
  blocks.pop_back();
  REQUIRE(td_pool_deallocate(pool, freed, 64) == TD_OK);
  void* again = td_pool_allocate(pool, 64, 1);
  INFO(last_message());
  CHECK(again != nullptr);
  CHECK(again == freed);  // the only free block
  blocks.push_back(again);
  CHECK(td_pool_allocate(pool, 64, 1) == nullptr);
  CHECK(statistics(pool).failed_allocations == 4);

  for (void* p : blocks) REQUIRE(td_pool_deallocate(pool, p, 64) == TD_OK);
  stats = statistics(pool);
  CHECK(stats.consumed_blocks == 0);
  CHECK(stats.consumed_bytes == 0);
  CHECK(stats.failed_allocations == 4);
  // The peak may trail by one max-size block per thread that used the pool.
  CHECK(stats.high_water_bytes <= capacity);
  CHECK(stats.high_water_bytes + 1024 >= capacity);
}

TEST_CASE("an emptied pool serves the largest blocks again") {
  pool_ref pool(1 << 16, 64, 4096, 4096);
  std::size_t capacity = 0;
  REQUIRE(td_pool_capacity(pool, &capacity) == TD_OK);
  // Fill with small blocks, free them all, then the whole span must be available as big blocks:
  // empty superblocks are reassigned to another block size.
  std::vector<void*> blocks;
  for (void* p; (p = td_pool_allocate(pool, 64, 1)) != nullptr;) blocks.push_back(p);
  CHECK(blocks.size() == capacity / 64);
  for (void* p : blocks) REQUIRE(td_pool_deallocate(pool, p, 64) == TD_OK);
  blocks.clear();
  for (void* p; (p = td_pool_allocate(pool, 4096, 1)) != nullptr;) blocks.push_back(p);
  CHECK(blocks.size() == capacity / 4096);
  for (void* p : blocks) REQUIRE(td_pool_deallocate(pool, p, 4096) == TD_OK);
}
