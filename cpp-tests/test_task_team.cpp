// Team tasks (000 §2.3.2, 002 §2.2.2): called on every member of a thread team, with the team
// member API; only one member may spawn or respawn per run.
#include <atomic>
#include <vector>

#include "task_support.hpp"

using namespace taskdag_test;

namespace {

struct team_counts {
  std::atomic<int> calls{0};
  std::atomic<int> rank_sum{0};
  std::atomic<int> wrong_size{0};
  std::atomic<int> after_barrier{0};
  std::atomic<int> early{0};
};

team_counts counts;

void team_body(td_task_ctx* ctx, void*) {
  td_team* team = td_task_team(ctx);
  counts.calls.fetch_add(1);
  counts.rank_sum.fetch_add(static_cast<int>(td_team_rank(team)));
  if (td_team_league_size(team) != 1 || td_team_league_rank(team) != 0) counts.wrong_size++;
  td_team_barrier(team);
  // Every member arrived before anyone passed the barrier.
  if (counts.calls.load() % td_team_size(team) != 0) counts.early++;
  td_team_barrier(team);
  counts.after_barrier.fetch_add(1);
  if (td_team_rank(team) == 0) *static_cast<long*>(td_task_result(ctx)) = td_team_size(team);
}

}  // namespace

TEST_CASE("a team task runs on every member of its team") {
  std::size_t threads = scheduler_ref().concurrency();
  const int team_size = static_cast<int>(threads);
  scheduler_ref s(workers::threads, 1 << 20, team_size);
  std::size_t reported = 0;
  CHECK(td_scheduler_team_size(s, &reported) == TD_OK);
  CHECK(reported == threads);
  counts.calls = 0;
  counts.rank_sum = 0;
  std::vector<td_future*> futures;
  for (int i = 0; i < 4; ++i) {
    td_task_policy p = policy(s, TD_PRIORITY_REGULAR, nullptr, true);
    futures.push_back(host_spawn(p, closure(team_body, nullptr, 0, sizeof(long))));
  }
  s.wait();
  CHECK(counts.calls.load() == 4 * team_size);
  CHECK(counts.rank_sum.load() == 4 * team_size * (team_size - 1) / 2);
  CHECK(counts.after_barrier.load() == 4 * team_size);
  CHECK(counts.wrong_size.load() == 0);
  CHECK(counts.early.load() == 0);
  for (td_future* f : futures) {
    CHECK(result_of<long>(f) == team_size);
    CHECK(td_future_release(f) == TD_OK);
  }
  CHECK(s.stats().task_executions == 4);
}

namespace {

void single_sees_a_team_of_one(td_task_ctx* ctx, void*) {
  td_team* team = td_task_team(ctx);
  *static_cast<long*>(td_task_result(ctx)) = td_team_size(team) * 10 + td_team_rank(team);
  td_team_barrier(team);  // a team of one passes at once
}

std::atomic<int> refused{0};
std::atomic<int> runs{0};

void spawn_from_rank_zero(td_task_ctx* ctx, void*) {
  td_team* team = td_task_team(ctx);
  if (td_team_rank(team) == 0) {
    td_task_policy p = TD_TASK_POLICY_INIT;
    td_task_closure c = closure(single_sees_a_team_of_one, nullptr, 0, sizeof(long));
    td_future_release(td_task_spawn(ctx, &p, &c));
  }
  td_team_barrier(team);
  if (td_team_rank(team) != 0) {
    if (td_task_respawn(ctx, nullptr, TD_PRIORITY_REGULAR) == TD_ERROR_WRONG_THREAD) refused++;
  } else if (runs.fetch_add(1) == 0) {
    td_task_respawn(ctx, nullptr, TD_PRIORITY_LOW);
  }
}

}  // namespace

TEST_CASE("single tasks see a team of one") {
  scheduler_ref s;
  td_future* f = host_spawn(policy(s), closure(single_sees_a_team_of_one, nullptr, 0, sizeof(long)));
  s.wait();
  CHECK(result_of<long>(f) == 10);
  CHECK(td_future_release(f) == TD_OK);
}

TEST_CASE("only the team member that spawned may respawn") {
  std::size_t threads = scheduler_ref().concurrency();
  if (threads < 2) return;  // needs a team of two
  scheduler_ref s(workers::threads, 1 << 20, static_cast<int>(threads));
  refused = 0;
  runs = 0;
  td_task_policy p = policy(s, TD_PRIORITY_REGULAR, nullptr, true);
  td_future* f = host_spawn(p, closure(spawn_from_rank_zero));
  s.wait();
  CHECK(runs.load() == 2);
  CHECK(refused.load() == 2 * static_cast<int>(threads - 1));
  CHECK(td_future_release(f) == TD_OK);
}
