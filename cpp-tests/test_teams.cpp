// The team policy through the C API (004): leagues of teams, team barriers and scratch memory,
// the members' collectives (reduce, scan, broadcast) and team-level loops, and bad input.
// Checks on pool threads go to a failure_log that the test's thread reports.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "dispatch_support.hpp"

using taskdag_test::concurrency;
using taskdag_test::failure_log;
using taskdag_test::scalar;
using taskdag_test::space_ref;
using taskdag_test::team_policy;

namespace {

// Runs `body(team, state)` as a td_team_fn through a captureless trampoline.
template <class State>
td_status run_team(const td_space* space, const td_team_policy& policy, State& state,
                   void (*body)(const td_team*, State&)) {
  struct context {
    State* state;
    void (*body)(const td_team*, State&);
  } ctx{&state, body};
  return td_parallel_team(
      space, &policy,
      [](const td_team* team, void* user) {
        auto* c = static_cast<context*>(user);
        c->body(team, *c->state);
      },
      &ctx);
}

std::string where(const td_team* team) {
  return "league " + std::to_string(td_team_league_rank(team)) + " rank " +
         std::to_string(td_team_rank(team));
}

// ---- league and membership ----------------------------------------------------------------

struct league_state {
  std::int64_t league_size, team_size;
  std::size_t scratch_bytes;
  std::vector<std::atomic<int>> runs;  // members that ran each league entry
  failure_log failures;
  league_state(std::int64_t league, std::int64_t team, std::size_t scratch)
      : league_size(league), team_size(team), scratch_bytes(scratch),
        runs(static_cast<std::size_t>(league)) {}
};

void league_body(const td_team* team, league_state& s) {
  const std::int64_t rank = td_team_rank(team), size = td_team_size(team);
  const std::int64_t league_rank = td_team_league_rank(team);
  if (size != s.team_size) s.failures.add(where(team) + ": size " + std::to_string(size));
  if (rank < 0 || rank >= size) s.failures.add(where(team) + ": bad rank");
  if (td_team_league_size(team) != s.league_size) s.failures.add(where(team) + ": league size");
  if (league_rank < 0 || league_rank >= s.league_size) {
    s.failures.add(where(team) + ": bad league rank");
    return;
  }
  if (td_in_parallel() != 1) s.failures.add(where(team) + ": td_in_parallel is not 1");
  std::size_t bytes = 12345;
  void* scratch = td_team_scratch(team, &bytes);
  if (bytes != s.scratch_bytes) s.failures.add(where(team) + ": scratch size " + std::to_string(bytes));
  if (s.scratch_bytes == 0 && scratch != nullptr) s.failures.add(where(team) + ": scratch not NULL");
  if (s.scratch_bytes != 0 &&
      (scratch == nullptr || reinterpret_cast<std::uintptr_t>(scratch) % 8 != 0)) {
    s.failures.add(where(team) + ": scratch NULL or not 8-byte aligned");
  }
  if (td_team_scratch(team, nullptr) != scratch) s.failures.add(where(team) + ": scratch moved");
  s.runs[static_cast<std::size_t>(league_rank)].fetch_add(1);
}

// ---- barriers and scratch memory ----------------------------------------------------------

struct barrier_state {
  int iterations;
  failure_log failures;
};

// Each iteration every member writes its slot of the team's scratch memory, waits at the
// barrier, checks every other member's slot, and waits again before the next write.
void barrier_body(const td_team* team, barrier_state& s) {
  const std::int64_t rank = td_team_rank(team), size = td_team_size(team);
  const std::int64_t league_rank = td_team_league_rank(team);
  auto* slots = static_cast<volatile std::int64_t*>(td_team_scratch(team, nullptr));
  for (int it = 0; it < s.iterations; ++it) {
    slots[rank] = (league_rank * 1000 + it) * size + rank;
    if (td_team_barrier(team) != TD_OK) s.failures.add(where(team) + ": barrier failed");
    for (std::int64_t r = 0; r < size; ++r) {
      const std::int64_t expected = (league_rank * 1000 + it) * size + r;
      if (slots[r] != expected) {
        s.failures.add(where(team) + " iteration " + std::to_string(it) + ": slot " +
                       std::to_string(r) + " holds " + std::to_string(slots[r]) + ", expected " +
                       std::to_string(expected));
      }
    }
    td_team_barrier(team);
  }
}

// ---- collectives --------------------------------------------------------------------------

// Member r's contribution in league entry l.
template <class T>
T member_value(td_reduce_op op, std::int64_t r, std::int64_t l) {
  switch (op) {
    case TD_REDUCE_SUM: return static_cast<T>(3 * r - l + 1);
    case TD_REDUCE_PROD: return static_cast<T>(r % 2 == 0 ? 2 : -1);
    default: return static_cast<T>((r * 37 + l * 11) % 23 - 11);
  }
}

template <class T>
T fold_ranks(td_reduce_op op, std::int64_t upto, std::int64_t l) {
  T acc = taskdag_test::identity<T>(op);
  for (std::int64_t r = 0; r < upto; ++r) acc = taskdag_test::combine(op, acc, member_value<T>(op, r, l));
  return acc;
}

struct collective_state {
  failure_log failures;
};

template <class T>
void check_collectives_of(const td_team* team, failure_log& f) {
  const std::int64_t rank = td_team_rank(team), size = td_team_size(team);
  const std::int64_t l = td_team_league_rank(team);
  for (td_reduce_op op : {TD_REDUCE_SUM, TD_REDUCE_MIN, TD_REDUCE_MAX, TD_REDUCE_PROD}) {
    const std::string what = where(team) + " " + scalar<T>::name + " " + taskdag_test::op_name(op);
    T value = member_value<T>(op, rank, l);
    f.expect(td_team_reduce(team, op, scalar<T>::type, &value), TD_OK, what + " reduce");
    if (value != fold_ranks<T>(op, size, l)) f.add(what + ": team reduce gave a wrong value");
    for (int inclusive : {0, 1}) {
      T v = member_value<T>(op, rank, l);
      T total{};
      f.expect(td_team_scan(team, op, scalar<T>::type, inclusive, &v, &total), TD_OK,
               what + " scan");
      if (v != fold_ranks<T>(op, inclusive ? rank + 1 : rank, l)) {
        f.add(what + (inclusive ? ": inclusive" : ": exclusive") + " team scan gave a wrong value");
      }
      if (total != fold_ranks<T>(op, size, l)) f.add(what + ": team scan total is wrong");
      T w = member_value<T>(op, rank, l);
      f.expect(td_team_scan(team, op, scalar<T>::type, inclusive, &w, nullptr), TD_OK,
               what + " scan without total");
      if (w != v) f.add(what + ": team scan without a total differs");
    }
  }
}

struct sequence_hash {
  std::uint64_t hash, power;
};

void hash_init(void* value, void*) { *static_cast<sequence_hash*>(value) = sequence_hash{0, 1}; }

void hash_join(void* dst, const void* src, void*) {
  auto* d = static_cast<sequence_hash*>(dst);
  const auto* s = static_cast<const sequence_hash*>(src);
  d->hash = d->hash * s->power + s->hash;
  d->power *= s->power;
}

void collective_body(const td_team* team, collective_state& s) {
  failure_log& f = s.failures;
  check_collectives_of<std::int32_t>(team, f);
  check_collectives_of<std::int64_t>(team, f);
  check_collectives_of<float>(team, f);
  check_collectives_of<double>(team, f);

  const std::int64_t rank = td_team_rank(team), size = td_team_size(team);
  // A custom, non-commutative reduction: the members' values joined in rank order.
  td_reducer reducer = TD_REDUCER_INIT;
  reducer.value_size = sizeof(sequence_hash);
  reducer.init = hash_init;
  reducer.join = hash_join;
  sequence_hash mine{static_cast<std::uint64_t>(rank + 1), 1000003};
  f.expect(td_team_reduce_custom(team, &reducer, &mine), TD_OK, where(team) + " custom reduce");
  sequence_hash expected{0, 1};
  for (std::int64_t r = 0; r < size; ++r) {
    const sequence_hash v{static_cast<std::uint64_t>(r + 1), 1000003};
    hash_join(&expected, &v, nullptr);
  }
  if (mine.hash != expected.hash || mine.power != expected.power) {
    f.add(where(team) + ": custom team reduce is not in rank order");
  }

  // Broadcast from every root, of 1, 8 and 256 bytes.
  for (std::int64_t root = 0; root < size; ++root) {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{8}, std::size_t{256}}) {
      unsigned char buffer[256];
      std::memset(buffer, static_cast<int>(rank + 1), sizeof buffer);
      f.expect(td_team_broadcast(team, buffer, bytes, root), TD_OK, where(team) + " broadcast");
      for (std::size_t k = 0; k < sizeof buffer; ++k) {
        const int expect = k < bytes ? static_cast<int>(root + 1) : static_cast<int>(rank + 1);
        if (buffer[k] != expect) {
          f.add(where(team) + ": broadcast of " + std::to_string(bytes) + " bytes from " +
                std::to_string(root) + " wrong at byte " + std::to_string(k));
          break;
        }
      }
    }
  }
}

// ---- team-level loops ---------------------------------------------------------------------

struct team_loop_state {
  std::int64_t n;
  std::vector<std::atomic<int>> hits;  // per league entry × index
  failure_log failures;
  team_loop_state(std::int64_t league, std::int64_t n_)
      : n(n_), hits(static_cast<std::size_t>(league * n_)) {}
};

struct team_loop_user {
  team_loop_state* state;
  std::int64_t league_rank;
};

void team_loop_body(const td_team* team, team_loop_state& s) {
  failure_log& f = s.failures;
  team_loop_user user{&s, td_team_league_rank(team)};
  f.expect(td_team_parallel_for(
               team, 0, s.n,
               [](std::int64_t b, std::int64_t e, void* u) {
                 auto* tu = static_cast<team_loop_user*>(u);
                 for (std::int64_t i = b; i < e; ++i) {
                   tu->state->hits[static_cast<std::size_t>(tu->league_rank * tu->state->n + i)]
                       .fetch_add(1);
                 }
               },
               &user),
           TD_OK, where(team) + " team parallel_for");
  // An empty range calls nothing and succeeds.
  f.expect(td_team_parallel_for(
               team, 7, 7, [](std::int64_t, std::int64_t, void*) { std::abort(); }, nullptr),
           TD_OK, where(team) + " empty team parallel_for");

  std::int64_t sum = -1;
  f.expect(td_team_parallel_reduce(
               team, 0, s.n,
               [](std::int64_t b, std::int64_t e, void* value, void*) {
                 std::int64_t acc = *static_cast<std::int64_t*>(value);
                 for (std::int64_t i = b; i < e; ++i) acc += i;
                 *static_cast<std::int64_t*>(value) = acc;
               },
               nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum),
           TD_OK, where(team) + " team parallel_reduce");
  if (sum != s.n * (s.n - 1) / 2) f.add(where(team) + ": team sum " + std::to_string(sum));

  double max = 0;
  f.expect(td_team_parallel_reduce(
               team, -10, 10,
               [](std::int64_t b, std::int64_t e, void* value, void*) {
                 double* acc = static_cast<double*>(value);
                 for (std::int64_t i = b; i < e; ++i) {
                   const double x = static_cast<double>(-(i * i));
                   if (x > *acc) *acc = x;
                 }
               },
               nullptr, TD_REDUCE_MAX, TD_SCALAR_DOUBLE, &max),
           TD_OK, where(team) + " team max");
  if (max != 0.0) f.add(where(team) + ": team max " + std::to_string(max));

  float prod = 0;
  f.expect(td_team_parallel_reduce(
               team, 5, 5, [](std::int64_t, std::int64_t, void*, void*) {}, nullptr,
               TD_REDUCE_PROD, TD_SCALAR_FLOAT, &prod),
           TD_OK, where(team) + " empty team reduce");
  if (prod != 1.0f) f.add(where(team) + ": empty team product is not the identity");
}

// ---- bad input inside a team --------------------------------------------------------------

void bad_input_body(const td_team* team, collective_state& s) {
  failure_log& f = s.failures;
  const std::string w = where(team);
  std::int64_t value = 1;
  // Every member passes the same bad arguments, so no member waits at a collective alone.
  f.expect(td_team_reduce(team, 99, TD_SCALAR_INT64, &value), TD_ERROR_INVALID_ARGUMENT,
           w + " reduce op 99");
  f.expect(td_team_reduce(team, TD_REDUCE_SUM, -1, &value), TD_ERROR_INVALID_ARGUMENT,
           w + " reduce type -1");
  f.expect(td_team_reduce(team, TD_REDUCE_SUM, TD_SCALAR_INT64, nullptr), TD_ERROR_NULL_ARGUMENT,
           w + " reduce NULL value");
  f.expect(td_team_reduce_custom(team, nullptr, &value), TD_ERROR_NULL_ARGUMENT,
           w + " custom reduce NULL reducer");
  td_reducer big = TD_REDUCER_INIT;
  big.value_size = 257;
  big.init = hash_init;
  big.join = hash_join;
  unsigned char buffer[512] = {};
  f.expect(td_team_reduce_custom(team, &big, buffer), TD_ERROR_INVALID_ARGUMENT,
           w + " custom reduce of 257 bytes");
  if (td_last_error() == TD_ERROR_INVALID_ARGUMENT &&
      std::string(td_last_error_message()).find("257") == std::string::npos) {
    f.add(w + ": the message does not name 257 bytes: " + td_last_error_message());
  }
  td_reducer bad_size = big;
  bad_size.struct_size = 1;
  f.expect(td_team_reduce_custom(team, &bad_size, buffer), TD_ERROR_STRUCT_SIZE,
           w + " custom reduce struct_size 1");
  f.expect(td_team_scan(team, 7, TD_SCALAR_INT32, 1, &value, nullptr), TD_ERROR_INVALID_ARGUMENT,
           w + " scan op 7");
  f.expect(td_team_scan(team, TD_REDUCE_SUM, TD_SCALAR_INT64, 1, nullptr, nullptr),
           TD_ERROR_NULL_ARGUMENT, w + " scan NULL value");
  f.expect(td_team_broadcast(team, buffer, 257, 0), TD_ERROR_INVALID_ARGUMENT,
           w + " broadcast of 257 bytes");
  f.expect(td_team_broadcast(team, buffer, 8, -1), TD_ERROR_INVALID_ARGUMENT,
           w + " broadcast root -1");
  f.expect(td_team_broadcast(team, buffer, 8, td_team_size(team)), TD_ERROR_INVALID_ARGUMENT,
           w + " broadcast root = size");
  f.expect(td_team_broadcast(team, nullptr, 8, 0), TD_ERROR_NULL_ARGUMENT,
           w + " broadcast NULL value");
  f.expect(td_team_parallel_for(team, 5, 4, [](std::int64_t, std::int64_t, void*) {}, nullptr),
           TD_ERROR_INVALID_ARGUMENT, w + " team parallel_for [5, 4)");
  f.expect(td_team_parallel_for(team, 0, 4, nullptr, nullptr), TD_ERROR_NULL_ARGUMENT,
           w + " team parallel_for NULL body");
  std::int64_t sum = 0;
  const td_reduce_fn noop = [](std::int64_t, std::int64_t, void*, void*) {};
  f.expect(td_team_parallel_reduce(team, 5, 4, noop, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &sum),
           TD_ERROR_INVALID_ARGUMENT, w + " team parallel_reduce [5, 4)");
  f.expect(td_team_parallel_reduce(team, 0, 4, nullptr, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64,
                                   &sum),
           TD_ERROR_NULL_ARGUMENT, w + " team parallel_reduce NULL body");
  f.expect(td_team_parallel_reduce(team, 0, 4, noop, nullptr, 42, TD_SCALAR_INT64, &sum),
           TD_ERROR_INVALID_ARGUMENT, w + " team parallel_reduce op 42");
  f.expect(td_team_parallel_reduce(team, 0, 4, noop, nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64,
                                   nullptr),
           TD_ERROR_NULL_ARGUMENT, w + " team parallel_reduce NULL result");
  // The team still works after all that.
  value = 1;
  f.expect(td_team_reduce(team, TD_REDUCE_SUM, TD_SCALAR_INT64, &value), TD_OK, w + " reduce");
  if (value != td_team_size(team)) f.add(w + ": reduce after bad calls is wrong");
}

}  // namespace

TEST_CASE("every league entry runs once on every member of a whole team") {
  const space_ref space = taskdag_test::threads_space();
  const auto threads = static_cast<std::int64_t>(concurrency(space));
  for (std::int64_t team_size = 1; team_size <= threads; ++team_size) {
    for (std::int64_t league : {0, 1, 5, 37}) {
      for (std::size_t scratch : {std::size_t{0}, std::size_t{24}, std::size_t{4096}}) {
        CAPTURE(team_size);
        CAPTURE(league);
        CAPTURE(scratch);
        league_state state(league, team_size, scratch);
        REQUIRE(run_team(space.get(), team_policy(league, team_size, scratch), state,
                         league_body) == TD_OK);
        state.failures.report();
        for (const auto& runs : state.runs) CHECK(runs.load() == team_size);
      }
    }
  }
  // Team size 0 lets taskdag choose (the hardware threads of one core).
  league_state state(3, 0, 0);
  std::atomic<std::int64_t> size{-1};
  struct auto_state {
    std::atomic<std::int64_t>* size;
  } a{&size};
  REQUIRE(run_team<auto_state>(space.get(), team_policy(3, 0), a,
                               [](const td_team* team, auto_state& s) {
                                 s.size->store(td_team_size(team));
                               }) == TD_OK);
  std::size_t per_core = 0;
  REQUIRE(td_space_thread_pool_size(space, 1, &per_core) == TD_OK);
  CHECK(size.load() == static_cast<std::int64_t>(per_core));
}

TEST_CASE("1000 team barriers keep every member's scratch writes visible to the whole team") {
  const space_ref space = taskdag_test::threads_space();
  const auto threads = static_cast<std::int64_t>(concurrency(space));
  for (std::int64_t team_size : {threads, std::max<std::int64_t>(1, threads / 2)}) {
    CAPTURE(team_size);
    barrier_state state{1000, {}};
    const std::int64_t teams = threads / team_size;
    REQUIRE(run_team(space.get(),
                     team_policy(2 * teams, team_size, sizeof(std::int64_t) * team_size), state,
                     barrier_body) == TD_OK);
    state.failures.report();
  }
}

TEST_CASE("scratch memory starts zeroed and persists across a team's league entries") {
  const space_ref space = taskdag_test::threads_space();
  const auto threads = static_cast<std::int64_t>(concurrency(space));
  struct persist_state {
    failure_log failures;
  } state;
  // One team of all threads runs 10 entries in order; rank 0 counts entries in scratch.
  REQUIRE(run_team<persist_state>(
              space.get(), team_policy(10, threads, 64), state,
              [](const td_team* team, persist_state& s) {
                auto* words = static_cast<std::int64_t*>(td_team_scratch(team, nullptr));
                if (td_team_rank(team) == 0) {
                  if (words[0] != td_team_league_rank(team)) {
                    s.failures.add(where(team) + ": scratch holds " + std::to_string(words[0]));
                  }
                  for (int k = 1; k < 8; ++k) {
                    if (words[k] != 0) s.failures.add(where(team) + ": scratch not zeroed");
                  }
                  ++words[0];
                }
              }) == TD_OK);
  state.failures.report();
}

TEST_CASE("team reduce, scan and broadcast give every member the right values") {
  const space_ref space = taskdag_test::threads_space();
  const auto threads = static_cast<std::int64_t>(concurrency(space));
  for (std::int64_t team_size = 1; team_size <= threads; ++team_size) {
    CAPTURE(team_size);
    collective_state state;
    REQUIRE(run_team(space.get(), team_policy(4, team_size), state, collective_body) == TD_OK);
    state.failures.report();
  }
}

TEST_CASE("team-level parallel_for covers the range once and team parallel_reduce sums it") {
  const space_ref space = taskdag_test::threads_space();
  const auto threads = static_cast<std::int64_t>(concurrency(space));
  for (std::int64_t team_size = 1; team_size <= threads; ++team_size) {
    for (std::int64_t n : {0, 1, 3, 1001}) {
      CAPTURE(team_size);
      CAPTURE(n);
      team_loop_state state(6, n);
      REQUIRE(run_team(space.get(), team_policy(6, team_size), state, team_loop_body) == TD_OK);
      state.failures.report();
      std::size_t wrong = 0;
      for (const auto& h : state.hits) wrong += h.load() != 1;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("the team policy runs on the Serial space as a team of one") {
  const space_ref space = taskdag_test::serial_space();
  league_state state(4, 1, 16);
  REQUIRE(run_team(space.get(), team_policy(4, 1, 16), state, league_body) == TD_OK);
  state.failures.report();
  for (const auto& runs : state.runs) CHECK(runs.load() == 1);
  collective_state collectives;
  REQUIRE(run_team(space.get(), team_policy(2, 1), collectives, collective_body) == TD_OK);
  collectives.failures.report();
  collective_state two;
  CHECK_FAILS(run_team(space.get(), team_policy(1, 2), two, collective_body),
              TD_ERROR_INVALID_ARGUMENT, "team_size 2", "1 thread");
}

TEST_CASE("team member functions reject bad input with a status and a message") {
  const space_ref space = taskdag_test::threads_space();
  collective_state state;
  REQUIRE(run_team(space.get(), team_policy(3, static_cast<std::int64_t>(concurrency(space))),
                   state, bad_input_body) == TD_OK);
  state.failures.report();

  // A NULL team: the queries return -1, the rest a status, and all set the message.
  CHECK(td_team_rank(nullptr) == -1);
  taskdag_test::check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_team_rank", "team"});
  CHECK(td_team_size(nullptr) == -1);
  taskdag_test::check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_team_size"});
  CHECK(td_team_league_rank(nullptr) == -1);
  taskdag_test::check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_team_league_rank"});
  CHECK(td_team_league_size(nullptr) == -1);
  taskdag_test::check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_team_league_size"});
  std::size_t bytes = 7;
  CHECK(td_team_scratch(nullptr, &bytes) == nullptr);
  taskdag_test::check_last_error(TD_ERROR_NULL_ARGUMENT, {"td_team_scratch"});
  CHECK(bytes == 7);
  std::int64_t v = 0;
  CHECK_FAILS(td_team_barrier(nullptr), TD_ERROR_NULL_ARGUMENT, "td_team_barrier", "team");
  CHECK_FAILS(td_team_reduce(nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &v), TD_ERROR_NULL_ARGUMENT,
              "td_team_reduce", "team");
  CHECK_FAILS(td_team_scan(nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, 0, &v, nullptr),
              TD_ERROR_NULL_ARGUMENT, "td_team_scan");
  CHECK_FAILS(td_team_broadcast(nullptr, &v, 8, 0), TD_ERROR_NULL_ARGUMENT, "td_team_broadcast");
  CHECK_FAILS(td_team_parallel_for(nullptr, 0, 1, [](std::int64_t, std::int64_t, void*) {}, nullptr),
              TD_ERROR_NULL_ARGUMENT, "td_team_parallel_for");
  CHECK_FAILS(td_team_parallel_reduce(nullptr, 0, 1, [](std::int64_t, std::int64_t, void*, void*) {},
                                      nullptr, TD_REDUCE_SUM, TD_SCALAR_INT64, &v),
              TD_ERROR_NULL_ARGUMENT, "td_team_parallel_reduce");
}

TEST_CASE("td_parallel_team rejects bad policies with a status and a message") {
  const space_ref space = taskdag_test::threads_space();
  const auto threads = static_cast<std::int64_t>(concurrency(space));
  const td_team_fn noop = [](const td_team*, void*) {};
  const td_team_policy good = team_policy(2, 1);
  CHECK_FAILS(td_parallel_team(nullptr, &good, noop, nullptr), TD_ERROR_NULL_ARGUMENT,
              "td_parallel_team", "space");
  CHECK_FAILS(td_parallel_team(space, nullptr, noop, nullptr), TD_ERROR_NULL_ARGUMENT, "policy");
  CHECK_FAILS(td_parallel_team(space, &good, nullptr, nullptr), TD_ERROR_NULL_ARGUMENT, "body");
  td_team_policy bad_size = good;
  bad_size.struct_size = 8;
  CHECK_FAILS(td_parallel_team(space, &bad_size, noop, nullptr), TD_ERROR_STRUCT_SIZE,
              "policy->struct_size", "TD_TEAM_POLICY_INIT");
  const td_team_policy negative_league = team_policy(-1, 1);
  CHECK_FAILS(td_parallel_team(space, &negative_league, noop, nullptr), TD_ERROR_INVALID_ARGUMENT,
              "league_size", "-1");
  const td_team_policy negative_team = team_policy(1, -2);
  CHECK_FAILS(td_parallel_team(space, &negative_team, noop, nullptr), TD_ERROR_INVALID_ARGUMENT,
              "team_size", "-2");
  const td_team_policy too_large = team_policy(1, threads + 1);
  CHECK_FAILS(td_parallel_team(space, &too_large, noop, nullptr), TD_ERROR_INVALID_ARGUMENT,
              "team_size " + std::to_string(threads + 1), std::to_string(threads) + " thread");
  td_team_policy bad_mask = good;
  bad_mask.mask = 2.0;
  CHECK_FAILS(td_parallel_team(space, &bad_mask, noop, nullptr), TD_ERROR_INVALID_ARGUMENT,
              "mask", "(0, 1]");
  // A team may not be larger than the masked part of the space either.
  if (threads >= 2) {
    td_team_policy masked = team_policy(1, threads);
    masked.mask = 0.5;
    CHECK_FAILS(td_parallel_team(space, &masked, noop, nullptr), TD_ERROR_INVALID_ARGUMENT,
                "team_size");
  }
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator aborts on such a request instead of failing it (unless
  // ASAN_OPTIONS=allocator_may_return_null=1).
  MESSAGE("skipped under AddressSanitizer: a scratch request of 2^62 bytes");
#else
  td_team_policy huge_scratch = good;
  huge_scratch.scratch_bytes = std::size_t{1} << 62;
  CHECK_FAILS(td_parallel_team(space, &huge_scratch, noop, nullptr), TD_ERROR_OUT_OF_MEMORY,
              "scratch");
#endif
}
