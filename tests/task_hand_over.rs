//! What a busy worker hands to an idle one that asked it (`src/task/executor.rs`, "How idle
//! workers get work"): its oldest task of the highest priority, answered before its next task,
//! and after a push only while no High task is queued. A task of 000 Fig. 3.4 pushes its High
//! child and then its Regular child; the asker must get the Regular one (the larger piece of a
//! recursion) once the busy worker has taken the High one to run, not the High child at its push.

#[path = "common/fib.rs"]
mod fib;

use fib::scheduler;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};
use taskdag::priority::Priority;
use taskdag::task::Policy;

/// Rounds of the experiment; a rescue by the idle worker (it tries one when its request stays
/// unanswered, `queue_guard.rs`) may take the High child in a round that it happens to overlap.
/// (Each round also takes its worker's thread for 2 ms, and up to 2 s if nothing is handed.)
const ROUNDS: usize = 20;

/// The threads that ran a parent, its High child and its Regular child.
type Threads = [Option<ThreadId>; 3];

fn record(threads: &Mutex<Threads>, which: usize) {
    threads.lock().unwrap()[which] = Some(std::thread::current().id());
}

/// One round on a scheduler of two workers: one of them holds `busy` until the parent runs on
/// the other, then idles and asks the parent's worker for a task while the parent sleeps; the
/// parent then spawns its two children and returns.
fn one_round(s: &taskdag::task::Scheduler) -> Threads {
    let parent_runs = Arc::new(AtomicBool::new(false));
    let threads = Arc::new(Mutex::new([None; 3]));
    let gate = Arc::clone(&parent_runs);
    let busy = s
        .spawn(&Policy::single(), 0, move |_| {
            while !gate.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        })
        .unwrap();
    let (gate, t) = (Arc::clone(&parent_runs), Arc::clone(&threads));
    let parent = s
        .spawn(&Policy::single(), 0, move |ctx| {
            record(&t, 0);
            gate.store(true, Ordering::Release);
            // The other worker leaves `busy` and asks this one within microseconds; its request
            // stays while this function runs.
            std::thread::sleep(Duration::from_millis(2));
            // The High child keeps its worker until the Regular one has started, so that its
            // worker cannot take back a Regular child handed to a worker not running yet (an
            // idle worker takes tasks from mailboxes left waiting, `full_mailbox`).
            let regular_started = Arc::new(AtomicBool::new(false));
            let high = Policy::single().priority(Priority::High);
            let (t1, started) = (Arc::clone(&t), Arc::clone(&regular_started));
            let high_child = move |_: &taskdag::task::TaskContext<'_>| {
                record(&t1, 1);
                let limit = Instant::now() + Duration::from_secs(2);
                while !started.load(Ordering::Acquire) && Instant::now() < limit {
                    std::thread::yield_now();
                }
            };
            drop(ctx.spawn(&high, 0, high_child).unwrap());
            let t2 = Arc::clone(&t);
            let regular_child = move |_: &taskdag::task::TaskContext<'_>| {
                record(&t2, 2);
                regular_started.store(true, Ordering::Release);
            };
            drop(ctx.spawn(&Policy::single(), 0, regular_child).unwrap());
        })
        .unwrap();
    s.wait().unwrap();
    drop((busy, parent));
    let threads = *threads.lock().unwrap();
    threads
}

#[test]
fn an_asking_worker_gets_the_regular_child_once_the_high_one_is_taken() {
    let s = scheduler(2, 4 << 20);
    let mut regular_handed = 0;
    for _ in 0..ROUNDS {
        let [parent, high, regular] = one_round(&s);
        assert!(parent.is_some() && high.is_some() && regular.is_some());
        if high == parent && regular != parent {
            regular_handed += 1;
        }
    }
    // Before session 15 the High child went to the asker at its push, in every round.
    assert!(
        regular_handed >= ROUNDS * 3 / 4,
        "the asker got the Regular child in {regular_handed} of {ROUNDS} rounds"
    );
}
