//! How finely a run on several workers shares the heights of the schedule (`worker`), from the
//! measured cost of an item.
//!
//! A height that is too narrow to give each worker `MIN_SLICE` items runs on worker 0 alone, so
//! that a graph of narrow heights does not pass every item's inputs from core to core (each
//! such input a cache miss of the order of 100 ns). That count was tuned with Fibonacci items
//! of 3-4 ns on the 16-core benchmark machine (docs/PERFORMANCE.md, sessions 8 and 9), as was
//! the smallest piece claimed from a shared height, `MIN_PIECE` items. Items that cost tens of
//! nanoseconds (the random graphs of `bench/work_graph`, or most real work functions) then had
//! heights of up to 511 items, several microseconds of work, on worker 0 alone on 16 workers,
//! and pieces of 256 items, 10 us, which the next height waited for while the others idled.
//! So both rules also have a time, turned into an item count with the cost of an item measured
//! in earlier runs of the plan:
//! - a height runs on worker 0 alone only if it is narrow by the count and also takes less
//!   than `ALONE_NS` there (`alone_below` items); sharing a wider one on few workers still
//!   passes most inputs between cores, which is why the count stays (the deep random graph on
//!   2 workers ran at half its one-worker speed with heights shared from 6 items of 76 ns);
//! - a piece claimed from a height is at most `PIECE_NS` of work, and never below one item;
//! - a worker's slice of a height (`worker`) is at most `SLICE_NS` of work, so that a core
//!   running at half speed falls at most that far behind the others per height.
//!
//! Items of up to 8 ns keep the tuned counts on up to 16 workers (of up to 4 ns, on up to 32),
//! and so does every run before the first measurement.
//!
//! The measurement: worker 0 times up to `SAMPLES` of its chunks that run without a look at
//! any flag (`WorkerClock`), and stores their cost per item at the end of its run; the next
//! run reads it when it starts (`ItemCost::start_run`), so that every worker of a run uses
//! the same thresholds, which the run's correctness needs (a narrow height is worker 0's
//! alone: every worker must agree which heights are narrow).

use crate::sync::atomic::{AtomicU32, Ordering};

/// Fewest items per worker for a height to be shared. (Under loom, 1: the models' heights of
/// two items are shared by the two workers.)
const MIN_SLICE: usize = if cfg!(loom) { 1 } else { 32 };
/// Smallest piece of a height claimed at once, in items, for cheap items and before any
/// measurement (under loom, the chunk).
const MIN_PIECE: usize = if cfg!(loom) { 2 } else { 256 };
/// A height that takes at least this long on one worker is shared whatever its width: 512
/// items of 8 ns, the widest narrow height of 16 workers.
const ALONE_NS: u64 = 4096;
/// The most work in the smallest piece: `MIN_PIECE` items of 8 ns.
const PIECE_NS: u64 = 2048;
/// Largest slice of a height per worker, in items, for cheap items and before any measurement.
const MAX_SLICE: usize = 8192;
/// The most work in a worker's slice of a height: `MAX_SLICE` items of 4 ns.
const SLICE_NS: u64 = 32768;
/// Item costs are kept in 1/`SCALE` ns.
const SCALE: u64 = 16;
/// Chunks worker 0 times in a run: a clock read costs tens of nanoseconds, so a few.
const SAMPLES: u32 = 4;
/// Fewest items in a timed chunk, so that the clock's own cost stays small beside it.
const SAMPLE_ITEMS: usize = 32;

/// The thresholds of one run (module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Split {
    /// Heights of at least this many items are shared, whatever the count rule says.
    pub alone_below: usize,
    pub min_piece: usize,
    /// The most items of a height in one worker's slice.
    pub max_slice: usize,
}

impl Split {
    /// The thresholds for a run, from the last measured cost of an item (0: none yet).
    pub(super) fn for_item_cost(scaled_ns: u32) -> Split {
        if scaled_ns == 0 || cfg!(loom) {
            return Split {
                alone_below: usize::MAX,
                min_piece: MIN_PIECE,
                max_slice: MAX_SLICE,
            };
        }
        let items = |budget_ns: u64| (budget_ns * SCALE / u64::from(scaled_ns)).max(1) as usize;
        Split {
            alone_below: items(ALONE_NS),
            min_piece: items(PIECE_NS).min(MIN_PIECE),
            max_slice: items(SLICE_NS),
        }
    }

    /// Whether a height of `width` positions is too narrow to share among `size` workers: it
    /// is then worker 0's alone.
    #[inline]
    pub(super) fn narrow(&self, width: usize, size: usize) -> bool {
        width < size * MIN_SLICE && width < self.alone_below
    }
}

/// The cost of an item as measured by the plan's runs, in 1/`SCALE` ns (0 before any), and
/// the value the current run's thresholds come from.
#[derive(Default)]
pub(super) struct ItemCost {
    measured: AtomicU32,
    this_run: AtomicU32,
}

impl ItemCost {
    /// Fixes the current run's thresholds. Called by `begin`, before the workers start.
    pub(super) fn start_run(&self) {
        // Relaxed: the measurement was stored by the previous run's worker 0, which the end of
        // that run ordered before this (the plan's `running` flag); the dispatch that starts
        // the workers orders this store before their loads, as for the run number.
        let measured = self.measured.load(Ordering::Relaxed);
        self.this_run.store(measured, Ordering::Relaxed);
    }

    /// The current run's thresholds: the same for every worker of the run, whatever worker 0
    /// measures meanwhile.
    pub(super) fn split(&self) -> Split {
        // Relaxed: see `start_run`.
        Split::for_item_cost(self.this_run.load(Ordering::Relaxed))
    }

    /// Folds worker 0's measurement into the estimate: a quarter of the new one, so that one
    /// run on a disturbed core does not swing the next runs' thresholds. Only worker 0 of the
    /// one run in progress calls this, so the load and the store race with no other writer.
    fn record(&self, scaled_ns: u64) {
        let scaled_ns = scaled_ns.clamp(1, u64::from(u32::MAX)) as u32;
        let old = self.measured.load(Ordering::Relaxed);
        let new = if old == 0 {
            scaled_ns
        } else {
            ((3 * u64::from(old) + u64::from(scaled_ns)) / 4) as u32
        };
        // Relaxed: read by the next run's `begin` (see `start_run`).
        self.measured.store(new.max(1), Ordering::Relaxed);
    }
}

/// Worker 0's clock for its unchecked chunks (module comment); the other workers time nothing.
pub(super) struct WorkerClock {
    samples_left: u32,
    ns: u64,
    items: u64,
}

impl WorkerClock {
    pub(super) fn new(rank: usize) -> WorkerClock {
        WorkerClock {
            samples_left: if rank == 0 && !cfg!(loom) { SAMPLES } else { 0 },
            ns: 0,
            items: 0,
        }
    }

    /// Runs `chunk`, a chunk of `items` items, timing it if a sample is still due.
    #[inline]
    pub(super) fn time<R>(&mut self, items: usize, chunk: impl FnOnce() -> R) -> R {
        if self.samples_left == 0 || items < SAMPLE_ITEMS {
            return chunk();
        }
        self.samples_left -= 1;
        let start = std::time::Instant::now();
        let r = chunk();
        self.ns += start.elapsed().as_nanos() as u64;
        self.items += items as u64;
        r
    }

    /// Stores the run's measurement, if it made any.
    pub(super) fn finish(&self, cost: &ItemCost) {
        if let Some(scaled_ns) = (self.ns * SCALE).checked_div(self.items) {
            cost.record(scaled_ns);
        }
    }
}
