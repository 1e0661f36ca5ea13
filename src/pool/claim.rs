//! Claiming a block in one superblock, and reassigning an empty superblock to another block size
//! (000 §2.5.2 state changes (1) and (3); release, change (2), is in `release.rs`).
//!
//! Invariant: a block is held by at most one caller, and while it is held its superblock stays
//! assigned to the block size it was claimed with. Equivalently: a superblock's block size only
//! changes while all of its bitset words are zero, and a claim is kept only if, after its bit was
//! set, the header still reads the assignment the claimer used.
//!
//! Why a claim and a reassignment cannot both succeed (a Dekker-style argument over the single
//! total order S of SeqCst operations):
//! - claimer C: (c1) `fetch_or` of its bit, then (c2) load of the header; C keeps the block only if
//!   c2 reads `assigned(N)`, the value C saw before c1.
//! - reassigner R: (r1) compare-exchange of the header from `H` to `H | RECLAIMING`, then (r2) loads
//!   of every bitset word; R changes the block size (r3) only if every r2 reads zero.
//!
//! If c1 precedes r2 in S, r2 reads c1's write or a later one; while C holds the bit those values
//! have it set, so R restores `H` and the block size does not change under C (R sees the bit
//! clear only once C released the block or undid its claim). Otherwise r1 < r2 < c1 < c2 in S,
//! so c2 reads r1's value or a later one: the reclaiming flag or a new assignment, both different
//! from what C saw, and C undoes its bit. The same argument with "C holds the block" in place of
//! c1 covers every held block: a reassignment's r2 reads its bit and gives up.
//!
//! ABA of the header is benign: C may read `assigned(N)`, sleep through reassignments to another
//! size and back to N, then set its bit and read `assigned(N)` again. Let R be the reassignment
//! whose r3 wrote the value c2 read. Had c1 preceded R's r2, R would have seen the bit and
//! restored; so R found the superblock empty before c1, and since then it has held blocks of
//! 2^N only. Any holder of C's bit in that time would have had the bit set when c1 ran, and C's
//! `fetch_or` would have failed. So C holds a block of the size the superblock is assigned to,
//! as if it had claimed after R: a claim is valid whenever the header re-read equals an active
//! assignment of the size the claimer used.
//!
//! Model checking: loom treats SeqCst accesses as AcqRel (loom's README, "unsupported features"),
//! under which c2 could read a header older than r1 although r1 < c2 in S. Under `--cfg loom`
//! only, c2 is a read-modify-write that writes back what it reads (`reload_header`). An RMW
//! reads the latest header in modification order: either it comes after r1 there, and reads the
//! reclaiming flag or a later value, or r1 reads from it, so c2 synchronizes with r1, c1
//! happens-before r2, and r2 reads the bit. The rest of the code is the same in both builds.

use super::header::{self, HEADER_RECLAIMING};
use super::lane::Lane;
use super::state::{BlockGeometry, Claim, HintWords, PoolState, StateWords};
use crate::sync::atomic::AtomicU64;
use crate::sync::atomic::Ordering::{Relaxed, SeqCst};

impl<S: StateWords, H: HintWords> PoolState<S, H> {
    /// The fast path of a claim: one attempt on the lane's first word of `superblock`.
    /// `None` sends the caller to `try_claim` and the search, which cover everything else.
    #[inline(always)]
    pub(crate) fn try_claim_quickly(
        &self,
        superblock: usize,
        block_lg2: u32,
        lane: Lane,
    ) -> Option<Claim> {
        let expected = header::assigned(block_lg2);
        let header = self.header(superblock);
        // Relaxed: only a filter; c2 in `claim_bit` decides whether the claim is kept.
        if header.load(Relaxed) != expected {
            return None;
        }
        let geometry = self.geometry(block_lg2);
        let word_index = lane.index() & geometry.word_index_mask;
        let word = self.bitset_word(superblock, word_index);
        // Relaxed: only picks a candidate bit; the fetch_or in `claim_bit` decides.
        let free = !word.load(Relaxed) & geometry.word_mask;
        if free == 0 {
            return None;
        }
        let bit_index = free.trailing_zeros();
        if !claim_bit(header, expected, word, bit_index) {
            return None;
        }
        // The last free block of a one-word superblock (as the word read before the claim
        // showed) fills it: the lane's hint moves on (`search.rs`).
        if geometry.word_index_mask == 0 && free == 1 << bit_index {
            self.move_hint_on(lane, block_lg2, superblock);
        }
        Some(self.claim_at(superblock, block_lg2, word_index, bit_index))
    }

    /// Claims a free block in `superblock` if it is assigned to blocks of `2^block_lg2` bytes
    /// (000 §2.5.3: "search for an unset bit ... set with an atomic operation").
    pub(crate) fn try_claim(&self, superblock: usize, block_lg2: u32, lane: Lane) -> Option<Claim> {
        // Relaxed: only a filter; c2 in `claim_bit` decides whether the claim is kept.
        if self.header(superblock).load(Relaxed) != header::assigned(block_lg2) {
            return None;
        }
        self.claim_in(superblock, block_lg2, lane)
    }

    /// `try_claim` for a caller that has just read the header as assigned to this size.
    #[inline]
    pub(crate) fn claim_in(&self, superblock: usize, block_lg2: u32, lane: Lane) -> Option<Claim> {
        let expected = header::assigned(block_lg2);
        let header = self.header(superblock);
        let BlockGeometry {
            word_index_mask,
            word_mask,
            ..
        } = self.geometry(block_lg2);
        // Lanes start at different words, so threads sharing a superblock touch different words.
        let first = lane.index() & word_index_mask;
        for step in 0..word_index_mask + 1 {
            let word_index = (first + step) & word_index_mask;
            let word = self.bitset_word(superblock, word_index);
            loop {
                // Relaxed: only picks a candidate bit; the fetch_or in `claim_bit` decides.
                let free = !word.load(Relaxed) & word_mask;
                if free == 0 {
                    break;
                }
                let bit_index = free.trailing_zeros();
                if claim_bit(header, expected, word, bit_index) {
                    return Some(self.claim_at(superblock, block_lg2, word_index, bit_index));
                }
                // Relaxed: only decides whether scanning on is worth it; c2 guards every claim.
                if header.load(Relaxed) != expected {
                    return None;
                }
            }
        }
        None
    }

    #[inline(always)]
    fn claim_at(&self, superblock: usize, block_lg2: u32, word_index: usize, bit: u32) -> Claim {
        let block = word_index * 64 + bit as usize;
        Claim {
            offset: (superblock << self.layout.superblock_lg2) + (block << block_lg2),
            block_lg2,
        }
    }

    /// Reassigns `superblock`, whose header was `observed`, to blocks of `2^block_lg2` bytes if it
    /// is empty (000 §2.5.2: "only an empty superblock may be reassigned"). `false` when another
    /// thread changed the header first or a block is held.
    pub(crate) fn reassign(&self, superblock: usize, observed: u64, block_lg2: u32) -> bool {
        debug_assert!(!header::is_reclaiming(observed));
        let header = self.header(superblock);
        // r1. Relaxed on failure: nothing was written and the value read is not used.
        if header
            .compare_exchange(observed, observed | HEADER_RECLAIMING, SeqCst, Relaxed)
            .is_err()
        {
            return false;
        }
        // r2, over every word: bits of an interrupted claim of any size count as held.
        let empty = self.bitset(superblock).iter().all(|w| w.load(SeqCst) == 0);
        // r3, or the restore. While the reclaiming flag is set no other reassignment writes the
        // header. A swap rather than a store: under loom c2 writes the header too (see "Model
        // checking"), and loom orders writes to one location reliably only when each is an RMW;
        // on x86-64 a SeqCst store is an `xchg` anyway.
        header.swap(
            if empty {
                header::assigned(block_lg2)
            } else {
                observed
            },
            SeqCst,
        );
        empty
    }

    /// Whether `superblock`, whose header was `observed`, looks empty and open to reassignment.
    /// A guess: `reassign` decides.
    pub(crate) fn looks_empty(&self, superblock: usize, observed: u64) -> bool {
        // Relaxed: a candidate filter only; r2 in `reassign` re-reads with SeqCst.
        !header::is_reclaiming(observed)
            && self.bitset(superblock).iter().all(|w| w.load(Relaxed) == 0)
    }

    /// Whether `superblock` looks able to serve blocks of `2^block_lg2` bytes, a size whose
    /// blocks fit one bitset word: assigned to them and not full, or empty. A guess for moving
    /// a hint.
    #[inline]
    pub(crate) fn has_room_one_word(&self, superblock: usize, block_lg2: u32) -> bool {
        debug_assert_eq!(self.geometry(block_lg2).word_index_mask, 0);
        // Relaxed: a guess only.
        let observed = self.header(superblock).load(Relaxed);
        if observed == header::assigned(block_lg2) {
            !self.bitset_word(superblock, 0).load(Relaxed) & self.geometry(block_lg2).word_mask != 0
        } else {
            self.looks_empty(superblock, observed)
        }
    }

    /// Whether `superblock`, assigned to blocks of `2^block_lg2` bytes, looks not full. A guess:
    /// `try_claim` decides.
    pub(crate) fn looks_not_full(&self, superblock: usize, block_lg2: u32) -> bool {
        let mask = self.layout.word_mask(block_lg2);
        let words = &self.bitset(superblock)[..self.layout.words_used(block_lg2)];
        // Relaxed: a candidate filter only; the claim's fetch_or decides.
        words.iter().any(|w| !w.load(Relaxed) & mask != 0)
    }
}

/// Sets bit `bit_index` of `word` (c1) and keeps it if the header still reads `expected` (c2);
/// `false` if another thread had the bit or the superblock changed under the claim.
#[inline(always)]
fn claim_bit(header: &AtomicU64, expected: u64, word: &AtomicU64, bit_index: u32) -> bool {
    let bit = 1u64 << bit_index;
    // c1. SeqCst: orders against r2 of a reassignment (module comment); it also acquires the
    // previous holder's release of this block. Only the tested bit of the result is used, which
    // lets x86-64 use `lock bts`.
    if word.fetch_or(bit, SeqCst) & bit != 0 {
        return false;
    }
    // c2. SeqCst: the other half of the ordering against r1.
    if reload_header(header) != expected {
        // Relaxed: the bit was set by this call and the block never handed out, so no memory
        // accesses hang on it; the RMW keeps the word's release sequence.
        word.fetch_and(!bit, Relaxed);
        return false;
    }
    true
}

/// c2 of a claim; see "Model checking" in the module comment.
#[inline(always)]
fn reload_header(header: &AtomicU64) -> u64 {
    #[cfg(not(loom))]
    let value = header.load(SeqCst);
    #[cfg(loom)]
    let value = header.fetch_add(0, SeqCst);
    value
}
