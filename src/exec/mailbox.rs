//! A pool thread's mailbox: where a control thread posts a job for it, where it reports the job
//! done, and the sleep/wake handshakes that let an idle worker, or a control thread waiting for
//! its workers, park instead of spinning (003 `sleep`/`wake`).
//!
//! Each mailbox has two halves on separate cache lines, each written by one side only, so a
//! dispatch moves each line once per direction and nobody read-modify-writes a shared line:
//! - `posting`, written by the control thread that posts: a sequence number `seq` (one more per
//!   post) and, written before it, the job, the worker's rank in the instance and the control
//!   thread's pool rank. The worker polls `seq` and remembers the last one it took.
//! - `owner`, written by the mailbox's own thread: `done`, the last `seq` it finished, which the
//!   control polls; `waiting`, set while that thread, acting as a control thread itself, is
//!   parked until its workers finish.
//!
//! Posting: the control stores the job fields (Relaxed), then `seq` (Release); the worker's
//! Acquire load of the new `seq` makes the fields visible.
//!
//! Worker sleep, a Dekker handshake: the poster stores `seq`, issues a SeqCst fence, then loads
//! `sleeping`; the worker stores `sleeping = true`, issues a SeqCst fence, then loads `seq`, and
//! parks only if it is unchanged. The two fences are ordered in the single total order of SeqCst
//! operations; the side whose fence comes second sees the other side's store. So either the
//! worker sees the job and does not park, or the poster sees `sleeping` and unparks it. (Fences
//! rather than SeqCst stores and loads, so that the loom model, which treats SeqCst accesses as
//! AcqRel but models SeqCst fences, checks the real argument.) `Thread::unpark` leaves a token
//! when the thread has not parked yet, so an unpark that wins the race against `park` is not
//! lost; a stale token only makes a `park` return early, and every wait loop checks its
//! condition again.
//!
//! Control sleep, the same handshake in the other direction: the control stores its own
//! `waiting = true`, fence, then loads every worker's `done` and parks only if one is not
//! finished; a worker stores `done`, fence, then loads its control's `waiting` and unparks it if
//! set.
//!
//! The job lives on the control thread's stack. A worker's last access to it precedes its
//! `done` store (Release); the control returns only after loading every worker's `done`
//! (Acquire), so no worker touches a job that is gone. After `done` a worker touches only
//! mailboxes, which the pool owns.

use super::job::JobRef;
use crate::cache_line::CachePadded;
use crate::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crate::sync::{current_thread, park, spin_loop, Thread};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long an idle worker polls its mailbox before it parks. Back-to-back dispatches (the
/// common case in a time-step loop) then find workers awake; an idle pool stops burning cores
/// after this long.
const WORKER_SPIN_BEFORE_PARK: Duration = Duration::from_micros(100);

/// How long a control thread polls for its workers before it parks.
const CONTROL_SPIN_BEFORE_PARK: Duration = Duration::from_micros(50);

/// Polls between two looks at the clock: reading it costs as much as a short dispatch's
/// bookkeeping, and most waits end before the first look.
#[cfg(not(loom))]
const POLLS_PER_CLOCK_READ: u32 = 64;

pub(crate) struct Mailbox {
    posting: CachePadded<Posting>,
    owner: CachePadded<OwnerSide>,
}

/// Written by the control thread that posts (except `sleeping`, written by the owner when it
/// parks, which is rare).
struct Posting {
    seq: AtomicU64,
    job: AtomicPtr<()>,
    /// The worker's rank in the instance the job was dispatched on.
    rank: AtomicUsize,
    /// The pool rank of the control thread that posted the job.
    control: AtomicUsize,
    sleeping: AtomicBool,
    /// The owner thread, for unpark; registered before the owner first waits or controls.
    thread: OnceLock<Thread>,
}

/// Written by the mailbox's own thread.
struct OwnerSide {
    done: AtomicU64,
    waiting: AtomicBool,
}

/// What a worker finds in its mailbox.
pub(crate) enum Delivery {
    /// Run `job` as instance rank `rank`, then report it done and wake `control` if it waits.
    Job {
        job: JobRef,
        rank: usize,
        control: usize,
    },
    Shutdown,
}

/// A job pointer that no real job has: asks the worker to exit.
const SHUTDOWN: *mut () = 1 as *mut ();

/// Calls `ready` until it returns true: polls, then (after `spin` of polling) calls `sleep`,
/// which parks if the condition still does not hold.
fn poll_then_sleep(spin: Duration, mut ready: impl FnMut() -> bool, mut sleep: impl FnMut()) {
    let mut start: Option<Instant> = None;
    let mut polls: u32 = 0;
    while !ready() {
        if keep_polling(spin, &mut start, &mut polls) {
            spin_loop();
        } else {
            sleep();
        }
    }
}

#[cfg(not(loom))]
fn keep_polling(spin: Duration, start: &mut Option<Instant>, polls: &mut u32) -> bool {
    *polls = polls.wrapping_add(1);
    *polls % POLLS_PER_CLOCK_READ != 0 || start.get_or_insert_with(Instant::now).elapsed() < spin
}

/// The loom model goes to the sleep handshake at once: that is the part it checks, and polling
/// would only multiply the interleavings.
#[cfg(loom)]
fn keep_polling(_: Duration, _: &mut Option<Instant>, _: &mut u32) -> bool {
    false
}

impl Mailbox {
    pub(crate) fn new() -> Mailbox {
        Mailbox {
            posting: CachePadded(Posting {
                seq: AtomicU64::new(0),
                job: AtomicPtr::new(std::ptr::null_mut()),
                rank: AtomicUsize::new(0),
                control: AtomicUsize::new(0),
                sleeping: AtomicBool::new(false),
                thread: OnceLock::new(),
            }),
            owner: CachePadded(OwnerSide {
                done: AtomicU64::new(0),
                waiting: AtomicBool::new(false),
            }),
        }
    }

    /// Called once by the thread that owns this mailbox (a worker, or the thread that created
    /// the pool), before it waits for jobs or dispatches.
    pub(crate) fn register_owner(&self) {
        let _ = self.posting.thread.set(current_thread());
    }

    fn unpark_owner(&self) {
        if let Some(t) = self.posting.thread.get() {
            t.unpark();
        }
    }

    /// Posts `job` for the owner, to run as instance rank `rank` for the control thread of pool
    /// rank `control`. Only that control thread posts here, and only after the owner finished
    /// its previous job (the control waits for all its workers before it returns).
    pub(crate) fn post(&self, job: JobRef, rank: usize, control: usize) {
        let p = &*self.posting;
        // Relaxed: published by the SeqCst store of `seq` below (module comment).
        p.job.store(job.as_ptr(), Ordering::Relaxed);
        p.rank.store(rank, Ordering::Relaxed);
        p.control.store(control, Ordering::Relaxed);
        self.publish();
    }

    pub(crate) fn post_shutdown(&self) {
        self.posting.job.store(SHUTDOWN, Ordering::Relaxed);
        self.publish();
    }

    fn publish(&self) {
        let p = &*self.posting;
        // A read-modify-write, not a load and a store: a pool may be dropped (shutdown posted)
        // by another thread than the control thread that posted last, and this way it still
        // moves `seq` past the last value the worker saw. Release: the job fields.
        p.seq.fetch_add(1, Ordering::Release);
        fence(Ordering::SeqCst);
        // Relaxed: ordered by the fences of the sleep handshake (module comment).
        if p.sleeping.load(Ordering::Relaxed) {
            self.unpark_owner();
        }
    }

    /// Blocks the owner until a post newer than `*seen` arrives, and takes it (updating
    /// `*seen`): polls, then parks.
    pub(crate) fn wait(&self, seen: &mut u64) -> Delivery {
        let p = &*self.posting;
        poll_then_sleep(
            WORKER_SPIN_BEFORE_PARK,
            // Acquire: the job fields written before `seq` (module comment).
            || p.seq.load(Ordering::Acquire) != *seen,
            || {
                // Relaxed: ordered by the fences of the sleep handshake.
                p.sleeping.store(true, Ordering::Relaxed);
                fence(Ordering::SeqCst);
                if p.seq.load(Ordering::Relaxed) == *seen {
                    park();
                }
                p.sleeping.store(false, Ordering::Relaxed);
            },
        );
        // Relaxed: the acquiring load above already saw this value (or an earlier one: a new
        // post needs this owner's `done` first, so `seq` moved exactly once).
        *seen = p.seq.load(Ordering::Relaxed);
        let job = p.job.load(Ordering::Relaxed);
        if job == SHUTDOWN {
            return Delivery::Shutdown;
        }
        Delivery::Job {
            // SAFETY: pointers other than SHUTDOWN come from `post`, which takes a JobRef, and
            // the job stays alive until this worker reports it done.
            job: unsafe { JobRef::from_ptr(job) },
            rank: p.rank.load(Ordering::Relaxed),
            control: p.control.load(Ordering::Relaxed),
        }
    }

    /// Reports the job taken as post `seen` done, and wakes its control thread, the owner of
    /// `control`, if it is parked waiting for its workers. The worker must not touch the job
    /// afterwards.
    pub(crate) fn finish(&self, seen: u64, control: &Mailbox) {
        // Release: the worker's accesses to the job come before it (module comment).
        self.owner.done.store(seen, Ordering::Release);
        fence(Ordering::SeqCst);
        // Relaxed: ordered by the fences of the control's sleep handshake.
        if control.owner.waiting.load(Ordering::Relaxed) {
            control.unpark_owner();
        }
    }

    /// True once the owner finished the last job posted here.
    fn is_done(&self) -> bool {
        // Relaxed for `seq`: the calling control thread wrote its last value. Acquire for `done`:
        // the worker's accesses to the job.
        self.owner.done.load(Ordering::Acquire) == self.posting.seq.load(Ordering::Relaxed)
    }
}

/// Blocks the control thread, which owns `mailboxes[control]`, until the owners of
/// `mailboxes[workers]` have finished the jobs it posted to them: polls, then parks.
pub(crate) fn wait_for_workers(
    mailboxes: &[CachePadded<Mailbox>],
    control: usize,
    workers: &[usize],
) {
    let own = &mailboxes[control].owner;
    let all_done = || workers.iter().all(|&r| mailboxes[r].is_done());
    poll_then_sleep(CONTROL_SPIN_BEFORE_PARK, all_done, || {
        // Relaxed: ordered by the fences of the sleep handshake (module comment).
        own.waiting.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if !all_done() {
            park();
        }
        own.waiting.store(false, Ordering::Relaxed);
    });
}

/// The loom model of the mailbox protocol, run by scripts/test.sh with
///     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib loom_
/// A control thread posts jobs to a worker (and to a second one in the other model) and waits
/// for them; the worker writes a loom `UnsafeCell` that the control reads after the wait, so a
/// missing happens-before edge is reported as a data race, and a lost wake-up as a deadlock
/// (both sides reach the park path at once, since the model skips the polling). The preemption
/// bound defaults to 3; `LOOM_MAX_PREEMPTIONS` overrides it.
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::exec::job::Job;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// One cell per rank; each rank writes only its own, the control reads them after the wait.
    struct Cells(Vec<UnsafeCell<usize>>);
    // SAFETY: ranks write disjoint cells; loom checks the control's reads against the writes.
    unsafe impl Sync for Cells {}

    impl Cells {
        fn write(&self, rank: usize, value: usize) {
            // SAFETY: see `Cells`.
            self.0[rank].with_mut(|c| unsafe { *c = value });
        }

        fn read(&self, rank: usize) -> usize {
            // SAFETY: see `Cells`.
            self.0[rank].with(|c| unsafe { *c })
        }
    }

    fn check(model: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(3);
        }
        builder.check(model);
    }

    fn worker(mailboxes: Arc<Vec<CachePadded<Mailbox>>>, me: usize) {
        mailboxes[me].register_owner();
        let mut seen = 0;
        loop {
            match mailboxes[me].wait(&mut seen) {
                Delivery::Shutdown => return,
                Delivery::Job { job, rank, control } => {
                    // SAFETY: the model's control thread waits for `finish` before it drops the
                    // job.
                    unsafe { job.execute(rank) };
                    mailboxes[me].finish(seen, &mailboxes[control]);
                }
            }
        }
    }

    /// Runs `rounds` dispatches from thread 0 to `workers` worker threads; each rank writes its
    /// own cell, and the control reads them all after each dispatch.
    fn dispatches(workers: usize, rounds: usize) {
        let mailboxes: Arc<Vec<CachePadded<Mailbox>>> =
            Arc::new((0..=workers).map(|_| CachePadded(Mailbox::new())).collect());
        mailboxes[0].register_owner();
        let handles: Vec<loom::thread::JoinHandle<()>> = (1..=workers)
            .map(|me| {
                let m = Arc::clone(&mailboxes);
                loom::thread::spawn(move || worker(m, me))
            })
            .collect();
        let members: Vec<usize> = (0..=workers).collect();
        for round in 1..=rounds {
            let cells = Cells((0..=workers).map(|_| UnsafeCell::new(0)).collect());
            let work = |rank: usize| cells.write(rank, round);
            let job = Job::new(&work);
            for &r in &members[1..] {
                mailboxes[r].post(job.as_ref(), r, 0);
            }
            job.run_rank(0);
            wait_for_workers(&mailboxes, 0, &members[1..]);
            for &r in &members {
                assert_eq!(cells.read(r), round);
            }
            job.rethrow_panic();
        }
        for &r in &members[1..] {
            mailboxes[r].post_shutdown();
        }
        // Not joined: a worker may still unpark this thread after seeing a stale `waiting`,
        // which std allows but loom's join does not expect. loom runs every thread to its end
        // anyway (a worker that misses its shutdown is a deadlock).
        drop(handles);
    }

    #[test]
    fn loom_two_dispatches_to_one_worker() {
        check(|| dispatches(1, 2));
    }

    #[test]
    fn loom_one_dispatch_to_two_workers() {
        check(|| dispatches(2, 1));
    }
}
