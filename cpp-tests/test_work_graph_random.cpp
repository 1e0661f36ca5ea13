// Random DAGs of up to 10^6 items, run through the C API on the Serial space (one worker) and
// the Threads space (every core td_initialize took), with an order checker verifying every
// edge. Built in release by ctest (scripts/test.sh); the Rust tests in
// tests/work_graph_random.rs cover 1..8 workers on pools of any size.
#include <cstdint>
#include <vector>

#include "work_graph_support.hpp"

using namespace taskdag_test;

namespace {
// A random DAG: a random topological order, and for each item 0..2*degree successors later in
// it, anywhere (window = n) or among the next `window` positions. xorshift64, fixed seed.
crs_arrays random_dag(std::int64_t n, std::uint64_t degree, std::int64_t window,
                      std::uint64_t seed) {
  auto next = [&seed] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t p = 0; p < n; ++p) order[p] = p;
  for (std::int64_t p = n - 1; p > 0; --p)
    std::swap(order[p], order[static_cast<std::int64_t>(next() % (p + 1))]);
  std::vector<edge> edges;
  for (std::int64_t p = 0; p + 1 < n; ++p) {
    const std::int64_t later = std::min(n - p - 1, window);
    const std::uint64_t count = next() % (2 * degree + 1);
    for (std::uint64_t k = 0; k < count; ++k)
      edges.emplace_back(order[p], order[p + 1 + static_cast<std::int64_t>(next() % later)]);
  }
  return arrays_from_edges(n, edges);
}

void check_random(std::int64_t n, std::uint64_t degree, std::int64_t window) {
  CAPTURE(n);
  CAPTURE(degree);
  CAPTURE(window);
  const crs_arrays a = random_dag(n, degree, window, 0x9E3779B97F4A7C15ull ^ (n * 31 + degree));
  crs_ptr graph = make_crs(a);
  plan_ptr plan = make_plan(graph.get());
  space_ptr serial = serial_space();
  space_ptr threads = threads_space();
  order_checker checker(n);
  CHECK(run_checked(plan.get(), serial.get(), a, checker, 1) == 0);
  CHECK(run_checked(plan.get(), threads.get(), a, checker, 2) == 0);
  CHECK(run_checked(plan.get(), threads.get(), a, checker, 3) == 0);
}
}  // namespace

TEST_CASE("random DAGs of every density keep every edge") {
  for (std::int64_t n : {1, 2, 100, 10000}) {
    for (std::uint64_t degree : {0, 1, 4, 8}) {
      check_random(n, degree, n);
      check_random(n, degree, 16);
    }
  }
}

TEST_CASE("a random DAG of a million items keeps every edge") {
  check_random(1000000, 2, 1000000);
  check_random(1000000, 4, 64);
}
