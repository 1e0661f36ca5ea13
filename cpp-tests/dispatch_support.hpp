// Helpers of the dispatch tests (spaces, policies, reductions, teams) over the C API: an owner of
// td_space references, policy builders, scalar-type traits and a thread-safe failure log for
// checks made on pool threads (doctest assertions run on the test's thread only).
#ifndef TASKDAG_TESTS_DISPATCH_SUPPORT_HPP
#define TASKDAG_TESTS_DISPATCH_SUPPORT_HPP

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "support.hpp"

namespace taskdag_test {

// Blocks of td_parallel_for and td_parallel_reduce are claimed, not assigned: the control thread
// runs every block no worker has claimed yet, so with a tiny body one thread may run them all. A
// test that needs each block on its own thread lets the control thread's block wait until the
// other `others` blocks have arrived, which the workers must then claim. It gives up after 30 s,
// so a lost wake-up fails the test's checks instead of hanging it.
struct block_rendezvous {
  std::atomic<int> arrived{0};
  void arrive_or_wait(bool is_control_thread, int others) {
    if (!is_control_thread) {
      arrived.fetch_add(1);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (arrived.load() < others && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  }
};

// Owns one reference to a td_space; REQUIREs that getting it succeeded.
class space_ref {
public:
  space_ref() = default;
  explicit space_ref(td_space* space) : space_(space) { REQUIRE(space_ != nullptr); }
  space_ref(space_ref&& other) noexcept : space_(std::exchange(other.space_, nullptr)) {}
  space_ref& operator=(space_ref&& other) noexcept {
    std::swap(space_, other.space_);
    return *this;
  }
  space_ref(const space_ref&) = delete;
  space_ref& operator=(const space_ref&) = delete;
  ~space_ref() { td_space_release(space_); }

  td_space* get() const { return space_; }
  operator td_space*() const { return space_; }
  operator const td_space*() const { return space_; }

private:
  td_space* space_ = nullptr;
};

inline space_ref threads_space() {
  td_space* space = nullptr;
  const td_status status = td_space_threads(&space);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return space_ref(space);
}

inline space_ref serial_space() {
  td_space* space = nullptr;
  const td_status status = td_space_serial(&space);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return space_ref(space);
}

inline space_ref masked(const td_space* space, double fraction) {
  td_space* out = nullptr;
  const td_status status = td_space_mask(space, fraction, &out);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return space_ref(out);
}

inline std::size_t concurrency(const td_space* space) {
  std::size_t n = 0;
  const td_status status = td_space_concurrency(space, &n);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return n;
}

inline td_range_policy range(std::int64_t begin, std::int64_t end, std::uint64_t chunk = 0,
                             double mask = 1.0) {
  td_range_policy policy = TD_RANGE_POLICY_INIT;
  policy.begin = begin;
  policy.end = end;
  policy.chunk_size = chunk;
  policy.mask = mask;
  return policy;
}

inline td_team_policy team_policy(std::int64_t league_size, std::int64_t team_size,
                                  std::size_t scratch_bytes = 0) {
  td_team_policy policy = TD_TEAM_POLICY_INIT;
  policy.league_size = league_size;
  policy.team_size = team_size;
  policy.scratch_bytes = scratch_bytes;
  return policy;
}

inline td_instance_request instance_request(std::size_t threads) {
  td_instance_request request = TD_INSTANCE_REQUEST_INIT;
  request.num_threads = threads;
  return request;
}

// The td_scalar_type of a C++ type.
template <class T>
struct scalar;
template <>
struct scalar<std::int32_t> {
  static constexpr td_scalar_type type = TD_SCALAR_INT32;
  static constexpr const char* name = "int32";
};
template <>
struct scalar<std::int64_t> {
  static constexpr td_scalar_type type = TD_SCALAR_INT64;
  static constexpr const char* name = "int64";
};
template <>
struct scalar<float> {
  static constexpr td_scalar_type type = TD_SCALAR_FLOAT;
  static constexpr const char* name = "float";
};
template <>
struct scalar<double> {
  static constexpr td_scalar_type type = TD_SCALAR_DOUBLE;
  static constexpr const char* name = "double";
};

inline const char* op_name(td_reduce_op op) {
  switch (op) {
    case TD_REDUCE_SUM: return "sum";
    case TD_REDUCE_MIN: return "min";
    case TD_REDUCE_MAX: return "max";
    case TD_REDUCE_PROD: return "prod";
    default: return "unknown";
  }
}

// a ⊕ b for a built-in operator, as the library defines it (integers wrap).
template <class T>
T combine(td_reduce_op op, T a, T b) {
  switch (op) {
    case TD_REDUCE_SUM:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      } else {
        return a + b;
      }
    case TD_REDUCE_MIN: return b < a ? b : a;
    case TD_REDUCE_MAX: return b > a ? b : a;
    default:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      } else {
        return a * b;
      }
  }
}

template <class T>
T identity(td_reduce_op op) {
  switch (op) {
    case TD_REDUCE_SUM: return T(0);
    case TD_REDUCE_PROD: return T(1);
    case TD_REDUCE_MIN:
      return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::max();
    default:
      return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::lowest();
  }
}

// Failures seen on pool threads, reported on the test's thread by report().
class failure_log {
public:
  void add(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failures_.size() < 20) failures_.push_back(std::move(what));
    ++count_;
  }
  // Records `what` with the thread's last error message unless `status` is `expected`.
  void expect(td_status status, td_status expected, const std::string& what) {
    if (status != expected) {
      add(what + ": got " + td_status_string(status) + " (" + td_last_error_message() +
          "), expected " + td_status_string(expected));
    }
  }
  std::size_t count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }
  void report() const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& f : failures_) FAIL_CHECK(f);
    CHECK(count_ == 0);
  }

private:
  mutable std::mutex mutex_;
  std::vector<std::string> failures_;
  std::size_t count_ = 0;
};

// Spins (yielding) until `done()` holds or `timeout` passes; returns whether it held.
template <class Done>
bool wait_until(Done done, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace taskdag_test

#endif  // TASKDAG_TESTS_DISPATCH_SUPPORT_HPP
