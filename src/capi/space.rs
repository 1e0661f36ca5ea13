//! `td_space`: an execution space instance (003) behind a C handle — the Serial space, the root
//! instance of the Threads space, or a sub-instance from td_space_run_instances.

use super::boundary::{call, Out};
use super::handle::{self, Handle};
use super::status::td_status;
use crate::exec::{Space, SpaceKind};
use crate::runtime;
use std::sync::Arc;

/// An execution space instance. Reference-counted: td_space_retain / td_space_release. Only the
/// instance's control thread may dispatch to it.
pub struct td_space {
    _private: [u8; 0],
}

unsafe impl Handle for td_space {
    type Object = Space;
    const NAME: &'static str = "td_space";
    const TAG: u64 = 0x7464_5f73_7061_6365; // "td_space"
}

/// The kind of an execution space.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum td_exec_kind {
    /// Runs everything on the calling thread.
    TD_EXEC_SERIAL = 0,
    /// A partition of the pinned thread pool created by td_initialize.
    TD_EXEC_THREADS = 1,
}

/// Wraps a core space in a new C handle (one reference, owned by the caller).
pub(crate) fn new_space_handle(space: Space) -> *mut td_space {
    handle::new_handle(Arc::new(space))
}

/// The space behind a handle.
pub(crate) unsafe fn space_arg<'a>(
    space: *const td_space,
    name: &str,
) -> super::error::CResult<&'a Space> {
    handle::object(space, name)
}

/// Returns a handle to the Serial space, which runs dispatches on the calling thread and may be
/// used from any thread.
///
/// Ownership: `*out` receives a new reference; release it with td_space_release.
/// Thread safety: any thread, after td_initialize.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_space_serial(out: *mut *mut td_space) -> td_status {
    call("td_space_serial", || {
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_space_serial")?;
        out.write(new_space_handle(Space::serial()));
        Ok(())
    })
}

/// Returns a handle to the root instance of the Threads space: the thread pool that
/// td_initialize created (all threads, pinned one per core when the machine has enough cores).
/// Its control thread is the thread that called td_initialize.
///
/// Ownership: `*out` receives a new reference; release it with td_space_release. The pool's
/// threads stop after td_finalize once every handle to it is released.
/// Thread safety: any thread, after td_initialize (only the control thread may dispatch).
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_space_threads(out: *mut *mut td_space) -> td_status {
    call("td_space_threads", || {
        let out = Out::new(out, "out")?;
        out.write(new_space_handle(runtime::threads_space()?));
        Ok(())
    })
}

/// Adds a reference to `space`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_space_retain(space: *mut td_space) -> td_status {
    call("td_space_retain", || handle::retain(space, "space"))
}

/// Releases one reference to `space`. NULL is a no-op.
///
/// Thread safety: any thread, but no other thread may use this reference concurrently.
/// Returns TD_OK; TD_ERROR_INVALID_HANDLE (wrong type or already released).
#[no_mangle]
pub unsafe extern "C" fn td_space_release(space: *mut td_space) -> td_status {
    call("td_space_release", || handle::release(space, "space"))
}

/// Writes the kind of `space` to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_space_kind(
    space: *const td_space,
    out: *mut td_exec_kind,
) -> td_status {
    call("td_space_kind", || {
        let s = space_arg(space, "space")?;
        Out::new(out, "out")?.write(match s.kind() {
            SpaceKind::Serial => td_exec_kind::TD_EXEC_SERIAL,
            SpaceKind::Threads => td_exec_kind::TD_EXEC_THREADS,
        });
        Ok(())
    })
}

/// Writes to `*out` the number of threads a dispatch on `space` runs on (003 `concurrency`).
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_space_concurrency(
    space: *const td_space,
    out: *mut usize,
) -> td_status {
    call("td_space_concurrency", || {
        let s = space_arg(space, "space")?;
        Out::new(out, "out")?.write(s.concurrency());
        Ok(())
    })
}
