//! Arrays of futures that C callers pass as dependences (td_when_all, td_task_respawn_when_all):
//! the count, each element checked to be a live future of the scheduler, and the decoded
//! entities in a buffer that stays on the stack for the usual few.

use super::boundary::null_argument;
use super::error::{CError, CResult};
use super::future::{bad_future, td_future};
use super::status::td_status;
use crate::task::header::TaskHeader;
use crate::task::raw::{self, Shared};
use std::ffi::c_int;

/// Dependences up to this count are decoded on the stack.
pub(super) const STACK_DEPENDENCES: usize = 8;

/// `count` as a number of elements. The error is built out of line from the value, so that
/// the count stays in its register (a closure that built it took its address: a store on the
/// common path; see `null_futures` for the figures).
#[inline(always)]
pub(super) fn count_arg(count: c_int) -> CResult<usize> {
    match usize::try_from(count) {
        Ok(n) => Ok(n),
        Err(_) => Err(negative_count(count)),
    }
}

/// The check of a NULL `futures` with `n` elements: an error unless there are none. Out of
/// line, so that the common case tests the pointer alone, not a combination of both tests
/// (callgrind, F(22): td_task_respawn_when_all_private 63 -> 60 instructions per node with two
/// workers, 57.5 -> 54.5 with one, with `count_arg`'s error out of line).
#[cold]
#[inline(never)]
pub(super) fn null_futures(n: usize) -> CResult<()> {
    if n > 0 {
        return Err(null_argument("futures"));
    }
    Ok(())
}

#[cold]
fn negative_count(count: c_int) -> CError {
    CError::invalid(format!(
        "argument `count` is {count}; a when_all needs a count >= 0"
    ))
}

/// A when_all element, checked to be a future of `shared`.
#[inline(always)]
pub(super) unsafe fn dependence(
    shared: &Shared,
    f: *mut td_future,
    i: usize,
) -> CResult<*mut TaskHeader> {
    let entity = raw::decode(f.cast()).map_err(|e| bad_element(e, i))?;
    if !raw::same_scheduler(entity, shared) {
        return Err(foreign_element(i));
    }
    Ok(entity.as_ptr())
}

#[cold]
pub(super) fn null_element(i: usize) -> CError {
    CError::new(
        td_status::TD_ERROR_NULL_ARGUMENT,
        format!(
            "`futures[{i}]` is NULL; every element of the array must be a future \
             (td_when_all_generate accepts NULL elements)"
        ),
    )
}

#[cold]
fn bad_element(e: crate::task::BadFuture, i: usize) -> CError {
    bad_future(e, &format!("futures[{i}]"))
}

#[cold]
fn foreign_element(i: usize) -> CError {
    raw::other_scheduler(&format!("`futures[{i}]`")).into()
}

/// Decodes `n` elements into a buffer (on the stack when small) and runs `f` on them. `f` has
/// one call site, so that it is inlined here (a when_all from a task is then one frame).
#[inline(always)]
pub(super) fn with_decoded<R>(
    n: usize,
    decode: impl Fn(usize) -> CResult<*mut TaskHeader>,
    f: impl FnOnce(&[*mut TaskHeader]) -> crate::error::Result<R>,
) -> CResult<R> {
    let mut buffer = [std::mem::MaybeUninit::<*mut TaskHeader>::uninit(); STACK_DEPENDENCES];
    // Empty (no allocation) unless the elements need it: a vector that is always there drops
    // with one test of its capacity, where one declared in the branch needs a drop flag too
    // (callgrind, F(22): td_task_respawn_when_all_private 81.0 -> 79.5 instructions per node).
    let mut heap: Vec<*mut TaskHeader> = Vec::new();
    let deps: &[*mut TaskHeader] = if n <= STACK_DEPENDENCES {
        for (i, slot) in buffer.iter_mut().take(n).enumerate() {
            slot.write(decode(i)?);
        }
        // SAFETY: the first `n` elements were written just above.
        unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast(), n) }
    } else {
        heap.reserve_exact(n);
        for i in 0..n {
            heap.push(decode(i)?);
        }
        &heap
    };
    Ok(f(deps)?)
}
