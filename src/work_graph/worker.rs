//! How a run executes the plan's schedule: the scheduler's hot loop.
//!
//! 000 §2.4.1 passes items through a shared ready queue Q(N) with atomic begin and end indices,
//! and counts each item's incomplete dependences in W(N), decremented atomically per
//! dependence. Both put an atomic read-modify-write on shared words in the path of every item
//! and every dependence, and the queue hands items out in the order they became ready, which
//! scatters the work function's accesses. Here the graph being static is used further: the
//! plan has already fixed the order (`schedule`), so
//! - one worker simply calls F in that order: a topological order needs no checks at all;
//! - several workers share the schedule. With one priority level it is the height order, a
//!   sequence of heights whose items never depend on each other: level scheduling, with
//!   point-to-point waits instead of a barrier between heights (`run_heights`). Each worker
//!   first runs its own slice of the height's first `STATIC_SHARE` (worker r of w the r-th of
//!   w equal parts, each at most about 32 us of work, `split`, so that a worker on a slow core
//!   falls at most that far behind per height), then the workers take the rest in pieces
//!   from a shared cursor, guided: a
//!   piece is a 1/(`CLAIM_DIVISOR` x workers) part of what is left, at least the run's
//!   smallest piece (`split`: 256 cheap items, fewer as items cost more). A height whose rest
//!   would not give each worker one smallest piece is all slices (`slice`). Slices and pieces
//!   run in chunks of up to `MAX_CHUNK`.
//!   The slices cost no shared write: when every worker took each height's first piece from
//!   the cursor, the 16 claims at the start of a height passed its cache line from core to
//!   core one after the other (a claim took about 730 cycles on 16 workers); and a worker's
//!   slices are the same positions in every run of the plan. fib(25) on 16 workers took
//!   0.39-0.47 ns per item with slices of 3/4 of each height against 0.47-0.55 with pieces
//!   alone (six processes each, alternating over two calls), fib(30) 0.28-0.32 against
//!   0.29-0.33. (The slices do not follow the tree: a breadth-first numbered Fibonacci tree is
//!   wider on the left in its deep rows, so the children of a worker's slice mostly lie in
//!   other workers' slices of the height before. Slices by subtree, which keep them on one
//!   worker, were slower: docs/PERFORMANCE.md, session 20.)
//!   A worker claims its slice when it comes to the height (one read-modify-write of a word of
//!   its own, `claims`); one that has waited a while for an item of a slice that its owner
//!   has not claimed yet (the owner's core taken away by the system) claims and runs that
//!   owner's earliest unclaimed slice itself (`steal_slice`), so that the others do not wait
//!   for the owner to come back.
//!   The pieces let a worker on a faster core take more of the height, which matters where
//!   cores run at different speeds (a VM whose vCPUs share cores with other tenants: on the
//!   16-core benchmark machine 3 to 6 of them run at half speed at any time). Slices of the
//!   whole height, which touched no shared counter at all, made every height wait for the
//!   slowest core: fib(30) on 16 workers took 0.27-0.29 ns per item with them against
//!   0.26-0.27 with pieces alone, on 8 workers 0.50-0.56 against 0.41-0.49, and the wide
//!   random graph on 16 workers 4.4-4.5 against 3.1-4.0; slices of 15/16 were 7% slower than
//!   of 3/4 on the wide random graph. A
//!   height too narrow to give each worker 32 items runs on worker 0 alone, unless its items
//!   cost so much that it would take worker 0 several microseconds (`split`): a graph
//!   with little parallelism (a long random chain of heights a few items wide) then runs on
//!   one core instead of passing every item's inputs between cores (on 16 workers the deep
//!   random DAG of the benchmark went from 143 to 60 ns per item, against 57 on one), and the
//!   other workers wait without writing anything the running one reads. Consecutive narrow
//!   heights are one piece, which worker 0 runs in order like a slice: it then publishes its
//!   mark and reads the others' once per `MARK_STRIDE` positions instead of once per height,
//!   where a height of the deep random DAG is about ten items and the waiting workers read
//!   the marks (on 4 workers it went from 47.9 to 35.6 ns per item, against 34.4 on one:
//!   docs/PERFORMANCE.md, session 22). With several priority
//!   levels the schedule has no heights, and workers claim consecutive chunks of the whole
//!   schedule from the cursor instead.
//!   Either way, a worker runs the item at position p once every predecessor's completion flag
//!   holds the current run's number, and after F returns stores that number into p's flag. It
//!   goes through a chunk in order, skipping items that are not ready yet and coming back to
//!   them, and waits only when nothing left in the chunk can run. Per item this is one plain
//!   store, and a load per dependence only while the worker cannot tell otherwise that the
//!   predecessor is complete: with heights, once the low-water marks (below) show every worker
//!   past the heights before the chunk's, the chunk runs without looking at any flag. No
//!   read-modify-write per item or per dependence (one per piece or chunk claimed), and each
//!   worker walks positions, flags and (when items are numbered sensibly) the work function's
//!   data in address order.
//!
//! Correctness.
//! - Order: F(q) returns, then the flag of q is stored with Release; the worker of p loads it
//!   with Acquire and sees the run's number only after that store, so F(p) happens after F(q).
//!   Predecessors in the worker's own chunk are tracked in a bit mask and ran earlier on the
//!   same thread. Flags from earlier runs hold older numbers (`plan::begin`), so they never
//!   read as done.
//! - Exactly once: each position is in the piece or chunk that one successful update of the
//!   cursor handed to one worker, in a slice (slices are disjoint and fixed by the rank, which
//!   every worker of a run has a different one of, and the run's size; each is claimed once,
//!   by its owner or a thief, and run by its claimer, `claims`), or in a narrow height, which
//!   only worker 0 runs. With heights, a piece never crosses its height's
//!   end and a worker leaves a wide height only once the cursor is at or past its end or the
//!   height has no pieces (all slices, `slice`), so the cursor moves through the pieces of the
//!   wide heights in order: when a worker finds it below the end of a height's slices, the
//!   positions in between are slices or narrow heights', and it starts the piece at the end
//!   of the slices.
//! - Progress (no deadlock): predecessors always have smaller positions, and a worker takes
//!   its chunks in increasing order of position (a worker's slice of a height lies below the
//!   height's pieces, and both below the next height's). Take the smallest position m not
//!   yet completed. If nobody has it yet, every position handed out is below m (the cursor
//!   only grows), so complete: no worker is inside a chunk, and one that looks for work takes
//!   m's piece or chunk; or m is in a narrow height or an unclaimed slice, whose worker has
//!   nothing before it left to wait for (every position below m is complete, so the cursor
//!   is past the pieces of the heights before, and its earlier slices are complete) and
//!   reaches it. Otherwise its worker is at m's chunk: it has completed its chunks below m's,
//!   and a worker that runs a stolen slice inside its own chunk (the slice lies in an earlier
//!   height, so below the chunk) runs the slice to its end before it looks at the chunk
//!   again, so its lowest open chunk is the one it works on, and m, the smallest incomplete
//!   position, is in it. A thief claims a slice only inside a chunk of its own, never inside a
//!   stolen one, so it has at most two open chunks. m's
//!   predecessors (smaller than m) are complete, those in the chunk by the worker's own mask.
//!   If the worker is in its first pass over the chunk it reaches m and runs it; otherwise m
//!   was left over and is its first position left, which the worker finds ready at its next
//!   look, so the next pass runs m. So the smallest incomplete position always completes,
//!   hence every wait ends, and a worker that has nothing more to run is done; the dispatch
//!   returns when all workers are. Every rank starts: on its own thread, which takes it when
//!   it sees the run, or on the calling thread once rank 0's share is done (`plan`,
//!   `run_pinned`); a rank that starts late is a worker that is slow to come, as above.
//! - Low water (skipping flags): a predecessor far behind the workers is certainly complete,
//!   and its flag, at a random place for a random graph, would cost a cache miss. Each worker
//!   has a mark: 0 when the run starts; before a chunk, the chunk's start (all positions of its
//!   earlier chunks are below it and complete by then) when the chunk starts at least
//!   `MARK_STRIDE` positions above the mark or, with heights, is the worker's first chunk of a
//!   height; with heights also the end of a wide height that the others claimed entirely
//!   before this worker took any of it (its later pieces lie above the cursor, which is past
//!   that end, or in later heights when the height has no pieces); usize::MAX once it has
//!   completed all its positions. Publishing only then keeps the mark's cache line from moving
//!   between its writer and its readers once per chunk (a
//!   cache miss per mark and chunk for every reader, a sizeable part of an item's few
//!   nanoseconds on many workers): with heights, a reader misses about once per other worker
//!   and height. A mark only grows, and whatever value a mark held bounds
//!   from below every position its worker has not completed, then and later (its current and
//!   later chunks, which it takes above the cursor as it is then, so above its current chunk).
//!   Positions no worker has yet lie at or above the cursor, which also only grows. So
//!   L = min(marks, cursor), from any values read, bounds every incomplete position: each
//!   q < L is complete. With heights the cursor term is left out: the reader's own term (its
//!   current chunk's start, below) is below the cursor, hence below every piece nobody has
//!   yet; and the positions of a narrow height that worker 0 has not finished, or of a slice
//!   that its worker has not, are above that worker's mark. The mark value above q that the
//!   reader saw for q's worker was stored (Release) after F(q) returned, and the reader loads
//!   it with Acquire, so F(q) happens before whatever the reader runs next. A worker's own
//!   term is not its published mark but its current chunk's start, which it knows exactly:
//!   its incomplete positions lie in that chunk and later ones, and those below it ran on its
//!   own thread. An aborting worker leaves its mark as it is.
//!   A slice that a thief runs stays its owner's to answer for: the owner's mark was below it
//!   when it was stolen (the owner had not come to its height), and the owner publishes
//!   nothing above its start, and takes nothing above it as its own term, until it has seen
//!   (Acquire) the thief's Release that the slice is complete (`claims`); it waits for that
//!   before it publishes usize::MAX. The thief's own term, while it runs the slice, is the
//!   slice's current chunk.
//! - Whole chunks (heights): the predecessors of an item are taller, so in the height order
//!   they all lie below the start of its height. A worker whose L is at least that start
//!   therefore knows every predecessor of the height complete, and ordered before its next
//!   item by the Acquire above: it runs its chunk with no flag loads and no waits (but stores
//!   the flags, which workers further on may read). In a piece of consecutive narrow heights
//!   the "height" is the piece: an item's predecessors lie below the piece's start, or in the
//!   piece before it, where worker 0 ran them earlier, in order, on its own thread. A worker
//!   publishes its mark when it starts its first chunk of a height (above), so L reaches a
//!   height's start as soon as every other worker has started a chunk at or after it, or
//!   finished; until then the worker reads the marks again before each of its chunks of the
//!   height.
//! - A panic in F sets `abort` (while unwinding); waiting workers stop waiting and no worker
//!   claims another chunk, so the run ends and the panic is resumed on the caller.
//!
//! Cost of a static schedule: a worker waits when nothing in its chunk is ready, even if items
//! elsewhere are, and a worker slowed down in the middle of a chunk (by a costlier item, or by
//! losing its core) holds back the others that need its items. This suits the homogeneous,
//! fine-grained items a work graph is for.

use super::plan::{RankWords, WorkGraph};
use super::split::{Split, WorkerClock};
use crate::sync::atomic::{AtomicBool, Ordering};
use std::ops::Range;

/// Largest chunk of positions a worker runs (or claims) at once: large enough that claims stay
/// rare with many workers on one shared cursor, and that a worker follows the dependences
/// among nearby positions itself; small enough that a worker holds back few items while it
/// waits. Claimed chunks are otherwise 1/(`CHUNK_DIVISOR` × workers) of the positions left, as
/// in guided scheduling, so they shrink towards the end of the run. (Under loom, chunks are exactly 2: the models'
/// small graphs then have chunks of several items that are not all ready at once.)
const MAX_CHUNK: usize = if cfg!(loom) { 2 } else { 256 };
const MIN_CHUNK: usize = if cfg!(loom) { 2 } else { 1 };
const CHUNK_DIVISOR: usize = 4;
/// With heights, a piece is 1/(`CLAIM_DIVISOR` x workers) of what is left of the height: the
/// first pieces are large, so that claims stay rare (fib(30) on 16 workers claims about 2500
/// times in 0.7 ms; chunks of 256 claimed one at a time from the cursor took twice as long,
/// its cache line passing from core to core), and the last ones small, so that the workers end
/// a height together.
const CLAIM_DIVISOR: usize = 2;
/// The part of a wide height that the workers share in equal slices before claiming pieces of
/// the rest, as (numerator, denominator): 3/4 (module comment). Under loom too, so that the
/// models' heights of two items have one slice and one piece.
const STATIC_SHARE: (usize, usize) = (3, 4);
/// A worker publishes its low-water mark when it has moved at least this many positions since
/// it last did (module comment), and with heights also on entering a height: every 16 full
/// chunks, so that a worker that reads the others' marks every few chunks finds most of their
/// lines unchanged in its cache, while the marks still trail the workers by a small part of a
/// height of a large graph. (Under loom, 1: every chunk.)
const MARK_STRIDE: usize = if cfg!(loom) { 1 } else { 16 * MAX_CHUNK };
/// With claims from the cursor, a worker reads the others' low-water marks every
/// `workers / LOW_WATER_READERS` chunks, so that the marks' cache lines are read about this
/// many times per chunk time.
const LOW_WATER_READERS: usize = 4;
/// Words of the bit mask that tracks the positions of a chunk not yet run.
const MASK_WORDS: usize = MAX_CHUNK.div_ceil(64);
/// A waiting worker goes over its whole chunk at least every this many looks (`run_chunk`).
const PASS_EVERY: u32 = 16;
/// A waiting worker looks at a flag again after at most 2^`SPIN_SHIFT` pauses. Waits in a run
/// are mostly short (a neighbour finishing the items of the height before), so they should end
/// within a few hundred cycles of the awaited store: a pause takes up to about 140 cycles on
/// recent Xeons, so the former 64 pauses between looks could hold a worker back by several
/// microseconds, more than a height's time for fib(20) on 16 workers (1.5 us). Measured on the
/// 16-core machine (fib(20), fib(25), fib(30), random wide; 8 and 16 workers) against 64 and
/// against 1 pause: 4 was the fastest or within 5% of it in 5 of the 8 cases, fib(30) among
/// them, and 33% slower than 1 for fib(20) on 8; the same code varied up to 3x from one
/// process to the next there, so this rests on the argument more than on the figures.
#[cfg(not(loom))]
const SPIN_SHIFT: u32 = 2;
/// A waiting worker looks for an unclaimed slice that holds it up (`steal_slice`) every this
/// many looks, about when it starts yielding its core (`SPIN_ROUNDS`): waits between heights
/// take a few microseconds, while a descheduled worker is away for tens of microseconds to
/// milliseconds (`claims`). (Under loom, every look.)
const STEAL_EVERY: u32 = if cfg!(loom) { 1 } else { 256 };
/// Looks an idle worker spins before it starts yielding its core: about a thousand pauses (the
/// former 16 looks after up to 64 pauses made about 770).
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 256;

impl WorkGraph {
    /// A run on one worker: the schedule is a topological order, so F runs in it unchecked.
    pub(super) fn run_alone<F: Fn(usize) + ?Sized>(&self, work: &F) {
        for &item in self.schedule.order.iter() {
            work(item as usize);
        }
    }

    /// `run_alone` on a space of several workers (`WorkGraph::runs_alone`), timed, so that the
    /// plan's next runs know what its items cost now.
    pub(super) fn run_alone_timed<F: Fn(usize) + ?Sized>(&self, work: &F) {
        let start = std::time::Instant::now();
        self.run_alone(work);
        let ns = start.elapsed().as_nanos().try_into().unwrap_or(u64::MAX);
        self.item_cost.record_alone(ns, self.num_items());
    }

    /// Runs as worker `rank` of `size` until its share of the schedule is complete.
    pub(super) fn worker<F: Fn(usize) + ?Sized>(&self, rank: usize, size: usize, work: &F) {
        let _abort = AbortOnUnwind(&self.abort);
        let levels = !self.schedule.level_starts.is_empty();
        let split = self.item_cost.split();
        let mut marks = Marks {
            plan: self,
            // Low-water marks and slice claims need one per worker of the run.
            own: (size <= self.ranks.len()).then(|| &*self.ranks[rank]),
            split,
            taken: None,
            size,
            claims_pending: !levels,
            rank,
            low_water: 0,
            others_low: 0,
            position: 0,
            published: 0,
            chunks_since_refresh: 0,
        };
        // Relaxed: stored by `begin` before the dispatch that started this worker.
        let epoch = self.epoch.load(Ordering::Relaxed);
        let mut clock = WorkerClock::new(rank);
        let finished = if levels {
            self.run_heights(split, epoch, &mut marks, &mut clock, work)
        } else {
            self.claim_chunks(size, epoch, &mut marks, work)
        };
        if finished {
            marks.finish();
            clock.finish(&self.item_cost);
        }
    }

    /// One priority level: takes pieces of each wide height from the cursor until none is
    /// left, and runs the narrow heights if it is worker 0 (module comment). False if the run
    /// was aborted.
    fn run_heights<F: Fn(usize) + ?Sized>(
        &self,
        split: Split,
        epoch: u8,
        marks: &mut Marks<'_>,
        clock: &mut WorkerClock,
        work: &F,
    ) -> bool {
        let (rank, size) = (marks.rank, marks.size);
        let heights = self.schedule.level_starts.len() - 1;
        let mut index = 0;
        while index < heights {
            let Range { start, end } = self.schedule.height(index);
            let mut height = Height {
                start,
                first: true,
                sorted: true,
            };
            if split.narrow(end - start, size) {
                // Consecutive narrow heights are one piece of worker 0's (module comment).
                let after = self.narrow_run_end(index, split, size);
                height.sorted = after == index + 1;
                index = after;
                let end = self.schedule.level_starts[after] as usize;
                if rank == 0 && !self.run_piece(start..end, &mut height, epoch, marks, clock, work)
                {
                    return false;
                }
                continue;
            }
            let own = slice(start..end, rank, size, split);
            // A worker that was held up may find its slice claimed by another (`claims`). An
            // empty slice (a height of a few costly items) is claimed too, so that no thief
            // takes a slice of a height its owner has passed.
            if marks.claim_own(index)
                && !own.is_empty()
                && !self.run_piece(own, &mut height, epoch, marks, clock, work)
            {
                return false;
            }
            let shared = slice(start..end, size, size, split).start;
            // Relaxed: the compare-exchange alone hands each position to one worker; the data
            // the positions refer to is immutable during the run.
            let mut seen = self.cursor.load(Ordering::Relaxed);
            loop {
                let base = seen.max(shared);
                if base >= end {
                    break;
                }
                let piece = ((end - base) / (CLAIM_DIVISOR * size))
                    .max(split.min_piece)
                    .min(end - base);
                match self.cursor.compare_exchange_weak(
                    seen,
                    base + piece,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let range = base..base + piece;
                        if !self.run_piece(range, &mut height, epoch, marks, clock, work) {
                            return false;
                        }
                        seen = self.cursor.load(Ordering::Relaxed);
                    }
                    Err(now) => seen = now,
                }
            }
            if height.first {
                marks.passed_height(end);
            }
            index += 1;
        }
        true
    }

    /// The index of the first wide height after the narrow height `index` (or the number of
    /// heights): every worker of the run finds the same, as they agree on which are narrow.
    fn narrow_run_end(&self, index: usize, split: Split, size: usize) -> usize {
        let heights = self.schedule.level_starts.len() - 1;
        (index + 1..heights)
            .find(|&h| !split.narrow(self.schedule.height(h).len(), size))
            .unwrap_or(heights)
    }

    /// Runs the positions of `range`, in `height`, in chunks. False if the run was aborted.
    fn run_piece<F: Fn(usize) + ?Sized>(
        &self,
        range: Range<usize>,
        height: &mut Height,
        epoch: u8,
        marks: &mut Marks<'_>,
        clock: &mut WorkerClock,
        work: &F,
    ) -> bool {
        let mut chunk = range.start;
        while chunk < range.end {
            // Relaxed: `abort` only asks workers to stop; nothing is read on its account.
            if self.abort.load(Ordering::Relaxed) {
                return false;
            }
            let chunk_end = (chunk + MAX_CHUNK).min(range.end);
            marks.before_height_chunk(chunk, height.start, height.first);
            height.first = false;
            if marks.low_water >= height.start {
                // Every predecessor of the height lies below its start, so below the low
                // water: complete, and no flag needs a look (module comment). Such chunks run
                // items and nothing else: worker 0 times some (`split`).
                clock.time(chunk_end - chunk, || {
                    self.run_ready(chunk, chunk_end, height.sorted, epoch, work)
                });
            } else if !self.run_chunk(chunk, chunk_end, epoch, marks, work, true) {
                return false;
            }
            chunk = chunk_end;
        }
        true
    }

    /// Several priority levels: claims chunks of the schedule from the shared cursor until
    /// none is left. False if the run was aborted.
    fn claim_chunks<F: Fn(usize) + ?Sized>(
        &self,
        size: usize,
        epoch: u8,
        marks: &mut Marks<'_>,
        work: &F,
    ) -> bool {
        let n = self.schedule.order.len();
        loop {
            // Relaxed: only a hint for the chunk size and the mark (module comment).
            let seen = self.cursor.load(Ordering::Relaxed);
            if seen >= n {
                return true;
            }
            // Relaxed: as in `run_piece`.
            if self.abort.load(Ordering::Relaxed) {
                return false;
            }
            marks.before_chunk(seen);
            let chunk = ((n - seen) / (CHUNK_DIVISOR * size)).clamp(MIN_CHUNK, MAX_CHUNK);
            // Relaxed: the fetch_add alone hands each position to one worker; the data the
            // positions refer to is immutable during the run.
            let start = self.cursor.fetch_add(chunk, Ordering::Relaxed);
            let end = (start + chunk).min(n);
            if start < n && !self.run_chunk(start, end, epoch, marks, work, false) {
                return false;
            }
        }
    }

    /// Runs positions `start..end`: in order while their predecessors are done, skipping any
    /// that are not yet ready and coming back to them, so that the worker waits only when
    /// nothing left in its chunk can run; with `steal`, a worker that has waited a while runs
    /// the slice that holds it up if its owner has not claimed it (`steal_slice`). False if
    /// the run was aborted meanwhile.
    fn run_chunk<F: Fn(usize) + ?Sized>(
        &self,
        start: usize,
        end: usize,
        epoch: u8,
        marks: &mut Marks<'_>,
        work: &F,
        steal: bool,
    ) -> bool {
        // The first pass: usually every item is ready and this is all there is. The arrays
        // are held here so the calls to F do not make them be reloaded for every item.
        let mut pending = Pending::none(start);
        let latest_pred = &self.schedule.latest_pred[start..end];
        let order = &self.schedule.order[start..end];
        let done = &self.done[start..end];
        let low_water = marks.low_water;
        for (k, ((&latest, &item), flag)) in latest_pred.iter().zip(order).zip(done).enumerate() {
            // The latest predecessor below the low water: so are the others, all complete.
            if latest as usize <= low_water || self.is_ready(start + k, &pending, epoch, low_water)
            {
                work(item as usize);
                // Release: a worker that sees this number also sees F's writes.
                flag.store(epoch, Ordering::Release);
            } else {
                pending.insert(start + k);
            }
        }
        let mut spin = Spin::default();
        while let Some(first) = pending.first() {
            // A pass goes through the chunk in order, so whatever is left waits, directly or
            // through an earlier item of the chunk, for another worker: pause before looking
            // again (`Spin`). Between passes the worker watches only the
            // first item left, which waits for other workers alone (its predecessors in the
            // chunk are earlier, so done): it goes over the chunk again when that item is
            // ready, or after `PASS_EVERY` looks, since later items may be ready first. So an
            // idle worker mostly reads a few lines, each written once by another worker,
            // rather than every flag its chunk waits for.
            // Relaxed: as in `run_piece`.
            if self.abort.load(Ordering::Relaxed) {
                return false;
            }
            if steal && spin.steal_due() {
                match self.steal_slice(&pending, epoch, marks, work) {
                    Some(false) => return false,
                    Some(true) => spin.ran(),
                    None => {}
                }
            }
            spin.pause();
            if !spin.pass_due() && !self.is_ready(first, &pending, epoch, marks.low_water) {
                continue;
            }
            spin.passed();
            // The others have moved on meanwhile: predecessors they completed need no look.
            marks.refresh();
            for w in 0..MASK_WORDS {
                let mut bits = pending.words[w];
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = start + 64 * w + b;
                    if self.schedule.latest_pred[p] as usize <= marks.low_water
                        || self.is_ready(p, &pending, epoch, marks.low_water)
                    {
                        self.run_item(p, epoch, work);
                        pending.words[w] &= !(1 << b);
                        spin.ran();
                    }
                }
            }
        }
        true
    }

    /// Calls F on the item at position `p` and marks it complete.
    #[inline]
    fn run_item<F: Fn(usize) + ?Sized>(&self, p: usize, epoch: u8, work: &F) {
        work(self.schedule.order[p] as usize);
        // Release: a worker that sees this number also sees F's writes.
        self.done[p].store(epoch, Ordering::Release);
    }

    /// Runs positions `start..end` (not empty), all of whose predecessors are known to be
    /// complete or to come earlier in the range.
    ///
    /// The items of a height are in increasing index order (`schedule`), so with `sorted` (the
    /// positions lie in one height) those of the chunk are consecutive exactly when its last is
    /// `end - start - 1` above its first; across heights the first and last can be that far
    /// apart with other items between. Consecutive items run without reading the order: on
    /// many workers a run streams the order, the flags and the work function's data through
    /// every core at once, and a graph numbered level by level (fib numbered breadth-first, as
    /// in 000 Fig. 3.6: each height is a range of items) saves 4 of the 5 bytes per item that
    /// the plan adds to that stream.
    fn run_ready<F: Fn(usize) + ?Sized>(
        &self,
        start: usize,
        end: usize,
        sorted: bool,
        epoch: u8,
        work: &F,
    ) {
        let order = &self.schedule.order[start..end];
        let done = &self.done[start..end];
        let first = order[0] as usize;
        if sorted && order[order.len() - 1] as usize - first == order.len() - 1 {
            for (item, flag) in (first..).zip(done) {
                work(item);
                // Release: a worker that sees this number also sees F's writes.
                flag.store(epoch, Ordering::Release);
            }
        } else {
            for (&item, flag) in order.iter().zip(done) {
                work(item as usize);
                // Release: as above.
                flag.store(epoch, Ordering::Release);
            }
        }
    }

    /// True when every predecessor of position `p` has completed in run `epoch`: those below
    /// the low-water mark without looking, those in the worker's own chunk by its `pending`
    /// mask, the others by their completion flags.
    #[inline(never)]
    fn is_ready(&self, p: usize, pending: &Pending, epoch: u8, low_water: usize) -> bool {
        for &q in self.schedule.predecessors(p) {
            let q = q as usize;
            if q < low_water {
                // Predecessors come latest first: the rest are below the mark too.
                return true;
            }
            let done = if q >= pending.start {
                !pending.contains(q)
            } else {
                // Acquire: pairs with the Release store after F(q) (module comment).
                self.done[q].load(Ordering::Acquire) == epoch
            };
            if !done {
                return false;
            }
        }
        true
    }
}

impl WorkGraph {
    /// Runs, as a thief (`claims`), a slice that a position of the chunk `pending` waits for
    /// (through one of its predecessors), if the slice's owner has not claimed it: the
    /// owner's earliest unclaimed slice. None if there is no such slice, else whether the run
    /// went on (false: it was aborted). The slice lies below the chunk's height, so running it
    /// to its end waits only for positions below it (module comment, "Progress").
    fn steal_slice<F: Fn(usize) + ?Sized>(
        &self,
        pending: &Pending,
        epoch: u8,
        marks: &mut Marks<'_>,
        work: &F,
    ) -> Option<bool> {
        marks.own?;
        let (owner, stolen) = pending
            .positions()
            .filter_map(|p| self.blocker(p, pending, epoch, marks.low_water))
            .find_map(|q| self.claim_for(q, marks))?;
        let range = slice(self.schedule.height(stolen), owner, marks.size, marks.split);
        let resume = marks.position;
        let mut went_on = true;
        for chunk in range.clone().step_by(MAX_CHUNK) {
            marks.run_taken_from(chunk);
            let end = (chunk + MAX_CHUNK).min(range.end);
            if !self.run_chunk(chunk, end, epoch, marks, work, false) {
                went_on = false;
                break;
            }
        }
        self.ranks[owner].claims.thief_done();
        marks.run_taken_from(resume);
        Some(went_on)
    }

    /// Claims, as a thief, the earliest unclaimed slice of the worker whose slice holds
    /// position `q`, if `q`'s slice is not claimed yet: its owner and height.
    fn claim_for(&self, q: usize, marks: &Marks<'_>) -> Option<(usize, usize)> {
        let (size, split) = (marks.size, marks.split);
        let starts = &self.schedule.level_starts;
        let height_of = |q: usize| starts.partition_point(|&s| s as usize <= q) - 1;
        let wide = |h: usize| !split.narrow(self.schedule.height(h).len(), size);
        let at = height_of(q);
        if !wide(at) {
            return None;
        }
        let owner = slice_owner(self.schedule.height(at), q, size, split)?;
        if owner == marks.rank {
            return None;
        }
        let last = starts.len() as u32 - 2;
        let first_wide = |h: u32| (h..=last).find(|&h| wide(h as usize)).unwrap_or(last + 1);
        let stolen = self.ranks[owner].claims.steal(at as u32, first_wide)?;
        #[cfg(test)]
        self.steals.fetch_add(1, Ordering::Relaxed);
        Some((owner, stolen as usize))
    }

    /// The latest predecessor of position `p` that is neither in the worker's chunk nor known
    /// complete, if any.
    fn blocker(&self, p: usize, pending: &Pending, epoch: u8, low_water: usize) -> Option<usize> {
        self.schedule
            .predecessors(p)
            .iter()
            .map(|&q| q as usize)
            .take_while(|&q| q >= low_water)
            // Acquire: as in `is_ready`.
            .find(|&q| q < pending.start && self.done[q].load(Ordering::Acquire) != epoch)
    }
}

/// The rank whose slice of the wide height `height` holds position `q`, if a slice does.
fn slice_owner(height: Range<usize>, q: usize, size: usize, split: Split) -> Option<usize> {
    if q >= slice(height.clone(), size, size, split).start {
        return None;
    }
    // The first rank whose slice ends above q.
    let (mut low, mut high) = (0, size - 1);
    while low < high {
        let mid = (low + high) / 2;
        if slice(height.clone(), mid, size, split).end <= q {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    Some(low)
}

/// Worker `rank`'s slice of the wide height `height` in a run of `size` workers with the
/// thresholds `split`; rank `size` gives the empty slice where the pieces start.
///
/// The slices cover `STATIC_SHARE` of the height, unless the rest would not give each worker one
/// smallest piece (`Split::min_piece`): they then cover the whole height. Such a rest goes to a few
/// workers in pieces of the smallest size, each taken after a slice, so the height ends a piece's
/// time after the slices rather than a slice's quarter later (a height of 4096 cheap items on 16
/// workers: slices of 192 items, then 4 workers run 256 more while the others wait). Measured on
/// the 16-core machine in one process per worker count, alternating blocks of runs of the two rules
/// (medians of 15-21 blocks each, two calls), whole slices against three quarters and pieces: on 16
/// workers fib(18) 0.90-1.00, fib(19) and fib(21) 0.94-0.95, fib(20) 0.94-1.00, fib(22) 0.97-0.98,
/// fib(25) 0.95-0.99, fib(30) 0.99-1.01; on 12 0.91-0.96; on 4 0.91-0.95; on 8 0.94-1.00; only
/// fib(16), whose blocks ran at two speeds, measured 1.05 on 16 workers and 1.12 on 8 in one call
/// each and 0.995 and 0.997 in another (docs/PERFORMANCE.md, session 35). Larger heights keep their
/// pieces, which let faster cores take more of them.
/// (Under loom the rest is always shared: the models' heights of two items keep one slice and one
/// piece.)
pub(super) fn slice(height: Range<usize>, rank: usize, size: usize, split: Split) -> Range<usize> {
    let share = height.len() * STATIC_SHARE.0 / STATIC_SHARE.1;
    let rest_too_small = !cfg!(loom) && height.len() - share < size * split.min_piece;
    let sliced = if rest_too_small { height.len() } else { share }.min(split.max_slice * size);
    let at = |r: usize| height.start + sliced * r / size;
    at(rank)..at((rank + 1).min(size))
}

/// The height a worker is taking pieces of.
struct Height {
    /// Its first position.
    start: usize,
    /// True while the worker has run no chunk of it.
    first: bool,
    /// True if its items are in increasing index order: one height is (`schedule`), a stretch
    /// of several narrow heights need not be.
    sorted: bool,
}

/// The positions of a worker's chunk that it skipped and has not run yet: bit b of word w
/// stands for position `start + 64 w + b`.
struct Pending {
    start: usize,
    words: [u64; MASK_WORDS],
}

impl Pending {
    /// None yet, for a chunk starting at `start`.
    fn none(start: usize) -> Pending {
        Pending {
            start,
            words: [0; MASK_WORDS],
        }
    }

    /// Adds position `p` of the chunk (below `start + MAX_CHUNK`).
    fn insert(&mut self, p: usize) {
        let offset = p - self.start;
        self.words[offset / 64] |= 1 << (offset % 64);
    }

    /// The smallest position not run yet, if any.
    fn first(&self) -> Option<usize> {
        let (w, &bits) = self.words.iter().enumerate().find(|(_, &bits)| bits != 0)?;
        Some(self.start + 64 * w + bits.trailing_zeros() as usize)
    }

    /// The positions not run yet, in order.
    fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(move |(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| self.start + 64 * w + b)
        })
    }

    /// True if position `p` (>= start) is in the chunk and has not run.
    fn contains(&self, p: usize) -> bool {
        let offset = p - self.start;
        offset < MAX_CHUNK && self.words[offset / 64] & (1 << (offset % 64)) != 0
    }
}

/// A worker's low-water mark and its view of everyone's (module comment).
struct Marks<'a> {
    plan: &'a WorkGraph,
    /// This worker's mark and slice claims, if every worker of the run has them.
    own: Option<&'a RankWords>,
    split: Split,
    /// The height and start of this worker's slice that a thief runs, when it last looked:
    /// its mark stays at or below that start until the thief is done (`claims`).
    taken: Option<(u32, usize)>,
    size: usize,
    /// True when positions are claimed from the cursor, so unclaimed ones lie above it.
    claims_pending: bool,
    rank: usize,
    /// Every position below this one is complete: the smaller of `others_low` and `position`.
    low_water: usize,
    /// The smallest of the other workers' marks (and of the cursor) when last read.
    others_low: usize,
    /// The start of the worker's current chunk: its own incomplete positions are all above.
    position: usize,
    /// The mark this worker last published.
    published: usize,
    chunks_since_refresh: usize,
}

impl Marks<'_> {
    /// With claims from the cursor: called before the worker starts a chunk at or above
    /// `position`, having completed all its earlier ones: publishes the mark and now and then
    /// recomputes the low water.
    fn before_chunk(&mut self, position: usize) {
        let Some(own) = self.own else { return };
        self.position = position;
        if position >= self.published + MARK_STRIDE {
            // Release: what this worker ran so far is complete (module comment).
            own.low.store(position, Ordering::Release);
            self.published = position;
        }
        if self.chunks_since_refresh >= self.size.div_ceil(LOW_WATER_READERS) {
            self.refresh();
        } else {
            self.low_water = self.others_low.min(position);
        }
        self.chunks_since_refresh += 1;
    }

    /// With heights: called before the worker starts a chunk at `position` of the height that
    /// starts at `height_start` (`first`: its first chunk there), having completed all its
    /// earlier ones. Publishes the mark on entering a height, so that the others learn as soon
    /// as possible that this worker is done with the heights before, and also every
    /// `MARK_STRIDE` positions within a wide height. Reads the others' marks only while the low
    /// water is below the height's start: once it is not, every predecessor of the height is
    /// known complete, and no newer mark can tell more.
    fn before_height_chunk(&mut self, position: usize, height_start: usize, first: bool) {
        let Some(own) = self.own else { return };
        self.position = self.held(position);
        if first || position >= self.published + MARK_STRIDE {
            debug_assert!(self.position >= self.published, "a mark only grows");
            // Release: what this worker ran so far is complete, and so is any slice of its
            // that a thief ran (module comment).
            own.low.store(self.position, Ordering::Release);
            self.published = self.position;
        }
        self.low_water = self.others_low.min(self.position);
        if self.low_water < height_start {
            self.refresh();
        }
    }

    /// With heights: the worker found a wide height ending at `end` all claimed before it took
    /// any of it. Its incomplete positions, if any, lie at or above `end` (it takes later pieces
    /// above the cursor, which is there, or, in a height without pieces, none of this height),
    /// so `end` is a mark; publishing it lets the others know
    /// they need not wait for this worker in the heights before, as a first chunk there would.
    fn passed_height(&mut self, end: usize) {
        let Some(own) = self.own else { return };
        self.position = self.held(end);
        if self.position > self.published {
            // Release: as in `before_height_chunk`.
            own.low.store(self.position, Ordering::Release);
            self.published = self.position;
        }
    }

    /// With heights: claims this worker's slice of the height with index `height` (`claims`).
    /// False if a thief has it; the worker then answers for it until the thief is done.
    fn claim_own(&mut self, height: usize) -> bool {
        let Some(own) = self.own else { return true };
        if own.claims.claim_own(height as u32) {
            return true;
        }
        if let Some(taken) = own.claims.taken_by_thief() {
            let start = self.slice_start(taken);
            self.taken = Some((taken, start));
            self.position = self.position.min(start);
            self.low_water = self.low_water.min(start);
        }
        false
    }

    /// `position`, or the start of this worker's slice that a thief still runs if that is
    /// lower: the most the worker may publish, or take as its own term of the low water.
    fn held(&mut self, position: usize) -> usize {
        let (Some((height, start)), Some(own)) = (self.taken, self.own) else {
            return position;
        };
        match own.claims.taken_by_thief() {
            None => {
                self.taken = None;
                position
            }
            Some(now) if now == height => position.min(start),
            Some(now) => {
                // A later slice: the earlier one is complete.
                let start = self.slice_start(now);
                self.taken = Some((now, start));
                position.min(start)
            }
        }
    }

    /// The start of this worker's slice of the (wide) height with index `height`.
    fn slice_start(&self, height: u32) -> usize {
        let height = self.plan.schedule.height(height as usize);
        slice(height, self.rank, self.size, self.split).start
    }

    /// A thief runs another worker's slice from `position` on (or is back at `position` in
    /// its own chunk): its own incomplete positions start there, and it still answers for a
    /// slice of its own that another thief runs (`held`).
    fn run_taken_from(&mut self, position: usize) {
        self.position = self.held(position);
        self.low_water = self.others_low.min(self.position);
    }

    /// Recomputes the low water from everyone's marks.
    fn refresh(&mut self) {
        if self.own.is_none() {
            return;
        }
        // Relaxed: any value the cursor held bounds the positions not yet claimed.
        let unclaimed = if self.claims_pending {
            self.plan.cursor.load(Ordering::Relaxed)
        } else {
            usize::MAX
        };
        let rank = self.rank;
        self.others_low = self.plan.ranks[..self.size]
            .iter()
            .enumerate()
            .filter(|&(r, _)| r != rank)
            // Acquire: pairs with the Release store of a mark, made after that worker's
            // earlier items completed, so skipping their flags still orders F after them.
            .map(|(_, w)| w.low.load(Ordering::Acquire))
            .fold(unclaimed, usize::min);
        self.low_water = self.others_low.min(self.position);
        self.chunks_since_refresh = 0;
    }

    /// Called when the worker has completed all its positions: once no thief runs a slice of
    /// its, publishes that it has nothing left.
    fn finish(&self) {
        let Some(own) = self.own else { return };
        let mut spin = Spin::default();
        while own.claims.taken_by_thief().is_some() {
            // Relaxed: as in `run_piece`; an aborted run publishes nothing more.
            if self.plan.abort.load(Ordering::Relaxed) {
                return;
            }
            spin.pause();
        }
        // Release: everything this worker ran is complete.
        own.low.store(usize::MAX, Ordering::Release);
    }
}

/// How a waiting worker paces its looks at the flags (`run_chunk`).
#[derive(Default)]
struct Spin {
    /// Looks since the worker last ran an item.
    rounds: u32,
    /// Looks since its last pass over the whole chunk.
    since_pass: u32,
    /// Looks since it last looked for a slice to steal.
    since_steal: u32,
}

impl Spin {
    /// Waits a little before the worker looks again: spins at first, then yields the core so
    /// that a machine with fewer cores than workers lets the awaited worker run.
    #[cfg(not(loom))]
    fn pause(&mut self) {
        if self.rounds < SPIN_ROUNDS {
            self.rounds += 1;
            for _ in 0..1u32 << self.rounds.min(SPIN_SHIFT) {
                std::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
        self.since_pass += 1;
        self.since_steal += 1;
    }

    /// Under loom, a spinning thread must yield so the model explores the others.
    #[cfg(loom)]
    fn pause(&mut self) {
        loom::thread::yield_now();
        self.since_pass += 1;
        self.since_steal += 1;
    }

    /// True every `STEAL_EVERY` looks: time to look for the slice that holds the worker up.
    fn steal_due(&mut self) -> bool {
        let due = self.since_steal >= STEAL_EVERY;
        if due {
            self.since_steal = 0;
        }
        due
    }

    /// True when the worker should go over its whole chunk even though the first item left
    /// is not ready.
    fn pass_due(&self) -> bool {
        self.since_pass >= PASS_EVERY
    }

    fn passed(&mut self) {
        self.since_pass = 0;
    }

    /// Something moved: look often again.
    fn ran(&mut self) {
        self.rounds = 0;
    }
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
