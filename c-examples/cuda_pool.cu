/*
 * cuda_pool.cu: a user kernel allocating from a taskdag memory pool in device memory.
 *
 * Every thread builds a small array in a block from the pool (its length depends on the thread),
 * sums it, and frees it; the host checks the sums and reads the pool's statistics. The kernel
 * counts failures in a block of a TD_SPACE_CUDA_HOST_PINNED pool: page-locked host memory that
 * the kernel writes at the same address the host reads, with no copy. Without a usable GPU it
 * prints why and exits 0 (the creation of a TD_SPACE_CUDA pool then fails with
 * TD_ERROR_UNAVAILABLE, which is shown too).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <taskdag.h>
#include <taskdag_cuda.cuh>

__global__ void sum_of_squares(td_dev_pool pool, int threads, long long *sums, int *failures) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    const int n = 1 + t % 100;
    long long *values = (long long *)td_dev_pool_allocate(&pool, n * sizeof(long long), 1);
    if (!values) {
        atomicAdd(failures, 1);
        return;
    }
    for (int i = 0; i < n; ++i) values[i] = (long long)i * i;
    long long sum = 0;
    for (int i = 0; i < n; ++i) sum += values[i];
    sums[t] = sum;
    if (td_dev_pool_deallocate(&pool, values, n * sizeof(long long)) != TD_DEV_POOL_OK)
        atomicAdd(failures, 1);
}

static int check(td_status s, const char *what) {
    if (s != TD_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, td_status_string(s), td_last_error_message());
        exit(1);
    }
    return 0;
}

int main(void) {
    check(td_initialize(NULL), "td_initialize");
    td_pool_args args = TD_POOL_ARGS_INIT;
    args.memory_space = TD_SPACE_CUDA;
    args.min_total_alloc_size = 16 << 20;
    args.max_block_alloc_size = 1024;
    td_pool *pool = NULL;
    td_status s = td_pool_create(&args, &pool);
    if (!td_cuda_available()) {
        printf("td_pool_create(TD_SPACE_CUDA): %s: %s\n", td_status_string(s), td_last_error_message());
        printf("cuda_pool.cu: SKIPPED: no usable GPU\n");
        td_finalize();
        return s == TD_ERROR_UNAVAILABLE ? 0 : 1;
    }
    check(s, "td_pool_create");
    td_dev_pool dev;
    check(td_pool_device_handle(pool, &dev), "td_pool_device_handle");
    td_pool_args pinned_args = TD_POOL_ARGS_INIT;
    pinned_args.memory_space = TD_SPACE_CUDA_HOST_PINNED;
    pinned_args.min_total_alloc_size = 1 << 20;
    td_pool *pinned = NULL;
    check(td_pool_create(&pinned_args, &pinned), "td_pool_create(TD_SPACE_CUDA_HOST_PINNED)");

    const int threads = 100000;
    long long *sums;
    int *failures = (int *)td_pool_allocate(pinned, sizeof *failures, 1);
    if (!failures) {
        fprintf(stderr, "td_pool_allocate(pinned): %s\n", td_last_error_message());
        return 1;
    }
    *failures = 0;
    if (cudaMalloc(&sums, threads * sizeof *sums) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    sum_of_squares<<<(threads + 255) / 256, 256>>>(dev, threads, sums, failures);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    long long *host = (long long *)malloc(threads * sizeof *host);
    cudaMemcpy(host, sums, threads * sizeof *host, cudaMemcpyDeviceToHost);
    const int failed = *failures; /* written by the kernel, read here: no copy */
    int wrong = 0;
    for (int t = 0; t < threads; ++t) {
        const long long n = 1 + t % 100;
        if (host[t] != (n - 1) * n * (2 * n - 1) / 6) ++wrong;
    }
    td_pool_stats stats = TD_POOL_STATS_INIT;
    check(td_pool_usage_statistics(pool, &stats), "td_pool_usage_statistics");
    printf("%d threads allocated, summed and freed: %d wrong sums, %d failures\n", threads, wrong, failed);
    printf("pool: %llu blocks in use, high water %llu bytes of %llu\n",
           (unsigned long long)stats.consumed_blocks, (unsigned long long)stats.high_water_bytes,
           (unsigned long long)stats.capacity_bytes);
    free(host);
    cudaFree(sums);
    check(td_pool_deallocate(pinned, failures, sizeof *failures), "td_pool_deallocate(pinned)");
    td_pool_release(pinned);
    td_pool_release(pool);
    td_finalize();
    if (wrong || failed || stats.consumed_blocks) return 1;
    printf("cuda_pool.cu: done\n");
    return 0;
}
