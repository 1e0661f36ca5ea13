// The memory pool on the GPU: td_dev_pool_allocate and td_dev_pool_deallocate, for kernels.
//
// Device code runs the host pool's algorithm (src/pool/, 000 §2.5) on the same #[repr(C)] state
// in device memory: one u64 header word and a claim bitset per superblock (src/pool/layout.rs,
// header.rs), one u32 hint per (lane, block size). The claim, reassignment and release state
// changes are the host's, with the same correctness argument (src/pool/claim.rs): a claim sets
// its bits (c1) and keeps them only if the header still reads the assignment it used (c2); a
// reassignment marks the header reclaiming (r1), checks that every bitset word is zero (r2), then
// writes the new assignment or restores the old header (r3). Device atomics are relaxed, so a
// fence.sc (__threadfence) between c1 and c2 and between r1 and r2 places both pairs in the single
// total order of sequentially consistent fences, which is what the Dekker argument needs: either
// r2 sees c1's bit, or c2 sees r1's header. A second fence between r2 and r3 keeps the new
// assignment from becoming visible before r2's reads are done.
//
// Warp aggregation (the design choice 002 §3.4 leaves open): any thread may call, in any control
// flow. The threads of a warp that call together are grouped by block size (__match_any_sync);
// one leader per group claims blocks for the whole group, taking up to 32 free bits of one
// bitset word with a single atomicOr, and hands one block to each thread. Deallocation groups the
// threads freeing blocks of one bitset word and clears all their bits with one atomicAnd. So a
// full warp costs one claim and one release instead of 32 contending ones.
//
// Lanes: the warp's index in its grid, modulo the pool's lane count (16384 for device pools),
// selects its hints, the first superblock window it searches and the first bitset word it tries,
// so concurrently running warps start in different places. The search order after a failed hint
// is the host's: the lane's window, the superblocks at and after the hint, then the report's
// search over every superblock with a fallback to larger blocks (src/pool/search.rs).
//
// Usage: each leader adds the bytes it allocated or freed to one of TD_DEV_POOL_USAGE_LANES
// counters and flushes a counter beyond flush_threshold into the total, raising the high-water
// mark (src/pool/usage.rs). Failed allocations are counted exactly.
#ifndef TASKDAG_CUDA_POOL_CUH
#define TASKDAG_CUDA_POOL_CUH

#include <stddef.h>
#include <stdint.h>

#include "taskdag.h"

/** Results of td_dev_pool_deallocate. */
enum td_dev_pool_status {
    /** The block was released. */
    TD_DEV_POOL_OK = 0,
    /** The pointer is not inside the pool's span. */
    TD_DEV_POOL_OUTSIDE_SPAN = 1,
    /** The pointer's superblock never held blocks. */
    TD_DEV_POOL_NEVER_ASSIGNED = 2,
    /** `size` needs a larger block than the one at the pointer, or is 0. */
    TD_DEV_POOL_SIZE_MISMATCH = 3,
    /** The pointer is not at the start of a block. */
    TD_DEV_POOL_MISALIGNED = 4,
    /** The block is not allocated (a double free). */
    TD_DEV_POOL_NOT_ALLOCATED = 5,
};

namespace td_dev_pool_detail {

typedef unsigned long long word_t;

__device__ __forceinline__ word_t load_word(const word_t *p) {
    word_t v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned load_hint(const unsigned *p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_hint(unsigned *p, unsigned v) {
    asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned lane_id() {
    unsigned id;
    asm("mov.u32 %0, %%laneid;" : "=r"(id));
    return id;
}

__device__ __forceinline__ word_t *header(const td_dev_pool *p, unsigned superblock) {
    return reinterpret_cast<word_t *>(p->superblocks) +
           (size_t)superblock * p->layout.superblock_stride;
}

__device__ __forceinline__ word_t assigned(unsigned block_lg2) {
    return TD_POOL_HEADER_ASSIGNED | (word_t)block_lg2;
}

// Bitset words that blocks of 2^block_lg2 bytes use (layout.rs `words_used`).
__device__ __forceinline__ unsigned words_used(const td_pool_layout &l, unsigned block_lg2) {
    const unsigned blocks_lg2 = l.superblock_lg2 - block_lg2;
    return 1u << (blocks_lg2 > 6 ? blocks_lg2 - 6 : 0);
}

// The bits of each used word that stand for blocks (layout.rs `word_mask`).
__device__ __forceinline__ word_t word_mask(const td_pool_layout &l, unsigned block_lg2) {
    const unsigned blocks_lg2 = min(l.superblock_lg2 - block_lg2, 6u);
    return ~0ull >> (64 - (1u << blocks_lg2));
}

// Smallest N >= N_min with size <= 2^N, for 0 < size (layout.rs `block_lg2_for`).
__device__ __forceinline__ unsigned block_lg2_for(const td_pool_layout &l, size_t size) {
    const unsigned lg2 = 64 - __clzll((long long)(size - 1));
    return max(lg2, l.min_block_lg2);
}

// SBStart(N) of 000 §2.5.3 and the lane's window start (layout.rs).
__device__ __forceinline__ unsigned lane_window_start(const td_pool_layout &l, unsigned lane,
                                                      unsigned block_lg2) {
    const word_t count = l.superblock_count;
    const word_t class_start = (word_t)(block_lg2 - l.min_block_lg2) * count / l.size_classes;
    const word_t spacing = max(count / l.lanes, 1ull);
    return (unsigned)(((word_t)lane * spacing + class_start) % count);
}

// The pool lane of the calling thread's warp.
__device__ __forceinline__ unsigned warp_lane(const td_dev_pool *p) {
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    return (block * warps + thread / 32) & (p->layout.lanes - 1);
}

// Blocks claimed in one bitset word: `bits` of word `word` of `superblock`, of 2^block_lg2 bytes.
struct claim {
    word_t bits;
    unsigned superblock;
    unsigned word;
    unsigned block_lg2;
};

__device__ __forceinline__ word_t lowest_bits(word_t free, unsigned n) {
    word_t want = 0;
    for (unsigned k = 0; k < n && free; ++k) {
        const word_t bit = free & (~free + 1);
        want |= bit;
        free ^= bit;
    }
    return want;
}

// c1 and c2 for up to `n` blocks of one word; the bits kept, or 0.
__device__ __forceinline__ word_t claim_bits(word_t *hdr, word_t expected, word_t *word,
                                             word_t mask, unsigned n) {
    for (;;) {
        const word_t free = ~load_word(word) & mask;
        if (!free) return 0;
        const word_t want = lowest_bits(free, n);
        const word_t got = want & ~atomicOr(word, want);  // c1
        if (got) {
            // Orders c1 before c2 (module comment); also the acquire of the blocks' previous
            // holders' releases.
            __threadfence();
            if (load_word(hdr) != expected) {  // c2
                atomicAnd(word, ~got);  // never handed out: nothing to order
                return 0;
            }
            return got;
        }
        if (load_word(hdr) != expected) return 0;
    }
}

// Up to `n` blocks of superblock `sb` if it holds blocks of 2^block_lg2 bytes.
__device__ claim try_claim(const td_dev_pool *p, unsigned sb, unsigned block_lg2, unsigned lane,
                           unsigned n) {
    claim c = {0, sb, 0, block_lg2};
    const word_t expected = assigned(block_lg2);
    word_t *hdr = header(p, sb);
    if (load_word(hdr) != expected) return c;
    const unsigned used = words_used(p->layout, block_lg2);
    const word_t mask = word_mask(p->layout, block_lg2);
    for (unsigned step = 0; step < used; ++step) {
        const unsigned w = (lane + step) & (used - 1);
        c.bits = claim_bits(hdr, expected, hdr + 1 + w, mask, n);
        if (c.bits) {
            c.word = w;
            return c;
        }
        if (load_word(hdr) != expected) return c;
    }
    return c;
}

__device__ __forceinline__ bool bitset_empty(const td_dev_pool *p, const word_t *hdr) {
    for (unsigned w = 0; w < p->layout.bitset_words; ++w)
        if (load_word(hdr + 1 + w)) return false;
    return true;
}

// r1, r2, r3: reassigns empty superblock `sb`, whose header was `observed`.
__device__ bool reassign(const td_dev_pool *p, unsigned sb, word_t observed, unsigned block_lg2) {
    word_t *hdr = header(p, sb);
    if (atomicCAS(hdr, observed, observed | TD_POOL_HEADER_RECLAIMING) != observed) return false;
    __threadfence();  // r1 before r2
    const bool empty = bitset_empty(p, hdr);
    __threadfence();  // r2 complete before r3
    atomicExch(hdr, empty ? assigned(block_lg2) : observed);
    return empty;
}

__device__ __forceinline__ bool looks_empty(const td_dev_pool *p, unsigned sb, word_t observed) {
    return !(observed & TD_POOL_HEADER_RECLAIMING) && bitset_empty(p, header(p, sb));
}

__device__ bool looks_not_full(const td_dev_pool *p, unsigned sb, unsigned block_lg2) {
    const word_t *hdr = header(p, sb);
    const word_t mask = word_mask(p->layout, block_lg2);
    const unsigned used = words_used(p->layout, block_lg2);
    for (unsigned w = 0; w < used; ++w)
        if (~load_word(hdr + 1 + w) & mask) return true;
    return false;
}

__device__ claim claim_after_reassign(const td_dev_pool *p, unsigned sb, word_t observed,
                                      unsigned block_lg2, unsigned lane, unsigned n) {
    if (reassign(p, sb, observed, block_lg2)) return try_claim(p, sb, block_lg2, lane, n);
    claim none = {0, sb, 0, block_lg2};
    return none;
}

// A claim in `sb` if it holds this size or is empty (search.rs `claim_here`).
__device__ claim claim_here(const td_dev_pool *p, unsigned sb, unsigned block_lg2, unsigned lane,
                            unsigned n) {
    const word_t observed = load_word(header(p, sb));
    if (observed == assigned(block_lg2)) return try_claim(p, sb, block_lg2, lane, n);
    if (looks_empty(p, sb, observed))
        return claim_after_reassign(p, sb, observed, block_lg2, lane, n);
    claim none = {0, sb, 0, block_lg2};
    return none;
}

__device__ claim search_lane_window(const td_dev_pool *p, unsigned block_lg2, unsigned lane,
                                    unsigned n) {
    const td_pool_layout &l = p->layout;
    const unsigned start = lane_window_start(l, lane, block_lg2);
    int empty = -1;
    word_t empty_header = 0;
    for (unsigned k = 0; k < l.lane_window; ++k) {
        const unsigned sb = (start + k) % l.superblock_count;
        const word_t observed = load_word(header(p, sb));
        if (observed == assigned(block_lg2)) {
            const claim c = try_claim(p, sb, block_lg2, lane, n);
            if (c.bits) return c;
        } else if (empty < 0 && looks_empty(p, sb, observed)) {
            empty = (int)sb;
            empty_header = observed;
        }
    }
    if (empty >= 0) return claim_after_reassign(p, (unsigned)empty, empty_header, block_lg2, lane, n);
    claim none = {0, start, 0, block_lg2};
    return none;
}

// 000 §2.5.3 Figure 2.5 from the hint, with the host's bounded look-ahead past the first empty
// superblock and the fallback to a partially full superblock of larger blocks (search.rs).
__device__ claim search_all(const td_dev_pool *p, unsigned block_lg2, unsigned lane, unsigned n,
                            unsigned hinted) {
    const td_pool_layout &l = p->layout;
    const unsigned lookahead = block_lg2 >= l.superblock_lg2 ? 0 : 32;
    int empty = -1, larger = -1;
    word_t empty_header = 0;
    unsigned larger_lg2 = 0, since_empty = 0;
    for (unsigned k = 0; k < l.superblock_count; ++k) {
        if (empty >= 0) {
            if (since_empty >= lookahead) break;
            ++since_empty;
        }
        const unsigned sb = (hinted + k) % l.superblock_count;
        const word_t observed = load_word(header(p, sb));
        if (observed == assigned(block_lg2)) {
            const claim c = try_claim(p, sb, block_lg2, lane, n);
            if (c.bits) return c;
        } else if (empty < 0 && looks_empty(p, sb, observed)) {
            empty = (int)sb;
            empty_header = observed;
        } else if (larger < 0 && (observed & TD_POOL_HEADER_ASSIGNED) &&
                   !(observed & TD_POOL_HEADER_RECLAIMING)) {
            const unsigned lg2 = (unsigned)(observed & TD_POOL_HEADER_BLOCK_LG2_MASK);
            if (lg2 > block_lg2 && looks_not_full(p, sb, lg2)) {
                larger = (int)sb;
                larger_lg2 = lg2;
            }
        }
    }
    if (empty >= 0) {
        claim c = claim_after_reassign(p, (unsigned)empty, empty_header, block_lg2, lane, n);
        if (c.bits) return c;
        // Lost the race for the first empty superblock: try every other one (search.rs
        // `reassign_any_empty`) before falling back to larger blocks.
        for (unsigned k = 1; k < l.superblock_count; ++k) {
            c = claim_here(p, ((unsigned)empty + k) % l.superblock_count, block_lg2, lane, n);
            if (c.bits) return c;
        }
    }
    if (larger >= 0) return try_claim(p, (unsigned)larger, larger_lg2, lane, n);
    claim none = {0, hinted, 0, block_lg2};
    return none;
}

// The leader's claim for `n` threads: the hinted superblock, then the search (search.rs
// `claim_block_searching`), in at most `attempt_limit` rounds.
__device__ claim leader_claim(const td_dev_pool *p, unsigned block_lg2, unsigned lane, unsigned n,
                              int attempt_limit) {
    const td_pool_layout &l = p->layout;
    unsigned *hint = p->hints + (size_t)lane * l.hint_stride + (block_lg2 - l.min_block_lg2);
    claim c = {0, 0, 0, block_lg2};
    for (int round = 0; round < max(attempt_limit, 1); ++round) {
        const unsigned hinted = load_hint(hint);
        c = try_claim(p, hinted, block_lg2, lane, n);
        if (c.bits) return c;
        c = search_lane_window(p, block_lg2, lane, n);
        if (!c.bits) c = claim_here(p, hinted, block_lg2, lane, n);
        if (!c.bits) c = claim_here(p, (hinted + 1) % l.superblock_count, block_lg2, lane, n);
        if (!c.bits) c = search_all(p, block_lg2, lane, n, hinted);
        if (c.bits) {
            // 000 §2.5.3: the hint moves to a superblock of this size that served the claim.
            if (c.block_lg2 == block_lg2 && c.superblock != hinted) store_hint(hint, c.superblock);
            return c;
        }
    }
    return c;
}

// Adds `bytes` to the usage counter of `lane`; flushes it into the total beyond the threshold.
__device__ __forceinline__ void record_usage(const td_dev_pool *p, unsigned lane, long long bytes) {
    word_t *usage = reinterpret_cast<word_t *>(p->usage);
    word_t *counter = usage + TD_DEV_POOL_USAGE_LANES_START +
                      (size_t)(lane & (TD_DEV_POOL_USAGE_LANES - 1)) * TD_DEV_POOL_USAGE_STRIDE;
    const word_t count = atomicAdd(counter, (word_t)bytes) + (word_t)bytes;
    // |count| > threshold as one unsigned comparison (usage.rs).
    if (count + p->flush_threshold > 2 * p->flush_threshold) {
        const word_t moved = atomicExch(counter, 0ull);
        const word_t total = atomicAdd(usage + TD_DEV_POOL_USAGE_TOTAL, moved) + moved;
        if ((long long)total > 0) atomicMax(usage + TD_DEV_POOL_USAGE_HIGH_WATER, total);
    }
}

}  // namespace td_dev_pool_detail

/**
 * Allocates a block of at least `size` bytes from a TD_SPACE_CUDA pool, aligned to its block
 * size; NULL for `size` 0, above the largest block, or when no block was found in
 * `attempt_limit` (>= 1) search rounds (counted in failed_allocations).
 *
 * Any thread may call, in any control flow; the threads of a warp that call together are served
 * by one claim per bitset word. Lock-free. The block belongs to the caller until
 * td_dev_pool_deallocate; the pool must outlive it.
 */
__device__ inline void *td_dev_pool_allocate(const td_dev_pool *pool, size_t size,
                                             int attempt_limit) {
    using namespace td_dev_pool_detail;
    const td_pool_layout &l = pool->layout;
    const unsigned active = __activemask();
    const bool valid = size - 1 < ((size_t)1 << l.max_block_lg2);
    const unsigned block_lg2 = valid ? block_lg2_for(l, size) : 0xffffffffu;
    const unsigned group = __match_any_sync(active, block_lg2);
    if (!valid) return NULL;
    const unsigned me = lane_id();
    const unsigned leader = __ffs(group) - 1;
    const unsigned rank = __popc(group & ((1u << me) - 1));
    const unsigned need = __popc(group);
    const unsigned lane = warp_lane(pool);
    void *block = NULL;
    unsigned served = 0;
    while (served < need) {
        claim c = {0, 0, 0, block_lg2};
        if (me == leader) {
            c = leader_claim(pool, block_lg2, lane, need - served, attempt_limit);
            if (c.bits) record_usage(pool, lane, (long long)__popcll(c.bits) << c.block_lg2);
        }
        const word_t bits = __shfl_sync(group, c.bits, leader);
        if (!bits) break;
        const unsigned sb = __shfl_sync(group, c.superblock, leader);
        const unsigned w = __shfl_sync(group, c.word, leader);
        const unsigned lg2 = __shfl_sync(group, c.block_lg2, leader);
        const unsigned got = __popcll(bits);
        if (rank >= served && rank < served + got) {
            word_t mine = bits;
            for (unsigned k = served; k < rank; ++k) mine &= mine - 1;
            const unsigned index = w * 64 + (unsigned)(__ffsll((long long)mine) - 1);
            block = static_cast<char *>(pool->span) + ((size_t)sb << l.superblock_lg2) +
                    ((size_t)index << lg2);
        }
        served += got;
    }
    if (served < need && me == leader)
        atomicAdd(reinterpret_cast<word_t *>(pool->usage) + TD_DEV_POOL_USAGE_FAILED_ALLOCATIONS,
                  (word_t)(need - served));
    return block;
}

/**
 * Returns a block to a TD_SPACE_CUDA pool; `size` is the size it was allocated with. Returns
 * TD_DEV_POOL_OK, or another td_dev_pool_status naming what is wrong with the arguments (the
 * pool is then unchanged).
 *
 * Any thread may call, in any control flow; threads of a warp freeing blocks of one bitset word
 * together share one atomic. Constant time, lock-free. Two threads of one warp freeing the same
 * block in the same call are not told apart.
 */
__device__ inline int td_dev_pool_deallocate(const td_dev_pool *pool, void *ptr, size_t size) {
    using namespace td_dev_pool_detail;
    const td_pool_layout &l = pool->layout;
    const size_t offset = (size_t)(static_cast<char *>(ptr) - static_cast<char *>(pool->span));
    const unsigned me = lane_id();
    int status = TD_DEV_POOL_OK;
    unsigned block_lg2 = 0;
    size_t block = 0;
    word_t *word = NULL;
    if (offset >= ((size_t)l.superblock_count << l.superblock_lg2)) {
        status = TD_DEV_POOL_OUTSIDE_SPAN;
    } else {
        const unsigned sb = (unsigned)(offset >> l.superblock_lg2);
        // Relaxed: the caller holds the block, so its size is stable (release.rs).
        const word_t h = load_word(header(pool, sb));
        block_lg2 = (unsigned)(h & TD_POOL_HEADER_BLOCK_LG2_MASK);
        if (!(h & TD_POOL_HEADER_ASSIGNED)) {
            status = TD_DEV_POOL_NEVER_ASSIGNED;
        } else if (size - 1 >= ((size_t)1 << block_lg2)) {
            status = TD_DEV_POOL_SIZE_MISMATCH;
        } else if (offset & (((size_t)1 << block_lg2) - 1)) {
            status = TD_DEV_POOL_MISALIGNED;
        } else {
            block = (offset & (((size_t)1 << l.superblock_lg2) - 1)) >> block_lg2;
            word = header(pool, sb) + 1 + block / 64;
        }
    }
    // Threads with an error get a key of their own and leave; the others group by word.
    const word_t key = status == TD_DEV_POOL_OK ? (word_t)word : ~(word_t)me;
    const unsigned group = __match_any_sync(__activemask(), key);
    if (status != TD_DEV_POOL_OK) return status;
    const word_t bit = 1ull << (block % 64);
    const word_t bits = (word_t)__reduce_or_sync(group, (unsigned)bit) |
                        ((word_t)__reduce_or_sync(group, (unsigned)(bit >> 32)) << 32);
    const unsigned leader = __ffs(group) - 1;
    word_t before = 0;
    // Orders the group's accesses to its blocks before the leader's release below.
    __syncwarp(group);
    if (me == leader) {
        // Release: the group's accesses to its blocks happen before the next claim of them.
        __threadfence();
        before = atomicAnd(word, ~bits);
        record_usage(pool, warp_lane(pool), -((long long)__popcll(bits & before) << block_lg2));
    }
    before = __shfl_sync(group, before, leader);
    return (before & bit) ? TD_DEV_POOL_OK : TD_DEV_POOL_NOT_ALLOCATED;
}

#endif  // TASKDAG_CUDA_POOL_CUH
