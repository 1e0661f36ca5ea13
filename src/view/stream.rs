//! Help for large transposing copies, where one side is read or written in short runs that the
//! hardware prefetchers do not follow: software prefetches of the next tile's source lines, and
//! non-temporal stores that write whole destination lines without first reading them (no
//! read-for-ownership traffic) and without evicting the source from the caches.
//!
//! The prefetches for the next tile are spread over the rows of the current one (a few lines
//! before each row) instead of issued all at once before it. A burst of a tile's ~2000
//! prefetches fills the core's miss buffers, so (as we read the measurements) the copy behind it
//! waits until the burst has drained and reading and copying take turns; spread out, the next
//! tile's lines arrive while this one is copied. Measured on the 2-core EPYC, one thread, 256 MiB
//! (docs/PERFORMANCE.md, "Views"): 2-D transposes 5.3 -> 6.2-6.7 GB/s, 3-D 4.9-5.0 -> 8.3-8.5
//! (memcpy 9.4-10.6), and 8.9-10.8 together with huge pages (allocation.rs).
//!
//! Both are x86-64 instructions (SSE/SSE2, part of the x86-64 baseline); elsewhere prefetching
//! is skipped and stores are ordinary.

use super::kernel::{self, Tile};

/// Bytes per cache line, the prefetch granularity.
const LINE: usize = 64;

/// The source lines of the tile after the current one, handed out a few at a time: one run of
/// whole lines per column (the rows are source-contiguous, `tile.src_row == 1`).
pub(crate) struct Prefetch {
    src: *const u8,
    /// Bytes between two columns' runs.
    col_stride: usize,
    /// Lines per column's run, and lines in all.
    lines_per_col: usize,
    lines: usize,
    /// Lines to issue before each row of the current tile.
    per_row: usize,
    /// The next line to issue: its column, its line in the column's run, how many came before.
    col: usize,
    line: usize,
    issued: usize,
}

impl Prefetch {
    /// The lines of `next` (a tile of `size`-byte elements at `src`, or nothing), spread over
    /// the `rows` rows of the current tile.
    pub(crate) fn new(size: usize, src: *const u8, next: Option<&Tile>, rows: usize) -> Prefetch {
        let (col_stride, lines_per_col, cols) = next.map_or((0, 0, 0), |t| {
            (t.src_col * size, (t.rows * size).div_ceil(LINE), t.cols)
        });
        let lines = lines_per_col * cols;
        Prefetch {
            src,
            col_stride,
            lines_per_col,
            lines,
            per_row: lines.div_ceil(rows.max(1)),
            col: 0,
            line: 0,
            issued: 0,
        }
    }

    /// Calls `visit` with the byte offsets (from `src`) of the next `count` lines, fewer at
    /// the end.
    #[inline(always)]
    fn advance(&mut self, count: usize, mut visit: impl FnMut(usize)) {
        let until = self.lines.min(self.issued.saturating_add(count));
        while self.issued < until {
            visit(self.col * self.col_stride + self.line * LINE);
            self.issued += 1;
            self.line += 1;
            if self.line == self.lines_per_col {
                self.line = 0;
                self.col += 1;
            }
        }
    }

    /// Prefetches the next `per_row` lines (fewer at the end): before each row of the current
    /// tile.
    #[inline(always)]
    fn row(&mut self) {
        let src = self.src;
        // Prefetches never fault, and the addresses stay inside the source's span because the
        // next tile is inside the array.
        self.advance(self.per_row, |at| prefetch(src.wrapping_add(at)));
    }

    /// Prefetches every line not prefetched yet.
    fn rest(&mut self) {
        let src = self.src;
        self.advance(self.lines, |at| prefetch(src.wrapping_add(at)));
    }
}

/// A prefetch of the line at `at` into the L1 cache.
#[inline(always)]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Whether `copy_tile_streaming` uses non-temporal stores for `size`-byte elements at `dst`
/// (4- and 8-byte elements at addresses aligned to their size, on x86-64).
pub(crate) fn streams(size: usize, dst: *const u8) -> bool {
    cfg!(target_arch = "x86_64") && (size == 4 || size == 8) && dst as usize % size == 0
}

/// `kernel::copy_tile` with non-temporal stores where `streams` says so, fenced at the end so
/// that the stores are ordered before whatever the thread does next (the joins that publish
/// the copy to the caller), and the next tile's prefetches issued along the way (all before
/// the copy where the stores are ordinary).
///
/// # Safety
/// As for `kernel::copy_tile`.
pub(crate) unsafe fn copy_tile_streaming(
    size: usize,
    dst: *mut u8,
    src: *const u8,
    tile: &Tile,
    prefetch: &mut Prefetch,
) {
    #[cfg(target_arch = "x86_64")]
    if streams(size, dst) {
        use std::arch::x86_64::{_mm_sfence, _mm_stream_si32, _mm_stream_si64};
        for row in 0..tile.rows {
            prefetch.row();
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
    prefetch.rest();
    kernel::copy_tile(size, dst, src, tile);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetches_cover_each_line_of_the_next_tile_once_spread_over_the_rows() {
        // Next tile: 5 columns of 13 doubles (104 bytes: 2 lines each), columns 800 bytes
        // apart; the current tile has 7 rows, so 2 lines go before each of the first 5 rows.
        let next = Tile {
            cols: 5,
            rows: 13,
            dst_col: 1,
            dst_row: 5,
            src_col: 100,
            src_row: 1,
        };
        let mut p = Prefetch::new(8, std::ptr::null(), Some(&next), 7);
        let mut seen = Vec::new();
        for _ in 0..7 {
            let before = seen.len();
            p.advance(p.per_row, |at| seen.push(at));
            assert!(seen.len() - before <= 2);
        }
        let expected: Vec<usize> = (0..5).flat_map(|c| [c * 800, c * 800 + 64]).collect();
        assert_eq!(seen, expected);
        p.advance(usize::MAX, |at| seen.push(at));
        assert_eq!(seen.len(), 10, "nothing is left after the last line");
        let mut none = Prefetch::new(8, std::ptr::null(), None, 7);
        none.advance(usize::MAX, |_| panic!("no next tile, no prefetch"));
    }
}
