//! The dynamic task DAG (000 §2.2–2.3, §3.2; 002 §2–3.3): tasks spawned from the host or from
//! tasks, shared-ownership futures with results, when_all, respawn with a new dependence and
//! priority, High/Regular/Low priorities, single-thread and team tasks, and `wait`.
//!
//! ## Life-cycle (000 §2.3.1)
//! Spawn allocates the task from the scheduler's pool, copies its closure (function, state blob)
//! into the block and schedules it: into its dependence's wait queue while that is incomplete,
//! else into a ready queue. A worker runs it; when the function returns the task either respawns
//! (scheduled again with its new dependence and priority) or completes: its destroy callback runs
//! (002 §2.2.5), its wait queue is closed, and everything that waited on it is scheduled. Its
//! memory returns to the pool when its last future is released.
//!
//! ## Queues (DESIGN.md §4)
//! Ready tasks live in each worker's private queues (no atomic operation to push or pop; see
//! `local_queue.rs`) and in lock-free stacks that every worker can take from: the ones a worker
//! publishes when another is idle, host-spawned tasks, and team tasks (`ready_stack.rs`, the
//! list of 002 Figs. 3.2–3.3). Wait queues are the per-entity lists of 002 Fig. 3.6
//! (`wait_queue.rs`). Which task a worker runs next, what "available to it" means for the
//! priority rule, and how the end of a wait is detected are in `executor.rs`.
//!
//! ## One worker
//! A wait with one worker is the only thread that may touch the scheduler's entities (other
//! threads get `Busy` while a wait runs), so reference counts, wait queues and the live count are
//! then updated with plain loads and stores (`header::Access::Exclusive`). The single-worker
//! high-water-mark mitigation of 002 §3.3.2 runs the ready tasks before each spawn allocates.
//!
//! ## Memory
//! Blocks come from the scheduler's pool; each worker caches released blocks for reuse
//! (`block_cache.rs`). Exhaustion fails the spawn (or when_all) with `PoolExhausted` and changes
//! nothing else.
//!
//! Files: `header` (the block header and references), `wait_queue`, `ready_stack`,
//! `local_queue`, `queue_guard` (idle workers rescue the tasks of a worker that does not come
//! back), `block_cache`, `place` (operations common to every entity), `spawn`,
//! `when_all`, `future`, `context` (what a task sees, respawn), `team_task`, `executor` (the
//! worker loop), `worker`, `thread_worker` (a thread's worker in a cheap thread-local),
//! `scheduler` (state, wait, lifetime), `laggards` (workers late to leave a wait sit out the
//! next ones), `statistics`, `closure` (Rust closures as tasks).

mod block_cache;
mod bytes;
mod closure;
mod context;
mod executor;
mod future;
pub mod header;
pub(crate) mod laggards;
mod local_queue;
mod place;
pub mod queue_guard;
pub mod ready_stack;
mod scheduler;
mod spawn;
mod statistics;
mod team_task;
mod thread_table;
mod thread_worker;
pub mod wait_queue;
mod when_all;
mod worker;

#[cfg(all(test, not(loom)))]
mod tests;

pub use context::TaskContext;
pub use future::{BadFuture, Future};
pub use header::{DestroyFunction, InitFunction, TaskFunction};
pub use scheduler::{Scheduler, SchedulerConfig};
pub use spawn::{Policy, RawClosure};
pub use statistics::SchedulerStatistics;

/// Raw-pointer operations for the C API.
pub(crate) mod raw {
    pub(crate) use super::bytes::copy as copy_bytes;
    pub(crate) use super::context::QuickRespawn;
    pub(crate) use super::executor::Holders;
    pub(crate) use super::future::{
        check_scheduler, complete_task_result, decode, encode, is_ready, live_task,
        other_scheduler, release, release_last, result, result_size, retain, same_scheduler,
        FastRelease,
    };
    pub(crate) use super::scheduler::Shared;
    pub(crate) use super::spawn::{host_spawn, RawPolicy, SpawnArgs};
}
