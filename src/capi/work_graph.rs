//! `td_work_graph`: a planned work graph (000 §3.3.1 `WorkGraphPolicy`) behind a C handle, and
//! its run with a C work function.

use super::boundary::{call, null_argument, Out, UserPtr};
use super::crs::{crs_arg, td_crs};
use super::error::CResult;
use super::handle::{self, Handle};
use super::priority::{priority_arg, td_priority};
use super::space::{space_arg, td_space};
use super::status::td_status;
use crate::priority::Priority;
use crate::runtime;
use crate::work_graph::WorkGraph;
use std::ffi::c_void;
use std::sync::Arc;

/// A work graph planned from a td_crs: created once, run any number of times. Reference-counted:
/// td_work_graph_retain / td_work_graph_release.
pub struct td_work_graph {
    _private: [u8; 0],
}

unsafe impl Handle for td_work_graph {
    type Object = Arc<WorkGraph>;
    const NAME: &'static str = "td_work_graph";
    const TAG: u64 = 0x7464_5f77_6772_6166; // "td_wgraf"
}

/// The work function of a work graph: called once per work item `i` (0-based) with the `user`
/// pointer given to td_work_graph_run. Called concurrently from the space's threads.
pub type td_work_fn = Option<unsafe extern "C" fn(i: i64, user: *mut c_void)>;

/// Reads `n` priorities, naming the first bad one.
unsafe fn priorities_arg(ptr: *const td_priority, n: usize) -> CResult<Option<Vec<Priority>>> {
    if ptr.is_null() {
        return Ok(None);
    }
    let values = if n == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(ptr, n)
    };
    let mut out = Vec::with_capacity(n);
    for (i, &value) in values.iter().enumerate() {
        // The indexed name is formatted only for the message of a bad value.
        match priority_arg(value, "priorities") {
            Ok(p) => out.push(p),
            Err(_) => return Err(priority_arg(value, &format!("priorities[{i}]")).unwrap_err()),
        }
    }
    Ok(Some(out))
}

/// Plans a work graph over the items of `graph` (000 §3.3.1 WorkGraphPolicy): F(j) will begin
/// only after F(i) returned, for every entry j in row i. `priorities` is NULL (all
/// TD_PRIORITY_REGULAR) or points to one td_priority per item: when several items are ready,
/// higher priorities run first (000 §2.4.2).
///
/// Checks in O(N + NZ) that the graph has no cycle: a self-dependence or cycle is reported as
/// TD_ERROR_CYCLE with a message naming an item on the cycle, its length and its items.
/// Computes the schedule runs follow (an order in which items run, with higher priorities first
/// and the longest chains first) and allocates everything runs need (about 12 bytes per item
/// and 4 per dependence); runs allocate nothing.
///
/// Ownership: the plan keeps its own reference to `graph` (release yours whenever you like);
/// `priorities` is copied. `*out` receives a new plan with one reference
/// (td_work_graph_release). Thread safety: any thread, after td_initialize.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_CYCLE;
/// TD_ERROR_INVALID_ARGUMENT (a priority that is not a TD_PRIORITY_* value, named by index);
/// TD_ERROR_OUT_OF_MEMORY; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_work_graph_create(
    graph: *const td_crs,
    priorities: *const td_priority,
    out: *mut *mut td_work_graph,
) -> td_status {
    call("td_work_graph_create", || {
        let graph = crs_arg(graph, "graph")?;
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_work_graph_create")?;
        let priorities = priorities_arg(priorities, graph.num_rows())?;
        let plan = WorkGraph::new(Arc::clone(graph), priorities.as_deref())?;
        out.write(handle::new_handle(Arc::new(Arc::new(plan))));
        Ok(())
    })
}

/// Runs the work graph on `space`: calls `work_fn(i, user)` exactly once for every item i in
/// [0, N), each call F(j) beginning only after every F(i) that j executes after has returned.
/// One thread calls the items in the plan's order; several threads split that order, each
/// waiting for an item's predecessors before calling it. Returns when all N calls have
/// returned. A run allocates nothing, and a plan may be run any number of times. How finely a
/// run on several threads shares the order follows the cost of an item measured in the plan's
/// earlier runs (docs/work-graph.md), so a plan's first such run may be slower than the next
/// ones when items cost tens of nanoseconds or more. A run that those measurements put within about
/// 12 us on one thread, or measured clearly faster on one thread than on all of them, or whose
/// graph is too narrow everywhere to share (a chain), runs on the calling thread alone, in the
/// plan's order, the other threads left idle (docs/work-graph.md, "Small runs"). A thread of the
/// space that lost its CPU to another busy process during earlier runs sits out the plan's next
/// runs for a while, and the others split the order (docs/work-graph.md, "Other busy processes").
///
/// `work_fn` runs concurrently on the space's threads and must be thread-safe; it must not unwind
/// (throw) into taskdag. It may call taskdag, but running this plan again from inside it, or
/// dispatching to the same space, returns TD_ERROR_BUSY.
///
/// Thread safety: on a Threads space, only the space's control thread may call this (the
/// thread that called td_initialize, for td_space_threads); the Serial space runs on the calling
/// thread, from any thread. One run of a plan at a time.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`plan`, `space` or `work_fn`); TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_WRONG_THREAD; TD_ERROR_BUSY (the plan or the space is running already). Nothing
/// runs when the call fails.
#[no_mangle]
pub unsafe extern "C" fn td_work_graph_run(
    plan: *const td_work_graph,
    space: *const td_space,
    work_fn: td_work_fn,
    user: *mut c_void,
) -> td_status {
    call("td_work_graph_run", || {
        // A reference of the run's own, so that releasing the plan meanwhile cannot free it.
        let plan: Arc<WorkGraph> = Arc::clone(handle::object(plan, "plan")?);
        let space = space_arg(space, "space")?;
        let Some(work) = work_fn else {
            return Err(null_argument("work_fn"));
        };
        let user = UserPtr(user);
        let user = &user;
        Ok(plan.run(space, move |i| work(i as i64, user.0))?)
    })
}

/// Writes N, the number of work items, to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_work_graph_num_items(
    plan: *const td_work_graph,
    out: *mut i64,
) -> td_status {
    call("td_work_graph_num_items", || {
        let plan = handle::object(plan, "plan")?;
        Out::new(out, "out")?.write(plan.num_items() as i64);
        Ok(())
    })
}

/// Adds a reference to `plan`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_work_graph_retain(plan: *mut td_work_graph) -> td_status {
    call("td_work_graph_retain", || handle::retain(plan, "plan"))
}

/// Releases one reference to `plan`; the last one frees it and its reference to the graph (a
/// run in progress keeps the plan alive until it returns). NULL is a no-op.
///
/// Thread safety: any thread, but no other thread may use this reference concurrently.
/// Returns TD_OK; TD_ERROR_INVALID_HANDLE (wrong type or already released).
#[no_mangle]
pub unsafe extern "C" fn td_work_graph_release(plan: *mut td_work_graph) -> td_status {
    call("td_work_graph_release", || handle::release(plan, "plan"))
}
