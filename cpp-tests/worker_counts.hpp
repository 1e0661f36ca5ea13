// Runs a task-DAG test body at each worker count the C API offers: one worker (the Serial space
// and a Threads sub-instance of one thread), two, and every thread of the runtime.
#ifndef TASKDAG_TESTS_WORKER_COUNTS_HPP
#define TASKDAG_TESTS_WORKER_COUNTS_HPP

#include <cstddef>
#include <exception>
#include <functional>
#include <initializer_list>

#include "support.hpp"

namespace taskdag_test {

struct space_ref {
  td_space* space = nullptr;
  space_ref() = default;
  space_ref(const space_ref&) = delete;
  space_ref& operator=(const space_ref&) = delete;
  ~space_ref() { td_space_release(space); }
};

struct instance_call {
  std::function<void(td_space*)> body;
  std::exception_ptr failure;
};

inline void control(td_space* instance, std::size_t, void* user) {
  auto* call = static_cast<instance_call*>(user);
  // A failed REQUIRE throws, which must not unwind through the library's frames: rethrown by
  // on_each_worker_count once td_space_run_instances has returned.
  try {
    call->body(instance);
  } catch (...) {
    call->failure = std::current_exception();
  }
}

// Runs `body(space, workers)` for a scheduler of one worker (the Serial space, and a Threads
// sub-instance of one thread), of two (a sub-instance of two threads, where the runtime has
// them) and of every thread of the runtime. The first sub-instance's control thread is this
// one, so doctest's checks run on the test's thread throughout. (The C API cannot ask for more
// threads than hardware threads: more workers than cores is tests/task_stress.rs's part.)
template <class Body>
void on_each_worker_count(Body body) {
  {
    space_ref serial;
    REQUIRE(td_space_serial(&serial.space) == TD_OK);
    INFO("one worker: the Serial space");
    body(serial.space, std::size_t{1});
  }
  space_ref threads;
  REQUIRE(td_space_threads(&threads.space) == TD_OK);
  std::size_t all = 0;
  REQUIRE(td_space_concurrency(threads.space, &all) == TD_OK);
  for (std::size_t n : {std::size_t{1}, std::size_t{2}}) {
    if (n > all) continue;
    INFO(n << " worker(s): a sub-instance of the Threads space");
    td_instance_request request = TD_INSTANCE_REQUEST_INIT;
    request.num_threads = n;
    instance_call call{[&](td_space* instance) { body(instance, n); }, nullptr};
    const td_status status = td_space_run_instances(threads.space, &request, 1, control, &call);
    if (call.failure) std::rethrow_exception(call.failure);
    INFO(last_message());
    REQUIRE(status == TD_OK);
  }
  INFO(all << " worker(s): every thread of the runtime");
  body(threads.space, all);
}

}  // namespace taskdag_test

#endif  // TASKDAG_TESTS_WORKER_COUNTS_HPP
