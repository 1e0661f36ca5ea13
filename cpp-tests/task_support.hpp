// Helpers of the task-DAG tests: a scheduler with its own pool, spawning C task functions, and
// the Fibonacci task of 000 Fig. 3.4 through the C API.
#ifndef TASKDAG_TESTS_TASK_SUPPORT_HPP
#define TASKDAG_TESTS_TASK_SUPPORT_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "support.hpp"

namespace taskdag_test {

enum class workers { serial, threads };

// Owns a pool and a scheduler on it (the Serial space, or the runtime's Threads space).
class scheduler_ref {
public:
  explicit scheduler_ref(workers w = workers::threads, std::size_t pool_bytes = 8u << 20,
                         int team_size = 0)
      : pool_(pool_bytes) {
    td_space* space = nullptr;
    if (w == workers::serial) {
      REQUIRE(td_space_serial(&space) == TD_OK);
    }
    const td_status status = create(space, team_size);
    td_space_release(space);
    INFO(last_message());
    REQUIRE(status == TD_OK);
  }
  // On `space` (borrowed), e.g. a sub-instance of the Threads space.
  scheduler_ref(td_space* space, std::size_t pool_bytes, int team_size = 0) : pool_(pool_bytes) {
    const td_status status = create(space, team_size);
    INFO(last_message());
    REQUIRE(status == TD_OK);
  }
  scheduler_ref(const scheduler_ref&) = delete;
  scheduler_ref& operator=(const scheduler_ref&) = delete;
  ~scheduler_ref() { td_scheduler_release(sched_); }

  td_scheduler* get() const { return sched_; }
  operator td_scheduler*() const { return sched_; }
  td_pool* pool() const { return pool_.get(); }

  void wait() {
    const td_status status = td_wait(sched_);
    INFO(last_message());
    REQUIRE(status == TD_OK);
  }

  td_scheduler_stats stats() const {
    td_scheduler_stats st = TD_SCHEDULER_STATS_INIT;
    REQUIRE(td_scheduler_statistics(sched_, &st) == TD_OK);
    return st;
  }

  std::size_t concurrency() const {
    std::size_t n = 0;
    REQUIRE(td_scheduler_concurrency(sched_, &n) == TD_OK);
    return n;
  }

private:
  td_status create(td_space* space, int team_size) {
    td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
    args.space = space;
    args.pool = pool_.get();
    args.team_size = team_size;
    return td_scheduler_create(&args, &sched_);
  }

  pool_ref pool_;
  td_scheduler* sched_ = nullptr;
};

inline td_task_closure closure(td_task_fn fn, const void* state = nullptr, std::size_t state_size = 0,
                               std::size_t result_size = 0, td_task_destroy_fn destroy = nullptr) {
  td_task_closure c = TD_TASK_CLOSURE_INIT;
  c.function = fn;
  c.state = state;
  c.state_size = state_size;
  c.result_size = result_size;
  c.destroy = destroy;
  return c;
}

inline td_task_policy policy(td_scheduler* sched, td_priority p = TD_PRIORITY_REGULAR,
                             td_future* dependence = nullptr, bool team = false) {
  td_task_policy pol = TD_TASK_POLICY_INIT;
  pol.scheduler = sched;
  pol.priority = p;
  pol.dependence = dependence;
  pol.team = team ? 1 : 0;
  return pol;
}

// Spawns from the host and REQUIREs success.
inline td_future* host_spawn(const td_task_policy& p, const td_task_closure& c) {
  td_future* f = td_host_spawn(&p, &c);
  INFO(last_message());
  REQUIRE(f != nullptr);
  return f;
}

template <class T>
T result_of(td_future* f) {
  T value{};
  const td_status status = td_future_get(f, &value, sizeof value);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  return value;
}

inline long fibonacci(long n) {
  long a = 0, b = 1;
  for (long i = 0; i < n; ++i) {
    const long c = a + b;
    a = b;
    b = c;
  }
  return a;
}

// 000 Fig. 3.4 with the C API; counts destroy callbacks.
struct fib_state {
  long n;
  td_future* child[2];
};

inline std::atomic<long> fib_destroyed{0};

inline void fib_destroy(void* state) {
  auto* s = static_cast<fib_state*>(state);
  td_future_release(s->child[0]);
  td_future_release(s->child[1]);
  fib_destroyed.fetch_add(1, std::memory_order_relaxed);
}

// How a Fibonacci task waits for its children: 000 Fig. 3.4's td_when_all, td_task_respawn on
// its future and td_future_release, or td_task_respawn_when_all, the same in one call, or
// td_task_respawn_when_all_private (the children are the task's own).
enum class fib_join { when_all_then_respawn, respawn_when_all, respawn_when_all_private };

// Spawns or respawns that failed in fib_task_with<fib_join::respawn_when_all> and
// fib_task_with<fib_join::respawn_when_all_private>.
inline std::atomic<int> fib_failures{0};

template <fib_join Join>
void fib_task_with(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<fib_state*>(state);
  long* result = static_cast<long*>(td_task_result(ctx));
  if (s->n < 2) {
    *result = s->n;
  } else if (s->child[0] != nullptr) {
    long a = 0, b = 0;
    td_future_get(s->child[0], &a, sizeof a);
    td_future_get(s->child[1], &b, sizeof b);
    *result = a + b;
  } else {
    fib_state child{s->n - 2, {nullptr, nullptr}};
    td_task_closure c =
        closure(fib_task_with<Join>, &child, sizeof child, sizeof(long), fib_destroy);
    td_task_policy p = TD_TASK_POLICY_INIT;
    p.priority = TD_PRIORITY_HIGH;
    s->child[0] = td_task_spawn(ctx, &p, &c);
    child.n = s->n - 1;
    p.priority = TD_PRIORITY_REGULAR;
    s->child[1] = td_task_spawn(ctx, &p, &c);
    if constexpr (Join != fib_join::when_all_then_respawn) {
      const auto respawn = Join == fib_join::respawn_when_all ? td_task_respawn_when_all
                                                               : td_task_respawn_when_all_private;
      if (s->child[0] == nullptr || s->child[1] == nullptr ||
          respawn(ctx, s->child, 2, TD_PRIORITY_HIGH) != TD_OK) {
        fib_failures++;
      }
    } else {
      td_future* all = td_when_all(td_task_scheduler(ctx), s->child, 2);
      td_task_respawn(ctx, all, TD_PRIORITY_HIGH);
      td_future_release(all);
    }
  }
}

inline void fib_task(td_task_ctx* ctx, void* state) {
  fib_task_with<fib_join::when_all_then_respawn>(ctx, state);
}

template <fib_join Join = fib_join::when_all_then_respawn>
long run_fib(scheduler_ref& s, long n) {
  fib_state root{n, {nullptr, nullptr}};
  td_future* f = host_spawn(
      policy(s), closure(fib_task_with<Join>, &root, sizeof root, sizeof(long), fib_destroy));
  s.wait();
  const long value = result_of<long>(f);
  REQUIRE(td_future_release(f) == TD_OK);
  return value;
}

}  // namespace taskdag_test

#endif  // TASKDAG_TESTS_TASK_SUPPORT_HPP
