// when_all (000 §2.2.2, §3.2.2): of many futures, of when_alls, from a generator with NULL
// entries, and of complete futures.
#include <atomic>
#include <vector>

#include "task_support.hpp"

using namespace taskdag_test;

namespace {

std::atomic<int> ran{0};

void count_and_return_index(td_task_ctx* ctx, void* state) {
  ran.fetch_add(1);
  *static_cast<long*>(td_task_result(ctx)) = *static_cast<const long*>(state);
}

struct check_state {
  int expected;
};

void check_all_ran(td_task_ctx* ctx, void* state) {
  *static_cast<int*>(td_task_result(ctx)) =
      ran.load() == static_cast<const check_state*>(state)->expected;
}

td_future* generate_every_third(int i, void* user) {
  auto* futures = static_cast<std::vector<td_future*>*>(user);
  return i % 3 == 0 ? (*futures)[static_cast<std::size_t>(i)] : nullptr;
}

}  // namespace

TEST_CASE("a when_all of a thousand futures and when_alls of when_alls complete after them") {
  for (workers w : {workers::serial, workers::threads}) {
    scheduler_ref s(w);
    ran = 0;
    std::vector<td_future*> futures;
    for (long i = 0; i < 1000; ++i) {
      futures.push_back(
          host_spawn(policy(s), closure(count_and_return_index, &i, sizeof i, sizeof(long))));
    }
    // More than one 4 KiB block holds: built as a tree of when_alls.
    td_future* all = td_when_all(s, futures.data(), 1000);
    REQUIRE(all != nullptr);
    td_future* halves[2] = {td_when_all(s, futures.data(), 500),
                            td_when_all(s, futures.data() + 500, 500)};
    REQUIRE(halves[0] != nullptr);
    REQUIRE(halves[1] != nullptr);
    td_future* of_when_alls[3] = {halves[0], halves[1], all};
    td_future* top = td_when_all(s, of_when_alls, 3);
    REQUIRE(top != nullptr);
    check_state expected{1000};
    td_future* last =
        host_spawn(policy(s, TD_PRIORITY_LOW, top), closure(check_all_ran, &expected,
                                                            sizeof expected, sizeof(int)));
    int ready = 1;
    CHECK(td_future_is_ready(all, &ready) == TD_OK);
    CHECK(ready == 0);
    s.wait();
    CHECK(result_of<int>(last) == 1);
    long sum = 0;
    for (td_future* f : futures) sum += result_of<long>(f);
    CHECK(sum == 999 * 1000 / 2);
    std::size_t size = 1;
    CHECK(td_future_result_size(all, &size) == TD_OK);
    CHECK(size == 0);
    for (td_future* f : futures) CHECK(td_future_release(f) == TD_OK);
    for (td_future* f : {all, halves[0], halves[1], top, last}) CHECK(td_future_release(f) == TD_OK);
    CHECK(s.stats().alive == 0);
  }
}

TEST_CASE("the generator form skips NULL entries") {
  scheduler_ref s;
  ran = 0;
  std::vector<td_future*> futures;
  for (long i = 0; i < 30; ++i) {
    futures.push_back(
        host_spawn(policy(s), closure(count_and_return_index, &i, sizeof i, sizeof(long))));
  }
  td_future* some = td_when_all_generate(s, 30, generate_every_third, &futures);
  INFO(last_message());
  REQUIRE(some != nullptr);
  s.wait();
  int ready = 0;
  CHECK(td_future_is_ready(some, &ready) == TD_OK);
  CHECK(ready == 1);
  CHECK(td_future_release(some) == TD_OK);
  for (td_future* f : futures) CHECK(td_future_release(f) == TD_OK);
}

TEST_CASE("a when_all of complete futures, or of none, is complete at once") {
  scheduler_ref s;
  long i = 7;
  td_future* done = host_spawn(policy(s), closure(count_and_return_index, &i, sizeof i, sizeof(long)));
  s.wait();
  td_future* pair[2] = {done, done};
  td_future* all = td_when_all(s, pair, 2);
  td_future* none = td_when_all(s, nullptr, 0);
  REQUIRE(all != nullptr);
  REQUIRE(none != nullptr);
  int ready = 0;
  CHECK(td_future_is_ready(all, &ready) == TD_OK);
  CHECK(ready == 1);
  CHECK(td_future_is_ready(none, &ready) == TD_OK);
  CHECK(ready == 1);
  for (td_future* f : {all, none, done}) CHECK(td_future_release(f) == TD_OK);
  CHECK(s.stats().alive == 0);
}
