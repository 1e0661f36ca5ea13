// td_task_respawn_when_all_private: td_task_respawn_when_all with the promise that no other task
// uses the futures through the caller's references during the call, so that the children it
// runs ahead complete without an atomic read-modify-write. Fibonacci and its statistics, a
// waiter the task itself queued on a child before the call, children that other tasks wait on
// through references of their own meanwhile, and bad input; at one worker, two and every thread
// of the runtime.
#include <atomic>
#include <string>
#include <vector>

#include "task_support.hpp"
#include "worker_counts.hpp"

using namespace taskdag_test;

namespace {

void check_pool_empty(scheduler_ref& s) {
  CHECK(s.stats().alive == 0);
  CHECK(statistics(s.pool()).consumed_blocks == 0);
}

// A leaf that returns 7.
void seven(td_task_ctx* ctx, void*) { *static_cast<long*>(td_task_result(ctx)) = 7; }

// Counts its runs.
std::atomic<int> counted_runs{0};
void count_run(td_task_ctx*, void*) { counted_runs.fetch_add(1, std::memory_order_relaxed); }

// A parent's state: its child, and what its first run did.
struct parent_state {
  td_future* child;
  int runs;
};

void release_child(void* state) { td_future_release(static_cast<parent_state*>(state)->child); }

std::atomic<int> parent_failures{0};

// Returns the child's result plus one on its second run.
void finish_parent(td_task_ctx* ctx, parent_state* s) {
  long value = 0;
  if (td_future_get(s->child, &value, sizeof value) != TD_OK) parent_failures++;
  *static_cast<long*>(td_task_result(ctx)) = value + 1;
}

td_future* spawn_seven(td_task_ctx* ctx) {
  td_task_policy p = TD_TASK_POLICY_INIT;
  const td_task_closure c = closure(seven, nullptr, 0, sizeof(long));
  return td_task_spawn(ctx, &p, &c);
}

// First run: spawns its child, makes a when_all of it through its own future and a task after
// that when_all, lets the when_all's future go, and respawns on the child with the promise
// (which it keeps: the when_all is its own use). The child's one reference is then the
// parent's, and a waiter is queued on it: its completion must find and schedule that waiter.
void parent_with_own_waiter(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<parent_state*>(state);
  if (++s->runs > 1) return finish_parent(ctx, s);
  s->child = spawn_seven(ctx);
  td_future* all = td_when_all(td_task_scheduler(ctx), &s->child, 1);
  td_task_policy after = TD_TASK_POLICY_INIT;
  after.dependence = all;
  const td_task_closure counter = closure(count_run);
  td_future* counted = td_task_spawn(ctx, &after, &counter);
  if (s->child == nullptr || all == nullptr || counted == nullptr ||
      td_task_respawn_when_all_private(ctx, &s->child, 1, TD_PRIORITY_HIGH) != TD_OK) {
    parent_failures++;
  }
  td_future_release(all);
  td_future_release(counted);
}

// Waits on the future in its state, through the reference the state holds, by spawning a
// counted task after it; then lets that reference go.
void wait_through_own_reference(td_task_ctx* ctx, void* state) {
  td_future* child = *static_cast<td_future**>(state);
  td_task_policy after = TD_TASK_POLICY_INIT;
  after.dependence = child;
  const td_task_closure counter = closure(count_run);
  td_future* counted = td_task_spawn(ctx, &after, &counter);
  if (counted == nullptr) parent_failures++;
  td_future_release(counted);
  td_future_release(child);
}

// First run: spawns its child and a task (high priority, so an idle worker is handed it first)
// that waits on the child through a reference of its own, then respawns on the child with the
// promise, which that task's own reference does not break.
void parent_sharing_child(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<parent_state*>(state);
  if (++s->runs > 1) return finish_parent(ctx, s);
  s->child = spawn_seven(ctx);
  if (s->child == nullptr || td_future_retain(s->child) != TD_OK) {
    parent_failures++;
    return;
  }
  td_task_policy high = TD_TASK_POLICY_INIT;
  high.priority = TD_PRIORITY_HIGH;
  const td_task_closure waiter =
      closure(wait_through_own_reference, &s->child, sizeof s->child);
  td_future* w = td_task_spawn(ctx, &high, &waiter);
  if (w == nullptr ||
      td_task_respawn_when_all_private(ctx, &s->child, 1, TD_PRIORITY_HIGH) != TD_OK) {
    parent_failures++;
  }
  td_future_release(w);
}

// Runs `rounds` parents of `fn` and checks each one's result and counted task.
void run_parents(scheduler_ref& s, td_task_fn fn, int rounds) {
  parent_failures = 0;
  counted_runs = 0;
  std::vector<td_future*> parents;
  for (int i = 0; i < rounds; ++i) {
    const parent_state start{nullptr, 0};
    parents.push_back(
        host_spawn(policy(s), closure(fn, &start, sizeof start, sizeof(long), release_child)));
  }
  s.wait();
  for (td_future* p : parents) {
    CHECK(result_of<long>(p) == 8);
    CHECK(td_future_release(p) == TD_OK);
  }
  CHECK(counted_runs.load() == rounds);
  CHECK(parent_failures.load() == 0);
  check_pool_empty(s);
}

// Ten rounds of 100 parents of `fn` at each worker count.
void run_parents_on_each_worker_count(td_task_fn fn) {
  on_each_worker_count([fn](td_space* space, std::size_t) {
    scheduler_ref s(space, 1u << 20);
    for (int round = 0; round < 10; ++round) {
      INFO("round " << round);
      run_parents(s, fn, 100);
    }
  });
}

// The outcome of each call of the misusing task, in order.
std::vector<std::pair<td_status, std::string>> outcomes;

void note(td_status status) {
  outcomes.emplace_back(status, status == TD_OK ? std::string() : last_message());
}

// Makes bad calls, then the run's respawn, then a second one.
void misuse_task(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<parent_state*>(state);
  if (++s->runs > 1) return finish_parent(ctx, s);
  s->child = spawn_seven(ctx);
  note(td_task_respawn_when_all_private(ctx, nullptr, 1, TD_PRIORITY_REGULAR));
  note(td_task_respawn_when_all_private(ctx, &s->child, -1, TD_PRIORITY_REGULAR));
  note(td_task_respawn_when_all_private(ctx, &s->child, 1, 7));
  note(td_task_respawn_when_all_private(ctx, &s->child, 1, TD_PRIORITY_LOW));
  note(td_task_respawn_when_all_private(ctx, &s->child, 1, TD_PRIORITY_LOW));
}

}  // namespace

TEST_CASE("fibonacci with td_task_respawn_when_all_private is exact, and so are its statistics") {
  on_each_worker_count([](td_space* space, std::size_t) {
    scheduler_ref s(space, 512u << 10);
    fib_failures = 0;
    const long destroyed = fib_destroyed.load();
    CHECK(run_fib<fib_join::respawn_when_all_private>(s, 20) == 6765);
    const td_scheduler_stats st = s.stats();
    // F(20) has 21891 calls, 10945 of them with n > 1: each of those respawns once.
    CHECK(st.tasks_spawned == 21891);
    CHECK(st.tasks_respawned == 10945);
    CHECK(st.task_executions == 21891 + 10945);
    CHECK(st.tasks_completed == st.tasks_spawned);
    CHECK(fib_destroyed.load() - destroyed == 21891);
    for (int round = 0; round < 20; ++round) {
      INFO("round " << round);
      REQUIRE(run_fib<fib_join::respawn_when_all_private>(s, 15) == 610);
    }
    CHECK(fib_failures.load() == 0);
    check_pool_empty(s);
  });
}

TEST_CASE("a waiter the task queued on its child before the call is scheduled") {
  run_parents_on_each_worker_count(parent_with_own_waiter);
}

TEST_CASE("tasks with references of their own may wait on the children during the call") {
  run_parents_on_each_worker_count(parent_sharing_child);
}

TEST_CASE("bad input is refused with its status and message, and the scheduler goes on") {
  on_each_worker_count([](td_space* space, std::size_t) {
    scheduler_ref s(space, 1u << 20);
    td_future* child = nullptr;
    CHECK(td_task_respawn_when_all_private(nullptr, &child, 1, TD_PRIORITY_REGULAR) ==
          TD_ERROR_NULL_ARGUMENT);
    check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_task_respawn_when_all_private", "ctx"});

    outcomes.clear();
    parent_failures = 0;
    const parent_state start{nullptr, 0};
    td_future* p =
        host_spawn(policy(s), closure(misuse_task, &start, sizeof start, sizeof(long),
                                      release_child));
    s.wait();
    CHECK(result_of<long>(p) == 8);
    CHECK(parent_failures.load() == 0);
    REQUIRE(outcomes.size() == 5);
    const char* const name = "td_task_respawn_when_all_private";
    CHECK(outcomes[0].first == TD_ERROR_NULL_ARGUMENT);
    CHECK(contains(outcomes[0].second, name));
    CHECK(contains(outcomes[0].second, "futures"));
    CHECK(outcomes[1].first == TD_ERROR_INVALID_ARGUMENT);
    CHECK(contains(outcomes[1].second, "-1"));
    CHECK(outcomes[2].first == TD_ERROR_INVALID_ARGUMENT);
    CHECK(contains(outcomes[2].second, "7"));
    CHECK(outcomes[3].first == TD_OK);
    CHECK(outcomes[4].first == TD_ERROR_INVALID_ARGUMENT);
    CHECK(contains(outcomes[4].second, name));
    CHECK(td_future_release(p) == TD_OK);
    check_pool_empty(s);
  });
}
