//! One dispatch: the work closure, shared by the control thread and the workers, and the
//! completion protocol that lets the control thread return only when no worker touches the job
//! any more.
//!
//! The job lives on the control thread's stack. Workers reach it through a raw pointer, so the
//! control thread must not return while any worker may still dereference it:
//! - each worker's last access to the job is its decrement of `state`, except the worker that
//!   brings the count to zero, whose last access is the `released` store;
//! - the control thread returns only after it reads `released == true`.
//!
//! Waking a parked control thread: `state` holds the count of running workers and a
//! CONTROL_PARKED bit in one word. The control sets the bit with `fetch_or` before it parks and
//! parks only if the count it replaced was non-zero; the last worker's `fetch_sub` sees the bit
//! if the control set it first and then unparks it. Both are read-modify-writes of one word, so
//! one of the two orders holds and the wake-up cannot be lost. The control thread stores its
//! handle before that `fetch_or` (Release), and the last worker reads it only after its
//! `fetch_sub` (Acquire) saw the bit, so the handle is taken only by dispatches that park.

use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::sync::thread::{self, Thread};
use crate::sync::{Backoff, Mutex};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

const CONTROL_PARKED: usize = 1 << (usize::BITS - 1);

/// How long the control thread polls for completion before it parks.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(50);

pub(crate) struct Job<'a> {
    work: &'a (dyn Fn(usize) + Sync),
    /// Workers still running the job, plus CONTROL_PARKED.
    state: AtomicUsize,
    released: AtomicBool,
    /// The control thread's handle, stored only when it is about to park (module comment).
    control: Mutex<Option<Thread>>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// A type-erased pointer to a `Job` that is alive until its control thread sees it released.
#[derive(Clone, Copy)]
pub(crate) struct JobRef(*const Job<'static>);

// SAFETY: a Job is Sync (its closure is Sync, the rest are atomics and a mutex); the pointer is
// only dereferenced while the job is alive (module comment).
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

    /// Runs the job as `rank`, then signals completion. After this returns the job may be gone.
    ///
    /// # Safety
    /// The job must still be alive, and this must be called once per posted delivery.
    pub(crate) unsafe fn execute(self, rank: usize) {
        let job = &*self.0;
        job.run_rank(rank);
        // AcqRel: the decrements form a release sequence that the last worker acquires, so its
        // Release store below carries every worker's writes to the control thread.
        let previous = job.state.fetch_sub(1, Ordering::AcqRel);
        if previous & !CONTROL_PARKED == 1 {
            if previous & CONTROL_PARKED != 0 {
                let control = job.control.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(t) = control.as_ref() {
                    t.unpark();
                }
            }
            job.released.store(true, Ordering::Release);
        }
    }
}

impl<'a> Job<'a> {
    /// A job run by `workers` threads besides the control thread.
    pub(crate) fn new(work: &'a (dyn Fn(usize) + Sync), workers: usize) -> Job<'a> {
        Job {
            work,
            state: AtomicUsize::new(workers),
            released: AtomicBool::new(workers == 0),
            control: Mutex::new(None),
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

    /// Blocks until every worker has finished with the job; rethrows the first panic.
    pub(crate) fn wait(&self) {
        let mut backoff = Backoff::new(SPIN_BEFORE_PARK);
        // Acquire: see the workers' writes (pairs with the Release store in `execute`).
        while !self.released.load(Ordering::Acquire) {
            if backoff.keep_polling() {
                continue;
            }
            self.control
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(thread::current);
            // AcqRel: Release publishes the handle stored above to the last worker; what else
            // matters is only the order of this RMW against the workers' decrements (module
            // comment).
            let previous = self.state.fetch_or(CONTROL_PARKED, Ordering::AcqRel);
            if previous & !CONTROL_PARKED != 0 {
                thread::park();
            } else {
                // The last worker is between its decrement and its `released` store.
                thread::yield_now();
            }
        }
        let panic = self.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    }
}
