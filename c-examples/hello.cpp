// hello.cpp: start the taskdag runtime, describe it, stop it, through the C++ layer.
//
// taskdag::runtime initializes in its constructor and finalizes in its destructor; failures
// throw taskdag::error carrying the status and taskdag's message.
#include <cstdlib>
#include <iostream>

#include "taskdag.hpp"

int main() {
  try {
    std::cout << "taskdag " << taskdag::version() << " (header " << TD_VERSION_MAJOR << '.'
              << TD_VERSION_MINOR << '.' << TD_VERSION_PATCH << ")\n";
    {
      taskdag::runtime runtime;  // all cores, the first GPU if any
      std::cout << taskdag::configuration();
    }  // finalized here
    std::cout << "hello.cpp: done\n";
    return EXIT_SUCCESS;
  } catch (const taskdag::error& e) {
    std::cerr << taskdag::status_name(e.status()) << ": " << e.what() << '\n';
    return EXIT_FAILURE;
  }
}
