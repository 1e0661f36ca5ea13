//! `TaskContext::respawn_when_all` (C: td_task_respawn_when_all): a respawn after all of several
//! futures in one call, which makes a when_all only where one is needed. Checked: exact
//! Fibonacci numbers with it on Serial, one, two and more workers than cores; that one worker
//! makes no when_all for Fibonacci; that the task runs again only after every future completed,
//! also when several were incomplete (a when_all is made); that the futures may be dropped right
//! after the call; that with several workers the elements the worker would run next run inside
//! the call, in the worker's order, and that this nesting stays bounded on a chain of ten
//! thousand; and misuse (a second respawn, the task's own future, a future of another
//! scheduler, a full pool), after which nothing respawned and the scheduler keeps working.

#[path = "common/fib.rs"]
mod fib;

use fib::{check_fib_exact, fib_task, scheduler, Join};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use taskdag::error::ErrorKind;
use taskdag::priority::Priority;
use taskdag::task::{Future, Policy, Scheduler, TaskContext};

fn run_fib(s: &Scheduler, n: i64) -> i64 {
    let f = s
        .spawn(&Policy::single(), 8, fib_task(n, Join::RespawnWhenAll))
        .unwrap();
    s.wait().unwrap();
    f.get::<i64>().unwrap()
}

#[test]
fn fibonacci_is_exact_on_serial_one_two_and_more_workers_than_cores() {
    check_fib_exact(Join::RespawnWhenAll, &[0, 1, 2, 5], &[0, 1, 2, 10, 18]);
}

#[test]
fn one_worker_waits_on_the_one_incomplete_child_without_a_when_all() {
    // The spawn of F(n-1) runs F(n-2) first (002 §3.3.2), so F(n-1) is the only incomplete
    // child when the task respawns, and it waits on that child directly.
    for workers in [0, 1] {
        let s = scheduler(workers, 4 << 20);
        assert_eq!(run_fib(&s, 10), 55);
        let st = s.statistics().unwrap();
        // fib(10) has 177 calls, 88 of them with n > 1.
        assert_eq!(
            (st.tasks_spawned, st.tasks_respawned, st.task_executions),
            (177, 88, 177 + 88),
            "{workers} workers"
        );
        assert_eq!(st.when_alls_created, 0, "{workers} workers: {st:?}");
    }
}

#[test]
fn with_several_workers_the_children_run_inside_the_call_in_the_workers_order() {
    let s = scheduler(2, 4 << 20);
    // The other worker spins in `busy` until the parent has checked, so it asks for no task.
    let started = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let (st, rel) = (Arc::clone(&started), Arc::clone(&release));
    let busy = s
        .spawn(&Policy::single(), 0, move |_| {
            st.store(true, Ordering::Release);
            while !rel.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        })
        .unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let ready_after_call = Arc::new(Mutex::new(Vec::new()));
    let (o, ready) = (Arc::clone(&order), Arc::clone(&ready_after_call));
    let mut first = true;
    let parent = s
        .spawn(&Policy::single(), 0, move |ctx| {
            if !std::mem::take(&mut first) {
                o.lock().unwrap().push("parent again");
                return;
            }
            while !started.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            // A request the other worker left while it was idle takes this one (the oldest).
            let decoy = ctx
                .spawn(&Policy::single().priority(Priority::Low), 0, |_| {})
                .unwrap();
            let child = |name: &'static str, p: Priority| {
                let o = Arc::clone(&o);
                let policy = Policy::single().priority(p);
                ctx.spawn(&policy, 0, move |_| o.lock().unwrap().push(name))
                    .unwrap()
            };
            let regular = child("regular", Priority::Regular);
            let high = child("high", Priority::High);
            ctx.respawn_when_all(&[&regular, &high], Priority::Regular)
                .unwrap();
            *ready.lock().unwrap() = vec![regular.is_ready(), high.is_ready()];
            drop(decoy);
            release.store(true, Ordering::Release);
        })
        .unwrap();
    s.wait().unwrap();
    assert_eq!(*ready_after_call.lock().unwrap(), [true, true]);
    assert_eq!(*order.lock().unwrap(), ["high", "regular", "parent again"]);
    let st = s.statistics().unwrap();
    assert_eq!((st.when_alls_created, st.tasks_respawned), (0, 1), "{st:?}");
    drop((busy, parent));
    assert_eq!(s.statistics().unwrap().alive, 0);
}

/// Link `k` of a chain of `depth`: spawns link `k + 1` and respawns on it; its result is the
/// number of links after it.
fn chain_link(k: u64, depth: u64) -> impl FnMut(&TaskContext<'_>) + Send + 'static {
    let mut next: Option<Future> = None;
    move |ctx| {
        if let Some(n) = &next {
            ctx.set_result(n.get::<u64>().unwrap() + 1).unwrap();
        } else if k == depth {
            ctx.set_result(0u64).unwrap();
        } else {
            let n = ctx
                .spawn(&Policy::single(), 8, chain_link(k + 1, depth))
                .unwrap();
            ctx.respawn_when_all(&[&n], Priority::Regular).unwrap();
            next = Some(n);
        }
    }
}

#[test]
fn running_ahead_along_a_chain_of_ten_thousand_stays_within_the_stack() {
    // Each link would run the next inside its call, ten thousand frames deep, were the nesting
    // not bounded (a worker's stack holds far fewer).
    for workers in [2, 4] {
        let s = scheduler(workers, 16 << 20);
        let root = s
            .spawn(&Policy::single(), 8, chain_link(0, 10_000))
            .unwrap();
        s.wait().unwrap();
        assert_eq!(root.get::<u64>().unwrap(), 10_000, "{workers} workers");
        let st = s.statistics().unwrap();
        assert_eq!(st.tasks_respawned, 10_000, "{st:?}");
        drop(root);
        assert_eq!(s.statistics().unwrap().alive, 0);
        assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
    }
}

/// A task that spins until `gate` opens: it keeps whatever depends on it incomplete. Only with
/// several workers (one worker would run it inside the next spawn and never return).
fn gate_task(gate: &Arc<AtomicBool>) -> impl FnMut(&TaskContext<'_>) + Send + 'static {
    let gate = Arc::clone(gate);
    move |_| {
        while !gate.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    }
}

#[test]
fn the_task_runs_again_only_after_every_incomplete_future() {
    for workers in [2, 4] {
        let s = scheduler(workers, 4 << 20);
        let gate = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(AtomicUsize::new(usize::MAX));
        let (g, d, seen2) = (Arc::clone(&gate), Arc::clone(&done), Arc::clone(&seen));
        let mut first = true;
        let parent = s
            .spawn(&Policy::single(), 0, move |ctx| {
                if !std::mem::take(&mut first) {
                    seen2.store(d.load(Ordering::Acquire), Ordering::Release);
                    return;
                }
                // Three children behind a closed gate: none can complete before the call.
                let gate_f = ctx.spawn(&Policy::single(), 0, gate_task(&g)).unwrap();
                let children: Vec<Future> = (0..3)
                    .map(|_| {
                        let d = Arc::clone(&d);
                        ctx.spawn(&Policy::single().after(&gate_f), 0, move |_| {
                            d.fetch_add(1, Ordering::AcqRel);
                        })
                        .unwrap()
                    })
                    .collect();
                let refs: Vec<&Future> = children.iter().collect();
                ctx.respawn_when_all(&refs, Priority::Low).unwrap();
                // Borrowed for the call only: dropped before the run ends.
                drop(children);
                drop(gate_f);
                g.store(true, Ordering::Release);
            })
            .unwrap();
        s.wait().unwrap();
        assert!(parent.is_ready());
        assert_eq!(seen.load(Ordering::Acquire), 3, "{workers} workers");
        let st = s.statistics().unwrap();
        assert_eq!(st.when_alls_created, 1, "{workers} workers: {st:?}");
        assert_eq!((st.tasks_respawned, st.task_executions), (1, 6));
        drop(parent);
        assert_eq!(s.statistics().unwrap().alive, 0);
        assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
    }
}

#[test]
fn complete_futures_or_none_respawn_at_once() {
    let s = scheduler(1, 1 << 20);
    let done = s
        .spawn(&Policy::single(), 8, |ctx| ctx.set_result(7i64).unwrap())
        .unwrap();
    s.wait().unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    let task = s
        .spawn(&Policy::single(), 8, move |ctx| {
            match r.fetch_add(1, Ordering::Relaxed) {
                0 => ctx
                    .respawn_when_all(&[&done, &done], Priority::Low)
                    .unwrap(),
                1 => ctx.respawn_when_all(&[], Priority::High).unwrap(),
                _ => ctx.set_result(done.get::<i64>().unwrap()).unwrap(),
            }
        })
        .unwrap();
    s.wait().unwrap();
    assert_eq!(task.get::<i64>().unwrap(), 7);
    assert_eq!(runs.load(Ordering::Relaxed), 3);
    let st = s.statistics().unwrap();
    assert_eq!((st.tasks_respawned, st.when_alls_created), (2, 0));
}

#[test]
fn misuse_is_reported_and_nothing_respawns() {
    let s = scheduler(1, 1 << 20);
    let other = scheduler(1, 1 << 20);
    let foreign = other.spawn(&Policy::single(), 0, |_| {}).unwrap();
    let own: Arc<Mutex<Option<Future>>> = Arc::default();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let (own2, e2) = (Arc::clone(&own), Arc::clone(&errors));
    let mut runs = 0;
    let task = s
        .spawn(&Policy::single(), 8, move |ctx| {
            runs += 1;
            ctx.set_result(runs as i64).unwrap();
            if runs > 1 {
                return;
            }
            let mut e = e2.lock().unwrap();
            let me = own2.lock().unwrap().clone().unwrap();
            let child = ctx.spawn(&Policy::single(), 0, |_| {}).unwrap();
            for deps in [vec![&child, &me], vec![&foreign]] {
                let err = ctx.respawn_when_all(&deps, Priority::Low).unwrap_err();
                e.push((err.kind(), err.message().to_string()));
            }
            ctx.respawn(None, Priority::Low).unwrap();
            let err = ctx.respawn_when_all(&[&child], Priority::Low).unwrap_err();
            e.push((err.kind(), err.message().to_string()));
        })
        .unwrap();
    *own.lock().unwrap() = Some(task.clone());
    s.wait().unwrap();
    let errors = errors.lock().unwrap();
    let expect = [
        "own future",
        "another scheduler",
        "already asked to respawn",
    ];
    assert_eq!(errors.len(), expect.len());
    for ((kind, message), needle) in errors.iter().zip(expect) {
        assert_eq!(*kind, ErrorKind::InvalidArgument, "{message}");
        assert!(message.contains(needle), "{message}");
    }
    // The one respawn that was accepted ran; the refused ones left no trace.
    assert_eq!(task.get::<i64>().unwrap(), 2);
    let st = s.statistics().unwrap();
    assert_eq!((st.tasks_respawned, st.when_alls_created), (1, 0));
    *own.lock().unwrap() = None;
    drop(task);
    assert_eq!(s.statistics().unwrap().alive, 0);
    assert_eq!(run_fib(&s, 12), 144);
    other.wait().unwrap();
}

#[test]
fn a_full_pool_fails_the_when_all_and_the_task_does_not_respawn() {
    let s = scheduler(2, 64 << 10);
    let gate = Arc::new(AtomicBool::new(false));
    let outcome = Arc::new(Mutex::new(None));
    let (g, out) = (Arc::clone(&gate), Arc::clone(&outcome));
    let mut runs = 0;
    let task = s
        .spawn(&Policy::single(), 8, move |ctx| {
            runs += 1;
            ctx.set_result(runs as i64).unwrap();
            if runs > 1 {
                return;
            }
            let gate_f = ctx.spawn(&Policy::single(), 0, gate_task(&g)).unwrap();
            let after_gate = Policy::single().after(&gate_f);
            // Every task waits for the gate, so no block comes back until the pool is full.
            let mut held = Vec::new();
            while let Ok(f) = ctx.spawn(&after_gate, 0, |_| {}) {
                held.push(f);
            }
            let refs: Vec<&Future> = held.iter().take(3).collect();
            *out.lock().unwrap() = Some(ctx.respawn_when_all(&refs, Priority::Low));
            g.store(true, Ordering::Release);
        })
        .unwrap();
    s.wait().unwrap();
    let err = outcome.lock().unwrap().take().unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PoolExhausted, "{}", err.message());
    assert_eq!(task.get::<i64>().unwrap(), 1);
    let st = s.statistics().unwrap();
    assert_eq!((st.tasks_respawned, st.when_alls_created), (0, 0));
    assert!(st.allocation_failures >= 2, "{st:?}");
    drop(task);
    assert_eq!(s.statistics().unwrap().alive, 0);
    assert_eq!(run_fib(&s, 12), 144);
}
