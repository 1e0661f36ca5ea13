// doctest's main for test executables that manage the runtime themselves (lifecycle tests).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
