//! Tasks queued by a worker that does not come back to the scheduler are run by the idle ones
//! (`src/task/queue_guard.rs`, "rescue"): a task that spawns children and then waits for them
//! inside its function (an anti-pattern, but the shape of a worker whose thread lost its core)
//! finishes, on two workers and on more workers than cores, because the others take its queued
//! children. Before the rescue the children stayed in that worker's private queue, the other
//! workers idle, and the task's wait ran out.

#[path = "common/fib.rs"]
mod fib;

use fib::scheduler;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use taskdag::task::Policy;

/// Spawns `children` tasks that each count themselves, then waits inside the task until all have
/// run (at most `limit`); returns how many had run by then.
fn children_run_while_their_spawner_waits(workers: usize, children: usize) -> usize {
    let s = scheduler(workers, 4 << 20);
    let ran = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let (r, out) = (ran.clone(), seen.clone());
    let root = s
        .spawn(&Policy::single(), 0, move |ctx| {
            let mut kept = Vec::new();
            for _ in 0..children {
                let r = r.clone();
                let f = ctx
                    .spawn(&Policy::single(), 0, move |_| {
                        r.fetch_add(1, Ordering::SeqCst);
                    })
                    .unwrap();
                kept.push(f);
            }
            let limit = Instant::now() + Duration::from_secs(10);
            while r.load(Ordering::SeqCst) < children && Instant::now() < limit {
                std::thread::yield_now();
            }
            out.store(r.load(Ordering::SeqCst), Ordering::SeqCst);
        })
        .unwrap();
    s.wait().unwrap();
    drop(root);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        children,
        "every child ran by the end"
    );
    seen.load(Ordering::SeqCst)
}

#[test]
fn idle_workers_run_the_children_of_a_task_that_keeps_its_worker() {
    if !taskdag::task::queue_guard::rescue_available() {
        eprintln!("skipped: this process cannot force memory barriers (membarrier)");
        return;
    }
    for (workers, children) in [(2, 1), (2, 64), (4, 200), (9, 500)] {
        assert_eq!(
            children_run_while_their_spawner_waits(workers, children),
            children,
            "{workers} workers, {children} children: the spawner waited in vain"
        );
    }
}

/// A task that spawns `fanout` children and waits for them inside its function; at `depth` 0
/// a leaf that counts itself. Every waiting task keeps its worker.
fn waiting_tree(
    fanout: usize,
    depth: u32,
    leaves: Arc<AtomicUsize>,
) -> impl FnMut(&taskdag::task::TaskContext<'_>) + Send + 'static {
    move |ctx| {
        if depth == 0 {
            leaves.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let done = Arc::new(AtomicUsize::new(0));
        for _ in 0..fanout {
            let (leaves, done) = (leaves.clone(), done.clone());
            let mut body = waiting_tree(fanout, depth - 1, leaves);
            ctx.spawn(&Policy::single(), 0, move |c| {
                body(c);
                done.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        }
        let limit = Instant::now() + Duration::from_secs(10);
        while done.load(Ordering::SeqCst) < fanout && Instant::now() < limit {
            std::thread::yield_now();
        }
        assert_eq!(done.load(Ordering::SeqCst), fanout, "children left waiting");
    }
}

#[test]
fn rescues_under_many_workers_lose_and_repeat_no_task() {
    if !taskdag::task::queue_guard::rescue_available() {
        eprintln!("skipped: this process cannot force memory barriers (membarrier)");
        return;
    }
    // 9 workers, at most 1 + 3 of them waiting at once: the others run every leaf.
    let s = scheduler(9, 8 << 20);
    for round in 0..40 {
        let leaves = Arc::new(AtomicUsize::new(0));
        let root = s
            .spawn(&Policy::single(), 0, waiting_tree(3, 2, leaves.clone()))
            .unwrap();
        // Fibonacci beside it, so that rescued tasks mix with handed-over ones.
        let fib = s
            .spawn(
                &Policy::single(),
                8,
                fib::fib_task(16, fib::Join::RespawnWhenAll),
            )
            .unwrap();
        s.wait().unwrap();
        assert_eq!(leaves.load(Ordering::SeqCst), 9, "round {round}");
        assert_eq!(
            fib.get::<i64>().unwrap(),
            fib::fib_reference(16),
            "round {round}"
        );
        drop((root, fib));
    }
    let st = s.statistics().unwrap();
    assert_eq!(st.alive, 0, "{st:?}");
    assert_eq!(st.tasks_spawned, st.tasks_completed, "{st:?}");
}
