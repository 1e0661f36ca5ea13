//! `td_future`: a shared-ownership reference to a task or when_all (000 §3.2.1).
//!
//! A `td_future*` points straight at the task's header in the scheduler's pool (with the task's
//! generation in its low bits), not into the handle registry: retain and release touch only that
//! header. `crate::task::future` lists what misuse is detected (a future released more often than
//! retained while its task lives, use after release, reuse of its memory with probability 63/64)
//! and what is not.

use super::boundary::{call, call_or, null_argument, Out};
use super::error::{CError, CResult};
use super::status::td_status;
use crate::task::header::TaskHeader;
use crate::task::raw::{self, FastRelease};
use crate::task::BadFuture;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

/// A future: the handle of a spawned task or of a when_all. Reference-counted with
/// td_future_retain / td_future_release; NULL is the null future.
pub struct td_future {
    _private: [u8; 0],
}

/// The error of a bad future argument called `name`.
#[cold]
pub(crate) fn bad_future(e: BadFuture, name: &str) -> CError {
    CError::new(td_status::TD_ERROR_INVALID_HANDLE, e.message(name))
}

/// The entity behind a non-null future argument, validated.
///
/// # Safety
/// `future` is NULL or was returned by taskdag as a td_future* (anything else may be read as a
/// header and rejected, or fault if it points to unmapped memory).
#[inline(always)]
pub(crate) unsafe fn future_arg(
    future: *const td_future,
    name: &str,
) -> CResult<NonNull<TaskHeader>> {
    if future.is_null() {
        return Err(null_argument(name));
    }
    raw::decode(future.cast()).map_err(|e| bad_future(e, name))
}

/// The td_future* of an entity whose user reference the caller hands over.
#[inline]
pub(crate) fn future_ptr(entity: NonNull<TaskHeader>) -> *mut td_future {
    raw::encode(entity).cast()
}

/// Adds a reference to `future` (shared ownership, 000 §3.2.1); release each with
/// td_future_release.
///
/// Thread safety: any thread while no td_wait runs on the future's scheduler, and its tasks while
/// one does.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE (not a future, or released);
/// TD_ERROR_INVALID_ARGUMENT (no reference left to add to: it was released as often as it was
/// retained); TD_ERROR_BUSY (another thread, during td_wait).
#[no_mangle]
pub unsafe extern "C" fn td_future_retain(future: *mut td_future) -> td_status {
    call("td_future_retain", || {
        let entity = future_arg(future, "future")?;
        Ok(raw::retain(entity, "td_future_retain")?)
    })
}

/// Releases one reference to `future`. When the last reference goes and the task is complete,
/// its memory returns to the scheduler's pool (000 §2.3.1); an incomplete task still runs. NULL is
/// a no-op.
///
/// Releasing more often than retained is reported while the task is alive (TD_ERROR_INVALID_ARGUMENT)
/// and after it was freed (TD_ERROR_INVALID_HANDLE), unless its memory was reused meanwhile by a
/// task of the same generation (1 in 64).
///
/// Thread safety: as td_future_retain. Returns TD_OK; TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT; TD_ERROR_BUSY.
#[no_mangle]
pub unsafe extern "C" fn td_future_release(future: *mut td_future) -> td_status {
    match raw::release_last(future.cast()) {
        FastRelease::Done => td_status::TD_OK,
        // Decoded already: with several workers, decoding again cost 14 instructions per
        // release (callgrind, F(22), two workers).
        FastRelease::Task(task) => release_task(task),
        // NULL fails the fast path's first test: tested after it, so that the fast path does not.
        FastRelease::NotATask if future.is_null() => td_status::TD_OK,
        FastRelease::NotATask => release_any(future),
    }
}

/// `td_future_release` past its fast path, for a live task: a call in tail position, so that the
/// fast path saves no registers (callgrind, F(22): td_future_release 88.0 -> 57.0 instructions
/// per node). `extern "C"`, which cannot unwind (`call` catches panics), so that the caller needs
/// no landing pad after the call and can jump to it.
#[inline(never)]
unsafe extern "C" fn release_task(task: NonNull<TaskHeader>) -> td_status {
    call("td_future_release", || {
        Ok(raw::release(task, "td_future_release")?)
    })
}

/// `td_future_release` past its fast path, for anything else; as `release_task`.
#[inline(never)]
unsafe extern "C" fn release_any(future: *mut td_future) -> td_status {
    call("td_future_release", || {
        let entity = future_arg(future, "future")?;
        Ok(raw::release(entity, "td_future_release")?)
    })
}

/// Returns 1 if `future` is the null future (NULL), else 0 (000 §3.2.1 `is_null`).
///
/// Thread safety: any thread, any time.
#[no_mangle]
pub extern "C" fn td_future_is_null(future: *const td_future) -> c_int {
    c_int::from(future.is_null())
}

/// Writes 1 to `*out` if the future's task (or when_all) is complete, else 0.
///
/// Thread safety: any thread, any time, also during td_wait.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`future` or `out`); TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_future_is_ready(
    future: *const td_future,
    out: *mut c_int,
) -> td_status {
    call("td_future_is_ready", || {
        let entity = future_arg(future, "future")?;
        Out::new(out, "out")?.write(c_int::from(raw::is_ready(entity)));
        Ok(())
    })
}

/// Copies the result of the future's completed task to `out` (000 §3.2.1 `get`). `size` must be
/// the task's result size (the closure's `result_size`).
///
/// Thread safety: any thread, any time, also during td_wait.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`future`, or `out` with `size` > 0);
/// TD_ERROR_INVALID_HANDLE; TD_ERROR_NOT_READY (the task is not complete: nothing is written);
/// TD_ERROR_INVALID_ARGUMENT (`size` differs from the result size).
#[no_mangle]
pub unsafe extern "C" fn td_future_get(
    future: *const td_future,
    out: *mut c_void,
    size: usize,
) -> td_status {
    if let Some(bytes) = raw::complete_task_result(future.cast()) {
        // A result of 8 to 16 bytes (a number, a pointer, a pair of them) is copied inline, as
        // two words, with no call: then no register is saved either, the other cases taking
        // the general path by a tail call (callgrind, F(22): td_future_get 47.0 -> 31.0
        // instructions per node). A NULL `out` takes a cold path of its own: tested with the
        // size's range, the compiler combined both tests into one branch with flags
        // (31.0 -> 29.0).
        if size == bytes.len() && (8..=16).contains(&size) {
            if out.is_null() {
                return get_without_out(future, size);
            }
            raw::copy_bytes(out.cast::<u8>(), bytes.as_ptr(), size);
            return td_status::TD_OK;
        }
    }
    get_any(future, out, size)
}

/// `td_future_get` with a NULL `out` (its error, or nothing to copy): `get_any`, on a path of
/// its own.
#[cold]
#[inline(never)]
unsafe extern "C" fn get_without_out(future: *const td_future, size: usize) -> td_status {
    get_any(future, std::ptr::null_mut(), size)
}

/// `td_future_get` past its fast path; `extern "C"` as `release_any`.
#[inline(never)]
unsafe extern "C" fn get_any(future: *const td_future, out: *mut c_void, size: usize) -> td_status {
    call("td_future_get", || {
        let entity = future_arg(future, "future")?;
        let bytes = raw::result(entity, "td_future_get")?;
        if size != bytes.len() {
            return Err(size_mismatch(size, bytes.len()));
        }
        if size > 0 {
            if out.is_null() {
                return Err(null_argument("out"));
            }
            raw::copy_bytes(out.cast::<u8>(), bytes.as_ptr(), size);
        }
        Ok(())
    })
}

#[cold]
fn size_mismatch(size: usize, result: usize) -> CError {
    CError::invalid(format!(
        "argument `size` is {size}, but the task's result has {result} bytes (its closure's \
         result_size)"
    ))
}

/// Writes to `*out` a pointer to the result bytes of the future's completed task, and their
/// number to `*size` (if `size` is not NULL). A when_all has no result: NULL and 0.
///
/// Ownership: the bytes belong to the task and stay valid while the caller holds a reference to
/// the future.
/// Thread safety: any thread, any time, also during td_wait.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_NOT_READY (nothing is
/// written).
#[no_mangle]
pub unsafe extern "C" fn td_future_result(
    future: *const td_future,
    out: *mut *const c_void,
    size: *mut usize,
) -> td_status {
    call("td_future_result", || {
        let entity = future_arg(future, "future")?;
        let out = Out::new(out, "out")?;
        let bytes = raw::result(entity, "td_future_result")?;
        let ptr = if bytes.is_empty() {
            std::ptr::null()
        } else {
            bytes.as_ptr().cast()
        };
        out.write(ptr);
        if !size.is_null() {
            size.write(bytes.len());
        }
        Ok(())
    })
}

/// Writes to `*out` the result size, in bytes, of the future's task (0 for a when_all).
///
/// Thread safety: any thread, any time. Returns TD_OK; TD_ERROR_NULL_ARGUMENT;
/// TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_future_result_size(
    future: *const td_future,
    out: *mut usize,
) -> td_status {
    call("td_future_result_size", || {
        let entity = future_arg(future, "future")?;
        Out::new(out, "out")?.write(crate::task::raw::result_size(entity));
        Ok(())
    })
}

/// Used by spawns and when_alls that return a future or NULL with the thread's last error.
pub(crate) fn future_or_null(
    function: &'static str,
    body: impl FnOnce() -> CResult<NonNull<TaskHeader>>,
) -> *mut td_future {
    call_or(function, || body().map(future_ptr)).unwrap_or(std::ptr::null_mut())
}
