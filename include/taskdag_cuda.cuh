/*
 * taskdag: device-side API for CUDA C++ code. Include it in a .cu file compiled with nvcc for
 * sm_70 or newer (warp match operations; sm_80 or newer for the warp reductions it uses).
 *
 * Memory pool in device memory: create a pool with td_pool_create and TD_SPACE_CUDA, fill a
 * td_dev_pool with td_pool_device_handle, pass it by value to a kernel, and there
 *
 *     void *p = td_dev_pool_allocate(&pool, bytes, 1);    // NULL when exhausted
 *     ...
 *     td_dev_pool_deallocate(&pool, p, bytes);            // TD_DEV_POOL_OK
 *
 * Any thread may call both, in any control flow; threads of a warp that call together are served
 * with one atomic operation per 64 blocks. The host reads the pool's statistics with
 * td_pool_usage_statistics, resets it with td_pool_reset and releases it with td_pool_release.
 * See docs/cuda.md.
 */
#ifndef TASKDAG_CUDA_CUH
#define TASKDAG_CUDA_CUH

#include "taskdag.h"
#include "taskdag_cuda/pool.cuh"

#endif /* TASKDAG_CUDA_CUH */
