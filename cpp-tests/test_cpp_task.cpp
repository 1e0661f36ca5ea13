// The C++ layer of the task DAG: taskdag::scheduler, taskdag::future<T>, lambdas as tasks, and
// the destruction of a task's callable when it completes (002 §2.2.5).
#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "support.hpp"
#include "taskdag.hpp"

namespace {

template <class Spawner>
taskdag::future<long> spawn_fib(Spawner& spawner, long n, taskdag::priority p) {
  return spawner.spawn(taskdag::task_single(p),
                       [n, child = std::array<taskdag::future<long>, 2>{}](
                           taskdag::task_context& ctx) mutable -> long {
                         if (n < 2) return n;
                         if (!child[0].is_null()) return child[0].get() + child[1].get();
                         child[0] = spawn_fib(ctx, n - 2, taskdag::priority::high);
                         child[1] = spawn_fib(ctx, n - 1, taskdag::priority::regular);
                         ctx.respawn(ctx.when_all(child[0], child[1]), taskdag::priority::high);
                         return 0;
                       });
}

// The same with task_context::respawn_when_all: 000 Fig. 3.4's respawn(when_all(...)) in one call;
// with `Private`, respawn_when_all_private (the children are the task's own).
template <bool Private = false, class Spawner>
taskdag::future<long> spawn_fib_fused(Spawner& spawner, long n, taskdag::priority p) {
  return spawner.spawn(taskdag::task_single(p),
                       [n, child = std::array<taskdag::future<long>, 2>{}](
                           taskdag::task_context& ctx) mutable -> long {
                         if (n < 2) return n;
                         if (!child[0].is_null()) return child[0].get() + child[1].get();
                         child[0] = spawn_fib_fused<Private>(ctx, n - 2, taskdag::priority::high);
                         child[1] =
                             spawn_fib_fused<Private>(ctx, n - 1, taskdag::priority::regular);
                         if constexpr (Private) {
                           ctx.respawn_when_all_private(taskdag::priority::high, child[0],
                                                        child[1]);
                         } else {
                           ctx.respawn_when_all(taskdag::priority::high, child[0], child[1]);
                         }
                         return 0;
                       });
}

std::atomic<int> live_tokens{0};

// Counts live copies, so a test sees when the task's copy of a lambda is destroyed.
struct token {
  token() { ++live_tokens; }
  token(const token&) { ++live_tokens; }
  token(token&&) noexcept { ++live_tokens; }
  ~token() { --live_tokens; }
};

}  // namespace

TEST_CASE("fibonacci with lambdas as tasks") {
  taskdag::memory_pool pool(8 << 20);
  taskdag::scheduler sched(pool);
  auto f = spawn_fib(sched, 20, taskdag::priority::regular);
  CHECK_FALSE(f.is_ready());
  sched.wait();
  CHECK(f.is_ready());
  CHECK(f.get() == 6765);
  const td_scheduler_stats st = sched.statistics();
  CHECK(st.tasks_spawned == 21891);
  CHECK(st.alive == 1);  // f
}

TEST_CASE("fibonacci with respawn_when_all") {
  taskdag::memory_pool pool(8 << 20);
  taskdag::scheduler sched(pool);
  auto f = spawn_fib_fused(sched, 20, taskdag::priority::regular);
  sched.wait();
  CHECK(f.get() == 6765);
  const td_scheduler_stats st = sched.statistics();
  CHECK(st.tasks_spawned == 21891);
  CHECK(st.tasks_respawned == 10945);
  CHECK(st.when_alls_created <= st.tasks_respawned);
  CHECK(st.alive == 1);  // f
}

TEST_CASE("fibonacci and a vector with respawn_when_all_private") {
  taskdag::memory_pool pool(8 << 20);
  taskdag::scheduler sched(pool);
  auto f = spawn_fib_fused<true>(sched, 20, taskdag::priority::regular);
  auto sum = sched.spawn(taskdag::task_single(),
                         [parts = std::vector<taskdag::future<int>>()](
                             taskdag::task_context& ctx) mutable -> int {
                           if (parts.empty()) {
                             for (int i = 0; i < 10; ++i) {
                               parts.push_back(
                                   ctx.spawn(taskdag::task_single(), [i](auto&) { return i; }));
                             }
                             ctx.respawn_when_all_private(parts, taskdag::priority::low);
                             return -1;
                           }
                           int total = 0;
                           for (const auto& p : parts) total += p.get();
                           return total;
                         });
  std::atomic<int> bad_priority{TD_OK};
  auto bad = sched.spawn(taskdag::task_single(), [&bad_priority](taskdag::task_context& ctx) {
    try {
      ctx.respawn_when_all_private(static_cast<taskdag::priority>(7));
    } catch (const taskdag::error& e) {
      bad_priority = e.status();
    }
    return 0;
  });
  sched.wait();
  CHECK(f.get() == 6765);
  CHECK(sum.get() == 45);
  CHECK(bad_priority.load() == TD_ERROR_INVALID_ARGUMENT);
  const td_scheduler_stats st = sched.statistics();
  CHECK(st.tasks_spawned == 21891 + 11 + 1);
  CHECK(st.tasks_respawned == 10945 + 1);
  CHECK(st.alive == 3);  // f, sum, bad
}

TEST_CASE("respawn_when_all over a vector, and failures that throw taskdag::error") {
  taskdag::memory_pool pool(1 << 20);
  taskdag::scheduler sched(pool);
  std::atomic<int> children_done{0};
  auto sum = sched.spawn(taskdag::task_single(),
                         [&children_done, parts = std::vector<taskdag::future<int>>()](
                             taskdag::task_context& ctx) mutable -> int {
                           if (parts.empty()) {
                             for (int i = 0; i < 10; ++i) {
                               parts.push_back(ctx.spawn(taskdag::task_single(),
                                                         [i, &children_done](auto&) {
                                                           ++children_done;
                                                           return i;
                                                         }));
                             }
                             parts.emplace_back();  // a null future is skipped
                             ctx.respawn_when_all(parts);
                             return -1;
                           }
                           int total = children_done.load() == 10 ? 0 : -1000;
                           for (const auto& p : parts) total += p.is_null() ? 0 : p.get();
                           return total;
                         });
  // An unknown priority, and a second respawn in a run: the exceptions' statuses, caught in
  // the task (an exception must not leave a task).
  std::atomic<int> bad_priority{TD_OK};
  std::atomic<int> second_respawn{TD_OK};
  auto twice = sched.spawn(taskdag::task_single(),
                           [&bad_priority, &second_respawn, runs = 0](
                               taskdag::task_context& ctx) mutable -> int {
                             if (++runs > 1) return runs;
                             try {
                               ctx.respawn_when_all(static_cast<taskdag::priority>(7));
                             } catch (const taskdag::error& e) {
                               bad_priority = e.status();
                             }
                             ctx.respawn_when_all(taskdag::priority::low);
                             try {
                               ctx.respawn(taskdag::priority::low);
                             } catch (const taskdag::error& e) {
                               second_respawn = e.status();
                             }
                             return runs;
                           });
  sched.wait();
  CHECK(sum.get() == 45);
  CHECK(twice.get() == 2);
  CHECK(bad_priority.load() == TD_ERROR_INVALID_ARGUMENT);
  CHECK(second_respawn.load() == TD_ERROR_INVALID_ARGUMENT);
  CHECK(sched.statistics().task_executions == 2 + 10 + 2);
}

TEST_CASE("a task's callable is destroyed when the task completes, not when its future goes") {
  taskdag::memory_pool pool(1 << 20);
  taskdag::scheduler sched(pool);
  live_tokens = 0;
  int runs = 0;
  auto f = sched.spawn(taskdag::task_single(),
                       [t = token(), runs](taskdag::task_context& ctx) mutable -> int {
                         (void)t;
                         if (++runs < 3) ctx.respawn(taskdag::priority::low);
                         return runs;
                       });
  CHECK(live_tokens.load() == 1);  // the task's copy
  sched.wait();
  CHECK(live_tokens.load() == 0);
  CHECK(f.get() == 3);
  CHECK(sched.statistics().task_executions == 3);
}

TEST_CASE("futures share ownership: copies retain, destruction releases") {
  taskdag::memory_pool pool(1 << 20);
  taskdag::scheduler sched(pool);
  taskdag::future<double> a = sched.spawn(taskdag::task_single(), [](taskdag::task_context&) {
    return 2.5;
  });
  {
    taskdag::future<double> b = a;
    taskdag::future<void> any = b;  // any future converts to a void one
    CHECK(sched.statistics().alive == 1);
  }
  taskdag::future<double> moved = std::move(a);
  CHECK(a.is_null());
  sched.wait();
  CHECK(moved.get() == 2.5);
  moved = taskdag::future<double>();
  CHECK(sched.statistics().alive == 0);
}

TEST_CASE("when_all over a vector and dependences through task_policy::after") {
  taskdag::memory_pool pool(4 << 20);
  taskdag::scheduler sched(pool);
  std::atomic<int> done{0};
  std::vector<taskdag::future<int>> parts;
  for (int i = 0; i < 100; ++i) {
    parts.push_back(sched.spawn(taskdag::task_single(), [i, &done](taskdag::task_context&) {
      ++done;
      return i;
    }));
  }
  auto all = sched.when_all(parts);
  auto after = sched.spawn(taskdag::task_single(taskdag::priority::low).after(all),
                           [&done](taskdag::task_context&) { return done.load(); });
  sched.wait();
  CHECK(after.get() == 100);
  int sum = 0;
  for (const auto& p : parts) sum += p.get();
  CHECK(sum == 4950);
}

TEST_CASE("a team task from C++") {
  taskdag::memory_pool pool(1 << 20);
  taskdag::scheduler sched(pool);
  std::atomic<int> calls{0};
  auto f = sched.spawn(taskdag::task_team(), [&calls](taskdag::task_context& ctx) -> long {
    ++calls;
    ctx.team_barrier();
    return ctx.team_size();
  });
  sched.wait();
  CHECK(calls.load() == f.get() * 1);
  CHECK(f.get() == static_cast<long>(sched.team_size()));
}

TEST_CASE("C++ failures throw taskdag::error with the status") {
  taskdag::memory_pool pool(8192);
  taskdag::scheduler sched(pool);
  std::vector<taskdag::future<void>> kept;
  bool exhausted = false;
  try {
    for (int i = 0; i < 1000; ++i) kept.push_back(sched.spawn(taskdag::task_single(), [](auto&) {}));
  } catch (const taskdag::error& e) {
    exhausted = e.status() == TD_ERROR_POOL_EXHAUSTED;
  }
  CHECK(exhausted);
  sched.wait();
  kept.clear();
  CHECK(sched.statistics().alive == 0);
  taskdag::future<long> pending = sched.spawn(taskdag::task_single(), [](auto&) { return 1L; });
  CHECK_THROWS_AS(pending.get(), taskdag::error);
  try {
    pending.get();
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_NOT_READY);
  }
  sched.wait();
  CHECK(pending.get() == 1);
}
