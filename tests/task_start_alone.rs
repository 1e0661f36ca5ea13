//! A wait starts on the calling thread alone and calls in the other workers when a second task
//! is ready (`src/task/executor.rs`, "Starting alone"): a wait of one task, or of tasks that
//! become ready one at a time, never involves another thread; one with parallel work does.

#[path = "common/fib.rs"]
mod fib;

use fib::{scheduler, scheduler_with};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};
use taskdag::priority::Priority;
use taskdag::task::{Policy, SchedulerConfig};

type Seen = Arc<Mutex<Vec<ThreadId>>>;

fn record(seen: &Seen) {
    seen.lock().unwrap().push(std::thread::current().id());
}

#[test]
fn one_task_a_respawn_chain_and_a_dependence_chain_run_on_the_calling_thread() {
    let s = scheduler(4, 1 << 20);
    let me = std::thread::current().id();
    for round in 0..20 {
        let seen: Seen = Arc::default();

        let t = Arc::clone(&seen);
        s.spawn(&Policy::single(), 0, move |_| record(&t)).unwrap();
        s.wait().unwrap();

        let (t, runs) = (Arc::clone(&seen), Arc::new(AtomicUsize::new(0)));
        s.spawn(&Policy::single(), 0, move |ctx| {
            record(&t);
            if runs.fetch_add(1, Ordering::Relaxed) < 100 {
                ctx.respawn(None, Priority::Regular).unwrap();
            }
        })
        .unwrap();
        s.wait().unwrap();

        let t = Arc::clone(&seen);
        let mut last = s.spawn(&Policy::single(), 0, move |_| record(&t)).unwrap();
        for _ in 0..50 {
            let t = Arc::clone(&seen);
            last = s
                .spawn(&Policy::single().after(&last), 0, move |_| record(&t))
                .unwrap();
        }
        s.wait().unwrap();

        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1 + 101 + 51, "round {round}");
        let others = seen.iter().filter(|&&t| t != me).count();
        assert_eq!(others, 0, "round {round}: tasks ran on other threads");
    }
}

#[test]
fn a_second_ready_task_calls_in_the_other_workers() {
    // Two children that each hold their thread until both have started: they must run at once,
    // on two threads, so the task that spawned them must have called in another worker. (Not
    // more children than that: tasks that wait for one another inside their functions rely on
    // the rescue of tasks queued behind them, which gives no such promise for many at once.)
    const CHILDREN: usize = 2;
    let s = scheduler(4, 1 << 20);
    for _ in 0..10 {
        let started = Arc::new(AtomicUsize::new(0));
        let threads: Arc<Mutex<HashSet<ThreadId>>> = Arc::default();
        let (st, th) = (Arc::clone(&started), Arc::clone(&threads));
        s.spawn(&Policy::single(), 0, move |ctx| {
            for _ in 0..CHILDREN {
                let (st, th) = (Arc::clone(&st), Arc::clone(&th));
                ctx.spawn(&Policy::single(), 0, move |_| {
                    th.lock().unwrap().insert(std::thread::current().id());
                    st.fetch_add(1, Ordering::AcqRel);
                    let limit = Instant::now() + Duration::from_secs(10);
                    while st.load(Ordering::Acquire) < CHILDREN && Instant::now() < limit {
                        std::thread::yield_now();
                    }
                })
                .unwrap();
            }
        })
        .unwrap();
        s.wait().unwrap();
        assert_eq!(started.load(Ordering::Relaxed), CHILDREN);
        assert_eq!(threads.lock().unwrap().len(), CHILDREN);
    }
}

#[test]
fn a_team_task_spawned_by_a_task_started_alone_runs_on_its_whole_team() {
    let config = SchedulerConfig {
        team_size: 2,
        team_scratch_bytes: 0,
    };
    let s = scheduler_with(4, 1 << 20, config);
    for _ in 0..20 {
        let ranks = Arc::new(Mutex::new(Vec::new()));
        let r = Arc::clone(&ranks);
        s.spawn(&Policy::single(), 0, move |ctx| {
            let r = Arc::clone(&r);
            ctx.spawn_team(&Policy::single(), 0, move |c| {
                let m = c.team();
                r.lock().unwrap().push(m.rank());
                // Both members must be there.
                m.barrier();
            })
            .unwrap();
        })
        .unwrap();
        s.wait().unwrap();
        let mut ranks = ranks.lock().unwrap().clone();
        ranks.sort_unstable();
        assert_eq!(ranks, [0, 1]);
    }
}
