//! What the calling thread is: which pool and rank it belongs to, the hardware thread it is
//! pinned to, and whether it is inside a parallel region (003 `in_parallel`,
//! `thread_pool_rank`, `hardware_thread_id`).

use std::cell::Cell;
use std::thread::ThreadId;

#[derive(Clone, Copy)]
struct Membership {
    pool: u64,
    rank: usize,
    cpu: Option<usize>,
}

thread_local! {
    static MEMBERSHIP: Cell<Option<Membership>> = const { Cell::new(None) };
    static IN_PARALLEL: Cell<u32> = const { Cell::new(0) };
    static THREAD_ID: ThreadId = std::thread::current().id();
}

/// The calling thread's id. Every dispatch checks it; `thread::current()` would also take and
/// drop a reference to the thread's handle each time.
pub(crate) fn thread_id() -> ThreadId {
    THREAD_ID.with(|id| *id)
}

pub(crate) fn enter_pool(pool: u64, rank: usize, cpu: Option<usize>) {
    MEMBERSHIP.with(|m| m.set(Some(Membership { pool, rank, cpu })));
}

/// Forgets the membership of the calling thread if it is in `pool`.
pub(crate) fn leave_pool(pool: u64) {
    MEMBERSHIP.with(|m| {
        if m.get().is_some_and(|x| x.pool == pool) {
            m.set(None);
        }
    });
}

/// Runs `f` marked as inside a parallel region.
pub(crate) fn in_parallel<R>(f: impl FnOnce() -> R) -> R {
    struct Exit;
    impl Drop for Exit {
        fn drop(&mut self) {
            IN_PARALLEL.with(|c| c.set(c.get() - 1));
        }
    }
    IN_PARALLEL.with(|c| c.set(c.get() + 1));
    let _exit = Exit;
    f()
}

/// True inside a dispatched closure, a task, or a work-graph item.
pub fn is_in_parallel() -> bool {
    IN_PARALLEL.with(|c| c.get() > 0)
}

/// The calling thread's rank in its pool, if it belongs to one.
pub fn pool_rank() -> Option<usize> {
    MEMBERSHIP.with(|m| m.get().map(|x| x.rank))
}

/// The hardware thread (OS CPU id) the caller is assigned to: the pinned one for pool workers,
/// the reserved one for a pool's creating thread (rank 0, left unpinned so that threads it
/// creates are not confined to one core), else the one the OS reports now.
pub fn hardware_thread_id() -> usize {
    MEMBERSHIP
        .with(|m| m.get().and_then(|x| x.cpu))
        .unwrap_or_else(|| {
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = unsafe { libc::sched_getcpu() };
            usize::try_from(cpu).unwrap_or(0)
        })
}
