// The C++ layer of the work graph: taskdag::crs and taskdag::work_graph with lambdas.
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "taskdag.hpp"
#include "work_graph_support.hpp"

using taskdag_test::contains;

TEST_CASE("taskdag::crs builds from vectors of any integer type and transposes") {
  const taskdag::crs graph(std::vector<int>{0, 1, 2, 2}, std::vector<unsigned>{2, 2});
  CHECK(graph.num_rows() == 3);
  CHECK(graph.num_entries() == 2);
  const taskdag::crs t = graph.transpose();
  CHECK(t.row_map() == std::vector<std::int64_t>{0, 0, 0, 2});
  CHECK(t.entries() == std::vector<std::int64_t>{0, 1});
  const taskdag::crs back = t.transpose();
  CHECK(back.row_map() == graph.row_map());
  CHECK(back.entries() == graph.entries());
  const taskdag::crs braced({0, 1, 1}, {1});
  CHECK(braced.num_rows() == 2);
}

TEST_CASE("taskdag::crs and taskdag::work_graph report errors as taskdag::error") {
  try {
    taskdag::crs bad({0, 2, 1}, {0, 1});
    FAIL("a decreasing row_map was accepted");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_INVALID_ARGUMENT);
    CHECK(contains(e.what(), "row 1 ends before it starts"));
  }
  const taskdag::crs cycle({0, 1, 2}, {1, 0});
  try {
    taskdag::work_graph plan(cycle);
    FAIL("a cycle was accepted");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_CYCLE);
    CHECK(contains(e.what(), "cycle of length 2"));
  }
  CHECK_THROWS_AS(taskdag::work_graph(cycle.transpose(), {TD_PRIORITY_HIGH}), taskdag::error);
}

TEST_CASE("taskdag::work_graph runs a lambda over a reduction tree") {
  // Item i (i >= 1) executes after... its children: row i lists its parent (i - 1) / 2.
  const int n = 1023;
  std::vector<int> row_map{0}, entries;
  for (int i = 0; i < n; ++i) {
    if (i > 0) entries.push_back((i - 1) / 2);
    row_map.push_back(static_cast<int>(entries.size()));
  }
  taskdag::work_graph plan(taskdag::crs(row_map, entries));
  CHECK(plan.num_items() == n);
  std::vector<std::int64_t> sum(n, 0);
  td_space* raw = nullptr;
  taskdag::check(td_space_threads(&raw));
  taskdag_test::space_ptr space(raw);
  for (int run = 0; run < 10; ++run) {
    plan.run(space.get(), [&](std::int64_t i) {
      const std::int64_t left = 2 * i + 1, right = 2 * i + 2;
      sum[i] = 1 + (left < n ? sum[left] : 0) + (right < n ? sum[right] : 0);
    });
    CHECK(sum[0] == n);
  }
  const taskdag::work_graph shared = plan.share();
  CHECK(shared.get() == plan.get());
}

TEST_CASE("an exception thrown by the work function skips the rest and is rethrown by run") {
  std::vector<int> row_map{0}, entries;
  for (int i = 0; i < 100; ++i) {
    if (i + 1 < 100) entries.push_back(i + 1);
    row_map.push_back(static_cast<int>(entries.size()));
  }
  const taskdag::work_graph plan(taskdag::crs(row_map, entries));
  td_space* raw = nullptr;
  taskdag::check(td_space_serial(&raw));
  taskdag_test::space_ptr space(raw);
  std::atomic<int> calls{0};
  CHECK_THROWS_WITH_AS(plan.run(space.get(),
                                [&](std::int64_t i) {
                                  ++calls;
                                  if (i == 10) throw std::runtime_error("item 10 failed");
                                }),
                       "item 10 failed", std::runtime_error);
  CHECK(calls == 11);
  // The plan runs again normally.
  calls = 0;
  plan.run(space.get(), [&](std::int64_t) { ++calls; });
  CHECK(calls == 100);
}
