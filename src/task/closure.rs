//! Rust closures as tasks: the closure is moved into the task's state blob, called through a
//! monomorphized entry point with the C calling convention of `TaskFunction`, and dropped by the
//! destroy callback when the task completes (002 §2.2.5), which releases the futures it holds.
//!
//! A panic in a closure (or its drop) is caught at the entry point, recorded, and rethrown by
//! `Scheduler::wait` once the DAG has finished; the task counts as complete.

use super::context::TaskContext;
use super::future::Future;
use super::header::{TaskHeader, STATE_ALIGN};
use super::spawn::RawClosure;
use super::worker::current;
use crate::error::Result;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

unsafe extern "C" fn call<F: FnMut(&TaskContext<'_>)>(ctx: *mut c_void, state: *mut c_void) {
    let ctx = &*(ctx as *const TaskContext<'_>);
    let f = &mut *(state as *mut F);
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(ctx))) {
        ctx.record_panic(payload);
    }
}

/// Team tasks: every member calls the closure at once, so it is shared, not mutable.
unsafe extern "C" fn call_shared<F: Fn(&TaskContext<'_>) + Sync>(
    ctx: *mut c_void,
    state: *mut c_void,
) {
    let ctx = &*(ctx as *const TaskContext<'_>);
    let f = &*(state as *const F);
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(ctx))) {
        ctx.record_panic(payload);
    }
}

unsafe extern "C" fn drop_state<F>(state: *mut c_void) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| {
        std::ptr::drop_in_place(state as *mut F)
    })) {
        let (shared, _) = current();
        if let Some(shared) = shared.as_ref() {
            shared.record_panic(payload);
        }
    }
}

/// Moves `f` into a raw closure and calls `spawn` with it; `f` is dropped here only if the spawn
/// fails (on success the task owns it).
pub(crate) fn spawn_with<F>(
    f: F,
    result_size: usize,
    spawn: impl FnOnce(&RawClosure) -> Result<NonNull<TaskHeader>>,
) -> Result<Future>
where
    F: FnMut(&TaskContext<'_>) + Send + 'static,
{
    move_into_task(f, call::<F>, result_size, spawn)
}

/// `spawn_with` for a team task's closure.
pub(crate) fn spawn_team_with<F>(
    f: F,
    result_size: usize,
    spawn: impl FnOnce(&RawClosure) -> Result<NonNull<TaskHeader>>,
) -> Result<Future>
where
    F: Fn(&TaskContext<'_>) + Send + Sync + 'static,
{
    move_into_task(f, call_shared::<F>, result_size, spawn)
}

fn move_into_task<F>(
    f: F,
    function: super::header::TaskFunction,
    result_size: usize,
    spawn: impl FnOnce(&RawClosure) -> Result<NonNull<TaskHeader>>,
) -> Result<Future> {
    const {
        assert!(
            std::mem::align_of::<F>() <= STATE_ALIGN,
            "closure over-aligned for a task"
        )
    };
    let f = ManuallyDrop::new(f);
    let closure = RawClosure {
        function,
        state: (&*f as *const F).cast(),
        state_size: std::mem::size_of::<F>(),
        result_size,
        destroy: std::mem::needs_drop::<F>().then_some(drop_state::<F> as _),
        init: None,
    };
    match spawn(&closure) {
        Ok(task) => Ok(Future::from_header(task)),
        Err(e) => {
            drop(ManuallyDrop::into_inner(f));
            Err(e)
        }
    }
}
