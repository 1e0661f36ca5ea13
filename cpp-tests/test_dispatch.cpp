// Data-parallel dispatch through the C API (004): td_parallel_for, td_parallel_reduce(_custom)
// and td_parallel_scan(_custom) on the Serial space and the root Threads instance, and their
// rejection of bad input.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dispatch_support.hpp"

using taskdag_test::check_last_error;
using taskdag_test::concurrency;
using taskdag_test::failure_log;
using taskdag_test::range;
using taskdag_test::scalar;
using taskdag_test::space_ref;

namespace {

std::vector<space_ref> both_spaces() {
  std::vector<space_ref> spaces;
  spaces.push_back(taskdag_test::serial_space());
  spaces.push_back(taskdag_test::threads_space());
  return spaces;
}

// ---- parallel_for ---------------------------------------------------------------------------

struct sum_state {
  std::atomic<std::int64_t> sum{0};
  std::atomic<std::int64_t> ranges{0};
  std::atomic<std::int64_t> out_of_bounds{0};
  std::int64_t begin = 0, end = 0;
};

void add_range(std::int64_t b, std::int64_t e, void* user) {
  auto* s = static_cast<sum_state*>(user);
  if (b < s->begin || e > s->end || b >= e) s->out_of_bounds.fetch_add(1);
  std::int64_t local = 0;
  for (std::int64_t i = b; i < e; ++i) local += i;
  s->sum.fetch_add(local);
  s->ranges.fetch_add(1);
}

struct hits_state {
  std::vector<std::atomic<int>> hits;
  std::int64_t begin;
  hits_state(std::int64_t b, std::int64_t e) : hits(static_cast<std::size_t>(e - b)), begin(b) {}
};

void count_hits(std::int64_t b, std::int64_t e, void* user) {
  auto* s = static_cast<hits_state*>(user);
  for (std::int64_t i = b; i < e; ++i) s->hits[static_cast<std::size_t>(i - s->begin)].fetch_add(1);
}

// ---- reductions over the built-in operators ---------------------------------------------------

// The value index i contributes to a reduction with `op`: small enough that products stay exact
// and sums of integers do not overflow, varied enough that min and max are unique.
template <class T>
T value_of(td_reduce_op op, std::int64_t i) {
  switch (op) {
    case TD_REDUCE_SUM:
      if constexpr (std::is_integral_v<T>) return static_cast<T>(i % 17 - 8);
      else return static_cast<T>(1.0 / (1.0 + static_cast<double>(i % 101)));
    case TD_REDUCE_PROD:
      return static_cast<T>(i % 997 == 3 ? 2 : (i % 991 == 5 ? -1 : 1));
    default:
      return static_cast<T>(static_cast<std::int64_t>((static_cast<std::uint64_t>(i) * 2654435761u) %
                                                     1000003u) -
                            500001);
  }
}

template <class T>
struct reduce_args {
  td_reduce_op op;
};

template <class T>
void reduce_body(std::int64_t b, std::int64_t e, void* value, void* user) {
  const td_reduce_op op = static_cast<reduce_args<T>*>(user)->op;
  T acc;
  std::memcpy(&acc, value, sizeof acc);
  for (std::int64_t i = b; i < e; ++i) acc = taskdag_test::combine(op, acc, value_of<T>(op, i));
  std::memcpy(value, &acc, sizeof acc);
}

template <class T>
void check_builtin_reductions(std::int64_t n) {
  for (td_reduce_op op : {TD_REDUCE_SUM, TD_REDUCE_MIN, TD_REDUCE_MAX, TD_REDUCE_PROD}) {
    const std::string type_name = scalar<T>::name, op_name = taskdag_test::op_name(op);
    CAPTURE(type_name);
    CAPTURE(op_name);
    T serial = taskdag_test::identity<T>(op);
    double serial_sum = 0;  // the sum in double: a float running sum drifts over 1e5 terms
    for (std::int64_t i = 0; i < n; ++i) {
      serial = taskdag_test::combine(op, serial, value_of<T>(op, i));
      serial_sum += static_cast<double>(value_of<T>(op, i));
    }
    reduce_args<T> args{op};
    for (const space_ref& space : both_spaces()) {
      for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{1000}}) {
        CAPTURE(chunk);
        const td_range_policy policy = range(0, n, chunk);
        T first{};
        REQUIRE(td_parallel_reduce(space, &policy, reduce_body<T>, &args, op, scalar<T>::type,
                                   &first) == TD_OK);
        if constexpr (std::is_integral_v<T>) {
          CHECK(first == serial);
        } else if (op == TD_REDUCE_SUM) {
          // A different association of the same floating-point sum.
          CHECK(static_cast<double>(first) ==
                doctest::Approx(serial_sum).epsilon(std::is_same_v<T, float> ? 1e-3 : 1e-12));
        } else {
          CHECK(first == serial);  // min, max and products of ±1, 2 are exact
        }
        // Deterministic: the same bits on every run with the same thread count (004).
        for (int repeat = 0; repeat < 20; ++repeat) {
          T again{};
          REQUIRE(td_parallel_reduce(space, &policy, reduce_body<T>, &args, op, scalar<T>::type,
                                     &again) == TD_OK);
          CHECK(std::memcmp(&again, &first, sizeof first) == 0);
        }
      }
    }
  }
}

// ---- a custom reducer that is associative but not commutative ---------------------------------

// A polynomial hash of the sequence of values in index order: equal to the serial hash only if
// the ranges are folded and joined in index order.
struct sequence_hash {
  std::uint64_t hash;
  std::uint64_t power;  // B^(number of values folded in)
};
constexpr std::uint64_t hash_base = 1000003;

struct hash_user {
  std::atomic<int> inits{0};
  std::atomic<int> joins{0};
};

std::uint64_t element(std::int64_t i) { return static_cast<std::uint64_t>(i * 7919 % 1009); }

void hash_fold(sequence_hash& h, std::uint64_t x) {
  h.hash = h.hash * hash_base + x;
  h.power *= hash_base;
}

void hash_init(void* value, void* user) {
  static_cast<hash_user*>(user)->inits.fetch_add(1);
  *static_cast<sequence_hash*>(value) = sequence_hash{0, 1};
}

void hash_join(void* dst, const void* src, void* user) {
  static_cast<hash_user*>(user)->joins.fetch_add(1);
  auto* d = static_cast<sequence_hash*>(dst);
  const auto* s = static_cast<const sequence_hash*>(src);
  d->hash = d->hash * s->power + s->hash;
  d->power *= s->power;
}

void hash_body(std::int64_t b, std::int64_t e, void* value, void*) {
  auto* h = static_cast<sequence_hash*>(value);
  for (std::int64_t i = b; i < e; ++i) hash_fold(*h, element(i));
}

td_reducer hash_reducer(hash_user* user) {
  td_reducer reducer = TD_REDUCER_INIT;
  reducer.value_size = sizeof(sequence_hash);
  reducer.init = hash_init;
  reducer.join = hash_join;
  reducer.user = user;
  return reducer;
}

// A 64-bin histogram (512 bytes, more than a team value may hold): commutative, so it also
// works with chunks assigned round-robin.
struct histogram {
  std::int64_t bins[64];
};

void histogram_init(void* value, void*) { std::memset(value, 0, sizeof(histogram)); }

void histogram_join(void* dst, const void* src, void*) {
  auto* d = static_cast<histogram*>(dst);
  const auto* s = static_cast<const histogram*>(src);
  for (int k = 0; k < 64; ++k) d->bins[k] += s->bins[k];
}

void histogram_body(std::int64_t b, std::int64_t e, void* value, void*) {
  auto* h = static_cast<histogram*>(value);
  for (std::int64_t i = b; i < e; ++i) ++h->bins[element(i) % 64];
}

// ---- scans --------------------------------------------------------------------------------

template <class T>
struct scan_state {
  td_reduce_op op;
  bool inclusive;
  std::vector<T> out;
  std::atomic<int> first_passes{0};
  std::atomic<int> final_passes{0};
};

template <class T>
void scan_body(std::int64_t b, std::int64_t e, void* update, int final_pass, void* user) {
  auto* s = static_cast<scan_state<T>*>(user);
  (final_pass ? s->final_passes : s->first_passes).fetch_add(1);
  T acc;
  std::memcpy(&acc, update, sizeof acc);
  for (std::int64_t i = b; i < e; ++i) {
    if (final_pass && !s->inclusive) s->out[static_cast<std::size_t>(i)] = acc;
    acc = taskdag_test::combine(s->op, acc, value_of<T>(s->op, i));
    if (final_pass && s->inclusive) s->out[static_cast<std::size_t>(i)] = acc;
  }
  std::memcpy(update, &acc, sizeof acc);
}

template <class T>
void check_builtin_scan(td_reduce_op op, std::int64_t n) {
  const std::string type_name = scalar<T>::name, op_name = taskdag_test::op_name(op);
  CAPTURE(type_name);
  CAPTURE(op_name);
  for (bool inclusive : {true, false}) {
    CAPTURE(inclusive);
    std::vector<T> expected(static_cast<std::size_t>(n));
    T running = taskdag_test::identity<T>(op);
    for (std::int64_t i = 0; i < n; ++i) {
      if (!inclusive) expected[static_cast<std::size_t>(i)] = running;
      running = taskdag_test::combine(op, running, value_of<T>(op, i));
      if (inclusive) expected[static_cast<std::size_t>(i)] = running;
    }
    for (const space_ref& space : both_spaces()) {
      scan_state<T> state{op, inclusive, std::vector<T>(static_cast<std::size_t>(n)), {}, {}};
      // The chunk size is ignored by scans: each thread scans one contiguous block.
      const td_range_policy policy = range(0, n, 64);
      T total{};
      REQUIRE(td_parallel_scan(space, &policy, scan_body<T>, &state, op, scalar<T>::type,
                               &total) == TD_OK);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const bool same = std::is_integral_v<T> || op != TD_REDUCE_SUM
                              ? state.out[i] == expected[i]
                              : std::fabs(static_cast<double>(state.out[i] - expected[i])) <=
                                    1e-9 * std::fabs(static_cast<double>(expected[i])) + 1e-9;
        if (!same && ++wrong <= 3) FAIL_CHECK("index " << i << ": " << state.out[i] << " != " << expected[i]);
      }
      CHECK(wrong == 0);
      if (std::is_integral_v<T> || op != TD_REDUCE_SUM) CHECK(total == running);
      // Two passes over the same split: as many final calls as first ones.
      CHECK(state.final_passes.load() == state.first_passes.load());
      CHECK(state.final_passes.load() <= static_cast<int>(concurrency(space)));
    }
  }
}

struct hash_scan_state {
  std::vector<std::uint64_t> out;
};

void hash_scan_body(std::int64_t b, std::int64_t e, void* update, int final_pass, void* user) {
  auto* s = static_cast<hash_scan_state*>(user);
  auto* h = static_cast<sequence_hash*>(update);
  for (std::int64_t i = b; i < e; ++i) {
    if (final_pass) s->out[static_cast<std::size_t>(i)] = h->hash;  // exclusive
    hash_fold(*h, element(i));
  }
}

// ---- bad input ----------------------------------------------------------------------------

void noop_range(std::int64_t, std::int64_t, void*) {}
void noop_reduce(std::int64_t, std::int64_t, void*, void*) {}
void noop_scan(std::int64_t, std::int64_t, void*, int, void*) {}

}  // namespace

TEST_CASE("parallel_for: the sum of begin..end-1 over the ranges equals the formula, up to 1e9") {
  for (const space_ref& space : both_spaces()) {
    const std::size_t threads = concurrency(space);
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1000},
                           std::int64_t{1000003}, std::int64_t{1000000000}}) {
      for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{4096}}) {
        if (n == 1000000000 && chunk != 0) continue;  // one pass at 1e9 is enough
        CAPTURE(n);
        CAPTURE(chunk);
        sum_state state;
        state.begin = -3;
        state.end = n - 3;
        const td_range_policy policy = range(state.begin, state.end, chunk);
        REQUIRE(td_parallel_for(space, &policy, add_range, &state) == TD_OK);
        const std::int64_t expected = n * (n - 1) / 2 - 3 * n;
        CHECK(state.sum.load() == expected);
        CHECK(state.out_of_bounds.load() == 0);
        if (chunk == 0) {
          // One contiguous block per thread, empty blocks are not called.
          CHECK(state.ranges.load() <= static_cast<std::int64_t>(threads));
          if (n >= static_cast<std::int64_t>(threads)) {
            CHECK(state.ranges.load() == static_cast<std::int64_t>(threads));
          }
        } else {
          CHECK(state.ranges.load() == (n + 4095) / 4096);
        }
      }
    }
  }
}

TEST_CASE("parallel_reduce: an int64 sum of 0..1e9-1 equals the formula") {
  for (const space_ref& space : both_spaces()) {
    const std::int64_t n = 1000000000;
    const td_range_policy policy = range(0, n);
    std::int64_t sum = -1;
    REQUIRE(td_parallel_reduce(
                space, &policy,
                [](std::int64_t b, std::int64_t e, void* value, void*) {
                  std::int64_t acc = *static_cast<std::int64_t*>(value);
                  for (std::int64_t i = b; i < e; ++i) acc += i;
                  *static_cast<std::int64_t*>(value) = acc;
                },
                nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum) == TD_OK);
    CHECK(sum == n * (n - 1) / 2);
  }
}

TEST_CASE("parallel_for visits every index exactly once, with and without chunks") {
  for (const space_ref& space : both_spaces()) {
    for (std::uint64_t chunk : {0, 1, 7, 1000, 1000000}) {
      CAPTURE(chunk);
      hits_state state(-50, 100003);
      const td_range_policy policy = range(-50, 100003, chunk);
      REQUIRE(td_parallel_for(space, &policy, count_hits, &state) == TD_OK);
      std::size_t wrong = 0;
      for (const auto& h : state.hits) wrong += h.load() != 1;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("parallel_for runs on the space's threads and inside a parallel region") {
  CHECK(td_in_parallel() == 0);
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  struct seen_state {
    std::mutex mutex;
    std::set<std::int64_t> ranks;
    std::atomic<int> outside{0};
    taskdag_test::block_rendezvous rendezvous;
    int others;
  } seen;
  seen.others = static_cast<int>(threads) - 1;
  const td_range_policy policy = range(0, 1000);
  REQUIRE(td_parallel_for(
              space, &policy,
              [](std::int64_t, std::int64_t, void* user) {
                auto* s = static_cast<seen_state*>(user);
                if (td_in_parallel() != 1) s->outside.fetch_add(1);
                {
                  std::lock_guard<std::mutex> lock(s->mutex);
                  s->ranks.insert(td_thread_pool_rank());
                }
                s->rendezvous.arrive_or_wait(td_thread_pool_rank() == 0, s->others);
              },
              &seen) == TD_OK);
  CHECK(seen.outside.load() == 0);
  CHECK(seen.ranks.size() == threads);
  CHECK(*seen.ranks.begin() == 0);
  CHECK(*seen.ranks.rbegin() == static_cast<std::int64_t>(threads) - 1);
  CHECK(td_in_parallel() == 0);
}

TEST_CASE("a range policy's mask uses the ceiling of the fraction of the threads") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  for (double fraction : {1.0, 0.5, 0.01, 1.0 / static_cast<double>(threads)}) {
    CAPTURE(fraction);
    const auto expected = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::ceil(static_cast<double>(threads) * fraction)));
    struct rank_set {
      std::mutex mutex;
      std::set<std::int64_t> ranks;
      taskdag_test::block_rendezvous rendezvous;
      int others;
    } seen;
    seen.others = static_cast<int>(expected) - 1;
    const td_range_policy policy = range(0, 100000, 0, fraction);
    REQUIRE(td_parallel_for(
                space, &policy,
                [](std::int64_t, std::int64_t, void* user) {
                  auto* s = static_cast<rank_set*>(user);
                  {
                    std::lock_guard<std::mutex> lock(s->mutex);
                    s->ranks.insert(td_thread_pool_rank());
                  }
                  s->rendezvous.arrive_or_wait(td_thread_pool_rank() == 0, s->others);
                },
                &seen) == TD_OK);
    CHECK(seen.ranks.size() == expected);
  }
  // 0 means all threads, as TD_RANGE_POLICY_INIT's 1.0 does.
  sum_state state;
  state.end = 10;
  const td_range_policy all = range(0, 10, 0, 0.0);
  CHECK(td_parallel_for(space, &all, add_range, &state) == TD_OK);
  CHECK(state.sum.load() == 45);
}

TEST_CASE("built-in reductions are right and repeat bit for bit: int32") {
  check_builtin_reductions<std::int32_t>(100003);
}
TEST_CASE("built-in reductions are right and repeat bit for bit: int64") {
  check_builtin_reductions<std::int64_t>(100003);
}
TEST_CASE("built-in reductions are right and repeat bit for bit: float") {
  check_builtin_reductions<float>(100003);
}
TEST_CASE("built-in reductions are right and repeat bit for bit: double") {
  check_builtin_reductions<double>(100003);
}

TEST_CASE("min and max ignore a thread's NaN, and an empty range gives the identity") {
  const space_ref space = taskdag_test::threads_space();
  if (concurrency(space) >= 2) {
    // The block starting at 0 (rank 0's) reduces to NaN; the join skips it.
    const td_range_policy policy = range(0, 1000);
    double max = 0;
    REQUIRE(td_parallel_reduce(
                space, &policy,
                [](std::int64_t b, std::int64_t e, void* value, void*) {
                  double* acc = static_cast<double*>(value);
                  for (std::int64_t i = b; i < e; ++i) *acc = std::max(*acc, static_cast<double>(i));
                  if (b == 0) *acc = std::nan("");
                },
                nullptr, TD_REDUCE_MAX, TD_SCALAR_DOUBLE, &max) == TD_OK);
    CHECK(max == 999.0);
  }
  const td_range_policy empty = range(5, 5);
  for (td_reduce_op op : {TD_REDUCE_SUM, TD_REDUCE_MIN, TD_REDUCE_MAX, TD_REDUCE_PROD}) {
    const std::string op_name = taskdag_test::op_name(op);
    CAPTURE(op_name);
    std::int32_t i32 = 12345;
    REQUIRE(td_parallel_reduce(space, &empty, noop_reduce, nullptr, op, TD_SCALAR_INT32, &i32) ==
            TD_OK);
    CHECK(i32 == taskdag_test::identity<std::int32_t>(op));
    float f = 12345;
    REQUIRE(td_parallel_reduce(space, &empty, noop_reduce, nullptr, op, TD_SCALAR_FLOAT, &f) ==
            TD_OK);
    CHECK(f == taskdag_test::identity<float>(op));
  }
}

TEST_CASE("a custom reducer joins in index order and repeats bit for bit") {
  sequence_hash serial{0, 1};
  const std::int64_t n = 200003;
  for (std::int64_t i = 0; i < n; ++i) hash_fold(serial, element(i));
  for (const space_ref& space : both_spaces()) {
    hash_user user;
    const td_reducer reducer = hash_reducer(&user);
    const td_range_policy policy = range(0, n);
    for (int repeat = 0; repeat < 20; ++repeat) {
      sequence_hash result{42, 42};
      REQUIRE(td_parallel_reduce_custom(space, &policy, hash_body, nullptr, &reducer, &result) ==
              TD_OK);
      CHECK(result.hash == serial.hash);
      CHECK(result.power == serial.power);
    }
    // Each thread's value and the result start from init; every value is joined into the result.
    CHECK(user.inits.load() >= 20 * 2);
    CHECK(user.joins.load() >= 20);
  }
}

TEST_CASE("a commutative custom reducer larger than 256 bytes works with chunks") {
  histogram serial{};
  const std::int64_t n = 100000;
  for (std::int64_t i = 0; i < n; ++i) ++serial.bins[element(i) % 64];
  td_reducer reducer = TD_REDUCER_INIT;
  reducer.value_size = sizeof(histogram);
  reducer.init = histogram_init;
  reducer.join = histogram_join;
  for (const space_ref& space : both_spaces()) {
    for (std::uint64_t chunk : {0, 333}) {
      CAPTURE(chunk);
      const td_range_policy policy = range(0, n, chunk);
      histogram result;
      std::memset(&result, 0xff, sizeof result);
      REQUIRE(td_parallel_reduce_custom(space, &policy, histogram_body, nullptr, &reducer,
                                        &result) == TD_OK);
      CHECK(std::memcmp(&result, &serial, sizeof result) == 0);
    }
  }
}

TEST_CASE("built-in scans match a serial scan, inclusive and exclusive") {
  check_builtin_scan<std::int64_t>(TD_REDUCE_SUM, 100003);
  check_builtin_scan<std::int32_t>(TD_REDUCE_SUM, 100003);
  check_builtin_scan<std::int32_t>(TD_REDUCE_MAX, 100003);
  check_builtin_scan<float>(TD_REDUCE_MIN, 100003);
  check_builtin_scan<double>(TD_REDUCE_SUM, 100003);
  check_builtin_scan<std::int64_t>(TD_REDUCE_PROD, 5000);
  check_builtin_scan<std::int64_t>(TD_REDUCE_SUM, 0);
  check_builtin_scan<std::int64_t>(TD_REDUCE_SUM, 1);
}

TEST_CASE("a custom scan matches a serial scan in index order") {
  const std::int64_t n = 100003;
  std::vector<std::uint64_t> expected(n);
  sequence_hash running{0, 1};
  for (std::int64_t i = 0; i < n; ++i) {
    expected[static_cast<std::size_t>(i)] = running.hash;
    hash_fold(running, element(i));
  }
  for (const space_ref& space : both_spaces()) {
    hash_user user;
    const td_reducer reducer = hash_reducer(&user);
    hash_scan_state state{std::vector<std::uint64_t>(n)};
    const td_range_policy policy = range(0, n);
    sequence_hash total{0, 0};
    REQUIRE(td_parallel_scan_custom(space, &policy, hash_scan_body, &state, &reducer, &total) ==
            TD_OK);
    CHECK(state.out == expected);
    CHECK(total.hash == running.hash);
    CHECK(total.power == running.power);
    // The total is optional.
    CHECK(td_parallel_scan_custom(space, &policy, hash_scan_body, &state, &reducer, nullptr) ==
          TD_OK);
    CHECK(state.out == expected);
  }
}

TEST_CASE("dispatch functions reject bad input with a status and a message") {
  const space_ref space = taskdag_test::threads_space();
  const td_range_policy policy = range(0, 10);
  std::int64_t result = 0;
  hash_user user;
  const td_reducer reducer = hash_reducer(&user);

  SUBCASE("NULL space, policy, body, result, reducer") {
    CHECK_FAILS(td_parallel_for(nullptr, &policy, noop_range, nullptr), TD_ERROR_NULL_ARGUMENT,
                "td_parallel_for", "space");
    CHECK_FAILS(td_parallel_for(space, nullptr, noop_range, nullptr), TD_ERROR_NULL_ARGUMENT,
                "policy");
    CHECK_FAILS(td_parallel_for(space, &policy, nullptr, nullptr), TD_ERROR_NULL_ARGUMENT, "body");
    CHECK_FAILS(td_parallel_reduce(nullptr, &policy, noop_reduce, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, &result),
                TD_ERROR_NULL_ARGUMENT, "td_parallel_reduce", "space");
    CHECK_FAILS(td_parallel_reduce(space, nullptr, noop_reduce, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, &result),
                TD_ERROR_NULL_ARGUMENT, "policy");
    CHECK_FAILS(td_parallel_reduce(space, &policy, nullptr, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, &result),
                TD_ERROR_NULL_ARGUMENT, "body");
    CHECK_FAILS(td_parallel_reduce(space, &policy, noop_reduce, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, nullptr),
                TD_ERROR_NULL_ARGUMENT, "result");
    CHECK_FAILS(td_parallel_reduce_custom(space, &policy, hash_body, nullptr, nullptr, &result),
                TD_ERROR_NULL_ARGUMENT, "td_parallel_reduce_custom", "reducer");
    CHECK_FAILS(td_parallel_reduce_custom(space, &policy, hash_body, nullptr, &reducer, nullptr),
                TD_ERROR_NULL_ARGUMENT, "result");
    CHECK_FAILS(td_parallel_scan(nullptr, &policy, noop_scan, nullptr, TD_REDUCE_SUM,
                                 TD_SCALAR_INT64, &result),
                TD_ERROR_NULL_ARGUMENT, "td_parallel_scan", "space");
    CHECK_FAILS(td_parallel_scan(space, &policy, nullptr, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64,
                                 &result),
                TD_ERROR_NULL_ARGUMENT, "body");
    CHECK_FAILS(td_parallel_scan_custom(space, &policy, noop_scan, nullptr, nullptr, &result),
                TD_ERROR_NULL_ARGUMENT, "td_parallel_scan_custom", "reducer");
    CHECK_FAILS(td_parallel_scan_custom(space, nullptr, noop_scan, nullptr, &reducer, &result),
                TD_ERROR_NULL_ARGUMENT, "policy");
  }

  SUBCASE("struct_size of a policy or a reducer that this library does not know") {
    td_range_policy bad = policy;
    for (std::size_t size : {std::size_t{0}, sizeof(td_range_policy) - 8,
                             sizeof(td_range_policy) + 8}) {
      CAPTURE(size);
      bad.struct_size = size;
      CHECK_FAILS(td_parallel_for(space, &bad, noop_range, nullptr), TD_ERROR_STRUCT_SIZE,
                  "policy->struct_size", std::to_string(size), "TD_RANGE_POLICY_INIT");
      CHECK_FAILS(td_parallel_reduce(space, &bad, noop_reduce, nullptr, TD_REDUCE_SUM,
                                     TD_SCALAR_INT64, &result),
                  TD_ERROR_STRUCT_SIZE, "policy->struct_size");
      CHECK_FAILS(td_parallel_scan(space, &bad, noop_scan, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, &result),
                  TD_ERROR_STRUCT_SIZE, "policy->struct_size");
    }
    td_reducer bad_reducer = reducer;
    bad_reducer.struct_size = 3;
    CHECK_FAILS(td_parallel_reduce_custom(space, &policy, hash_body, nullptr, &bad_reducer,
                                          &result),
                TD_ERROR_STRUCT_SIZE, "reducer->struct_size", "TD_REDUCER_INIT");
    CHECK_FAILS(td_parallel_scan_custom(space, &policy, noop_scan, nullptr, &bad_reducer,
                                        &result),
                TD_ERROR_STRUCT_SIZE, "reducer->struct_size");
  }

  SUBCASE("unknown operator or scalar type") {
    for (int op : {-1, 4, 99}) {
      CAPTURE(op);
      CHECK_FAILS(td_parallel_reduce(space, &policy, noop_reduce, nullptr, op, TD_SCALAR_INT64,
                                     &result),
                  TD_ERROR_INVALID_ARGUMENT, "`op`", std::to_string(op), "TD_REDUCE_SUM");
      CHECK_FAILS(td_parallel_scan(space, &policy, noop_scan, nullptr, op, TD_SCALAR_INT64,
                                   &result),
                  TD_ERROR_INVALID_ARGUMENT, "`op`", "TD_REDUCE_PROD");
    }
    for (int type : {-1, 4, 99}) {
      CAPTURE(type);
      CHECK_FAILS(td_parallel_reduce(space, &policy, noop_reduce, nullptr, TD_REDUCE_SUM, type,
                                     &result),
                  TD_ERROR_INVALID_ARGUMENT, "`type`", std::to_string(type), "TD_SCALAR_DOUBLE");
      CHECK_FAILS(td_parallel_scan(space, &policy, noop_scan, nullptr, TD_REDUCE_SUM, type,
                                   &result),
                  TD_ERROR_INVALID_ARGUMENT, "`type`", "TD_SCALAR_INT32");
    }
  }

  SUBCASE("custom reducers without callbacks or size") {
    td_reducer no_init = reducer;
    no_init.init = nullptr;
    td_reducer no_join = reducer;
    no_join.join = nullptr;
    td_reducer no_size = reducer;
    no_size.value_size = 0;
    for (const td_reducer* r : {&no_init, &no_join}) {
      CHECK_FAILS(td_parallel_reduce_custom(space, &policy, hash_body, nullptr, r, &result),
                  TD_ERROR_INVALID_ARGUMENT, "reducer->init", "reducer->join");
      CHECK_FAILS(td_parallel_scan_custom(space, &policy, noop_scan, nullptr, r, &result),
                  TD_ERROR_INVALID_ARGUMENT, "required");
    }
    CHECK_FAILS(td_parallel_reduce_custom(space, &policy, hash_body, nullptr, &no_size, &result),
                TD_ERROR_INVALID_ARGUMENT, "reducer->value_size", "0");
  }

  SUBCASE("end < begin, and masks outside (0, 1]") {
    const td_range_policy reversed = range(5, 4);
    CHECK_FAILS(td_parallel_for(space, &reversed, noop_range, nullptr), TD_ERROR_INVALID_ARGUMENT,
                "td_parallel_for", "[5, 4)");
    CHECK_FAILS(td_parallel_reduce(space, &reversed, noop_reduce, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, &result),
                TD_ERROR_INVALID_ARGUMENT, "[5, 4)");
    CHECK_FAILS(td_parallel_scan(space, &reversed, noop_scan, nullptr, TD_REDUCE_SUM,
                                 TD_SCALAR_INT64, &result),
                TD_ERROR_INVALID_ARGUMENT, "[5, 4)");
    CHECK_FAILS(td_parallel_reduce_custom(space, &reversed, hash_body, nullptr, &reducer, &result),
                TD_ERROR_INVALID_ARGUMENT, "[5, 4)");
    CHECK_FAILS(td_parallel_scan_custom(space, &reversed, noop_scan, nullptr, &reducer, &result),
                TD_ERROR_INVALID_ARGUMENT, "[5, 4)");
    for (double mask : {-0.5, 1.5, std::nan("")}) {
      CAPTURE(mask);
      const td_range_policy bad = range(0, 10, 0, mask);
      CHECK_FAILS(td_parallel_for(space, &bad, noop_range, nullptr), TD_ERROR_INVALID_ARGUMENT,
                  "mask", "(0, 1]");
      CHECK_FAILS(td_parallel_reduce(space, &bad, noop_reduce, nullptr, TD_REDUCE_SUM,
                                     TD_SCALAR_INT64, &result),
                  TD_ERROR_INVALID_ARGUMENT, "mask");
    }
    // Nothing ran and the result was not written.
    CHECK(result == 0);
  }

  SUBCASE("a handle that is no space, or a released one") {
    td_pool* pool = nullptr;
    const td_pool_args args = taskdag_test::pool_args(1 << 16);
    REQUIRE(td_pool_create(&args, &pool) == TD_OK);
    const auto* not_a_space = reinterpret_cast<const td_space*>(pool);
    CHECK_FAILS(td_parallel_for(not_a_space, &policy, noop_range, nullptr),
                TD_ERROR_INVALID_HANDLE, "space", "td_pool", "td_space");
    CHECK_FAILS(td_parallel_reduce(not_a_space, &policy, noop_reduce, nullptr, TD_REDUCE_SUM,
                                   TD_SCALAR_INT64, &result),
                TD_ERROR_INVALID_HANDLE, "td_pool");
    td_pool_release(pool);
    td_space* released = nullptr;
    REQUIRE(td_space_serial(&released) == TD_OK);
    REQUIRE(td_space_release(released) == TD_OK);
    CHECK_FAILS(td_parallel_for(released, &policy, noop_range, nullptr), TD_ERROR_INVALID_HANDLE,
                "already released");
    CHECK_FAILS(td_parallel_scan_custom(released, &policy, noop_scan, nullptr, &reducer, &result),
                TD_ERROR_INVALID_HANDLE, "already released");
  }
}
