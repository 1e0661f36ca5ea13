//! `td_space`: an execution space instance (003) behind a C handle — the Serial space, the root
//! instance of the Threads space, or a sub-instance from td_space_run_instances.

use super::boundary::{call, null_argument, read_versioned, Out, UserPtr, Versioned};
use super::error::CError;
use super::handle::{self, Handle};
use super::status::td_status;
use crate::exec::{self, InstanceRequest, Space, SpaceKind};
use crate::runtime;
use crate::topology::Topology;
use std::ffi::c_void;
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

/// One sub-instance asked of td_space_run_instances (003 `InstanceRequest`). Initialize with
/// TD_INSTANCE_REQUEST_INIT, then set num_threads.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_instance_request {
    /// sizeof(td_instance_request) as the caller was compiled; set by TD_INSTANCE_REQUEST_INIT.
    pub struct_size: usize,
    /// Threads in the sub-instance, at least 1.
    pub num_threads: usize,
    /// NUMA domains to spread the threads over; 0 = any.
    pub numa_count: usize,
    /// Threads per NUMA domain when numa_count > 0; 0 = an equal share.
    pub cores_per_numa: usize,
}

unsafe impl Versioned for td_instance_request {
    const NAME: &'static str = "td_instance_request";
    const MIN_SIZE: usize = std::mem::size_of::<td_instance_request>();
    fn defaults() -> Self {
        td_instance_request {
            struct_size: std::mem::size_of::<td_instance_request>(),
            num_threads: 0,
            numa_count: 0,
            cores_per_numa: 0,
        }
    }
}

/// A sub-instance's control function: runs on the sub-instance's control thread with a handle
/// to it (borrowed: valid until the function returns; retain it to keep the handle, but the
/// instance can no longer dispatch once the function has returned) and the request's index.
pub type td_instance_fn =
    Option<unsafe extern "C" fn(instance: *mut td_space, index: usize, user: *mut c_void)>;

/// Partitions `space` into `count` disjoint sub-instances as `requests` ask and runs
/// `control(instance, i, user)` for each on that sub-instance's control thread, which alone may
/// dispatch to it; blocks until every control function has returned, then gives the threads back
/// to `space` (003 `run_instances`). The calling thread controls the first sub-instance. Requests
/// that cannot all be satisfied are rejected before anything runs.
///
/// Thread safety: only the control thread of `space`. The control functions run concurrently.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_STRUCT_SIZE; TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT (no requests, a request of 0 threads, more threads or NUMA domains
/// than the instance has — the message says which); TD_ERROR_UNAVAILABLE (Serial space);
/// TD_ERROR_WRONG_THREAD; TD_ERROR_BUSY.
#[no_mangle]
pub unsafe extern "C" fn td_space_run_instances(
    space: *const td_space,
    requests: *const td_instance_request,
    count: usize,
    control: td_instance_fn,
    user: *mut c_void,
) -> td_status {
    call("td_space_run_instances", || {
        let space = space_arg(space, "space")?;
        let control = control.ok_or_else(|| null_argument("control"))?;
        if count == 0 {
            return Err(CError::invalid(
                "`count` is 0; pass at least one request".to_string(),
            ));
        }
        if requests.is_null() {
            return Err(null_argument("requests"));
        }
        // The array's stride is the struct size the caller compiled with.
        let first: td_instance_request = read_versioned(requests, "requests", false)?;
        let stride = first.struct_size;
        let mut reqs = Vec::with_capacity(count);
        for i in 0..count {
            let p = requests
                .cast::<u8>()
                .add(i * stride)
                .cast::<td_instance_request>();
            let r: td_instance_request = read_versioned(p, "requests[i]", false)?;
            reqs.push(InstanceRequest {
                threads: r.num_threads,
                numa_count: r.numa_count,
                cores_per_numa: r.cores_per_numa,
            });
        }
        let user = UserPtr(user);
        space.run_instances(&reqs, &|index, sub| {
            let u = user;
            let h = new_space_handle(sub.clone());
            control(h, index, u.0);
            let _ = handle::release(h, "instance");
        })?;
        Ok(())
    })
}

/// Writes to `*out` a handle to the same instance restricted to its first ⌈fraction × threads⌉
/// threads (003 masks); dispatches on it use only those threads.
///
/// Ownership: `*out` receives a new reference; release it with td_space_release.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT
/// (fraction outside (0, 1]).
#[no_mangle]
pub unsafe extern "C" fn td_space_mask(
    space: *const td_space,
    fraction: f64,
    out: *mut *mut td_space,
) -> td_status {
    call("td_space_mask", || {
        let s = space_arg(space, "space")?;
        let out = Out::new(out, "out")?;
        out.write(new_space_handle(s.masked(fraction)?));
        Ok(())
    })
}

/// Threads of `space` at a depth of the hierarchy (003 `thread_pool_size(depth)`): depth 0 is
/// the instance's threads, depth 1 the hardware threads per core, deeper levels 1.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT
/// (negative depth).
#[no_mangle]
pub unsafe extern "C" fn td_space_thread_pool_size(
    space: *const td_space,
    depth: i32,
    out: *mut usize,
) -> td_status {
    call("td_space_thread_pool_size", || {
        let s = space_arg(space, "space")?;
        let out = Out::new(out, "out")?;
        let topo = Topology::detect();
        out.write(match depth {
            0 => s.concurrency(),
            1 => (topo.hardware_threads / topo.cores.max(1)).max(1),
            d if d > 1 => 1,
            d => {
                return Err(CError::invalid(format!(
                    "depth {d} is negative; 0 is the instance, 1 the threads of a core"
                )))
            }
        });
        Ok(())
    })
}

/// Waits for all work dispatched to `space` to finish. Dispatches on CPU spaces return only when
/// their work is done, so this checks the handle and returns; it exists so code written for
/// asynchronous spaces (CUDA) runs unchanged.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_space_fence(space: *const td_space) -> td_status {
    call("td_space_fence", || {
        space_arg(space, "space")?;
        Ok(())
    })
}

/// The calling thread's rank in the taskdag thread pool it belongs to (003
/// `thread_pool_rank`), or -1 for a thread outside every pool.
#[no_mangle]
pub extern "C" fn td_thread_pool_rank() -> i64 {
    exec::pool_rank().map_or(-1, |r| r as i64)
}

/// The hardware thread (OS CPU id) the calling thread runs on: the one it is pinned to for
/// pinned pool threads, else the one the OS reports now (003 `hardware_thread_id`).
#[no_mangle]
pub extern "C" fn td_hardware_thread_id() -> i64 {
    exec::hardware_thread_id() as i64
}

/// Hardware threads available to this process (003 `max_hardware_threads`).
#[no_mangle]
pub extern "C" fn td_max_hardware_threads() -> usize {
    Topology::detect().hardware_threads
}

/// 1 when called from inside a dispatched body (parallel_for, reduce, scan, team), else 0 (003
/// `in_parallel`).
#[no_mangle]
pub extern "C" fn td_in_parallel() -> i32 {
    i32::from(exec::is_in_parallel())
}
