//! A worker's mailbox: where a control thread posts a job for one worker, and the sleep/wake
//! handshake that lets an idle worker park instead of spinning (003 `sleep`/`wake`).
//!
//! Correctness of the handshake (Dekker style, both sides SeqCst):
//! - the poster stores the job, then loads `sleeping`;
//! - the worker stores `sleeping = true`, then loads the job.
//!
//! In the single total order of SeqCst operations one of the two stores comes first, so at least
//! one side sees the other's store: either the worker sees the job and does not park, or the
//! poster sees `sleeping` and unparks it. `Thread::unpark` leaves a token when the worker has not
//! parked yet, so an unpark that wins the race against `park` is not lost.

use super::job::JobRef;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long an idle worker polls its mailbox before it parks. Back-to-back dispatches (the
/// common case in a time-step loop) then find workers awake; an idle pool stops burning cores
/// after this long.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(100);

pub(crate) struct Mailbox {
    job: AtomicPtr<()>,
    /// The worker's rank in the instance the job was dispatched on; written before `job`.
    rank: AtomicUsize,
    sleeping: AtomicBool,
    thread: OnceLock<Thread>,
}

/// What a worker finds in its mailbox.
pub(crate) enum Delivery {
    Job(JobRef, usize),
    Shutdown,
}

/// A job pointer that no real job has: asks the worker to exit.
const SHUTDOWN: *mut () = 1 as *mut ();

impl Mailbox {
    pub(crate) fn new() -> Mailbox {
        Mailbox {
            job: AtomicPtr::new(std::ptr::null_mut()),
            rank: AtomicUsize::new(0),
            sleeping: AtomicBool::new(false),
            thread: OnceLock::new(),
        }
    }

    /// Called once by the worker thread that owns this mailbox, before it waits.
    pub(crate) fn register_owner(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// Posts `job` for the owner, to run as `rank`. The caller guarantees the mailbox is empty:
    /// only the instance's control thread posts, and it waits for every job to finish first.
    pub(crate) fn post(&self, job: JobRef, rank: usize) {
        // Relaxed: published by the SeqCst store of `job` below, read after the owner's load.
        self.rank.store(rank, Ordering::Relaxed);
        self.deliver(job.as_ptr());
    }

    pub(crate) fn post_shutdown(&self) {
        self.deliver(SHUTDOWN);
    }

    fn deliver(&self, ptr: *mut ()) {
        self.job.store(ptr, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }

    /// Blocks the owner until something is posted: polls, then parks.
    pub(crate) fn wait(&self) -> Delivery {
        let start = Instant::now();
        let mut polls: u32 = 0;
        loop {
            if let Some(d) = self.take() {
                return d;
            }
            polls = polls.wrapping_add(1);
            if polls % 64 != 0 || start.elapsed() < SPIN_BEFORE_PARK {
                std::hint::spin_loop();
                continue;
            }
            self.sleeping.store(true, Ordering::SeqCst);
            if self.job.load(Ordering::SeqCst).is_null() {
                std::thread::park();
            }
            self.sleeping.store(false, Ordering::Relaxed);
        }
    }

    fn take(&self) -> Option<Delivery> {
        if self.job.load(Ordering::Relaxed).is_null() {
            return None;
        }
        // Acquire: pairs with the poster's store so the job's contents and `rank` are visible.
        let ptr = self.job.swap(std::ptr::null_mut(), Ordering::Acquire);
        if ptr == SHUTDOWN {
            return Some(Delivery::Shutdown);
        }
        // SAFETY: non-null pointers other than SHUTDOWN come from `post`, which takes a JobRef.
        let job = unsafe { JobRef::from_ptr(ptr) };
        Some(Delivery::Job(job, self.rank.load(Ordering::Relaxed)))
    }
}
