// Respawn (000 §2.2.1, §3.2.2): long chains, new dependences and priorities, and its limits.
#include <atomic>
#include <string>

#include "task_support.hpp"

using namespace taskdag_test;

namespace {

struct chain_state {
  long runs;
  long limit;
};

void count_to_limit(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<chain_state*>(state);
  *static_cast<long*>(td_task_result(ctx)) = ++s->runs;
  if (s->runs < s->limit) td_task_respawn(ctx, nullptr, TD_PRIORITY_REGULAR);
}

}  // namespace

TEST_CASE("a respawn chain of a hundred thousand runs keeps the task's state") {
  for (workers w : {workers::serial, workers::threads}) {
    scheduler_ref s(w);
    chain_state state{0, 100000};
    td_future* f = host_spawn(policy(s), closure(count_to_limit, &state, sizeof state, sizeof(long)));
    s.wait();
    CHECK(result_of<long>(f) == 100000);
    const td_scheduler_stats st = s.stats();
    CHECK(st.tasks_respawned == 99999);
    CHECK(st.task_executions == 100000);
    CHECK(td_future_release(f) == TD_OK);
  }
}

namespace {

std::atomic<int> step{0};

void mark_step(td_task_ctx* ctx, void*) { *static_cast<int*>(td_task_result(ctx)) = ++step; }

struct waiter_state {
  td_future* child;
  int seen_child_step;
};

void respawn_on_child(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<waiter_state*>(state);
  if (s->child == nullptr) {
    td_task_closure c = closure(mark_step, nullptr, 0, sizeof(int));
    td_task_policy p = TD_TASK_POLICY_INIT;
    s->child = td_task_spawn(ctx, &p, &c);
    td_task_respawn(ctx, s->child, TD_PRIORITY_LOW);
  } else {
    int ready = 0;
    td_future_is_ready(s->child, &ready);
    s->seen_child_step = ready ? 1 : -1;
    *static_cast<int*>(td_task_result(ctx)) = ++step;
  }
}

void release_child(void* state) { td_future_release(static_cast<waiter_state*>(state)->child); }

}  // namespace

TEST_CASE("a respawned task runs again only after its new dependence completed") {
  scheduler_ref s;
  step = 0;
  waiter_state state{nullptr, 0};
  td_future* f = host_spawn(policy(s), closure(respawn_on_child, &state, sizeof state,
                                               sizeof(int), release_child));
  s.wait();
  CHECK(result_of<int>(f) == 2);  // the child marked step 1
  CHECK(td_future_release(f) == TD_OK);
}

namespace {

std::atomic<int> second_respawn{TD_OK};
std::atomic<int> self_respawn{TD_OK};

struct self_state {
  td_future* self;
  int runs;
};

void respawn_twice(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<self_state*>(state);
  if (s->runs++ > 0) return;
  second_respawn = TD_OK;
  td_task_respawn(ctx, nullptr, TD_PRIORITY_LOW);
  second_respawn = td_task_respawn(ctx, nullptr, TD_PRIORITY_LOW);
}

}  // namespace

TEST_CASE("respawning twice in one run is rejected and the first request stands") {
  scheduler_ref s;
  self_state state{nullptr, 0};
  td_future* f = host_spawn(policy(s), closure(respawn_twice, &state, sizeof state));
  s.wait();
  CHECK(second_respawn.load() == TD_ERROR_INVALID_ARGUMENT);
  CHECK(s.stats().task_executions == 2);
  CHECK(td_future_release(f) == TD_OK);
}

namespace {

td_task_ctx* saved_ctx = nullptr;

void save_context(td_task_ctx* ctx, void*) { saved_ctx = ctx; }

}  // namespace

TEST_CASE("a context used after its task returned is rejected without being read") {
  scheduler_ref s(workers::serial);
  td_future* f = host_spawn(policy(s), closure(save_context));
  s.wait();
  REQUIRE(saved_ctx != nullptr);
  // The context's stack frame is gone: the calling thread runs no task, so the pointer is
  // refused before anything is read through it (AddressSanitizer checks the latter).
  CHECK_FAILS(td_task_respawn(saved_ctx, nullptr, TD_PRIORITY_REGULAR),
              TD_ERROR_INVALID_ARGUMENT, "td_task_respawn", "ctx", "runs none");
  CHECK(td_task_result(saved_ctx) == nullptr);
  CHECK_FAILS(td_task_respawn(nullptr, nullptr, TD_PRIORITY_REGULAR), TD_ERROR_NULL_ARGUMENT,
              "ctx");
  CHECK(td_future_release(f) == TD_OK);
}
