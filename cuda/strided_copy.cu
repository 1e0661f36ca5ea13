// The permuting copy between two strided layouts (src/cuda/strided_copy.rs prepares the shape:
// destination-stride order, merged dimensions, the widest aligned access unit).
#include <stdint.h>

#define TD_STRIDED_COPY_MAX_RANK 8

// Mirrors `Desc` in src/cuda/strided_copy.rs.
struct td_strided_copy_desc {
    uint64_t dst;
    uint64_t src;
    uint64_t count;
    uint32_t rank;
    uint32_t unit;   // bytes per access: 16, 8, 4, 2 or 1
    uint32_t units;  // accesses per element
    uint32_t pad;
    uint64_t extents[TD_STRIDED_COPY_MAX_RANK];
    int64_t src_strides[TD_STRIDED_COPY_MAX_RANK];  // bytes
    int64_t dst_strides[TD_STRIDED_COPY_MAX_RANK];  // bytes
};

template <typename Unit>
__device__ __forceinline__ void copy_element(const td_strided_copy_desc &d, uint64_t index) {
    int64_t src = 0, dst = 0;
    // Row-major decomposition: the last dimension (smallest destination stride) varies fastest,
    // so neighbouring threads write neighbouring elements.
    for (int k = (int)d.rank - 1; k >= 0; --k) {
        const uint64_t extent = d.extents[k];
        const uint64_t i = index % extent;
        index /= extent;
        src += (int64_t)i * d.src_strides[k];
        dst += (int64_t)i * d.dst_strides[k];
    }
    const Unit *s = reinterpret_cast<const Unit *>(d.src + src);
    Unit *t = reinterpret_cast<Unit *>(d.dst + dst);
    for (uint32_t u = 0; u < d.units; ++u) t[u] = s[u];
}

template <typename Unit>
__device__ void copy_all(const td_strided_copy_desc &d) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < d.count; i += stride)
        copy_element<Unit>(d, i);
}

extern "C" __global__ void td_strided_copy(td_strided_copy_desc d) {
    switch (d.unit) {
        case 16: copy_all<uint4>(d); break;
        case 8: copy_all<uint64_t>(d); break;
        case 4: copy_all<uint32_t>(d); break;
        case 2: copy_all<uint16_t>(d); break;
        default: copy_all<uint8_t>(d); break;
    }
}
