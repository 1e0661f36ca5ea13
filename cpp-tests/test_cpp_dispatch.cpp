// The C++ layer of spaces and dispatch (taskdag.hpp): taskdag::space, parallel_for,
// parallel_reduce, parallel_scan and the scan helpers, parallel_team with team_member, lambdas
// of every kind, errors as taskdag::error and exceptions from bodies.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support.hpp"
#include "taskdag.hpp"

using taskdag::index_t;

namespace {

std::vector<taskdag::space> both_spaces() {
  std::vector<taskdag::space> spaces;
  spaces.push_back(taskdag::space::serial());
  spaces.push_back(taskdag::space::threads());
  return spaces;
}

// Runs `f`, which must throw taskdag::error with `status`; returns its message.
template <class F>
std::string expect_error(F&& f, td_status status) {
  try {
    f();
  } catch (const taskdag::error& e) {
    CHECK(e.status() == status);
    return e.what();
  }
  FAIL_CHECK("no taskdag::error was thrown");
  return {};
}

struct arg_max {
  double value;
  index_t index;
};

struct sequence_hash {
  std::uint64_t hash, power;
};
constexpr std::uint64_t hash_base = 1000003;

void hash_join(sequence_hash& d, const sequence_hash& s) {
  d.hash = d.hash * s.power + s.hash;
  d.power *= s.power;
}

}  // namespace

TEST_CASE("taskdag::space wraps the Serial space and the Threads instance") {
  const taskdag::space serial = taskdag::space::serial();
  const taskdag::space threads = taskdag::space::threads();
  CHECK(serial.kind() == TD_EXEC_SERIAL);
  CHECK(threads.kind() == TD_EXEC_THREADS);
  CHECK(serial.concurrency() == 1);
  const std::size_t n = threads.concurrency();
  CHECK(n >= 1);
  CHECK(n <= taskdag::max_hardware_threads());
  CHECK(threads.thread_pool_size(0) == n);
  CHECK(threads.thread_pool_size(1) >= 1);
  threads.fence();
  CHECK(threads.mask(0.5).concurrency() == (n + 1) / 2);
  CHECK(threads.mask(0.5).mask(0.5).concurrency() == ((n + 1) / 2 + 1) / 2);
  const taskdag::space again = threads.share();
  CHECK(again.concurrency() == n);
  CHECK(taskdag::thread_pool_rank() == 0);
  CHECK_FALSE(taskdag::in_parallel());

  taskdag::space moved = taskdag::space::threads();
  taskdag::space target = std::move(moved);
  CHECK_FALSE(moved);
  CHECK(target);
  expect_error([&] { (void)moved.concurrency(); }, TD_ERROR_NULL_ARGUMENT);
  const std::string message = expect_error([&] { (void)threads.mask(1.5); },
                                           TD_ERROR_INVALID_ARGUMENT);
  CHECK(taskdag_test::contains(message, "(0, 1]"));
  td_space* raw = target.detach();
  const taskdag::space adopted = taskdag::space::adopt(raw);
  CHECK(adopted.get() == raw);
}

TEST_CASE("parallel_for calls the lambda for every index, in each form") {
  for (const taskdag::space& s : both_spaces()) {
    std::vector<std::atomic<int>> hits(100003);
    taskdag::parallel_for(s, 0, static_cast<index_t>(hits.size()),
                          [&](index_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
    taskdag::parallel_for(s, taskdag::range_policy(0, 100003).chunk_size(17),
                          [&hits](index_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
    std::atomic<index_t> ranges{0};
    taskdag::parallel_for_ranges(s, taskdag::range_policy(0, 100003).chunk_size(1000),
                                 [&](index_t b, index_t e) {
                                   ranges.fetch_add(1);
                                   for (index_t i = b; i < e; ++i) {
                                     hits[static_cast<std::size_t>(i)].fetch_add(1);
                                   }
                                 });
    CHECK(ranges.load() == 101);
    std::size_t wrong = 0;
    for (const auto& h : hits) wrong += h.load() != 3;
    CHECK(wrong == 0);
  }
  // A mutable lambda object and a std::function work as bodies too.
  const taskdag::space threads = taskdag::space::threads();
  std::atomic<index_t> sum{0};
  std::function<void(index_t)> add = [&](index_t i) { sum.fetch_add(i); };
  taskdag::parallel_for(threads, 0, 1000, add);
  CHECK(sum.load() == 499500);
  // A policy mask uses fewer threads.
  std::mutex mutex;
  std::set<index_t> ranks;
  taskdag::parallel_for(threads, taskdag::range_policy(0, 1000).mask(0.01), [&](index_t) {
    std::lock_guard<std::mutex> lock(mutex);
    ranks.insert(taskdag::thread_pool_rank());
  });
  CHECK(ranks.size() == 1);
}

TEST_CASE("parallel_reduce: built-in operators by tag, deterministic, and the 1e9 formula") {
  const taskdag::space threads = taskdag::space::threads();
  std::int64_t sum = 0;
  taskdag::parallel_reduce(threads, 0, 1000000000, [](index_t i, std::int64_t& acc) { acc += i; },
                           sum);
  CHECK(sum == 499999999500000000);
  for (const taskdag::space& s : both_spaces()) {
    std::int32_t max = 0, min = 0, prod = 0;
    const auto value = [](index_t i) { return static_cast<std::int32_t>((i * 7919) % 2003 - 1000); };
    taskdag::parallel_reduce(s, 0, 100000, [&](index_t i, std::int32_t& acc) { acc = std::max(acc, value(i)); },
                             max, taskdag::op::max);
    taskdag::parallel_reduce(s, taskdag::range_policy(0, 100000).chunk_size(99),
                             [&](index_t i, std::int32_t& acc) { acc = std::min(acc, value(i)); }, min,
                             taskdag::op::min);
    taskdag::parallel_reduce(s, 0, 40, [](index_t i, std::int32_t& acc) { acc *= i % 4 == 0 ? 2 : 1; },
                             prod, taskdag::op::prod);
    CHECK(max == 1002);
    CHECK(min == -1000);
    CHECK(prod == 1024);
    float fsum = 0;
    taskdag::parallel_reduce(s, 0, 1000, [](index_t i, float& acc) { acc += 0.5f * static_cast<float>(i % 3); },
                             fsum);
    CHECK(fsum == 499.5f);
    // Floating-point sums repeat bit for bit.
    double first = 0;
    const auto body = [](index_t i, double& acc) { acc += 1.0 / (1.0 + static_cast<double>(i)); };
    taskdag::parallel_reduce(s, 0, 100000, body, first);
    for (int repeat = 0; repeat < 20; ++repeat) {
      double again = 0;
      taskdag::parallel_reduce(s, 0, 100000, body, again);
      CHECK(again == first);
    }
  }
}

TEST_CASE("parallel_reduce with an identity and a join lambda, in index order") {
  for (const taskdag::space& s : both_spaces()) {
    const auto value = [](index_t i) { return std::sin(static_cast<double>(i) * 0.001) * static_cast<double>(i % 97); };
    arg_max best{};
    taskdag::parallel_reduce(
        s, 0, 100000,
        [&](index_t i, arg_max& acc) {
          if (value(i) > acc.value) acc = arg_max{value(i), i};
        },
        best, arg_max{-1e300, -1},
        [](arg_max& dst, const arg_max& src) {
          if (src.value > dst.value) dst = src;
        });
    index_t expected = 0;
    for (index_t i = 1; i < 100000; ++i) {
      if (value(i) > value(expected)) expected = i;
    }
    CHECK(best.index == expected);
    CHECK(best.value == value(expected));

    sequence_hash serial{0, 1};
    for (index_t i = 0; i < 50000; ++i) hash_join(serial, sequence_hash{static_cast<std::uint64_t>(i % 101), hash_base});
    sequence_hash h{};
    taskdag::parallel_reduce(
        s, 0, 50000,
        [](index_t i, sequence_hash& acc) {
          hash_join(acc, sequence_hash{static_cast<std::uint64_t>(i % 101), hash_base});
        },
        h, sequence_hash{0, 1}, hash_join);
    CHECK(h.hash == serial.hash);
    CHECK(h.power == serial.power);
  }
}

TEST_CASE("parallel_scan and the inclusive/exclusive helpers match a serial scan") {
  const index_t n = 100003;
  std::vector<std::int64_t> values(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = (i * 31) % 17 - 8;
  std::vector<std::int64_t> inclusive(values.size()), exclusive(values.size());
  std::partial_sum(values.begin(), values.end(), inclusive.begin());
  std::exclusive_scan(values.begin(), values.end(), exclusive.begin(), std::int64_t{0});
  for (const taskdag::space& s : both_spaces()) {
    std::vector<std::int64_t> out(values.size());
    const std::int64_t total = taskdag::parallel_scan<std::int64_t>(
        s, 0, n, [&](index_t i, std::int64_t& update, bool final_pass) {
          update += values[static_cast<std::size_t>(i)];
          if (final_pass) out[static_cast<std::size_t>(i)] = update;
        });
    CHECK(out == inclusive);
    CHECK(total == inclusive.back());

    std::vector<std::int64_t> incl(values.size()), excl(values.size());
    const auto value = [&](index_t i) { return values[static_cast<std::size_t>(i)]; };
    CHECK(taskdag::inclusive_scan<std::int64_t>(
              s, 0, n, value, [&](index_t i, std::int64_t v) { incl[static_cast<std::size_t>(i)] = v; }) ==
          inclusive.back());
    CHECK(taskdag::exclusive_scan<std::int64_t>(
              s, 0, n, value, [&](index_t i, std::int64_t v) { excl[static_cast<std::size_t>(i)] = v; }) ==
          inclusive.back());
    CHECK(incl == inclusive);
    CHECK(excl == exclusive);

    // A running maximum with the op tag, and a custom (non-commutative) scan.
    std::vector<std::int32_t> running(values.size());
    taskdag::inclusive_scan<std::int32_t>(
        s, 0, n, [&](index_t i) { return static_cast<std::int32_t>(values[static_cast<std::size_t>(i)] * i % 1000); },
        [&](index_t i, std::int32_t v) { running[static_cast<std::size_t>(i)] = v; }, taskdag::op::max);
    std::int32_t m = std::numeric_limits<std::int32_t>::lowest();
    std::size_t wrong = 0;
    for (index_t i = 0; i < n; ++i) {
      m = std::max(m, static_cast<std::int32_t>(values[static_cast<std::size_t>(i)] * i % 1000));
      wrong += running[static_cast<std::size_t>(i)] != m;
    }
    CHECK(wrong == 0);
    std::vector<std::uint64_t> prefix(values.size());
    const sequence_hash total_hash = taskdag::parallel_scan<sequence_hash>(
        s, 0, n,
        [&](index_t i, sequence_hash& update, bool final_pass) {
          if (final_pass) prefix[static_cast<std::size_t>(i)] = update.hash;
          hash_join(update, sequence_hash{static_cast<std::uint64_t>(i % 7), hash_base});
        },
        sequence_hash{0, 1}, hash_join);
    sequence_hash serial{0, 1};
    for (index_t i = 0; i < n; ++i) {
      wrong += prefix[static_cast<std::size_t>(i)] != serial.hash;
      hash_join(serial, sequence_hash{static_cast<std::uint64_t>(i % 7), hash_base});
    }
    CHECK(wrong == 0);
    CHECK(total_hash.hash == serial.hash);
  }
}

TEST_CASE("parallel_team gives each member a team_member with the whole member API") {
  const taskdag::space threads = taskdag::space::threads();
  const auto n = static_cast<index_t>(threads.concurrency());
  for (index_t team_size = 1; team_size <= n; ++team_size) {
    CAPTURE(team_size);
    std::mutex mutex;
    std::vector<std::string> failures;
    const auto fail = [&](const std::string& what) {
      std::lock_guard<std::mutex> lock(mutex);
      failures.push_back(what);
    };
    std::vector<std::atomic<int>> entries(9);
    std::vector<std::atomic<int>> covered(9 * 100);
    taskdag::parallel_team(threads, 9, team_size, sizeof(double) * static_cast<std::size_t>(team_size),
                           [&](const taskdag::team_member& m) {
      const index_t r = m.rank(), size = m.size(), l = m.league_rank();
      entries[static_cast<std::size_t>(l)].fetch_add(1);
      if (size != team_size || m.league_size() != 9) fail("sizes");
      if (m.scratch_bytes() != sizeof(double) * static_cast<std::size_t>(team_size)) fail("scratch bytes");
      double* scratch = m.scratch<double>();
      for (int it = 0; it < 100; ++it) {
        scratch[r] = static_cast<double>(l * 1000 + it + r);
        m.barrier();
        for (index_t k = 0; k < size; ++k) {
          if (scratch[k] != static_cast<double>(l * 1000 + it + k)) fail("scratch after barrier");
        }
        m.barrier();
      }
      if (m.reduce(r + 1) != size * (size + 1) / 2) fail("reduce sum");
      if (m.reduce(static_cast<double>(r), taskdag::op::max) != static_cast<double>(size - 1)) fail("reduce max");
      sequence_hash mine{static_cast<std::uint64_t>(r + 1), hash_base}, expected{0, 1};
      for (index_t k = 0; k < size; ++k) hash_join(expected, sequence_hash{static_cast<std::uint64_t>(k + 1), hash_base});
      const sequence_hash joined = m.reduce(mine, sequence_hash{0, 1}, hash_join);
      if (joined.hash != expected.hash) fail("custom team reduce order");
      std::int64_t total = 0;
      if (m.scan(std::int64_t{1}, false, total) != r || total != size) fail("exclusive scan");
      if (m.scan(std::int32_t{2}, true) != 2 * (r + 1)) fail("inclusive scan");
      if (m.scan(static_cast<float>(r), true, taskdag::op::min) != 0.0f) fail("min scan");
      struct pair {
        int a;
        double b;
      };
      const pair p = m.broadcast(pair{static_cast<int>(r), 0.5 * static_cast<double>(r)}, size - 1);
      if (p.a != size - 1 || p.b != 0.5 * static_cast<double>(size - 1)) fail("broadcast");
      m.parallel_for(0, 100, [&](index_t i) { covered[static_cast<std::size_t>(l * 100 + i)].fetch_add(1); });
      if (m.parallel_reduce<std::int64_t>(0, 100, [](index_t i, std::int64_t& acc) { acc += i; }) != 4950) {
        fail("team parallel_reduce");
      }
      if (m.parallel_reduce<double>(0, 100, [](index_t i, double& acc) { acc = std::min(acc, static_cast<double>(i)); },
                                    taskdag::op::min) != 0.0) {
        fail("team parallel_reduce min");
      }
      const sequence_hash team_hash = m.parallel_reduce(
          0, 100, [](index_t i, sequence_hash& acc) { hash_join(acc, sequence_hash{static_cast<std::uint64_t>(i), hash_base}); },
          sequence_hash{0, 1}, hash_join);
      sequence_hash serial{0, 1};
      for (index_t i = 0; i < 100; ++i) hash_join(serial, sequence_hash{static_cast<std::uint64_t>(i), hash_base});
      if (team_hash.hash != serial.hash) fail("custom team parallel_reduce");
      if (!taskdag::in_parallel()) fail("in_parallel");
    });
    for (const std::string& f : failures) FAIL_CHECK(f);
    for (const auto& e : entries) CHECK(e.load() == team_size);
    CHECK(std::all_of(covered.begin(), covered.end(), [](const auto& c) { return c.load() == 1; }));
  }
}

TEST_CASE("run_instances runs a lambda per disjoint sub-instance") {
  const taskdag::space threads = taskdag::space::threads();
  const std::size_t n = threads.concurrency();
  std::vector<std::size_t> sizes = n >= 2 ? std::vector<std::size_t>{1, n - 1} : std::vector<std::size_t>{1};
  std::mutex mutex;
  std::vector<std::set<index_t>> ranks(sizes.size());
  std::vector<std::size_t> concurrency(sizes.size());
  std::vector<taskdag::space> kept;
  for (std::size_t i = 0; i < sizes.size(); ++i) kept.push_back(taskdag::space::adopt(nullptr));
  threads.run_instances(sizes, [&](taskdag::space& instance, std::size_t index) {
    concurrency[index] = instance.concurrency();
    taskdag::parallel_for(instance, 0, 10000, [&](index_t) {
      std::lock_guard<std::mutex> lock(mutex);
      ranks[index].insert(taskdag::thread_pool_rank());
    });
    kept[index] = instance.share();
  });
  std::set<index_t> all;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    CHECK(concurrency[i] == sizes[i]);
    CHECK(ranks[i].size() == sizes[i]);
    for (index_t r : ranks[i]) CHECK(all.insert(r).second);
  }
  // A kept instance answers queries but no longer dispatches (instance 0 was this thread's).
  for (const taskdag::space& k : kept) CHECK(k.concurrency() >= 1);
  const std::string message = expect_error(
      [&] { taskdag::parallel_for(kept[0], 0, 1, [](index_t) {}); }, TD_ERROR_INVALID_ARGUMENT);
  CHECK(taskdag_test::contains(message, "ended"));
  // Too many threads: taskdag::error, and no control function runs.
  bool ran = false;
  expect_error([&] { threads.run_instances({n + 1}, [&](taskdag::space&, std::size_t) { ran = true; }); },
               TD_ERROR_INVALID_ARGUMENT);
  CHECK_FALSE(ran);
}

TEST_CASE("failures throw taskdag::error and exceptions from bodies reach the caller") {
  const taskdag::space threads = taskdag::space::threads();
  expect_error([&] { taskdag::parallel_for(threads, 5, 4, [](index_t) {}); }, TD_ERROR_INVALID_ARGUMENT);
  expect_error([&] { taskdag::parallel_team(threads, 1, static_cast<index_t>(threads.concurrency()) + 1, 0,
                                            [](const taskdag::team_member&) {}); },
               TD_ERROR_INVALID_ARGUMENT);
  // From a thread that is not the control thread.
  td_status status = TD_OK;
  std::thread([&] {
    try {
      taskdag::parallel_for(threads, 0, 10, [](index_t) {});
    } catch (const taskdag::error& e) {
      status = e.status();
    }
  }).join();
  CHECK(status == TD_ERROR_WRONG_THREAD);
  // Nested dispatch inside a body on the control thread.
  const std::thread::id main = std::this_thread::get_id();
  std::atomic<int> busy{0};
  taskdag::parallel_for(threads, 0, 100, [&](index_t i) {
    if (i != 0 || std::this_thread::get_id() != main) return;
    try {
      taskdag::parallel_for(threads, 0, 10, [](index_t) {});
    } catch (const taskdag::error& e) {
      if (e.status() == TD_ERROR_BUSY) busy = 1;
    }
  });
  CHECK(busy.load() == 1);

  // A throwing body: the exception is rethrown after the dispatch; the space still works.
  std::atomic<index_t> calls{0};
  CHECK_THROWS_WITH_AS(taskdag::parallel_for(threads, 0, 1000000,
                                             [&](index_t i) {
                                               calls.fetch_add(1);
                                               if (i == 10) throw std::runtime_error("index 10");
                                             }),
                       "index 10", std::runtime_error);
  CHECK(calls.load() < 1000000);  // ranges after the throw were skipped
  std::int64_t sum = 0;
  CHECK_THROWS_AS(taskdag::parallel_reduce(threads, 0, 100,
                                           [](index_t i, std::int64_t& acc) {
                                             if (i == 99) throw std::logic_error("reduce");
                                             acc += i;
                                           },
                                           sum),
                  std::logic_error);
  CHECK(sum == 0);  // not written
  CHECK_THROWS_AS(taskdag::parallel_reduce(
                      threads, 0, 100, [](index_t i, std::int64_t& acc) { acc += i; }, sum, std::int64_t{0},
                      [](std::int64_t&, const std::int64_t&) { throw std::out_of_range("join"); }),
                  std::out_of_range);
  CHECK_THROWS_AS(taskdag::parallel_team(threads, 3, 1, 0,
                                         [](const taskdag::team_member& m) {
                                           if (m.league_rank() == 1) throw std::runtime_error("team");
                                         }),
                  std::runtime_error);
  CHECK_THROWS_AS(threads.run_instances({1}, [](taskdag::space&, std::size_t) { throw std::runtime_error("control"); }),
                  std::runtime_error);
  taskdag::parallel_reduce(threads, 0, 100, [](index_t i, std::int64_t& acc) { acc += i; }, sum);
  CHECK(sum == 4950);
  // Team collectives that fail throw on every member alike.
  std::atomic<int> thrown{0};
  taskdag::parallel_team(threads, 2, static_cast<index_t>(threads.concurrency()), 0,
                         [&](const taskdag::team_member& m) {
                           try {
                             (void)m.broadcast(1, m.size());
                           } catch (const taskdag::error& e) {
                             if (e.status() == TD_ERROR_INVALID_ARGUMENT) thrown.fetch_add(1);
                           }
                         });
  CHECK(thrown.load() == 2 * static_cast<int>(threads.concurrency()));
}
