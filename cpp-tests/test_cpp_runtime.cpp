// The C++ layer's runtime scope guard and library functions (taskdag.hpp): taskdag::runtime,
// taskdag::configuration, taskdag::version, taskdag::check, taskdag::error.
#include <string>
#include <type_traits>

#include "support.hpp"
#include "taskdag.hpp"

using taskdag_test::contains;

static_assert(!std::is_copy_constructible<taskdag::runtime>::value, "runtime is a scope guard");
static_assert(!std::is_move_constructible<taskdag::runtime>::value, "runtime is a scope guard");
static_assert(std::is_base_of<std::runtime_error, taskdag::error>::value, "");

TEST_CASE("taskdag::runtime initializes the runtime for its scope") {
  REQUIRE(td_is_initialized() == 0);
  {
    taskdag::runtime runtime;
    CHECK(td_is_initialized() == 1);
    CHECK(contains(taskdag::configuration(), "taskdag " + taskdag::version()));
  }
  CHECK(td_is_initialized() == 0);
}

TEST_CASE("taskdag::runtime passes td_init_args on") {
  td_init_args args = TD_INIT_ARGS_INIT;
  args.num_threads = 1;
  taskdag::runtime runtime(args);
  const std::string text = taskdag::configuration();
  CHECK_MESSAGE(contains(text, "threads 1"), text);
}

TEST_CASE("a second taskdag::runtime throws TD_ERROR_ALREADY_INITIALIZED") {
  taskdag::runtime runtime;
  try {
    taskdag::runtime second;
    FAIL("a second runtime was created");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_ALREADY_INITIALIZED);
    CHECK(contains(e.what(), "already initialized"));
  }
  CHECK(td_is_initialized() == 1);  // the failed second one did not finalize the first
}

TEST_CASE("taskdag::runtime with invalid args throws and leaves the runtime uninitialized") {
  td_init_args args = TD_INIT_ARGS_INIT;
  args.num_numa = -3;
  try {
    taskdag::runtime runtime(args);
    FAIL("runtime accepted num_numa = -3");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_INVALID_ARGUMENT);
    CHECK(contains(e.what(), "num_numa"));
    CHECK(contains(e.what(), "-3"));
  }
  CHECK(td_is_initialized() == 0);
}

TEST_CASE("taskdag::configuration throws TD_ERROR_NOT_INITIALIZED outside a runtime") {
  REQUIRE(td_is_initialized() == 0);
  try {
    (void)taskdag::configuration();
    FAIL("configuration() returned without a runtime");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_NOT_INITIALIZED);
    CHECK(contains(e.what(), "td_initialize"));
  }
}

TEST_CASE("taskdag::version is td_version_string") {
  CHECK(taskdag::version() == td_version_string());
}

TEST_CASE("taskdag::check passes TD_OK and throws taskdag::error with the last message otherwise") {
  CHECK_NOTHROW(taskdag::check(TD_OK));
  REQUIRE(td_finalize() == TD_ERROR_NOT_INITIALIZED);
  try {
    taskdag::check(TD_ERROR_NOT_INITIALIZED);
    FAIL("check did not throw");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == TD_ERROR_NOT_INITIALIZED);
    CHECK(std::string(e.what()) == td_last_error_message());
  }
  CHECK(taskdag::status_name(TD_ERROR_STRUCT_SIZE) == "TD_ERROR_STRUCT_SIZE");
}
