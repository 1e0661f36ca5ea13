// doctest's main for test executables whose tests need a running runtime: initializes it once
// for the whole process, so that the tests themselves never initialize or finalize.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "taskdag.h"

int main(int argc, char** argv) {
  if (td_initialize(nullptr) != TD_OK) {
    std::fprintf(stderr, "td_initialize failed: %s\n", td_last_error_message());
    return 1;
  }
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (td_finalize() != TD_OK) {
    std::fprintf(stderr, "td_finalize failed: %s\n", td_last_error_message());
    return 1;
  }
  return result;
}
