/*
 * cuda_memcpy.cu: cudaMemcpy bandwidth host<->device (pageable and pinned) and device->device,
 * the reference for taskdag's copy layer (examples/cuda_copy_bandwidth.rs moves the same bytes).
 * Prints one JSON line per case: median of --reps copies of --mib MiB after one warm-up.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#define CHECK_CUDA(call)                                                                    \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));             \
            return e_ == cudaErrorNoDevice || e_ == cudaErrorInsufficientDriver ? 2 : 1;    \
        }                                                                                   \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t mib = 256;
    int reps = 7;
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--help")) {
            printf("usage: %s [--mib N] [--reps N]\n", argv[0]);
            return 0;
        }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib")) mib = strtoul(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    }
    const size_t bytes = mib << 20;
    void *device, *device2, *pinned;
    CHECK_CUDA(cudaMalloc(&device, bytes));
    CHECK_CUDA(cudaMalloc(&device2, bytes));
    CHECK_CUDA(cudaMallocHost(&pinned, bytes));
    std::vector<unsigned char> pageable(bytes, 1);
    memset(pinned, 2, bytes);
    struct Case { const char *name; void *dst; const void *src; };
    const Case cases[] = {
        {"h2d_pageable", device, pageable.data()}, {"d2h_pageable", pageable.data(), device},
        {"h2d_pinned", device, pinned},            {"d2h_pinned", pinned, device},
        {"d2d", device2, device},
    };
    for (const Case &c : cases) {
        std::vector<double> times;
        for (int r = 0; r <= reps; ++r) {
            const double t0 = now_s();
            CHECK_CUDA(cudaMemcpy(c.dst, c.src, bytes, cudaMemcpyDefault));
            CHECK_CUDA(cudaDeviceSynchronize());
            if (r > 0) times.push_back(now_s() - t0);
        }
        std::sort(times.begin(), times.end());
        const double t = times[times.size() / 2];
        printf("{\"type\":\"measurement\",\"impl\":\"cudaMemcpy\",\"case\":\"%s\",\"mib\":%zu,"
               "\"gb_per_s\":%.2f}\n", c.name, mib, bytes / t / 1e9);
    }
    printf("{\"type\":\"done\",\"valid\":true}\n");
    return 0;
}
