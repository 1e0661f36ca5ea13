// Tasks queued by a worker that does not come back to the scheduler run on the idle workers
// (docs/tasks.md, "A worker that does not come back"): a C task spawns children and then waits
// inside its function until they have run. Before the rescue, the children stayed in that
// worker's private queue and the task waited in vain; the wait ends after 10 s here, so a
// failure is a count short, not a hang.
#include <atomic>
#include <chrono>
#include <initializer_list>
#include <thread>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "task_support.hpp"

using namespace taskdag_test;

namespace {

// Whether the system lets a process force memory barriers on its threads (membarrier(2)), which
// the rescue needs; without it the library rescues nothing.
bool rescue_supported() {
#if defined(__linux__) && defined(SYS_membarrier)
  const long query = 0, private_expedited = 1 << 3;
  const long supported = syscall(SYS_membarrier, query, 0, 0);
  return supported > 0 && (supported & private_expedited) != 0;
#else
  return false;
#endif
}

struct spawner {
  std::atomic<long> ran{0};
  long children = 0;
  long seen = -1;       // children run when the spawner stopped waiting
  bool failed = false;  // a spawn failed
};

void count_child(td_task_ctx*, void* state) {
  (*static_cast<spawner**>(state))->ran.fetch_add(1);
}

void spawn_then_wait(td_task_ctx* ctx, void* state) {
  spawner* s = *static_cast<spawner**>(state);
  td_task_policy p = TD_TASK_POLICY_INIT;
  td_task_closure c = closure(count_child, &s, sizeof s);
  for (long i = 0; i < s->children; ++i) {
    td_future* f = td_task_spawn(ctx, &p, &c);
    if (f == nullptr) {
      s->failed = true;
      return;
    }
    td_future_release(f);
  }
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (s->ran.load() < s->children && std::chrono::steady_clock::now() < limit) {
    std::this_thread::yield();
  }
  s->seen = s->ran.load();
}

}  // namespace

TEST_CASE("idle workers run the children of a task that keeps its worker") {
  scheduler_ref sched;
  if (sched.concurrency() < 2) {
    MESSAGE("skipped: the runtime has one thread");
    return;
  }
  if (!rescue_supported()) {
    MESSAGE("skipped: membarrier(2) is not available, so nothing is rescued");
    return;
  }
  for (long children : {1L, 64L, 500L}) {
    INFO(children << " children");
    spawner s;
    s.children = children;
    spawner* sp = &s;
    const td_scheduler_stats before = sched.stats();
    td_future* f = host_spawn(policy(sched), closure(spawn_then_wait, &sp, sizeof sp));
    sched.wait();
    td_future_release(f);
    REQUIRE_FALSE(s.failed);
    CHECK(s.seen == children);
    CHECK(s.ran.load() == children);
    // Every child ran elsewhere: handed over on request or rescued, both counted as steals.
    CHECK(sched.stats().steals - before.steals >= static_cast<unsigned long long>(children));
  }
}
