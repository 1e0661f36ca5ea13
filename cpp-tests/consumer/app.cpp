// A C++ program built against the installed package with find_package(taskdag).
#include <cstdlib>
#include <iostream>

#include <taskdag.hpp>

int main() {
  try {
    taskdag::runtime runtime;
    taskdag::memory_pool pool(1 << 16);
    double* x = pool.allocate<double>(100);
    if (x == nullptr) return EXIT_FAILURE;
    for (int i = 0; i < 100; ++i) x[i] = i;
    const std::size_t block = pool.allocate_block_size(100 * sizeof(double));
    pool.deallocate(x, 100);
    if (pool.usage_statistics().consumed_bytes != 0) return EXIT_FAILURE;
    std::cout << "consumer app: pool of " << pool.capacity() << " bytes, " << block
              << "-byte block: OK\n";
    return EXIT_SUCCESS;
  } catch (const taskdag::error& e) {
    std::cerr << e.what() << '\n';
    return EXIT_FAILURE;
  }
}
