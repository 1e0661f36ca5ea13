// td_pool handles: NULL, objects that are no handle, released handles, and shared ownership
// through td_pool_retain / td_pool_release.
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using taskdag_test::check_last_error;
using taskdag_test::last_message;
using taskdag_test::pool_args;
using taskdag_test::statistics;

namespace {

struct pool_call {
  const char* name;
  // Calls the function on `pool`; returns its status (for allocate: td_last_error after NULL).
  std::function<td_status(td_pool*)> call;
};

// Every function that takes a td_pool*, with valid other arguments.
std::vector<pool_call> every_pool_function() {
  return {
      {"td_pool_retain", [](td_pool* p) { return td_pool_retain(p); }},
      {"td_pool_allocate",
       [](td_pool* p) {
         void* block = td_pool_allocate(p, 64, 1);
         return block == nullptr ? td_last_error() : TD_OK;
       }},
      {"td_pool_deallocate",
       [](td_pool* p) {
         alignas(64) static unsigned char not_a_block[64];
         return td_pool_deallocate(p, not_a_block, 64);
       }},
      {"td_pool_allocate_block_size",
       [](td_pool* p) {
         std::size_t out = 0;
         return td_pool_allocate_block_size(p, 64, &out);
       }},
      {"td_pool_capacity",
       [](td_pool* p) {
         std::size_t out = 0;
         return td_pool_capacity(p, &out);
       }},
      {"td_pool_min_block_size",
       [](td_pool* p) {
         std::size_t out = 0;
         return td_pool_min_block_size(p, &out);
       }},
      {"td_pool_max_block_size",
       [](td_pool* p) {
         std::size_t out = 0;
         return td_pool_max_block_size(p, &out);
       }},
      {"td_pool_usage_statistics",
       [](td_pool* p) {
         td_pool_stats out = TD_POOL_STATS_INIT;
         return td_pool_usage_statistics(p, &out);
       }},
  };
}

td_pool* create_pool() {
  const td_pool_args args = pool_args(1 << 16);
  td_pool* pool = nullptr;
  REQUIRE(td_pool_create(&args, &pool) == TD_OK);
  return pool;
}

}  // namespace

TEST_CASE("every pool function rejects a NULL pool with TD_ERROR_NULL_ARGUMENT") {
  for (const pool_call& f : every_pool_function()) {
    CAPTURE(f.name);
    CHECK_FAILS(f.call(nullptr), TD_ERROR_NULL_ARGUMENT, f.name, "pool");
  }
}

TEST_CASE("td_pool_release of NULL is a no-op") {
  CHECK(td_pool_release(nullptr) == TD_OK);
}

TEST_CASE("an object that is no handle is rejected with TD_ERROR_INVALID_HANDLE") {
  // Starts with 8 zero bytes, where a handle keeps its type tag; big enough for any reads of a
  // real handle so that a bad check could not run off the object.
  alignas(64) std::uint64_t not_a_pool[16] = {};
  td_pool* fake = reinterpret_cast<td_pool*>(not_a_pool);
  for (const pool_call& f : every_pool_function()) {
    CAPTURE(f.name);
    CHECK_FAILS(f.call(fake), TD_ERROR_INVALID_HANDLE, f.name, "pool", "td_pool",
                "not a taskdag handle");
  }
  CHECK_FAILS(td_pool_release(fake), TD_ERROR_INVALID_HANDLE, "td_pool_release", "pool");
  for (std::uint64_t word : not_a_pool) CHECK(word == 0);  // nothing was written to it
}

TEST_CASE("a released pool is rejected with TD_ERROR_INVALID_HANDLE by every function") {
  td_pool* pool = create_pool();
  REQUIRE(td_pool_release(pool) == TD_OK);
  for (const pool_call& f : every_pool_function()) {
    CAPTURE(f.name);
    CHECK_FAILS(f.call(pool), TD_ERROR_INVALID_HANDLE, f.name, "pool", "already released");
  }
}

TEST_CASE("releasing a pool twice fails with TD_ERROR_INVALID_HANDLE") {
  td_pool* pool = create_pool();
  REQUIRE(td_pool_release(pool) == TD_OK);
  CHECK_FAILS(td_pool_release(pool), TD_ERROR_INVALID_HANDLE, "td_pool_release", "pool",
              "already released");
}

TEST_CASE("td_pool_retain shares the pool until the last release") {
  td_pool* pool = create_pool();
  REQUIRE(td_pool_retain(pool) == TD_OK);
  void* block = td_pool_allocate(pool, 64, 1);
  REQUIRE(block != nullptr);

  // The first release leaves one reference: the pool and its blocks stay usable.
  REQUIRE(td_pool_release(pool) == TD_OK);
  static_cast<unsigned char*>(block)[63] = 42;
  CHECK(td_pool_deallocate(pool, block, 64) == TD_OK);
  block = td_pool_allocate(pool, 64, 1);
  CHECK(block != nullptr);
  CHECK(statistics(pool).consumed_blocks == 1);

  // The second release frees it.
  REQUIRE(td_pool_release(pool) == TD_OK);
  std::size_t capacity = 0;
  CHECK_FAILS(td_pool_capacity(pool, &capacity), TD_ERROR_INVALID_HANDLE, "already released");
  CHECK_FAILS(td_pool_release(pool), TD_ERROR_INVALID_HANDLE, "already released");
}

TEST_CASE("threads holding their own references keep the pool alive") {
  td_pool* pool = create_pool();
  constexpr int threads = 4;
  for (int t = 0; t < threads; ++t) REQUIRE(td_pool_retain(pool) == TD_OK);
  // The creator's reference goes first; each thread releases its own when done.
  REQUIRE(td_pool_release(pool) == TD_OK);

  std::vector<std::thread> workers;
  std::vector<int> failures(threads, 0);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([pool, t, &failures] {
      for (int i = 0; i < 1000; ++i) {
        void* block = td_pool_allocate(pool, 128, 16);  // rounds to spare for races
        if (block == nullptr || td_pool_deallocate(pool, block, 128) != TD_OK) ++failures[t];
      }
      if (td_pool_release(pool) != TD_OK) ++failures[t];
    });
  }
  for (std::thread& w : workers) w.join();
  for (int t = 0; t < threads; ++t) CHECK(failures[t] == 0);
  std::size_t capacity = 0;
  CHECK_FAILS(td_pool_capacity(pool, &capacity), TD_ERROR_INVALID_HANDLE, "already released");
}
