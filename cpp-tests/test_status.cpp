// Statuses and the per-thread last error: td_status_string, td_last_error,
// td_last_error_message, and the version functions that work without a runtime.
#include <climits>
#include <string>
#include <thread>

#include "support.hpp"

using taskdag_test::check_last_error;
using taskdag_test::last_message;

TEST_CASE("td_status_string names every status exactly like its enumerator") {
  const struct {
    td_status status;
    const char* name;
  } statuses[] = {
      {TD_OK, "TD_OK"},
      {TD_ERROR_NULL_ARGUMENT, "TD_ERROR_NULL_ARGUMENT"},
      {TD_ERROR_INVALID_ARGUMENT, "TD_ERROR_INVALID_ARGUMENT"},
      {TD_ERROR_INVALID_HANDLE, "TD_ERROR_INVALID_HANDLE"},
      {TD_ERROR_NOT_INITIALIZED, "TD_ERROR_NOT_INITIALIZED"},
      {TD_ERROR_ALREADY_INITIALIZED, "TD_ERROR_ALREADY_INITIALIZED"},
      {TD_ERROR_UNAVAILABLE, "TD_ERROR_UNAVAILABLE"},
      {TD_ERROR_POOL_EXHAUSTED, "TD_ERROR_POOL_EXHAUSTED"},
      {TD_ERROR_OUT_OF_MEMORY, "TD_ERROR_OUT_OF_MEMORY"},
      {TD_ERROR_STRUCT_SIZE, "TD_ERROR_STRUCT_SIZE"},
      {TD_ERROR_INTERNAL, "TD_ERROR_INTERNAL"},
  };
  for (const auto& s : statuses) {
    CAPTURE(s.name);
    CHECK(std::string(td_status_string(s.status)) == s.name);
  }
  // The values are part of the ABI.
  CHECK(TD_OK == 0);
  CHECK(TD_ERROR_INTERNAL == 10);
}

TEST_CASE("td_status_string names any other int TD_UNKNOWN_STATUS") {
  for (int value : {-1, 16, 17, 1000, INT_MIN, INT_MAX}) {
    CAPTURE(value);
    CHECK(std::string(td_status_string(value)) == "TD_UNKNOWN_STATUS");
  }
}

TEST_CASE("a thread that never failed has last error TD_OK and message no error") {
  td_status status = TD_ERROR_INTERNAL;
  std::string message;
  std::thread([&] {
    status = td_last_error();
    message = td_last_error_message();
  }).join();
  CHECK(status == TD_OK);
  CHECK(message == "no error");
}

TEST_CASE("the last error belongs to the thread that failed") {
  // Fails without a runtime: this executable never initializes it.
  REQUIRE(td_configuration_string(nullptr) == TD_ERROR_NULL_ARGUMENT);
  check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_configuration_string", "out"});

  td_status other_status = TD_ERROR_INTERNAL;
  std::thread([&] { other_status = td_last_error(); }).join();
  CHECK(other_status == TD_OK);
  // And this thread's error is still there.
  CHECK(td_last_error() == TD_ERROR_NULL_ARGUMENT);
}

TEST_CASE("a successful call leaves the previous failure as the last error") {
  char* text = nullptr;
  REQUIRE(td_configuration_string(&text) == TD_ERROR_NOT_INITIALIZED);
  const std::string message = last_message();
  CHECK(td_status_string(TD_OK) != nullptr);
  CHECK(td_pool_release(nullptr) == TD_OK);
  CHECK(td_last_error() == TD_ERROR_NOT_INITIALIZED);
  CHECK(last_message() == message);
}

TEST_CASE("td_version encodes the header version and matches td_version_string") {
  CHECK(td_version() == TD_VERSION_MAJOR * 10000u + TD_VERSION_MINOR * 100u + TD_VERSION_PATCH);
  const std::string expected = std::to_string(TD_VERSION_MAJOR) + "." +
                               std::to_string(TD_VERSION_MINOR) + "." +
                               std::to_string(TD_VERSION_PATCH);
  CHECK(std::string(td_version_string()) == expected);
}

TEST_CASE("version and status functions work without td_initialize") {
  REQUIRE(td_is_initialized() == 0);
  CHECK(td_version() > 0);
  CHECK(std::string(td_version_string()).size() >= 5);
  CHECK(std::string(td_status_string(TD_ERROR_UNAVAILABLE)) == "TD_ERROR_UNAVAILABLE");
}
