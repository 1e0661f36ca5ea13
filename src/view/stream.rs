//! Help for large transposing copies, where one side is read or written in short runs that the
//! hardware prefetchers do not follow: software prefetches of the next tile's source lines, and
//! non-temporal stores that write whole destination lines without first reading them (no
//! read-for-ownership traffic) and without evicting the source from the caches. Measured on the
//! 2-core development VM (docs/PERFORMANCE.md): a 2-D 256 MiB transpose on one thread went from
//! about a quarter of memcpy's bandwidth with plain tiles to about half with both.
//!
//! Both are x86-64 instructions (SSE/SSE2, part of the x86-64 baseline); elsewhere prefetching
//! is skipped and stores are ordinary.

use super::kernel::{self, Tile};

/// Bytes per cache line, the prefetch granularity.
const LINE: usize = 64;

/// Prefetches into L1 the source lines of `tile`, whose rows are source-contiguous
/// (`tile.src_row == 1`): one prefetch per line of each column's run.
///
/// # Safety
/// None beyond computing addresses: prefetches never fault. The addresses stay inside the
/// source's span because the tile is inside the array.
#[inline]
pub(crate) unsafe fn prefetch_source(size: usize, src: *const u8, tile: &Tile) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let run = tile.rows * size;
        for col in 0..tile.cols {
            let start = src.wrapping_add(col * tile.src_col * size);
            let mut offset = 0;
            while offset < run {
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset) as *const i8);
                offset += LINE;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (size, src, tile);
}

/// Whether `copy_tile_streaming` uses non-temporal stores for `size`-byte elements at `dst`
/// (4- and 8-byte elements at addresses aligned to their size, on x86-64).
pub(crate) fn streams(size: usize, dst: *const u8) -> bool {
    cfg!(target_arch = "x86_64") && (size == 4 || size == 8) && dst as usize % size == 0
}

/// `kernel::copy_tile` with non-temporal stores where `streams` says so, fenced at the end so
/// that the stores are ordered before whatever the thread does next (the joins that publish
/// the copy to the caller).
///
/// # Safety
/// As for `kernel::copy_tile`.
pub(crate) unsafe fn copy_tile_streaming(size: usize, dst: *mut u8, src: *const u8, tile: &Tile) {
    #[cfg(target_arch = "x86_64")]
    if streams(size, dst) {
        use std::arch::x86_64::{_mm_sfence, _mm_stream_si32, _mm_stream_si64};
        for row in 0..tile.rows {
            let d = dst.add(row * tile.dst_row * size);
            let s = src.add(row * tile.src_row * size);
            for col in 0..tile.cols {
                let (to, from) = (
                    d.add(col * tile.dst_col * size),
                    s.add(col * tile.src_col * size),
                );
                if size == 8 {
                    _mm_stream_si64(to as *mut i64, (from as *const i64).read_unaligned());
                } else {
                    _mm_stream_si32(to as *mut i32, (from as *const i32).read_unaligned());
                }
            }
        }
        _mm_sfence();
        return;
    }
    kernel::copy_tile(size, dst, src, tile);
}
