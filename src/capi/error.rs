//! The error a C entry point reports: a status plus a message kept per thread for
//! `td_last_error_message`.

use super::status::td_status;
use crate::error::Error;
use std::cell::RefCell;
use std::ffi::{c_char, CString};

/// A failure on its way out through the C boundary. Boxed, so that `CResult<T>` stays two words
/// and hot entry points return it in registers.
#[derive(Debug)]
pub(crate) struct CError(Box<CErrorInner>);

#[derive(Debug)]
pub(crate) struct CErrorInner {
    pub status: td_status,
    pub message: String,
}

impl std::ops::Deref for CError {
    type Target = CErrorInner;

    fn deref(&self) -> &CErrorInner {
        &self.0
    }
}

impl CError {
    #[cold]
    pub fn new(status: td_status, message: impl Into<String>) -> Self {
        CError(Box::new(CErrorInner {
            status,
            message: message.into(),
        }))
    }

    #[cold]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(td_status::TD_ERROR_INVALID_ARGUMENT, message)
    }
}

impl From<Error> for CError {
    #[cold]
    fn from(e: Error) -> Self {
        CError::new(e.kind().into(), e.message())
    }
}

pub(crate) type CResult<T> = Result<T, CError>;

struct LastError {
    status: td_status,
    message: CString,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> = RefCell::new(LastError {
        status: td_status::TD_OK,
        message: CString::from(c"no error"),
    });
}

/// Records a failure of entry point `function` for this thread.
#[cold]
pub(crate) fn set_last_error(function: &str, status: td_status, message: &str) {
    let text = if message.starts_with(function) {
        message.to_owned()
    } else {
        format!("{function}: {message}")
    };
    // Interior NULs cannot be represented in a C string; no message of ours has one, but a user
    // string echoed in a message might.
    let message = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
    // `try_with` fails only during thread teardown, when nobody can read the message anyway.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = LastError { status, message });
}

/// Returns a human-readable description of the last failure on the calling thread: which function
/// failed, the offending value and what to do about it. "no error" if nothing failed yet.
///
/// Ownership: the string belongs to taskdag and stays valid until the next failing taskdag call on
/// this thread; copy it to keep it. Never NULL. Thread safety: per thread, any time.
#[no_mangle]
pub extern "C" fn td_last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().message.as_ptr())
        .unwrap_or(c"no error (thread is exiting)".as_ptr())
}

/// Returns the status of the last failure on the calling thread (`TD_OK` if none yet). Useful
/// after functions that report failure by returning NULL, such as td_pool_allocate.
///
/// Thread safety: per thread, any time.
#[no_mangle]
pub extern "C" fn td_last_error() -> td_status {
    LAST_ERROR
        .try_with(|e| e.borrow().status)
        .unwrap_or(td_status::TD_OK)
}
