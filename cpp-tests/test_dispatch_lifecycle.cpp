// Spaces and dispatch across the runtime's lifecycle: before td_initialize, td_finalize while a
// dispatch or a partition runs (from another thread and from inside), and handles kept past
// td_finalize. Each test initializes and finalizes the runtime itself.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "dispatch_support.hpp"

using taskdag_test::concurrency;
using taskdag_test::instance_request;
using taskdag_test::range;

namespace {

struct runtime_scope {
  runtime_scope() {
    const td_status status = td_initialize(nullptr);
    INFO(taskdag_test::last_message());
    REQUIRE(status == TD_OK);
  }
  ~runtime_scope() {
    if (td_is_initialized()) td_finalize();
  }
};

// A body that holds a dispatch open until `release` is set (or 20 s pass).
struct held_dispatch {
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
};

void hold(std::int64_t, std::int64_t, void* user) {
  auto* h = static_cast<held_dispatch*>(user);
  h->started = true;
  taskdag_test::wait_until([h] { return h->release.load(); });
}

// Calls td_finalize on another thread while `dispatch` holds `held` open; returns the status.
// td_finalize may fail or wait for the dispatch; it must return either way, and if it succeeds
// it must not have returned before the dispatch ended.
template <class Dispatch>
td_status finalize_during(held_dispatch& held, Dispatch dispatch) {
  std::atomic<int> finalize_status{-1};
  std::atomic<bool> dispatch_done{false};
  std::atomic<bool> finalize_returned_early{false};
  std::thread finalizer([&] {
    taskdag_test::wait_until([&] { return held.started.load(); });
    const td_status s = td_finalize();
    if (s == TD_OK && !dispatch_done.load()) finalize_returned_early = true;
    finalize_status = static_cast<int>(s);
    held.release = true;
  });
  const td_status dispatched = dispatch();
  dispatch_done = true;
  held.release = true;  // in case td_finalize waits for the dispatch
  finalizer.join();
  CHECK(dispatched == TD_OK);
  CHECK_FALSE(finalize_returned_early.load());
  return static_cast<td_status>(finalize_status.load());
}

}  // namespace

TEST_CASE("spaces need an initialized runtime") {
  REQUIRE(td_is_initialized() == 0);
  td_space* space = nullptr;
  CHECK_FAILS(td_space_serial(&space), TD_ERROR_NOT_INITIALIZED, "td_space_serial",
              "td_initialize");
  CHECK_FAILS(td_space_threads(&space), TD_ERROR_NOT_INITIALIZED, "td_space_threads",
              "td_initialize");
  CHECK(space == nullptr);
  CHECK(td_thread_pool_rank() == -1);
  CHECK(td_in_parallel() == 0);
  CHECK(td_max_hardware_threads() >= 1);
}

TEST_CASE("td_init_args.num_threads sizes the Threads space") {
  for (int threads : {1, static_cast<int>(td_max_hardware_threads())}) {
    CAPTURE(threads);
    td_init_args args = TD_INIT_ARGS_INIT;
    args.num_threads = threads;
    REQUIRE(td_initialize(&args) == TD_OK);
    {
      const taskdag_test::space_ref space = taskdag_test::threads_space();
      CHECK(concurrency(space) == static_cast<std::size_t>(threads));
    }
    REQUIRE(td_finalize() == TD_OK);
  }
}

TEST_CASE("td_finalize from another thread while a dispatch runs fails with TD_ERROR_BUSY") {
  runtime_scope rt;
  const taskdag_test::space_ref space = taskdag_test::threads_space();
  held_dispatch held;
  const td_range_policy policy = range(0, 1);  // one index: rank 0 (this thread) holds it
  const td_status status =
      finalize_during(held, [&] { return td_parallel_for(space, &policy, hold, &held); });
  CHECK(status == TD_ERROR_BUSY);
  CHECK(td_is_initialized() == 1);
  // The dispatch completed and the runtime still works; now it finalizes.
  std::int64_t sum = 0;
  const td_range_policy sum_policy = range(0, 1000);
  REQUIRE(td_parallel_reduce(
              space, &sum_policy,
              [](std::int64_t b, std::int64_t e, void* v, void*) {
                for (std::int64_t i = b; i < e; ++i) *static_cast<std::int64_t*>(v) += i;
              },
              nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum) == TD_OK);
  CHECK(sum == 499500);
  CHECK(td_finalize() == TD_OK);
}

TEST_CASE("td_finalize while a worker holds a dispatch, or a partition runs, never crashes") {
  runtime_scope rt;
  const taskdag_test::space_ref space = taskdag_test::threads_space();
  if (concurrency(space) >= 2) {
    // The last block goes to the last rank, a worker thread.
    struct worker_hold {
      held_dispatch held;
      std::int64_t last;
    } w{{}, static_cast<std::int64_t>(concurrency(space)) - 1};
    const td_range_policy policy = range(0, w.last + 1);
    const td_status status = finalize_during(w.held, [&] {
      return td_parallel_for(
          space, &policy,
          [](std::int64_t b, std::int64_t, void* u) {
            auto* wh = static_cast<worker_hold*>(u);
            if (b == wh->last) hold(b, b + 1, &wh->held);
          },
          &w);
    });
    CHECK((status == TD_ERROR_BUSY || status == TD_OK));
    if (status == TD_OK) REQUIRE(td_initialize(nullptr) == TD_OK);
  }
  held_dispatch held;
  const td_instance_request one = instance_request(1);
  const td_status status = finalize_during(held, [&] {
    return td_space_run_instances(
        space, &one, 1,
        [](td_space* instance, std::size_t, void* user) {
          const td_range_policy p = range(0, 1);
          td_parallel_for(instance, &p, hold, user);
        },
        &held);
  });
  CHECK(status == TD_ERROR_BUSY);
}

TEST_CASE("td_finalize inside a dispatch fails with TD_ERROR_BUSY") {
  runtime_scope rt;
  const taskdag_test::space_ref space = taskdag_test::threads_space();
  std::atomic<int> status{-1};
  const td_range_policy policy = range(0, 1);
  REQUIRE(td_parallel_for(
              space, &policy,
              [](std::int64_t, std::int64_t, void* u) {
                static_cast<std::atomic<int>*>(u)->store(static_cast<int>(td_finalize()));
              },
              &status) == TD_OK);
  CHECK(status.load() == TD_ERROR_BUSY);
  CHECK(td_is_initialized() == 1);
}

TEST_CASE("handles kept past td_finalize still dispatch, and a new runtime gets a new pool") {
  td_space* kept = nullptr;
  td_space* serial = nullptr;
  {
    runtime_scope rt;
    REQUIRE(td_space_threads(&kept) == TD_OK);
    REQUIRE(td_space_serial(&serial) == TD_OK);
    // td_finalize while a Serial dispatch runs on another thread: the Serial space does not
    // hold the runtime, so td_finalize may succeed; the dispatch completes either way.
    held_dispatch held;
    const td_range_policy policy = range(0, 10);
    std::atomic<int> dispatched{-1};
    std::thread other([&] {
      dispatched = static_cast<int>(td_parallel_for(serial, &policy, hold, &held));
    });
    REQUIRE(taskdag_test::wait_until([&] { return held.started.load(); }));
    const td_status finalized = td_finalize();
    held.release = true;
    other.join();
    CHECK((finalized == TD_OK || finalized == TD_ERROR_BUSY));
    CHECK(dispatched.load() == TD_OK);
    if (finalized != TD_OK) REQUIRE(td_finalize() == TD_OK);
  }
  REQUIRE(td_is_initialized() == 0);
  std::int64_t sum = 0;
  const td_range_policy policy = range(0, 100000);
  const td_reduce_fn body = [](std::int64_t b, std::int64_t e, void* v, void*) {
    for (std::int64_t i = b; i < e; ++i) *static_cast<std::int64_t*>(v) += i;
  };
  CHECK(td_parallel_reduce(kept, &policy, body, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum) ==
        TD_OK);
  CHECK(sum == 4999950000);
  CHECK(td_parallel_reduce(serial, &policy, body, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum) ==
        TD_OK);
  CHECK(sum == 4999950000);
  {
    runtime_scope again;
    const taskdag_test::space_ref fresh = taskdag_test::threads_space();
    CHECK(td_parallel_reduce(fresh, &policy, body, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64,
                             &sum) == TD_OK);
    CHECK(sum == 4999950000);
    CHECK(td_parallel_reduce(kept, &policy, body, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum) ==
          TD_OK);
  }
  CHECK(td_space_release(kept) == TD_OK);
  CHECK(td_space_release(serial) == TD_OK);
}
