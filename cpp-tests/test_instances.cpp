// Execution spaces and their instances through the C API (003): the Serial space, the root
// Threads instance, disjoint sub-instances from td_space_run_instances, masks, the control-thread
// rule, nested dispatch, retired sub-instances, and bad input to every td_space_* function.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <ostream>  // doctest prints std::thread::id
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dispatch_support.hpp"

using taskdag_test::check_last_error;
using taskdag_test::concurrency;
using taskdag_test::failure_log;
using taskdag_test::instance_request;
using taskdag_test::range;
using taskdag_test::space_ref;
using taskdag_test::team_policy;

namespace {

// Where one call of a dispatched body ran.
struct placement {
  std::int64_t pool_rank;
  std::int64_t hardware_thread;
  std::thread::id thread;
};

struct placement_log {
  std::mutex mutex;
  std::vector<placement> seen;
  void record() {
    const placement p{td_thread_pool_rank(), td_hardware_thread_id(), std::this_thread::get_id()};
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(p);
  }
};

void record_placement(std::int64_t, std::int64_t, void* user) {
  static_cast<placement_log*>(user)->record();
}

// One placement per block, with every block of a dispatch over `blocks` threads held until all
// have started: the control thread's block waits for the others, so that each block runs on its
// own thread instead of the control thread taking blocks nobody claimed yet.
struct met_placements {
  placement_log log;
  taskdag_test::block_rendezvous rendezvous;
  int others;
  explicit met_placements(std::size_t blocks) : others(static_cast<int>(blocks) - 1) {}
};

void record_and_meet(std::int64_t, std::int64_t, void* user) {
  auto* s = static_cast<met_placements*>(user);
  s->log.record();
  s->rendezvous.arrive_or_wait(td_thread_pool_rank() == 0, s->others);
}

bool pool_is_pinned() {
  char* text = nullptr;
  REQUIRE(td_configuration_string(&text) == TD_OK);
  const bool pinned = std::string(text).find("pinned to CPUs") != std::string::npos;
  td_string_free(text);
  return pinned;
}

// Runs `control(instance, index)` for each request through a captureless trampoline.
using control_function = std::function<void(td_space*, std::size_t)>;

td_status run_instances(const td_space* space, const std::vector<td_instance_request>& requests,
                        const control_function& control) {
  return td_space_run_instances(
      space, requests.data(), requests.size(),
      [](td_space* instance, std::size_t index, void* user) {
        (*static_cast<const control_function*>(user))(instance, index);
      },
      const_cast<control_function*>(&control));
}

std::vector<std::size_t> split(std::size_t threads, std::size_t parts) {
  std::vector<std::size_t> sizes(parts, threads / parts);
  for (std::size_t i = 0; i < threads % parts; ++i) ++sizes[i];
  return sizes;
}

void noop_range(std::int64_t, std::int64_t, void*) {}

}  // namespace

TEST_CASE("the Serial space runs every dispatch on the calling thread, from any thread") {
  const space_ref space = taskdag_test::serial_space();
  td_exec_kind kind = TD_EXEC_THREADS;
  REQUIRE(td_space_kind(space, &kind) == TD_OK);
  CHECK(kind == TD_EXEC_SERIAL);
  CHECK(concurrency(space) == 1);
  for (int from_other_thread : {0, 1}) {
    CAPTURE(from_other_thread);
    placement_log log;
    td_status status = TD_ERROR_INTERNAL;
    std::thread::id caller;
    const auto dispatch = [&] {
      caller = std::this_thread::get_id();
      const td_range_policy policy = range(0, 100);
      status = td_parallel_for(space, &policy, record_placement, &log);
    };
    if (from_other_thread) {
      std::thread(dispatch).join();
    } else {
      dispatch();
    }
    CHECK(status == TD_OK);
    REQUIRE(log.seen.size() == 1);
    CHECK(log.seen[0].thread == caller);
  }
  CHECK(td_space_fence(space) == TD_OK);
  const space_ref half = taskdag_test::masked(space, 0.5);
  CHECK(concurrency(half) == 1);
}

TEST_CASE("the Threads space reports its kind, size, hierarchy and the calling thread's rank") {
  const space_ref space = taskdag_test::threads_space();
  td_exec_kind kind = TD_EXEC_SERIAL;
  REQUIRE(td_space_kind(space, &kind) == TD_OK);
  CHECK(kind == TD_EXEC_THREADS);
  const std::size_t threads = concurrency(space);
  CHECK(threads >= 1);
  CHECK(threads <= td_max_hardware_threads());
  std::size_t size = 0;
  REQUIRE(td_space_thread_pool_size(space, 0, &size) == TD_OK);
  CHECK(size == threads);
  REQUIRE(td_space_thread_pool_size(space, 1, &size) == TD_OK);
  CHECK(size >= 1);
  REQUIRE(td_space_thread_pool_size(space, 2, &size) == TD_OK);
  CHECK(size == 1);
  CHECK(td_space_fence(space) == TD_OK);
  // main ran td_initialize, so it is the root instance's control thread: pool rank 0.
  CHECK(td_thread_pool_rank() == 0);
  CHECK(td_hardware_thread_id() >= 0);
  CHECK(td_hardware_thread_id() < static_cast<std::int64_t>(td_max_hardware_threads()));
  std::int64_t outside_rank = 0;
  std::thread([&] { outside_rank = td_thread_pool_rank(); }).join();
  CHECK(outside_rank == -1);
  // Two handles to the root instance are the same instance.
  const space_ref again = taskdag_test::threads_space();
  CHECK(concurrency(again) == threads);
}

TEST_CASE("each rank of a dispatch runs on its own pool thread, the caller on rank 0") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  const bool pinned = pool_is_pinned();
  for (int repeat = 0; repeat < 50; ++repeat) {
    met_placements st(threads);
    const td_range_policy policy = range(0, 10000);
    REQUIRE(td_parallel_for(space, &policy, record_and_meet, &st) == TD_OK);
    const placement_log& log = st.log;
    REQUIRE(log.seen.size() == threads);
    std::set<std::int64_t> ranks, cpus;
    std::set<std::thread::id> ids;
    for (const placement& p : log.seen) {
      ranks.insert(p.pool_rank);
      cpus.insert(p.hardware_thread);
      ids.insert(p.thread);
      if (p.pool_rank == 0) CHECK(p.thread == std::this_thread::get_id());
    }
    CHECK(ranks.size() == threads);
    CHECK(*ranks.rbegin() == static_cast<std::int64_t>(threads) - 1);
    CHECK(ids.size() == threads);
    if (pinned) CHECK(cpus.size() == threads);
  }
}

TEST_CASE("sub-instances are disjoint, run at the same time, and dispatch only to their threads") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  if (threads < 2) {
    MESSAGE("skipped: the Threads space has " << threads << " thread; instances need 2");
    return;
  }
  const bool pinned = pool_is_pinned();
  std::vector<std::vector<std::size_t>> layouts = {split(threads, 2),
                                                   split(threads, std::min<std::size_t>(threads, 3))};
  if (threads >= 3) layouts.push_back({1, 1});  // leaves threads idle
  for (const std::vector<std::size_t>& sizes : layouts) {
    CAPTURE(sizes.size());
    std::vector<td_instance_request> requests;
    for (std::size_t s : sizes) requests.push_back(instance_request(s));
    const std::size_t count = sizes.size();
    std::vector<placement_log> logs(count);
    std::vector<std::int64_t> control_rank(count, -2);
    std::vector<std::thread::id> control_thread(count);
    std::atomic<std::size_t> arrived{0};
    failure_log failures;
    const control_function control = [&](td_space* instance, std::size_t index) {
      control_rank[index] = td_thread_pool_rank();
      control_thread[index] = std::this_thread::get_id();
      std::size_t n = 0;
      failures.expect(td_space_concurrency(instance, &n), TD_OK, "concurrency");
      if (n != sizes[index]) failures.add("instance " + std::to_string(index) + " has " +
                                          std::to_string(n) + " threads");
      td_exec_kind kind = TD_EXEC_SERIAL;
      failures.expect(td_space_kind(instance, &kind), TD_OK, "kind");
      if (kind != TD_EXEC_THREADS) failures.add("a sub-instance is not a Threads space");
      // Every control function is running before any dispatches: they run concurrently.
      arrived.fetch_add(1);
      if (!taskdag_test::wait_until([&] { return arrived.load() == count; })) {
        failures.add("control functions did not all run at the same time");
      }
      for (int d = 0; d < 20; ++d) {
        const td_range_policy policy = range(0, 100000);
        failures.expect(td_parallel_for(instance, &policy, record_placement, &logs[index]), TD_OK,
                        "dispatch in instance " + std::to_string(index));
      }
    };
    REQUIRE(run_instances(space, requests, control) == TD_OK);
    failures.report();
    // The caller controls the first instance.
    CHECK(control_thread[0] == std::this_thread::get_id());
    std::set<std::int64_t> all_ranks, all_cpus;
    std::set<std::thread::id> all_ids;
    for (std::size_t i = 0; i < count; ++i) {
      CAPTURE(i);
      std::set<std::int64_t> ranks, cpus;
      std::set<std::thread::id> ids;
      for (const placement& p : logs[i].seen) {
        ranks.insert(p.pool_rank);
        cpus.insert(p.hardware_thread);
        ids.insert(p.thread);
      }
      CHECK(ranks.size() == sizes[i]);
      CHECK(ids.size() == sizes[i]);
      // The control thread is one of its instance's threads.
      CHECK(ranks.count(control_rank[i]) == 1);
      CHECK(ids.count(control_thread[i]) == 1);
      for (std::int64_t r : ranks) {
        CHECK(r >= 0);
        CHECK(r < static_cast<std::int64_t>(threads));
        CHECK_MESSAGE(all_ranks.insert(r).second, "pool rank " << r << " is in two instances");
      }
      for (const std::thread::id& id : ids) CHECK(all_ids.insert(id).second);
      if (pinned) {
        CHECK(cpus.size() == sizes[i]);
        for (std::int64_t c : cpus) {
          CHECK_MESSAGE(all_cpus.insert(c).second, "hardware thread " << c << " is in two instances");
        }
      }
    }
  }
  // After the partition the root instance has all its threads back.
  placement_log log;
  const td_range_policy policy = range(0, 10000);
  REQUIRE(td_parallel_for(space, &policy, record_placement, &log) == TD_OK);
  CHECK(log.seen.size() == threads);
}

TEST_CASE("a sub-instance can be partitioned again, and a single request takes the caller") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  failure_log failures;
  std::atomic<int> inner_calls{0};
  std::atomic<std::size_t> user_seen{0};
  const control_function outer = [&](td_space* instance, std::size_t index) {
    if (index != 0) failures.add("a single request got index " + std::to_string(index));
    if (std::this_thread::get_id() == std::thread::id()) failures.add("no thread id");
    std::size_t n = 0;
    td_space_concurrency(instance, &n);
    user_seen = n;
    const std::vector<td_instance_request> inner_requests =
        n >= 2 ? std::vector<td_instance_request>{instance_request(1), instance_request(n - 1)}
               : std::vector<td_instance_request>{instance_request(1)};
    const control_function inner = [&](td_space* sub, std::size_t) {
      inner_calls.fetch_add(1);
      const td_range_policy policy = range(0, 100);
      failures.expect(td_parallel_for(sub, &policy, noop_range, nullptr), TD_OK, "inner dispatch");
    };
    failures.expect(run_instances(instance, inner_requests, inner), TD_OK, "inner partition");
    if (inner_calls.load() != static_cast<int>(inner_requests.size())) {
      failures.add("inner control functions ran " + std::to_string(inner_calls.load()) + " times");
    }
  };
  REQUIRE(run_instances(space, {instance_request(threads)}, outer) == TD_OK);
  failures.report();
  CHECK(user_seen.load() == threads);
}

TEST_CASE("requests that cannot be satisfied are rejected before anything runs") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  std::atomic<int> calls{0};
  const control_function count = [&](td_space*, std::size_t) { calls.fetch_add(1); };

  // Over-subscription: one thread more than the instance has, in one request or spread out.
  CHECK_FAILS(run_instances(space, {instance_request(threads + 1)}, count),
              TD_ERROR_INVALID_ARGUMENT, "td_space_run_instances",
              std::to_string(threads + 1) + " threads", "has " + std::to_string(threads),
              "request fewer");
  std::vector<td_instance_request> spread(threads + 1, instance_request(1));
  CHECK_FAILS(run_instances(space, spread, count), TD_ERROR_INVALID_ARGUMENT,
              std::to_string(threads + 1) + " threads");
  // A request of no threads, and NUMA domains this machine does not have.
  CHECK_FAILS(run_instances(space, {instance_request(1), instance_request(0)}, count),
              TD_ERROR_INVALID_ARGUMENT, "request 1", "0 threads");
  td_instance_request numa = instance_request(1);
  numa.numa_count = 1000;
  CHECK_FAILS(run_instances(space, {numa}, count), TD_ERROR_INVALID_ARGUMENT, "NUMA");
  if (threads >= 2) {
    td_instance_request crowded = instance_request(2);
    crowded.numa_count = 1;
    crowded.cores_per_numa = 1;
    CHECK_FAILS(run_instances(space, {crowded}, count), TD_ERROR_INVALID_ARGUMENT, "cannot hold");
  }
  CHECK(calls.load() == 0);
  // The instance is not left busy by a rejected partition.
  CHECK(run_instances(space, {instance_request(1)}, count) == TD_OK);
  CHECK(calls.load() == 1);
}

TEST_CASE("only an instance's control thread may dispatch to it") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  const td_range_policy policy = range(0, 100);
  const td_team_policy teams = team_policy(1, 1);
  std::int64_t result = 0;

  // From a thread outside the pool: every dispatching function.
  std::vector<td_status> statuses;
  std::vector<std::string> messages;
  std::thread([&] {
    const auto keep = [&](td_status s) {
      statuses.push_back(s);
      messages.push_back(td_last_error_message());
    };
    keep(td_parallel_for(space, &policy, noop_range, nullptr));
    keep(td_parallel_reduce(space, &policy, [](std::int64_t, std::int64_t, void*, void*) {},
                            nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &result));
    keep(td_parallel_scan(space, &policy, [](std::int64_t, std::int64_t, void*, int, void*) {},
                          nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &result));
    keep(td_parallel_team(space, &teams, [](const td_team*, void*) {}, nullptr));
    const td_instance_request one = instance_request(1);
    keep(td_space_run_instances(space, &one, 1, [](td_space*, std::size_t, void*) {}, nullptr));
    // A masked handle has the same control thread.
    td_space* half = nullptr;
    keep(td_space_mask(space, 0.5, &half));
    keep(td_parallel_for(half, &policy, noop_range, nullptr));
    td_space_release(half);
  }).join();
  REQUIRE(statuses.size() == 7);
  for (std::size_t i : {0, 1, 2, 3, 4, 6}) {
    CAPTURE(i);
    CHECK(statuses[i] == TD_ERROR_WRONG_THREAD);
    CHECK(taskdag_test::contains(messages[i], "control thread"));
  }
  CHECK(statuses[5] == TD_OK);  // taking a mask is no dispatch
  CHECK(result == 0);

  // From a pool thread inside a dispatch on the same instance (ranks other than 0).
  if (threads >= 2) {
    struct inner_state {
      std::thread::id main;
      const td_space* space;
      failure_log failures;
      std::atomic<int> others{0};
      taskdag_test::block_rendezvous rendezvous;
      int expected_others;
    } state{std::this_thread::get_id(), space.get(), {}, {}, {}, static_cast<int>(threads) - 1};
    const td_range_policy wide = range(0, 1000);
    REQUIRE(td_parallel_for(
                space, &wide,
                [](std::int64_t, std::int64_t, void* user) {
                  auto* s = static_cast<inner_state*>(user);
                  if (std::this_thread::get_id() == s->main) {
                    s->rendezvous.arrive_or_wait(true, s->expected_others);
                    return;
                  }
                  s->others.fetch_add(1);
                  const td_range_policy p = range(0, 10);
                  s->failures.expect(td_parallel_for(s->space, &p, noop_range, nullptr),
                                     TD_ERROR_WRONG_THREAD, "dispatch from a worker");
                  s->rendezvous.arrive_or_wait(false, 0);
                },
                &state) == TD_OK);
    state.failures.report();
    CHECK(state.others.load() == static_cast<int>(threads) - 1);

    // Between sub-instances: main (controlling instance 0) may not dispatch to instance 1, and
    // instance 1's control thread may not dispatch to the root instance.
    failure_log failures;
    std::atomic<td_space*> second{nullptr};
    std::atomic<bool> tried{false};
    const control_function control = [&](td_space* instance, std::size_t index) {
      const td_range_policy p = range(0, 10);
      if (index == 1) {
        td_space_retain(instance);
        second.store(instance);
        failures.expect(td_parallel_for(space, &p, noop_range, nullptr), TD_ERROR_WRONG_THREAD,
                        "instance 1's control thread dispatching to the root");
        if (!taskdag_test::wait_until([&] { return tried.load(); })) failures.add("timeout");
        failures.expect(td_parallel_for(instance, &p, noop_range, nullptr), TD_OK,
                        "instance 1 dispatching to itself");
      } else {
        if (!taskdag_test::wait_until([&] { return second.load() != nullptr; })) {
          failures.add("timeout");
          tried = true;
          return;
        }
        failures.expect(td_parallel_for(second.load(), &p, noop_range, nullptr),
                        TD_ERROR_WRONG_THREAD, "main dispatching to instance 1");
        // main is the root's control thread, but the root is partitioned right now.
        failures.expect(td_parallel_for(space, &p, noop_range, nullptr), TD_ERROR_BUSY,
                        "main dispatching to the partitioned root");
        tried = true;
      }
    };
    REQUIRE(run_instances(space, {instance_request(1), instance_request(1)}, control) == TD_OK);
    failures.report();
    td_space_release(second.load());
  }
}

TEST_CASE("a dispatch or partition nested in a dispatch on the same instance is TD_ERROR_BUSY") {
  const space_ref space = taskdag_test::threads_space();
  const space_ref serial = taskdag_test::serial_space();
  const space_ref half = taskdag_test::masked(space, 0.5);
  struct nested_state {
    const td_space* space;
    const td_space* half;
    const td_space* serial;
    std::thread::id main;
    failure_log failures;
    std::atomic<int> checked{0};
  } state{space.get(), half.get(), serial.get(), std::this_thread::get_id(), {}, {}};

  const auto check_nested = [](nested_state& s) {
    if (std::this_thread::get_id() != s.main) return;  // other ranks: WRONG_THREAD, tested above
    s.checked.fetch_add(1);
    const td_range_policy p = range(0, 10);
    std::int64_t result = 0;
    s.failures.expect(td_parallel_for(s.space, &p, noop_range, nullptr), TD_ERROR_BUSY,
                      "nested parallel_for");
    s.failures.expect(td_parallel_reduce(s.space, &p, [](std::int64_t, std::int64_t, void*, void*) {},
                                         nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &result),
                      TD_ERROR_BUSY, "nested parallel_reduce");
    const td_team_policy t = team_policy(1, 1);
    s.failures.expect(td_parallel_team(s.space, &t, [](const td_team*, void*) {}, nullptr),
                      TD_ERROR_BUSY, "nested parallel_team");
    const td_instance_request one = instance_request(1);
    s.failures.expect(
        td_space_run_instances(s.space, &one, 1, [](td_space*, std::size_t, void*) {}, nullptr),
        TD_ERROR_BUSY, "nested run_instances");
    // A masked handle is the same instance.
    s.failures.expect(td_parallel_for(s.half, &p, noop_range, nullptr), TD_ERROR_BUSY,
                      "nested parallel_for on a masked handle");
    if (td_last_error() == TD_ERROR_BUSY &&
        std::string(td_last_error_message()).find("already running") == std::string::npos) {
      s.failures.add(std::string("message: ") + td_last_error_message());
    }
    // The Serial space is another space: allowed inside.
    std::atomic<int> calls{0};
    s.failures.expect(td_parallel_for(
                          s.serial, &p,
                          [](std::int64_t, std::int64_t, void* u) {
                            static_cast<std::atomic<int>*>(u)->fetch_add(1);
                          },
                          &calls),
                      TD_OK, "serial dispatch inside");
    if (calls.load() != 1) s.failures.add("the nested serial dispatch did not run once");
  };

  const td_range_policy policy = range(0, 1000);
  struct context {
    nested_state* state;
    void (*check)(nested_state&);
  } ctx{&state, +check_nested};
  REQUIRE(td_parallel_for(
              space, &policy,
              [](std::int64_t, std::int64_t, void* u) {
                auto* c = static_cast<context*>(u);
                c->check(*c->state);
              },
              &ctx) == TD_OK);
  const td_team_policy teams = team_policy(2, 1);
  REQUIRE(td_parallel_team(
              space, &teams,
              [](const td_team*, void* u) {
                auto* c = static_cast<context*>(u);
                c->check(*c->state);
              },
              &ctx) == TD_OK);
  state.failures.report();
  CHECK(state.checked.load() >= 2);
  // Nothing is left busy.
  CHECK(td_parallel_for(space, &policy, noop_range, nullptr) == TD_OK);
}

TEST_CASE("a mask restricts an instance to the ceiling of the fraction of its threads") {
  const space_ref space = taskdag_test::threads_space();
  const std::size_t threads = concurrency(space);
  const auto ceiling = [](std::size_t n, double f) {
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(static_cast<double>(n) * f)));
  };
  for (double fraction : {1.0, 0.75, 0.5, 0.01, 1.0 / static_cast<double>(threads)}) {
    CAPTURE(fraction);
    const space_ref m = taskdag_test::masked(space, fraction);
    const std::size_t expected = ceiling(threads, fraction);
    CHECK(concurrency(m) == expected);
    td_exec_kind kind = TD_EXEC_SERIAL;
    REQUIRE(td_space_kind(m, &kind) == TD_OK);
    CHECK(kind == TD_EXEC_THREADS);
    // Dispatches use the first `expected` threads of the instance, with the default policy
    // (whose mask of 1 keeps the masked space as it is) and with a policy mask on top.
    met_placements st(expected);
    const td_range_policy policy = range(0, 10000);
    REQUIRE(td_parallel_for(m, &policy, record_and_meet, &st) == TD_OK);
    const placement_log& log = st.log;
    std::set<std::int64_t> ranks;
    for (const placement& p : log.seen) ranks.insert(p.pool_rank);
    CHECK(ranks.size() == expected);
    CHECK(*ranks.rbegin() == static_cast<std::int64_t>(expected) - 1);
    const space_ref mm = taskdag_test::masked(m, 0.5);
    CHECK(concurrency(mm) == ceiling(expected, 0.5));
    placement_log log2;
    const td_range_policy half_policy = range(0, 10000, 0, 0.5);
    REQUIRE(td_parallel_for(m, &half_policy, record_placement, &log2) == TD_OK);
    CHECK(log2.seen.size() == ceiling(expected, 0.5));
    // A partition of a masked space has only the masked threads.
    if (expected < threads) {
      CHECK_FAILS(run_instances(m, {instance_request(expected + 1)}, [](td_space*, std::size_t) {}),
                  TD_ERROR_INVALID_ARGUMENT, "has " + std::to_string(expected));
    }
  }
  for (double bad : {0.0, -0.5, 1.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    CAPTURE(bad);
    td_space* out = nullptr;
    CHECK_FAILS(td_space_mask(space, bad, &out), TD_ERROR_INVALID_ARGUMENT, "td_space_mask",
                "(0, 1]");
    CHECK(out == nullptr);
  }
}

TEST_CASE("a sub-instance handle kept past its control function can no longer dispatch") {
  const space_ref space = taskdag_test::threads_space();
  td_space* kept = nullptr;
  const control_function control = [&](td_space* instance, std::size_t) {
    REQUIRE(td_space_retain(instance) == TD_OK);
    kept = instance;
    const td_range_policy p = range(0, 10);
    CHECK(td_parallel_for(instance, &p, noop_range, nullptr) == TD_OK);
  };
  REQUIRE(run_instances(space, {instance_request(1)}, control) == TD_OK);
  REQUIRE(kept != nullptr);
  const td_range_policy p = range(0, 10);
  CHECK_FAILS(td_parallel_for(kept, &p, noop_range, nullptr), TD_ERROR_INVALID_ARGUMENT,
              "td_parallel_for", "ended", "run_instances");
  const td_team_policy t = team_policy(1, 1);
  CHECK_FAILS(td_parallel_team(kept, &t, [](const td_team*, void*) {}, nullptr),
              TD_ERROR_INVALID_ARGUMENT, "ended");
  CHECK_FAILS(run_instances(kept, {instance_request(1)}, [](td_space*, std::size_t) {}),
              TD_ERROR_INVALID_ARGUMENT, "ended");
  // Its masks are retired too; queries still answer.
  td_space* half = nullptr;
  REQUIRE(td_space_mask(kept, 1.0, &half) == TD_OK);
  CHECK_FAILS(td_parallel_for(half, &p, noop_range, nullptr), TD_ERROR_INVALID_ARGUMENT, "ended");
  CHECK(concurrency(kept) == 1);
  CHECK(td_space_release(half) == TD_OK);
  CHECK(td_space_release(kept) == TD_OK);
  // The root instance is unaffected.
  CHECK(td_parallel_for(space, &p, noop_range, nullptr) == TD_OK);
}

TEST_CASE("space handles are reference-counted and checked") {
  td_space* space = nullptr;
  REQUIRE(td_space_threads(&space) == TD_OK);
  REQUIRE(td_space_retain(space) == TD_OK);
  REQUIRE(td_space_release(space) == TD_OK);
  CHECK(concurrency(space) >= 1);  // one reference left
  REQUIRE(td_space_release(space) == TD_OK);
  std::size_t n = 0;
  CHECK_FAILS(td_space_concurrency(space, &n), TD_ERROR_INVALID_HANDLE, "already released");
  CHECK_FAILS(td_space_release(space), TD_ERROR_INVALID_HANDLE, "td_space_release",
              "already released");
  CHECK(td_space_release(nullptr) == TD_OK);
}

TEST_CASE("every td_space function rejects bad input with a status and a message") {
  const space_ref space = taskdag_test::threads_space();
  const space_ref serial = taskdag_test::serial_space();
  td_space* out = nullptr;
  td_exec_kind kind = TD_EXEC_SERIAL;
  std::size_t n = 0;
  const td_instance_request one = instance_request(1);
  const td_instance_fn control = [](td_space*, std::size_t, void*) {};

  CHECK_FAILS(td_space_serial(nullptr), TD_ERROR_NULL_ARGUMENT, "td_space_serial", "out");
  CHECK_FAILS(td_space_threads(nullptr), TD_ERROR_NULL_ARGUMENT, "td_space_threads", "out");
  CHECK_FAILS(td_space_retain(nullptr), TD_ERROR_NULL_ARGUMENT, "td_space_retain", "space");
  CHECK_FAILS(td_space_kind(nullptr, &kind), TD_ERROR_NULL_ARGUMENT, "td_space_kind", "space");
  CHECK_FAILS(td_space_kind(space, nullptr), TD_ERROR_NULL_ARGUMENT, "out");
  CHECK_FAILS(td_space_concurrency(nullptr, &n), TD_ERROR_NULL_ARGUMENT, "td_space_concurrency");
  CHECK_FAILS(td_space_concurrency(space, nullptr), TD_ERROR_NULL_ARGUMENT, "out");
  CHECK_FAILS(td_space_mask(nullptr, 1.0, &out), TD_ERROR_NULL_ARGUMENT, "td_space_mask", "space");
  CHECK_FAILS(td_space_mask(space, 1.0, nullptr), TD_ERROR_NULL_ARGUMENT, "out");
  CHECK_FAILS(td_space_thread_pool_size(nullptr, 0, &n), TD_ERROR_NULL_ARGUMENT,
              "td_space_thread_pool_size");
  CHECK_FAILS(td_space_thread_pool_size(space, 0, nullptr), TD_ERROR_NULL_ARGUMENT, "out");
  CHECK_FAILS(td_space_thread_pool_size(space, -1, &n), TD_ERROR_INVALID_ARGUMENT, "depth -1",
              "negative");
  CHECK_FAILS(td_space_fence(nullptr), TD_ERROR_NULL_ARGUMENT, "td_space_fence", "space");

  CHECK_FAILS(td_space_run_instances(nullptr, &one, 1, control, nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_space_run_instances", "space");
  CHECK_FAILS(td_space_run_instances(space, nullptr, 1, control, nullptr), TD_ERROR_NULL_ARGUMENT,
              "requests");
  CHECK_FAILS(td_space_run_instances(space, &one, 1, nullptr, nullptr), TD_ERROR_NULL_ARGUMENT,
              "control");
  CHECK_FAILS(td_space_run_instances(space, &one, 0, control, nullptr), TD_ERROR_INVALID_ARGUMENT,
              "count", "at least one");
  td_instance_request bad_size = one;
  bad_size.struct_size = 4;
  CHECK_FAILS(td_space_run_instances(space, &bad_size, 1, control, nullptr), TD_ERROR_STRUCT_SIZE,
              "struct_size", "TD_INSTANCE_REQUEST_INIT");
  CHECK_FAILS(td_space_run_instances(serial, &one, 1, control, nullptr), TD_ERROR_UNAVAILABLE,
              "Serial", "Threads");

  // A handle of another type, and a released one, for every function that takes a space.
  td_pool* pool = nullptr;
  const td_pool_args args = taskdag_test::pool_args(1 << 16);
  REQUIRE(td_pool_create(&args, &pool) == TD_OK);
  td_space* released = nullptr;
  REQUIRE(td_space_serial(&released) == TD_OK);
  REQUIRE(td_space_release(released) == TD_OK);
  struct bad_handle {
    td_space* handle;
    const char* mention;
  };
  for (const bad_handle& bad : {bad_handle{reinterpret_cast<td_space*>(pool), "td_pool"},
                                bad_handle{released, "already released"}}) {
    CAPTURE(bad.mention);
    CHECK_FAILS(td_space_retain(bad.handle), TD_ERROR_INVALID_HANDLE, bad.mention);
    CHECK_FAILS(td_space_kind(bad.handle, &kind), TD_ERROR_INVALID_HANDLE, bad.mention);
    CHECK_FAILS(td_space_concurrency(bad.handle, &n), TD_ERROR_INVALID_HANDLE, bad.mention);
    CHECK_FAILS(td_space_mask(bad.handle, 0.5, &out), TD_ERROR_INVALID_HANDLE, bad.mention);
    CHECK_FAILS(td_space_thread_pool_size(bad.handle, 0, &n), TD_ERROR_INVALID_HANDLE,
                bad.mention);
    CHECK_FAILS(td_space_fence(bad.handle), TD_ERROR_INVALID_HANDLE, bad.mention);
    CHECK_FAILS(td_space_run_instances(bad.handle, &one, 1, control, nullptr),
                TD_ERROR_INVALID_HANDLE, bad.mention);
  }
  CHECK_FAILS(td_space_release(reinterpret_cast<td_space*>(pool)), TD_ERROR_INVALID_HANDLE,
              "td_pool");
  td_pool_release(pool);
  CHECK(out == nullptr);
}
