// Pool benchmark, Kokkos::MemoryPool<Kokkos::Serial> peer: same total size, block sizes and
// superblock size as the taskdag pool, allocate(size, 1) / deallocate(ptr, size). One thread
// only: the Debian/Trilinos Kokkos build has the Serial back-end alone.
#include <Kokkos_Core.hpp>
#include <Kokkos_MemoryPool.hpp>

#include <cstdio>

#define IMPL_NAME "kokkos"
#define IMPL_MAX_THREADS 1
#include "pool_driver.h"

typedef Kokkos::MemoryPool<Kokkos::Serial> kokkos_pool;
static kokkos_pool *g_pool;

static void *impl_alloc(size_t size) { return g_pool->allocate(size, 1); }
static int impl_free(void *ptr, size_t size) {
    g_pool->deallocate(ptr, size);
    return 0;
}
static void impl_describe_failure(char *err, size_t n) {
    std::snprintf(err, n, "Kokkos::MemoryPool::allocate returned NULL (pool exhausted or size too large)");
}

static int impl_setup(const pool_params *p, char *err, size_t n) {
    Kokkos::InitArguments args;  // not argv: our --threads must not reach Kokkos
    args.num_threads = 1;
    Kokkos::initialize(args);
    // taskdag's default superblock is the max block size; give Kokkos the same explicitly
    // (Kokkos' own default would be 1 MiB).
    size_t superblock = p->superblock ? p->superblock : p->max_block;
    try {
        g_pool = new kokkos_pool(Kokkos::HostSpace(), p->total_bytes, p->min_block, p->max_block, superblock);
    } catch (std::exception &e) {
        std::snprintf(err, n, "Kokkos::MemoryPool constructor: %s", e.what());
        return 1;
    }
    return 0;
}

static int impl_check(char *err, size_t n) {
    kokkos_pool::usage_statistics st;
    g_pool->get_usage_statistics(st);
    if (st.consumed_bytes != 0 || st.consumed_blocks != 0) {
        std::snprintf(err, n,
                      "Kokkos pool statistics after all blocks were freed: consumed_bytes=%zu consumed_blocks=%zu",
                      st.consumed_bytes, st.consumed_blocks);
        return 1;
    }
    return 0;
}

static void impl_info(FILE *f) {
    kokkos_pool::usage_statistics st;
    g_pool->get_usage_statistics(st);
    std::fprintf(f, ",\"version\":\"Kokkos %d.%d.%d\",\"capacity_bytes\":%zu,\"superblock_bytes\":%zu",
                 KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, st.capacity_bytes,
                 st.superblock_bytes);
}

static void impl_teardown(void) {
    delete g_pool;
    g_pool = nullptr;
    Kokkos::finalize();
}
