// td_pool_deallocate: every rejected pointer or size fails with a status and a message, and
// leaves the pool exactly as it was.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support.hpp"

using taskdag_test::hex;
using taskdag_test::pool_ref;
using taskdag_test::same_statistics;
using taskdag_test::statistics;

namespace {

// A pool with two live 128-byte blocks, and the statistics to compare against after each
// rejected call.
struct pool_with_blocks {
  pool_ref pool{1 << 20, 64, 4096, 1 << 16};
  void* first = nullptr;
  void* second = nullptr;
  td_pool_stats before{};

  pool_with_blocks() {
    first = td_pool_allocate(pool, 100, 1);
    second = td_pool_allocate(pool, 100, 1);
    REQUIRE(first != nullptr);
    REQUIRE(second != nullptr);
    before = statistics(pool);
  }

  ~pool_with_blocks() {
    td_pool_deallocate(pool, first, 100);
    td_pool_deallocate(pool, second, 100);
  }

  void check_unchanged() const {
    const td_pool_stats after = statistics(pool);
    CHECK(after.consumed_blocks == before.consumed_blocks);
    CHECK(after.consumed_bytes == before.consumed_bytes);
    CHECK(same_statistics(after, before));
  }
};

}  // namespace

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a NULL ptr with TD_ERROR_NULL_ARGUMENT") {
  CHECK_FAILS(td_pool_deallocate(pool, nullptr, 100), TD_ERROR_NULL_ARGUMENT,
              "td_pool_deallocate", "ptr");
  check_unchanged();
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a pointer outside the pool") {
  int on_stack = 0;
  auto on_heap = std::make_unique<std::uint64_t[]>(64);
  for (void* p : {static_cast<void*>(&on_stack), static_cast<void*>(on_heap.get()),
                  reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(first) - (1u << 24))}) {
    CAPTURE(p);
    CHECK_FAILS(td_pool_deallocate(pool, p, 100), TD_ERROR_INVALID_ARGUMENT,
                "td_pool_deallocate", hex(p), "outside");
    check_unchanged();
  }
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a block of another pool") {
  pool_ref other(1 << 20, 64, 4096, 1 << 16);
  void* foreign = td_pool_allocate(other, 100, 1);
  REQUIRE(foreign != nullptr);
  CHECK_FAILS(td_pool_deallocate(pool, foreign, 100), TD_ERROR_INVALID_ARGUMENT,
              "td_pool_deallocate", hex(foreign), "outside");
  check_unchanged();
  CHECK(td_pool_deallocate(other, foreign, 100) == TD_OK);
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a pointer inside a block but not at its start") {
  for (std::size_t offset : {1, 8, 64, 127}) {
    CAPTURE(offset);
    char* inside = static_cast<char*>(first) + offset;
    CHECK_FAILS(td_pool_deallocate(pool, inside, 100), TD_ERROR_INVALID_ARGUMENT,
                "td_pool_deallocate", hex(inside), std::to_string(offset) + " bytes into");
    check_unchanged();
  }
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a double free and keeps the block free once") {
  REQUIRE(td_pool_deallocate(pool, second, 100) == TD_OK);
  const td_pool_stats after_free = statistics(pool);
  CHECK_FAILS(td_pool_deallocate(pool, second, 100), TD_ERROR_INVALID_ARGUMENT,
              "td_pool_deallocate", hex(second), "not allocated");
  CHECK(same_statistics(statistics(pool), after_free));
  // Re-allocate so the fixture's cleanup frees a live block.
  second = td_pool_allocate(pool, 100, 1);
  REQUIRE(second != nullptr);
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a free block that was never allocated") {
  // The superblock of `first` holds 128-byte blocks; find one of them that is not allocated.
  char* base = static_cast<char*>(first);
  char* never = base + 128;
  while (never == second) never += 128;
  CHECK_FAILS(td_pool_deallocate(pool, never, 100), TD_ERROR_INVALID_ARGUMENT,
              "td_pool_deallocate", hex(never), "allocated");
  check_unchanged();
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a size of a larger block size") {
  // `first` is a 128-byte block (allocated with 100 bytes). Sizes of smaller block sizes cannot be
  // told apart from a small request served by a larger block (000 §2.5.3), so only larger ones
  // are a detectable mismatch.
  for (std::size_t size : {129, 256, 4096}) {
    CAPTURE(size);
    CHECK_FAILS(td_pool_deallocate(pool, first, size), TD_ERROR_INVALID_ARGUMENT,
                "td_pool_deallocate", hex(first), "size " + std::to_string(size));
    check_unchanged();
  }
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate rejects a size above the max block size") {
  CHECK_FAILS(td_pool_deallocate(pool, first, 5000), TD_ERROR_INVALID_ARGUMENT,
              "td_pool_deallocate", hex(first), "size 5000");
  check_unchanged();
}

TEST_CASE_FIXTURE(pool_with_blocks, "deallocate accepts any size of the same block size") {
  REQUIRE(td_pool_deallocate(pool, first, 65) == TD_OK);
  REQUIRE(td_pool_deallocate(pool, second, 128) == TD_OK);
  CHECK(statistics(pool).consumed_blocks == before.consumed_blocks - 2);
  first = td_pool_allocate(pool, 100, 1);
  second = td_pool_allocate(pool, 100, 1);
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);
}

TEST_CASE("deallocate of a block of a released pool is reported as an invalid handle") {
  td_pool_args args = taskdag_test::pool_args(1 << 16);
  td_pool* pool = nullptr;
  REQUIRE(td_pool_create(&args, &pool) == TD_OK);
  void* block = td_pool_allocate(pool, 64, 1);
  REQUIRE(block != nullptr);
  REQUIRE(td_pool_release(pool) == TD_OK);
  CHECK_FAILS(td_pool_deallocate(pool, block, 64), TD_ERROR_INVALID_HANDLE, "pool",
              "released");
}
