//! Claims on the workers' slices of the wide heights (`worker`), so that a worker that has not
//! come to a height yet does not hold up the others there.
//!
//! Each worker runs its own slice of every wide height first, without a shared write. On a VM
//! whose vCPUs other tenants share, a worker is now and then descheduled for tens of
//! microseconds to milliseconds (a whole fib(25) run on 16 workers takes about 100 us), and
//! every item that needs one of its slices waited for it: in one process of session 21's call
//! 3 the mean run took 2.3 times the median. So a slice is claimed, by its owner when it comes
//! to the height or by a worker that has waited a while for one of its items (a thief), and
//! whoever claims it runs it.
//!
//! One word per worker rank: the height index from which its slices are unclaimed (low 32
//! bits, `next`), and 1 + the height index of its slice that a thief has claimed and not yet
//! finished (high 32 bits, `taken`; 0 when none).
//! - The owner claims its slice of height h, having passed every height before it, by moving
//!   `next` from at most h to h + 1; if `next` is already above h, a thief has the slice.
//! - A thief claims the owner's earliest unclaimed slice (the first wide height at or above
//!   `next`), only while no other thief runs one of the owner's slices, by moving the word from
//!   (`next`, 0) to (that height + 1, that height + 1); when the slice is complete it clears
//!   `taken` with Release.
//! - Every change is a compare-exchange or `fetch_and` of the one word, so each slice is
//!   claimed exactly once, and slices are claimed in height order (`next` only grows, and a
//!   thief takes none beyond the first unclaimed one). A slice that is claimed is run to its
//!   end by its claimer.
//! - The owner still answers for a slice a thief runs, in its low-water mark: it publishes
//!   nothing above the slice's start while `taken` names it (`worker`, `Marks`), and learns that
//!   the slice is complete from an Acquire load that sees `taken` cleared, after which a mark
//!   above it is published (Release) only once the slice's items have completed.

use crate::sync::atomic::{AtomicU64, Ordering};

const NEXT_MASK: u64 = u32::MAX as u64;

fn next(word: u64) -> u32 {
    (word & NEXT_MASK) as u32
}

fn taken(word: u64) -> u32 {
    (word >> 32) as u32
}

fn word(next: u32, taken: u32) -> u64 {
    u64::from(taken) << 32 | u64::from(next)
}

/// The claims on one worker's slices (module comment).
pub(super) struct SliceClaims(AtomicU64);

impl SliceClaims {
    pub(super) fn new() -> SliceClaims {
        SliceClaims(AtomicU64::new(0))
    }

    /// No slice claimed: at the start of a run, before the workers start.
    pub(super) fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// The owner claims its slice of height `height`, having passed all heights before it.
    /// False if a thief has it.
    pub(super) fn claim_own(&self, height: u32) -> bool {
        // Relaxed: the word only hands out slices; the items' data is immutable during a run,
        // and completion is read from `taken_by_thief`.
        let mut seen = self.0.load(Ordering::Relaxed);
        loop {
            if next(seen) > height {
                return false;
            }
            match self.0.compare_exchange_weak(
                seen,
                word(height + 1, taken(seen)),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    /// A thief claims the owner's earliest unclaimed slice if it is at a height at or below
    /// `upto` and no other thief runs one of the owner's slices; `first_wide` gives the first
    /// wide height at or above a height index. Returns the slice's height.
    pub(super) fn steal(&self, upto: u32, first_wide: impl Fn(u32) -> u32) -> Option<u32> {
        // Relaxed: as in `claim_own`.
        let seen = self.0.load(Ordering::Relaxed);
        if taken(seen) != 0 || next(seen) > upto {
            return None;
        }
        let height = first_wide(next(seen));
        if height > upto {
            return None;
        }
        self.0
            .compare_exchange(
                seen,
                word(height + 1, height + 1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .ok()
            .map(|_| height)
    }

    /// The thief has completed the slice it claimed.
    pub(super) fn thief_done(&self) {
        // Release: the owner that sees `taken` cleared (Acquire) sees the slice's items done.
        self.0.fetch_and(NEXT_MASK, Ordering::Release);
    }

    /// The height of the owner's slice that a thief claimed and has not completed, if any.
    pub(super) fn taken_by_thief(&self) -> Option<u32> {
        // Acquire: pairs with `thief_done`.
        let t = taken(self.0.load(Ordering::Acquire));
        (t != 0).then(|| t - 1)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::SliceClaims;

    #[test]
    fn the_owner_and_a_thief_claim_each_slice_once_in_height_order() {
        let claims = SliceClaims::new();
        let first_wide = |h: u32| if h == 1 { 2 } else { h };
        assert!(claims.claim_own(0));
        // Height 1 is narrow: the thief's claim skips it and takes height 2, at most `upto`.
        assert_eq!(claims.steal(1, first_wide), None);
        assert_eq!(claims.steal(3, first_wide), Some(2));
        assert_eq!(claims.taken_by_thief(), Some(2));
        // One stolen slice of an owner at a time.
        assert_eq!(claims.steal(3, first_wide), None);
        assert!(!claims.claim_own(2));
        assert!(claims.claim_own(3));
        claims.thief_done();
        assert_eq!(claims.taken_by_thief(), None);
        assert_eq!(claims.steal(3, first_wide), None);
        assert_eq!(claims.steal(4, first_wide), Some(4));
        claims.reset();
        assert_eq!(claims.taken_by_thief(), None);
        assert!(claims.claim_own(0));
    }
}
