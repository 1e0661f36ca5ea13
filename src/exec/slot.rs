//! Caller-first block dispatch: the persistent job slot of an instance, through which
//! `parallel_for` and `parallel_reduce` hand out blocks that are claimed, not assigned.
//!
//! A dispatch of `size` blocks on an instance: the control thread stores the work pointer, opens
//! blocks 1..size (one claim word per block) and publishes a new generation with ONE swap of the
//! slot's word, which idle members poll. It then runs block 0 itself, claims every block that
//! nobody has claimed yet and runs it, and finally waits until each block claimed by someone else
//! is done. An idle member whose instance rank is `r` tries block `r` only (its own block, so the
//! static split keeps first-touch locality for large ranges), with one compare-exchange. When
//! the body is tiny the control thread has run every block before a member even looks; when it
//! is large the members take their own blocks while the control thread runs block 0. A
//! late-joining dispatch (recruit.rs) publishes only when its control thread asks, opens only
//! the blocks it names, and may end by skipping the blocks nobody has claimed instead of running
//! them (`Latecomers::Skip`).
//!
//! # Correctness
//!
//! Each block has a claim word holding `generation << 3 | state`, where state is OPEN, TAKEN or
//! DONE, plus the PARKED bit. Generations only grow (a `u64` counted by the control thread, which
//! alone dispatches on the slot: `Space` checks the thread and the busy flag), so a given OPEN
//! value is written once, by the dispatch of that generation.
//! - A member claims block b of generation g by a compare-exchange from OPEN(g) to TAKEN(g).
//!   Exactly one claimer (the member or the control thread) succeeds. A skip is the control
//!   thread's compare-exchange from OPEN(g) to DONE(g): when it wins, the member's fails and
//!   the block never runs; when the member's wins, the control thread waits for the block like
//!   any other. A block a generation did not open keeps a word of an older generation, which
//!   no claim of the new one matches and `finish` does not wait for. A member that read an older
//!   generation compares with an OPEN value that can no longer be present, so it never claims a
//!   block of a newer job by mistake; and it dereferences the work pointer only after a
//!   successful claim.
//! - A successful claim of block b in generation g means job g has not finished: the control
//!   thread returns only once every block 1..size is DONE(g), and b is not DONE(g) until its
//!   claimer says so. So the work closure, on the control thread's stack, is alive while the
//!   claimer runs it, and the work pointer in the slot is still the one of job g (it is rewritten
//!   only by the next dispatch, which starts after this one returned).
//! - Ordering: the control thread writes the work pointer, then opens the blocks with Release
//!   stores; a claim is an Acquire compare-exchange that reads the OPEN value, so the claimer sees
//!   the pointer and everything the control thread wrote before the dispatch. The claimer marks
//!   the block DONE with an AcqRel swap after its last access to the job; the control thread
//!   reads DONE with Acquire, so it sees every write of the block before it returns.
//! - The control thread parks while waiting for block b only after setting PARKED in b's claim
//!   word with a compare-exchange from TAKEN(g); the claimer's swap to DONE returns the word it
//!   replaced, so it sees PARKED exactly when the control thread set it first, and then unparks
//!   it. Both are read-modify-writes of one word, so one order holds and no wake-up is lost. The
//!   control thread stores its handle before that compare-exchange; the slot outlives the
//!   dispatch (members hold it through their route), so the late unpark touches no stack data.
//!
//! Sleeping members: a member that found nothing to do for a while announces it sleeps: it sets
//! its mailbox to SLEEPING (mailbox.rs), then sets the SLEEPERS bit of the slot's word with a
//! `fetch_or` that also tells it whether the generation it last saw is still the current one (if
//! not, it stays awake). It then parks while its mailbox says SLEEPING and the generation has not
//! changed. The control thread publishes with a swap; if the word it replaced had SLEEPERS, it
//! wakes every member whose mailbox says SLEEPING. All changes of the word are read-modify-writes,
//! so the swap reads from the release sequence of the member's `fetch_or`: the member's SLEEPING
//! store happens before the control thread reads the mailbox, which therefore sees SLEEPING (and
//! unparks) or a later state written by a member that is awake again and re-reads the word before
//! it parks. A member that announces after the swap sees the new generation in the value its
//! `fetch_or` returns. (The argument uses single-word read-modify-writes and release sequences
//! only, never a store-load ordering between two words, which loom could not check.)

use crate::cache_line::CachePadded;
use crate::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use crate::sync::thread::{self, Thread};
use crate::sync::{Backoff, Mutex};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// The work of one dispatch: called once per block with the block's index.
pub(crate) type BlockFn<'a> = &'a (dyn Fn(usize) + Sync);

/// What becomes of a block that no member has claimed when the control thread has finished its
/// own part of a dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latecomers {
    /// The control thread runs it: every block runs once.
    RunOnCaller,
    /// Nobody runs it: a block runs only on its own member, and only if that member claimed it
    /// in time (the task DAG's wait, whose workers are bound to their threads and need not all
    /// take part).
    Skip,
}

/// Bit 0 of the slot's word: some member announced that it parks.
const SLEEPERS: u64 = 1;

const OPEN: u64 = 0;
const TAKEN: u64 = 1;
const DONE: u64 = 2;
/// The control thread parks until this block is done.
const PARKED: u64 = 4;

fn claim_word(generation: u64, state: u64) -> u64 {
    generation << 3 | state
}

/// How long the control thread polls a block before it parks.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(50);

/// The state members poll, together on one pair of cache lines: the control thread writes the
/// work pointer and the word back to back, and a member reads the pointer right after it polled
/// the word.
struct Header {
    /// `generation << 1 | SLEEPERS`.
    word: AtomicU64,
    /// Points to the dispatch's `BlockFn`, on the control thread's stack; valid only for a
    /// claimer of a block of the current generation.
    work: AtomicPtr<()>,
}

pub(crate) struct Slot {
    header: CachePadded<Header>,
    /// One claim word per block, each alone on its lines, so that members claiming their own
    /// blocks do not contend. Block 0 is always the control thread's and has no claim word use.
    claims: Box<[CachePadded<AtomicU64>]>,
    /// The control thread's handle, stored when it first parks.
    control: Mutex<Option<Thread>>,
    panicked: AtomicBool,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Tests: members see new generations but claim nothing, as if none had started yet. A
    /// `std` atomic under loom too: the models never set it.
    #[cfg(test)]
    hold_members_off: std::sync::atomic::AtomicBool,
}

impl Slot {
    /// A slot for an instance of `members` threads (blocks per dispatch: at most `members`).
    pub(crate) fn new(members: usize) -> Slot {
        Slot {
            header: CachePadded(Header {
                word: AtomicU64::new(0),
                work: AtomicPtr::new(std::ptr::null_mut()),
            }),
            claims: (0..members.max(1))
                .map(|_| CachePadded(AtomicU64::new(claim_word(0, DONE))))
                .collect(),
            control: Mutex::new(None),
            panicked: AtomicBool::new(false),
            panic: Mutex::new(None),
            #[cfg(test)]
            hold_members_off: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Runs `work(b)` once for every block `b` in `0..size` and returns when all have returned:
    /// block 0 on the calling thread, the others on whoever claims them first (module comment).
    /// `wake` is called when members announced they sleep; it must unpark those whose mailbox
    /// says SLEEPING. With `keep_sleepers` (a dispatch to part of the members) the announcement
    /// stays for the next dispatch, since `wake` may not reach every sleeper. Rethrows the first
    /// panic of a block.
    ///
    /// # Safety
    /// No other dispatch on this slot may run at the same time, and `size` must be at most the
    /// slot's member count.
    pub(crate) unsafe fn dispatch(
        &self,
        size: usize,
        keep_sleepers: bool,
        work: BlockFn<'_>,
        wake: impl FnOnce(),
    ) {
        debug_assert!(size >= 1 && size <= self.claims.len());
        let generation = self.publish(size, |_| true, keep_sleepers, &work, wake);
        self.run_block(work, 0);
        if let Some(p) = self.finish(size, generation, Latecomers::RunOnCaller, work) {
            std::panic::resume_unwind(p);
        }
    }

    /// Opens the blocks `b` in `1..size` for which `open(b)` in a new generation and publishes
    /// it (module comment); returns the generation. `keep_sleepers` and `wake` as for
    /// `dispatch`. `work` is read by the members that claim a block, until `finish` returns.
    ///
    /// # Safety
    /// As for `dispatch`; `finish` must be called with the generation before `work` goes.
    pub(crate) unsafe fn publish(
        &self,
        size: usize,
        open: impl Fn(usize) -> bool,
        keep_sleepers: bool,
        work: &BlockFn<'_>,
        wake: impl FnOnce(),
    ) -> u64 {
        let header = &*self.header;
        // Relaxed: only this thread changes the generation; members only add SLEEPERS.
        let generation = (header.word.load(Ordering::Relaxed) >> 1) + 1;
        // Relaxed: published by the Release stores that open the blocks.
        header
            .work
            .store(work as *const BlockFn<'_> as *mut (), Ordering::Relaxed);
        let open_word = claim_word(generation, OPEN);
        for (b, claim) in self.claims[..size].iter().enumerate().skip(1) {
            if open(b) {
                claim.store(open_word, Ordering::Release);
            }
        }
        // AcqRel: Acquire pairs with a sleeper's `fetch_or` (its mailbox's SLEEPING state is
        // then visible to `wake`); Release lets a member that reads the generation see the open
        // blocks.
        let previous = header.word.swap(generation << 1, Ordering::AcqRel);
        if previous & SLEEPERS != 0 {
            wake();
            if keep_sleepers {
                header.word.fetch_or(SLEEPERS, Ordering::Release);
            }
        }
        generation
    }

    /// Ends the dispatch of `generation` over blocks `1..size`: takes every block of it that no
    /// member has claimed, and runs it here or skips it (`latecomers`), then waits until every
    /// block a member claimed is done. Blocks the generation did not open are left alone: their
    /// words hold an older generation, which no member can claim any more. Returns the first
    /// panic of a block.
    pub(crate) fn finish(
        &self,
        size: usize,
        generation: u64,
        latecomers: Latecomers,
        work: BlockFn<'_>,
    ) -> Option<Box<dyn Any + Send>> {
        let open = claim_word(generation, OPEN);
        let done = claim_word(generation, DONE);
        let take = match latecomers {
            Latecomers::RunOnCaller => claim_word(generation, TAKEN),
            Latecomers::Skip => done,
        };
        // Blocks nobody has claimed yet, 64 at a time. First a snapshot with plain loads that do
        // not depend on one another, so the misses on lines members took overlap; then the
        // compare-exchanges, which are full fences: interleaved with the loads, each would wait
        // for the miss before it (on 16 cores an empty dispatch cost about 0.07 µs more per
        // block, a miss latency, when loads and compare-exchanges alternated).
        for first in (1..size).step_by(64) {
            let group = &self.claims[first..size.min(first + 64)];
            let mut open_mask = 0u64;
            for (i, claim) in group.iter().enumerate() {
                open_mask |= u64::from(claim.load(Ordering::Relaxed) == open) << i;
            }
            while open_mask != 0 {
                let i = open_mask.trailing_zeros() as usize;
                open_mask &= open_mask - 1;
                let claim = &group[i];
                if claim
                    .compare_exchange(open, take, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                    && take != done
                {
                    self.run_block(work, first + i);
                    // Relaxed: only this thread waits for it.
                    claim.store(done, Ordering::Relaxed);
                }
            }
        }
        // Acquire: see the blocks' writes (pairs with the claimers' swaps to DONE). The common
        // case, every block done, is one pass of independent loads.
        let of_this_dispatch = |word: u64| word >> 3 == generation;
        let all_done = self.claims[1..size].iter().fold(true, |all, c| {
            let word = c.load(Ordering::Acquire);
            all & (word == done || !of_this_dispatch(word))
        });
        if !all_done {
            for claim in &self.claims[1..size] {
                if of_this_dispatch(claim.load(Ordering::Relaxed)) {
                    self.wait_done(claim, generation);
                }
            }
        }
        // Relaxed: a panicking block set it before its Release swap to DONE, which the waits
        // above acquired.
        if self.panicked.load(Ordering::Relaxed) {
            self.panicked.store(false, Ordering::Relaxed);
            return self.panic.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        None
    }

    fn wait_done(&self, claim: &AtomicU64, generation: u64) {
        let done = claim_word(generation, DONE);
        let mut backoff = Backoff::new(SPIN_BEFORE_PARK);
        loop {
            // Acquire: see the block's writes (pairs with the claimer's swap to DONE).
            let word = claim.load(Ordering::Acquire);
            if word == done {
                return;
            }
            if backoff.keep_polling() {
                continue;
            }
            self.control
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(thread::current);
            // Every block is claimed by now, so the word is TAKEN(g), maybe with PARKED. AcqRel:
            // Release publishes the handle stored above to the claimer.
            if word & PARKED == 0
                && claim
                    .compare_exchange(word, word | PARKED, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                continue; // the block finished meanwhile
            }
            while claim.load(Ordering::Acquire) != done {
                thread::park();
            }
            return;
        }
    }

    /// Runs one block, keeping a panic to rethrow on the control thread.
    fn run_block(&self, work: BlockFn<'_>, block: usize) {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| work(block))) {
            self.panic
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(p);
            // Relaxed: published by the block's swap to DONE.
            self.panicked.store(true, Ordering::Relaxed);
        }
    }

    /// For an idle member of instance rank `rank`: if a generation other than `*seen` is
    /// published, remembers it and tries to claim and run the member's own block of it. Returns
    /// whether there was a new generation.
    pub(crate) fn help(&self, rank: usize, seen: &mut u64) -> bool {
        // Acquire: pairs with the publishing swap (for the pointer and the open blocks).
        let generation = self.header.word.load(Ordering::Acquire) >> 1;
        if generation == *seen {
            return false;
        }
        *seen = generation;
        #[cfg(test)]
        if self
            .hold_members_off
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return true;
        }
        let Some(claim) = self.claims.get(rank).filter(|_| rank > 0) else {
            return true;
        };
        // Acquire: reads the Release store that opened the block, after the pointer was written.
        if claim
            .compare_exchange(
                claim_word(generation, OPEN),
                claim_word(generation, TAKEN),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            // Relaxed: ordered by the claim above.
            let work = self.header.work.load(Ordering::Relaxed) as *const BlockFn<'_>;
            // SAFETY: the claim proves job `generation` has not finished, so the BlockFn its
            // control thread stored the address of is alive (module comment).
            self.run_block(unsafe { *work }, rank);
            // AcqRel: Release hands the block's writes to the control thread; the returned word
            // says whether it parks. The job may be gone after this swap; the slot is not.
            let previous = claim.swap(claim_word(generation, DONE), Ordering::AcqRel);
            if previous & PARKED != 0 {
                let control = self.control.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(t) = control.as_ref() {
                    t.unpark();
                }
            }
        }
        true
    }

    /// True when a generation other than `seen` is published.
    pub(crate) fn has_news(&self, seen: u64) -> bool {
        self.header.word.load(Ordering::Acquire) >> 1 != seen
    }

    /// Tests: while `on`, members claim no block, so the control thread runs every block (or
    /// skips it) as if no member had started.
    #[cfg(test)]
    pub(crate) fn hold_members_off(&self, on: bool) {
        self.hold_members_off
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Announces that a member which last saw generation `seen` is about to park (its mailbox
    /// already says SLEEPING). Returns false when a newer generation is published: the member
    /// must stay awake.
    pub(crate) fn announce_sleeper(&self, seen: u64) -> bool {
        // AcqRel: Release makes the member's SLEEPING state visible to the control thread's swap
        // (module comment); Acquire pairs with that swap when it came first.
        let previous = self.header.word.fetch_or(SLEEPERS, Ordering::AcqRel);
        previous >> 1 == seen
    }
}
