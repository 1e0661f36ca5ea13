// Helpers for the tests of the C++ layer (taskdag.hpp), on top of support.hpp.
#ifndef TASKDAG_TESTS_CPP_SUPPORT_HPP
#define TASKDAG_TESTS_CPP_SUPPORT_HPP

#include <initializer_list>
#include <string>

#include "support.hpp"
#include "taskdag.hpp"

namespace taskdag_test {

// Runs `body`, which must throw taskdag::error with `status` and a message naming `parts`.
template <class F>
void check_throws(F&& body, td_status status, std::initializer_list<std::string> parts) {
  try {
    body();
    FAIL("no taskdag::error was thrown");
  } catch (const taskdag::error& e) {
    CHECK(e.status() == status);
    for (const std::string& part : parts) {
      CHECK_MESSAGE(contains(e.what(), part), "expected \"" << part << "\" in: " << e.what());
    }
  }
}

}  // namespace taskdag_test

#endif  // TASKDAG_TESTS_CPP_SUPPORT_HPP
