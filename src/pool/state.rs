//! The pool's shared state: the layout, the span's base address, the superblock state words and
//! the hints. The algorithms (`claim.rs`, `release.rs`, `search.rs`, `usage.rs`) work on this
//! type only; it is generic over where its arrays live (any `Deref` to slices of atomics, such as
//! `&[AtomicU64]`), so the same code can run over state that another owner, or device memory,
//! provides. `MemoryPool` owns one with host arrays.

use super::header;
use super::lane::{Lane, LANES};
use super::layout::PoolLayout;
use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::ops::Deref;

/// Storage of the superblock state words.
pub(crate) trait StateWords: Deref<Target = [AtomicU64]> {}
impl<T: Deref<Target = [AtomicU64]>> StateWords for T {}

/// Storage of the hints.
pub(crate) trait HintWords: Deref<Target = [AtomicU32]> {}
impl<T: Deref<Target = [AtomicU32]>> HintWords for T {}

pub(crate) struct PoolState<S, H> {
    pub(crate) layout: PoolLayout,
    /// Address of the first byte of the span; blocks are addressed by their offset from it.
    pub(crate) base: usize,
    /// `layout.capacity()`, which a release would otherwise recompute.
    pub(crate) capacity: usize,
    /// `layout.superblock_size() - 1`: an offset's position inside its superblock, for the
    /// release fast path.
    pub(crate) superblock_mask: usize,
    superblocks: S,
    hints: H,
    /// Indexed by lg2 of the block size; derived from `layout` once, because the claim fast path
    /// would otherwise recompute it with a dozen shifts and compares per call.
    geometry: [BlockGeometry; 64],
    /// `(lane * lane spacing) % superblock_count` per lane: with `BlockGeometry::class_start`
    /// it gives `layout.lane_window_start` without a division, on the path that moves a hint.
    lane_offsets: [u32; LANES],
}

/// What a claim needs to know about one block size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BlockGeometry {
    /// `layout.words_used(lg2) - 1`: maps a lane index onto the words this size uses.
    pub(crate) word_index_mask: usize,
    /// `layout.word_mask(lg2)`.
    pub(crate) word_mask: u64,
    /// `layout.size_class_start(lg2)`.
    pub(crate) class_start: u32,
}

/// A claimed block: its offset in the span and lg2 of its size, which is larger than asked when
/// the block came from a superblock of larger blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Claim {
    pub(crate) offset: usize,
    pub(crate) block_lg2: u32,
}

impl<S: StateWords, H: HintWords> PoolState<S, H> {
    pub(crate) fn new(layout: PoolLayout, base: usize, superblocks: S, hints: H) -> Self {
        assert_eq!(superblocks.len(), layout.state_words());
        assert_eq!(hints.len(), layout.hint_count());
        let mut geometry = [BlockGeometry::default(); 64];
        for lg2 in layout.min_block_lg2..=layout.max_block_lg2 {
            geometry[lg2 as usize] = BlockGeometry {
                word_index_mask: layout.words_used(lg2) - 1,
                word_mask: layout.word_mask(lg2),
                class_start: layout.size_class_start(lg2) as u32,
            };
        }
        let lane_offsets = std::array::from_fn(|lane| layout.lane_offset(lane) as u32);
        PoolState {
            layout,
            base,
            capacity: layout.capacity(),
            superblock_mask: layout.superblock_size() - 1,
            superblocks,
            hints,
            geometry,
            lane_offsets,
        }
    }

    /// Claim constants for blocks of `2^block_lg2` bytes.
    #[inline(always)]
    pub(crate) fn geometry(&self, block_lg2: u32) -> BlockGeometry {
        // The mask lets the compiler drop the bounds check; lg2 of a usize is below 64.
        self.geometry[block_lg2 as usize & 63]
    }

    /// `layout.lane_window_start(lane, block_lg2)`: where the lane's window for this size
    /// starts, its "home".
    #[inline]
    pub(crate) fn home(&self, lane: Lane, block_lg2: u32) -> usize {
        // Both terms are below the superblock count, so one subtraction replaces the `%`.
        let home = self.lane_offsets[lane.index() & (LANES - 1)] as usize
            + self.geometry(block_lg2).class_start as usize;
        let count = self.layout.superblock_count as usize;
        if home >= count {
            home - count
        } else {
            home
        }
    }

    #[inline]
    pub(crate) fn header(&self, superblock: usize) -> &AtomicU64 {
        &self.superblocks[self.layout.header_index(superblock)]
    }

    /// Word `index` of a superblock's claim bitset.
    #[inline]
    pub(crate) fn bitset_word(&self, superblock: usize, index: usize) -> &AtomicU64 {
        &self.superblocks[self.layout.header_index(superblock) + 1 + index]
    }

    /// The state words of all superblocks: superblock `s`'s header at `layout.header_index(s)`,
    /// its bitset after it.
    #[inline(always)]
    pub(crate) fn words(&self) -> &[AtomicU64] {
        &self.superblocks
    }

    /// The whole claim bitset of a superblock, as sized for the smallest block.
    #[inline]
    pub(crate) fn bitset(&self, superblock: usize) -> &[AtomicU64] {
        let first = self.layout.header_index(superblock) + 1;
        &self.superblocks[first..first + self.layout.bitset_words as usize]
    }

    #[inline]
    pub(crate) fn hint(&self, lane: Lane, block_lg2: u32) -> &AtomicU32 {
        &self.hints[self.layout.hint_index(lane.index(), block_lg2)]
    }

    /// Block size of the superblock holding `offset`, if it was ever assigned one.
    pub(crate) fn block_lg2_at(&self, offset: usize) -> Option<u32> {
        let superblock = offset >> self.layout.superblock_lg2;
        // Relaxed: a diagnostic read; callers that hold a block in the superblock see a stable
        // size by the argument in `release.rs`.
        header::block_lg2(self.header(superblock).load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(layout: PoolLayout) -> PoolState<Vec<AtomicU64>, Vec<AtomicU32>> {
        let words = (0..layout.state_words()).map(|_| AtomicU64::new(0));
        let hints = (0..layout.hint_count()).map(|_| AtomicU32::new(0));
        PoolState::new(layout, 0, words.collect(), hints.collect())
    }

    #[test]
    fn home_is_the_start_of_the_lane_window_without_a_division() {
        for count in [1, 2, 3, 7, 63, 64, 65, 700, 16384] {
            let layout = PoolLayout::new(6, 12, 12, count, LANES as u32).unwrap();
            let state = state(layout);
            for lane in 0..LANES {
                for lg2 in 6..=12 {
                    assert_eq!(
                        state.home(Lane::explicit(lane, true), lg2),
                        layout.lane_window_start(lane, lg2),
                        "{count} superblocks, lane {lane}, blocks of 2^{lg2}"
                    );
                }
            }
        }
    }
}
