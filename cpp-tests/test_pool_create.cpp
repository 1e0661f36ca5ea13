// td_pool_create: argument checks, the size inequality, rounding and defaults.
#include <string>

#include "support.hpp"

using taskdag_test::pool_args;
using taskdag_test::pool_ref;
using taskdag_test::statistics;

// Under AddressSanitizer or ThreadSanitizer (TASKDAG_SANITIZER), let the out-of-memory test's huge
// allocation fail with NULL, as the system allocator does, instead of aborting the process.
extern "C" __attribute__((used)) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
extern "C" __attribute__((used)) const char* __tsan_default_options() {
  return "allocator_may_return_null=1";
}

namespace {
// A pointer value td_pool_create must leave alone when it fails.
td_pool* const untouched = reinterpret_cast<td_pool*>(0x1);
}  // namespace

TEST_CASE("td_pool_create rejects NULL args and NULL out with TD_ERROR_NULL_ARGUMENT") {
  td_pool* pool = untouched;
  CHECK_FAILS(td_pool_create(nullptr, &pool), TD_ERROR_NULL_ARGUMENT, "td_pool_create", "args");
  CHECK(pool == untouched);
  const td_pool_args args = pool_args(1 << 16);
  CHECK_FAILS(td_pool_create(&args, nullptr), TD_ERROR_NULL_ARGUMENT, "td_pool_create", "out");
}

TEST_CASE("td_pool_create rejects a td_pool_args struct_size that is too small or too large") {
  // The first released td_pool_args ended before thread_cache; smaller sizes are rejected.
  for (std::size_t size : {std::size_t(0), sizeof(std::size_t),
                           offsetof(td_pool_args, thread_cache) - 8, sizeof(td_pool_args) + 8,
                           std::size_t(1) << 20}) {
    CAPTURE(size);
    unsigned char storage[sizeof(td_pool_args) + 64] = {};
    td_pool_args args = pool_args(1 << 16);
    args.struct_size = size;
    std::memcpy(storage, &args, sizeof args);
    td_pool* pool = untouched;
    CHECK_FAILS(td_pool_create(reinterpret_cast<const td_pool_args*>(storage), &pool),
                TD_ERROR_STRUCT_SIZE, "struct_size", std::to_string(size), "td_pool_args",
                "TD_POOL_ARGS_INIT");
    CHECK(pool == untouched);
  }
}

TEST_CASE("td_pool_create rejects an unknown memory_space and lists the valid ones") {
  for (td_memory_space space : {-1, 3, 7, 1000}) {
    CAPTURE(space);
    td_pool_args args = pool_args(1 << 16);
    args.memory_space = space;
    td_pool* pool = untouched;
    CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_INVALID_ARGUMENT, "memory_space",
                std::to_string(space), "TD_SPACE_HOST");
    CHECK(pool == untouched);
  }
}

TEST_CASE("td_pool_create in a CUDA space without a usable GPU is unavailable") {
  for (td_memory_space space : {TD_SPACE_CUDA, TD_SPACE_CUDA_HOST_PINNED}) {
    CAPTURE(space);
    if (td_cuda_available()) {
      MESSAGE("skipped: a GPU is visible, so the pool is created");
      continue;
    }
    td_pool_args args = pool_args(1 << 16);
    args.memory_space = space;
    td_pool* pool = untouched;
    CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_UNAVAILABLE, "TD_SPACE_HOST");
    CHECK(pool == untouched);
  }
}

TEST_CASE("td_pool_create rejects a min block size above the max block size") {
  const td_pool_args args = pool_args(1 << 20, 8192, 4096);
  td_pool* pool = untouched;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_INVALID_ARGUMENT, "min_block_alloc_size",
              "max_block_alloc_size", "8192", "4096");
  CHECK(pool == untouched);
}

TEST_CASE("td_pool_create rejects a max block size above the superblock size") {
  const td_pool_args args = pool_args(1 << 20, 64, 8192, 4096);
  td_pool* pool = untouched;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_INVALID_ARGUMENT, "max_block_alloc_size",
              "min_superblock_size", "8192", "4096");
  CHECK(pool == untouched);
}

TEST_CASE("td_pool_create rejects a superblock size above the total size") {
  const td_pool_args args = pool_args(1 << 16, 64, 4096, 1 << 20);
  td_pool* pool = untouched;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_INVALID_ARGUMENT, "min_superblock_size",
              "min_total_alloc_size", std::to_string(1 << 20), std::to_string(1 << 16));
  CHECK(pool == untouched);
}

TEST_CASE("td_pool_create rejects a total size of 0") {
  const td_pool_args args = pool_args(0);
  td_pool* pool = untouched;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_INVALID_ARGUMENT, "min_total_alloc_size");
  CHECK(pool == untouched);
}

TEST_CASE("td_pool_create reports TD_ERROR_OUT_OF_MEMORY when the system cannot provide the span") {
  // 2^50 bytes: more than the address space of any current x86-64 or arm64 process.
  const td_pool_args args = pool_args(std::size_t(1) << 50, 64, 4096, 1 << 20);
  td_pool* pool = untouched;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_OUT_OF_MEMORY, "td_pool_create");
  CHECK(pool == untouched);
}

TEST_CASE("td_pool_create uses 64 and 4096 bytes and a max-block superblock for zero sizes") {
  pool_ref pool(pool_args(1 << 16, 0, 0, 0));
  std::size_t min_block = 0, max_block = 0;
  REQUIRE(td_pool_min_block_size(pool, &min_block) == TD_OK);
  REQUIRE(td_pool_max_block_size(pool, &max_block) == TD_OK);
  CHECK(min_block == 64);
  CHECK(max_block == 4096);
  CHECK(statistics(pool).superblock_bytes == 4096);
}

TEST_CASE("td_pool_create rounds sizes up to powers of two and whole superblocks") {
  pool_ref pool(pool_args(1000000, 100, 3000, 5000));
  std::size_t min_block = 0, max_block = 0, capacity = 0;
  REQUIRE(td_pool_min_block_size(pool, &min_block) == TD_OK);
  REQUIRE(td_pool_max_block_size(pool, &max_block) == TD_OK);
  REQUIRE(td_pool_capacity(pool, &capacity) == TD_OK);
  CHECK(min_block == 128);
  CHECK(max_block == 4096);
  const td_pool_stats stats = statistics(pool);
  CHECK(stats.superblock_bytes == 8192);
  CHECK(capacity >= 1000000);
  CHECK(capacity % 8192 == 0);
  CHECK(stats.capacity_bytes == capacity);
  CHECK(stats.capacity_superblocks * stats.superblock_bytes == capacity);
}

TEST_CASE("td_pool_create accepts equal sizes all the way up") {
  pool_ref pool(pool_args(4096, 4096, 4096, 4096));
  std::size_t capacity = 0;
  REQUIRE(td_pool_capacity(pool, &capacity) == TD_OK);
  CHECK(capacity == 4096);
  void* block = td_pool_allocate(pool, 1, 1);
  CHECK(block != nullptr);
  CHECK(td_pool_allocate(pool, 1, 1) == nullptr);
  CHECK(td_last_error() == TD_ERROR_POOL_EXHAUSTED);
  CHECK(td_pool_deallocate(pool, block, 4096) == TD_OK);
}
