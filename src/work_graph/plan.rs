//! The work-graph plan (000 §3.3.1 `WorkGraphPolicy`): made once from a graph, it allocates and
//! initializes everything a run needs (000 §2.4.1), so that it can run any number of times
//! without allocating.

use super::acyclic::dag_shape;
use super::claims::SliceClaims;
use super::crs::Crs;
use super::lost_cores::LostCores;
use super::schedule::Schedule;
use super::split::ItemCost;
use crate::cache_line::CachePadded;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Latecomers, Space};
use crate::huge_pages::HostArray;
use crate::priority::Priority;
use crate::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Priority levels (000 §2.4.2: High, Regular, Low).
const LEVELS: usize = Priority::ALL.len();

/// A work graph ready to run: the dependence graph, the schedule computed from it, and one
/// completion flag per item.
///
/// `run` calls the work function once for each item, each F(j) after every F(i) it executes
/// after has returned. One run at a time; runs reuse everything allocated here.
pub struct WorkGraph {
    pub(super) graph: Arc<Crs>,
    pub(super) schedule: Schedule,
    /// Per position of the schedule, the number of the run in which its item last completed
    /// (written by runs on several workers; `worker`). One byte each: on many workers a run
    /// moves these flags between cores for every item, next to the work function's own data,
    /// and the wrap-around clear (`begin`) every 255 runs costs one write per item. On huge
    /// pages when large, like the schedule's arrays.
    pub(super) done: HostArray<AtomicU8>,
    /// The number of the current run on several workers; never 0 while a run is in progress.
    pub(super) epoch: AtomicU8,
    /// The next position of the schedule that no worker has claimed.
    pub(super) cursor: CachePadded<AtomicUsize>,
    /// Per worker rank, a position that bounds from below every position it may still be
    /// running (the low-water marks of `worker`), and the claims on its slices (`claims`).
    pub(super) ranks: Box<[CachePadded<RankWords>]>,
    /// Set when a worker unwinds from a panicking work function, so the others stop.
    pub(super) abort: AtomicBool,
    /// Slices run by a worker other than their owner, over all runs (`claims`).
    #[cfg(test)]
    pub(super) steals: AtomicUsize,
    /// Runs that went to several workers rather than the calling thread alone (`split`).
    #[cfg(test)]
    pub(super) shared_runs: AtomicUsize,
    /// The cost of an item as runs on several workers measured it, and the value the current
    /// run's thresholds come from (`split`).
    pub(super) item_cost: ItemCost,
    /// True while a run is in progress (one at a time).
    running: AtomicBool,
    /// Workers that lost their core in earlier runs, which sit out the next ones.
    pub(super) lost_cores: LostCores,
}

/// What a worker rank of a run publishes to the others: its low-water mark and the claims on
/// its slices, on one pair of cache lines, since it writes both once per height.
pub(super) struct RankWords {
    pub low: AtomicUsize,
    pub claims: SliceClaims,
}

/// Workers that keep a low-water mark: one per hardware thread, at least 16 so that test pools
/// larger than the machine have them too. Runs on more workers do without.
fn low_water_slots() -> usize {
    if cfg!(loom) {
        2
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .max(16)
    }
}

impl WorkGraph {
    /// Plans a run of `graph`, whose row `i` lists the items that execute after item `i`.
    /// `priorities`, if given, has one entry per item; without it every item is Regular.
    ///
    /// Checks in O(N + NZ) that the graph is acyclic (`Cycle`, naming an item on the cycle and
    /// its length) and that `priorities` has N entries (`InvalidArgument`), then computes the
    /// schedule in O(N + NZ). Keeps about 12 bytes per item and 4 per dependence besides the
    /// graph, which the plan shares.
    pub fn new(graph: Arc<Crs>, priorities: Option<&[Priority]>) -> Result<WorkGraph> {
        let n = graph.num_rows();
        if let Some(p) = priorities {
            if p.len() != n {
                return Err(Error::invalid_argument(format!(
                    "{} priorities given for a graph of {n} items; give one per item, or none \
                     for all Regular",
                    p.len()
                )));
            }
        }
        let shape = dag_shape(&graph)?;

        // Dense levels: the priority levels that have items, highest first.
        let mut present = [false; LEVELS];
        for p in priorities.unwrap_or_default() {
            present[p.index()] = true;
        }
        let mut dense = [0u8; LEVELS];
        let mut level_count = 0;
        for (p, &is_present) in present.iter().enumerate() {
            dense[p] = level_count as u8;
            level_count += usize::from(is_present);
        }
        let levels: Vec<u8> = match priorities {
            Some(p) if level_count > 1 => p.iter().map(|l| dense[l.index()]).collect(),
            _ => Vec::new(),
        };

        let schedule = Schedule::new(&graph, &shape, &levels, level_count);
        let done = HostArray::from_fn(n, |_| AtomicU8::new(0)).ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfMemory,
                format!("no memory for the completion flags of {n} work items"),
            )
        })?;
        Ok(WorkGraph {
            graph,
            schedule,
            done,
            epoch: AtomicU8::new(0),
            cursor: CachePadded(AtomicUsize::new(0)),
            ranks: (0..low_water_slots())
                .map(|_| {
                    CachePadded(RankWords {
                        low: AtomicUsize::new(0),
                        claims: SliceClaims::new(),
                    })
                })
                .collect(),
            abort: AtomicBool::new(false),
            #[cfg(test)]
            steals: AtomicUsize::new(0),
            #[cfg(test)]
            shared_runs: AtomicUsize::new(0),
            item_cost: ItemCost::default(),
            running: AtomicBool::new(false),
            lost_cores: LostCores::new(low_water_slots()),
        })
    }

    /// The dependence graph this plan runs.
    pub fn graph(&self) -> &Arc<Crs> {
        &self.graph
    }

    /// N, the number of work items.
    pub fn num_items(&self) -> usize {
        self.schedule.order.len()
    }

    /// The order in which one worker runs the items (the plan's schedule).
    pub fn order(&self) -> &[u32] {
        &self.schedule.order
    }

    /// Runs the work graph on `space`: every thread of the space takes items in the plan's
    /// order until all N items have run. `work(i)` runs once for each item `i`, concurrently on
    /// several threads, and F(j) begins only after F(i) has returned for every dependence
    /// "j after i".
    ///
    /// Allocates nothing. Fails without running anything with `Busy` when this plan is running
    /// already (on another thread, or `work` calling `run` on it) or the space is busy, and with
    /// `WrongThread` when the caller is not the space's control thread. A panic in `work` stops
    /// the run (the other workers stop at their next item) and is resumed on the caller; the
    /// plan stays usable.
    pub fn run<F: Fn(usize) + Sync>(&self, space: &Space, work: F) -> Result<()> {
        let _running = self.begin()?;
        let workers = space.concurrency();
        if workers == 1 {
            return space.run_on_all(&|_| self.run_alone(&work));
        }
        if self.runs_alone(workers) {
            // The calling thread alone, the space busy as for any run, the other workers never
            // called in.
            return space.run_on_all_lazily(0, Latecomers::RunOnCaller, &|_| {}, &|_| {
                self.run_alone_timed(&work)
            });
        }
        #[cfg(test)]
        self.shared_runs.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let done = if space.is_pinned() {
            self.run_pinned(space, workers, start, &work)
        } else {
            // Threads that move between CPUs, or more threads than CPUs: no core of one's own
            // to lose (`lost_cores.rs`).
            space.run_blocks(&|w| self.worker(w.rank, w.size, &work))
        };
        // Against the runs alone (`split.rs`).
        let ns = start.elapsed().as_nanos().try_into().unwrap_or(u64::MAX);
        self.item_cost.record_shared(ns, self.num_items(), workers);
        done
    }

    /// A run on a space whose threads are pinned one per CPU, started at `start`: workers that
    /// lost their core in earlier runs sit out.
    ///
    /// A run on all workers starts them through the instance's job slot (`Space::run_blocks`):
    /// the calling thread publishes the run with one store that every idle worker sees at once.
    /// Posting to each worker's mailbox in turn took 0.19-0.29 us per worker on the 16-core
    /// machine, so the 16th started 3.7-6.1 us into the run, and the calling thread began its
    /// own share, which holds the narrow heights at the graph's start, only after the last post.
    /// Through the slot every worker started 1.2-2.2 us into the run, and runs of fib(18) to
    /// fib(22) on 16 workers took 0.86-0.95 of their time (docs/PERFORMANCE.md, session 36).
    /// A rank whose worker has not claimed it by the time the calling thread ends its own share
    /// runs on the calling thread, as a late worker would run it: a run already lets any worker
    /// stand in for one that does not come (`claims`). Such a rank is no sign that the calling
    /// thread lost its core, so only ranks run on their own thread report a lost one.
    fn run_pinned<F: Fn(usize) + Sync>(
        &self,
        space: &Space,
        workers: usize,
        start: Instant,
        work: &F,
    ) -> Result<()> {
        let choice = self.lost_cores.choose(workers, start);
        let calling_thread = crate::thread_id::current();
        let leave = |rank: usize| {
            if crate::thread_id::current() != calling_thread {
                self.lost_cores.leave(rank, start);
            }
        };
        let done = if choice.size == workers {
            space.run_blocks(&|w| {
                self.worker(w.rank, w.size, work);
                leave(w.rank);
            })
        } else {
            // Some workers sit out (`lost_cores.rs`): the others run as a smaller space's.
            let size = choice.size;
            space.run_on_all_lazily(
                choice.home,
                Latecomers::RunOnCaller,
                &|w| {
                    self.worker(self.lost_cores.run_rank(w.rank), size, work);
                    leave(w.rank);
                },
                &|recruit| {
                    recruit.only(|rank| self.lost_cores.takes_part(rank));
                    if size == 1 {
                        self.run_alone(work);
                    } else {
                        self.worker(0, size, work);
                    }
                },
            )
        };
        self.lost_cores.after_run(start);
        done
    }

    /// Whether the current run, on a space of `workers` workers, goes on the calling thread
    /// alone: when every height is narrow, so that worker 0 would run every item anyway while
    /// the others only wait (a chain; a small tree even in a plan's first run, before anything
    /// is measured), or when the run is small (`split.rs`).
    fn runs_alone(&self, workers: usize) -> bool {
        let all_narrow = self
            .schedule
            .widest
            .is_some_and(|widest| self.item_cost.split().narrow(widest, workers));
        // Relaxed: this thread stored it in `begin`.
        let run = self.epoch.load(Ordering::Relaxed);
        self.item_cost.may_run_alone()
            && (all_narrow || self.item_cost.run_alone(self.num_items(), run, workers))
    }

    /// Claims the plan for a run and resets what a run on several workers starts from.
    fn begin(&self) -> Result<Running<'_>> {
        // Acquire: see everything the previous run left (pairs with the Release in `Running`).
        if self.running.swap(true, Ordering::Acquire) {
            return Err(Error::new(
                ErrorKind::Busy,
                "this work graph is already running (on another thread, or its own work \
                 function called run); a plan runs once at a time, so make a second plan from \
                 the same graph to run both at once",
            ));
        }
        // A new run number, so that every flag (all older numbers) reads "not done". Before
        // the number wraps around, flags are cleared so that none can equal a future number.
        let epoch = self.epoch.load(Ordering::Relaxed);
        let epoch = if epoch == u8::MAX {
            self.done.iter().for_each(|d| d.store(0, Ordering::Relaxed));
            1
        } else {
            epoch + 1
        };
        self.epoch.store(epoch, Ordering::Relaxed);
        self.cursor.store(0, Ordering::Relaxed);
        self.ranks.iter().for_each(|r| {
            r.low.store(0, Ordering::Relaxed);
            r.claims.reset();
        });
        self.abort.store(false, Ordering::Relaxed);
        self.item_cost.start_run();
        Ok(Running(&self.running))
    }

    /// Runs the plan on `workers` loom threads (the model checks in tests/loom_work_graph.rs) as
    /// `Space::run_blocks` runs it (`run_pinned`): each rank on its own thread if that thread
    /// claims it first, else on the calling thread after rank 0. The claims are Relaxed, so the
    /// models check that the run orders its items by itself.
    #[cfg(loom)]
    pub fn run_on_loom_threads(
        self: &Arc<Self>,
        workers: usize,
        work: Arc<dyn Fn(usize) + Send + Sync>,
    ) {
        let _running = self.begin().expect("the plan is not running");
        let claims: Arc<Vec<AtomicBool>> =
            Arc::new((0..workers).map(|_| AtomicBool::new(false)).collect());
        let claim =
            |claims: &[AtomicBool], rank: usize| !claims[rank].swap(true, Ordering::Relaxed);
        let threads: Vec<_> = (1..workers)
            .map(|rank| {
                let plan = Arc::clone(self);
                let work = Arc::clone(&work);
                let claims = Arc::clone(&claims);
                loom::thread::spawn(move || {
                    if claim(&claims, rank) {
                        plan.worker(rank, workers, &*work);
                    }
                })
            })
            .collect();
        self.worker(0, workers, &*work);
        for rank in 1..workers {
            if claim(&claims, rank) {
                self.worker(rank, workers, &*work);
            }
        }
        threads.into_iter().for_each(|t| t.join().unwrap());
    }
}

impl std::fmt::Debug for WorkGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkGraph")
            .field("num_items", &self.num_items())
            .field("num_dependences", &self.graph.num_entries())
            .finish()
    }
}

/// Ends a run's claim on the plan, also when unwinding.
struct Running<'a>(&'a AtomicBool);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        // Release: the next run's Acquire sees this run's writes.
        self.0.store(false, Ordering::Release);
    }
}
