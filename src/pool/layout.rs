//! The computed geometry of a pool (000 §2.5.1, §2.5.4), as plain integers so that host and
//! device code index the same state array the same way.
//!
//! State array: one flat array of `u64` words. Superblock `s` owns the words
//! `[s * superblock_stride, (s + 1) * superblock_stride)`: word 0 is its header (`header.rs`),
//! words `1..=bitset_words` its claim bitset, one bit per block of the smallest size (000 §2.5.2).
//! The stride is a whole number of 64-byte lines, so threads working in different superblocks do
//! not false-share.
//!
//! Hint array: one `u32` superblock index per (lane, size class), at
//! `lane * hint_stride + (block_lg2 - min_block_lg2)`; `hint_stride` is a whole number of lines,
//! so lanes do not false-share their hints.

use crate::error::{Error, Result};

const WORD_BITS_LG2: u32 = 6;
const WORDS_PER_LINE: u32 = 8;
const HINTS_PER_LINE: u32 = 16;
/// Most superblocks a lane scans in its own window before the pool-wide search.
const MAX_LANE_WINDOW: u32 = 8;

/// Superblocks between the starts of neighbouring lanes' windows: a `lanes`-th of the pool.
fn lane_spacing(superblock_count: u32, lanes: u32) -> u32 {
    (superblock_count / lanes).max(1)
}

/// Geometry of a memory pool. `#[repr(C)]` and integers only: shared with device code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct PoolLayout {
    /// lg2 of the smallest block size, `N_min`.
    pub min_block_lg2: u32,
    /// lg2 of the largest block size, `N_max`.
    pub max_block_lg2: u32,
    /// lg2 of the superblock size, `M`.
    pub superblock_lg2: u32,
    /// Number of superblocks in the span.
    pub superblock_count: u32,
    /// Words of claim bitset per superblock: `max(1, 2^(M - N_min) / 64)`.
    pub bitset_words: u32,
    /// Words of state per superblock: header plus bitset, rounded up to whole 64-byte lines.
    pub superblock_stride: u32,
    /// Number of block sizes, `N_max - N_min + 1`.
    pub size_classes: u32,
    /// Number of lanes with their own hints.
    pub lanes: u32,
    /// Hints per lane: `size_classes` rounded up to whole 64-byte lines.
    pub hint_stride: u32,
    /// Superblocks a lane searches first: `max(1, superblock_count / lanes)`.
    pub lane_window: u32,
}

impl PoolLayout {
    /// The geometry for validated power-of-two sizes (`config.rs` checks
    /// `min_block_lg2 <= max_block_lg2 <= superblock_lg2` and a count of at least 1), with
    /// `lanes` sets of hints: `LANES` for host pools; device pools have more, one per few warps.
    pub(crate) fn new(
        min_block_lg2: u32,
        max_block_lg2: u32,
        superblock_lg2: u32,
        superblock_count: u32,
        lanes: u32,
    ) -> Result<PoolLayout> {
        let blocks_lg2 = superblock_lg2 - min_block_lg2;
        // A larger bitset (over 16 GiB of state per superblock) is certainly a configuration
        // mistake, and bounding it keeps every layout field in a u32.
        if blocks_lg2 > 31 + WORD_BITS_LG2 {
            return Err(Error::invalid_argument(format!(
                "memory pool: a superblock of 2^{superblock_lg2} bytes holds 2^{blocks_lg2} blocks of \
                 2^{min_block_lg2} bytes, too many to track; raise min_block_alloc_size or lower \
                 min_superblock_size"
            )));
        }
        let bitset_words = 1u32 << blocks_lg2.saturating_sub(WORD_BITS_LG2);
        let size_classes = max_block_lg2 - min_block_lg2 + 1;
        Ok(PoolLayout {
            min_block_lg2,
            max_block_lg2,
            superblock_lg2,
            superblock_count,
            bitset_words,
            superblock_stride: (1 + bitset_words).next_multiple_of(WORDS_PER_LINE),
            size_classes,
            lanes,
            hint_stride: size_classes.next_multiple_of(HINTS_PER_LINE),
            // Capped: the window is rescanned whenever a lane's hint fails, so a window of
            // hundreds of superblocks (large pools) cost more than the contention it avoids.
            lane_window: lane_spacing(superblock_count, lanes).min(MAX_LANE_WINDOW),
        })
    }

    /// Bytes in the span: `superblock_count * 2^M`.
    #[inline]
    pub fn capacity(&self) -> usize {
        (self.superblock_count as usize) << self.superblock_lg2
    }

    #[inline]
    pub fn superblock_size(&self) -> usize {
        1 << self.superblock_lg2
    }

    #[inline]
    pub fn min_block_size(&self) -> usize {
        1 << self.min_block_lg2
    }

    #[inline]
    pub fn max_block_size(&self) -> usize {
        1 << self.max_block_lg2
    }

    /// Length of the state array in words.
    pub fn state_words(&self) -> usize {
        self.superblock_count as usize * self.superblock_stride as usize
    }

    /// Length of the hint array.
    pub fn hint_count(&self) -> usize {
        self.lanes as usize * self.hint_stride as usize
    }

    /// lg2 of the block that serves `size` bytes: the smallest `N >= N_min` with
    /// `2^(N-1) < size <= 2^N` (000 §2.5.3). The caller checks `0 < size <= max block`.
    #[inline]
    pub fn block_lg2_for(&self, size: usize) -> u32 {
        // For size >= 1, the bit length of size - 1 is ceil(lg2(size)).
        let lg2 = usize::BITS - (size - 1).leading_zeros();
        lg2.max(self.min_block_lg2)
    }

    /// Index of superblock `superblock`'s header word in the state array.
    #[inline]
    pub fn header_index(&self, superblock: usize) -> usize {
        superblock * self.superblock_stride as usize
    }

    /// Blocks in a superblock assigned to blocks of `2^block_lg2` bytes.
    #[inline]
    pub fn blocks_per_superblock(&self, block_lg2: u32) -> u64 {
        1 << (self.superblock_lg2 - block_lg2)
    }

    /// Bitset words that blocks of `2^block_lg2` bytes use (a power of two).
    #[inline]
    pub fn words_used(&self, block_lg2: u32) -> usize {
        1 << (self.superblock_lg2 - block_lg2).saturating_sub(WORD_BITS_LG2)
    }

    /// The bits of each used word that stand for blocks: all of them, unless a superblock holds
    /// fewer than 64 blocks, whose bits beyond the block count are never claimed.
    #[inline]
    pub fn word_mask(&self, block_lg2: u32) -> u64 {
        let blocks_in_word = 1u32 << (self.superblock_lg2 - block_lg2).min(WORD_BITS_LG2);
        u64::MAX >> (64 - blocks_in_word)
    }

    /// Index of the hint of `lane` for blocks of `2^block_lg2` bytes.
    #[inline]
    pub fn hint_index(&self, lane: usize, block_lg2: u32) -> usize {
        lane * self.hint_stride as usize + (block_lg2 - self.min_block_lg2) as usize
    }

    /// Where the search over all superblocks starts for a block size, SBStart(N) of 000 §2.5.3:
    /// size classes start evenly spread over the span, so different sizes begin apart.
    pub fn size_class_start(&self, block_lg2: u32) -> usize {
        let class = u64::from(block_lg2 - self.min_block_lg2);
        (class * u64::from(self.superblock_count) / u64::from(self.size_classes)) as usize
    }

    /// First superblock of the window that `lane` searches first for a block size: lanes' windows
    /// start a 64th of the pool apart, shifted per size class like `size_class_start`.
    pub fn lane_window_start(&self, lane: usize, block_lg2: u32) -> usize {
        (self.lane_offset(lane) + self.size_class_start(block_lg2)) % self.superblock_count as usize
    }

    /// Where `lane`'s windows start relative to the size classes' starts: lanes are spaced a
    /// `lanes`-th of the pool apart, not packed, so a lane that outgrows its window walks on
    /// through its own stretch before it meets the next lane.
    pub fn lane_offset(&self, lane: usize) -> usize {
        let window = lane as u64 * u64::from(lane_spacing(self.superblock_count, self.lanes));
        (window % u64::from(self.superblock_count)) as usize
    }

    /// The superblock after `superblock`, wrapping around.
    #[inline]
    pub fn next_superblock(&self, superblock: usize) -> usize {
        if superblock + 1 < self.superblock_count as usize {
            superblock + 1
        } else {
            0
        }
    }

    /// All superblocks once, starting at `start` and wrapping around.
    pub fn superblocks_from(&self, start: usize) -> impl Iterator<Item = usize> {
        (start..self.superblock_count as usize).chain(0..start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::LANES;

    fn layout(min: u32, max: u32, superblock: u32, count: u32) -> PoolLayout {
        PoolLayout::new(min, max, superblock, count, LANES as u32).unwrap()
    }

    #[test]
    fn default_sizes_give_one_bitset_word_on_one_line() {
        // 64 B blocks in 4 KiB superblocks: 64 blocks, one word; header + word pad to 8 words.
        let l = layout(6, 12, 12, 256);
        assert_eq!(l.bitset_words, 1);
        assert_eq!(l.superblock_stride, 8);
        assert_eq!(l.size_classes, 7);
        assert_eq!(l.hint_stride, 16);
        assert_eq!(l.capacity(), 256 * 4096);
        assert_eq!(l.state_words(), 256 * 8);
        assert_eq!(
            l.lane_window,
            (256 / LANES as u32).clamp(1, MAX_LANE_WINDOW)
        );
    }

    #[test]
    fn stride_is_whole_lines_holding_header_and_bitset() {
        for (min, superblock, words, stride) in [
            (6, 6, 1, 8),   // 1 block
            (6, 12, 1, 8),  // 64 blocks
            (6, 13, 2, 8),  // 128 blocks
            (6, 15, 8, 16), // 512 blocks: 1 + 8 words need two lines
            (6, 20, 256, 264),
            (0, 12, 64, 72), // 1-byte blocks
        ] {
            let l = layout(min, superblock, superblock, 1);
            assert_eq!(l.bitset_words, words, "M={superblock} N={min}");
            assert_eq!(l.superblock_stride, stride, "M={superblock} N={min}");
            assert_eq!(l.superblock_stride % 8, 0);
            assert!(l.superblock_stride > l.bitset_words);
        }
    }

    #[test]
    fn hint_stride_is_whole_lines() {
        assert_eq!(layout(0, 20, 20, 1).hint_stride, 32);
        assert_eq!(layout(6, 6, 6, 1).hint_stride, 16);
    }

    #[test]
    fn words_and_masks_cover_exactly_the_blocks() {
        let l = layout(6, 12, 14, 4);
        for lg2 in 6..=12 {
            let blocks = l.blocks_per_superblock(lg2);
            let bits: u64 = (l.words_used(lg2) as u64) * u64::from(l.word_mask(lg2).count_ones());
            assert_eq!(bits, blocks, "block 2^{lg2}");
            assert!(l.words_used(lg2) <= l.bitset_words as usize);
        }
        assert_eq!(l.word_mask(12), 0b1111);
    }

    #[test]
    fn block_lg2_rounds_up_to_a_power_of_two_at_least_the_minimum() {
        let l = layout(6, 12, 12, 1);
        for (size, lg2) in [
            (1, 6),
            (63, 6),
            (64, 6),
            (65, 7),
            (128, 7),
            (129, 8),
            (4096, 12),
        ] {
            assert_eq!(l.block_lg2_for(size), lg2, "size {size}");
        }
        let tiny = layout(0, 3, 3, 1);
        assert_eq!(tiny.block_lg2_for(1), 0);
        assert_eq!(tiny.block_lg2_for(2), 1);
        assert_eq!(tiny.block_lg2_for(3), 2);
    }

    #[test]
    fn search_starts_spread_over_the_span() {
        let l = layout(6, 12, 12, 700);
        let starts: Vec<_> = (6..=12).map(|lg2| l.size_class_start(lg2)).collect();
        assert_eq!(starts, vec![0, 100, 200, 300, 400, 500, 600]);
        for lane in 0..LANES {
            for lg2 in 6..=12 {
                assert!(l.lane_window_start(lane, lg2) < 700);
            }
        }
        for count in [1, 5, 64, 700] {
            let l = layout(6, 12, 12, count);
            let spacing = (count as usize / LANES).max(1);
            for lane in 0..LANES {
                for lg2 in 6..=12 {
                    assert_eq!(
                        l.lane_window_start(lane, lg2),
                        (lane * spacing + l.size_class_start(lg2)) % count as usize
                    );
                }
            }
        }
        let order: Vec<_> = layout(6, 12, 12, 5).superblocks_from(3).collect();
        assert_eq!(order, vec![3, 4, 0, 1, 2]);
    }

    #[test]
    fn oversized_bitset_is_rejected() {
        let e = PoolLayout::new(0, 0, 40, 1, LANES as u32).unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::InvalidArgument);
        assert!(e.message().contains("too many to track"), "{}", e.message());
    }
}
