// td_task_respawn_when_all: 000 Fig. 3.4's respawn(when_all(...)) in one call. Fibonacci and its
// statistics, the task's next run after every element, futures released right after the call,
// the elements a worker runs inside the call (two workers), bad input, pool exhaustion and team
// tasks; each on one worker, two and every thread of the runtime.
#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "task_support.hpp"
#include "worker_counts.hpp"

using namespace taskdag_test;

namespace {

// ---------------------------------------------------------------------------------------------
// What tasks record, checked afterwards on the test's thread
// ---------------------------------------------------------------------------------------------

constexpr int parent_id = -1;  // children have ids from 0

std::mutex record_mutex;
std::vector<int> completions;  // ids of tasks in the order they completed

struct outcome {
  td_status returned;
  td_status last;
  std::string message;
};

std::vector<outcome> outcomes;  // of calls made inside tasks

void complete(int id) {
  std::lock_guard<std::mutex> lock(record_mutex);
  completions.push_back(id);
}

void note(td_status returned) {
  outcome o{returned, td_last_error(), last_message()};
  std::lock_guard<std::mutex> lock(record_mutex);
  outcomes.push_back(std::move(o));
}

// CHECK_FAILS for a call a task made (TD_OK: only the returned status; success leaves the
// last error as it was).
void check_outcome(const outcome& o, td_status expected,
                   std::initializer_list<std::string> mentions = {}) {
  CHECK(o.returned == expected);
  if (expected == TD_OK) return;
  CHECK(o.last == expected);
  for (const std::string& part : mentions) {
    CHECK_MESSAGE(contains(o.message, part), "expected \"" << part << "\" in: " << o.message);
  }
}

// A gated child completes only once the gate is open; until then each run respawns it, so
// that no worker blocks. Parents open the gate after their call, so their gated elements are
// all incomplete during it, on any number of workers.
std::atomic<bool> gate{false};

void reset_records() {
  gate = false;
  completions.clear();
  outcomes.clear();
}

void gated_child(td_task_ctx* ctx, void* state) {
  if (!gate.load(std::memory_order_acquire)) {
    td_task_respawn(ctx, nullptr, TD_PRIORITY_LOW);
    return;
  }
  complete(*static_cast<const int*>(state));
}

td_future* spawn_gated(scheduler_ref& s, int id) {
  return host_spawn(policy(s, TD_PRIORITY_LOW), closure(gated_child, &id, sizeof id));
}

void mark(td_task_ctx*, void* state) { complete(*static_cast<const int*>(state)); }

// Checks that `order` holds the children 0 .. children-1 (in any order), then the parent.
void check_parent_last(const std::vector<int>& order, int children) {
  REQUIRE(order.size() == static_cast<std::size_t>(children) + 1);
  CHECK(order.back() == parent_id);
  std::vector<int> ids(order.begin(), order.end() - 1);
  std::sort(ids.begin(), ids.end());
  for (int i = 0; i < children; ++i) CHECK(ids[static_cast<std::size_t>(i)] == i);
}

void check_pool_empty(scheduler_ref& s) {
  CHECK(s.stats().alive == 0);
  CHECK(statistics(s.pool()).consumed_blocks == 0);
}

// ---------------------------------------------------------------------------------------------
// Fibonacci
// ---------------------------------------------------------------------------------------------

long run_fib_respawn_when_all(scheduler_ref& s, long n) {
  return run_fib<fib_join::respawn_when_all>(s, n);
}

// ---------------------------------------------------------------------------------------------
// A parent that respawns on an array of futures the test made
// ---------------------------------------------------------------------------------------------

// An element of the parent's array: a gated child, a task completed by an earlier wait, or
// NULL.
enum class element { gated, complete, null };

struct parent_state {
  td_future* deps[8];
  int count;
  bool no_array;       // pass futures = NULL
  bool release_after;  // the parent owns the references and releases them after the call
  int runs;
};

std::atomic<int> parent_status{TD_OK};
std::atomic<int> ready_at_second_run{-1};

void parent(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<parent_state*>(state);
  *static_cast<int*>(td_task_result(ctx)) = ++s->runs;
  if (s->runs == 1) {
    parent_status = td_task_respawn_when_all(ctx, s->no_array ? nullptr : s->deps, s->count,
                                             TD_PRIORITY_REGULAR);
    if (s->release_after) {
      for (int i = 0; i < s->count; ++i) {
        td_future_release(s->deps[i]);
        s->deps[i] = nullptr;
      }
    }
    gate.store(true, std::memory_order_release);
  } else {
    int ready = 0;
    for (int i = 0; i < s->count; ++i) {
      int r = 0;
      if (s->deps[i] != nullptr && td_future_is_ready(s->deps[i], &r) == TD_OK) ready += r;
    }
    ready_at_second_run = ready;
    complete(parent_id);
  }
}

struct fan_in {
  int parent_runs = 0;
  int gated = 0;
  std::uint64_t when_alls = 0;  // created during the parent's wait
  std::uint64_t respawns = 0;   // honoured during the parent's wait
};

// Spawns the elements of `layout` (gated children with ids 0, 1, ... in order) and a parent
// over them at high priority, waits, checks the order of completion and releases everything.
fan_in run_fan_in(scheduler_ref& s, const std::vector<element>& layout, bool release_after,
                  bool no_array = false) {
  reset_records();
  REQUIRE(layout.size() <= 8);
  parent_state state{};
  state.count = static_cast<int>(layout.size());
  state.no_array = no_array;
  state.release_after = release_after;
  fan_in r;
  bool any_complete = false;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (layout[i] == element::complete) {
      state.deps[i] = host_spawn(policy(s), closure(mark, &parent_id, sizeof parent_id));
      any_complete = true;
    }
  }
  if (any_complete) s.wait();
  completions.clear();
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (layout[i] == element::gated) state.deps[i] = spawn_gated(s, r.gated++);
  }
  const td_scheduler_stats before = s.stats();
  parent_status = -1;
  ready_at_second_run = -1;
  td_future* p = host_spawn(policy(s, TD_PRIORITY_HIGH),
                            closure(parent, &state, sizeof state, sizeof(int)));
  s.wait();
  const td_scheduler_stats after = s.stats();
  r.when_alls = after.when_alls_created - before.when_alls_created;
  r.respawns = after.tasks_respawned - before.tasks_respawned;
  r.parent_runs = result_of<int>(p);
  CHECK(parent_status.load() == TD_OK);
  check_parent_last(completions, r.gated);
  const int non_null = static_cast<int>(
      std::count_if(layout.begin(), layout.end(), [](element e) { return e != element::null; }));
  CHECK(ready_at_second_run.load() == (release_after ? 0 : non_null));
  CHECK(td_future_release(p) == TD_OK);
  if (!release_after) {
    for (td_future* f : state.deps) CHECK(td_future_release(f) == TD_OK);
  }
  check_pool_empty(s);
  return r;
}

// ---------------------------------------------------------------------------------------------
// A parent that spawns its children and releases their futures right after the call
// ---------------------------------------------------------------------------------------------

void spawning_parent(td_task_ctx* ctx, void* state) {
  int& runs = *static_cast<int*>(state);
  *static_cast<int*>(td_task_result(ctx)) = ++runs;
  if (runs > 1) {
    complete(parent_id);
    return;
  }
  // With one worker each spawn first runs the child spawned before (002 §3.3.2), so only the
  // last is incomplete; with several, all may be, in this worker's private queue.
  td_future* kids[5] = {};
  for (int i = 0; i < 3; ++i) {
    td_task_closure c = closure(mark, &i, sizeof i);
    td_task_policy p = TD_TASK_POLICY_INIT;
    kids[2 * i] = td_task_spawn(ctx, &p, &c);
    if (kids[2 * i] == nullptr) parent_status = td_last_error();
  }
  const td_status status = td_task_respawn_when_all(ctx, kids, 5, TD_PRIORITY_HIGH);
  if (parent_status.load() == TD_OK) parent_status = status;
  for (td_future* f : kids) td_future_release(f);
}

}  // namespace

TEST_CASE("fibonacci with td_task_respawn_when_all is exact, and so are its statistics") {
  on_each_worker_count([](td_space* space, std::size_t workers) {
    scheduler_ref s(space, 512u << 10);
    fib_failures = 0;
    const long destroyed = fib_destroyed.load();
    CHECK(run_fib_respawn_when_all(s, 20) == 6765);
    td_scheduler_stats st = s.stats();
    // F(20) has 21891 calls, 10945 of them with n > 1: each of those respawns once.
    CHECK(st.tasks_spawned == 21891);
    CHECK(st.tasks_respawned == 10945);
    CHECK(st.task_executions == 21891 + 10945);
    CHECK(st.tasks_completed == st.tasks_spawned);
    CHECK(st.when_alls_created <= st.tasks_respawned);
    // One worker runs F(n-2) inside the spawn of F(n-1) (002 §3.3.2): the task then waits on
    // F(n-1) alone, without a when_all.
    if (workers == 1) CHECK(st.when_alls_created < st.tasks_respawned);
    CHECK(st.allocation_failures == 0);
    CHECK(fib_destroyed.load() - destroyed == 21891);
    check_pool_empty(s);

    for (int round = 0; round < 20; ++round) {
      INFO("round " << round);
      REQUIRE(run_fib_respawn_when_all(s, 15) == 610);
    }
    st = s.stats();
    CHECK(st.tasks_spawned == 21891 + 20 * 1973);
    CHECK(st.tasks_respawned == 10945 + 20 * 986);
    CHECK(st.when_alls_created <= st.tasks_respawned);
    CHECK(st.waits == 21);
    CHECK(fib_failures.load() == 0);
    check_pool_empty(s);
  });
}

TEST_CASE("the task runs again only after every element completed") {
  using e = element;
  on_each_worker_count([](td_space* space, std::size_t workers) {
    scheduler_ref s(space, 1u << 20);
    {
      INFO("three incomplete elements: a when_all");
      const fan_in r = run_fan_in(s, {e::gated, e::gated, e::gated}, false);
      CHECK(r.parent_runs == 2);
      CHECK(r.when_alls == 1);
      if (workers == 1) CHECK(r.respawns == 1);
    }
    {
      INFO("four incomplete elements among NULLs and a complete one");
      const fan_in r = run_fan_in(
          s, {e::null, e::gated, e::complete, e::null, e::gated, e::gated, e::gated, e::null},
          false);
      CHECK(r.parent_runs == 2);
      CHECK(r.when_alls == 1);
    }
    {
      INFO("exactly one incomplete element: the task waits on it directly");
      const fan_in r = run_fan_in(s, {e::complete, e::gated, e::complete}, false);
      CHECK(r.parent_runs == 2);
      // With several workers, a gated child that a poll put back into the parent's worker's
      // private queue may still get a when_all (Place::private_dependence).
      if (workers == 1) {
        CHECK(r.when_alls == 0);
      } else {
        CHECK(r.when_alls <= 1);
      }
    }
    {
      INFO("every element complete: the task runs again as soon as possible");
      const fan_in r = run_fan_in(s, {e::complete, e::complete}, false);
      CHECK(r.parent_runs == 2);
      CHECK(r.when_alls == 0);
      CHECK(r.respawns == 1);
    }
    {
      INFO("only NULL elements are skipped");
      const fan_in r = run_fan_in(s, {e::null, e::null, e::null}, false);
      CHECK(r.parent_runs == 2);
      CHECK(r.when_alls == 0);
      CHECK(r.respawns == 1);
    }
    {
      INFO("count 0 with an array, and with futures NULL");
      for (bool no_array : {false, true}) {
        const fan_in r = run_fan_in(s, {}, false, no_array);
        CHECK(r.parent_runs == 2);
        CHECK(r.when_alls == 0);
        CHECK(r.respawns == 1);
      }
    }
  });
}

TEST_CASE("the futures may be released right after the call, before the run ends") {
  using e = element;
  on_each_worker_count([](td_space* space, std::size_t) {
    scheduler_ref s(space, 1u << 20);
    {
      INFO("incomplete children the test spawned, handed to the parent");
      const fan_in r = run_fan_in(s, {e::gated, e::complete, e::null, e::gated, e::gated}, true);
      CHECK(r.parent_runs == 2);
      CHECK(r.when_alls == 1);
    }
    {
      INFO("exactly one incomplete element, released");
      const fan_in r = run_fan_in(s, {e::complete, e::gated}, true);
      CHECK(r.parent_runs == 2);
    }
    {
      INFO("children the parent spawned, between NULLs");
      for (int round = 0; round < 50; ++round) {
        reset_records();
        parent_status = TD_OK;
        int runs = 0;
        td_future* p = host_spawn(policy(s), closure(spawning_parent, &runs, sizeof runs,
                                                     sizeof(int)));
        s.wait();
        CHECK(parent_status.load() == TD_OK);
        CHECK(result_of<int>(p) == 2);
        check_parent_last(completions, 3);
        CHECK(td_future_release(p) == TD_OK);
        check_pool_empty(s);
      }
    }
    CHECK(run_fib_respawn_when_all(s, 12) == 144);
    check_pool_empty(s);
  });
}

namespace {

// The run-ahead of td_task_respawn_when_all with several workers: the parent's children, on
// top of its worker's queue, run inside the call, in the worker's order. The other worker
// spins in busy_task meanwhile, so it asks for no task; a request it left while idle takes
// the parent's first spawn, a decoy.
std::atomic<bool> busy_started{false};
std::atomic<bool> busy_release{false};

void busy_task(td_task_ctx*, void*) {
  busy_started.store(true, std::memory_order_release);
  while (!busy_release.load(std::memory_order_acquire)) std::this_thread::yield();
}

void nothing(td_task_ctx*, void*) {}

std::atomic<int> ready_after_call{-1};  // children complete when the call returned

void ahead_parent(td_task_ctx* ctx, void* state) {
  int& runs = *static_cast<int*>(state);
  if (++runs > 1) {
    complete(parent_id);
    return;
  }
  while (!busy_started.load(std::memory_order_acquire)) std::this_thread::yield();
  const td_task_policy low = policy(nullptr, TD_PRIORITY_LOW);
  const td_task_closure decoy_closure = closure(nothing);
  td_future* decoy = td_task_spawn(ctx, &low, &decoy_closure);
  td_future* kids[2] = {};
  const td_priority priorities[2] = {TD_PRIORITY_REGULAR, TD_PRIORITY_HIGH};
  for (int i = 0; i < 2; ++i) {
    const td_task_policy p = policy(nullptr, priorities[i]);
    const td_task_closure c = closure(mark, &i, sizeof i);
    kids[i] = td_task_spawn(ctx, &p, &c);
  }
  if (decoy == nullptr || kids[0] == nullptr || kids[1] == nullptr) {
    parent_status = td_last_error();
  } else {
    parent_status = td_task_respawn_when_all(ctx, kids, 2, TD_PRIORITY_REGULAR);
  }
  int complete_children = 0;
  for (td_future* f : kids) {
    int ready = 0;
    if (f != nullptr && td_future_is_ready(f, &ready) == TD_OK) complete_children += ready;
    td_future_release(f);
  }
  ready_after_call = complete_children;
  td_future_release(decoy);
  busy_release.store(true, std::memory_order_release);
}

}  // namespace

TEST_CASE("with two workers the children the worker runs next run inside the call") {
  on_each_worker_count([](td_space* space, std::size_t workers) {
    if (workers != 2) return;
    scheduler_ref s(space, 1u << 20);
    for (int round = 0; round < 20; ++round) {
      reset_records();
      busy_started = false;
      busy_release = false;
      parent_status = -1;
      ready_after_call = -1;
      int runs = 0;
      const td_scheduler_stats before = s.stats();
      td_future* busy = host_spawn(policy(s), closure(busy_task));
      td_future* p = host_spawn(policy(s), closure(ahead_parent, &runs, sizeof runs));
      s.wait();
      const td_scheduler_stats after = s.stats();
      CHECK(parent_status.load() == TD_OK);
      CHECK(ready_after_call.load() == 2);
      INFO("the order of completion: the High child, the Regular one, the parent");
      CHECK(completions == std::vector<int>{1, 0, parent_id});
      CHECK(after.when_alls_created == before.when_alls_created);
      CHECK(after.tasks_respawned - before.tasks_respawned == 1);
      CHECK(td_future_release(busy) == TD_OK);
      CHECK(td_future_release(p) == TD_OK);
      check_pool_empty(s);
    }
  });
}

namespace {

td_future* foreign_future = nullptr;  // a future of another scheduler

struct many_state {
  std::vector<td_future*>* deps;  // the test's
  int runs;
};

void parent_of_many(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<many_state*>(state);
  *static_cast<int*>(td_task_result(ctx)) = ++s->runs;
  if (s->runs > 1) {
    complete(parent_id);
    return;
  }
  std::vector<td_future*>& deps = *s->deps;
  // A bad element far past the first eight (which are decoded on the stack) is found too.
  td_future* kept = deps[900];
  deps[900] = foreign_future;
  note(td_task_respawn_when_all(ctx, deps.data(), static_cast<int>(deps.size()),
                                TD_PRIORITY_REGULAR));
  deps[900] = kept;
  note(td_task_respawn_when_all(ctx, deps.data(), static_cast<int>(deps.size()),
                                TD_PRIORITY_REGULAR));
  gate.store(true, std::memory_order_release);
}

}  // namespace

TEST_CASE("a thousand incomplete elements: a tree of when_alls") {
  on_each_worker_count([](td_space* space, std::size_t) {
    scheduler_ref s(space, 1u << 20);
    scheduler_ref other(workers::serial, 1u << 20);
    reset_records();
    foreign_future = host_spawn(policy(other), closure(mark, &parent_id, sizeof parent_id));
    std::vector<td_future*> deps;
    for (int i = 0; i < 1000; ++i) deps.push_back(spawn_gated(s, i));
    td_future* child_500 = deps[500];
    deps[500] = nullptr;  // skipped
    many_state state{&deps, 0};
    const td_scheduler_stats before = s.stats();
    td_future* f = host_spawn(policy(s, TD_PRIORITY_HIGH),
                              closure(parent_of_many, &state, sizeof state, sizeof(int)));
    s.wait();
    CHECK(result_of<int>(f) == 2);
    REQUIRE(outcomes.size() == 2);
    check_outcome(outcomes[0], TD_ERROR_INVALID_ARGUMENT,
                  {"td_task_respawn_when_all", "futures[900]", "another scheduler"});
    check_outcome(outcomes[1], TD_OK);
    // More than one block's worth of dependences: a when_all of when_alls.
    CHECK(s.stats().when_alls_created - before.when_alls_created >= 3);
    // Every child but 500, whose element was NULL, completed before the parent's second run.
    REQUIRE(completions.size() == 1001);
    const auto parent_at = std::find(completions.begin(), completions.end(), parent_id);
    std::vector<int> before_parent(completions.begin(), parent_at);
    before_parent.erase(std::remove(before_parent.begin(), before_parent.end(), 500),
                        before_parent.end());
    std::sort(before_parent.begin(), before_parent.end());
    REQUIRE(before_parent.size() == 999);
    for (int i = 0; i < 999; ++i) {
      if (before_parent[static_cast<std::size_t>(i)] != (i < 500 ? i : i + 1)) {
        FAIL_CHECK("child " << (i < 500 ? i : i + 1) << " completed after the parent");
        break;
      }
    }
    for (td_future* d : deps) CHECK(td_future_release(d) == TD_OK);
    CHECK(td_future_release(child_500) == TD_OK);
    CHECK(td_future_release(f) == TD_OK);
    other.wait();
    CHECK(td_future_release(foreign_future) == TD_OK);
    check_pool_empty(s);
  });
}

namespace {

// The futures the misusing task passes, set by the test before its wait.
struct misuse_futures {
  td_future* pending;   // a gated child
  td_future* released;  // released by the test: its task is gone
  td_future* foreign;   // of another scheduler
  td_future* own;       // the misusing task's own
};

misuse_futures misuse{};
td_task_ctx* used_context = nullptr;
std::atomic<int> pending_ready_at_second_run{-1};

void misuse_task(td_task_ctx* ctx, void* state) {
  int& runs = *static_cast<int*>(state);
  *static_cast<int*>(td_task_result(ctx)) = ++runs;
  used_context = ctx;
  const misuse_futures& m = misuse;
  td_future* pending[1] = {m.pending};
  if (runs == 1) {
    note(td_task_respawn_when_all(ctx, nullptr, 1, TD_PRIORITY_REGULAR));
    note(td_task_respawn_when_all(ctx, pending, -1, TD_PRIORITY_REGULAR));
    td_future* released[2] = {m.pending, m.released};
    note(td_task_respawn_when_all(ctx, released, 2, TD_PRIORITY_REGULAR));
    td_future* foreign[2] = {nullptr, m.foreign};
    note(td_task_respawn_when_all(ctx, foreign, 2, TD_PRIORITY_REGULAR));
    td_future* own[3] = {m.pending, nullptr, m.own};
    note(td_task_respawn_when_all(ctx, own, 3, TD_PRIORITY_REGULAR));
    note(td_task_respawn_when_all(ctx, pending, 1, 7));
    // None of the above changed anything: this one is the run's respawn.
    note(td_task_respawn_when_all(ctx, pending, 1, TD_PRIORITY_LOW));
    note(td_task_respawn_when_all(ctx, nullptr, 0, TD_PRIORITY_REGULAR));
    note(td_task_respawn(ctx, nullptr, TD_PRIORITY_REGULAR));
    gate.store(true, std::memory_order_release);
  } else if (runs == 2) {
    int ready = 0;
    td_future_is_ready(m.pending, &ready);
    pending_ready_at_second_run = ready;
    note(td_task_respawn(ctx, nullptr, TD_PRIORITY_REGULAR));
    note(td_task_respawn_when_all(ctx, pending, 1, TD_PRIORITY_REGULAR));
  }
}

// Makes one bad call (its own future as an element) and nothing else.
void own_future_only(td_task_ctx* ctx, void* state) {
  int& runs = *static_cast<int*>(state);
  *static_cast<int*>(td_task_result(ctx)) = ++runs;
  td_future* own[1] = {misuse.own};
  note(td_task_respawn_when_all(ctx, own, 1, TD_PRIORITY_REGULAR));
}

}  // namespace

TEST_CASE("bad input is refused with its status and message, and the scheduler goes on") {
  on_each_worker_count([](td_space* space, std::size_t) {
    scheduler_ref s(space, 1u << 20);
    scheduler_ref other(workers::serial, 1u << 20);
    reset_records();
    td_future* gone = host_spawn(policy(s), closure(mark, &parent_id, sizeof parent_id));
    s.wait();
    REQUIRE(td_future_release(gone) == TD_OK);  // its last reference: the task is freed
    misuse.released = gone;
    misuse.foreign = host_spawn(policy(other), closure(mark, &parent_id, sizeof parent_id));
    misuse.pending = spawn_gated(s, 0);
    int runs = 0;
    td_future* f = host_spawn(policy(s, TD_PRIORITY_HIGH),
                              closure(misuse_task, &runs, sizeof runs, sizeof(int)));
    misuse.own = f;
    completions.clear();
    s.wait();
    CHECK(result_of<int>(f) == 3);
    CHECK(pending_ready_at_second_run.load() == 1);
    REQUIRE(outcomes.size() == 11);
    const char* fn = "td_task_respawn_when_all";
    check_outcome(outcomes[0], TD_ERROR_NULL_ARGUMENT, {fn, "futures"});
    check_outcome(outcomes[1], TD_ERROR_INVALID_ARGUMENT, {fn, "count", "-1"});
    check_outcome(outcomes[2], TD_ERROR_INVALID_HANDLE, {fn, "futures[1]", "already released"});
    check_outcome(outcomes[3], TD_ERROR_INVALID_ARGUMENT, {fn, "futures[1]", "another scheduler"});
    check_outcome(outcomes[4], TD_ERROR_INVALID_ARGUMENT, {fn, "own future"});
    check_outcome(outcomes[5], TD_ERROR_INVALID_ARGUMENT, {fn, "priority", "7"});
    check_outcome(outcomes[6], TD_OK);
    check_outcome(outcomes[7], TD_ERROR_INVALID_ARGUMENT, {fn, "already asked to respawn"});
    check_outcome(outcomes[8], TD_ERROR_INVALID_ARGUMENT,
                  {"td_task_respawn", "already asked to respawn"});
    check_outcome(outcomes[9], TD_OK);
    check_outcome(outcomes[10], TD_ERROR_INVALID_ARGUMENT, {fn, "already asked to respawn"});

    // A context used after its call, and no context, from the host.
    REQUIRE(used_context != nullptr);
    td_future* some[1] = {misuse.pending};
    CHECK_FAILS(td_task_respawn_when_all(used_context, some, 1, TD_PRIORITY_REGULAR),
                TD_ERROR_INVALID_ARGUMENT, fn, "ctx", "runs none");
    CHECK_FAILS(td_task_respawn_when_all(nullptr, some, 1, TD_PRIORITY_REGULAR),
                TD_ERROR_NULL_ARGUMENT, fn, "ctx");
    CHECK(td_future_release(f) == TD_OK);

    // On error the task does not respawn.
    reset_records();
    runs = 0;
    f = host_spawn(policy(s), closure(own_future_only, &runs, sizeof runs, sizeof(int)));
    misuse.own = f;
    s.wait();
    CHECK(result_of<int>(f) == 1);
    REQUIRE(outcomes.size() == 1);
    check_outcome(outcomes[0], TD_ERROR_INVALID_ARGUMENT, {fn, "own future"});
    CHECK(td_future_release(f) == TD_OK);

    CHECK(td_future_release(misuse.pending) == TD_OK);
    other.wait();
    CHECK(td_future_release(misuse.foreign) == TD_OK);
    CHECK(run_fib_respawn_when_all(s, 10) == 55);
    check_pool_empty(s);
  });
}

namespace {

struct exhaust_state {
  td_future* gated[2];
  int runs;
};

std::atomic<int> fill_error{TD_OK};

void exhaust_then_respawn(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<exhaust_state*>(state);
  *static_cast<int*>(td_task_result(ctx)) = ++s->runs;
  if (s->runs > 1) return;
  // Fill the pool with when_alls (td_when_all runs no task first, where a spawn on one worker
  // would run the gated children) of the size class of the one the call needs.
  std::vector<td_future*> fillers;
  td_scheduler* sched = td_task_scheduler(ctx);
  for (int i = 0; i < 1000000; ++i) {
    td_future* w = td_when_all(sched, s->gated, 1);
    if (w == nullptr) {
      fill_error = td_last_error();
      break;
    }
    fillers.push_back(w);
  }
  // Two incomplete elements need a when_all block.
  note(td_task_respawn_when_all(ctx, s->gated, 2, TD_PRIORITY_REGULAR));
  for (td_future* w : fillers) td_future_release(w);
  gate.store(true, std::memory_order_release);
}

}  // namespace

TEST_CASE("no room for the when_all: TD_ERROR_POOL_EXHAUSTED and no respawn") {
  on_each_worker_count([](td_space* space, std::size_t) {
    scheduler_ref s(space, 64u << 10);
    reset_records();
    fill_error = TD_OK;
    exhaust_state state{{spawn_gated(s, 0), spawn_gated(s, 1)}, 0};
    td_future* f = host_spawn(policy(s, TD_PRIORITY_HIGH),
                              closure(exhaust_then_respawn, &state, sizeof state, sizeof(int)));
    s.wait();
    CHECK(fill_error.load() == TD_ERROR_POOL_EXHAUSTED);
    REQUIRE(outcomes.size() == 1);
    check_outcome(outcomes[0], TD_ERROR_POOL_EXHAUSTED, {"td_task_respawn_when_all"});
    CHECK(result_of<int>(f) == 1);  // it did not respawn
    const td_scheduler_stats st = s.stats();
    CHECK(st.allocation_failures == 2);
    CHECK(st.tasks_completed == 3);
    // The gated children completed after the parent's only run.
    REQUIRE(completions.size() == 2);
    for (td_future* g : state.gated) CHECK(td_future_release(g) == TD_OK);
    CHECK(td_future_release(f) == TD_OK);
    check_pool_empty(s);
    CHECK(run_fib_respawn_when_all(s, 10) == 55);
    check_pool_empty(s);
  });
}

namespace {

std::atomic<int> team_runs{0};
std::atomic<int> team_first_status{TD_OK};
std::atomic<int> team_refused{0};
std::atomic<int> kids_done{0};
std::atomic<int> kids_done_at_second_run{-1};

void count_kid(td_task_ctx*, void*) { kids_done++; }

void team_respawner(td_task_ctx* ctx, void*) {
  td_team* team = td_task_team(ctx);
  const bool first = team_runs.load() == 0;
  const bool lead = td_team_rank(team) == 0;
  if (first && lead) {
    td_future* kids[2] = {};
    td_task_closure c = closure(count_kid);
    td_task_policy p = TD_TASK_POLICY_INIT;
    for (td_future*& k : kids) k = td_task_spawn(ctx, &p, &c);
    team_first_status = td_task_respawn_when_all(ctx, kids, 2, TD_PRIORITY_LOW);
    for (td_future* k : kids) td_future_release(k);
  }
  td_team_barrier(team);
  if (first && !lead) {
    const td_status status = td_task_respawn_when_all(ctx, nullptr, 0, TD_PRIORITY_REGULAR);
    note(status);
    if (status == TD_ERROR_WRONG_THREAD) team_refused++;
  }
  if (!first && lead) kids_done_at_second_run = kids_done.load();
  td_team_barrier(team);
  if (lead) team_runs++;
}

}  // namespace

TEST_CASE("in a team task only one member may respawn_when_all") {
  on_each_worker_count([](td_space* space, std::size_t workers) {
    if (workers < 2) return;  // needs a team of two; the Serial space has no teams
    scheduler_ref s(space, 1u << 20, static_cast<int>(workers));
    reset_records();
    team_runs = 0;
    team_first_status = -1;
    team_refused = 0;
    kids_done = 0;
    kids_done_at_second_run = -1;
    td_future* f = host_spawn(policy(s, TD_PRIORITY_REGULAR, nullptr, true),
                              closure(team_respawner));
    s.wait();
    CHECK(team_runs.load() == 2);
    CHECK(team_first_status.load() == TD_OK);
    CHECK(team_refused.load() == static_cast<int>(workers) - 1);
    CHECK(kids_done_at_second_run.load() == 2);
    REQUIRE(outcomes.size() == workers - 1);
    for (const outcome& o : outcomes) {
      check_outcome(o, TD_ERROR_WRONG_THREAD,
                    {"td_task_respawn_when_all", "may not spawn or respawn"});
    }
    CHECK(td_future_release(f) == TD_OK);
    check_pool_empty(s);
  });
}
