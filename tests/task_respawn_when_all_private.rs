//! `TaskContext::respawn_when_all_private` (C: td_task_respawn_when_all_private):
//! `respawn_when_all` with the promise that no other task uses the futures through the caller's
//! references during the call, so that the elements it runs ahead complete without an atomic
//! read-modify-write when the caller holds their only reference. Checked: exact Fibonacci
//! numbers on Serial, one, two and more workers than cores; a waiter the task itself queued on
//! its child before the call is scheduled (the plain close must look for it); tasks that hold
//! references of their own may wait on the children during the call; misuse is refused as for
//! `respawn_when_all`.

#[path = "common/fib.rs"]
mod fib;

use fib::{check_fib_exact, scheduler, Join};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use taskdag::error::ErrorKind;
use taskdag::priority::Priority;
use taskdag::task::{Future, Policy, TaskContext};

#[test]
fn fibonacci_is_exact_on_serial_one_two_and_more_workers_than_cores() {
    check_fib_exact(
        Join::RespawnWhenAllPrivate,
        &[0, 1, 2, 5, 8],
        &[0, 1, 2, 10, 18, 22],
    );
}

/// What a parent's first run does after spawning its child: it respawns, and makes a task that
/// adds one to the counter run after something.
type FirstRun = fn(&TaskContext<'_>, &Future, &Arc<AtomicUsize>);

/// Spawns a task after `dependence` that adds one to `counter`.
fn count_after(ctx: &TaskContext<'_>, dependence: &Future, counter: &Arc<AtomicUsize>) {
    let c = Arc::clone(counter);
    ctx.spawn(&Policy::single().after(dependence), 0, move |_| {
        c.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
}

/// Runs 200 parents on every worker count: each first run spawns a child that returns 7 and
/// calls `first`; each second run returns the child's result plus one. Checks the results and
/// that every counting task ran.
fn run_parents(first: FirstRun) {
    const PARENTS: usize = 200;
    for workers in [0, 1, 2, 5] {
        let s = scheduler(workers, 4 << 20);
        let counter = Arc::new(AtomicUsize::new(0));
        let parents: Vec<Future> = (0..PARENTS)
            .map(|_| {
                let counter = Arc::clone(&counter);
                let mut child: Option<Future> = None;
                let parent = move |ctx: &TaskContext<'_>| match &child {
                    Some(c) => ctx.set_result(c.get::<i64>().unwrap() + 1).unwrap(),
                    None => {
                        let c =
                            ctx.spawn(&Policy::single(), 8, |ctx| ctx.set_result(7i64).unwrap());
                        first(ctx, child.insert(c.unwrap()), &counter);
                    }
                };
                s.spawn(&Policy::single(), 8, parent).unwrap()
            })
            .collect();
        s.wait().unwrap();
        for p in &parents {
            assert_eq!(p.get::<i64>().unwrap(), 8, "{workers} workers");
        }
        assert_eq!(
            counter.load(Ordering::Relaxed),
            PARENTS,
            "{workers} workers"
        );
        drop(parents);
        assert_eq!(s.statistics().unwrap().alive, 0, "{workers} workers");
    }
}

#[test]
fn a_waiter_the_task_queued_on_its_child_before_the_call_is_scheduled() {
    // The child's one reference is the parent's, and a when_all (which holds none on the
    // dependence it waits on) is queued on it: the close without a read-modify-write must see
    // it. Without that look, the when_all and the task after it never run (a deadlock).
    run_parents(|ctx, child, counter| {
        let all = ctx.when_all(&[child]).unwrap();
        count_after(ctx, &all, counter);
        drop(all);
        ctx.respawn_when_all_private(&[child], Priority::High)
            .unwrap();
    });
}

#[test]
fn tasks_with_references_of_their_own_may_wait_on_the_children_during_the_call() {
    // A high-priority task, which an idle worker is handed first, waits on the child through
    // a clone of its future while the parent runs the child ahead.
    run_parents(|ctx, child, counter| {
        let (own, counter) = (child.clone(), Arc::clone(counter));
        let high = Policy::single().priority(Priority::High);
        ctx.spawn(&high, 0, move |ctx| count_after(ctx, &own, &counter))
            .unwrap();
        ctx.respawn_when_all_private(&[child], Priority::High)
            .unwrap();
    });
}

#[test]
fn misuse_is_refused_and_nothing_respawns() {
    let s = scheduler(2, 4 << 20);
    let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
    let e = Arc::clone(&errors);
    let mut runs = 0;
    let f = s
        .spawn(&Policy::single(), 8, move |ctx| {
            runs += 1;
            if runs > 1 {
                return;
            }
            let me = ctx.spawn(&Policy::single(), 0, |_| {}).unwrap();
            ctx.respawn_when_all_private(&[&me], Priority::Low).unwrap();
            let again = ctx.respawn_when_all_private(&[&me], Priority::Low);
            e.lock()
                .unwrap()
                .push(again.map_err(|e| (e.kind(), e.to_string())));
        })
        .unwrap();
    s.wait().unwrap();
    let errors = errors.lock().unwrap();
    let (kind, message) = errors[0].clone().unwrap_err();
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("respawn_when_all_private"), "{message}");
    assert_eq!(s.statistics().unwrap().tasks_respawned, 1);
    drop(f);
    assert_eq!(s.statistics().unwrap().alive, 0);
}
