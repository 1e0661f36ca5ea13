//! Work-dag: the static and homogeneous work graph of 000 §2.4 and §3.3. One work function F is
//! called once for each work index in [0, N), in an order that respects execute-after
//! dependences given up front as a compressed-row-storage graph; a run allocates nothing.
//!
//! Files: `crs` (the graph and its structural checks), `transpose` (000 §3.3.1
//! `transpose_crs`), `acyclic` (cycle check naming the cycle), `plan` (`WorkGraph`, made once
//! and run many times), `item_state` (per-item waiting count and links), `ready_stack` (the
//! lock-free ready stacks and their correctness argument), `worker` (the scheduler loop,
//! priorities, stealing, termination), `tests`.

mod acyclic;
mod crs;
mod item_state;
mod plan;
mod ready_stack;
mod transpose;
mod worker;

pub use crs::{Crs, CrsIndex, MAX_ENTRIES, MAX_ITEMS};
pub use plan::WorkGraph;

#[cfg(test)]
mod tests;
