// fib_task.cpp: the naive task-parallel Fibonacci of 000 Fig. 3.4 with C++ lambdas as tasks.
//
// Each call F(n) is a lambda that taskdag copies into the task's memory. It holds the futures of
// its children; they are released when the task completes and the lambda is destroyed
// (002 §2.2.5). F(n-2) runs at high priority, F(n-1) at regular priority, and the task respawns
// once both have completed, adding their results on its second run.
//
// Usage: fib_task_cpp [n]   (default 28)
#include <taskdag.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>

// Spawns F(n) from the host (a scheduler) or from a task (a task_context).
template <class Spawner>
taskdag::future<long> spawn_fib(Spawner& spawner, long n, taskdag::priority p) {
  return spawner.spawn(taskdag::task_single(p),
                       [n, child = std::array<taskdag::future<long>, 2>{}](
                           taskdag::task_context& ctx) mutable -> long {
                         if (n < 2) return n;
                         if (!child[0].is_null()) return child[0].get() + child[1].get();
                         child[0] = spawn_fib(ctx, n - 2, taskdag::priority::high);
                         child[1] = spawn_fib(ctx, n - 1, taskdag::priority::regular);
                         // Fig. 3.4's respawn(when_all(...)) in one call, no future made; the
                         // children are this task's own (no other task uses its futures).
                         ctx.respawn_when_all_private(taskdag::priority::high, child[0], child[1]);
                         return 0;  // overwritten by the second run
                       });
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 28;
  try {
    taskdag::runtime rt;
    taskdag::memory_pool pool(64 << 20);
    taskdag::scheduler sched(pool);

    const auto start = std::chrono::steady_clock::now();
    taskdag::future<long> f = spawn_fib(sched, n, taskdag::priority::regular);
    sched.wait();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    long expected = 0, next = 1;
    for (long i = 0; i < n; ++i) {
      const long sum = expected + next;
      expected = next;
      next = sum;
    }
    const td_scheduler_stats st = sched.statistics();
    std::printf("F(%ld) = %ld on %zu worker(s)\n", n, f.get(), sched.concurrency());
    std::printf("  %llu tasks in %.3f s, peak alive %llu\n",
                static_cast<unsigned long long>(st.tasks_spawned), seconds,
                static_cast<unsigned long long>(st.peak_alive));
    if (f.get() != expected) {
      std::fprintf(stderr, "wrong result, expected %ld\n", expected);
      return 1;
    }

    // A team task: every member of a thread team runs the lambda.
    auto team = sched.spawn(taskdag::task_team(), [](taskdag::task_context& ctx) -> long {
      ctx.team_barrier();
      return ctx.team_size();
    });
    sched.wait();
    std::printf("a team task ran on a team of %ld thread(s)\n", team.get());
  } catch (const taskdag::error& e) {
    std::fprintf(stderr, "taskdag error %s: %s\n", taskdag::status_name(e.status()).c_str(),
                 e.what());
    return 1;
  }
  std::printf("fib_task.cpp: done\n");
  return 0;
}
