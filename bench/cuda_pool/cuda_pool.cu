/*
 * cuda_pool.cu: alloc+free pairs per second from every thread of the GPU, for the taskdag device
 * pool (td_dev_pool_allocate / td_dev_pool_deallocate) and CUDA's in-kernel malloc/free
 * (BENCH_IMPL_MALLOC), plus host<->device copy bandwidth of cudaMemcpy for the copy benchmark.
 *
 * Workload: --threads-per-sm x SMs threads (2048 x 132 = 270,336 on an H100) each do --pairs
 * pairs: allocate --size bytes, write a marker byte at both ends, read both back, free. Every
 * NULL, wrong marker or failed free is counted and makes the run invalid. taskdag: one pool of
 * --pool-mib MiB (blocks 64 B .. 1 KiB, --superblock bytes per superblock) for all threads; after
 * each repetition its statistics must show no block in use and no failed allocation. malloc: the
 * device heap is set to the same size.
 *
 * Figure: pairs / kernel time (CUDA events), in Mpairs/s. Protocol: bench/common/bench_util.h.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "../common/bench_util.h"
#include "taskdag_cuda.cuh"

#define CHECK_CUDA(call)                                                                       \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            bench_die(BENCH_EXIT_WRONG, "%s failed: %s", #call, cudaGetErrorString(e_));      \
    } while (0)

enum { ERR_NULL = 0, ERR_MARKER = 1, ERR_FREE = 2 };

/* Blocks of 256 threads per SM the kernel is compiled for. 4 (no register cap) measured faster
 * than 8 (all 2048 threads resident, but a 32-register cap that spills in the search): 6.7e9 vs
 * 4.0e9 pairs/s at 1 KiB, 1.5e10 vs 1.7e10 at 64 B, on an H100. */
#ifndef BENCH_MIN_BLOCKS
#define BENCH_MIN_BLOCKS 4
#endif

struct taskdag_alloc {
    td_dev_pool pool;
    __device__ void *alloc(size_t size) const { return td_dev_pool_allocate(&pool, size, 1); }
    __device__ bool release(void *p, size_t size) const {
        return td_dev_pool_deallocate(&pool, p, size) == TD_DEV_POOL_OK;
    }
};

struct malloc_alloc {
    __device__ void *alloc(size_t size) const { return malloc(size); }
    __device__ bool release(void *p, size_t) const {
        free(p);
        return true;
    }
};

template <class Alloc>
__global__ void __launch_bounds__(256, BENCH_MIN_BLOCKS) pairs_kernel(Alloc a, unsigned pairs, size_t size, unsigned long long *errors) {
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < pairs; ++i) {
        volatile unsigned char *p = static_cast<unsigned char *>(a.alloc(size));
        if (!p) {
            atomicAdd(errors + ERR_NULL, 1ull);
            continue;
        }
        const unsigned char m = (unsigned char)(thread * 61 + i * 7 + 1);
        p[0] = m;
        p[size - 1] = (unsigned char)(m ^ 0xA5);
        if (p[0] != m || p[size - 1] != (unsigned char)(m ^ 0xA5)) atomicAdd(errors + ERR_MARKER, 1ull);
        if (!a.release((void *)p, size)) atomicAdd(errors + ERR_FREE, 1ull);
    }
}

#ifdef BENCH_IMPL_MALLOC
#define IMPL_NAME "cuda_malloc"
#else
#define IMPL_NAME "taskdag"
#endif

int main(int argc, char **argv) {
    long long reps = 5, warmup = 1, pairs = 64, size = 64, threads_per_sm = 2048, pool_mib = 1024,
              superblock = 64 << 10;
    for (int i = 1; i < argc; ++i) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help")) {
            printf("usage: %s [--size B] [--pairs N] [--threads-per-sm T] [--pool-mib M] "
                   "[--superblock B] [--reps R] [--warmup W] [--threads ignored]\n", argv[0]);
            return 0;
        }
        long long *target = !strcmp(o, "--reps")             ? &reps
                            : !strcmp(o, "--warmup")         ? &warmup
                            : !strcmp(o, "--pairs")          ? &pairs
                            : !strcmp(o, "--size")           ? &size
                            : !strcmp(o, "--threads-per-sm") ? &threads_per_sm
                            : !strcmp(o, "--pool-mib")       ? &pool_mib
                            : !strcmp(o, "--superblock")     ? &superblock
                                                             : NULL;
        long long ignored;
        if (!target && !strcmp(o, "--threads")) target = &ignored;
        if (!target) bench_die(BENCH_EXIT_UNSUPPORTED, "unknown option %s", o);
        *target = bench_parse_int(o, v);
        ++i;
    }
    if (!td_cuda_available())
        bench_die(BENCH_EXIT_UNSUPPORTED, "no usable GPU (td_cuda_available() == 0)");
    int sms = 0;
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    const unsigned block = 256;
    const unsigned long long threads = (unsigned long long)threads_per_sm * sms;
    const unsigned grid = (unsigned)(threads / block);

    td_pool *pool = NULL;
    if (td_initialize(NULL) != TD_OK) bench_die(BENCH_EXIT_WRONG, "td_initialize: %s", td_last_error_message());
#ifdef BENCH_IMPL_MALLOC
    CHECK_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)pool_mib << 20));
    malloc_alloc a;
#else
    td_dev_pool dev;
    td_pool_args args = TD_POOL_ARGS_INIT;
    args.memory_space = TD_SPACE_CUDA;
    args.min_total_alloc_size = (size_t)pool_mib << 20;
    args.min_block_alloc_size = 64;
    args.max_block_alloc_size = 1024;
    args.min_superblock_size = (size_t)superblock;
    if (td_pool_create(&args, &pool) != TD_OK || td_pool_device_handle(pool, &dev) != TD_OK)
        bench_die(BENCH_EXIT_WRONG, "device pool: %s", td_last_error_message());
    taskdag_alloc a = {dev};
#endif
    unsigned long long *errors;
    CHECK_CUDA(cudaMalloc(&errors, 3 * sizeof *errors));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    printf("{\"type\":\"info\",\"impl\":\"%s\",\"version\":", IMPL_NAME);
    bench_json_string(stdout, td_version_string());
    printf(",\"gpu\":");
    bench_json_string(stdout, prop.name);
    printf(",\"sms\":%d,\"threads\":%llu,\"pairs_per_thread\":%lld,\"size\":%lld,\"pool_mib\":%lld,"
           "\"superblock\":%lld}\n", sms, threads, pairs, size, pool_mib, superblock);
    for (long long r = 0; r < warmup + reps; ++r) {
        CHECK_CUDA(cudaMemset(errors, 0, 3 * sizeof *errors));
        CHECK_CUDA(cudaEventRecord(start));
        pairs_kernel<<<grid, block>>>(a, (unsigned)pairs, (size_t)size, errors);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventRecord(stop));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        unsigned long long e[3];
        CHECK_CUDA(cudaMemcpy(e, errors, sizeof e, cudaMemcpyDeviceToHost));
        if (e[ERR_NULL] || e[ERR_MARKER] || e[ERR_FREE])
            bench_die(BENCH_EXIT_WRONG, "repetition %lld: %llu NULL allocations, %llu overwritten markers, "
                      "%llu failed frees", r, e[ERR_NULL], e[ERR_MARKER], e[ERR_FREE]);
#ifndef BENCH_IMPL_MALLOC
        td_pool_stats stats = TD_POOL_STATS_INIT;
        if (td_pool_usage_statistics(pool, &stats) != TD_OK)
            bench_die(BENCH_EXIT_WRONG, "statistics: %s", td_last_error_message());
        if (stats.consumed_blocks || stats.failed_allocations)
            bench_die(BENCH_EXIT_WRONG, "after repetition %lld: %llu blocks still allocated, %llu failed",
                      r, (unsigned long long)stats.consumed_blocks,
                      (unsigned long long)stats.failed_allocations);
#endif
        const double total = (double)threads * (double)pairs;
        printf("{\"type\":\"measurement\",\"rep\":%lld,\"warmup\":%s,\"ms\":%.4f,\"mpairs_per_s\":%.3f,"
               "\"ns_per_pair\":%.6f}\n", r, r < warmup ? "true" : "false", ms, total / (ms * 1e3),
               ms * 1e6 / total);
    }
    td_pool_release(pool);
    td_finalize();
    printf("{\"type\":\"done\",\"valid\":true}\n");
    return 0;
}
