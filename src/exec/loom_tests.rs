//! Model checks of the dispatch handshake: a control thread posts jobs to a worker's mailbox and
//! waits for them, with the worker parking between jobs. loom explores the interleavings (up to
//! a preemption bound) and reports a lost wake-up as a deadlock and a missing happens-before
//! edge between the worker's writes and the control thread's reads as a data race.
//!
//! Run with:
//!     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib exec::loom

use super::job::Job;
use super::mailbox::{Delivery, Mailbox};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

/// A cell the model's threads share; loom checks every access for races.
struct Shared(UnsafeCell<u32>);
// SAFETY: accesses are what the model checks; loom reports any that race.
unsafe impl Sync for Shared {}

impl Shared {
    fn new() -> Shared {
        Shared(UnsafeCell::new(0))
    }
    fn set(&self, v: u32) {
        self.0.with_mut(|p| unsafe { *p = v });
    }
    fn get(&self) -> u32 {
        self.0.with(|p| unsafe { *p })
    }
}

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(model);
}

/// The worker: runs every job it is posted until it is told to stop.
fn spawn_worker(mailbox: Arc<Mailbox>) -> thread::JoinHandle<()> {
    let registered = Arc::new(loom::sync::atomic::AtomicBool::new(false));
    let r = registered.clone();
    let handle = thread::spawn(move || {
        mailbox.register_owner();
        r.store(true, loom::sync::atomic::Ordering::Release);
        loop {
            match mailbox.wait() {
                Delivery::Shutdown => return,
                // SAFETY: the control thread keeps each job alive until it is released.
                Delivery::Job(job, rank) => unsafe { job.execute(rank) },
            }
        }
    });
    // The pool registers each worker before the first post can reach it (the thread handle is
    // known at spawn); model that ordering.
    while !registered.load(loom::sync::atomic::Ordering::Acquire) {
        thread::yield_now();
    }
    handle
}

#[test]
fn two_dispatches_to_a_parking_worker_complete_and_publish_the_workers_writes() {
    check(|| {
        let mailbox = Arc::new(Mailbox::new());
        let worker = spawn_worker(mailbox.clone());
        for round in 0..2u32 {
            let cell = Shared::new();
            let work = |rank: usize| {
                if rank == 1 {
                    cell.set(round + 1);
                }
            };
            let job = Job::new(&work, 1);
            mailbox.post(job.as_ref(), 1);
            job.run_rank(0);
            job.wait();
            // A race here means `wait` returned before the worker's write happened-before it.
            assert_eq!(cell.get(), round + 1);
        }
        mailbox.post_shutdown();
        worker.join().unwrap();
    });
}

#[test]
fn two_workers_finish_one_job_and_the_last_one_wakes_the_control_thread() {
    check(|| {
        let boxes = [Arc::new(Mailbox::new()), Arc::new(Mailbox::new())];
        let workers: Vec<_> = boxes.iter().map(|m| spawn_worker(m.clone())).collect();
        let cells = [Shared::new(), Shared::new()];
        let work = |rank: usize| {
            if rank > 0 {
                cells[rank - 1].set(7);
            }
        };
        let job = Job::new(&work, 2);
        for (i, m) in boxes.iter().enumerate() {
            m.post(job.as_ref(), i + 1);
        }
        job.run_rank(0);
        job.wait();
        for c in &cells {
            assert_eq!(c.get(), 7);
        }
        for m in &boxes {
            m.post_shutdown();
        }
        for w in workers {
            w.join().unwrap();
        }
    });
}
