//! One dispatch: the work closure that the control thread and its workers share, and the first
//! panic of any of them, rethrown on the control thread.
//!
//! The job lives on the control thread's stack; workers reach it through the raw pointer their
//! mailbox carries. The mailbox protocol (mailbox.rs) guarantees that the control thread returns
//! only after every worker has finished with it.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

pub(crate) struct Job<'a> {
    work: &'a (dyn Fn(usize) + Sync),
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// A type-erased pointer to a `Job` whose control thread waits for the worker it was posted to.
#[derive(Clone, Copy)]
pub(crate) struct JobRef(*const Job<'static>);

// SAFETY: a Job is Sync (its closure is Sync, the panic slot a mutex); the pointer is only
// dereferenced while the job is alive (module comment).
unsafe impl Send for JobRef {}

impl JobRef {
    pub(crate) fn as_ptr(self) -> *mut () {
        self.0 as *mut ()
    }

    /// # Safety
    /// `ptr` must come from `JobRef::as_ptr` of a job that is still alive.
    pub(crate) unsafe fn from_ptr(ptr: *mut ()) -> JobRef {
        JobRef(ptr as *const Job<'static>)
    }

    /// Runs the job as `rank`.
    ///
    /// # Safety
    /// The job must be alive: its control thread has not yet seen this worker report it done.
    pub(crate) unsafe fn execute(self, rank: usize) {
        (*self.0).run_rank(rank);
    }
}

impl<'a> Job<'a> {
    pub(crate) fn new(work: &'a (dyn Fn(usize) + Sync)) -> Job<'a> {
        Job {
            work,
            panic: Mutex::new(None),
        }
    }

    pub(crate) fn as_ref(&self) -> JobRef {
        JobRef((self as *const Self).cast::<()>().cast::<Job<'static>>())
    }

    /// Runs the closure for `rank`, keeping a panic to rethrow on the control thread.
    pub(crate) fn run_rank(&self, rank: usize) {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| (self.work)(rank))) {
            let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(p);
        }
    }

    /// Rethrows the first panic of any rank; call once every worker has finished.
    pub(crate) fn rethrow_panic(self) {
        let panic = self.panic.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    }
}
