//! Data-parallel dispatch on an execution space (004): `parallel_for`, `parallel_reduce` and
//! `parallel_scan` over index ranges, and the team policy.
//!
//! Work is handed out in ranges, not single indices, so a C caller's loop body is inlined in
//! its own loop and the per-index cost is the caller's alone.
//!
//! Files: `range` (policy and how a range is split), `for_each`, `reduce`, `scan`, `team_policy`,
//! `builtin` (sum/min/max/prod over the four scalar types), `partials` (per-thread values).

mod builtin;
mod for_each;
mod partials;
mod range;
mod reduce;
mod scan;
mod team_policy;

pub use builtin::{ReduceOp, ScalarType};
pub use for_each::parallel_for;
pub use range::RangePolicy;
pub use reduce::{parallel_reduce, Reducer};
pub use scan::{parallel_scan, ScanBody};
pub use team_policy::{parallel_team, TeamPolicy};

#[cfg(test)]
mod tests;
