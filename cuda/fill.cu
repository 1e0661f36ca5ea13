// Fills device memory with a repeated element of any size up to 16 bytes (src/cuda/fill.rs
// uses the driver's memset for 1, 2 and 4 bytes when aligned).
#include <stdint.h>

// Mirrors `FillDesc` in src/cuda/fill.rs.
struct td_fill_desc {
    uint64_t dst;
    uint64_t count;
    uint32_t elem_bytes;
    uint8_t pattern[16];
};

extern "C" __global__ void td_fill(td_fill_desc d) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool aligned8 = d.elem_bytes % 8 == 0 && d.dst % 8 == 0;
    if (aligned8) {
        // Whole 8-byte words: one or two per element.
        uint64_t words[2];
        memcpy(words, d.pattern, sizeof words);
        const uint32_t per = d.elem_bytes / 8;
        uint64_t *dst = reinterpret_cast<uint64_t *>(d.dst);
        for (uint64_t i = first; i < d.count; i += stride)
            for (uint32_t w = 0; w < per; ++w) dst[i * per + w] = words[w];
    } else {
        uint8_t *dst = reinterpret_cast<uint8_t *>(d.dst);
        for (uint64_t i = first; i < d.count; i += stride)
            for (uint32_t b = 0; b < d.elem_bytes; ++b) dst[i * d.elem_bytes + b] = d.pattern[b];
    }
}
