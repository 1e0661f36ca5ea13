//! The scheduler (000 §3.2.2): its state shared by workers and host threads, creation, `wait`,
//! statistics, and the lifetime of that state.
//!
//! Lifetime: tasks and futures point at the scheduler's state, and a future may outlive the last
//! `Scheduler` handle (000 §2.3.1: a future keeps its task's memory). `alive` counts the live
//! entities plus one for the handles; whoever brings it to zero (the last handle, or the release
//! of the last entity after that) frees the state, and with it the reference to the pool.
//!
//! Host threads and waits: while a wait runs, only its workers touch the scheduler's entities
//! (with one worker, through plain loads and stores). Every operation from another thread enters
//! a foreign section first, which fails with `Busy` while a wait runs; a wait starts only after
//! the foreign sections in progress have ended (a Dekker handshake on `wait_running` and
//! `foreign_ops`, both SeqCst: either the wait sees the section's count, or the section sees the
//! wait's flag).

use super::block_cache;
use super::header::Access;
use super::laggards::{Laggards, LostCoreFlags};
use super::ready_stack::ReadyStack;
use super::statistics::{AliveDelta, SchedulerStatistics, Totals};
use super::team_task::TeamState;
use super::thread_table::ThreadTable;
use super::worker::{current, Worker};
use crate::cache_line::CachePadded;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Latecomers, Space, SpaceKind, Team};
use crate::pool::MemoryPool;
use crate::topology::Topology;
use std::any::Any;
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How to build a scheduler.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Threads per team for team tasks: 0 = from the topology (hardware threads per core when
    /// the space uses every hardware thread, else 1); otherwise it must divide the space's
    /// thread count (002 §2.3, the peer review's request).
    pub team_size: usize,
    /// Bytes of team-shared scratch memory each team (and each single task) may use.
    pub team_scratch_bytes: usize,
}

/// Low bits of `Shared::idle`: idle workers; the rest: an epoch bumped whenever one leaves.
pub(crate) const IDLE_COUNT_MASK: u64 = 0xffff;
pub(crate) const IDLE_EPOCH_ONE: u64 = 1 << 16;
/// The entry of `Shared::shared_ready` that counts the tasks of every shared stack.
pub(crate) const ANY_READY: usize = 3;

pub(crate) struct Shared {
    pub(crate) pool: Arc<MemoryPool>,
    pub(crate) space: Space,
    pub(crate) workers: Box<[Worker]>,
    /// The worker each thread of a running wait runs.
    pub(crate) threads: ThreadTable,
    pub(crate) team_size: usize,
    /// How long an idle worker of a wait spins before it yields its core (`Space::idle_spin`,
    /// `Worker::wait_idle`).
    pub(crate) idle_spin: std::time::Duration,
    pub(crate) teams: Box<[TeamState]>,
    /// Dependences one when_all block holds (larger when_alls become trees).
    pub(crate) when_all_per_block: usize,
    /// The largest task block: the pool's largest block, at most u32::MAX (the header's sizes).
    pub(crate) max_task_bytes: usize,
    /// Single tasks spawned from the host or made ready by a host-side operation.
    pub(crate) injection: [ReadyStack; 3],
    /// Ready team tasks, taken by team leaders.
    pub(crate) team_queue: [ReadyStack; 3],
    /// Idle workers and the epoch (see `executor.rs` for the termination argument).
    pub(crate) idle: CachePadded<AtomicU64>,
    /// Tasks in the injection stacks, per priority: a hint that lets workers
    /// skip those stacks with one load (it may lag the stacks briefly, never for good). Entry
    /// `ANY_READY` is the sum of the others and of `team_ready`, changed after each of them (a
    /// hint too): a worker whose private queues suffice learns with one load that it need not
    /// look anywhere else. It shares the line of the counts that change with it.
    pub(crate) shared_ready: CachePadded<[AtomicIsize; 4]>,
    /// Tasks in the team-task stacks, per priority, likewise.
    pub(crate) team_ready: CachePadded<[AtomicIsize; 3]>,
    /// Set when a wait's DAG is done.
    pub(crate) done: CachePadded<AtomicBool>,
    /// The rank of the worker other than rank 0 that left the current wait last (0 for none).
    pub(crate) last_to_leave: AtomicUsize,
    /// The workers of the current wait that lost their core.
    pub(crate) lost_cores: LostCoreFlags,
    /// Whether threads that lose their core count (`laggards.rs`): as `Laggards::enabled`, on
    /// a pinned space (unpinned threads move to free CPUs, and where there are more threads
    /// than CPUs they wait for one by design).
    pub(crate) tracks_lost_cores: bool,
    /// When the current wait started, in nanoseconds after `epoch`; `Laggards::enabled` only.
    pub(crate) wait_started: AtomicU64,
    pub(crate) epoch: Instant,
    /// Workers late to leave a wait, left out of the next ones (`laggards.rs`).
    pub(crate) laggards: Mutex<Laggards>,
    /// Tests: the rank of a worker that leaves every wait 3 ms late (0 for none).
    #[cfg(test)]
    pub(crate) leave_late: AtomicUsize,
    /// Tests: late exits are not counted (`laggards.rs`), so that lost cores alone are.
    #[cfg(test)]
    pub(crate) ignore_late_exits: AtomicBool,
    /// Tests: only the workers' lost cores count, or only rank 0's, so that a test of one is
    /// not decided by the other on a loaded machine.
    #[cfg(test)]
    pub(crate) only_workers_lose_cores: AtomicBool,
    #[cfg(test)]
    pub(crate) only_rank_0_loses_cores: AtomicBool,
    wait_running: AtomicBool,
    foreign_ops: AtomicUsize,
    /// Live entities plus one while a handle exists.
    pub(crate) alive: AtomicI64,
    pub(crate) peak_alive: AtomicI64,
    /// Bytes of the live entities' blocks, and the most there were.
    pub(crate) alive_bytes: AtomicI64,
    pub(crate) peak_bytes: AtomicI64,
    /// The pool's smallest block size less one (`block_cache::block_lg2`).
    pub(crate) min_block_mask: usize,
    pub(crate) totals: Totals,
    pub(crate) host_generation: AtomicU32,
    /// The first panic of a task closure in the current wait, rethrown by `wait`.
    pub(crate) panic: Mutex<Option<Box<dyn Any + Send>>>,
    stuck_reported: Mutex<(u64, u64)>,
    supports_teams: bool,
    /// The C handle of this scheduler, for `td_task_scheduler` (not a reference).
    user_handle: AtomicPtr<c_void>,
}

/// An operation from a thread that is not one of the scheduler's workers in a running wait.
pub(crate) struct ForeignGuard<'a>(&'a Shared);

impl Drop for ForeignGuard<'_> {
    fn drop(&mut self) {
        // Release: what the section did happens-before a wait that sees the count drop.
        self.0.foreign_ops.fetch_sub(1, Ordering::Release);
    }
}

impl Shared {
    pub(crate) fn concurrency(&self) -> usize {
        self.workers.len()
    }

    /// Before a wait: which workers it calls in (`laggards.rs`), counted in the statistics.
    /// Returns the rank on whose CPU the waiting thread runs the wait: 0 for its own, or the
    /// stand-in that sits out while rank 0 is displaced (`Laggards::stand_in`).
    fn choose_workers(&self, laggards: &Laggards) -> usize {
        let start = Instant::now();
        let mut sat_out = 0;
        for w in self.workers.iter() {
            let takes_part = laggards.takes_part(w.rank, start);
            sat_out += u64::from(!takes_part);
            // Relaxed: the call that brings the workers in publishes it (`Worker::recruit`).
            w.takes_part.store(takes_part, Ordering::Relaxed);
        }
        self.totals
            .workers_sat_out
            .fetch_add(sat_out, Ordering::Relaxed);
        self.last_to_leave.store(0, Ordering::Relaxed);
        let started = start.duration_since(self.epoch).as_nanos() as u64;
        // Relaxed: the call that brings the workers in publishes it.
        self.wait_started.store(started, Ordering::Relaxed);
        laggards.stand_in(start).unwrap_or(0)
    }

    /// How long the current wait has run (`wait_started`), for `laggards::lost_core`.
    pub(crate) fn wait_time(&self) -> Duration {
        // Relaxed: written before the call that brought the workers in.
        let started = self.wait_started.load(Ordering::Relaxed);
        Duration::from_nanos((self.epoch.elapsed().as_nanos() as u64).saturating_sub(started))
    }

    /// Starts an operation from outside the scheduler's workers; `Busy` while a wait runs.
    pub(crate) fn enter_foreign(&self, what: &str) -> Result<ForeignGuard<'_>> {
        self.foreign_ops.fetch_add(1, Ordering::SeqCst);
        if self.wait_running.load(Ordering::SeqCst) {
            self.foreign_ops.fetch_sub(1, Ordering::SeqCst);
            return Err(Error::new(
                ErrorKind::Busy,
                format!(
                    "{what}: td_wait is running on this scheduler; while it runs only its tasks \
                     may spawn, create when_alls and retain or release its futures; call this \
                     after td_wait returns, or from inside a task"
                ),
            ));
        }
        Ok(ForeignGuard(self))
    }

    /// The worker the calling thread runs in a wait of this scheduler, if it does.
    #[inline(always)]
    pub(crate) fn current_worker(&self) -> Option<&Worker> {
        if let [only] = &*self.workers {
            return only.is_current().then_some(only);
        }
        // The innermost wait the thread serves is usually this one; the table also finds an
        // outer one (a task of this scheduler that waits on another).
        let (shared, worker) = super::worker::current();
        if std::ptr::eq(shared, self) {
            // SAFETY: the thread serves this wait as `worker`, one of `self.workers`.
            return Some(unsafe { &*worker });
        }
        let rank = self.threads.find(crate::thread_id::current())?;
        self.workers.get(rank)
    }

    pub(crate) fn supports_teams(&self) -> bool {
        self.supports_teams
    }

    /// Adds a worker's change of the live counts and raises the peaks.
    pub(crate) fn flush_alive(&self, delta: AliveDelta, bytes: i64) {
        let delta = delta.count();
        if delta != 0 {
            let after = self.alive.fetch_add(delta, Ordering::AcqRel) + delta;
            self.peak_alive.fetch_max(after, Ordering::Relaxed);
        }
        if bytes != 0 {
            let after = self.alive_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
            self.peak_bytes.fetch_max(after, Ordering::Relaxed);
        }
    }

    /// Frees the state once nothing uses it (see the module comment).
    ///
    /// # Safety
    /// The caller brought `alive` to zero and nobody references the state any more.
    pub(crate) unsafe fn free(this: NonNull<Shared>) {
        drop(Box::from_raw(this.as_ptr()));
    }

    pub(crate) fn user_handle(&self) -> *mut c_void {
        self.user_handle.load(Ordering::Relaxed)
    }

    pub(crate) fn record_panic(&self, payload: Box<dyn Any + Send>) {
        let mut slot = self.panic.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(payload);
    }
}

/// Owns one count of `alive` for all handles; frees the state when it is the last user.
struct Owner {
    shared: NonNull<Shared>,
}

// SAFETY: the state is Sync (atomics, and per-worker parts touched by their threads only).
unsafe impl Send for Owner {}
unsafe impl Sync for Owner {}
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Drop for Owner {
    fn drop(&mut self) {
        // SAFETY: the state lives while `alive` > 0, and this owner's count is still in it. No
        // wait runs (a wait borrows an owner), so no worker changes `alive` meanwhile.
        unsafe {
            // AcqRel: the freeing thread sees every use of the state (see `Place::alive_add`).
            if self.shared.as_ref().alive.fetch_sub(1, Ordering::AcqRel) == 1 {
                Shared::free(self.shared);
            }
        }
    }
}

/// A task scheduler (000 §3.2.2): spawns tasks into a memory pool and runs them on an execution
/// space instance. Clones share the scheduler.
///
/// Thread safety: spawn, when_all and futures may be used from any thread while no `wait` runs,
/// and from its tasks while one does (from other threads they then fail with `Busy`); `wait` runs
/// on the space's control thread (any thread for the Serial space).
#[derive(Clone)]
pub struct Scheduler {
    owner: Arc<Owner>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = self.shared();
        f.debug_struct("Scheduler")
            .field("workers", &shared.concurrency())
            .field("team_size", &shared.team_size)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// A scheduler that runs tasks on `space` and allocates them from `pool`.
    ///
    /// Errors: `InvalidArgument` for a team size that does not divide the space's threads, or a
    /// pool whose largest block cannot hold a task; `OutOfMemory` for team scratch memory.
    pub fn new(space: Space, pool: Arc<MemoryPool>, config: SchedulerConfig) -> Result<Scheduler> {
        let n = space.concurrency();
        if n > 1 {
            // Rescues need it; it takes milliseconds, so it must not wait for the first rescue.
            super::queue_guard::register_in_background();
        }
        let team_size = team_size(&space, config.team_size)?;
        let pinned = space.is_pinned();
        let smallest = super::header::task_bytes(0, 0).unwrap_or(usize::MAX);
        if pool.max_block_size() < smallest {
            return Err(Error::invalid_argument(format!(
                "a scheduler's pool must hold blocks of at least {smallest} bytes (a task's \
                 header), but its largest block is {} bytes; create the pool with a larger \
                 max_block_alloc_size",
                pool.max_block_size()
            )));
        }
        let layout = pool.layout();
        let min_block_mask = (1 << layout.min_block_lg2) - 1;
        let max_block = pool.max_block_size();
        let cache_limit = block_cache::limit_per_size(pool.capacity(), layout.min_block_lg2, n);
        let workers = (0..n)
            .map(|rank| {
                let team = Team::new(1, config.team_scratch_bytes)?;
                Ok(Worker::new(rank, &pool, cache_limit, team))
            })
            .collect::<Result<Box<[Worker]>>>()?;
        let teams = (0..n / team_size)
            .map(|_| TeamState::new(team_size, config.team_scratch_bytes))
            .collect::<Result<Box<[TeamState]>>>()?;
        let shared = Box::new(Shared {
            pool,
            supports_teams: space.kind() == SpaceKind::Threads,
            idle_spin: space.idle_spin(),
            space,
            threads: ThreadTable::new(n),
            workers,
            team_size,
            teams,
            max_task_bytes: max_block.min(u32::MAX as usize),
            when_all_per_block: (max_block - super::header::HEADER_BYTES)
                / std::mem::size_of::<*mut super::header::TaskHeader>(),
            injection: std::array::from_fn(|_| ReadyStack::new()),
            team_queue: std::array::from_fn(|_| ReadyStack::new()),
            idle: CachePadded(AtomicU64::new(0)),
            shared_ready: CachePadded(std::array::from_fn(|_| AtomicIsize::new(0))),
            team_ready: CachePadded(std::array::from_fn(|_| AtomicIsize::new(0))),
            done: CachePadded(AtomicBool::new(false)),
            last_to_leave: AtomicUsize::new(0),
            lost_cores: LostCoreFlags::new(n),
            tracks_lost_cores: n > 1 && team_size == 1 && pinned,
            wait_started: AtomicU64::new(0),
            epoch: Instant::now(),
            laggards: Mutex::new(Laggards::new(n, n > 1 && team_size == 1)),
            #[cfg(test)]
            leave_late: AtomicUsize::new(0),
            #[cfg(test)]
            ignore_late_exits: AtomicBool::new(false),
            #[cfg(test)]
            only_workers_lose_cores: AtomicBool::new(false),
            #[cfg(test)]
            only_rank_0_loses_cores: AtomicBool::new(false),
            wait_running: AtomicBool::new(false),
            foreign_ops: AtomicUsize::new(0),
            alive: AtomicI64::new(1),
            peak_alive: AtomicI64::new(1),
            alive_bytes: AtomicI64::new(0),
            peak_bytes: AtomicI64::new(0),
            min_block_mask,
            totals: Totals::default(),
            host_generation: AtomicU32::new(0),
            panic: Mutex::new(None),
            stuck_reported: Mutex::new((0, 0)),
            user_handle: AtomicPtr::new(std::ptr::null_mut()),
        });
        Ok(Scheduler {
            owner: Arc::new(Owner {
                shared: NonNull::from(Box::leak(shared)),
            }),
        })
    }

    #[inline]
    pub(crate) fn shared(&self) -> &Shared {
        // SAFETY: the owner's count keeps the state alive.
        unsafe { self.owner.shared.as_ref() }
    }

    /// Threads that run tasks (the space's concurrency).
    pub fn concurrency(&self) -> usize {
        self.shared().concurrency()
    }

    /// Threads in each team that runs team tasks.
    pub fn team_size(&self) -> usize {
        self.shared().team_size
    }

    /// The pool tasks are allocated from.
    pub fn pool(&self) -> &Arc<MemoryPool> {
        &self.shared().pool
    }

    /// Records the C handle that wraps this scheduler (not a reference), for td_task_scheduler.
    #[doc(hidden)]
    pub fn set_user_handle(&self, handle: *mut c_void) {
        self.shared().user_handle.store(handle, Ordering::Relaxed);
    }

    /// Runs every spawned task to completion, including the tasks they spawn, with the calling
    /// thread as worker 0 (000 §3.2.2 `wait`).
    ///
    /// Errors: `WrongThread` from inside a task, or from a thread that is not the space's control
    /// thread; `Busy` while another wait runs on this scheduler or its space; `Deadlock` when
    /// tasks remain that wait on futures that can never complete (they are reported once).
    /// A panic of a task closure is rethrown here after the DAG has finished.
    pub fn wait(&self) -> Result<()> {
        let shared = self.shared();
        if !current().0.is_null() {
            return Err(Error::new(
                ErrorKind::WrongThread,
                "td_wait: called from inside a task; a task cannot wait (000 §2.2.1): respawn it \
                 with a dependence on the futures it needs instead",
            ));
        }
        if shared.wait_running.swap(true, Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::Busy,
                "td_wait: another td_wait is already running on this scheduler; wait for it to \
                 return",
            ));
        }
        struct Running<'a>(&'a Shared);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                self.0.wait_running.store(false, Ordering::SeqCst);
            }
        }
        let _running = Running(shared);
        // Host operations that started before the flag was set finish first.
        while shared.foreign_ops.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
        let access = if shared.concurrency() == 1 {
            Access::Exclusive
        } else {
            Access::Shared
        };
        for w in shared.workers.iter() {
            // SAFETY: no worker runs yet; the dispatch publishes these writes to them.
            unsafe {
                w.owned().access = access;
                if access == Access::Exclusive {
                    let rooms = shared.begin_rooms();
                    w.owned().alive_room = rooms.alive;
                    w.owned().bytes_room = rooms.bytes;
                }
            }
        }
        shared.done.store(false, Ordering::Relaxed);
        let epoch = shared.idle.load(Ordering::Relaxed) & !IDLE_COUNT_MASK;
        // Every worker but rank 0 starts idle: rank 0 starts alone and calls the others in when
        // a second task is ready (executor.rs, "Starting alone").
        let others = shared.workers.len() as u64 - 1;
        shared.idle.store(epoch | others, Ordering::Relaxed);
        struct ClearThreads<'a>(&'a ThreadTable);
        impl Drop for ClearThreads<'_> {
            fn drop(&mut self) {
                // Every worker has left its loop (also when one panicked): no task runs any more.
                self.0.clear();
            }
        }
        let mut laggards = shared.laggards.lock().unwrap_or_else(|p| p.into_inner());
        // Not with one worker, nor with teams of several: no clock read in their waits.
        let track = laggards.enabled();
        let home = if track {
            shared.choose_workers(&laggards)
        } else {
            0
        };
        let lead_left = Cell::new(None);
        {
            let _clear = ClearThreads(&shared.threads);
            shared.space.run_on_all_lazily(
                home,
                Latecomers::Skip,
                &|w| shared.workers[w.rank].run_loop(shared, true),
                &|recruit| {
                    shared.workers[0].run_lead(shared, recruit);
                    if track {
                        lead_left.set(Some(Instant::now()));
                    }
                },
            )?;
        }
        if let Some(left) = lead_left.get() {
            // After the dispatch joined every worker it called in: Relaxed suffices.
            let now = Instant::now();
            let last = shared.last_to_leave.load(Ordering::Relaxed);
            let tail = now.duration_since(left);
            #[cfg(test)]
            let tail = if shared.ignore_late_exits.load(Ordering::Relaxed) {
                std::time::Duration::ZERO
            } else {
                tail
            };
            laggards.record(last, tail, now);
            #[cfg(test)]
            let (rank_0, workers) = (
                !shared.only_workers_lose_cores.load(Ordering::Relaxed),
                !shared.only_rank_0_loses_cores.load(Ordering::Relaxed),
            );
            #[cfg(not(test))]
            let (rank_0, workers) = (true, true);
            if rank_0 && shared.tracks_lost_cores && super::laggards::lost_core(shared.wait_time())
            {
                laggards.record_lost_core(0, now);
            }
            shared
                .lost_cores
                .take(workers, |rank| laggards.record_lost_core(rank, now));
        }
        drop(laggards);
        shared.totals.waits.fetch_add(1, Ordering::Relaxed);
        let panic = shared
            .panic
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
        shared.check_deadlock()
    }

    /// The scheduler's statistics. `Busy` while a wait runs.
    pub fn statistics(&self) -> Result<SchedulerStatistics> {
        let shared = self.shared();
        let _guard = shared.enter_foreign("td_scheduler_statistics")?;
        let t = &shared.totals;
        let get = Totals::get;
        // Both counts include the handles' one.
        let alive = shared.alive.load(Ordering::Acquire) - 1;
        let peak = shared.peak_alive.load(Ordering::Relaxed) - 1;
        Ok(SchedulerStatistics {
            tasks_spawned: get(&t.spawned),
            task_executions: get(&t.executions),
            tasks_respawned: get(&t.respawned),
            tasks_completed: get(&t.tasks_completed),
            when_alls_created: get(&t.when_alls),
            allocation_failures: get(&t.allocation_failures),
            steals: get(&t.steals),
            alive: alive.max(0) as u64,
            peak_alive: peak.max(alive).max(0) as u64,
            peak_bytes: shared.peak_bytes.load(Ordering::Relaxed).max(0) as u64,
            pool_high_water_bytes: shared.pool.usage_statistics().high_water_bytes,
            waits: get(&t.waits),
            workers_sat_out: get(&t.workers_sat_out),
        })
    }
}

impl Shared {
    /// After a wait: entities that are still incomplete can never complete.
    fn check_deadlock(&self) -> Result<()> {
        let t = &self.totals;
        let tasks = Totals::get(&t.spawned) - Totals::get(&t.tasks_completed);
        let when_alls = Totals::get(&t.when_alls) - Totals::get(&t.when_alls_completed);
        let mut reported = self
            .stuck_reported
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if (tasks, when_alls) == *reported {
            return Ok(());
        }
        let earlier = *reported;
        *reported = (tasks, when_alls);
        let mut message = format!(
            "td_wait: the task DAG can make no more progress: {tasks} task(s) and {when_alls} \
             when_all(s) wait on futures that can never complete, so they never run. A \
             dependence cycle causes this, e.g. a task that respawns with a dependence on a task \
             that waits for it, or on a when_all of its own future. They keep their memory and \
             their destroy callbacks do not run."
        );
        if earlier != (0, 0) {
            message += &format!(
                " ({} task(s) and {} when_all(s) of them were reported by an earlier td_wait.)",
                earlier.0, earlier.1
            );
        }
        Err(Error::new(ErrorKind::Deadlock, message))
    }
}

/// The team size for `requested` (0 = from the topology) on `space`.
fn team_size(space: &Space, requested: usize) -> Result<usize> {
    let n = space.concurrency();
    if requested == 0 {
        let topo = Topology::detect();
        let per_core = (topo.hardware_threads / topo.cores.max(1)).max(1);
        // Teams are consecutive ranks; they share a core only when the space has every hardware
        // thread of the machine, and only then are hardware-thread teams meaningful.
        let uses_all = space.kind() == SpaceKind::Threads && n == topo.hardware_threads;
        return Ok(if uses_all && n % per_core == 0 {
            per_core
        } else {
            1
        });
    }
    if requested > n || n % requested != 0 {
        return Err(Error::invalid_argument(format!(
            "team_size is {requested}, but it must divide the {n} thread(s) of the scheduler's \
             space (teams are groups of consecutive threads); pass a divisor of {n}, or 0 for \
             the topology's choice"
        )));
    }
    Ok(requested)
}
