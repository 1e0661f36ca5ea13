// td_pool_usage_statistics and the size queries: geometry, accounting that adds up, the
// high-water mark, and struct_size checks.
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"

using taskdag_test::next_power_of_two;
using taskdag_test::pool_ref;
using taskdag_test::statistics;

namespace {
void check_accounting(const td_pool_stats& s) {
  CHECK(s.consumed_bytes + s.reserved_bytes == s.consumed_superblocks * s.superblock_bytes);
  CHECK(s.consumed_superblocks <= s.capacity_superblocks);
  CHECK(s.consumed_bytes <= s.capacity_bytes);
  CHECK(s.high_water_bytes <= s.capacity_bytes);
}
}  // namespace

TEST_CASE("a new pool reports its geometry and nothing in use") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  std::size_t capacity = 0, min_block = 0, max_block = 0;
  REQUIRE(td_pool_capacity(pool, &capacity) == TD_OK);
  REQUIRE(td_pool_min_block_size(pool, &min_block) == TD_OK);
  REQUIRE(td_pool_max_block_size(pool, &max_block) == TD_OK);
  const td_pool_stats s = statistics(pool);
  CHECK(s.struct_size == sizeof(td_pool_stats));
  CHECK(s.capacity_bytes == capacity);
  CHECK(capacity == (1u << 20));
  CHECK(s.superblock_bytes == (1u << 16));
  CHECK(s.capacity_superblocks == 16);
  CHECK(s.min_block_bytes == min_block);
  CHECK(s.max_block_bytes == max_block);
  CHECK(min_block == 64);
  CHECK(max_block == 4096);
  CHECK(s.consumed_superblocks == 0);
  CHECK(s.consumed_blocks == 0);
  CHECK(s.consumed_bytes == 0);
  CHECK(s.reserved_blocks == 0);
  CHECK(s.reserved_bytes == 0);
  CHECK(s.high_water_bytes == 0);
  CHECK(s.failed_allocations == 0);
}

TEST_CASE("usage statistics add up while blocks of mixed sizes are live") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 14);
  std::mt19937 random(42);
  std::uniform_int_distribution<std::size_t> size_of(1, 4096);
  std::vector<std::pair<void*, std::size_t>> live;
  std::uint64_t live_bytes = 0;
  for (int step = 0; step < 2000; ++step) {
    if (live.size() < 100 && (live.empty() || random() % 3 != 0)) {
      const std::size_t size = size_of(random);
      void* p = td_pool_allocate(pool, size, 1);
      REQUIRE(p != nullptr);
      live.emplace_back(p, size);
      live_bytes += next_power_of_two(size < 64 ? 64 : size);
    } else {
      const std::size_t victim = random() % live.size();
      const auto [p, size] = live[victim];
      REQUIRE(td_pool_deallocate(pool, p, size) == TD_OK);
      live_bytes -= next_power_of_two(size < 64 ? 64 : size);
      live[victim] = live.back();
      live.pop_back();
    }
    if (step % 50 == 0) {
      CAPTURE(step);
      const td_pool_stats s = statistics(pool);
      CHECK(s.consumed_blocks == live.size());
      CHECK(s.consumed_bytes == live_bytes);
      check_accounting(s);
      CHECK(s.high_water_bytes + 4096 >= s.consumed_bytes);
    }
  }
  for (const auto& [p, size] : live) REQUIRE(td_pool_deallocate(pool, p, size) == TD_OK);
  const td_pool_stats s = statistics(pool);
  CHECK(s.consumed_blocks == 0);
  CHECK(s.consumed_bytes == 0);
  check_accounting(s);
}

TEST_CASE("reserved blocks are the free blocks of superblocks in use") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  void* p = td_pool_allocate(pool, 64, 1);
  REQUIRE(p != nullptr);
  const td_pool_stats s = statistics(pool);
  CHECK(s.consumed_superblocks == 1);
  CHECK(s.consumed_blocks == 1);
  CHECK(s.consumed_bytes == 64);
  CHECK(s.reserved_blocks == (1u << 16) / 64 - 1);
  CHECK(s.reserved_bytes == (1u << 16) - 64);
  check_accounting(s);
  REQUIRE(td_pool_deallocate(pool, p, 64) == TD_OK);
}

TEST_CASE("high_water_bytes keeps the peak after blocks are freed") {
  pool_ref pool(1 << 20, 64, 4096, 1 << 16);
  std::vector<void*> blocks;
  for (int i = 0; i < 32; ++i) {
    blocks.push_back(td_pool_allocate(pool, 4096, 1));
    REQUIRE(blocks.back() != nullptr);
  }
  for (void* p : blocks) REQUIRE(td_pool_deallocate(pool, p, 4096) == TD_OK);
  const td_pool_stats s = statistics(pool);
  CHECK(s.consumed_bytes == 0);
  // One thread used the pool: the mark may trail the true peak by one max-size block.
  CHECK(s.high_water_bytes <= 32 * 4096);
  CHECK(s.high_water_bytes >= 31 * 4096);
}

TEST_CASE("usage_statistics rejects a td_pool_stats struct_size that is too small or too large") {
  pool_ref pool(1 << 16);
  // The first released td_pool_stats ended before cached_blocks; smaller sizes are rejected.
  for (std::size_t size : {std::size_t(0), sizeof(std::size_t),
                           offsetof(td_pool_stats, cached_blocks) - 8, sizeof(td_pool_stats) + 8,
                           std::size_t(1) << 16}) {
    CAPTURE(size);
    unsigned char storage[sizeof(td_pool_stats) + 64];
    std::memset(storage, 0xab, sizeof storage);
    std::memcpy(storage, &size, sizeof size);
    CHECK_FAILS(td_pool_usage_statistics(pool, reinterpret_cast<td_pool_stats*>(storage)),
                TD_ERROR_STRUCT_SIZE, "td_pool_usage_statistics", "struct_size",
                std::to_string(size), "td_pool_stats", "TD_POOL_STATS_INIT");
    // Nothing but struct_size is there, and nothing was written.
    std::size_t struct_size = 0;
    std::memcpy(&struct_size, storage, sizeof struct_size);
    CHECK(struct_size == size);
    bool untouched = true;
    for (std::size_t i = sizeof(std::size_t); i < sizeof storage; ++i) {
      untouched = untouched && storage[i] == 0xab;
    }
    CHECK(untouched);
  }
}

TEST_CASE("size queries and statistics reject a NULL out pointer") {
  pool_ref pool(1 << 16);
  CHECK_FAILS(td_pool_usage_statistics(pool, nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_pool_usage_statistics", "out");
  CHECK_FAILS(td_pool_capacity(pool, nullptr), TD_ERROR_NULL_ARGUMENT, "td_pool_capacity", "out");
  CHECK_FAILS(td_pool_min_block_size(pool, nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_pool_min_block_size", "out");
  CHECK_FAILS(td_pool_max_block_size(pool, nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_pool_max_block_size", "out");
  CHECK_FAILS(td_pool_allocate_block_size(pool, 64, nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_pool_allocate_block_size", "out");
}
