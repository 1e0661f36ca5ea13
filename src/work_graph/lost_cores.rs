//! Workers that lose their core during a run sit out the next runs of the plan.
//!
//! The pool's workers are pinned one per CPU and spin while they wait for items. When another
//! busy process shares a worker's CPU, the kernel takes the worker off it for a time slice
//! (3-4 ms on the 16-core GPU machine) now and then, and a run waits for the items that worker
//! holds: its claimed slice, the item in hand. Beside one busy loop, fib(30) on 16 workers
//! took 1.9 ns per item instead of 0.29, fib(25) 2.2 instead of 0.40 in many runs (session 31).
//! The task DAG's waits had the same trouble and the same cure (`task/laggards.rs`): a worker
//! leaving a run that took `LATE` or more looks how long its thread waited for its CPU since
//! its last look (`run_delay.rs`), the calling thread likewise after the run, and the record
//! of `Laggards` decides who sits out the next runs: a worker that lost its core twice within
//! 100 ms, for 100 ms, longer when it happens again; a stand-in for the calling thread, whose
//! CPU the calling thread then takes for the run. At most half of the workers besides the
//! calling thread sit out.
//!
//! A run with workers sitting out is a run on fewer workers: the workers that take part get
//! the ranks 0..size in pool order (the calling thread keeps 0), and `worker` slices the
//! schedule among them as for a smaller space. Where nobody sits out, the run is dispatched as
//! before.

use crate::task::laggards::{lost_core, Laggards, LostCoreFlags};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Per plan: the record, and what the current run's workers read of it.
pub(super) struct LostCores {
    laggards: Mutex<Laggards>,
    /// Per pool rank of the space: whether it takes part in the current run. Written by the
    /// calling thread before the dispatch, whose posts publish it.
    takes_part: Box<[AtomicBool]>,
    /// The pool ranks that lost their core in the current run.
    lost: LostCoreFlags,
    /// Tests: only the workers' lost cores count, or only the calling thread's, so that a test
    /// of one is not decided by the other on a loaded machine.
    #[cfg(test)]
    pub(super) only_workers: AtomicBool,
    #[cfg(test)]
    pub(super) only_calling_thread: AtomicBool,
}

/// Who runs the next run.
pub(super) struct Choice {
    /// The pool rank on whose CPU the calling thread runs (0: its own).
    pub home: usize,
    /// The workers that take part.
    pub size: usize,
}

impl LostCores {
    /// For spaces of up to `slots` threads; larger ones always run on all.
    pub(super) fn new(slots: usize) -> LostCores {
        LostCores {
            laggards: Mutex::new(Laggards::new(slots, true)),
            takes_part: (0..slots).map(|_| AtomicBool::new(true)).collect(),
            lost: LostCoreFlags::new(slots),
            #[cfg(test)]
            only_workers: AtomicBool::new(false),
            #[cfg(test)]
            only_calling_thread: AtomicBool::new(false),
        }
    }

    /// Before a run on `workers` threads that starts at `now`.
    pub(super) fn choose(&self, workers: usize, now: Instant) -> Choice {
        let mut laggards = self.laggards.lock().unwrap_or_else(|p| p.into_inner());
        laggards.resize(workers);
        if !laggards.enabled() {
            return Choice {
                home: 0,
                size: workers,
            };
        }
        let mut size = 0;
        for (rank, flag) in self.takes_part[..workers].iter().enumerate() {
            let takes_part = laggards.takes_part(rank, now);
            size += usize::from(takes_part);
            // Relaxed: the dispatch's posts publish it.
            flag.store(takes_part, Ordering::Relaxed);
        }
        Choice {
            home: laggards.stand_in(now).unwrap_or(0),
            size,
        }
    }

    /// Whether pool rank `rank` takes part in the current run.
    pub(super) fn takes_part(&self, rank: usize) -> bool {
        self.takes_part[rank].load(Ordering::Relaxed)
    }

    /// Whether the calling thread runs on a stand-in's CPU now.
    #[cfg(test)]
    pub(super) fn displaced(&self) -> bool {
        let laggards = self.laggards.lock().unwrap_or_else(|p| p.into_inner());
        laggards.stand_in(Instant::now()).is_some()
    }

    /// The rank among the run's workers of pool rank `rank`, which takes part.
    pub(super) fn run_rank(&self, rank: usize) -> usize {
        (0..rank).filter(|&r| self.takes_part(r)).count()
    }

    /// At the end of pool rank `rank`'s part of a run that started at `start`.
    pub(super) fn leave(&self, rank: usize, start: Instant) {
        if rank != 0 && lost_core(start.elapsed()) {
            self.lost.set(rank);
        }
    }

    /// After a run that started at `start`, on the calling thread: records who lost their core.
    pub(super) fn after_run(&self, start: Instant) {
        #[cfg(test)]
        let (own, others) = (
            !self.only_workers.load(Ordering::Relaxed),
            !self.only_calling_thread.load(Ordering::Relaxed),
        );
        #[cfg(not(test))]
        let (own, others) = (true, true);
        let own = own && lost_core(start.elapsed());
        if !own && !self.lost.any() {
            return;
        }
        let now = Instant::now();
        let mut laggards = self.laggards.lock().unwrap_or_else(|p| p.into_inner());
        if own {
            laggards.record_lost_core(0, now);
        }
        self.lost
            .take(others, |rank| laggards.record_lost_core(rank, now));
    }
}
