// The C++ layer's memory pool (taskdag.hpp): RAII ownership, sharing, typed allocation and the
// mapping of statuses to nullptr or exceptions.
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpp_support.hpp"

using taskdag::memory_pool;
using taskdag_test::check_throws;
using taskdag_test::contains;

static_assert(!std::is_copy_constructible<memory_pool>::value, "memory_pool is move-only");
static_assert(!std::is_copy_assignable<memory_pool>::value, "memory_pool is move-only");
static_assert(std::is_nothrow_move_constructible<memory_pool>::value, "");
static_assert(std::is_nothrow_move_assignable<memory_pool>::value, "");

namespace {

struct alignas(64) cache_line {
  unsigned char bytes[64];
};

}  // namespace

TEST_CASE("memory_pool's constructor creates a pool with the requested sizes") {
  memory_pool pool(1 << 20, 128, 2048, 1 << 14);
  CHECK(static_cast<bool>(pool));
  CHECK(pool.capacity() == (1u << 20));
  CHECK(pool.min_block_size() == 128);
  CHECK(pool.max_block_size() == 2048);
  CHECK(pool.allocate_block_size(1) == 128);
  CHECK(pool.allocate_block_size(129) == 256);
  const td_pool_stats s = pool.usage_statistics();
  CHECK(s.superblock_bytes == (1u << 14));
  CHECK(s.capacity_bytes == pool.capacity());
}

TEST_CASE("memory_pool::create throws taskdag::error naming the violated inequality") {
  td_pool_args args = taskdag_test::pool_args(1 << 20, 8192, 4096);
  check_throws([&] { memory_pool::create(args); }, TD_ERROR_INVALID_ARGUMENT,
               {"min_block_alloc_size", "max_block_alloc_size"});
  check_throws([] { memory_pool pool(1 << 12, 64, 4096, 1 << 16); }, TD_ERROR_INVALID_ARGUMENT,
               {"min_superblock_size", "min_total_alloc_size"});
}

TEST_CASE("memory_pool::allocate returns nullptr when the pool is exhausted") {
  memory_pool pool(4096, 64, 4096, 4096);
  void* whole = pool.allocate(4096);
  REQUIRE(whole != nullptr);
  CHECK(pool.allocate(64) == nullptr);
  CHECK(pool.allocate(64, 4) == nullptr);
  CHECK(pool.usage_statistics().failed_allocations == 2);
  pool.deallocate(whole, 4096);
  CHECK(pool.usage_statistics().consumed_bytes == 0);
}

TEST_CASE("memory_pool::allocate returns nullptr for size 0") {
  memory_pool pool(1 << 16);
  CHECK(pool.allocate(0) == nullptr);
  CHECK(pool.allocate<double>(0) == nullptr);
}

TEST_CASE("memory_pool::allocate throws on a size above the max block size or attempt_limit below 1") {
  memory_pool pool(1 << 16);
  check_throws([&] { pool.allocate(4097); }, TD_ERROR_INVALID_ARGUMENT, {"4097", "4096"});
  check_throws([&] { pool.allocate(64, 0); }, TD_ERROR_INVALID_ARGUMENT, {"attempt_limit"});
  check_throws([&] { pool.allocate<double>(513); }, TD_ERROR_INVALID_ARGUMENT, {"4104"});
  CHECK(pool.usage_statistics().failed_allocations == 0);
}

TEST_CASE("memory_pool::allocate of T gives aligned storage for n objects") {
  memory_pool pool(1 << 16, 64, 4096, 4096);
  double* x = pool.allocate<double>(100);
  REQUIRE(x != nullptr);
  for (int i = 0; i < 100; ++i) x[i] = i;
  CHECK(reinterpret_cast<std::uintptr_t>(x) % alignof(double) == 0);
  CHECK(pool.usage_statistics().consumed_bytes == 1024);  // 800 bytes take a 1024-byte block

  cache_line* lines = pool.allocate<cache_line>(3);
  REQUIRE(lines != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(lines) % alignof(cache_line) == 0);

  pool.deallocate(lines, 3);
  pool.deallocate(x, 100);
  CHECK(pool.usage_statistics().consumed_blocks == 0);
}

TEST_CASE("memory_pool::allocate of T throws when n times sizeof T overflows") {
  memory_pool pool(1 << 16);
  check_throws([&] { pool.allocate<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 4); },
               TD_ERROR_INVALID_ARGUMENT, {"overflows"});
}

TEST_CASE("memory_pool::deallocate throws for a pointer not from the pool and ignores nullptr") {
  memory_pool pool(1 << 16);
  void* block = pool.allocate(100);
  REQUIRE(block != nullptr);
  check_throws([&] { pool.deallocate(static_cast<char*>(block) + 8, 100); },
               TD_ERROR_INVALID_ARGUMENT, {"td_pool_deallocate"});
  check_throws([&] { pool.deallocate(block, 4096); }, TD_ERROR_INVALID_ARGUMENT,
               {"td_pool_deallocate"});
  CHECK_NOTHROW(pool.deallocate(nullptr, 100));
  CHECK_NOTHROW(pool.deallocate(static_cast<double*>(nullptr), 3));
  pool.deallocate(block, 100);
  check_throws([&] { pool.deallocate(block, 100); }, TD_ERROR_INVALID_ARGUMENT,
               {"td_pool_deallocate"});
}

TEST_CASE("a moved-from memory_pool is empty and its calls throw TD_ERROR_NULL_ARGUMENT") {
  memory_pool a(1 << 16);
  td_pool* handle = a.get();
  memory_pool b(std::move(a));
  CHECK(b.get() == handle);
  CHECK_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): testing it
  check_throws([&] { a.allocate(64); }, TD_ERROR_NULL_ARGUMENT, {"pool"});
  check_throws([&] { (void)a.capacity(); }, TD_ERROR_NULL_ARGUMENT, {"pool"});

  memory_pool c(1 << 16);
  c = std::move(b);  // releases c's own pool, takes b's
  CHECK(c.get() == handle);
  CHECK(c.capacity() == (1u << 16));
}

TEST_CASE("memory_pool::share keeps the pool alive after the original is destroyed") {
  void* block = nullptr;
  memory_pool shared = [&] {
    memory_pool original(1 << 16);
    block = original.allocate(64);
    return original.share();
  }();
  REQUIRE(block != nullptr);
  static_cast<unsigned char*>(block)[0] = 1;  // the memory is still the pool's
  CHECK(shared.usage_statistics().consumed_blocks == 1);
  shared.deallocate(block, 64);
}

TEST_CASE("memory_pool::adopt and detach hand C references over") {
  td_pool_args args = taskdag_test::pool_args(1 << 16);
  td_pool* raw = nullptr;
  REQUIRE(td_pool_create(&args, &raw) == TD_OK);
  memory_pool pool = memory_pool::adopt(raw);
  CHECK(pool.get() == raw);
  td_pool* back = pool.detach();
  CHECK(back == raw);
  CHECK_FALSE(static_cast<bool>(pool));
  CHECK(td_pool_release(back) == TD_OK);
  // The reference is gone: a use is detected, not trusted.
  std::size_t capacity = 0;
  CHECK(td_pool_capacity(back, &capacity) == TD_ERROR_INVALID_HANDLE);
}

TEST_CASE("memory_pool serves several threads at once") {
  memory_pool pool(1 << 20, 64, 4096, 1 << 16);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, &failures, t] {
      try {
        for (int i = 0; i < 10000; ++i) {
          int* values = pool.allocate<int>(1 + (i % 512), 16);
          if (values == nullptr) {
            ++failures[t];
            continue;
          }
          values[0] = t;
          pool.deallocate(values, 1 + (i % 512));
        }
      } catch (const taskdag::error&) {
        ++failures[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int f : failures) CHECK(f == 0);
  CHECK(pool.usage_statistics().consumed_blocks == 0);
}
