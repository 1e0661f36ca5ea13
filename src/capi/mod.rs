//! The C ABI: the only module with `extern "C"` functions (DESIGN.md §2–3). Each file covers one
//! C object; `boundary`, `error` and `handle` hold the machinery every entry point uses.
//!
//! Safety contract shared by every `unsafe extern "C"` function here (so it is not repeated as a
//! `# Safety` section on each): each pointer argument is NULL or points to a valid object of its
//! type, and each handle is NULL or was returned by taskdag. Everything else is checked and
//! reported as a status.
#![allow(non_camel_case_types, clippy::missing_safety_doc)]

mod boundary;
mod crs;
mod cuda;
mod dependences;
mod error;
mod future;
mod handle;
mod library;
mod memory_space;
mod parallel;
mod pool;
mod priority;
mod reduction;
mod scheduler;
mod space;
mod status;
mod task_closure;
mod task_context;
mod team;
mod view;
mod view_args;
mod view_ops;
mod work_graph;

pub use crs::*;
pub use cuda::*;
pub use error::{td_last_error, td_last_error_message};
pub use future::*;
pub use library::*;
pub use memory_space::{td_memory_space, TD_SPACE_CUDA, TD_SPACE_CUDA_HOST_PINNED, TD_SPACE_HOST};
pub use parallel::*;
pub use pool::*;
pub use priority::*;
pub use reduction::*;
pub use scheduler::*;
pub use space::*;
pub use status::{td_status, td_status_string};
pub use task_closure::*;
pub use task_context::*;
pub use team::*;
pub use view::*;
pub use view_args::*;
pub use view_ops::*;
pub use work_graph::*;
