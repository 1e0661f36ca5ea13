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

// ---- Tiled transpose --------------------------------------------------------------------------
// The common permuting copy: dimension x is the destination's stride-one dimension and y the
// source's (a Left <-> Right copy, with any remaining dimensions as a batch). One block moves a
// tile of 32 x 32 elements (for every element size: 64-row tiles of 4-byte elements measured
// slower on the H100, 51% against 59% of a device memcpy): it reads rows of the tile along y
// (coalesced on the source) into shared memory and writes them along x (coalesced on the
// destination). Rows of 33 elements put the column reads of the second phase in distinct banks. The general kernel above would read (or
// write) with a stride, touching one element per 32-byte sector.

#define TD_TRANSPOSE_TILE 32  // edge of a square tile (host: TILE)
#define TD_TRANSPOSE_ROWS 8  // blockDim.y: each thread moves TILE / ROWS elements per phase
#define TD_TRANSPOSE_MAX_BATCH (TD_STRIDED_COPY_MAX_RANK - 2)

// Mirrors `TransposeDesc` in src/cuda/strided_copy.rs. Strides in bytes; the stride of x in the
// destination and of y in the source is the element size.
struct td_transpose_desc {
    uint64_t dst;
    uint64_t src;
    uint64_t nx, ny;         // extents of x and y
    int64_t src_x, dst_y;    // the strided sides: x in the source, y in the destination
    uint64_t tiles_x, tiles_y, tiles;  // tiles along x, along y, and in all (times the batch)
    uint32_t batch_rank;
    uint32_t pad;
    uint64_t batch_extents[TD_TRANSPOSE_MAX_BATCH];
    int64_t batch_src[TD_TRANSPOSE_MAX_BATCH];
    int64_t batch_dst[TD_TRANSPOSE_MAX_BATCH];
};

template <typename T>
__device__ void transpose_tiles(const td_transpose_desc &d) {
    __shared__ T tile[TD_TRANSPOSE_TILE][TD_TRANSPOSE_TILE + 1];
    const int64_t elem = sizeof(T);
    for (uint64_t t = blockIdx.x; t < d.tiles; t += gridDim.x) {
        uint64_t rest = t;
        const uint64_t y0 = (rest % d.tiles_y) * TD_TRANSPOSE_TILE;
        rest /= d.tiles_y;
        const uint64_t x0 = (rest % d.tiles_x) * TD_TRANSPOSE_TILE;
        rest /= d.tiles_x;
        int64_t src = 0, dst = 0;
        for (int k = (int)d.batch_rank - 1; k >= 0; --k) {
            const uint64_t i = rest % d.batch_extents[k];
            rest /= d.batch_extents[k];
            src += (int64_t)i * d.batch_src[k];
            dst += (int64_t)i * d.batch_dst[k];
        }
        const char *s = reinterpret_cast<const char *>(d.src) + src;
        char *o = reinterpret_cast<char *>(d.dst) + dst;
        // Read: threadIdx.x along y (contiguous in the source).
        const uint64_t y = y0 + threadIdx.x;
        if (y < d.ny) {
#pragma unroll
            for (uint32_t j = threadIdx.y; j < TD_TRANSPOSE_TILE; j += TD_TRANSPOSE_ROWS) {
                const uint64_t x = x0 + j;
                if (x < d.nx)
                    tile[j][threadIdx.x] =
                        *reinterpret_cast<const T *>(s + (int64_t)x * d.src_x + (int64_t)y * elem);
            }
        }
        __syncthreads();
        // Write: threadIdx.x along x (contiguous in the destination).
        const uint64_t x = x0 + threadIdx.x;
        if (x < d.nx) {
#pragma unroll
            for (uint32_t j = threadIdx.y; j < TD_TRANSPOSE_TILE; j += TD_TRANSPOSE_ROWS) {
                const uint64_t yy = y0 + j;
                if (yy < d.ny)
                    *reinterpret_cast<T *>(o + (int64_t)x * elem + (int64_t)yy * d.dst_y) =
                        tile[threadIdx.x][j];
            }
        }
        __syncthreads();
    }
}

extern "C" __global__ void td_transpose_copy_4(td_transpose_desc d) { transpose_tiles<uint32_t>(d); }
extern "C" __global__ void td_transpose_copy_8(td_transpose_desc d) { transpose_tiles<uint64_t>(d); }
extern "C" __global__ void td_transpose_copy_16(td_transpose_desc d) { transpose_tiles<uint4>(d); }
