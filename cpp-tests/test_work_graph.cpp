// The C API of the work graph: td_crs (checks, transpose, export), td_work_graph (cycle check,
// priorities, runs on the Serial and Threads spaces, reuse) and misuse.
#include <string>
#include <thread>
#include <vector>

#include "work_graph_support.hpp"

using namespace taskdag_test;

namespace {
td_crs* const untouched_crs = reinterpret_cast<td_crs*>(0x1);
td_work_graph* const untouched_plan = reinterpret_cast<td_work_graph*>(0x1);

// A graph that td_crs_create must reject with TD_ERROR_INVALID_ARGUMENT naming `mentions`.
void check_rejected(std::vector<std::int64_t> row_map, std::vector<std::int64_t> entries,
                    std::initializer_list<std::string> mentions) {
  td_crs* graph = untouched_crs;
  const td_status status =
      td_crs_create(static_cast<std::int64_t>(row_map.size()) - 1, row_map.data(),
                    static_cast<std::int64_t>(entries.size()), entries.data(), &graph);
  CHECK(status == TD_ERROR_INVALID_ARGUMENT);
  check_last_error(TD_ERROR_INVALID_ARGUMENT, mentions);
  CHECK(graph == untouched_crs);
}
}  // namespace

TEST_CASE("td_crs_create keeps the rows and td_crs_export gives them back") {
  const crs_arrays a{{0, 2, 3, 3}, {1, 2, 2}};
  crs_ptr graph = make_crs(a);
  std::int64_t n = -1, nz = -1;
  REQUIRE(td_crs_num_rows(graph.get(), &n) == TD_OK);
  REQUIRE(td_crs_num_entries(graph.get(), &nz) == TD_OK);
  CHECK(n == 3);
  CHECK(nz == 3);
  std::vector<std::int64_t> row_map(4, -1), entries(3, -1);
  REQUIRE(td_crs_export(graph.get(), row_map.data(), 4, entries.data(), 3) == TD_OK);
  CHECK(row_map == a.row_map);
  CHECK(entries == a.entries);
  CHECK_FAILS(td_crs_export(graph.get(), row_map.data(), 3, nullptr, 0), TD_ERROR_INVALID_ARGUMENT,
              "row_map_len", "3", "4");
}

TEST_CASE("td_crs_create rejects malformed offsets naming the row") {
  check_rejected({1, 2}, {0, 0}, {"td_crs_create", "row_map[0] = 1"});
  check_rejected({0, 2, 1, 3}, {1, 2, 0}, {"row 1 ends before it starts", "row_map[1] = 2"});
  check_rejected({0, 1, 2}, {1, 0, 1}, {"row_map[2] = 2", "number of entries, 3"});
  check_rejected({0, -1, 0}, {}, {"row_map[1] = -1", "negative"});
}

TEST_CASE("td_crs_create rejects entries outside the items naming entry, row and value") {
  check_rejected({0, 1, 3}, {1, 0, 2}, {"entries[2] = 2", "row 1", "0..=1"});
  check_rejected({0, 1, 1}, {-4}, {"entries[0] = -4", "row 0"});
}

TEST_CASE("td_crs_create checks its pointer and count arguments") {
  const std::int64_t row_map[] = {0, 1, 1};
  const std::int64_t entries[] = {1};
  td_crs* graph = untouched_crs;
  CHECK_FAILS(td_crs_create(2, nullptr, 1, entries, &graph), TD_ERROR_NULL_ARGUMENT, "row_map");
  CHECK_FAILS(td_crs_create(2, row_map, 1, nullptr, &graph), TD_ERROR_NULL_ARGUMENT, "entries");
  CHECK_FAILS(td_crs_create(2, row_map, 1, entries, nullptr), TD_ERROR_NULL_ARGUMENT, "out");
  CHECK_FAILS(td_crs_create(-1, row_map, 1, entries, &graph), TD_ERROR_INVALID_ARGUMENT,
              "num_rows", "-1");
  CHECK_FAILS(td_crs_create(2, row_map, -3, entries, &graph), TD_ERROR_INVALID_ARGUMENT,
              "num_entries", "-3");
  CHECK(graph == untouched_crs);
  // No entries: entries may be NULL.
  const std::int64_t empty_rows[] = {0, 0, 0};
  REQUIRE(td_crs_create(2, empty_rows, 0, nullptr, &graph) == TD_OK);
  td_crs_release(graph);
}

TEST_CASE("the transpose of the transpose is the original") {
  const crs_arrays a = arrays_from_edges(5, {{0, 3}, {0, 4}, {1, 2}, {1, 4}, {3, 2}, {4, 2}});
  crs_ptr graph = make_crs(a);
  td_crs* t = nullptr;
  td_crs* tt = nullptr;
  REQUIRE(td_crs_transpose(graph.get(), &t) == TD_OK);
  crs_ptr transposed(t);
  std::vector<std::int64_t> row_map(6), entries(6);
  REQUIRE(td_crs_export(t, row_map.data(), 6, entries.data(), 6) == TD_OK);
  // Row j lists the items j executes after, in increasing order.
  CHECK(row_map == std::vector<std::int64_t>{0, 0, 0, 3, 4, 6});
  CHECK(entries == std::vector<std::int64_t>{1, 3, 4, 0, 0, 1});
  REQUIRE(td_crs_transpose(t, &tt) == TD_OK);
  crs_ptr back(tt);
  REQUIRE(td_crs_export(tt, row_map.data(), 6, entries.data(), 6) == TD_OK);
  CHECK(row_map == a.row_map);
  CHECK(entries == a.entries);
}

TEST_CASE("td_work_graph_create reports a cycle with an item on it and its length") {
  crs_ptr graph = make_crs(arrays_from_edges(5, {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}}));
  td_work_graph* plan = untouched_plan;
  CHECK_FAILS(td_work_graph_create(graph.get(), nullptr, &plan), TD_ERROR_CYCLE,
              "td_work_graph_create", "cycle of length 3");
  CHECK(plan == untouched_plan);
  const std::string message = last_message();
  CHECK((contains(message, "item 1 ") || contains(message, "item 2 ") ||
         contains(message, "item 3 ")));
  crs_ptr self = make_crs(arrays_from_edges(3, {{0, 1}, {2, 2}}));
  CHECK_FAILS(td_work_graph_create(self.get(), nullptr, &plan), TD_ERROR_CYCLE,
              "item 2 executes after itself");
}

TEST_CASE("td_work_graph_create rejects a value that is not a priority, naming its index") {
  crs_ptr graph = make_crs(arrays_from_edges(3, {{0, 1}}));
  const td_priority priorities[] = {TD_PRIORITY_HIGH, TD_PRIORITY_LOW, 7};
  td_work_graph* plan = untouched_plan;
  CHECK_FAILS(td_work_graph_create(graph.get(), priorities, &plan), TD_ERROR_INVALID_ARGUMENT,
              "priorities[2]", "7", "TD_PRIORITY_HIGH");
  CHECK(plan == untouched_plan);
}

TEST_CASE("handles of the wrong type and NULL arguments are reported") {
  crs_ptr graph = make_crs(arrays_from_edges(2, {{0, 1}}));
  plan_ptr plan = make_plan(graph.get());
  space_ptr space = serial_space();
  CHECK_FAILS(td_work_graph_run(reinterpret_cast<td_work_graph*>(graph.get()), space.get(),
                                order_checker::work, nullptr),
              TD_ERROR_INVALID_HANDLE, "plan", "td_crs", "td_work_graph");
  CHECK_FAILS(td_work_graph_run(plan.get(), space.get(), nullptr, nullptr), TD_ERROR_NULL_ARGUMENT,
              "work_fn");
  CHECK_FAILS(td_work_graph_run(plan.get(), nullptr, order_checker::work, nullptr),
              TD_ERROR_NULL_ARGUMENT, "space");
  std::int64_t n = 0;
  REQUIRE(td_work_graph_num_items(plan.get(), &n) == TD_OK);
  CHECK(n == 2);
}

TEST_CASE("diamond, chain, star and empty graphs run in dependence order on both spaces") {
  std::vector<std::pair<const char*, crs_arrays>> graphs;
  graphs.emplace_back("diamond", arrays_from_edges(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}));
  std::vector<edge> chain, out_star, in_star;
  for (int i = 1; i < 300; ++i) chain.emplace_back(i - 1, i);
  for (int j = 1; j < 1000; ++j) out_star.emplace_back(0, j);
  for (int i = 0; i < 999; ++i) in_star.emplace_back(i, 999);
  graphs.emplace_back("chain", arrays_from_edges(300, chain));
  graphs.emplace_back("out-star", arrays_from_edges(1000, out_star));
  graphs.emplace_back("in-star", arrays_from_edges(1000, in_star));
  graphs.emplace_back("no dependences", arrays_from_edges(100, {}));
  graphs.emplace_back("no items", crs_arrays{{0}, {}});
  space_ptr serial = serial_space();
  space_ptr threads = threads_space();
  for (auto& named : graphs) {
    CAPTURE(named.first);
    const crs_arrays& a = named.second;
    crs_ptr graph = make_crs(a);
    plan_ptr plan = make_plan(graph.get());
    order_checker checker(static_cast<std::int64_t>(a.row_map.size()) - 1);
    int runs = 0;
    for (const td_space* space : {serial.get(), threads.get()}) {
      CHECK(run_checked(plan.get(), space, a, checker, ++runs) == 0);
    }
  }
}

TEST_CASE("a plan runs a thousand times") {
  std::vector<edge> tree;
  for (int i = 1; i < 63; ++i) tree.emplace_back(i, (i - 1) / 2);  // a binary reduction
  const crs_arrays a = arrays_from_edges(63, tree);
  crs_ptr graph = make_crs(a);
  plan_ptr plan = make_plan(graph.get());
  space_ptr space = threads_space();
  order_checker checker(63);
  std::int64_t bad = 0;
  for (int run = 1; run <= 1000; ++run) bad += run_checked(plan.get(), space.get(), a, checker, run);
  CHECK(bad == 0);
  CHECK(checker.start_order().back() == 0);
}

TEST_CASE("higher priorities run first on one worker") {
  // Roots 0 (Low), 1 (Regular), 2 (High); 2 releases 3 (Low) and 4 (High); 1 releases 5 (High).
  const crs_arrays a = arrays_from_edges(6, {{2, 3}, {2, 4}, {1, 5}});
  const td_priority priorities[] = {TD_PRIORITY_LOW,  TD_PRIORITY_REGULAR, TD_PRIORITY_HIGH,
                                    TD_PRIORITY_LOW,  TD_PRIORITY_HIGH,    TD_PRIORITY_HIGH};
  crs_ptr graph = make_crs(a);
  plan_ptr plan = make_plan(graph.get(), priorities);
  space_ptr space = serial_space();
  order_checker checker(6);
  REQUIRE(run_checked(plan.get(), space.get(), a, checker, 1) == 0);
  const std::vector<std::int64_t> order = checker.start_order();
  CHECK(std::vector<std::int64_t>(order.begin(), order.begin() + 4) ==
        std::vector<std::int64_t>{2, 4, 1, 5});
}

namespace {
struct nested_call {
  const td_work_graph* plan;
  const td_space* space;
  td_status status = TD_OK;
};
void run_again(std::int64_t, void* user) {
  auto* n = static_cast<nested_call*>(user);
  n->status = td_work_graph_run(n->plan, n->space, order_checker::work, nullptr);
}
}  // namespace

TEST_CASE("running a plan from inside its own run returns TD_ERROR_BUSY") {
  crs_ptr graph = make_crs(arrays_from_edges(1, {}));
  plan_ptr plan = make_plan(graph.get());
  space_ptr space = serial_space();
  nested_call nested{plan.get(), space.get()};
  REQUIRE(td_work_graph_run(plan.get(), space.get(), run_again, &nested) == TD_OK);
  CHECK(nested.status == TD_ERROR_BUSY);
}

TEST_CASE("only the control thread may run on the Threads space") {
  const crs_arrays a = arrays_from_edges(2, {{0, 1}});
  crs_ptr graph = make_crs(a);
  plan_ptr plan = make_plan(graph.get());
  space_ptr space = threads_space();
  order_checker checker(2);
  td_status status = TD_OK;
  std::string message;
  std::thread other([&] {
    status = td_work_graph_run(plan.get(), space.get(), order_checker::work, &checker);
    message = td_last_error_message();
  });
  other.join();
  CHECK(status == TD_ERROR_WRONG_THREAD);
  CHECK(contains(message, "control thread"));
  // Nothing ran, and the plan is still usable.
  CHECK(run_checked(plan.get(), space.get(), a, checker, 1) == 0);
}
