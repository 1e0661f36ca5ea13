//! How a run executes the plan's schedule: the scheduler's hot loop.
//!
//! 000 §2.4.1 passes items through a shared ready queue Q(N) with atomic begin and end indices,
//! and counts each item's incomplete dependences in W(N), decremented atomically per
//! dependence. Both put an atomic read-modify-write on shared words in the path of every item
//! and every dependence, and the queue hands items out in the order they became ready, which
//! scatters the work function's accesses. Here the graph being static is used further: the
//! plan has already fixed the order (`schedule`), so
//! - one worker simply calls F in that order: a topological order needs no checks at all;
//! - several workers claim consecutive chunks of positions from one shared cursor. A worker
//!   runs the item at position p once every predecessor's completion flag holds the current
//!   run's number, and after F returns stores that number into p's flag. It goes through its
//!   chunk in order, skipping items that are not ready yet and coming back to them, and waits
//!   only when nothing left in its chunk can run. Per item this is one plain store and a load
//!   per dependence (usually of a flag already set, often skipped thanks to the low-water
//!   marks), with one fetch_add per chunk: no read-modify-write per item or per dependence,
//!   and each worker walks positions, flags and (when items are numbered sensibly) the work
//!   function's data in address order.
//!
//! Correctness.
//! - Order: F(q) returns, then the flag of q is stored with Release; the worker of p loads it
//!   with Acquire and sees the run's number only after that store, so F(p) happens after F(q).
//!   Predecessors in the worker's own chunk are tracked in a bit mask and ran earlier on the
//!   same thread. Flags from earlier runs hold older numbers (`plan::begin`), so they never
//!   read as done.
//! - Exactly once: the cursor's fetch_add hands each position to one worker.
//! - Progress (no deadlock): predecessors always have smaller positions. Take the smallest
//!   position m not yet completed: its predecessors (smaller than m) are complete, those in
//!   m's chunk by its worker's own mask, so that worker runs m at its next pass over the
//!   chunk. Hence waits always end, and a worker that claims nothing more is done; the
//!   dispatch returns when all workers are.
//! - Low water (skipping flags): a predecessor far behind the workers is certainly complete,
//!   and its flag, at a random place for a random graph, would cost a cache miss. Each worker
//!   has a mark: 0 when the run starts; before each claim, the cursor value it saw, which is at
//!   most the start of the chunk it then claims and above every position it claimed before
//!   (all complete by then); usize::MAX once it has finished its last chunk. A mark only grows,
//!   and whatever value a mark held bounds from below every position its worker has claimed
//!   and not completed, then and later (those are in its current chunk). Positions not yet
//!   claimed are at or above the cursor, which also only grows. So L = min(cursor, marks), from
//!   any values read, bounds every incomplete position: each q < L is complete. The mark value
//!   above q that the reader saw for q's worker was stored (Release) after F(q) returned, and
//!   the reader loads it with Acquire, so F(q) happens before whatever the reader runs next.
//!   An aborting worker leaves its mark as it is.
//! - A panic in F sets `abort` (while unwinding); waiting workers stop waiting and no worker
//!   claims another chunk, so the run ends and the panic is resumed on the caller.
//!
//! Cost of the static order: a worker waits when nothing in its chunk is ready, even if items
//! later in the order are. With the height order this happens at the front of the schedule's
//! wavefront, for about one item's time per level of the graph, which suits the homogeneous,
//! fine-grained items a work graph is for.

use super::plan::WorkGraph;
use crate::sync::atomic::{AtomicBool, Ordering};

/// Largest chunk of positions a worker claims at once: large enough that claims stay rare with
/// many workers on one shared cursor, and that a worker follows the dependences among nearby
/// positions itself; small enough that a worker holds back few items while it waits. Chunks
/// are otherwise 1/(`CHUNK_DIVISOR` × workers) of the positions left, as in guided scheduling,
/// so they shrink towards the end of the run. (Under loom, chunks are exactly 2: the models'
/// small graphs then have chunks of several items that are not all ready at once.)
const MAX_CHUNK: usize = if cfg!(loom) { 2 } else { 256 };
const MIN_CHUNK: usize = if cfg!(loom) { 2 } else { 1 };
const CHUNK_DIVISOR: usize = 4;
/// A worker reads the others' low-water marks every `workers / LOW_WATER_READERS` chunks, so
/// that the marks' cache lines are read about this many times per chunk time.
const LOW_WATER_READERS: usize = 4;
/// Words of the bit mask that tracks the positions of a chunk not yet run.
const MASK_WORDS: usize = MAX_CHUNK.div_ceil(64);
/// Rounds an idle worker spins before it starts yielding its core.
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 16;

impl WorkGraph {
    /// A run on one worker: the schedule is a topological order, so F runs in it unchecked.
    pub(super) fn run_alone<F: Fn(usize) + ?Sized>(&self, work: &F) {
        for &item in self.schedule.order.iter() {
            work(item as usize);
        }
    }

    /// Runs as worker `rank` of `size` until no position is left to claim.
    pub(super) fn worker<F: Fn(usize) + ?Sized>(&self, rank: usize, size: usize, work: &F) {
        let _abort = AbortOnUnwind(&self.abort);
        let n = self.schedule.order.len();
        // Relaxed: stored by `begin` before the dispatch that started this worker.
        let epoch = self.epoch.load(Ordering::Relaxed);
        // This worker's low-water mark, when every worker of the run has one.
        let low = (size <= self.lows.len()).then(|| &self.lows[rank]);
        let mut low_water = 0;
        let mut chunks_since_refresh = 0;
        loop {
            // Relaxed: only a hint for the chunk size and the mark (module comment).
            let seen = self.cursor.load(Ordering::Relaxed);
            if seen >= n {
                if let Some(low) = low {
                    // Release: everything this worker ran is complete (low-water argument).
                    low.store(usize::MAX, Ordering::Release);
                }
                return;
            }
            // Relaxed: `abort` only asks workers to stop; nothing is read on its account.
            if self.abort.load(Ordering::Relaxed) {
                return;
            }
            if let Some(low) = low {
                // Release: what this worker ran so far is complete (module comment).
                low.store(seen, Ordering::Release);
                if chunks_since_refresh >= size.div_ceil(LOW_WATER_READERS) {
                    low_water = self.low_water(size);
                    chunks_since_refresh = 0;
                }
                chunks_since_refresh += 1;
            }
            let chunk = ((n - seen) / (CHUNK_DIVISOR * size)).clamp(MIN_CHUNK, MAX_CHUNK);
            // Relaxed: the fetch_add alone hands each position to one worker; the data the
            // positions refer to is immutable during the run.
            let start = self.cursor.fetch_add(chunk, Ordering::Relaxed);
            let end = (start + chunk).min(n);
            if start < n && !self.run_chunk(start, end, epoch, low_water, work) {
                return;
            }
        }
    }

    /// A position below which every position has completed: the smallest low-water mark, or
    /// the cursor if smaller (module comment).
    fn low_water(&self, size: usize) -> usize {
        // Relaxed: any value the cursor held bounds the positions not yet claimed.
        let claimed = self.cursor.load(Ordering::Relaxed);
        self.lows[..size]
            .iter()
            // Acquire: pairs with the Release store of the mark, made after the worker's
            // earlier items completed, so skipping their flags still orders F after them.
            .map(|l| l.load(Ordering::Acquire))
            .fold(claimed, usize::min)
    }

    /// Runs positions `start..end`: in order while their predecessors are done, skipping any
    /// that are not yet ready and coming back to them, so that the worker waits only when
    /// nothing left in its chunk can run. False if the run was aborted meanwhile.
    fn run_chunk<F: Fn(usize) + ?Sized>(
        &self,
        start: usize,
        end: usize,
        epoch: u32,
        low_water: usize,
        work: &F,
    ) -> bool {
        let mut pending = Pending::new(start, end);
        let mut rounds = 0u32;
        loop {
            let mut progressed = false;
            for w in 0..MASK_WORDS {
                let mut bits = pending.words[w];
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = start + 64 * w + b;
                    if self.is_ready(p, &pending, epoch, low_water) {
                        work(self.schedule.order[p] as usize);
                        // Release: a worker that sees this number also sees F's writes.
                        self.done[p].store(epoch, Ordering::Release);
                        pending.words[w] &= !(1 << b);
                        progressed = true;
                    }
                }
            }
            if pending.is_empty() {
                return true;
            }
            if progressed {
                rounds = 0;
            } else {
                if self.abort.load(Ordering::Relaxed) {
                    return false;
                }
                pause(&mut rounds);
            }
        }
    }

    /// True when every predecessor of position `p` has completed in run `epoch`: those below
    /// the low-water mark without looking, those in the worker's own chunk by its `pending`
    /// mask, the others by their completion flags.
    #[inline]
    fn is_ready(&self, p: usize, pending: &Pending, epoch: u32, low_water: usize) -> bool {
        self.schedule.predecessors(p).iter().all(|&q| {
            let q = q as usize;
            if q < low_water {
                true
            } else if q >= pending.start {
                !pending.contains(q)
            } else {
                // Acquire: pairs with the Release store after F(q) (module comment).
                self.done[q].load(Ordering::Acquire) == epoch
            }
        })
    }
}

/// The positions of a worker's chunk that have not run yet: bit b of word w stands for
/// position `start + 64 w + b`.
struct Pending {
    start: usize,
    words: [u64; MASK_WORDS],
}

impl Pending {
    /// All of `start..end` (at most `MAX_CHUNK` positions).
    fn new(start: usize, end: usize) -> Pending {
        let len = end - start;
        Pending {
            start,
            words: std::array::from_fn(|w| match len.saturating_sub(64 * w) {
                0 => 0,
                left if left >= 64 => u64::MAX,
                left => (1 << left) - 1,
            }),
        }
    }

    fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// True if position `p` (>= start) is in the chunk and has not run.
    fn contains(&self, p: usize) -> bool {
        let offset = p - self.start;
        offset < MAX_CHUNK && self.words[offset / 64] & (1 << (offset % 64)) != 0
    }
}

/// Waits a little before a worker checks a flag again: spins at first, then yields the core so
/// that a machine with fewer cores than workers lets the awaited worker run.
#[cfg(not(loom))]
fn pause(rounds: &mut u32) {
    if *rounds < SPIN_ROUNDS {
        *rounds += 1;
        for _ in 0..1u32 << (*rounds).min(6) {
            std::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}

/// Under loom, a spinning thread must yield so the model explores the others.
#[cfg(loom)]
fn pause(_rounds: &mut u32) {
    loom::thread::yield_now();
}

/// Tells the other workers to stop when this one unwinds from a panicking F.
struct AbortOnUnwind<'a>(&'a AtomicBool);

impl Drop for AbortOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
