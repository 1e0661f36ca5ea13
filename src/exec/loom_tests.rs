//! Model checks of the dispatch handshakes: a control thread posts jobs to a worker's mailbox and
//! waits for them, or publishes block dispatches in a job slot that idle workers claim from, with
//! the workers parking between jobs. loom explores the interleavings (up to a preemption bound)
//! and reports a lost wake-up as a deadlock and a missing happens-before edge between a worker's
//! writes and the control thread's reads as a data race.
//!
//! Run with:
//!     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib exec::loom

use super::idle::{self, Route};
use super::job::Job;
use super::mailbox::{Delivery, Mailbox};
use super::recruit::Recruit;
use super::slot::{BlockFn, Latecomers, Slot};
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
    check_with_bound(3, model);
}

/// `check` with another preemption bound (`LOOM_MAX_PREEMPTIONS` still overrides it).
fn check_with_bound(bound: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    builder.check(model);
}

/// The worker: runs every job it is posted until it is told to stop.
fn spawn_worker(mailbox: Arc<Mailbox>) -> thread::JoinHandle<()> {
    spawn_routed_worker(mailbox, None)
}

/// A worker that also serves a job slot as instance rank `route.1` while idle.
fn spawn_routed_worker(
    mailbox: impl std::ops::Deref<Target = Mailbox> + Send + 'static,
    route: Option<(std::sync::Arc<Slot>, usize)>,
) -> thread::JoinHandle<()> {
    let registered = Arc::new(loom::sync::atomic::AtomicBool::new(false));
    let r = registered.clone();
    let handle = thread::spawn(move || {
        mailbox.register_owner();
        r.store(true, loom::sync::atomic::Ordering::Release);
        let mut route = route.map(|(slot, rank)| Route::new(slot, rank));
        loop {
            match idle::wait(&mailbox, &mut route, std::time::Duration::ZERO) {
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

/// Two block dispatches on a slot served by one worker that parks in between: each block runs
/// exactly once and only while its dispatch runs (a double run, or a run by a worker of an older
/// generation after the dispatch returned, shows as a race on the cell or a wrong count), and
/// the control thread sees the worker's writes (else a race on the cell). A lost wake-up of the
/// control thread parked in `wait_done` shows as a deadlock.
#[test]
fn block_dispatches_to_a_parking_worker_run_each_block_once() {
    check(|| {
        let mailbox = Arc::new(Mailbox::new());
        let slot = std::sync::Arc::new(Slot::new(2));
        let worker = spawn_routed_worker(mailbox.clone(), Some((slot.clone(), 1)));
        for round in 0..2u32 {
            let cells = [Shared::new(), Shared::new()];
            let work = |block: usize| cells[block].set(cells[block].get() + round + 1);
            // SAFETY: this thread is the only one dispatching on the slot.
            unsafe { slot.dispatch(2, false, &work, || mailbox.wake_if_sleeping()) };
            for c in &cells {
                assert_eq!(c.get(), round + 1);
            }
        }
        mailbox.post_shutdown();
        worker.join().unwrap();
    });
}

/// A worker whose own block the control thread already ran, and a worker of rank 2 outside a
/// dispatch of 2 blocks (a mask), next to a worker that takes its block: nobody runs a block
/// twice or one that is not part of the dispatch, and the control thread waits for the block a
/// worker claimed.
#[test]
fn a_masked_block_dispatch_runs_its_blocks_once_and_leaves_the_other_worker_out() {
    check(|| {
        let boxes = [Arc::new(Mailbox::new()), Arc::new(Mailbox::new())];
        let slot = std::sync::Arc::new(Slot::new(3));
        let workers: Vec<_> = boxes
            .iter()
            .enumerate()
            .map(|(i, m)| spawn_routed_worker(m.clone(), Some((slot.clone(), i + 1))))
            .collect();
        let cells = [Shared::new(), Shared::new(), Shared::new()];
        let work = |block: usize| cells[block].set(cells[block].get() + 1);
        // SAFETY: this thread is the only one dispatching on the slot.
        unsafe {
            slot.dispatch(2, true, &work, || boxes[0].wake_if_sleeping());
        }
        assert_eq!(cells[0].get(), 1);
        assert_eq!(cells[1].get(), 1);
        assert_eq!(cells[2].get(), 0);
        for m in &boxes {
            m.post_shutdown();
        }
        for w in workers {
            w.join().unwrap();
        }
    });
}

/// A member that parks with nothing to do is woken by the next block dispatch through its
/// mailbox mark (slot.rs, "Sleeping members"), whether it announces itself before or after the
/// dispatch is published. The control thread runs the block itself when the member is late, so
/// a lost wake-up would not hang the dispatch; here the member waits for the generation, so a
/// lost wake-up leaves it parked for ever, which loom reports as a deadlock. The lost wake-up of
/// a publishing swap without Acquire (the control thread then may read the member's mailbox from
/// before its SLEEPING mark) takes 4 preemptions to reach: at the suite's bound of 3 loom missed
/// it. This model is small enough to explore at 6 in a few hundredths of a second.
#[test]
fn a_block_dispatch_wakes_a_member_that_announced_it_sleeps() {
    check_with_bound(6, || {
        let mailbox = Arc::new(Mailbox::new());
        let slot = std::sync::Arc::new(Slot::new(2));
        let registered = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let member = {
            let (mailbox, slot, registered) = (mailbox.clone(), slot.clone(), registered.clone());
            thread::spawn(move || {
                mailbox.register_owner();
                registered.store(true, loom::sync::atomic::Ordering::Release);
                let mut route = Route::new(slot, 1);
                while route.seen() == 0 {
                    if !route.help() {
                        idle::park_until_news(&mailbox, Some(&route));
                    }
                }
            })
        };
        while !registered.load(loom::sync::atomic::Ordering::Acquire) {
            thread::yield_now();
        }
        let work = |_: usize| {};
        // SAFETY: this thread is the only one dispatching on the slot.
        unsafe { slot.dispatch(2, false, &work, || mailbox.wake_if_sleeping()) };
        member.join().unwrap();
    });
}

/// A late-joining dispatch (recruit.rs) on a slot served by one worker, three times: a control
/// thread that calls nobody in, then one that calls the worker in (twice: the second call does
/// nothing) and runs the block itself if the worker has not claimed it, then one that skips it
/// then. The block runs at most once, exactly once when the control thread runs latecomers,
/// never after its dispatch returned, and the control thread sees its write: a race on the cell
/// otherwise.
#[test]
fn a_late_joining_dispatch_runs_a_called_in_block_at_most_once_and_waits_for_it() {
    check(|| {
        let mailbox = Arc::new(Mailbox::new());
        let slot = std::sync::Arc::new(Slot::new(2));
        let worker = spawn_routed_worker(mailbox.clone(), Some((slot.clone(), 1)));
        for (call_in, latecomers) in [
            (false, Latecomers::Skip),
            (true, Latecomers::RunOnCaller),
            (true, Latecomers::Skip),
        ] {
            let cell = Shared::new();
            let work = |block: usize| {
                assert_eq!(block, 1);
                cell.set(cell.get() + 1);
            };
            let work: BlockFn<'_> = &work;
            let wake = |_: usize| mailbox.wake_if_sleeping();
            // SAFETY: this thread is the only one dispatching on the slot, and ends the dispatch
            // with `finish` below.
            let recruit = unsafe { Recruit::new(&slot, 2, true, &work, &wake) };
            if call_in {
                recruit.all();
                recruit.all();
            }
            assert!(recruit.finish(latecomers).is_none());
            let runs = match (call_in, latecomers) {
                (false, _) => 0..=0,
                (true, Latecomers::RunOnCaller) => 1..=1,
                (true, Latecomers::Skip) => 0..=1,
            };
            assert!(runs.contains(&cell.get()));
        }
        mailbox.post_shutdown();
        worker.join().unwrap();
    });
}
