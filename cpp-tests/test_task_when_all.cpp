// when_all (000 §2.2.2, §3.2.2): of many futures, of when_alls, from a generator with NULL
// entries, of complete futures, and of a future that a task on another worker uses at once.
#include <atomic>
#include <thread>
#include <vector>

#include "task_support.hpp"

using namespace taskdag_test;

namespace {

std::atomic<int> ran{0};

void count_and_return_index(td_task_ctx* ctx, void* state) {
  ran.fetch_add(1);
  *static_cast<long*>(td_task_result(ctx)) = *static_cast<const long*>(state);
}

struct check_state {
  int expected;
};

void check_all_ran(td_task_ctx* ctx, void* state) {
  *static_cast<int*>(td_task_result(ctx)) =
      ran.load() == static_cast<const check_state*>(state)->expected;
}

td_future* generate_every_third(int i, void* user) {
  auto* futures = static_cast<std::vector<td_future*>*>(user);
  return i % 3 == 0 ? (*futures)[static_cast<std::size_t>(i)] : nullptr;
}

}  // namespace

TEST_CASE("a when_all of a thousand futures and when_alls of when_alls complete after them") {
  for (workers w : {workers::serial, workers::threads}) {
    scheduler_ref s(w);
    ran = 0;
    std::vector<td_future*> futures;
    for (long i = 0; i < 1000; ++i) {
      futures.push_back(
          host_spawn(policy(s), closure(count_and_return_index, &i, sizeof i, sizeof(long))));
    }
    // More than one 4 KiB block holds: built as a tree of when_alls.
    td_future* all = td_when_all(s, futures.data(), 1000);
    REQUIRE(all != nullptr);
    td_future* halves[2] = {td_when_all(s, futures.data(), 500),
                            td_when_all(s, futures.data() + 500, 500)};
    REQUIRE(halves[0] != nullptr);
    REQUIRE(halves[1] != nullptr);
    td_future* of_when_alls[3] = {halves[0], halves[1], all};
    td_future* top = td_when_all(s, of_when_alls, 3);
    REQUIRE(top != nullptr);
    check_state expected{1000};
    td_future* last =
        host_spawn(policy(s, TD_PRIORITY_LOW, top), closure(check_all_ran, &expected,
                                                            sizeof expected, sizeof(int)));
    int ready = 1;
    CHECK(td_future_is_ready(all, &ready) == TD_OK);
    CHECK(ready == 0);
    s.wait();
    CHECK(result_of<int>(last) == 1);
    long sum = 0;
    for (td_future* f : futures) sum += result_of<long>(f);
    CHECK(sum == 999 * 1000 / 2);
    std::size_t size = 1;
    CHECK(td_future_result_size(all, &size) == TD_OK);
    CHECK(size == 0);
    for (td_future* f : futures) CHECK(td_future_release(f) == TD_OK);
    for (td_future* f : {all, halves[0], halves[1], top, last}) CHECK(td_future_release(f) == TD_OK);
    CHECK(s.stats().alive == 0);
  }
}

TEST_CASE("the generator form skips NULL entries") {
  scheduler_ref s;
  ran = 0;
  std::vector<td_future*> futures;
  for (long i = 0; i < 30; ++i) {
    futures.push_back(
        host_spawn(policy(s), closure(count_and_return_index, &i, sizeof i, sizeof(long))));
  }
  td_future* some = td_when_all_generate(s, 30, generate_every_third, &futures);
  INFO(last_message());
  REQUIRE(some != nullptr);
  s.wait();
  int ready = 0;
  CHECK(td_future_is_ready(some, &ready) == TD_OK);
  CHECK(ready == 1);
  CHECK(td_future_release(some) == TD_OK);
  for (td_future* f : futures) CHECK(td_future_release(f) == TD_OK);
}

TEST_CASE("a when_all of complete futures, or of none, is complete at once") {
  scheduler_ref s;
  long i = 7;
  td_future* done = host_spawn(policy(s), closure(count_and_return_index, &i, sizeof i, sizeof(long)));
  s.wait();
  td_future* pair[2] = {done, done};
  td_future* all = td_when_all(s, pair, 2);
  td_future* none = td_when_all(s, nullptr, 0);
  REQUIRE(all != nullptr);
  REQUIRE(none != nullptr);
  int ready = 0;
  CHECK(td_future_is_ready(all, &ready) == TD_OK);
  CHECK(ready == 1);
  CHECK(td_future_is_ready(none, &ready) == TD_OK);
  CHECK(ready == 1);
  for (td_future* f : {all, none, done}) CHECK(td_future_release(f) == TD_OK);
  CHECK(s.stats().alive == 0);
}

// ---------------------------------------------------------------------------------------------
// A future two tasks use at once: its owner makes when_alls of it while a task on another worker
// retains, releases and makes when_alls of it through the owner's pointer.
// ---------------------------------------------------------------------------------------------

namespace {

constexpr int shared_rounds = 5000;
constexpr int shared_pairs = 128;
constexpr int started_at_pair = 4;  // the owner goes on from here: its when_all meets the burst

struct handoff {
  std::atomic<td_future*> future{nullptr};
  std::atomic<int> published{0}, started{0}, done{0};
  std::atomic<int> failures{0};
};

handoff shared_future;

void until(const std::atomic<int>& cell, int round) {
  while (cell.load(std::memory_order_acquire) < round) std::this_thread::yield();
}

void count_failure(bool ok) {
  if (!ok) shared_future.failures.fetch_add(1, std::memory_order_relaxed);
}

void empty_task(td_task_ctx*, void*) {}

void owner_task(td_task_ctx* ctx, void*) {
  handoff& h = shared_future;
  const td_task_policy p = TD_TASK_POLICY_INIT;
  const td_task_closure c = closure(empty_task);
  for (int round = 1; round <= shared_rounds; ++round) {
    td_future* task = td_task_spawn(ctx, &p, &c);
    td_future* other = td_task_spawn(ctx, &p, &c);
    count_failure(task != nullptr && other != nullptr);
    h.future.store(task, std::memory_order_release);
    h.published.store(round, std::memory_order_release);
    until(h.started, round);
    // Even rounds hold `task` (not the last incomplete one), odd ones wait on it first.
    td_future* pair[2] = {round % 2 ? other : task, round % 2 ? task : other};
    td_future* all = td_when_all(td_task_scheduler(ctx), pair, 2);
    count_failure(all != nullptr);
    count_failure(td_future_release(all) == TD_OK);
    until(h.done, round);
    count_failure(td_future_release(task) == TD_OK);
    count_failure(td_future_release(other) == TD_OK);
  }
}

void borrower_task(td_task_ctx* ctx, void*) {
  handoff& h = shared_future;
  for (int round = 1; round <= shared_rounds; ++round) {
    until(h.published, round);
    td_future* task = h.future.load(std::memory_order_acquire);
    for (int pair = 0; pair < shared_pairs; ++pair) {
      if (pair == started_at_pair) h.started.store(round, std::memory_order_release);
      count_failure(td_future_retain(task) == TD_OK);
      count_failure(td_future_release(task) == TD_OK);
      if (pair == started_at_pair + 1) {
        td_future* all = td_when_all(td_task_scheduler(ctx), &task, 1);
        count_failure(all != nullptr);
        count_failure(td_future_release(all) == TD_OK);
      }
    }
    h.done.store(round, std::memory_order_release);
  }
}

}  // namespace

TEST_CASE("a future another worker's task retains and waits on while its owner makes a when_all") {
  scheduler_ref s(workers::threads, 16u << 20);
  if (s.concurrency() < 2) {
    MESSAGE("skipped: the runtime has one thread");
    return;
  }
  // The two tasks spin on each other, so each needs a worker of its own: spawned first, they
  // are the first two tasks the workers take, and nothing else is spawned until they run.
  td_future* owner = host_spawn(policy(s), closure(owner_task));
  td_future* borrower = host_spawn(policy(s), closure(borrower_task));
  s.wait();
  CHECK(shared_future.failures.load() == 0);
  for (td_future* f : {owner, borrower}) CHECK(td_future_release(f) == TD_OK);
  const td_scheduler_stats st = s.stats();
  CHECK(st.tasks_spawned == 2 + 2 * shared_rounds);
  CHECK(st.tasks_completed == st.tasks_spawned);
  CHECK(st.alive == 0);
}
