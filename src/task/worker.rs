//! A worker of a scheduler: one per thread of the execution space instance. It owns private ready
//! queues, a block cache and counters, which only its thread touches during a wait, and hands
//! tasks to idle workers that ask for one.
//!
//! The calling thread's worker is kept in a thread-local while a wait runs (`thread_worker`), so
//! that operations without a task context (future release, when_all through the scheduler) find
//! it.

use super::block_cache::BlockCache;
use super::header::{Access, TaskHeader};
use super::local_queue::LocalQueues;
use super::queue_guard::{Bracket, QueueGuard};
use super::ready_stack::ReadyStack;
use super::scheduler::Shared;
use super::statistics::{AliveDelta, Counters};
use super::team_task::ExecutionRecord;
use super::thread_worker;
use crate::cache_line::CachePadded;
use crate::exec::{Recruit, Team};
use crate::pool::MemoryPool;
use crate::thread_id;
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What only the worker's own thread touches (during a wait), or the waiting thread between
/// waits. In declaration order (`repr(C)`), so that `alive_room` and `bytes_room` stay apart:
/// side by side, their two additions on every release were merged into six vector
/// instructions.
#[repr(C)]
pub(crate) struct Owned {
    pub(crate) cache: BlockCache,
    pub(crate) counters: Counters,
    /// How entity operations synchronize during this wait.
    pub(crate) access: Access,
    /// Generation of the next entity this worker allocates.
    pub(crate) generation: u32,
    /// Depth of tasks run inside a spawn (002 §3.3.2 mitigation).
    pub(crate) nesting: u32,
    /// Change of the scheduler's live entity count not yet added to `Shared::alive`.
    pub(crate) alive_delta: AliveDelta,
    /// Likewise for `Shared::alive_bytes`.
    pub(crate) bytes_delta: i64,
    /// With `Access::Exclusive`, how far the live entity count is below its peak, kept here
    /// during the wait instead of the count (`Rooms`, `Place::alive_add`).
    pub(crate) alive_room: i64,
    /// Team tasks of this worker's team seen so far (members join each new one).
    pub(crate) team_seq: u64,
    /// Likewise `alive_room` for the live bytes.
    pub(crate) bytes_room: i64,
    /// The execution record of the single task this worker runs now (`NO_RECORD` otherwise,
    /// never null), for `ExecutionRecord::take_over_release`. (The context it runs is the
    /// thread's, in `thread_worker`.)
    pub(crate) record: *const ExecutionRecord,
    /// By rank, when this worker asked that worker for a task, while the request may still
    /// be pending (one per worker once it has asked). A request pending long means a worker
    /// that does not come back to the scheduler (`Worker::rescue`).
    pub(crate) asked: Vec<Option<std::time::Instant>>,
    /// Rescues in a row that found nothing to take (`Worker::wait_idle`): each doubles the
    /// time before the next attempt.
    pub(crate) rescue_misses: u32,
    /// The worker this one asks for a task next when it is idle (`Worker::ask_for_work`).
    pub(crate) next_victim: usize,
    /// Rank 0's, while it runs a wait alone: calls in the other workers (`Worker::recruit`).
    /// Null otherwise.
    pub(crate) recruit: *const Recruit<'static>,
}

/// `Owned::record` while the worker runs no single task: a record with no respawn request,
/// which nothing writes (only a running task's context requests a respawn, through its own
/// record), so that the release of a future reads the running record with no test for null
/// (callgrind, F(22): td_future_release 48 -> 46 instructions per node with one worker, 49 -> 47
/// with two).
pub(crate) static NO_RECORD: ExecutionRecord = ExecutionRecord::new();

/// `Worker::request` of rank 0 while it runs a wait alone: the other workers have not been
/// called in yet, and the first request-check that finds a second ready task calls them in
/// (`Worker::recruit`). Never a worker's rank + 1.
pub(crate) const RECRUIT: usize = usize::MAX;

#[repr(align(128))]
pub(crate) struct Worker {
    pub(crate) rank: usize,
    /// The thread running this worker's loop (`pthread_self`), 0 outside a wait. Lets a call
    /// without a task context find its worker without a thread-local, which costs a call to
    /// `__tls_get_addr` in a shared library.
    thread: AtomicUsize,
    /// Tasks other workers handed to this one at its request (`Worker::share_on_request`).
    /// Only this worker pops them, into its private queues. Alone on its lines, like
    /// `request`: the owner's looks at it stay in its own cache until a task arrives.
    pub(crate) mailbox: CachePadded<ReadyStack>,
    /// 1 + the rank of an idle worker that asks this one for a task, or 0 (`ask_for_work`);
    /// `RECRUIT` while rank 0 runs a wait alone.
    /// Alone on its lines (`CachePadded`), so that the owner's look at it, at every push and
    /// every task it runs, stays in its own cache until somebody asks.
    pub(crate) request: CachePadded<AtomicUsize>,
    /// The owner's brackets around its use of `queues` and the lock of a worker that rescues
    /// tasks from them (`queue_guard.rs`). Alone on its lines: the owner writes it at every
    /// use of its queues.
    pub(crate) guard: CachePadded<QueueGuard>,
    /// Whether the current wait calls this worker in (`laggards.rs`); set by the waiting
    /// thread before the wait, published by the opening of its block in `Recruit::only`.
    /// Alone on its lines: idle workers read it when they ask this one for a task
    /// (executor.rs, "How idle workers get work").
    pub(crate) takes_part: CachePadded<AtomicBool>,
    /// The team of one that single tasks see as their team.
    pub(crate) single_team: Team,
    /// The private ready queues: the owner's, in brackets of `guard` when other workers run,
    /// and a rescuer's while it holds `guard`'s lock.
    queues: UnsafeCell<LocalQueues>,
    owned: UnsafeCell<Owned>,
}

// SAFETY: `owned` is only touched by the worker's thread during a wait and by the waiting thread
// before and after it (the dispatch orders the two); `queues` likewise, and by a rescuer that
// holds `guard`'s lock while the owner is outside its brackets (`queue_guard.rs`); everything
// else is atomic or immutable.
unsafe impl Sync for Worker {}
unsafe impl Send for Worker {}

impl Worker {
    pub(crate) fn new(rank: usize, pool: &MemoryPool, cache_limit: u32, single_team: Team) -> Self {
        Worker {
            rank,
            thread: AtomicUsize::new(0),
            mailbox: CachePadded(ReadyStack::new()),
            request: CachePadded(AtomicUsize::new(0)),
            guard: CachePadded(QueueGuard::new()),
            takes_part: CachePadded(AtomicBool::new(true)),
            single_team,
            queues: UnsafeCell::new(LocalQueues::new()),
            owned: UnsafeCell::new(Owned {
                cache: BlockCache::new(pool, cache_limit),
                counters: Counters::default(),
                access: Access::Shared,
                generation: 0,
                nesting: 0,
                alive_delta: AliveDelta::default(),
                bytes_delta: 0,
                alive_room: 0,
                bytes_room: 0,
                team_seq: 0,
                record: &NO_RECORD,
                asked: Vec::new(),
                rescue_misses: 0,
                next_victim: rank,
                recruit: std::ptr::null(),
            }),
        }
    }

    /// The worker's private state.
    ///
    /// # Safety
    /// Only the worker's thread during a wait (or the waiting thread outside one), and the borrow
    /// must end before anything that may re-enter the scheduler (a task function, a destroy
    /// callback, a nested task run).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn owned(&self) -> &mut Owned {
        &mut *self.owned.get()
    }

    /// Whether the calling thread runs this worker's loop now.
    #[inline]
    pub(crate) fn is_current(&self) -> bool {
        // Relaxed: a thread only ever finds its own id here, which it stored itself.
        self.thread.load(Ordering::Relaxed) == thread_id::current()
    }

    #[inline]
    pub(crate) fn access(&self) -> Access {
        // SAFETY: a short read by the worker's thread.
        unsafe { self.owned().access }
    }

    /// The private queues.
    ///
    /// # Safety
    /// The worker's thread, inside a bracket (`bracket`) when other workers run (`Access::Shared`);
    /// or a rescuer holding `guard`'s lock. A short borrow, as for `owned`.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn queues(&self) -> &mut LocalQueues {
        &mut *self.queues.get()
    }

    /// A bracket around the owner's use of its queues when other workers run (`Access::Shared`),
    /// in which no rescuer touches them (`queue_guard.rs`); none with one worker. The worker's
    /// thread only, outside every other bracket: these brackets hold a few loads and stores of
    /// the queues and never nest (`QueueGuard::enter_outermost`).
    #[inline(always)]
    pub(crate) fn bracket(&self, access: Access) -> Option<Bracket<'_>> {
        (access == Access::Shared).then(|| self.guard.enter_outermost())
    }

    /// Pushes a ready task of priority index `p` onto the private queues. The worker's thread.
    #[inline(always)]
    pub(crate) fn local_push(&self, task: NonNull<TaskHeader>, p: usize, access: Access) {
        let _bracket = self.bracket(access);
        // SAFETY: the worker's thread, in a bracket where needed; no re-entry.
        unsafe { self.queues().push_index(task, p) }
    }

    #[inline]
    pub(crate) fn next_generation(&self) -> u32 {
        // SAFETY: as above.
        let owned = unsafe { self.owned() };
        owned.generation = owned.generation.wrapping_add(1);
        owned.generation
    }
}

/// The calling thread's scheduler and worker while it runs a wait's loop (nulls outside one).
#[inline(always)]
pub(crate) fn current() -> (*const Shared, *const Worker) {
    thread_worker::get()
}

/// The context of the task function the calling thread runs now, the innermost one when tasks
/// run inside a spawn (`thread_worker::not_running()` when it runs none, never null): what
/// `TaskContext::running` compares with. The thread's, not its worker's: a thread serves one
/// worker at a time, and an inner wait (`CurrentWorker`) saves and restores it.
#[inline(always)]
pub(crate) fn running_context() -> *const () {
    thread_worker::context()
}

/// Makes `context` the calling thread's running context; returns the one it replaces.
#[inline(always)]
pub(crate) fn replace_running_context(context: *const ()) -> *const () {
    let outer = thread_worker::context();
    thread_worker::set_context(context);
    outer
}

/// Makes `context` the calling thread's running context.
#[inline(always)]
pub(crate) fn set_running_context(context: *const ()) {
    thread_worker::set_context(context)
}

/// Whether the calling thread runs a task function now.
#[inline(always)]
pub(crate) fn runs_task() -> bool {
    running_context() != thread_worker::not_running()
}

/// Marks the calling thread as `worker` of `shared` until dropped, running no task function
/// yet.
pub(crate) struct CurrentWorker<'a> {
    previous: (*const Shared, *const Worker),
    /// The running context of the task that this wait's thread ran before it (a task of
    /// another scheduler that waits), if any.
    previous_context: *const (),
    worker: &'a Worker,
}

impl<'a> CurrentWorker<'a> {
    pub(crate) fn enter(shared: &Shared, worker: &'a Worker) -> CurrentWorker<'a> {
        let previous = thread_worker::replace((shared as *const Shared, worker as *const Worker));
        let previous_context = replace_running_context(thread_worker::not_running());
        worker.thread.store(thread_id::current(), Ordering::Relaxed);
        shared.threads.insert(thread_id::current(), worker.rank);
        CurrentWorker {
            previous,
            previous_context,
            worker,
        }
    }
}

impl Drop for CurrentWorker<'_> {
    fn drop(&mut self) {
        self.worker.thread.store(0, Ordering::Relaxed);
        set_running_context(self.previous_context);
        thread_worker::replace(self.previous);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Worker;
    use std::mem::{offset_of, size_of};
    use std::ops::RangeInclusive;

    /// The 128-byte units (two 64-byte lines, which the processor's adjacent-line prefetch
    /// moves together) that a field at `offset` of `size` bytes touches.
    fn units(offset: usize, size: usize) -> RangeInclusive<usize> {
        offset / 128..=(offset + size - 1) / 128
    }

    fn overlap(a: &RangeInclusive<usize>, b: &RangeInclusive<usize>) -> bool {
        a.start() <= b.end() && b.start() <= a.end()
    }

    /// The size of the field that `get` reaches.
    fn size_of_field<F>(_get: fn(&Worker) -> &F) -> usize {
        size_of::<F>()
    }

    /// A field of `Worker`: its name and the units it touches.
    macro_rules! field {
        ($f:ident) => {
            (
                stringify!($f),
                units(offset_of!(Worker, $f), size_of_field(|w| &w.$f)),
            )
        };
    }

    /// What other workers read during a wait (executor.rs, "How idle workers get work") lies
    /// apart from what the owner writes at every task, so that their reads cost the owner no
    /// miss.
    #[test]
    fn what_other_workers_read_lies_apart_from_the_owners_private_state() {
        let read_by_others = [
            field!(mailbox),
            field!(request),
            field!(guard),
            field!(takes_part),
        ];
        let private = [field!(queues), field!(owned)];
        for (name, shared) in &read_by_others {
            for (hot, lines) in &private {
                assert!(
                    !overlap(shared, lines),
                    "`{name}` ({shared:?}) shares a 128-byte unit with `{hot}` ({lines:?})"
                );
            }
        }
    }
}
