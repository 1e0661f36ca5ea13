// Many threads allocating and freeing from one pool at once: no block is ever handed to two
// owners, every block is aligned to its size, and the accounting returns to zero.
//
// TASKDAG_STRESS_OPERATIONS overrides the total number of operations (default 2 million), e.g.
// for runs under valgrind.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using taskdag_test::last_message;
using taskdag_test::next_power_of_two;
using taskdag_test::pool_ref;
using taskdag_test::statistics;

namespace {

constexpr int thread_count = 8;
constexpr std::size_t window = 32;  // live blocks per thread at most
constexpr std::size_t min_block = 64;
constexpr std::size_t max_block = 4096;

std::uint64_t total_operations() {
  if (const char* text = std::getenv("TASKDAG_STRESS_OPERATIONS")) {
    return std::strtoull(text, nullptr, 10);
  }
  return 2'000'000;
}

struct live_block {
  unsigned char* data;
  std::size_t size;
  unsigned char pattern;
};

// One search round may miss while other threads race for the same empty superblock, even in a
// pool with room (000 §3.1); a retry with this many rounds must then succeed.
constexpr int retry_attempt_limit = 16;

struct thread_result {
  std::uint64_t operations = 0;
  std::uint64_t allocations = 0;
  std::uint64_t missed_rounds = 0;   // NULL from one search round, TD_ERROR_POOL_EXHAUSTED
  std::uint64_t exhausted = 0;       // NULL even after retry_attempt_limit rounds
  std::uint64_t misaligned = 0;      // block not aligned to its block size
  std::uint64_t corrupted = 0;       // pattern overwritten while the block was ours
  std::uint64_t other_errors = 0;    // any other failure
  std::string first_error;
};

void note_error(thread_result& r, const std::string& what) {
  ++r.other_errors;
  if (r.first_error.empty()) r.first_error = what;
}

bool pattern_intact(const live_block& b) {
  for (std::size_t i = 0; i < b.size; ++i) {
    if (b.data[i] != b.pattern) return false;
  }
  return true;
}

void run_thread(td_pool* pool, int id, std::uint64_t operations, thread_result& r) {
  std::mt19937_64 random(0x5eed + id);
  std::uniform_int_distribution<std::size_t> size_of(1, max_block);
  std::vector<live_block> live;
  live.reserve(window);

  auto free_one = [&](std::size_t index) {
    const live_block b = live[index];
    if (!pattern_intact(b)) ++r.corrupted;
    if (td_pool_deallocate(pool, b.data, b.size) != TD_OK) {
      note_error(r, "deallocate: " + last_message());
    }
    live[index] = live.back();
    live.pop_back();
  };

  for (std::uint64_t op = 0; op < operations; ++op) {
    ++r.operations;
    // Allocate while the window has room and a coin says so; otherwise free a random block.
    if (live.empty() || (live.size() < window && (random() & 1))) {
      const std::size_t size = size_of(random);
      void* p = td_pool_allocate(pool, size, 1);
      if (p == nullptr && td_last_error() == TD_ERROR_POOL_EXHAUSTED) {
        ++r.missed_rounds;
        p = td_pool_allocate(pool, size, retry_attempt_limit);
        if (p == nullptr && td_last_error() == TD_ERROR_POOL_EXHAUSTED) {
          ++r.exhausted;
          continue;
        }
      }
      if (p == nullptr) {
        note_error(r, "allocate: " + last_message());
        continue;
      }
      ++r.allocations;
      const std::size_t block_size = next_power_of_two(size < min_block ? min_block : size);
      if (reinterpret_cast<std::uintptr_t>(p) % block_size != 0) ++r.misaligned;
      const auto pattern = static_cast<unsigned char>(id * 37 + op);
      std::memset(p, pattern, size);
      live.push_back({static_cast<unsigned char*>(p), size, pattern});
    } else {
      free_one(random() % live.size());
    }
  }
  while (!live.empty()) free_one(live.size() - 1);
}

}  // namespace

TEST_CASE("eight threads allocating and freeing random sizes never share a block") {
  // 8 threads x 32 blocks x 4 KiB = 1 MiB live at most; 8 MiB leaves room for every block size
  // to hold partly filled superblocks in each size class.
  pool_ref pool(8u << 20, min_block, max_block, 1u << 16);
  const std::uint64_t operations = total_operations();
  std::vector<thread_result> results(thread_count);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back(run_thread, pool.get(), t, operations / thread_count,
                         std::ref(results[t]));
  }
  for (std::thread& t : threads) t.join();

  std::uint64_t done = 0, allocations = 0, missed_rounds = 0, exhausted = 0;
  for (int t = 0; t < thread_count; ++t) {
    const thread_result& r = results[t];
    CAPTURE(t);
    INFO(r.first_error);
    CHECK(r.misaligned == 0);
    CHECK(r.corrupted == 0);
    CHECK(r.other_errors == 0);
    done += r.operations;
    allocations += r.allocations;
    missed_rounds += r.missed_rounds;
    exhausted += r.exhausted;
  }
  MESSAGE(done << " operations, " << allocations << " allocations, " << missed_rounds
                << " single search rounds missed, " << exhausted << " retries failed");
  CHECK(done == thread_count * (operations / thread_count));
  // The pool is 8 times larger than what can be live at once: it never runs out, and misses of a
  // single round are rare races.
  CHECK(exhausted == 0);
  CHECK(missed_rounds * 1000 <= allocations);

  const td_pool_stats s = statistics(pool);
  CHECK(s.consumed_blocks == 0);
  CHECK(s.consumed_bytes == 0);
  CHECK(s.failed_allocations == missed_rounds + exhausted);  // every NULL is counted
  CHECK(s.high_water_bytes <= s.capacity_bytes);
  CHECK(s.high_water_bytes > 0);
  CHECK(s.consumed_bytes + s.reserved_bytes == s.consumed_superblocks * s.superblock_bytes);
}
