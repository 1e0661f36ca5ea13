//! The status every fallible C entry point returns, and its names.

use crate::error::ErrorKind;
use std::ffi::{c_char, c_int};

/// Result of a taskdag call. `TD_OK` is zero; every other value is a failure whose details are in
/// `td_last_error_message()`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum td_status {
    /// Success.
    TD_OK = 0,
    /// A required pointer argument was NULL.
    TD_ERROR_NULL_ARGUMENT = 1,
    /// An argument is out of range or inconsistent with another argument.
    TD_ERROR_INVALID_ARGUMENT = 2,
    /// A handle is of the wrong type or was already released.
    TD_ERROR_INVALID_HANDLE = 3,
    /// The runtime is not initialized (td_initialize not called, or td_finalize called).
    TD_ERROR_NOT_INITIALIZED = 4,
    /// td_initialize was called while the runtime is initialized.
    TD_ERROR_ALREADY_INITIALIZED = 5,
    /// The capability is not available on this machine or in this build (for example no GPU).
    TD_ERROR_UNAVAILABLE = 6,
    /// A memory pool could not satisfy an allocation.
    TD_ERROR_POOL_EXHAUSTED = 7,
    /// The operating system refused memory.
    TD_ERROR_OUT_OF_MEMORY = 8,
    /// A parameter struct's struct_size does not match any version this library knows.
    TD_ERROR_STRUCT_SIZE = 9,
    /// A bug in taskdag (including a caught Rust panic); the message says where.
    TD_ERROR_INTERNAL = 10,
    /// A task DAG can make no more progress: tasks wait on futures that can never complete.
    TD_ERROR_DEADLOCK = 11,
    /// A work graph has a cycle; the message names a node on it.
    TD_ERROR_CYCLE = 12,
    /// The object is in use (for example a dispatch is running) and the call cannot proceed now.
    TD_ERROR_BUSY = 13,
    /// The call was made from a thread that may not make it (for example dispatch from a thread
    /// that is not the instance's control thread, or td_wait from inside a task).
    TD_ERROR_WRONG_THREAD = 14,
    /// The value asked for does not exist yet (for example the result of an incomplete task).
    TD_ERROR_NOT_READY = 15,
}

impl From<ErrorKind> for td_status {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::InvalidArgument => td_status::TD_ERROR_INVALID_ARGUMENT,
            ErrorKind::NotInitialized => td_status::TD_ERROR_NOT_INITIALIZED,
            ErrorKind::AlreadyInitialized => td_status::TD_ERROR_ALREADY_INITIALIZED,
            ErrorKind::Unavailable => td_status::TD_ERROR_UNAVAILABLE,
            ErrorKind::PoolExhausted => td_status::TD_ERROR_POOL_EXHAUSTED,
            ErrorKind::OutOfMemory => td_status::TD_ERROR_OUT_OF_MEMORY,
            ErrorKind::Internal => td_status::TD_ERROR_INTERNAL,
            ErrorKind::Deadlock => td_status::TD_ERROR_DEADLOCK,
            ErrorKind::Cycle => td_status::TD_ERROR_CYCLE,
            ErrorKind::Busy => td_status::TD_ERROR_BUSY,
            ErrorKind::WrongThread => td_status::TD_ERROR_WRONG_THREAD,
            ErrorKind::NotReady => td_status::TD_ERROR_NOT_READY,
        }
    }
}

const STATUS_NAMES: [&std::ffi::CStr; 16] = [
    c"TD_OK",
    c"TD_ERROR_NULL_ARGUMENT",
    c"TD_ERROR_INVALID_ARGUMENT",
    c"TD_ERROR_INVALID_HANDLE",
    c"TD_ERROR_NOT_INITIALIZED",
    c"TD_ERROR_ALREADY_INITIALIZED",
    c"TD_ERROR_UNAVAILABLE",
    c"TD_ERROR_POOL_EXHAUSTED",
    c"TD_ERROR_OUT_OF_MEMORY",
    c"TD_ERROR_STRUCT_SIZE",
    c"TD_ERROR_INTERNAL",
    c"TD_ERROR_DEADLOCK",
    c"TD_ERROR_CYCLE",
    c"TD_ERROR_BUSY",
    c"TD_ERROR_WRONG_THREAD",
    c"TD_ERROR_NOT_READY",
];

/// Returns the name of a status, e.g. "TD_ERROR_NULL_ARGUMENT", or "TD_UNKNOWN_STATUS" for a value
/// that is no td_status (any int is accepted).
///
/// Ownership: the string is static; do not free it. Thread safety: any thread, any time, also
/// before td_initialize.
#[no_mangle]
pub extern "C" fn td_status_string(status: c_int) -> *const c_char {
    usize::try_from(status)
        .ok()
        .and_then(|i| STATUS_NAMES.get(i))
        .map_or(c"TD_UNKNOWN_STATUS".as_ptr(), |name| name.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn every_status_has_its_own_name() {
        let all = [
            td_status::TD_OK,
            td_status::TD_ERROR_NULL_ARGUMENT,
            td_status::TD_ERROR_INVALID_ARGUMENT,
            td_status::TD_ERROR_INVALID_HANDLE,
            td_status::TD_ERROR_NOT_INITIALIZED,
            td_status::TD_ERROR_ALREADY_INITIALIZED,
            td_status::TD_ERROR_UNAVAILABLE,
            td_status::TD_ERROR_POOL_EXHAUSTED,
            td_status::TD_ERROR_OUT_OF_MEMORY,
            td_status::TD_ERROR_STRUCT_SIZE,
            td_status::TD_ERROR_INTERNAL,
            td_status::TD_ERROR_DEADLOCK,
            td_status::TD_ERROR_CYCLE,
            td_status::TD_ERROR_BUSY,
            td_status::TD_ERROR_WRONG_THREAD,
            td_status::TD_ERROR_NOT_READY,
        ];
        assert_eq!(all.len(), STATUS_NAMES.len());
        for s in all {
            let name = unsafe { CStr::from_ptr(td_status_string(s as c_int)) };
            assert_eq!(name.to_str().unwrap(), format!("{s:?}"));
        }
    }

    #[test]
    fn unknown_status_values_are_named_unknown() {
        for v in [-1, 16, 1000, c_int::MIN, c_int::MAX] {
            let name = unsafe { CStr::from_ptr(td_status_string(v)) };
            assert_eq!(name.to_str().unwrap(), "TD_UNKNOWN_STATUS");
        }
    }
}
