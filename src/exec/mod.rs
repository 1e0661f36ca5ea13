//! Execution spaces (003, 004): `Serial` and `Threads`, instances and their partition, masks,
//! the worker threads with their sleep/wake handshake, and thread teams.
//!
//! Files: `space` (the handle users hold), `instance_request` (partitioning), `thread_pool`
//! (pinned threads), `mailbox` and `job` (the whole-instance dispatch protocol), `slot` (the
//! caller-first block dispatch of parallel_for, parallel_reduce and the work graph), `recruit`
//! (a block dispatch whose members join late: the task DAG's wait), `idle` (a worker's idle
//! loop and which slot it serves), `current` (per-thread queries), `team` and `barrier` (team
//! members' collectives).

mod barrier;
mod current;
mod home_cpu;
mod idle;
mod instance_request;
mod job;
mod mailbox;
mod recruit;
mod slot;
mod space;
mod team;
mod thread_pool;

pub use barrier::TeamBarrier;
pub use current::{hardware_thread_id, is_in_parallel, pool_rank};
pub use instance_request::InstanceRequest;
pub use recruit::Recruit;
pub use slot::Latecomers;
pub use space::{Space, SpaceKind, Worker};
pub use team::{JoinFn, Team, TeamMember, TEAM_VALUE_BYTES};
pub use thread_pool::PoolOptions;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;
