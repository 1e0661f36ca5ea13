// Fibonacci benchmark, Kokkos peer: 000 Fig. 3.4 on Kokkos::TaskScheduler<Kokkos::Serial> (the
// Debian/Trilinos Kokkos has the Serial back-end alone, so 1 thread): F(k-2) at high priority,
// F(k-1) regular, respawn on their when_all at high priority. The memory pool has 64 MiB of
// 64..1024-byte blocks.
#include <Kokkos_Core.hpp>

#include <cstdio>

#define IMPL_NAME "kokkos"
#define IMPL_MAX_THREADS 1
#include "fib_driver.h"

using scheduler_type = Kokkos::TaskScheduler<Kokkos::Serial>;
using memory_pool = scheduler_type::memory_pool;

struct Fib {
    using value_type = long;
    using future_type = Kokkos::BasicFuture<long, scheduler_type>;

    scheduler_type sched;
    future_type child[2];
    long n;

    KOKKOS_INLINE_FUNCTION Fib(const scheduler_type &s, long k) : sched(s), child{}, n(k) {}

    KOKKOS_INLINE_FUNCTION void operator()(typename scheduler_type::member_type &, long &result) {
        if (n < 2) {
            result = n;
        } else if (!child[0].is_null()) {
            result = child[0].get() + child[1].get();
        } else {
            child[0] = Kokkos::task_spawn(Kokkos::TaskSingle(sched, Kokkos::TaskPriority::High), Fib(sched, n - 2));
            child[1] = Kokkos::task_spawn(Kokkos::TaskSingle(sched), Fib(sched, n - 1));
            if (child[0].is_null() || child[1].is_null()) Kokkos::abort("Fib: memory pool exhausted");
            Kokkos::BasicFuture<void, scheduler_type> all = sched.when_all(child, 2);
            Kokkos::respawn(this, all, Kokkos::TaskPriority::High);
        }
    }
};

static scheduler_type *g_sched;

static int impl_setup(int threads, char *, size_t) {
    Kokkos::InitArguments args;  // not argv: our --threads must not reach Kokkos
    args.num_threads = threads;
    Kokkos::initialize(args);
    g_sched = new scheduler_type(memory_pool(Kokkos::HostSpace(), size_t(64) << 20, 64, 1024, 1024 * 1024));
    return 0;
}

static long impl_fib(int n, char *err, size_t errn) {
    auto f = Kokkos::host_spawn(Kokkos::TaskSingle(*g_sched), Fib(*g_sched, n));
    if (f.is_null()) {
        std::snprintf(err, errn, "Kokkos::host_spawn returned a null future (pool exhausted)");
        return -1;
    }
    Kokkos::wait(*g_sched);
    return f.get();
}

static void impl_info(FILE *f) {
    std::fprintf(f, ",\"version\":\"Kokkos %d.%d.%d\"", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                 KOKKOS_VERSION % 100);
}

static void impl_teardown(void) {
    delete g_sched;
    g_sched = nullptr;
    Kokkos::finalize();
}
