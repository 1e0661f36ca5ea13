// Team collectives inside team tasks (000 §2.3.2: the member API of the team policy). Uses
// td_team_reduce / td_team_scan / td_team_broadcast, which the team-policy work adds to
// src/capi/team.rs; this file is registered in cpp-tests/CMakeLists.txt once they are merged.
#include <atomic>
#include <cstdint>

#include "task_support.hpp"

using namespace taskdag_test;

namespace {

struct results {
  std::atomic<int> wrong{0};
  std::atomic<int> members{0};
};

results seen;

void collectives(td_task_ctx* ctx, void*) {
  td_team* team = td_task_team(ctx);
  const std::int64_t rank = td_team_rank(team);
  const std::int64_t size = td_team_size(team);
  seen.members++;

  std::int64_t sum = rank + 1;
  if (td_team_reduce(team, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum) != TD_OK ||
      sum != size * (size + 1) / 2)
    seen.wrong++;

  double largest = static_cast<double>(rank) * 0.5;
  if (td_team_reduce(team, TD_REDUCE_MAX, TD_SCALAR_DOUBLE, &largest) != TD_OK ||
      largest != static_cast<double>(size - 1) * 0.5)
    seen.wrong++;

  std::int64_t smallest = 100 - rank;
  if (td_team_reduce(team, TD_REDUCE_MIN, TD_SCALAR_INT64, &smallest) != TD_OK ||
      smallest != 100 - (size - 1))
    seen.wrong++;

  std::int64_t prefix = 1, total = 0;
  if (td_team_scan(team, TD_REDUCE_SUM, TD_SCALAR_INT64, /*inclusive=*/0, &prefix, &total) !=
          TD_OK ||
      prefix != rank || total != size)
    seen.wrong++;

  std::int64_t value = rank == 0 ? 4242 : -1;
  if (td_team_broadcast(team, &value, sizeof value, 0) != TD_OK || value != 4242) seen.wrong++;

  if (rank == 0) *static_cast<std::int64_t*>(td_task_result(ctx)) = sum;
}

}  // namespace

TEST_CASE("team reduce, scan and broadcast inside team tasks") {
  const std::size_t threads = scheduler_ref().concurrency();
  for (std::size_t team_size = 1; team_size <= threads; team_size *= 2) {
    if (threads % team_size != 0) continue;
    scheduler_ref s(workers::threads, 1 << 20, static_cast<int>(team_size));
    seen.wrong = 0;
    seen.members = 0;
    td_task_policy p = policy(s, TD_PRIORITY_REGULAR, nullptr, true);
    td_future* f = host_spawn(p, closure(collectives, nullptr, 0, sizeof(std::int64_t)));
    s.wait();
    const auto n = static_cast<std::int64_t>(team_size);
    CHECK(result_of<std::int64_t>(f) == n * (n + 1) / 2);
    CHECK(seen.members.load() == static_cast<int>(team_size));
    CHECK(seen.wrong.load() == 0);
    CHECK(td_future_release(f) == TD_OK);
  }
}
