//! A worker's mailbox: where a control thread posts a job for one worker, and the sleep/wake
//! handshake that lets an idle worker park instead of spinning (003 `sleep`/`wake`).
//!
//! One atomic word holds the whole state: EMPTY, SLEEPING (the owner is parked or about to
//! park), SHUTDOWN, or the address of a posted job. Every transition is a read-modify-write of
//! that word, so all of them are totally ordered and no argument about the ordering of two
//! different locations is needed:
//! - the poster swaps the job in; if the word it replaced was SLEEPING it unparks the owner;
//! - the owner goes to sleep only by a CAS from EMPTY to SLEEPING, so it cannot sleep on a job
//!   that is already there, and a job posted after the CAS finds SLEEPING and wakes it;
//! - `Thread::unpark` leaves a token when the owner has not parked yet, and the owner re-checks
//!   the word after every return from `park`, so neither an early unpark nor a spurious wake-up
//!   loses a job.
//!
//! Only the owner clears the word, and only the instance's control thread posts, after the
//! previous job has completed, so a post never overwrites an untaken job.
//!
//! The owner's idle loop (idle.rs) also polls its instance's job slot (slot.rs); SLEEPING is
//! then also the mark that a slot dispatch reads to decide whom to wake.

use super::job::JobRef;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::thread::{self, Thread};
use crate::sync::Mutex;

const EMPTY: usize = 0;
const SLEEPING: usize = 1;
const SHUTDOWN: usize = 2;
// Job addresses are aligned to at least 8 bytes, so they never collide with the values above.

pub(crate) struct Mailbox {
    state: AtomicUsize,
    /// The worker's rank in the instance the job was dispatched on; written before the job.
    rank: AtomicUsize,
    /// The owner, set once before it first waits; read only to wake it.
    thread: Mutex<Option<Thread>>,
}

/// What a worker finds in its mailbox.
pub(crate) enum Delivery {
    Job(JobRef, usize),
    Shutdown,
}

impl Mailbox {
    pub(crate) fn new() -> Mailbox {
        Mailbox {
            state: AtomicUsize::new(EMPTY),
            rank: AtomicUsize::new(0),
            thread: Mutex::new(None),
        }
    }

    /// Called once by the worker thread that owns this mailbox, before it waits.
    pub(crate) fn register_owner(&self) {
        *self.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread::current());
    }

    /// Posts `job` for the owner, to run as `rank`.
    pub(crate) fn post(&self, job: JobRef, rank: usize) {
        // Relaxed: published by the Release half of the swap in `deliver`.
        self.rank.store(rank, Ordering::Relaxed);
        self.deliver(job.as_ptr() as usize);
    }

    pub(crate) fn post_shutdown(&self) {
        self.deliver(SHUTDOWN);
    }

    fn deliver(&self, word: usize) {
        // AcqRel: Release publishes the job and rank to the owner's Acquire; Acquire orders the
        // read of `thread` below after the owner's registration (which precedes its CAS).
        let previous = self.state.swap(word, Ordering::AcqRel);
        debug_assert!(previous == EMPTY || previous == SLEEPING);
        if previous == SLEEPING {
            let owner = self.thread.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(t) = owner.as_ref() {
                t.unpark();
            }
        }
    }

    /// What the owner finds posted, if anything (taking it).
    pub(crate) fn poll(&self) -> Option<Delivery> {
        // Acquire: see the job and rank the poster wrote before its swap.
        let word = self.state.load(Ordering::Acquire);
        (word > SLEEPING).then(|| self.take(word))
    }

    /// The owner's first step towards parking: EMPTY to SLEEPING. False when something was
    /// posted meanwhile.
    pub(crate) fn prepare_sleep(&self) -> bool {
        // AcqRel: Release makes SLEEPING visible to a control thread whose slot swap reads the
        // owner's later announcement (slot.rs); Acquire as in `poll`.
        self.state
            .compare_exchange(EMPTY, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// True while the owner is still marked SLEEPING (nothing was posted).
    pub(crate) fn is_sleeping(&self) -> bool {
        self.state.load(Ordering::Acquire) == SLEEPING
    }

    /// The owner is awake again: SLEEPING back to EMPTY unless a delivery replaced it.
    pub(crate) fn cancel_sleep(&self) {
        let _ = self
            .state
            .compare_exchange(SLEEPING, EMPTY, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Unparks the owner if it is marked SLEEPING (a slot dispatch for its instance was
    /// published; slot.rs says why the mark is seen).
    pub(crate) fn wake_if_sleeping(&self) {
        if self.is_sleeping() {
            let owner = self.thread.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(t) = owner.as_ref() {
                t.unpark();
            }
        }
    }

    fn take(&self, word: usize) -> Delivery {
        // Relaxed: the Acquire load that found `word` already synchronized with the poster; the
        // owner is the only thread that changes a posted word.
        self.state.store(EMPTY, Ordering::Relaxed);
        if word == SHUTDOWN {
            return Delivery::Shutdown;
        }
        // SAFETY: words above SHUTDOWN come from `post`, which takes a JobRef.
        let job = unsafe { JobRef::from_ptr(word as *mut ()) };
        Delivery::Job(job, self.rank.load(Ordering::Relaxed))
    }
}
