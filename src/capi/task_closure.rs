//! The arguments of a spawn: `td_task_policy` (000 §3.2.2 `TaskSingle`/`TaskTeam`: scheduler or
//! dependence, priority, single or team) and `td_task_closure` (the task function, the state blob
//! copied into the task, the result size and the callbacks, DESIGN.md §3).

use super::boundary::{null_argument, read_versioned, Versioned};
use super::error::{CError, CResult};
use super::future::{future_arg, td_future};
use super::priority::{priority_arg, td_priority, TD_PRIORITY_REGULAR};
use super::scheduler::td_scheduler;
use super::status::td_status;
use crate::task::{RawClosure, TaskFunction};
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

/// A task context, passed to task functions: valid only during that call, on that thread.
pub struct td_task_ctx {
    _private: [u8; 0],
}

/// A task function: called with the task's context and its state (the blob copied at spawn).
pub type td_task_fn = Option<unsafe extern "C" fn(ctx: *mut td_task_ctx, state: *mut c_void)>;

/// Called once with the task's state when the task completes, before its memory can be reused.
pub type td_task_destroy_fn = Option<unsafe extern "C" fn(state: *mut c_void)>;

/// Builds the task's state at `blob` from `source` (the closure's `state`) instead of a byte copy.
pub type td_task_init_fn = Option<unsafe extern "C" fn(blob: *mut c_void, source: *const c_void)>;

/// How a task is scheduled (000 §3.2.2 TaskSingle / TaskTeam). Initialize with
/// TD_TASK_POLICY_INIT.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_task_policy {
    /// sizeof(td_task_policy) as the caller was compiled; set by TD_TASK_POLICY_INIT.
    pub struct_size: usize,
    /// The scheduler; may be NULL when `dependence` is given (its scheduler is used). In a task,
    /// NULL or the task's own scheduler.
    pub scheduler: *mut td_scheduler,
    /// The task runs after this future's task or when_all completes; NULL for none. Borrowed:
    /// the caller keeps its reference.
    pub dependence: *mut td_future,
    /// TD_PRIORITY_HIGH, TD_PRIORITY_REGULAR (default) or TD_PRIORITY_LOW.
    pub priority: td_priority,
    /// Nonzero: a team task, called on every member of a thread team (000 §2.3.2).
    pub team: c_int,
}

unsafe impl Versioned for td_task_policy {
    const NAME: &'static str = "td_task_policy";
    const MIN_SIZE: usize = std::mem::size_of::<td_task_policy>();
    fn defaults() -> Self {
        td_task_policy {
            struct_size: std::mem::size_of::<td_task_policy>(),
            scheduler: std::ptr::null_mut(),
            dependence: std::ptr::null_mut(),
            priority: TD_PRIORITY_REGULAR,
            team: 0,
        }
    }
}

/// What a task runs (DESIGN.md §3): a function and a state blob copied into the task. Initialize
/// with TD_TASK_CLOSURE_INIT.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_task_closure {
    /// sizeof(td_task_closure) as the caller was compiled; set by TD_TASK_CLOSURE_INIT.
    pub struct_size: usize,
    /// The task function. Required.
    pub function: td_task_fn,
    /// `state_size` bytes copied into the task at spawn (or the source `init` builds from); may
    /// be NULL when `state_size` is 0. The task's copy is 16-byte aligned.
    pub state: *const c_void,
    /// Bytes of state.
    pub state_size: usize,
    /// Bytes of the task's result (td_task_result, td_future_get); 0 for none.
    pub result_size: usize,
    /// Called once with the task's state when it completes; NULL for none.
    pub destroy: td_task_destroy_fn,
    /// Builds the state in the task from `state` (e.g. a C++ copy constructor); NULL to copy the
    /// bytes.
    pub init: td_task_init_fn,
}

unsafe impl Versioned for td_task_closure {
    const NAME: &'static str = "td_task_closure";
    const MIN_SIZE: usize = std::mem::size_of::<td_task_closure>();
    fn defaults() -> Self {
        td_task_closure {
            struct_size: std::mem::size_of::<td_task_closure>(),
            function: None,
            state: std::ptr::null(),
            state_size: 0,
            result_size: 0,
            destroy: None,
            init: None,
        }
    }
}

/// The caller's struct itself when its version is ours (its fields are then read in place, with
/// no copy), else `None`.
///
/// # Safety
/// As for `read_versioned`.
#[inline(always)]
pub(crate) unsafe fn current_version<'p, T: Versioned>(ptr: *const T) -> Option<&'p T> {
    if !ptr.is_null() && (ptr as *const usize).read_unaligned() == std::mem::size_of::<T>() {
        return Some(&*ptr);
    }
    None
}

/// `fields` of the struct at `ptr`: read in place when it is of our version, else (an older or
/// newer caller, or NULL) copied by `read_versioned` out of line, so that the common path reads
/// through one pointer rather than one of two. `name` names the argument in messages.
///
/// # Safety
/// As for `read_versioned`.
#[inline(always)]
unsafe fn versioned_arg<T: Versioned, R>(
    ptr: *const T,
    name: &str,
    fields: impl Fn(&T) -> CResult<R>,
) -> CResult<R> {
    match current_version(ptr) {
        Some(v) => fields(v),
        None => versioned_arg_other(ptr, name, fields),
    }
}

#[inline(never)]
unsafe fn versioned_arg_other<T: Versioned, R>(
    ptr: *const T,
    name: &str,
    fields: impl Fn(&T) -> CResult<R>,
) -> CResult<R> {
    fields(&read_versioned(ptr, name, false)?)
}

/// A policy read from C: the scheduler named (if any), the dependence, priority and team flag.
pub(crate) struct PolicyArgs {
    pub scheduler: *mut td_scheduler,
    pub dependence: Option<NonNull<crate::task::header::TaskHeader>>,
    pub priority: crate::priority::Priority,
    pub team: bool,
}

/// Reads and checks `policy`: priority value, dependence validity (`versioned_arg`).
///
/// # Safety
/// `policy` is NULL or points to a td_task_policy of at least its `struct_size` bytes.
#[inline(always)]
pub(crate) unsafe fn policy_arg(policy: *const td_task_policy) -> CResult<PolicyArgs> {
    versioned_arg(policy, "policy", |p| policy_fields(p))
}

#[inline(always)]
unsafe fn policy_fields(p: &td_task_policy) -> CResult<PolicyArgs> {
    let dependence = if p.dependence.is_null() {
        None
    } else {
        Some(future_arg(p.dependence, "policy->dependence")?)
    };
    Ok(PolicyArgs {
        scheduler: p.scheduler,
        dependence,
        priority: priority_arg(p.priority, "policy->priority")?,
        team: p.team != 0,
    })
}

/// Reads and checks `closure`: a function is required, state bytes must be readable
/// (`versioned_arg`).
///
/// # Safety
/// `closure` is NULL or points to a td_task_closure of at least its `struct_size` bytes.
#[inline(always)]
pub(crate) unsafe fn closure_arg(closure: *const td_task_closure) -> CResult<RawClosure> {
    versioned_arg(closure, "closure", |c| closure_fields(c))
}

/// `closure_arg` of a closure of our version (`current_version`).
///
/// # Safety
/// As for `closure_arg`.
#[inline(always)]
pub(crate) unsafe fn closure_fields(c: &td_task_closure) -> CResult<RawClosure> {
    let Some(function) = c.function else {
        return Err(null_argument("closure->function"));
    };
    if c.state.is_null() && c.state_size > 0 && c.init.is_none() {
        return Err(null_state(c.state_size));
    }
    // SAFETY: the two function pointer types differ only in the pointee of the first argument,
    // an opaque type the core passes as `*mut c_void`; the ABI is the same.
    let function: TaskFunction = std::mem::transmute::<
        unsafe extern "C" fn(*mut td_task_ctx, *mut c_void),
        TaskFunction,
    >(function);
    Ok(RawClosure {
        function,
        state: c.state.cast(),
        state_size: c.state_size,
        result_size: c.result_size,
        destroy: c.destroy,
        init: c.init,
    })
}

#[cold]
fn null_state(state_size: usize) -> CError {
    CError::new(
        td_status::TD_ERROR_NULL_ARGUMENT,
        format!(
            "argument `closure->state` is NULL but `closure->state_size` is {state_size}; pass \
             the state to copy, or a state_size of 0"
        ),
    )
}
