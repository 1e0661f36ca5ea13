// The C++ layer's CUDA entry points (taskdag.hpp): device detection, pools in device memory,
// their device handle and reset. Without a usable GPU the device cases check the statuses that
// replace them; with one (the GPU machine) they run for real.
#include <string>

#include "cpp_support.hpp"

using taskdag::memory_pool;
using taskdag_test::check_throws;
using taskdag_test::contains;

TEST_CASE("cuda_available agrees with cuda_device_count and the configuration string") {
  const int count = taskdag::cuda_device_count();
  CHECK(count >= 0);
  if (taskdag::cuda_available()) {
    CHECK(count > 0);
  }
  CHECK(contains(taskdag::configuration(), "cuda"));
}

TEST_CASE("a host pool has no device handle and cannot be reset") {
  memory_pool pool(1 << 16);
  check_throws([&] { (void)pool.device_handle(); }, TD_ERROR_INVALID_ARGUMENT,
               {"td_pool_device_handle", "TD_SPACE_HOST"});
  check_throws([&] { pool.reset(); }, TD_ERROR_INVALID_ARGUMENT, {"td_pool_reset"});
  // Still a working pool afterwards.
  void* block = pool.allocate(64);
  CHECK(block != nullptr);
  pool.deallocate(block, 64);
}

TEST_CASE("create_in(TD_SPACE_CUDA) gives a device pool, or UNAVAILABLE without a GPU") {
  if (!taskdag::cuda_available()) {
    check_throws([] { (void)memory_pool::create_in(TD_SPACE_CUDA, 1 << 20); },
                 TD_ERROR_UNAVAILABLE, {"td_pool_create"});
    MESSAGE("SKIPPED device half: no usable GPU (" << taskdag::configuration() << ")");
    return;
  }
  memory_pool pool = memory_pool::create_in(TD_SPACE_CUDA, 1 << 20, 64, 1024);
  CHECK(pool.capacity() >= (1u << 20));
  CHECK(pool.max_block_size() == 1024);
  const td_dev_pool handle = pool.device_handle();
  CHECK(handle.superblocks != nullptr);
  pool.reset();
  const td_pool_stats stats = pool.usage_statistics();
  CHECK(stats.consumed_blocks == 0);
  CHECK(stats.failed_allocations == 0);
}

TEST_CASE("create_in(TD_SPACE_CUDA_HOST_PINNED) gives a host pool in page-locked memory") {
  if (!taskdag::cuda_available()) {
    check_throws([] { (void)memory_pool::create_in(TD_SPACE_CUDA_HOST_PINNED, 1 << 20); },
                 TD_ERROR_UNAVAILABLE, {"td_pool_create", "TD_SPACE_CUDA_HOST_PINNED"});
    MESSAGE("SKIPPED pinned pool: no usable GPU (" << taskdag::configuration() << ")");
    return;
  }
  memory_pool pool = memory_pool::create_in(TD_SPACE_CUDA_HOST_PINNED, 1 << 20);
  double* values = pool.allocate<double>(32);
  REQUIRE(values != nullptr);
  for (int i = 0; i < 32; ++i) values[i] = i;
  double sum = 0;
  for (int i = 0; i < 32; ++i) sum += values[i];
  CHECK(sum == 496.0);
  CHECK(pool.usage_statistics().consumed_blocks == 1);
  check_throws([&] { (void)pool.device_handle(); }, TD_ERROR_INVALID_ARGUMENT,
               {"TD_SPACE_CUDA_HOST_PINNED"});
  pool.deallocate(values, 32);
  CHECK(pool.usage_statistics().consumed_blocks == 0);
}
