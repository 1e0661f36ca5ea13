//! Releasing a block (000 §2.5.3 "Deallocation"): constant time, one read-modify-write, and every
//! argument checked first so that a bad call leaves the state as it was.
//!
//! Why the header read may be Relaxed and still give the size the block was claimed with: the
//! caller holds the block, so its claim's c2 (see `claim.rs`) happens-before this call and
//! read-read coherence gives a header value no older than the one the claim kept. A newer value
//! with a different size would need a reassignment whose r2 read this block's bit as zero, i.e.
//! read from this release's `fetch_and` or later; that `fetch_and` is Release and r2 is SeqCst,
//! so this header load would happen-before the reassignment's r3, and cannot read from it.

use super::failure;
use super::header;
use super::state::{HintWords, PoolState, StateWords};
use crate::error::Result;
use crate::sync::atomic::Ordering::{Relaxed, Release};

/// A block being released, located and checked: everything but whether it is claimed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Located {
    superblock: usize,
    word_index: usize,
    bit: u64,
    pub(crate) block_lg2: u32,
}

impl<S: StateWords, H: HintWords> PoolState<S, H> {
    /// Releases the block at `address`, allocated for `size` bytes; returns lg2 of its block size.
    #[inline(always)]
    pub(crate) fn release(&self, address: usize, size: usize) -> Result<u32> {
        let located = self.locate(address, size)?;
        self.release_located(address, located)?;
        Ok(located.block_lg2)
    }

    /// Checks that `address` starts a block of a size that serves `size` bytes, and finds it.
    #[inline(always)]
    pub(crate) fn locate(&self, address: usize, size: usize) -> Result<Located> {
        let layout = &self.layout;
        let offset = address.wrapping_sub(self.base);
        if offset >= self.capacity {
            return Err(failure::outside_span(address, self.base, self.capacity));
        }
        let superblock = offset >> layout.superblock_lg2;
        // Relaxed: see the module comment.
        let Some(block_lg2) = header::block_lg2(self.header(superblock).load(Relaxed)) else {
            return Err(failure::never_assigned(address, superblock));
        };
        // A block can be larger than `size` asks for: it may come from a superblock of larger
        // blocks (000 §2.5.3, last option), so only a block smaller than the size is a mismatch.
        // One comparison rejects 0 and every size above the block, hence above the largest.
        if size.wrapping_sub(1) >= 1 << block_lg2 {
            return Err(failure::size_mismatch(address, size, block_lg2, layout));
        }
        let into_block = offset & ((1 << block_lg2) - 1);
        if into_block != 0 {
            return Err(failure::misaligned(
                address, superblock, block_lg2, into_block,
            ));
        }
        Ok(self.located(offset, superblock, block_lg2))
    }

    /// `locate` and `is_claimed` together, for fast paths: lg2 of the size of the block at
    /// `address` when `locate` accepts it and it is claimed; `None` otherwise. No error, no
    /// panic, and no bounds check: the words read are those of the superblock that `offset`
    /// falls into (below).
    #[inline(always)]
    pub(crate) fn claimed_block_quietly(&self, address: usize, size: usize) -> Option<u32> {
        let offset = address.wrapping_sub(self.base);
        if offset >= self.capacity {
            return None;
        }
        let header_index = self
            .layout
            .header_index(offset >> self.layout.superblock_lg2);
        // SAFETY: `offset` is below the capacity, `superblock_count` superblocks, so the
        // superblock exists and its `superblock_stride` words from its header are in the state.
        // Relaxed: see the module comment.
        let header = unsafe { self.words().get_unchecked(header_index) }.load(Relaxed);
        // The mask changes no header the pool writes; it tells the compiler that the value
        // indexes a table of lg2 sizes without a bounds check (`ThreadCaches::push`).
        let block_lg2 = header::block_lg2(header)? & 63;
        if size.wrapping_sub(1) >= 1 << block_lg2 || offset & ((1 << block_lg2) - 1) != 0 {
            return None;
        }
        let block = (offset & self.superblock_mask) >> block_lg2;
        // SAFETY: a header holds a block size the pool serves, at least the minimum, and a
        // superblock's bitset (after the header, inside its stride) has a bit per minimum block,
        // so `block / 64` is below its length. Relaxed: as in `is_claimed`.
        let word = unsafe { self.words().get_unchecked(header_index + 1 + block / 64) };
        (word.load(Relaxed) & (1 << (block % 64)) != 0).then_some(block_lg2)
    }

    /// The bit of the block at `offset` (checked by the caller) in its superblock's bitset.
    #[inline(always)]
    fn located(&self, offset: usize, superblock: usize, block_lg2: u32) -> Located {
        let block = (offset & (self.layout.superblock_size() - 1)) >> block_lg2;
        Located {
            superblock,
            word_index: block / 64,
            bit: 1u64 << (block % 64),
            block_lg2,
        }
    }

    /// Whether the located block is claimed: allocated, or in a thread cache.
    #[inline(always)]
    pub(crate) fn is_claimed(&self, located: Located) -> bool {
        // Relaxed: the caller holds the block it frees, so its claim happens-before this load
        // and the bit reads set; a clear bit means a pointer not allocated (or a free racing with
        // another free of it, which the caller must not do).
        self.bitset_word(located.superblock, located.word_index)
            .load(Relaxed)
            & located.bit
            != 0
    }

    /// Clears the claim of the located block at `address`.
    #[inline(always)]
    pub(crate) fn release_located(&self, address: usize, located: Located) -> Result<()> {
        let bit = located.bit;
        // Release: the holder's accesses to the block happen-before the next claim of it (whose
        // fetch_or acquires), and before a reassignment that reads this bit cleared.
        let before = self
            .bitset_word(located.superblock, located.word_index)
            .fetch_and(!bit, Release);
        if before & bit == 0 {
            // Clearing a clear bit changed nothing.
            return Err(failure::not_allocated(address, located.block_lg2));
        }
        Ok(())
    }
}
