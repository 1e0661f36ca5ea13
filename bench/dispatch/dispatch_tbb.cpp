/* Dispatch benchmark, oneTBB implementation: tbb::parallel_for / tbb::parallel_reduce over a
 * blocked_range with the static_partitioner (one block per thread, like OpenMP's
 * schedule(static) and taskdag's default policy), at most `threads` threads through
 * tbb::global_control. Threads are pinned one per CPU by a task_scheduler_observer when they join
 * the arena (the calling thread, arena index 0, to the first), as taskdag's and OpenMP's are.
 *
 * Nothing is pinned before oneTBB has sized its arena: oneTBB takes its default concurrency from
 * the affinity mask of the thread that first uses it, so pinning the calling thread first (as an
 * earlier version did) left an arena of one thread at every thread count, and the "parallel"
 * figures were those of the calling thread alone. Setup checks the arena's concurrency. */
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <oneapi/tbb/version.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <vector>

#define IMPL_NAME "tbb"
#include "dispatch_driver.h"

namespace {

std::vector<int> g_cpus;  // CPUs this process may use, in order
std::atomic<bool> g_pin_failed{false};
int g_threads = 1;

bool pin_to(int index) {
    if (g_cpus.empty()) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(g_cpus[static_cast<std::size_t>(index) % g_cpus.size()], &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

class pinning_observer : public tbb::task_scheduler_observer {
public:
    pinning_observer() { observe(true); }
    void on_scheduler_entry(bool worker) override {
        const int index = tbb::this_task_arena::current_thread_index();
        if (!pin_to(index)) g_pin_failed = true;
        if (!worker && index != 0) g_pin_failed = true;
    }
};

std::unique_ptr<tbb::global_control> g_control;
std::unique_ptr<pinning_observer> g_observer;

using range_t = tbb::blocked_range<int64_t>;

}  // namespace

static int impl_setup(int threads, char *err, size_t n) {
    g_threads = threads;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) g_cpus.push_back(c);
    g_control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<std::size_t>(threads));
    g_observer = std::make_unique<pinning_observer>();
    const auto allowed = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    if (allowed != static_cast<std::size_t>(threads)) {
        std::snprintf(err, n, "tbb allows %zu threads, asked for %d", allowed, threads);
        return 1;
    }
    // A first parallel call creates the arena, and the observer pins the calling thread; every
    // worker is pinned when it first joins.
    tbb::parallel_for(range_t(0, threads), [](const range_t &) {}, tbb::static_partitioner());
    // The arena's size ignores global_control, which caps the workers that join it.
    const auto concurrency = std::min(static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()), allowed);
    if (concurrency != static_cast<std::size_t>(threads)) {
        std::snprintf(err, n, "tbb runs %zu threads, asked for %d", concurrency, threads);
        return 1;
    }
    return 0;
}

static int impl_for(int64_t n) {
    tbb::parallel_for(
        range_t(0, n),
        [](const range_t &r) {
            for (int64_t i = r.begin(); i < r.end(); ++i) dispatch_touch(i);
        },
        tbb::static_partitioner());
    return 0;
}

static int impl_reduce(int64_t n, int64_t *sum) {
    *sum = tbb::parallel_reduce(
        range_t(0, n), int64_t{0},
        [](const range_t &r, int64_t acc) {
            for (int64_t i = r.begin(); i < r.end(); ++i) acc += i + 1;
            return acc;
        },
        [](int64_t x, int64_t y) { return x + y; }, tbb::static_partitioner());
    return 0;
}

static int impl_fill(double *a, int64_t n) {
    tbb::parallel_for(
        range_t(0, n),
        [a](const range_t &r) {
            for (int64_t i = r.begin(); i < r.end(); ++i) a[i] = dispatch_value(i);
        },
        tbb::static_partitioner());
    return 0;
}

static int impl_sum(const double *a, int64_t n, double *sum) {
    *sum = tbb::parallel_reduce(
        range_t(0, n), 0.0,
        [a](const range_t &r, double acc) { return acc + dispatch_sum_block(a, r.begin(), r.end()); },
        [](double x, double y) { return x + y; }, tbb::static_partitioner());
    return 0;
}

static void impl_info(FILE *f) {
    std::fprintf(f, ",\"version\":\"oneTBB %d.%d\",\"pinned\":%s", TBB_VERSION_MAJOR, TBB_VERSION_MINOR,
                 static_cast<int>(g_cpus.size()) >= g_threads && !g_pin_failed ? "true" : "false");
}

static void impl_teardown(void) {
    g_observer.reset();
    g_control.reset();
}
