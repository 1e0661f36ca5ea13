//! Library-level entry points: version, initialize/finalize, configuration.

use super::boundary::{call, read_versioned, Out, Versioned};
use super::error::{CError, CResult};
use super::status::td_status;
use crate::runtime::{self, InitArgs};
use std::ffi::{c_char, c_int, CString};

/// Major version of the library this header belongs to.
pub const TD_VERSION_MAJOR: u32 = 0;
/// Minor version of the library this header belongs to.
pub const TD_VERSION_MINOR: u32 = 1;
/// Patch version of the library this header belongs to.
pub const TD_VERSION_PATCH: u32 = 0;

/// Arguments of td_initialize. Initialize with TD_INIT_ARGS_INIT, then set the fields you need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_init_args {
    /// sizeof(td_init_args) as the caller was compiled; set by TD_INIT_ARGS_INIT.
    pub struct_size: usize,
    /// Host worker threads; 0 = one per core available to the process.
    pub num_threads: c_int,
    /// NUMA domains to use; 0 = all.
    pub num_numa: c_int,
    /// Cores to use in each NUMA domain; 0 = all.
    pub cores_per_numa: c_int,
    /// CUDA device ordinal; -1 = the first device, if any.
    pub device_id: c_int,
    /// How long an idle worker keeps looking for work, spinning, before it sleeps, in
    /// microseconds: 0 = sleep at once, at most 10000000 (10 s); -1 = the default, 5000, or 100
    /// when there are more threads than CPUs available to the process. Spinning keeps workers
    /// ready for the next dispatch (waking a sleeping one takes tens of microseconds) at the cost
    /// of CPU time; docs/dispatch.md, "Sleeping workers". Inside td_wait, an idle worker spins as
    /// long before it yields its core between looks for tasks (at once when there are more
    /// threads than CPUs); docs/tasks.md, "Threads".
    pub idle_spin_us: i64,
}

/// Largest `td_init_args::idle_spin_us`.
const MAX_IDLE_SPIN_US: i64 = 10_000_000;

unsafe impl Versioned for td_init_args {
    const NAME: &'static str = "td_init_args";
    const MIN_SIZE: usize = std::mem::size_of::<td_init_args>();
    fn defaults() -> Self {
        td_init_args {
            struct_size: std::mem::size_of::<td_init_args>(),
            num_threads: 0,
            num_numa: 0,
            cores_per_numa: 0,
            device_id: -1,
            idle_spin_us: -1,
        }
    }
}

fn count(value: c_int, field: &str) -> CResult<usize> {
    usize::try_from(value).map_err(|_| {
        CError::invalid(format!(
            "`args->{field}` is {value}; it must be >= 0 (0 = use all)"
        ))
    })
}

impl td_init_args {
    fn to_core(self) -> CResult<InitArgs> {
        let device_id = match self.device_id {
            -1 => None,
            d => Some(u32::try_from(d).map_err(|_| {
                CError::invalid(format!(
                    "`args->device_id` is {d}; it must be a device ordinal >= 0, or -1 for the \
                     first device"
                ))
            })?),
        };
        let idle_spin = match self.idle_spin_us {
            -1 => None,
            us @ 0..=MAX_IDLE_SPIN_US => Some(std::time::Duration::from_micros(us as u64)),
            us => {
                return Err(CError::invalid(format!(
                    "`args->idle_spin_us` is {us}; it must be in 0..={MAX_IDLE_SPIN_US} \
                     microseconds, or -1 for the default"
                )))
            }
        };
        Ok(InitArgs {
            num_threads: count(self.num_threads, "num_threads")?,
            num_numa: count(self.num_numa, "num_numa")?,
            cores_per_numa: count(self.cores_per_numa, "cores_per_numa")?,
            device_id,
            idle_spin,
        })
    }
}

/// Returns the library's version as major * 10000 + minor * 100 + patch (compare with the
/// TD_VERSION_* macros of the header you compiled against).
///
/// Thread safety: any thread, any time, also before td_initialize.
#[no_mangle]
pub extern "C" fn td_version() -> u32 {
    TD_VERSION_MAJOR * 10000 + TD_VERSION_MINOR * 100 + TD_VERSION_PATCH
}

/// Returns the library's version as text, e.g. "0.1.0".
///
/// Ownership: static string, do not free. Thread safety: any thread, any time.
#[no_mangle]
pub extern "C" fn td_version_string() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// Starts the runtime. `args` may be NULL for the defaults (all cores, first GPU if any).
///
/// Must be called once before any function that needs the runtime; a second call without
/// td_finalize in between fails. The runtime may be initialized again after td_finalize.
///
/// Thread safety: call from one thread; concurrent calls are serialized and all but one fail.
///
/// Returns TD_OK; TD_ERROR_ALREADY_INITIALIZED; TD_ERROR_STRUCT_SIZE if `args->struct_size` is
/// not a size this library knows; TD_ERROR_INVALID_ARGUMENT for a negative count, or more threads
/// than the process may use.
#[no_mangle]
pub unsafe extern "C" fn td_initialize(args: *const td_init_args) -> td_status {
    call("td_initialize", || {
        let args = read_versioned(args, "args", true)?.to_core()?;
        Ok(runtime::initialize(args)?)
    })
}

/// Stops the runtime. Objects created while it ran (pools, ...) stay valid until their last
/// release, but no new ones can be created until td_initialize is called again.
///
/// Thread safety: call from one thread, after other threads stopped using taskdag.
///
/// Returns TD_OK; TD_ERROR_NOT_INITIALIZED if the runtime is not running.
#[no_mangle]
pub extern "C" fn td_finalize() -> td_status {
    call("td_finalize", || Ok(runtime::finalize()?))
}

/// Returns 1 if the runtime is initialized, 0 otherwise.
///
/// Thread safety: any thread, any time.
#[no_mangle]
pub extern "C" fn td_is_initialized() -> c_int {
    c_int::from(runtime::is_initialized())
}

/// Describes the runtime in readable text: version, build features, host cores and requested
/// threads, memory spaces, GPUs.
///
/// Ownership: on success `*out` is a new NUL-terminated string owned by the caller, to be freed
/// with td_string_free. On failure `*out` is not written.
///
/// Thread safety: any thread.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT if `out` is NULL; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_configuration_string(out: *mut *mut c_char) -> td_status {
    call("td_configuration_string", || {
        let out = Out::new(out, "out")?;
        let text = runtime::configuration()?;
        // The text is built from our own strings and device names, which have no NUL.
        let text = CString::new(text)
            .map_err(|e| CError::new(td_status::TD_ERROR_INTERNAL, e.to_string()))?;
        out.write(text.into_raw());
        Ok(())
    })
}

/// Frees a string that taskdag returned (td_configuration_string). NULL is a no-op.
///
/// Ownership: `s` must come from taskdag and be freed once; it is invalid afterwards.
/// Thread safety: any thread.
#[no_mangle]
pub unsafe extern "C" fn td_string_free(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_version_matches_the_crate() {
        assert_eq!(
            TD_VERSION_MAJOR.to_string(),
            env!("CARGO_PKG_VERSION_MAJOR")
        );
        assert_eq!(
            TD_VERSION_MINOR.to_string(),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(
            TD_VERSION_PATCH.to_string(),
            env!("CARGO_PKG_VERSION_PATCH")
        );
        let s = unsafe { std::ffi::CStr::from_ptr(td_version_string()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
