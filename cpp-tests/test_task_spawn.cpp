// Spawning tasks and reading their futures through the C API: Fibonacci on one and on all
// threads and in a small pool, destroy callbacks, statistics, priorities on one worker, and the
// lifetime of futures (000 §2.3.1, §3.2.1).
#include <cstddef>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "task_support.hpp"

using namespace taskdag_test;

TEST_CASE("fibonacci is exact on the serial space and on every thread of the runtime") {
  for (workers w : {workers::serial, workers::threads}) {
    scheduler_ref s(w);
    for (long n : {0L, 1L, 2L, 10L, 20L}) {
      CHECK(run_fib(s, n) == fibonacci(n));
    }
    const td_scheduler_stats st = s.stats();
    CHECK(st.alive == 0);
    CHECK(st.tasks_completed == st.tasks_spawned);
    CHECK(statistics(s.pool()).consumed_blocks == 0);
  }
}

TEST_CASE("fibonacci of 20 runs in a 16 KiB pool on one worker") {
  // 000 Fig. 3.4's pool is 16000 bytes: F(n-2) first and the single-worker mitigation
  // (002 §3.3.2) keep few tasks alive.
  scheduler_ref s(workers::serial, 16000);
  CHECK(run_fib(s, 20) == 6765);
  const td_scheduler_stats st = s.stats();
  CHECK(st.allocation_failures == 0);
  CHECK(st.peak_alive < 64);
  CHECK(st.peak_bytes <= 64 * 128);
}

TEST_CASE("destroy callbacks run once per task, when it completes") {
  scheduler_ref s;
  const long before = fib_destroyed.load();
  CHECK(run_fib(s, 15) == 610);
  const td_scheduler_stats st = s.stats();
  CHECK(fib_destroyed.load() - before == static_cast<long>(st.tasks_spawned));
}

TEST_CASE("statistics count spawns, runs, respawns and when_alls") {
  scheduler_ref s(workers::serial);
  CHECK(run_fib(s, 10) == 55);
  const td_scheduler_stats st = s.stats();
  // F(10) has 177 calls, 88 of them with n > 1.
  CHECK(st.tasks_spawned == 177);
  CHECK(st.tasks_respawned == 88);
  CHECK(st.when_alls_created == 88);
  CHECK(st.task_executions == 177 + 88);
  CHECK(st.waits == 1);
  CHECK(st.peak_alive >= 3);
  CHECK(st.peak_bytes >= 3 * 128);
  CHECK(st.steals == 0);
  CHECK(st.workers_sat_out == 0);  // one worker never sits out
}

TEST_CASE("statistics fill the struct of a caller compiled before workers_sat_out, and no more") {
  scheduler_ref s(workers::serial);
  CHECK(run_fib(s, 10) == 55);
  td_scheduler_stats st = TD_SCHEDULER_STATS_INIT;
  st.struct_size = offsetof(td_scheduler_stats, workers_sat_out);
  st.workers_sat_out = 12345;  // beyond the older struct: must stay as it is
  REQUIRE(td_scheduler_statistics(s, &st) == TD_OK);
  CHECK(st.struct_size == offsetof(td_scheduler_stats, workers_sat_out));
  CHECK(st.tasks_spawned == 177);
  CHECK(st.waits == 1);
  CHECK(st.workers_sat_out == 12345);
  // Smaller than the first version, or larger than this one: refused.
  const std::size_t first_version = offsetof(td_scheduler_stats, workers_sat_out);
  for (std::size_t size : {first_version - 8, sizeof(td_scheduler_stats) + 8}) {
    td_scheduler_stats bad = TD_SCHEDULER_STATS_INIT;
    bad.struct_size = size;
    CHECK(td_scheduler_statistics(s, &bad) == TD_ERROR_STRUCT_SIZE);
    CHECK(std::string(td_last_error_message()).find("struct_size") != std::string::npos);
  }
}

namespace {

std::mutex order_mutex;
std::vector<int> order;

void record(td_task_ctx*, void* state) {
  std::lock_guard<std::mutex> lock(order_mutex);
  order.push_back(*static_cast<const int*>(state));
}

}  // namespace

TEST_CASE("one worker runs higher priorities first and the newest first within a priority") {
  scheduler_ref s(workers::serial);
  order.clear();
  const td_priority priorities[] = {TD_PRIORITY_LOW,  TD_PRIORITY_REGULAR, TD_PRIORITY_HIGH,
                                    TD_PRIORITY_LOW,  TD_PRIORITY_REGULAR, TD_PRIORITY_HIGH};
  std::vector<td_future*> futures;
  for (int i = 0; i < 6; ++i) {
    futures.push_back(host_spawn(policy(s, priorities[i]), closure(record, &i, sizeof i)));
  }
  s.wait();
  CHECK(order == std::vector<int>{5, 2, 4, 1, 3, 0});
  for (td_future* f : futures) CHECK(td_future_release(f) == TD_OK);
}

namespace {

void write_42(td_task_ctx* ctx, void*) { *static_cast<long*>(td_task_result(ctx)) = 42; }
void do_nothing(td_task_ctx*, void*) {}

}  // namespace

TEST_CASE("results are read by copy or in place, and only after completion") {
  scheduler_ref s;
  td_future* f = host_spawn(policy(s), closure(write_42, nullptr, 0, sizeof(long)));
  long value = -1;
  CHECK_FAILS(td_future_get(f, &value, sizeof value), TD_ERROR_NOT_READY, "not complete");
  CHECK(value == -1);
  int ready = 1;
  CHECK(td_future_is_ready(f, &ready) == TD_OK);
  CHECK(ready == 0);
  s.wait();
  CHECK(td_future_is_ready(f, &ready) == TD_OK);
  CHECK(ready == 1);
  CHECK(result_of<long>(f) == 42);
  const void* bytes = nullptr;
  std::size_t size = 0;
  CHECK(td_future_result(f, &bytes, &size) == TD_OK);
  CHECK(size == sizeof(long));
  CHECK(*static_cast<const long*>(bytes) == 42);
  CHECK(td_future_result_size(f, &size) == TD_OK);
  CHECK(size == sizeof(long));
  int small = 0;
  CHECK_FAILS(td_future_get(f, &small, sizeof small), TD_ERROR_INVALID_ARGUMENT, "`size` is 4",
              "8 bytes");
  CHECK(td_future_release(f) == TD_OK);
}

TEST_CASE("a result the task never writes reads as zeros") {
  scheduler_ref s;
  td_future* f = host_spawn(policy(s), closure(do_nothing, nullptr, 0, sizeof(long)));
  s.wait();
  CHECK(result_of<long>(f) == 0);
  CHECK(td_future_release(f) == TD_OK);
}

TEST_CASE("futures released before and after completion free their tasks") {
  scheduler_ref s;
  td_future* early = host_spawn(policy(s), closure(write_42, nullptr, 0, sizeof(long)));
  td_future* kept = host_spawn(policy(s, TD_PRIORITY_REGULAR, early),
                               closure(write_42, nullptr, 0, sizeof(long)));
  CHECK(td_future_release(early) == TD_OK);  // the task still runs
  CHECK(s.stats().alive == 2);
  s.wait();
  CHECK(s.stats().alive == 1);
  CHECK(td_future_retain(kept) == TD_OK);
  CHECK(td_future_release(kept) == TD_OK);
  CHECK(result_of<long>(kept) == 42);
  CHECK(td_future_release(kept) == TD_OK);
  CHECK(s.stats().alive == 0);
  CHECK(statistics(s.pool()).consumed_blocks == 0);
}

namespace {

struct reader_state {
  td_future* old;
};

void read_old(td_task_ctx* ctx, void* state) {
  long value = 0;
  td_future_get(static_cast<reader_state*>(state)->old, &value, sizeof value);
  *static_cast<long*>(td_task_result(ctx)) = value + 1;
}

void release_old(void* state) { td_future_release(static_cast<reader_state*>(state)->old); }

}  // namespace

TEST_CASE("a task reads the result of a task that completed long ago") {
  scheduler_ref s;
  td_future* old = host_spawn(policy(s), closure(write_42, nullptr, 0, sizeof(long)));
  s.wait();
  for (int i = 0; i < 3; ++i) CHECK(run_fib(s, 12) == 144);  // other tasks come and go
  REQUIRE(td_future_retain(old) == TD_OK);
  reader_state state{old};  // the task owns this reference and releases it when it completes
  td_future* reader = host_spawn(policy(s, TD_PRIORITY_REGULAR, old),
                                 closure(read_old, &state, sizeof state, sizeof(long), release_old));
  CHECK(td_future_release(old) == TD_OK);
  s.wait();
  CHECK(result_of<long>(reader) == 43);
  CHECK(td_future_release(reader) == TD_OK);
  CHECK(s.stats().alive == 0);
}

TEST_CASE("a future may outlive its scheduler") {
  pool_ref pool(1 << 20);
  td_scheduler_args args = TD_SCHEDULER_ARGS_INIT;
  args.pool = pool;
  td_scheduler* sched = nullptr;
  REQUIRE(td_scheduler_create(&args, &sched) == TD_OK);
  td_future* f = host_spawn(policy(sched), closure(write_42, nullptr, 0, sizeof(long)));
  REQUIRE(td_wait(sched) == TD_OK);
  CHECK(td_scheduler_release(sched) == TD_OK);
  CHECK(result_of<long>(f) == 42);
  CHECK(statistics(pool).consumed_blocks == 1);
  CHECK(td_future_release(f) == TD_OK);
  CHECK(statistics(pool).consumed_blocks == 0);
}

TEST_CASE("the null future is null") {
  CHECK(td_future_is_null(nullptr) == 1);
  CHECK(td_future_release(nullptr) == TD_OK);
  long value = 0;
  CHECK_FAILS(td_future_get(nullptr, &value, sizeof value), TD_ERROR_NULL_ARGUMENT, "future");
}

namespace {

// A task that records its thread and respawns itself until it has run `limit` times.
struct chain_link {
  std::vector<std::thread::id>* seen;
  int runs;
  int limit;
};

void run_chain_link(td_task_ctx* ctx, void* state) {
  auto* s = static_cast<chain_link*>(state);
  {
    std::lock_guard<std::mutex> lock(order_mutex);
    s->seen->push_back(std::this_thread::get_id());
  }
  if (++s->runs < s->limit) td_task_respawn(ctx, nullptr, TD_PRIORITY_REGULAR);
}

}  // namespace

TEST_CASE("a wait of one task or of a chain of tasks runs them on the calling thread") {
  // A wait starts on the calling thread alone and calls in the other workers only when a second
  // task is ready (docs/tasks.md, "Threads").
  scheduler_ref s;
  if (s.concurrency() < 2) {
    MESSAGE("skipped: the runtime has one thread");
    return;
  }
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread::id> seen;
    chain_link respawning{&seen, 0, 100};
    td_future* f = host_spawn(policy(s), closure(run_chain_link, &respawning, sizeof respawning));
    s.wait();
    REQUIRE(td_future_release(f) == TD_OK);

    chain_link once{&seen, 0, 1};
    td_future* last = host_spawn(policy(s), closure(run_chain_link, &once, sizeof once));
    for (int i = 0; i < 50; ++i) {
      td_future* next =
          host_spawn(policy(s, TD_PRIORITY_REGULAR, last), closure(run_chain_link, &once, sizeof once));
      REQUIRE(td_future_release(last) == TD_OK);
      last = next;
    }
    s.wait();
    REQUIRE(td_future_release(last) == TD_OK);

    INFO("round " << round);
    CHECK(seen.size() == 100 + 51);
    long elsewhere = 0;
    for (const std::thread::id& id : seen) elsewhere += id != std::this_thread::get_id();
    CHECK(elsewhere == 0);
  }
}
