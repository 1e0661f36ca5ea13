//! One dispatch: the work closure, shared by the control thread and the workers, and the
//! completion protocol that lets the control thread return only when no worker touches the job
//! any more.
//!
//! The job lives on the control thread's stack. Workers reach it through a raw pointer, so the
//! control thread must not return while any worker may still dereference it:
//! - each worker's last access to the job is its `remaining.fetch_sub`, except the worker that
//!   brings `remaining` to zero, whose last access is the `released` store;
//! - the control thread returns only after it reads `released == true`.
//!
//! Waking a parked control thread uses the same Dekker handshake as the mailboxes: the control
//! stores `control_sleeping` then loads `remaining`; the last worker decrements `remaining` then
//! loads `control_sleeping` (all SeqCst). If the control saw a non-zero count, the decrement
//! follows its store in the total order, so the last worker sees `control_sleeping` and unparks.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long the control thread polls for completion before it parks.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(50);

pub(crate) struct Job<'a> {
    work: &'a (dyn Fn(usize) + Sync),
    remaining: AtomicUsize,
    released: AtomicBool,
    control: Thread,
    control_sleeping: AtomicBool,
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
        if job.remaining.fetch_sub(1, Ordering::SeqCst) == 1 {
            if job.control_sleeping.load(Ordering::SeqCst) {
                job.control.unpark();
            }
            // Release: the control thread's Acquire load sees every worker's writes (each
            // worker's fetch_sub precedes this store in the modification order of `remaining`).
            job.released.store(true, Ordering::Release);
        }
    }
}

impl<'a> Job<'a> {
    /// A job run by `workers` threads besides the control thread.
    pub(crate) fn new(work: &'a (dyn Fn(usize) + Sync), workers: usize) -> Job<'a> {
        Job {
            work,
            remaining: AtomicUsize::new(workers),
            released: AtomicBool::new(workers == 0),
            control: std::thread::current(),
            control_sleeping: AtomicBool::new(false),
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
        let start = Instant::now();
        let mut polls: u32 = 0;
        // Acquire: see the workers' writes (pairs with the Release store in `execute`).
        while !self.released.load(Ordering::Acquire) {
            polls = polls.wrapping_add(1);
            if polls % 64 != 0 || start.elapsed() < SPIN_BEFORE_PARK {
                std::hint::spin_loop();
                continue;
            }
            self.control_sleeping.store(true, Ordering::SeqCst);
            if self.remaining.load(Ordering::SeqCst) != 0 {
                std::thread::park();
            } else {
                // The last worker is between its decrement and its `released` store.
                std::thread::yield_now();
            }
        }
        let panic = self.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    }
}
