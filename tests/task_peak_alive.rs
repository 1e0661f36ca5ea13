//! The peak of live tasks in the statistics (`src/task/statistics.rs`): exact with one worker;
//! with several, each worker adds its changes to the shared count once they reach
//! `ALIVE_FLUSH` (256) in magnitude, so the peak lies within that much per worker of the true
//! one. A root task spawns `CHILDREN` children and holds their futures until it completes, so
//! that exactly `CHILDREN` + 1 tasks are alive at once and no block is freed before.

#[path = "common/fib.rs"]
mod fib;

use fib::scheduler;
use taskdag::task::{Future, Policy};

const CHILDREN: u64 = 3000;
const ALIVE_FLUSH: u64 = 256;

/// The statistics' peak of live tasks after a wait of a root that holds `CHILDREN` children.
fn peak_alive(workers: usize) -> u64 {
    let s = scheduler(workers, 8 << 20);
    let mut held: Vec<Future> = Vec::new();
    let root = s
        .spawn(&Policy::single(), 0, move |ctx| {
            for _ in 0..CHILDREN {
                held.push(ctx.spawn(&Policy::single(), 0, |_| {}).unwrap());
            }
        })
        .unwrap();
    s.wait().unwrap();
    drop(root);
    let st = s.statistics().unwrap();
    assert_eq!(st.tasks_spawned, CHILDREN + 1);
    st.peak_alive
}

#[test]
fn one_worker_counts_the_peak_exactly() {
    assert_eq!(peak_alive(1), CHILDREN + 1);
}

#[test]
fn several_workers_count_the_peak_within_a_flush_per_worker() {
    for workers in [2, 4] {
        for _ in 0..5 {
            let peak = peak_alive(workers);
            // Only the root's worker allocates, and nothing is freed before the root completes:
            // the count can neither exceed the truth nor trail it by a full flush.
            assert!(
                peak <= CHILDREN + 1 && peak + ALIVE_FLUSH > CHILDREN + 1,
                "{workers} workers: peak {peak} for {} live tasks",
                CHILDREN + 1
            );
        }
    }
}
