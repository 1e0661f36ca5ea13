//! A worker of a scheduler: one per thread of the execution space instance. It owns private ready
//! queues, a block cache and counters, which only its thread touches during a wait, and publishes
//! tasks for other workers in its `published` stacks.
//!
//! The calling thread's worker is kept in a thread-local while a wait runs, so that operations
//! without a task context (future release, when_all through the scheduler) find it.

use super::block_cache::BlockCache;
use super::header::{Access, TaskHeader};
use super::local_queue::LocalQueues;
use super::ready_stack::ReadyStack;
use super::scheduler::Shared;
use super::statistics::Counters;
use crate::exec::Team;
use crate::pool::MemoryPool;
use crate::priority::Priority;
use std::cell::{Cell, UnsafeCell};
use std::ptr::NonNull;

/// What only the worker's own thread touches (during a wait), or the waiting thread between
/// waits.
pub(crate) struct Owned {
    pub(crate) local: LocalQueues,
    pub(crate) cache: BlockCache,
    pub(crate) counters: Counters,
    /// How entity operations synchronize during this wait.
    pub(crate) access: Access,
    /// Generation of the next entity this worker allocates.
    pub(crate) generation: u32,
    /// Depth of tasks run inside a spawn (002 §3.3.2 mitigation).
    pub(crate) nesting: u32,
    /// Change of the scheduler's live entity count not yet added to `Shared::alive`.
    pub(crate) alive_delta: i64,
    /// Team tasks of this worker's team seen so far (members join each new one).
    pub(crate) team_seq: u64,
}

#[repr(align(128))]
pub(crate) struct Worker {
    pub(crate) rank: usize,
    /// Tasks this worker made visible to the others, one stack per priority.
    pub(crate) published: [ReadyStack; 3],
    /// The team of one that single tasks see as their team.
    pub(crate) single_team: Team,
    owned: UnsafeCell<Owned>,
}

// SAFETY: `owned` is only touched by the worker's thread during a wait and by the waiting thread
// before and after it (the dispatch orders the two); everything else is atomic or immutable.
unsafe impl Sync for Worker {}
unsafe impl Send for Worker {}

impl Worker {
    pub(crate) fn new(rank: usize, pool: &MemoryPool, cache_limit: u32, single_team: Team) -> Self {
        Worker {
            rank,
            published: std::array::from_fn(|_| ReadyStack::new()),
            single_team,
            owned: UnsafeCell::new(Owned {
                local: LocalQueues::new(),
                cache: BlockCache::new(pool, cache_limit),
                counters: Counters::default(),
                access: Access::Shared,
                generation: 0,
                nesting: 0,
                alive_delta: 0,
                team_seq: 0,
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

    #[inline]
    pub(crate) fn access(&self) -> Access {
        // SAFETY: a short read by the worker's thread.
        unsafe { self.owned().access }
    }

    #[inline]
    pub(crate) fn local_push(&self, task: NonNull<TaskHeader>, priority: Priority) {
        // SAFETY: the worker's thread; no re-entry.
        unsafe { self.owned().local.push(task, priority) }
    }

    #[inline]
    pub(crate) fn local_pop(&self, priority: Priority) -> Option<NonNull<TaskHeader>> {
        // SAFETY: as above.
        unsafe { self.owned().local.pop(priority) }
    }

    #[inline]
    pub(crate) fn next_generation(&self) -> u32 {
        // SAFETY: as above.
        let owned = unsafe { self.owned() };
        owned.generation = owned.generation.wrapping_add(1);
        owned.generation
    }
}

thread_local! {
    /// The scheduler and worker the calling thread serves during a wait; nulls outside one.
    static CURRENT: Cell<(*const Shared, *const Worker)> =
        const { Cell::new((std::ptr::null(), std::ptr::null())) };
}

/// The calling thread's scheduler and worker while it runs a wait's loop.
#[inline]
pub(crate) fn current() -> (*const Shared, *const Worker) {
    CURRENT.with(Cell::get)
}

/// Marks the calling thread as `worker` of `shared` until dropped.
pub(crate) struct CurrentWorker {
    previous: (*const Shared, *const Worker),
}

impl CurrentWorker {
    pub(crate) fn enter(shared: &Shared, worker: &Worker) -> CurrentWorker {
        let previous = CURRENT.with(|c| c.replace((shared, worker)));
        CurrentWorker { previous }
    }
}

impl Drop for CurrentWorker {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}
