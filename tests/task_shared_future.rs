//! One future used by tasks on two workers at once: while its owner makes a when_all of it, a
//! task on the other worker retains, releases and makes when_alls of it through the owner's
//! reference (a `td_future*` read from shared memory while its owner keeps it, as C code shares
//! one). Every retain and release must succeed and the counts must come out exact. The future is a task the
//! owner has just spawned, so it is among the newest tasks of the owner's worker and has one
//! user reference: the case in which a when_all once took its hold and pushed itself onto the
//! task's wait queue with plain loads and stores, which lost the other worker's retains (the
//! owner's release then found no reference left).

#[path = "common/fib.rs"]
mod fib;

use fib::scheduler;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;
use taskdag::capi::{td_future, td_future_release, td_future_retain, td_status};
use taskdag::task::{Future, Policy};

/// Rounds: each one two fresh tasks, a when_all of them and a burst of retains and releases.
const ROUNDS: usize = 20_000;
/// Retain/release pairs per round.
const PAIRS: usize = 256;
/// The pair after which the borrower tells the owner to go on, so that the owner's when_all
/// falls inside the burst.
const STARTED_AT_PAIR: usize = 4;

#[derive(Default)]
struct Handoff {
    /// The owner's future of this round, borrowed.
    future: AtomicPtr<c_void>,
    /// The round whose future `future` holds.
    published: AtomicUsize,
    /// The last round the borrower is inside its burst of.
    started: AtomicUsize,
    /// The last round the borrower is done with (`usize::MAX` once it stopped for good).
    done: AtomicUsize,
    /// Retains and releases that failed.
    failures: AtomicUsize,
}

/// Marks the borrower as done for good when it returns or unwinds, so the owner never spins on.
struct Finished<'a>(&'a Handoff);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.started.store(usize::MAX, Ordering::Release);
        self.0.done.store(usize::MAX, Ordering::Release);
    }
}

/// Waits until `cell` reaches `round` (the two tasks run on two workers at once).
fn until(cell: &AtomicUsize, round: usize) {
    while cell.load(Ordering::Acquire) < round {
        std::thread::yield_now();
    }
}

fn check(h: &Handoff, status: td_status) {
    if status != td_status::TD_OK {
        h.failures.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_future_retained_on_another_worker_while_its_owner_makes_a_when_all_stays_exact() {
    let s = scheduler(2, 32 << 20);
    let handoff = Arc::new(Handoff::default());
    let h = Arc::clone(&handoff);
    let owner = s
        .spawn(&Policy::single(), 0, move |ctx| {
            for round in 1..=ROUNDS {
                let raw = ctx.spawn(&Policy::single(), 0, |_| {}).unwrap().into_raw();
                // SAFETY: `raw` carries the reference `into_raw` gave up; `task` owns it again,
                // and the copy in `future` only borrows it.
                let task = unsafe { Future::from_raw(NonNull::new(raw).unwrap()) };
                let other = ctx.spawn(&Policy::single(), 0, |_| {}).unwrap();
                h.future.store(raw, Ordering::Release);
                h.published.store(round, Ordering::Release);
                until(&h.started, round);
                // First `task` is held (not the last incomplete one): the hold races with the
                // retains; then the when_all waits on it first: the push races with the other
                // task's when_all.
                let all = if round % 2 == 0 {
                    ctx.when_all(&[&task, &other])
                } else {
                    ctx.when_all(&[&other, &task])
                };
                drop(all.unwrap());
                until(&h.done, round);
                // SAFETY: the reference `task` owns.
                check(&h, unsafe { td_future_release(task.into_raw().cast()) });
                drop(other);
            }
        })
        .unwrap();
    let h = Arc::clone(&handoff);
    let borrower = s
        .spawn(&Policy::single(), 0, move |ctx| {
            let _finished = Finished(&h);
            for round in 1..=ROUNDS {
                until(&h.published, round);
                let task = h.future.load(Ordering::Acquire).cast::<td_future>();
                for pair in 0..PAIRS {
                    if pair == STARTED_AT_PAIR {
                        h.started.store(round, Ordering::Release);
                    }
                    // SAFETY: the owner keeps its reference until `done` says this round ended.
                    check(&h, unsafe { td_future_retain(task) });
                    check(&h, unsafe { td_future_release(task) });
                    if pair == STARTED_AT_PAIR + 1 {
                        // SAFETY: as above; `ManuallyDrop` keeps the borrowed reference.
                        let borrowed = ManuallyDrop::new(unsafe {
                            Future::from_raw(NonNull::new(task.cast()).unwrap())
                        });
                        drop(ctx.when_all(&[&*borrowed]).unwrap());
                    }
                }
                h.done.store(round, Ordering::Release);
            }
        })
        .unwrap();
    s.wait().unwrap();
    assert!(owner.is_ready() && borrower.is_ready());
    drop((owner, borrower));
    assert_eq!(handoff.failures.load(Ordering::Relaxed), 0);
    let st = s.statistics().unwrap();
    assert_eq!(st.tasks_spawned, 2 + 2 * ROUNDS as u64, "{st:?}");
    assert_eq!(st.tasks_completed, st.tasks_spawned, "{st:?}");
    assert_eq!(st.alive, 0, "{st:?}");
    assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
}
