// Stress through the C API with the release library: Fibonacci(27) a hundred times on every
// thread of the runtime, with exact results and a clean pool after each.
#include <cstdlib>

#include "task_support.hpp"

using namespace taskdag_test;

TEST_CASE("fibonacci of 27 a hundred times is exact") {
  int rounds = 100;
  if (const char* text = std::getenv("TASKDAG_STRESS_ROUNDS")) rounds = std::atoi(text);
  scheduler_ref s(workers::threads, 32u << 20);
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    REQUIRE(run_fib(s, 27) == 196418);
  }
  const td_scheduler_stats st = s.stats();
  CHECK(st.tasks_spawned == static_cast<unsigned long long>(rounds) * 635621u);
  CHECK(st.alive == 0);
  CHECK(statistics(s.pool()).consumed_blocks == 0);
}
