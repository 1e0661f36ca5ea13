//! Memory pool: a finite span of memory carved into power-of-two superblocks and blocks, with
//! lock-free allocation and constant-time release (000 §2.5, §3.1).
//!
//! The span is split into superblocks of `2^M` bytes; each superblock is assigned one block size
//! `2^N` at a time and tracks its blocks in a claim bitset. Allocation looks for a superblock of
//! the right size through hints, then reassigns an empty superblock, then falls back to a
//! superblock of larger blocks. The algorithm works on a plain-integer state (`PoolLayout` plus
//! arrays of words) so that device code can share it; `MemoryPool` owns host memory for it.
//!
//! Files: `config` (parameters), `layout` (geometry), `header` (superblock header word),
//! `state` (the state the algorithm runs on), `claim` (claims and reassignment, with the
//! correctness argument), `release`, `search` (allocation order), `lane` (per-thread lanes), `thread_cache` (per-lane caches of freed blocks),
//! `usage` (statistics), `failure` (errors),
//! `memory_pool` (host ownership), `tests` (behaviour of the whole pool).

mod claim;
mod config;
mod failure;
pub mod header;
mod lane;
mod layout;
mod memory_pool;
mod release;
mod search;
mod state;
mod thread_cache;
mod usage;

#[cfg(test)]
mod test_blocks;
#[cfg(test)]
mod tests;

pub use config::{PoolConfig, DEFAULT_MAX_BLOCK_ALLOC_SIZE, DEFAULT_MIN_BLOCK_ALLOC_SIZE};
pub use failure::AllocFailure;
pub use lane::{Lane, LANES};
pub use layout::PoolLayout;
pub use memory_pool::MemoryPool;
#[cfg(any(feature = "cuda", test))]
pub(crate) use usage::flush_threshold;
pub use usage::UsageStatistics;
#[cfg(feature = "cuda")]
pub(crate) use usage::{census_with, statistics};
