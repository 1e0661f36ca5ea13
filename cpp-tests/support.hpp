// Shared helpers of the C/C++ API tests: readable statuses in doctest output, checks of the
// thread's last error, and small RAII owners for C handles.
#ifndef TASKDAG_TESTS_SUPPORT_HPP
#define TASKDAG_TESTS_SUPPORT_HPP

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

#include "taskdag.h"

namespace doctest {
template <>
struct StringMaker<td_status> {
  static String convert(td_status status) { return td_status_string(status); }
};
}  // namespace doctest

namespace taskdag_test {

inline std::string last_message() { return td_last_error_message(); }

// A pointer as messages print it, e.g. "0x7f3a2c000040".
inline std::string hex(const void* p) {
  char text[2 + 2 * sizeof(void*) + 1];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return text;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Checks that the thread's last error is `expected` and that its message names every one of
// `mentions` (argument names, offending values, the function).
inline void check_last_error(td_status expected, std::initializer_list<std::string> mentions) {
  CHECK(td_last_error() == expected);
  const std::string message = last_message();
  CHECK_FALSE(message.empty());
  CHECK(message != "no error");
  for (const std::string& part : mentions) {
    CHECK_MESSAGE(contains(message, part), "expected \"" << part << "\" in: " << message);
  }
}

// CHECK_FAILS(call, status, "mention", ...): the call returns `status`, which is also the last
// error, and the message names each mention.
#define CHECK_FAILS(call, status, ...)                            \
  do {                                                            \
    const td_status check_fails_result_ = (call);                 \
    CHECK(check_fails_result_ == (status));                       \
    ::taskdag_test::check_last_error((status), {__VA_ARGS__});    \
  } while (0)

inline td_pool_args pool_args(std::size_t total, std::size_t min_block = 64,
                              std::size_t max_block = 4096, std::size_t superblock = 0) {
  td_pool_args args = TD_POOL_ARGS_INIT;
  args.min_total_alloc_size = total;
  args.min_block_alloc_size = min_block;
  args.max_block_alloc_size = max_block;
  args.min_superblock_size = superblock;
  return args;
}

// Owns one reference to a pool made with the C API; REQUIREs that creation succeeds.
class pool_ref {
public:
  explicit pool_ref(const td_pool_args& args) {
    const td_status status = td_pool_create(&args, &pool_);
    INFO(last_message());
    REQUIRE(status == TD_OK);
    REQUIRE(pool_ != nullptr);
  }
  explicit pool_ref(std::size_t total, std::size_t min_block = 64, std::size_t max_block = 4096,
                    std::size_t superblock = 0)
      : pool_ref(pool_args(total, min_block, max_block, superblock)) {}
  pool_ref(const pool_ref&) = delete;
  pool_ref& operator=(const pool_ref&) = delete;
  ~pool_ref() { td_pool_release(pool_); }

  td_pool* get() const { return pool_; }
  operator td_pool*() const { return pool_; }

private:
  td_pool* pool_ = nullptr;
};

inline td_pool_stats statistics(const td_pool* pool) {
  td_pool_stats stats = TD_POOL_STATS_INIT;
  const td_status status = td_pool_usage_statistics(pool, &stats);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return stats;
}

inline bool same_statistics(const td_pool_stats& a, const td_pool_stats& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

inline std::size_t next_power_of_two(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace taskdag_test

#endif  // TASKDAG_TESTS_SUPPORT_HPP
