// Helpers of the work-graph tests: graphs from edge lists through the C API, owners of C
// handles, and an order checker that records when every item starts and finishes.
#ifndef TASKDAG_TESTS_WORK_GRAPH_SUPPORT_HPP
#define TASKDAG_TESTS_WORK_GRAPH_SUPPORT_HPP

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "support.hpp"

namespace taskdag_test {

// An edge "second executes after first".
using edge = std::pair<std::int64_t, std::int64_t>;

// Row offsets and entries of a graph of `n` items with the given edges, rows in edge order.
struct crs_arrays {
  std::vector<std::int64_t> row_map;
  std::vector<std::int64_t> entries;
};

inline crs_arrays arrays_from_edges(std::int64_t n, const std::vector<edge>& edges) {
  crs_arrays a;
  a.row_map.assign(static_cast<std::size_t>(n) + 1, 0);
  for (const edge& e : edges) a.row_map[static_cast<std::size_t>(e.first) + 1]++;
  for (std::int64_t i = 0; i < n; ++i) a.row_map[i + 1] += a.row_map[i];
  std::vector<std::int64_t> fill(a.row_map.begin(), a.row_map.end() - 1);
  a.entries.resize(edges.size());
  for (const edge& e : edges) a.entries[fill[e.first]++] = e.second;
  return a;
}

// Owners of one reference to a C handle.
struct crs_deleter {
  void operator()(td_crs* p) const { td_crs_release(p); }
};
struct plan_deleter {
  void operator()(td_work_graph* p) const { td_work_graph_release(p); }
};
struct space_deleter {
  void operator()(td_space* p) const { td_space_release(p); }
};
using crs_ptr = std::unique_ptr<td_crs, crs_deleter>;
using plan_ptr = std::unique_ptr<td_work_graph, plan_deleter>;
using space_ptr = std::unique_ptr<td_space, space_deleter>;

inline crs_ptr make_crs(const crs_arrays& a) {
  td_crs* graph = nullptr;
  const td_status status =
      td_crs_create(static_cast<std::int64_t>(a.row_map.size()) - 1, a.row_map.data(),
                    static_cast<std::int64_t>(a.entries.size()), a.entries.data(), &graph);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return crs_ptr(graph);
}

inline plan_ptr make_plan(const td_crs* graph, const td_priority* priorities = nullptr) {
  td_work_graph* plan = nullptr;
  const td_status status = td_work_graph_create(graph, priorities, &plan);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return plan_ptr(plan);
}

inline space_ptr serial_space() {
  td_space* s = nullptr;
  REQUIRE(td_space_serial(&s) == TD_OK);
  return space_ptr(s);
}

inline space_ptr threads_space() {
  td_space* s = nullptr;
  REQUIRE(td_space_threads(&s) == TD_OK);
  return space_ptr(s);
}

// Start and finish times of every item on one global clock, and how often each item ran.
class order_checker {
public:
  explicit order_checker(std::int64_t n)
      : start_(static_cast<std::size_t>(n)), finish_(static_cast<std::size_t>(n)),
        runs_(static_cast<std::size_t>(n)) {}

  // The td_work_fn: `user` is the checker.
  static void work(std::int64_t i, void* user) {
    auto* c = static_cast<order_checker*>(user);
    c->start_[i].store(c->clock_.fetch_add(1), std::memory_order_relaxed);
    c->runs_[i].fetch_add(1, std::memory_order_relaxed);
    c->finish_[i].store(c->clock_.fetch_add(1), std::memory_order_relaxed);
  }

  // Checks that each item ran `runs` times in total and that, in the last run, every item
  // started after each item it executes after finished. Returns the number of violations.
  std::int64_t verify(const crs_arrays& a, int runs) const {
    std::int64_t bad = 0;
    const std::int64_t n = static_cast<std::int64_t>(a.row_map.size()) - 1;
    for (std::int64_t i = 0; i < n; ++i) {
      if (runs_[i].load() != runs) ++bad;
      for (std::int64_t k = a.row_map[i]; k < a.row_map[i + 1]; ++k) {
        if (finish_[i].load() >= start_[a.entries[k]].load()) ++bad;
      }
    }
    return bad;
  }

  // Items in the order they started in the last run.
  std::vector<std::int64_t> start_order() const {
    std::vector<std::pair<std::uint64_t, std::int64_t>> by_time;
    for (std::size_t i = 0; i < start_.size(); ++i)
      by_time.emplace_back(start_[i].load(), static_cast<std::int64_t>(i));
    std::sort(by_time.begin(), by_time.end());
    std::vector<std::int64_t> order;
    for (const auto& t : by_time) order.push_back(t.second);
    return order;
  }

private:
  std::atomic<std::uint64_t> clock_{0};
  std::vector<std::atomic<std::uint64_t>> start_;
  std::vector<std::atomic<std::uint64_t>> finish_;
  std::vector<std::atomic<int>> runs_;
};

// Runs `plan` on `space` with a checker and returns the number of violations.
inline std::int64_t run_checked(const td_work_graph* plan, const td_space* space,
                                const crs_arrays& a, order_checker& checker, int runs) {
  const td_status status = td_work_graph_run(plan, space, order_checker::work, &checker);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return checker.verify(a, runs);
}

}  // namespace taskdag_test

#endif  // TASKDAG_TESTS_WORK_GRAPH_SUPPORT_HPP
