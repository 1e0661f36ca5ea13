//! The work-graph plan (000 §3.3.1 `WorkGraphPolicy`): made once from a graph, it allocates and
//! initializes everything a run needs (000 §2.4.1), so that it can run any number of times
//! without allocating.

use super::acyclic::dag_shape;
use super::crs::Crs;
use super::item_state::{ItemState, NO_ITEM};
use super::ready_stack::ReadyStack;
use crate::cache_line::CachePadded;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::Space;
use crate::priority::Priority;
use crate::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::ops::Range;
use std::sync::Arc;

/// Priority levels (000 §2.4.2: High, Regular, Low).
pub(super) const LEVELS: usize = Priority::ALL.len();

/// A work graph ready to run: the dependence graph, the per-item waiting counts, the items that
/// start ready (grouped by priority), and the ready stacks of the workers.
///
/// `run` calls the work function once for each item, each F(j) after every F(i) it executes
/// after has returned. One run at a time; runs reuse everything allocated here.
pub struct WorkGraph {
    pub(super) graph: Arc<Crs>,
    pub(super) items: Box<[ItemState]>,
    /// Per item, the item below it on the ready stack that holds it (`ready_stack`).
    pub(super) links: Box<[AtomicU32]>,
    /// Per item, its dense priority level (0 = the highest level that has items); empty when
    /// the graph has one level.
    pub(super) item_levels: Box<[u8]>,
    /// Items with no predecessor, level by level (highest first), and within a level by
    /// decreasing height: the start of the longest remaining path first, as list schedulers
    /// do, so long chains start early and workers meet the ends of chains late.
    pub(super) roots: Box<[u32]>,
    /// Where each level's roots are in `roots`; only the first `levels` are used.
    pub(super) root_ranges: [Range<usize>; LEVELS],
    /// Number of priority levels that have items; 1 lets the workers skip level checks.
    pub(super) levels: usize,
    /// The ready stacks, one per priority level in each slot. A worker pushes onto the slot of
    /// its rank modulo the number of slots; with more workers than slots, workers share a slot,
    /// which is correct (the stacks take any number of pushers and poppers) if slower.
    pub(super) stacks: Box<[CachePadded<[ReadyStack; LEVELS]>]>,
    /// Next root to claim, per level.
    pub(super) cursors: [CachePadded<AtomicUsize>; LEVELS],
    /// Items completed in this run, as reported by workers that ran out of local work.
    pub(super) done: CachePadded<AtomicUsize>,
    /// Set when a worker unwinds from a panicking work function, so the others stop waiting.
    pub(super) abort: AtomicBool,
    /// True while a run is in progress (one at a time).
    running: AtomicBool,
    /// True when the previous run ended early: waiting counts and stacks need a reset.
    dirty: AtomicBool,
}

/// Ready-stack slots for a plan: one per hardware thread, at least 16 so that test pools larger
/// than the machine still get a slot per worker.
fn stack_slots() -> usize {
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
    /// its length) and that `priorities` has N entries (`InvalidArgument`). Allocates about
    /// 16 bytes per item (17 with several priority levels); the plan shares `graph`.
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
        let priority = |i: usize| priorities.map_or(Priority::Regular, |p| p[i]);

        // Dense levels: the levels that have items, highest first.
        let mut present = [false; LEVELS];
        (0..n).for_each(|i| present[priority(i).index()] = true);
        let mut dense = [0u8; LEVELS];
        let mut levels = 0;
        for (p, &is_present) in present.iter().enumerate() {
            dense[p] = levels as u8;
            levels += usize::from(is_present);
        }
        let level = |i: usize| dense[priority(i).index()];

        let mut items = Vec::new();
        items
            .try_reserve_exact(n)
            .map_err(|_| out_of_memory("the item states", n))?;
        items.extend(shape.indegree.iter().map(|&d| ItemState::new(d)));
        let item_levels: Box<[u8]> = if levels > 1 {
            (0..n).map(level).collect()
        } else {
            Box::new([])
        };

        // Roots sorted by (level, decreasing height, index): a counting sort on a key that
        // orders level first, then height from the tallest.
        let tallest = shape.height.iter().copied().max().unwrap_or(0) as usize;
        let key = |i: usize| level(i) as usize * (tallest + 1) + tallest - shape.height[i] as usize;
        let is_root = |i: &usize| shape.indegree[*i] == 0;
        let mut starts = vec![0usize; LEVELS * (tallest + 1) + 1];
        for i in (0..n).filter(is_root) {
            starts[key(i) + 1] += 1;
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        let mut root_ranges: [Range<usize>; LEVELS] = Default::default();
        for (p, range) in root_ranges.iter_mut().enumerate() {
            *range = starts[p * (tallest + 1)]..starts[(p + 1) * (tallest + 1)];
        }
        let mut roots = vec![0u32; starts[starts.len() - 1]];
        for i in (0..n).filter(is_root) {
            let slot = &mut starts[key(i)];
            roots[*slot] = i as u32;
            *slot += 1;
        }

        Ok(WorkGraph {
            graph,
            items: items.into_boxed_slice(),
            links: (0..n).map(|_| AtomicU32::new(NO_ITEM)).collect(),
            item_levels,
            roots: roots.into_boxed_slice(),
            root_ranges,
            levels: levels.max(1),
            stacks: (0..stack_slots())
                .map(|_| CachePadded(std::array::from_fn(|_| ReadyStack::new())))
                .collect(),
            cursors: std::array::from_fn(|_| CachePadded(AtomicUsize::new(0))),
            done: CachePadded(AtomicUsize::new(0)),
            abort: AtomicBool::new(false),
            running: AtomicBool::new(false),
            dirty: AtomicBool::new(false),
        })
    }

    /// The dependence graph this plan runs.
    pub fn graph(&self) -> &Arc<Crs> {
        &self.graph
    }

    /// N, the number of work items.
    pub fn num_items(&self) -> usize {
        self.items.len()
    }

    /// Runs the work graph on `space`: every thread of the space takes ready items until all N
    /// items have run. `work(i)` runs once for each item `i`, concurrently on several threads,
    /// and F(j) begins only after F(i) has returned for every dependence "j after i".
    ///
    /// Allocates nothing. Fails without running anything with `Busy` when this plan is running
    /// already (on another thread, or `work` calling `run` on it) or the space is busy, and with
    /// `WrongThread` when the caller is not the space's control thread. A panic in `work` stops
    /// the run once the other workers run out of ready items, and is resumed on the caller; the
    /// plan stays usable.
    pub fn run<F: Fn(usize) + Sync>(&self, space: &Space, work: F) -> Result<()> {
        let _running = self.begin()?;
        let result = space.run_on_all(&|w| {
            if w.size == 1 {
                self.worker::<false, F>(0, 1, &work);
            } else {
                self.worker::<true, F>(w.rank, w.size, &work);
            }
        });
        // Reached only without a panic; a refused dispatch ran nothing.
        self.dirty.store(false, Ordering::Relaxed);
        result
    }

    /// Claims the plan for a run and resets what a run starts from.
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
        if self.dirty.load(Ordering::Relaxed) {
            self.items.iter().for_each(ItemState::reset);
            self.stacks
                .iter()
                .flat_map(|s| s.0.iter())
                .for_each(ReadyStack::clear);
        }
        for (cursor, range) in self.cursors.iter().zip(&self.root_ranges) {
            cursor.store(range.start, Ordering::Relaxed);
        }
        self.done.store(0, Ordering::Relaxed);
        self.abort.store(false, Ordering::Relaxed);
        // Until the run returns normally: a panic leaves counts and stacks mid-run.
        self.dirty.store(true, Ordering::Relaxed);
        Ok(Running(&self.running))
    }

    /// Runs the plan on `workers` loom threads (the model checks in tests/loom_work_graph.rs).
    #[cfg(loom)]
    pub fn run_on_loom_threads(
        self: &Arc<Self>,
        workers: usize,
        work: Arc<dyn Fn(usize) + Send + Sync>,
    ) {
        let _running = self.begin().expect("the plan is not running");
        let threads: Vec<_> = (1..workers)
            .map(|rank| {
                let plan = Arc::clone(self);
                let work = Arc::clone(&work);
                loom::thread::spawn(move || plan.worker::<true, _>(rank, workers, &*work))
            })
            .collect();
        self.worker::<true, _>(0, workers, &*work);
        threads.into_iter().for_each(|t| t.join().unwrap());
        self.dirty.store(false, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for WorkGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkGraph")
            .field("num_items", &self.num_items())
            .field("num_dependences", &self.graph.num_entries())
            .field("roots", &self.roots.len())
            .field("levels", &self.levels)
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

#[cold]
fn out_of_memory(what: &str, n: usize) -> Error {
    Error::new(
        ErrorKind::OutOfMemory,
        format!("no memory for {what} of {n} work items"),
    )
}
