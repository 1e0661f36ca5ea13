// Kernels of the device pool tests (src/cuda/tests.rs); embedded in test builds only.
#include <stdint.h>

#include "taskdag_cuda.cuh"

// Counters the stress kernel reports (indexes into `report`).
enum { ALLOCATED = 0, FAILED = 1, CORRUPTED = 2, BAD_FREES = 3, MISALIGNED = 4 };

// Every thread allocates a block of a size that varies by thread and round, fills it with a
// pattern naming its owner and round, waits until the whole CTA has written (so two threads
// handed overlapping blocks overwrite each other before checking), checks, and frees.
extern "C" __global__ void td_test_pool_stress(td_dev_pool pool, unsigned rounds,
                                               unsigned long long *report) {
    const unsigned long long thread = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned round = 0; round < rounds; ++round) {
        const size_t size = (size_t)16 << ((thread * 7 + round) % 6);  // 16 .. 512 bytes
        unsigned long long *block =
            static_cast<unsigned long long *>(td_dev_pool_allocate(&pool, size, 2));
        const unsigned long long mark = (thread << 20) | ((unsigned long long)blockIdx.x << 8) | round;
        if (block) {
            atomicAdd(report + ALLOCATED, 1ull);
            if ((uintptr_t)block % size != 0) atomicAdd(report + MISALIGNED, 1ull);
            for (size_t i = 0; i < size / 8; ++i) block[i] = mark + i;
        } else {
            atomicAdd(report + FAILED, 1ull);
        }
        __syncthreads();
        if (block) {
            for (size_t i = 0; i < size / 8; ++i)
                if (block[i] != mark + i) {
                    atomicAdd(report + CORRUPTED, 1ull);
                    break;
                }
        }
        __syncthreads();
        if (block && td_dev_pool_deallocate(&pool, block, size) != TD_DEV_POOL_OK)
            atomicAdd(report + BAD_FREES, 1ull);
    }
}

// Thread i allocates one block of `size` bytes into blocks[i] (NULL when the pool is exhausted).
extern "C" __global__ void td_test_pool_fill(td_dev_pool pool, size_t size, void **blocks,
                                             unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) blocks[i] = td_dev_pool_allocate(&pool, size, 1);
}

// Thread i frees blocks[i] (if not NULL) and stores the status in statuses[i].
extern "C" __global__ void td_test_pool_free(td_dev_pool pool, size_t size, void **blocks,
                                             int *statuses, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) statuses[i] = blocks[i] ? td_dev_pool_deallocate(&pool, blocks[i], size) : -1;
}

// One thread misuses the pool; statuses: double free, misaligned, outside the span, larger size,
// never-assigned superblock (the last superblock of a fresh pool), too large allocation (1 when
// NULL), zero-size allocation (1 when NULL).
extern "C" __global__ void td_test_pool_misuse(td_dev_pool pool, int *statuses) {
    char *block = static_cast<char *>(td_dev_pool_allocate(&pool, 64, 1));
    statuses[0] = td_dev_pool_deallocate(&pool, block, 64);
    statuses[1] = td_dev_pool_deallocate(&pool, block, 64);
    block = static_cast<char *>(td_dev_pool_allocate(&pool, 64, 1));
    statuses[2] = td_dev_pool_deallocate(&pool, block + 8, 64);
    statuses[3] = td_dev_pool_deallocate(&pool, block - 4096 * 1024, 64);
    statuses[4] = td_dev_pool_deallocate(&pool, block, 4096);
    char *last = static_cast<char *>(pool.span) +
                 ((size_t)(pool.layout.superblock_count - 1) << pool.layout.superblock_lg2);
    statuses[5] = td_dev_pool_deallocate(&pool, last, 64);
    statuses[6] = td_dev_pool_allocate(&pool, ((size_t)1 << pool.layout.max_block_lg2) + 1, 1) == NULL;
    statuses[7] = td_dev_pool_allocate(&pool, 0, 1) == NULL;
    statuses[8] = td_dev_pool_deallocate(&pool, block, 64);
}
