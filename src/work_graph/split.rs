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
//! A whole run that takes one worker less than `RUN_ALONE_NS` runs on the calling thread
//! alone (`ItemCost::run_alone`): calling the other workers in and waiting for them to leave
//! costs more than they save. On the 16-core GPU machine a run of fib(10) (177 items) took
//! 2.2-4.2 us on 2-16 workers against 0.9 on one, fib(15) (1973 items) 11-25 us against 7.3,
//! fib(16) 13-20 against 13.8, and fib(17) 17-22 against 24; on the 2-core developer machine
//! fib(15) took 6.0 us on 2 workers against 3.2 on one, fib(17) 10.3 against 8.4
//! (docs/PERFORMANCE.md, session 32). What a run alone would take is known from the plan's
//! own runs alone, which time themselves (`alone`). Before the first, worker 0's measurement
//! stands in, with a margin: its items take their inputs from other cores, so they cost more
//! than on one worker (fib(10): 3 times on the developer machine's 2 workers, 5.2 against 1.7
//! ns; on 16 workers of the GPU machine a first form that trusted it kept fib(10) on all of
//! them), and a plan whose estimate falls within four times the limit tries one run alone; it
//! tries again every 32 runs, so that runs alone that were disturbed do not decide for good.
//! Once a plan has both runs alone and runs on all workers measured (each timed whole by the
//! calling thread), it goes alone when that is clearly the faster (`ALONE_GAIN`), whatever the
//! limit says: the limit is where the two cross on a machine whose cores are all alike, and on
//! a VM whose vCPUs run at different speeds from one moment to the next they crossed higher
//! (session 34: fib(17), 5167 items, took 21-37 us per run on 16 workers of the GPU machine
//! and 17-25 alone). Every 32 runs it tries the slower kind again while that takes less than
//! twice the faster. Runs on the workers are disturbed more often than runs alone, so their
//! figure moves up more slowly (`SHARED_FOLD`).
//! (A run whose heights are all narrow goes alone as well, measured or not:
//! `WorkGraph::runs_alone`.)
//! A run alone measures the items for the thresholds above too.
//!
//! The measurement: worker 0 times up to `SAMPLES` of its chunks that run without a look at
//! any flag (`WorkerClock`), and stores their cost per item at the end of its run; the next
//! run reads it when it starts (`ItemCost::start_run`), so that every worker of a run uses
//! the same thresholds, which the run's correctness needs (a narrow height is worker 0's
//! alone: every worker must agree which heights are narrow).

use crate::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

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
/// A run that one worker ends within this runs on the calling thread alone (module comment):
/// below the crossovers measured, 14-17 us on 16 workers, 9-13 on 2.
const RUN_ALONE_NS: u64 = 12288;
/// Before any run alone, a plan tries one when worker 0's measurement puts the run below this
/// many times `RUN_ALONE_NS` (module comment).
const TRY_ALONE_MARGIN: u64 = 4;
/// Every this many runs a plan decides as before its first run alone, so that one run alone
/// that was disturbed (its thread preempted: 279 ns per item measured once for fib(10), 1.7
/// usually) does not keep the plan on all its workers for good; or, once both kinds of run
/// are measured, runs the slower kind, if it is within `RETRY_RATIO` of the faster.
const RETRY_ALONE: u8 = 32;
/// A plan whose runs alone and runs on several workers are both measured tries the slower kind
/// again every `RETRY_ALONE` runs only while it takes less than this many times the faster:
/// the retries then cost at most about 3% of the runs' time, and a kind that much slower
/// becomes the faster only if the faster one's runs slow down, which their own figure shows.
const RETRY_RATIO: u64 = 2;
/// Once both kinds of run are measured, a plan runs alone when that takes less than this
/// fraction of a run on its workers, as (numerator, denominator): runs that take about as long
/// either way stay on the workers rather than switch back and forth on the figures' noise.
const ALONE_GAIN: (u64, u64) = (4, 5);
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
    /// The cost of an item in the plan's runs on the calling thread alone (0 before any).
    alone: AtomicU32,
    /// The cost of an item in the plan's runs on several workers, the whole run as the calling
    /// thread timed it (0 before any), and the number of workers of the space they ran on.
    shared: AtomicU32,
    shared_workers: AtomicUsize,
    /// Test hook: no run goes alone (`never_alone`).
    #[cfg(test)]
    never_alone: std::sync::atomic::AtomicBool,
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

    /// Whether run number `run` (the plan's `epoch`) of `items` items, on a space of `workers`,
    /// runs on the calling thread alone (module comment): once the plan's runs alone and its
    /// runs on such a space are both measured, when those alone are clearly the faster (every
    /// `RETRY_ALONE`-th run the other kind, while within `RETRY_RATIO`); before that, by the
    /// cost of the plan's earlier runs alone, or before any, and in every `RETRY_ALONE`-th run,
    /// by worker 0's measurement with a margin; never before a measurement, since the items of
    /// a plan's first run may take milliseconds each. Called by the calling thread before the
    /// run.
    pub(super) fn run_alone(&self, items: usize, run: u8, workers: usize) -> bool {
        // Relaxed: written by this thread in earlier runs, or read as in `start_run`.
        let alone = self.alone.load(Ordering::Relaxed);
        let shared = match self.shared_workers.load(Ordering::Relaxed) == workers {
            true => self.shared.load(Ordering::Relaxed),
            false => 0,
        };
        if alone != 0 && shared != 0 {
            // Both measured: alone when clearly the faster, and now and then the other kind
            // while it is close enough to have become the faster since.
            let (alone, shared) = (u64::from(alone), u64::from(shared));
            let slow_within = alone.max(shared) < RETRY_RATIO * alone.min(shared);
            let retry = run % RETRY_ALONE == 0 && slow_within;
            return (alone * ALONE_GAIN.1 < shared * ALONE_GAIN.0) != retry;
        }
        let (limit, scaled_ns) = if alone == 0 || run % RETRY_ALONE == 0 {
            (
                TRY_ALONE_MARGIN * RUN_ALONE_NS,
                self.this_run.load(Ordering::Relaxed),
            )
        } else {
            (RUN_ALONE_NS, alone)
        };
        scaled_ns != 0 && (items as u64).saturating_mul(u64::from(scaled_ns)) < limit * SCALE
    }

    /// Whether any run may go alone: not under loom, whose models run the workers' code, nor
    /// in the tests of runs on several workers (`never_alone`).
    pub(super) fn may_run_alone(&self) -> bool {
        #[cfg(test)]
        if self.never_alone.load(Ordering::Relaxed) {
            return false;
        }
        !cfg!(loom)
    }

    /// Test hook: every run of the plan uses all its workers, for the tests of how they share
    /// the schedule (and the stress tests of their interleavings).
    #[cfg(test)]
    pub(super) fn never_alone(&self) {
        self.never_alone.store(true, Ordering::Relaxed);
    }

    /// Folds the cost of a run on the calling thread alone, `ns` for `items` items, into the
    /// cost of an item alone (`fold_run`, `ALONE_FOLD`).
    pub(super) fn record_alone(&self, ns: u64, items: usize) {
        let Some(scaled_ns) = fold_run(&self.alone, ALONE_FOLD, ns, items) else {
            return;
        };
        // It measures the items for the thresholds of later runs on several workers too, as
        // worker 0 does there: narrow heights of costly items are then shared from the next run,
        // as after a first run on several workers. With the same bound on a disturbed figure.
        let measured = u64::from(self.measured.load(Ordering::Relaxed));
        self.record(match measured {
            0 => scaled_ns,
            _ => scaled_ns.min(4 * measured),
        });
    }

    /// Folds the time of a whole run on several workers of a space of `workers`, `ns` for
    /// `items` items, into the cost of an item there (`fold_run`, `SHARED_FOLD`); a run on a
    /// space of another size starts the figure over.
    pub(super) fn record_shared(&self, ns: u64, items: usize, workers: usize) {
        // Relaxed: only the calling thread of a run writes them (see `record`).
        if self.shared_workers.swap(workers, Ordering::Relaxed) != workers {
            self.shared.store(0, Ordering::Relaxed);
        }
        fold_run(&self.shared, SHARED_FOLD, ns, items);
    }

    /// Folds worker 0's measurement into the estimate: a quarter of the new one, so that one
    /// run on a disturbed core does not swing the next runs' thresholds. Only worker 0 of the
    /// one run in progress calls this (or the calling thread of a run alone, `record_alone`),
    /// so each estimate's load and store race with no other writer.
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

/// How a whole run's figure is folded into an estimate of such runs (`fold_run`): a figure
/// below the estimate counts for half, one above it for 1/`up` and for at most `most` times
/// the estimate.
struct Fold {
    up: u64,
    most: u64,
}

/// Runs alone. One that was disturbed (its thread preempted for a time slice) takes up to a
/// thousand times its usual time, and its figure would stay in a quarter folding for many runs;
/// counted for at most four times the estimate, it moves it by at most 1.75 times, while a
/// slower work function still shows within a few runs.
const ALONE_FOLD: Fold = Fold { up: 4, most: 4 };
/// Runs on several workers, which are disturbed far more often (any of their threads may lose
/// its core), and whose estimate is set against that of runs alone: one disturbed run moves it by
/// at most 1.125 times, so that it does not send a plan alone for the next 32 runs (session 34,
/// call 16: fib(19) 2.41 -> 3.66 ns per item with the runs-alone figure's fold).
const SHARED_FOLD: Fold = Fold { up: 8, most: 2 };

/// Folds a whole run's time, `ns` for `items` items, into `estimate`, the cost of an item in
/// such runs, as `fold` says, and returns the run's own figure (None without items). Only the
/// calling thread of a run writes these estimates (see `ItemCost::record`).
fn fold_run(estimate: &AtomicU32, fold: Fold, ns: u64, items: usize) -> Option<u64> {
    let scaled_ns = ns.saturating_mul(SCALE).checked_div(items as u64)?;
    let scaled_ns = scaled_ns.clamp(1, u64::from(u32::MAX));
    // Relaxed: this thread alone writes it (above).
    let old = u64::from(estimate.load(Ordering::Relaxed));
    let new = match old {
        0 => scaled_ns,
        _ if scaled_ns < old => (old + scaled_ns) / 2,
        _ => ((fold.up - 1) * old + scaled_ns.min(fold.most * old)) / fold.up,
    };
    estimate.store(new.max(1) as u32, Ordering::Relaxed);
    Some(scaled_ns)
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
