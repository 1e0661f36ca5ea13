// Work-graph benchmark, Kokkos peer: Kokkos::WorkGraphPolicy<Serial> over a Kokkos::Crs holding
// the same execute-after graph (000 §3.3.1). A policy's ready queue is consumed by its run, so
// Kokkos needs a new policy for every execution: each timed execution is the policy's
// construction (which initializes its queue) plus the parallel_for, as in the Kokkos unit test.
// One thread only: the Debian/Trilinos Kokkos build has the Serial back-end alone.
#include <Kokkos_Core.hpp>
#include <Kokkos_WorkGraphPolicy.hpp>

#include <cstdio>

#define IMPL_NAME "kokkos"
#define IMPL_MAX_THREADS 1
#include "work_graph_driver.h"

using policy_type = Kokkos::WorkGraphPolicy<Kokkos::Serial, Kokkos::IndexType<std::int32_t>>;
using graph_type = policy_type::graph_type;

static graph_type *g_graph;

struct work_functor {
    KOKKOS_INLINE_FUNCTION void operator()(std::int32_t i) const { wg_work(i); }
};

static int impl_setup(const wg_problem *p, char *err, size_t n) {
    Kokkos::InitArguments args;  // not argv: our options must not reach Kokkos
    args.num_threads = 1;
    Kokkos::initialize(args);
    if (p->n >= INT32_MAX || p->nz >= INT32_MAX) {
        std::snprintf(err, n, "graph too large for 32-bit Kokkos indices");
        return 1;
    }
    g_graph = new graph_type();
    g_graph->row_map = graph_type::row_map_type("row_map", p->n + 1);
    g_graph->entries = graph_type::entries_type("entries", p->nz);
    for (int64_t i = 0; i <= p->n; ++i) g_graph->row_map(i) = static_cast<std::int32_t>(p->row_map[i]);
    for (int64_t k = 0; k < p->nz; ++k) g_graph->entries(k) = static_cast<std::int32_t>(p->entries[k]);
    return 0;
}

static int impl_run(char *, size_t) {
    Kokkos::parallel_for("work_graph", policy_type(*g_graph), work_functor{});
    Kokkos::fence();
    return 0;
}

static void impl_info(FILE *f) {
    std::fprintf(f, ",\"version\":\"Kokkos %d.%d.%d\"", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                 KOKKOS_VERSION % 100);
}

static void impl_teardown(void) {
    delete g_graph;
    g_graph = nullptr;
    Kokkos::finalize();
}
