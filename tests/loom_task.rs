//! Model checks of the task DAG's lock-free lists under every interleaving (up to a preemption
//! bound) and every weak-memory outcome loom explores:
//! - the ready stack (002 Figs. 3.2–3.3): concurrent pushes and almost-atomic pops hand every
//!   task to exactly one popper, which sees what the pusher wrote into it;
//! - a wait queue against its completion (002 Fig. 3.6): a waiter pushed concurrently with the
//!   close is either taken by the completer or told that the entity is complete, never both or
//!   neither; the completer sees the waiter's state and the waiter sees the result;
//! - the same with a completer that first peeks for waiters (`Place::complete_task`) and closes
//!   as usual: a waiter pushed after the peek still comes back from the close;
//! - the same with a completer that closes with a plain store once it sees the waiter that held
//!   the entity's last other reference (`Place::complete`'s path for a task's respawn
//!   dependence): it takes the waiter once and sees its state;
//! - a completer that closes with a plain store when its reference is the only one and no
//!   waiter is queued (`TaskHeader::close_if_sole_holder`), while another holder pushes a
//!   waiter and then releases its reference: the waiter is never lost; and a thread that looks
//!   at the entity without a reference of its own sees the result once it sees the close;
//! - who frees an entity (`wait_queue.rs`, "Who frees an entity"): holders releasing their last
//!   references and holds while the entity completes; exactly one party frees it, and that one
//!   sees the result and every holder's accesses;
//! - the queue guard (`queue_guard.rs`): an owner that uses its queue only inside brackets
//!   (nested or not) and a rescuer that takes from it only under the guard's lock never touch
//!   the queue at once (loom's cell reports a race otherwise), also when the owner withdraws a
//!   claim the rescuer has not confirmed (a confirmation by plain store fails the model), each
//!   task comes out once, and the owner sees a rescue that took tasks in its count. The system call of the rescuer's
//!   barrier is modelled as what it guarantees, a SeqCst fence on both sides.
//!
//! Run with:
//!     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_task
//! The preemption bound defaults to 3; `LOOM_MAX_PREEMPTIONS` overrides it.
//!
//! Task contents are modelled by a loom `UnsafeCell` per task: a write before the hand-over and
//! a read after it make loom report a data race if the hand-over does not order them.
//!
//! Every party of a model runs on a spawned thread, the main thread only starts and joins them:
//! loom explores a party on the main thread beside a spawned one far less (`MIN_INTERLEAVINGS`).

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::ptr::NonNull;
use taskdag::task::header::{Access, TaskHeader};
use taskdag::task::queue_guard::{Bracket, QueueGuard};
use taskdag::task::ready_stack::ReadyStack;
use taskdag::task::wait_queue;

/// Fewest interleavings a model here must explore at the default preemption bound. With the
/// completer on the model's main thread beside one spawned party, loom explored 7 to 11 of them,
/// and missed a lost waiter (session 26) and a completer taking the sole waiter without Acquire,
/// which the same models with every party on a spawned thread find (108 to 174 interleavings;
/// the smallest model here, a reader beside a completer, 36). A model under the floor has
/// probably been given that shape again.
const MIN_INTERLEAVINGS: usize = 20;

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    let default_bound = builder.preemption_bound.is_none();
    if default_bound {
        builder.preemption_bound = Some(3);
    }
    // A std atomic: it counts the model's runs from outside them, unseen by loom.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&runs);
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model();
    });
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        !default_bound || runs >= MIN_INTERLEAVINGS,
        "loom explored only {runs} interleavings of this model (at least {MIN_INTERLEAVINGS} \
         expected): run every party on a spawned thread"
    );
}

/// A task header and the contents a task would carry.
struct Task {
    header: Box<TaskHeader>,
    contents: UnsafeCell<usize>,
}

impl Task {
    fn new() -> Task {
        Task {
            header: TaskHeader::for_model(),
            contents: UnsafeCell::new(0),
        }
    }

    fn ptr(&self) -> NonNull<TaskHeader> {
        NonNull::from(&*self.header)
    }
}

// SAFETY: the model hands tasks between threads only through the structures under test, and the
// contents are a loom cell that checks every access.
unsafe impl Send for Task {}
unsafe impl Sync for Task {}

/// Which of `tasks` `ptr` is.
fn index_of(tasks: &[Task], ptr: NonNull<TaskHeader>) -> usize {
    tasks
        .iter()
        .position(|t| t.ptr() == ptr)
        .expect("a pointer that was never pushed came out")
}

#[test]
fn ready_stack_hands_each_task_to_exactly_one_popper() {
    check(|| {
        let tasks: Arc<Vec<Task>> = Arc::new((0..3).map(|_| Task::new()).collect());
        let stack = Arc::new(ReadyStack::new());
        let pushers: Vec<_> = (0..2)
            .map(|t| {
                let (tasks, stack) = (Arc::clone(&tasks), Arc::clone(&stack));
                thread::spawn(move || {
                    tasks[t].contents.with_mut(|c| unsafe { *c = t + 1 });
                    unsafe { stack.push(tasks[t].ptr()) };
                })
            })
            .collect();
        let popper = {
            let (tasks, stack) = (Arc::clone(&tasks), Arc::clone(&stack));
            thread::spawn(move || {
                let mut got = Vec::new();
                for _ in 0..2 {
                    if let Some(p) = stack.pop() {
                        let i = index_of(&tasks, p);
                        let seen = tasks[i].contents.with(|c| unsafe { *c });
                        assert_eq!(seen, i + 1, "a popped task's contents are not visible");
                        got.push(i);
                    }
                }
                got
            })
        };
        for p in pushers {
            p.join().unwrap();
        }
        let mut popped = popper.join().unwrap();
        while let Some(p) = stack.pop() {
            popped.push(index_of(&tasks, p));
        }
        popped.sort_unstable();
        assert_eq!(popped, vec![0, 1], "each task must come out exactly once");
        assert!(stack.looks_empty());
    });
}

#[test]
fn two_poppers_never_take_the_same_task() {
    check(|| {
        let tasks: Arc<Vec<Task>> = Arc::new((0..2).map(|_| Task::new()).collect());
        let stack = Arc::new(ReadyStack::new());
        for t in tasks.iter() {
            unsafe { stack.push(t.ptr()) };
        }
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let (tasks, stack) = (Arc::clone(&tasks), Arc::clone(&stack));
                thread::spawn(move || {
                    let p = stack.pop()?;
                    let i = index_of(&tasks, p);
                    // A task popped twice would be written by both poppers: a race loom reports.
                    tasks[i].contents.with_mut(|c| unsafe { *c += 1 });
                    Some(i)
                })
            })
            .collect();
        let mut popped: Vec<usize> = poppers
            .into_iter()
            .filter_map(|p| p.join().unwrap())
            .collect();
        popped.sort_unstable();
        assert_eq!(popped, vec![0, 1]);
    });
}

/// A thread that writes the waiter's state (7) and pushes it onto `entity`'s wait queue; if the
/// queue was closed, the entity's result (42, written before the close) must be visible to it.
/// Returns whether the push got in.
fn spawn_waiter(entity: &Arc<Task>, waiter: &Arc<Task>) -> thread::JoinHandle<bool> {
    let (entity, waiter) = (Arc::clone(entity), Arc::clone(waiter));
    thread::spawn(move || {
        waiter.contents.with_mut(|c| unsafe { *c = 7 });
        let pushed =
            unsafe { wait_queue::push(entity.header.wait_head(), waiter.ptr(), Access::Shared) };
        if !pushed {
            // The dependence is complete: its result must be visible, through the push's own
            // ordering (the look at the queue below would order the read by itself).
            let result = entity.contents.with(|c| unsafe { *c });
            assert_eq!(result, 42, "a complete entity's result is not visible");
            assert!(wait_queue::is_closed(entity.header.wait_head()));
        }
        pushed
    })
}

/// Goes through the waiters a close returned (only `waiter` can be among them), checking that
/// each sees the state its pusher wrote; returns how many there were.
fn take_waiters(list: *mut TaskHeader, waiter: &Task) -> usize {
    let mut taken = 0;
    let mut next = list;
    while let Some(w) = NonNull::new(next) {
        next = unsafe { wait_queue::next_waiter(w) };
        assert_eq!(w, waiter.ptr());
        let state = waiter.contents.with(|c| unsafe { *c });
        assert_eq!(state, 7, "a waiter's state is not visible to the completer");
        taken += 1;
    }
    taken
}

/// Runs a completer on a thread of its own (module comment: not on the main thread).
fn spawn_completer<T: Send + 'static>(
    entity: &Arc<Task>,
    waiter: &Arc<Task>,
    complete: impl FnOnce(&Task, &Task) -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    let (entity, waiter) = (Arc::clone(entity), Arc::clone(waiter));
    thread::spawn(move || complete(&entity, &waiter))
}

#[test]
fn a_waiter_is_either_taken_by_the_completer_or_sees_the_completion() {
    check(|| {
        let entity = Arc::new(Task::new());
        let waiter = Arc::new(Task::new());
        let pusher = spawn_waiter(&entity, &waiter);
        // The completer: writes the result, closes the queue, runs the waiters it got.
        let completer = spawn_completer(&entity, &waiter, |entity, waiter| {
            entity.contents.with_mut(|c| unsafe { *c = 42 });
            let list = wait_queue::close(entity.header.wait_head(), Access::Shared)
                .expect("the queue was closed twice")
                .waiters;
            take_waiters(list, waiter)
        });
        let pushed = pusher.join().unwrap();
        let taken = completer.join().unwrap();
        assert_eq!(
            taken,
            usize::from(pushed),
            "a waiter was lost or scheduled twice"
        );
        assert!(wait_queue::close(entity.header.wait_head(), Access::Shared).is_none());
    });
}

#[test]
fn a_waiter_pushed_after_the_completers_peek_is_still_taken_once() {
    // `Place::complete_task`: the completer looks for waiters with a Relaxed load and, seeing
    // none, closes the queue itself; a waiter pushed after that look comes back from the close.
    check(|| {
        let entity = Arc::new(Task::new());
        let waiter = Arc::new(Task::new());
        let pusher = spawn_waiter(&entity, &waiter);
        let completer = spawn_completer(&entity, &waiter, |entity, waiter| {
            entity.contents.with_mut(|c| unsafe { *c = 42 });
            let peeked = wait_queue::has_waiters(entity.header.wait_head());
            let list = wait_queue::close(entity.header.wait_head(), Access::Shared)
                .expect("the queue was closed twice")
                .waiters;
            let taken = take_waiters(list, waiter);
            assert!(
                taken >= usize::from(peeked),
                "a waiter seen by the peek was lost"
            );
            taken
        });
        let pushed = pusher.join().unwrap();
        assert_eq!(
            completer.join().unwrap(),
            usize::from(pushed),
            "a waiter was lost or run twice"
        );
    });
}

#[test]
fn two_waiters_racing_a_completion_are_each_scheduled_once() {
    check(|| {
        let entity = Arc::new(Task::new());
        let waiters: Arc<Vec<Task>> = Arc::new((0..2).map(|_| Task::new()).collect());
        let pushers: Vec<_> = (0..2)
            .map(|t| {
                let (entity, waiters) = (Arc::clone(&entity), Arc::clone(&waiters));
                thread::spawn(move || unsafe {
                    wait_queue::push(entity.header.wait_head(), waiters[t].ptr(), Access::Shared)
                })
            })
            .collect();
        let completer = {
            let (entity, waiters) = (Arc::clone(&entity), Arc::clone(&waiters));
            thread::spawn(move || {
                let list = wait_queue::close(entity.header.wait_head(), Access::Shared)
                    .unwrap()
                    .waiters;
                let mut taken = Vec::new();
                let mut next = list;
                while let Some(w) = NonNull::new(next) {
                    next = unsafe { wait_queue::next_waiter(w) };
                    taken.push(index_of(&waiters, w));
                }
                taken.sort_unstable();
                taken
            })
        };
        let taken = completer.join().unwrap();
        let pushed: Vec<usize> = pushers
            .into_iter()
            .enumerate()
            .filter_map(|(i, p)| p.join().unwrap().then_some(i))
            .collect();
        assert_eq!(
            taken, pushed,
            "the completer must take exactly the waiters that got in"
        );
    });
}

#[test]
fn a_completer_that_finds_the_sole_waiter_closes_with_a_store() {
    check(|| {
        let entity = Arc::new(Task::new());
        let waiter = Arc::new(Task::new());
        // The waiter's thread holds the only other reference: it pushes once and is done.
        let pusher = spawn_waiter(&entity, &waiter);
        let completer = spawn_completer(&entity, &waiter, |entity, waiter| {
            entity.contents.with_mut(|c| unsafe { *c = 42 });
            let head = entity.header.wait_head();
            let taken = match wait_queue::sole_waiter(head) {
                Some(w) => {
                    assert_eq!(w, waiter.ptr());
                    // Nobody else can push now: a store closes the queue.
                    wait_queue::close_unreachable(head);
                    1
                }
                None => {
                    let list = wait_queue::close(head, Access::Shared).unwrap().waiters;
                    usize::from(!list.is_null())
                }
            };
            if taken == 1 {
                let state = waiter.contents.with(|c| unsafe { *c });
                assert_eq!(state, 7, "a waiter's state is not visible to the completer");
            }
            taken
        });
        let pushed = pusher.join().unwrap();
        assert_eq!(
            completer.join().unwrap(),
            usize::from(pushed),
            "a waiter was lost or scheduled twice"
        );
        assert!(wait_queue::is_closed(entity.header.wait_head()));
    });
}

#[test]
fn a_completer_alone_with_its_reference_still_finds_a_waiter_pushed_before_a_release() {
    // `Place::complete_task_run_ahead`: the completer holds a user reference that nobody else
    // uses; a second holder pushes a waiter and then lets its reference go. Whether the
    // completer sees one reference or two, the waiter comes back from its close or sees the
    // completion: the plain store never overwrites it.
    check(|| {
        let entity = Arc::new(Task::new());
        let waiter = Arc::new(Task::new());
        entity.header.model_set_refs(2, 0);
        let holder = {
            let (entity, waiter) = (Arc::clone(&entity), Arc::clone(&waiter));
            thread::spawn(move || {
                waiter.contents.with_mut(|c| unsafe { *c = 7 });
                let pushed = unsafe {
                    wait_queue::push(entity.header.wait_head(), waiter.ptr(), Access::Shared)
                };
                assert!(
                    !entity.header.model_release(true),
                    "the completer holds a reference"
                );
                pushed
            })
        };
        let completer = spawn_completer(&entity, &waiter, |entity, waiter| {
            if entity.header.close_if_sole_holder() {
                0
            } else {
                let head = entity.header.wait_head();
                take_waiters(
                    wait_queue::close(head, Access::Shared).unwrap().waiters,
                    waiter,
                )
            }
        });
        let pushed = holder.join().unwrap();
        let taken = completer.join().unwrap();
        assert_eq!(
            taken,
            usize::from(pushed),
            "a waiter was lost or scheduled twice"
        );
        assert!(wait_queue::is_closed(entity.header.wait_head()));
    });
}

#[test]
fn a_reader_without_a_reference_sees_the_result_of_a_plain_close() {
    // `td_future_is_ready` and `td_future_get` on any thread: a thread that looks at a future
    // through a pointer borrowed from the completer's task, holding no reference of its own,
    // while the completer, alone with its reference, closes with a plain store. Once it sees
    // the completion it sees the result (a race on the result otherwise).
    check(|| {
        let entity = Arc::new(Task::new());
        entity.header.model_set_refs(1, 0);
        let reader = {
            let entity = Arc::clone(&entity);
            thread::spawn(move || {
                if wait_queue::is_closed(entity.header.wait_head()) {
                    let result = entity.contents.with(|c| unsafe { *c });
                    assert_eq!(result, 42, "a complete entity's result is not visible");
                }
            })
        };
        let completer = {
            let entity = Arc::clone(&entity);
            thread::spawn(move || {
                entity.contents.with_mut(|c| unsafe { *c = 42 });
                entity.header.close_if_sole_holder()
            })
        };
        assert!(
            completer.join().unwrap(),
            "the completer held the only reference"
        );
        reader.join().unwrap();
    });
}

/// The completion of an entity whose holders release their references at the same time
/// (`wait_queue.rs`, "Who frees an entity"): one holder per entry of `holders` (true: a user
/// reference, false: an internal hold), each touching the entity before its release. Exactly one
/// party frees it, and the one that does sees the completer's result and every holder's access
/// (modelled as a write of both cells, which loom reports as a race otherwise).
fn completion_racing_releases(holders: &'static [bool]) {
    check(move || {
        let entity = Arc::new(Task::new());
        let user = holders.iter().filter(|&&u| u).count() as u64;
        entity
            .header
            .model_set_refs(user, holders.len() as u64 - user);
        let used = Arc::new(UnsafeCell::new(0usize));
        let free = |entity: &Task, used: &UnsafeCell<usize>| {
            entity.contents.with_mut(|c| unsafe { *c = 0 });
            used.with_mut(|u| unsafe { *u = 0 });
        };
        let releasers: Vec<_> = holders
            .iter()
            .map(|&user| {
                let (entity, used) = (Arc::clone(&entity), Arc::clone(&used));
                thread::spawn(move || {
                    used.with(|u| unsafe { *u });
                    let frees = entity.header.model_release(user);
                    if frees {
                        free(&entity, &used);
                    }
                    frees
                })
            })
            .collect();
        let completer = {
            let (entity, used) = (Arc::clone(&entity), Arc::clone(&used));
            thread::spawn(move || {
                entity.contents.with_mut(|c| unsafe { *c = 42 });
                let closed = wait_queue::close(entity.header.wait_head(), Access::Shared)
                    .expect("the queue was closed twice");
                assert!(closed.waiters.is_null());
                if closed.orphaned {
                    free(&entity, &used);
                }
                closed.orphaned
            })
        };
        let frees = usize::from(completer.join().unwrap())
            + releasers
                .into_iter()
                .map(|r| usize::from(r.join().unwrap()))
                .sum::<usize>();
        assert_eq!(frees, 1, "an entity must be freed exactly once");
    });
}

#[test]
fn a_user_reference_released_during_the_completion_frees_the_entity_once() {
    completion_racing_releases(&[true]);
}

#[test]
fn an_internal_hold_released_during_the_completion_frees_the_entity_once() {
    completion_racing_releases(&[false]);
}

#[test]
fn two_holders_released_during_the_completion_free_the_entity_once() {
    completion_racing_releases(&[true, false]);
}

/// One owner step per bracket (push, or pop the newest), one rescuer taking the oldest; the
/// owner's push in a bracket nested in another when `nest`, and each bracket entered by `enter`.
fn owner_and_rescuer(enter: for<'g> fn(&'g QueueGuard) -> Bracket<'g>, nest: bool) {
    check(move || {
        let guard = Arc::new(QueueGuard::new());
        let queue = Arc::new(UnsafeCell::new(vec![1u32]));
        let rescuer = {
            let (guard, queue) = (Arc::clone(&guard), Arc::clone(&queue));
            thread::spawn(move || {
                let _lock = guard.try_lock(1)?;
                // SAFETY: the lock keeps the owner out (what the model checks).
                queue.with_mut(|q| unsafe { (!(*q).is_empty()).then(|| (*q).remove(0)) })
            })
        };
        let owner = thread::spawn(move || {
            let mut mine = Vec::new();
            {
                let _outer = enter(&guard);
                let _inner = nest.then(|| guard.enter());
                queue.with_mut(|q| unsafe { (*q).push(2) });
            }
            for _ in 0..2 {
                let _bracket = enter(&guard);
                if let Some(t) = queue.with_mut(|q| unsafe { (*q).pop() }) {
                    mine.push(t);
                }
            }
            mine
        });
        let theirs = rescuer.join().unwrap();
        let mut mine = owner.join().unwrap();
        mine.extend(theirs);
        mine.sort_unstable();
        assert_eq!(mine, vec![1, 2], "each task comes out exactly once");
    });
}

#[test]
fn the_queue_guard_keeps_an_owner_and_a_rescuer_apart() {
    owner_and_rescuer(QueueGuard::enter, true);
}

/// The owner's brackets entered by `enter_outermost` (the worker's own brackets, which never
/// nest), which skips the load of the depth.
#[test]
fn the_queue_guard_keeps_an_outermost_owner_and_a_rescuer_apart() {
    owner_and_rescuer(QueueGuard::enter_outermost, false);
}
