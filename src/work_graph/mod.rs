//! Work-dag: the static and homogeneous work graph of 000 §2.4 and §3.3. One work function F is
//! called once for each work index in [0, N), in an order that respects execute-after
//! dependences given up front as a compressed-row-storage graph; a run allocates nothing.
//!
//! Files: `crs` (the graph and its structural checks), `transpose` (000 §3.3.1
//! `transpose_crs`), `acyclic` (cycle check naming the cycle, and each item's height),
//! `schedule` (the order computed once per plan, with priorities), `plan` (`WorkGraph`, made
//! once and run many times), `split` (how finely a run shares heights, from the measured cost
//! of an item), `claims` (who runs a worker's slice of a height), `worker` (the run:
//! completion flags, chunk claims, their correctness argument), `lost_cores` (workers whose
//! core another process took sit out the next runs), `tests`.

mod acyclic;
mod claims;
mod crs;
mod lost_cores;
mod plan;
mod schedule;
mod split;
mod transpose;
mod worker;

pub use crs::{Crs, CrsIndex, MAX_ENTRIES, MAX_ITEMS};
pub use plan::WorkGraph;

#[cfg(test)]
mod tests;
