//! taskdag: a task-DAG and data-parallel runtime for multicore CPUs and NVIDIA GPUs.
//!
//! The Rust modules below are the core; `capi` is the C ABI over them (see DESIGN.md §3).

mod cache_line;
pub mod capi;
pub mod cuda;
pub mod error;
pub mod exec;
mod huge_pages;
pub mod memory_space;
pub mod parallel;
pub mod pool;
pub mod priority;
mod run_delay;
pub mod runtime;
mod sync;
pub mod task;
mod thread_id;
pub mod topology;
pub mod view;
pub mod work_graph;

pub use error::{Error, ErrorKind};
