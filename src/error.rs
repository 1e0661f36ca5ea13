//! Errors of the Rust core. Each carries a kind, which the C ABI maps to a `td_status`, and a
//! message written for the person debugging the call: what failed, the value, and the fix.

use std::fmt;

/// The class of a failure; stable, so callers can branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An argument is out of its documented range or inconsistent with another one.
    InvalidArgument,
    /// The runtime has not been initialized, or was finalized.
    NotInitialized,
    /// `initialize` was called while the runtime is already initialized.
    AlreadyInitialized,
    /// The requested capability is not present on this machine or in this build.
    Unavailable,
    /// A memory pool has no block left for the request.
    PoolExhausted,
    /// The operating system refused memory.
    OutOfMemory,
    /// An invariant of the library was broken; a bug to report.
    Internal,
    /// A task DAG can make no more progress.
    Deadlock,
    /// A work graph has a cycle.
    Cycle,
    /// The object is in use and the call cannot proceed now.
    Busy,
    /// The call was made from a thread that may not make it.
    WrongThread,
    /// The value asked for does not exist yet.
    NotReady,
}

/// A failure of a core operation. Boxed, so that `Result<T, Error>` stays two words and hot
/// paths return it in registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    message: String,
}

impl Error {
    #[cold]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
        }))
    }

    #[cold]
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
