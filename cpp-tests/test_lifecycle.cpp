// The runtime's lifecycle through the C API: td_initialize, td_finalize, td_is_initialized,
// td_configuration_string. Every test starts and ends with the runtime finalized.
#include <atomic>
#include <climits>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using taskdag_test::contains;
using taskdag_test::last_message;

namespace {

// Requires a finalized runtime on entry and leaves it finalized on exit, also on failure.
struct finalized_runtime {
  finalized_runtime() { REQUIRE(td_is_initialized() == 0); }
  ~finalized_runtime() {
    if (td_is_initialized()) td_finalize();
  }
};

std::string configuration() {
  char* text = nullptr;
  const td_status status = td_configuration_string(&text);
  INFO(last_message());
  REQUIRE(status == TD_OK);
  REQUIRE(text != nullptr);
  std::string copy = text;
  td_string_free(text);
  return copy;
}

}  // namespace

TEST_CASE_FIXTURE(finalized_runtime, "calls that need the runtime fail with TD_ERROR_NOT_INITIALIZED before td_initialize") {
  char* text = reinterpret_cast<char*>(&text);
  CHECK_FAILS(td_configuration_string(&text), TD_ERROR_NOT_INITIALIZED,
              "td_configuration_string", "td_initialize");
  CHECK(text == reinterpret_cast<char*>(&text));  // not written on failure

  td_pool_args args = taskdag_test::pool_args(1 << 16);
  td_pool* pool = nullptr;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_NOT_INITIALIZED, "td_pool_create",
              "td_initialize");
  CHECK(pool == nullptr);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_finalize without td_initialize fails with TD_ERROR_NOT_INITIALIZED") {
  CHECK_FAILS(td_finalize(), TD_ERROR_NOT_INITIALIZED, "td_finalize", "not initialized");
}

TEST_CASE_FIXTURE(finalized_runtime, "td_is_initialized follows td_initialize and td_finalize") {
  CHECK(td_is_initialized() == 0);
  REQUIRE(td_initialize(nullptr) == TD_OK);
  CHECK(td_is_initialized() == 1);
  REQUIRE(td_finalize() == TD_OK);
  CHECK(td_is_initialized() == 0);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize twice fails with TD_ERROR_ALREADY_INITIALIZED and the runtime keeps running") {
  REQUIRE(td_initialize(nullptr) == TD_OK);
  td_init_args args = TD_INIT_ARGS_INIT;
  CHECK_FAILS(td_initialize(&args), TD_ERROR_ALREADY_INITIALIZED, "td_initialize",
              "already initialized", "td_finalize");
  CHECK(td_is_initialized() == 1);
  CHECK(configuration().size() > 0);
  CHECK(td_finalize() == TD_OK);
}

TEST_CASE_FIXTURE(finalized_runtime, "the runtime can be initialized again after td_finalize") {
  for (int cycle = 0; cycle < 3; ++cycle) {
    CAPTURE(cycle);
    REQUIRE(td_initialize(nullptr) == TD_OK);
    taskdag_test::pool_ref pool(1 << 16);
    CHECK(td_pool_allocate(pool, 100, 1) != nullptr);
    REQUIRE(td_finalize() == TD_OK);
  }
}

TEST_CASE_FIXTURE(finalized_runtime, "calls that need the runtime fail with TD_ERROR_NOT_INITIALIZED after td_finalize") {
  REQUIRE(td_initialize(nullptr) == TD_OK);
  REQUIRE(td_finalize() == TD_OK);
  char* text = nullptr;
  CHECK_FAILS(td_configuration_string(&text), TD_ERROR_NOT_INITIALIZED, "td_initialize");
  td_pool_args args = taskdag_test::pool_args(1 << 16);
  td_pool* pool = nullptr;
  CHECK_FAILS(td_pool_create(&args, &pool), TD_ERROR_NOT_INITIALIZED, "td_pool_create");
  CHECK_FAILS(td_finalize(), TD_ERROR_NOT_INITIALIZED, "td_finalize");
}

TEST_CASE_FIXTURE(finalized_runtime, "a pool created before td_finalize stays usable until its release") {
  REQUIRE(td_initialize(nullptr) == TD_OK);
  td_pool_args args = taskdag_test::pool_args(1 << 16);
  td_pool* pool = nullptr;
  REQUIRE(td_pool_create(&args, &pool) == TD_OK);
  REQUIRE(td_finalize() == TD_OK);

  void* block = td_pool_allocate(pool, 64, 1);
  CHECK(block != nullptr);
  CHECK(td_pool_deallocate(pool, block, 64) == TD_OK);
  std::size_t capacity = 0;
  CHECK(td_pool_capacity(pool, &capacity) == TD_OK);
  CHECK(capacity >= (1u << 16));
  CHECK(td_pool_release(pool) == TD_OK);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize with NULL args uses the defaults") {
  REQUIRE(td_initialize(nullptr) == TD_OK);
  const std::string text = configuration();
  CHECK_MESSAGE(contains(text, "threads all"), text);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize passes num_threads on to the configuration") {
  td_init_args args = TD_INIT_ARGS_INIT;
  args.num_threads = 1;
  REQUIRE(td_initialize(&args) == TD_OK);
  const std::string text = configuration();
  CHECK_MESSAGE(contains(text, "threads 1"), text);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize rejects a td_init_args struct_size that is too small or too large") {
  for (std::size_t size : {std::size_t(0), sizeof(std::size_t), sizeof(td_init_args) - 1,
                           sizeof(td_init_args) + 1, sizeof(td_init_args) + 64}) {
    CAPTURE(size);
    // Room for a caller whose td_init_args is larger than ours.
    unsigned char storage[sizeof(td_init_args) + 64] = {};
    td_init_args args = TD_INIT_ARGS_INIT;
    args.struct_size = size;
    std::memcpy(storage, &args, sizeof args);
    CHECK_FAILS(td_initialize(reinterpret_cast<const td_init_args*>(storage)),
                TD_ERROR_STRUCT_SIZE, "struct_size", std::to_string(size), "td_init_args",
                "TD_INIT_ARGS_INIT");
    CHECK(td_is_initialized() == 0);
  }
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize rejects negative counts and names the field") {
  struct field_case {
    const char* name;
    int td_init_args::*field;
  };
  for (const field_case& f : {field_case{"num_threads", &td_init_args::num_threads},
                              field_case{"num_numa", &td_init_args::num_numa},
                              field_case{"cores_per_numa", &td_init_args::cores_per_numa}}) {
    for (int value : {-1, INT_MIN}) {
      CAPTURE(f.name);
      CAPTURE(value);
      td_init_args args = TD_INIT_ARGS_INIT;
      args.*f.field = value;
      CHECK_FAILS(td_initialize(&args), TD_ERROR_INVALID_ARGUMENT, f.name,
                  std::to_string(value));
      CHECK(td_is_initialized() == 0);
    }
  }
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize rejects a device_id below -1") {
  td_init_args args = TD_INIT_ARGS_INIT;
  args.device_id = -2;
  CHECK_FAILS(td_initialize(&args), TD_ERROR_INVALID_ARGUMENT, "device_id", "-2");
  CHECK(td_is_initialized() == 0);
}

static void sum_indices(int64_t begin, int64_t end, void* value, void*) {
  for (int64_t i = begin; i < end; ++i) *static_cast<double*>(value) += static_cast<double>(i);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize passes idle_spin_us on to the threads space") {
  for (long long us : {0LL, 250LL, 10000000LL}) {
    CAPTURE(us);
    td_init_args args = TD_INIT_ARGS_INIT;
    args.idle_spin_us = us;
    REQUIRE(td_initialize(&args) == TD_OK);
    const std::string text = configuration();
    CHECK_MESSAGE(contains(text, "idle workers spin " + std::to_string(us) + " us"), text);
    // Workers that sleep at once (0) or spin long still run every dispatch.
    td_space* space = nullptr;
    REQUIRE(td_space_threads(&space) == TD_OK);
    for (int round = 0; round < 20; ++round) {
      td_range_policy range = TD_RANGE_POLICY_INIT;
      range.end = 1000;
      double sum = 0;
      REQUIRE(td_parallel_reduce(space, &range, sum_indices, nullptr, TD_REDUCE_SUM,
                                 TD_SCALAR_DOUBLE, &sum) == TD_OK);
      CHECK(sum == 999.0 * 1000.0 / 2.0);
    }
    CHECK(td_space_release(space) == TD_OK);
    REQUIRE(td_finalize() == TD_OK);
  }
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize rejects an idle_spin_us out of range and names the field") {
  for (long long us : {-2LL, 10000001LL, (long long)INT64_MIN}) {
    CAPTURE(us);
    td_init_args args = TD_INIT_ARGS_INIT;
    args.idle_spin_us = us;
    CHECK_FAILS(td_initialize(&args), TD_ERROR_INVALID_ARGUMENT, "idle_spin_us", std::to_string(us));
    CHECK(td_is_initialized() == 0);
  }
}

TEST_CASE_FIXTURE(finalized_runtime, "td_initialize rejects more threads than the process may use") {
  td_init_args args = TD_INIT_ARGS_INIT;
  args.num_threads = 1 << 20;
  CHECK_FAILS(td_initialize(&args), TD_ERROR_INVALID_ARGUMENT, "num_threads",
              std::to_string(1 << 20));
  CHECK(td_is_initialized() == 0);
}

TEST_CASE_FIXTURE(finalized_runtime, "td_configuration_string rejects a NULL out pointer") {
  REQUIRE(td_initialize(nullptr) == TD_OK);
  CHECK_FAILS(td_configuration_string(nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_configuration_string", "out");
}

TEST_CASE_FIXTURE(finalized_runtime, "td_configuration_string describes version and host") {
  REQUIRE(td_initialize(nullptr) == TD_OK);
  const std::string text = configuration();
  CHECK_MESSAGE(contains(text, std::string("taskdag ") + td_version_string()), text);
  CHECK_MESSAGE(contains(text, "host"), text);
  CHECK_MESSAGE(contains(text, "cuda: "), text);
}

TEST_CASE("td_string_free accepts NULL") { td_string_free(nullptr); }

TEST_CASE_FIXTURE(finalized_runtime, "concurrent td_initialize calls succeed exactly once") {
  constexpr int threads = 8;
  std::atomic<int> ok{0}, already{0}, other{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      switch (td_initialize(nullptr)) {
        case TD_OK: ++ok; break;
        case TD_ERROR_ALREADY_INITIALIZED: ++already; break;
        default: ++other; break;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  CHECK(ok == 1);
  CHECK(already == threads - 1);
  CHECK(other == 0);
  CHECK(td_is_initialized() == 1);
}
