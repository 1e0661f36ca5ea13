//! Behaviour of the task DAG through the Rust API, in the spirit of Kokkos' own tasking tests:
//! Fibonacci with a small pool, when_all of many futures and of when_alls, respawn chains,
//! priorities on one worker, team tasks, futures released before and after completion, destroy
//! counts, deadlock, and misuse.

use super::*;
use crate::error::ErrorKind;
use crate::exec::{PoolOptions, Space};
use crate::pool::{MemoryPool, PoolConfig};
use crate::priority::Priority;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Workers: 0 = the Serial space, n = a Threads space of n threads (more than the cores is
/// allowed: the space's threads are not pinned).
fn scheduler_with(workers: usize, pool_bytes: usize, config: SchedulerConfig) -> Scheduler {
    let space = if workers == 0 {
        Space::serial()
    } else {
        Space::threads(&PoolOptions {
            threads: workers,
            ..PoolOptions::default()
        })
        .unwrap()
    };
    let pool = Arc::new(MemoryPool::new(&PoolConfig::with_total(pool_bytes)).unwrap());
    Scheduler::new(space, pool, config).unwrap()
}

fn scheduler(workers: usize) -> Scheduler {
    scheduler_with(workers, 4 << 20, SchedulerConfig::default())
}

fn fib_reference(n: i64) -> i64 {
    let (mut a, mut b) = (0, 1);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// 000 Fig. 3.4: F(n-2) at high priority, F(n-1) regular, respawn on their when_all.
fn fib_task(n: i64) -> impl FnMut(&TaskContext<'_>) + Send + 'static {
    let mut children: Option<(Future, Future)> = None;
    move |ctx| {
        if n < 2 {
            ctx.set_result(n).unwrap();
        } else if let Some((a, b)) = &children {
            ctx.set_result(a.get::<i64>().unwrap() + b.get::<i64>().unwrap())
                .unwrap();
        } else {
            let high = Policy::single().priority(Priority::High);
            let a = ctx.spawn(&high, 8, fib_task(n - 2)).unwrap();
            let b = ctx.spawn(&Policy::single(), 8, fib_task(n - 1)).unwrap();
            let all = ctx.when_all(&[&a, &b]).unwrap();
            ctx.respawn(Some(&all), Priority::High).unwrap();
            children = Some((a, b));
        }
    }
}

fn run_fib(s: &Scheduler, n: i64) -> i64 {
    let f = s.spawn(&Policy::single(), 8, fib_task(n)).unwrap();
    s.wait().unwrap();
    f.get::<i64>().unwrap()
}

#[test]
fn fibonacci_is_exact_on_serial_one_two_and_more_workers_than_cores() {
    for workers in [0, 1, 2, 5] {
        let s = scheduler(workers);
        for n in [0, 1, 2, 10, 16] {
            assert_eq!(
                run_fib(&s, n),
                fib_reference(n),
                "fib({n}), {workers} workers"
            );
        }
        let st = s.statistics().unwrap();
        assert_eq!(st.alive, 0, "{workers} workers: {st:?}");
        assert_eq!(st.tasks_spawned, st.tasks_completed);
        assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
    }
}

#[test]
fn fibonacci_fits_a_small_pool_thanks_to_priorities_and_eager_frees() {
    // 000 Fig. 3.4 runs in a pool of 16000 bytes of 64..1024-byte blocks.
    let pool = Arc::new(
        MemoryPool::new(&PoolConfig {
            min_total_alloc_size: 16000,
            min_block_alloc_size: 64,
            max_block_alloc_size: 1024,
            min_superblock_size: 1024,
            thread_cache: true,
        })
        .unwrap(),
    );
    let s = Scheduler::new(Space::serial(), pool, SchedulerConfig::default()).unwrap();
    assert_eq!(run_fib(&s, 20), fib_reference(20));
    let st = s.statistics().unwrap();
    assert!(st.peak_alive < 100, "{st:?}");
    assert_eq!(st.allocation_failures, 0);
}

#[test]
fn statistics_count_spawns_respawns_and_when_alls() {
    let s = scheduler(1);
    assert_eq!(run_fib(&s, 10), 55);
    let st = s.statistics().unwrap();
    // fib(10) has 177 calls, 88 of them with n > 1.
    assert_eq!(st.tasks_spawned, 177);
    assert_eq!(st.tasks_respawned, 88);
    assert_eq!(st.when_alls_created, 88);
    assert_eq!(st.task_executions, 177 + 88);
    assert_eq!(st.tasks_completed, 177);
    assert_eq!(st.waits, 1);
    assert!(st.peak_alive >= 3, "{st:?}");
    assert_eq!(
        st.pool_high_water_bytes,
        s.pool().usage_statistics().high_water_bytes
    );
}

/// Records the order in which tasks run.
fn recorder(
    log: &Arc<Mutex<Vec<&'static str>>>,
    name: &'static str,
) -> impl FnMut(&TaskContext<'_>) + Send + 'static {
    let log = Arc::clone(log);
    move |_| log.lock().unwrap().push(name)
}

#[test]
fn one_worker_runs_higher_priorities_first_and_newest_first_within_one() {
    for workers in [0, 1] {
        let s = scheduler(workers);
        let log = Arc::new(Mutex::new(Vec::new()));
        let spawn = |name, priority| {
            s.spawn(
                &Policy::single().priority(priority),
                0,
                recorder(&log, name),
            )
            .unwrap()
        };
        let _f = [
            spawn("low1", Priority::Low),
            spawn("reg1", Priority::Regular),
            spawn("high1", Priority::High),
            spawn("low2", Priority::Low),
            spawn("reg2", Priority::Regular),
            spawn("high2", Priority::High),
        ];
        s.wait().unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["high2", "high1", "reg2", "reg1", "low2", "low1"]
        );
    }
}

#[test]
fn tasks_made_ready_by_a_completion_run_by_priority_then_newest_first() {
    let s = scheduler(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let gate = s
        .spawn(
            &Policy::single().priority(Priority::Low),
            0,
            recorder(&log, "gate"),
        )
        .unwrap();
    let after = |name, priority| {
        s.spawn(
            &Policy::single().after(&gate).priority(priority),
            0,
            recorder(&log, name),
        )
        .unwrap()
    };
    let _f = [
        after("reg1", Priority::Regular),
        after("low", Priority::Low),
        after("high", Priority::High),
        after("reg2", Priority::Regular),
    ];
    s.wait().unwrap();
    // The gate's wait queue is LIFO, so the waiters become ready newest waiter first: reg1, the
    // oldest waiter, is the last Regular task to become ready and runs first.
    assert_eq!(
        *log.lock().unwrap(),
        ["gate", "high", "reg1", "reg2", "low"]
    );
}

#[test]
fn a_single_worker_runs_ready_tasks_before_a_spawn_allocates() {
    // 002 §3.3.2: the parent's spawns each run the child spawned before, so only one child is
    // alive at a time.
    let s = scheduler(1);
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = Arc::clone(&log);
    let _parent = s
        .spawn(&Policy::single(), 0, move |ctx| {
            for name in ["a", "b", "c"] {
                l.lock().unwrap().push(name);
                ctx.spawn(&Policy::single(), 0, recorder(&l, "child"))
                    .unwrap();
            }
        })
        .unwrap();
    s.wait().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["a", "b", "child", "c", "child", "child"]
    );
    assert!(s.statistics().unwrap().peak_alive <= 3);
}

#[test]
fn when_all_of_a_thousand_futures_and_of_when_alls() {
    for workers in [1, 3] {
        let s = scheduler(workers);
        let ran = Arc::new(AtomicUsize::new(0));
        let futures: Vec<Future> = (0..1000)
            .map(|i| {
                let ran = Arc::clone(&ran);
                s.spawn(&Policy::single(), 8, move |ctx| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    ctx.set_result(i as i64).unwrap();
                })
                .unwrap()
            })
            .collect();
        let refs: Vec<&Future> = futures.iter().collect();
        // More than one 4 KiB block holds: built as a tree of when_alls.
        let all = s.when_all(&refs).unwrap();
        let halves = [
            s.when_all(&refs[..500]).unwrap(),
            s.when_all(&refs[500..]).unwrap(),
        ];
        let of_when_alls = s.when_all(&[&halves[0], &halves[1], &all]).unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let check = {
            let ran = Arc::clone(&ran);
            let seen = Arc::clone(&seen);
            move |_: &TaskContext<'_>| seen.store(ran.load(Ordering::Relaxed), Ordering::Relaxed)
        };
        let last = s
            .spawn(&Policy::single().after(&of_when_alls), 0, check)
            .unwrap();
        assert!(!all.is_ready());
        s.wait().unwrap();
        assert!(all.is_ready() && of_when_alls.is_ready() && last.is_ready());
        assert_eq!(seen.load(Ordering::Relaxed), 1000, "{workers} workers");
        let sum: i64 = futures.iter().map(|f| f.get::<i64>().unwrap()).sum();
        assert_eq!(sum, 999 * 1000 / 2);
        assert_eq!(all.result_bytes().unwrap(), &[] as &[u8]);
    }
}

#[test]
fn when_all_of_complete_or_no_futures_is_complete_at_once() {
    let s = scheduler(0);
    let none = s.when_all(&[]).unwrap();
    assert!(none.is_ready());
    let t = s.spawn(&Policy::single(), 0, |_| {}).unwrap();
    s.wait().unwrap();
    let done = s.when_all(&[&t, &t]).unwrap();
    assert!(done.is_ready());
    let generated = s
        .when_all_generate(4, |i| (i % 2 == 0).then(|| t.clone()))
        .unwrap();
    assert!(generated.is_ready());
    let st = s.statistics().unwrap();
    assert_eq!(st.when_alls_created, 3);
    drop((none, done, generated, t));
    assert_eq!(s.statistics().unwrap().alive, 0);
}

#[test]
fn a_respawn_chain_of_a_hundred_thousand_runs() {
    let s = scheduler(1);
    let mut count = 0u64;
    let f = s
        .spawn(&Policy::single(), 8, move |ctx| {
            count += 1;
            ctx.set_result(count).unwrap();
            if count < 100_000 {
                ctx.respawn(None, Priority::Regular).unwrap();
            }
        })
        .unwrap();
    s.wait().unwrap();
    assert_eq!(f.get::<u64>().unwrap(), 100_000);
    let st = s.statistics().unwrap();
    assert_eq!(st.tasks_respawned, 99_999);
    assert_eq!(st.task_executions, 100_000);
    assert_eq!(st.tasks_completed, 1);
}

#[test]
fn a_respawn_chain_through_dependences_on_many_workers() {
    // Each run spawns a child and waits for it: a chain of respawns with dependences.
    let s = scheduler(3);
    let mut left = 2000;
    let mut child: Option<Future> = None;
    let f = s
        .spawn(&Policy::single(), 8, move |ctx| {
            if let Some(c) = child.take() {
                assert!(c.is_ready());
            }
            if left == 0 {
                ctx.set_result(1u64).unwrap();
                return;
            }
            left -= 1;
            let c = ctx.spawn(&Policy::single(), 0, |_| {}).unwrap();
            ctx.respawn(Some(&c), Priority::Low).unwrap();
            child = Some(c);
        })
        .unwrap();
    s.wait().unwrap();
    assert_eq!(f.get::<u64>().unwrap(), 1);
}

#[test]
fn destroy_runs_once_per_task_when_it_completes() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    for workers in [0, 2] {
        let s = scheduler(workers);
        let drops = Arc::new(AtomicUsize::new(0));
        let mut futures = Vec::new();
        for i in 0..100 {
            let token = Counted(Arc::clone(&drops));
            let mut runs = 0;
            futures.push(
                s.spawn(&Policy::single(), 0, move |ctx| {
                    let _keep = &token;
                    runs += 1;
                    if runs < 1 + i % 3 {
                        ctx.respawn(None, Priority::Regular).unwrap();
                    }
                })
                .unwrap(),
            );
        }
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        s.wait().unwrap();
        // Dropped on completion, not when the futures go.
        assert_eq!(drops.load(Ordering::Relaxed), 100);
        drop(futures);
        assert_eq!(drops.load(Ordering::Relaxed), 100);
    }
}

#[test]
fn futures_released_before_and_after_completion_free_their_tasks() {
    let s = scheduler(2);
    for _ in 0..3 {
        let early = s
            .spawn(&Policy::single(), 8, |ctx| ctx.set_result(7i64).unwrap())
            .unwrap();
        let kept = s
            .spawn(&Policy::single().after(&early), 8, |ctx| {
                ctx.set_result(8i64).unwrap()
            })
            .unwrap();
        drop(early);
        assert_eq!(s.statistics().unwrap().alive, 2);
        s.wait().unwrap();
        // The early task was freed when it completed; the kept one lives on in its future.
        assert_eq!(s.statistics().unwrap().alive, 1);
        let copy = kept.clone();
        drop(kept);
        assert_eq!(copy.get::<i64>().unwrap(), 8);
        drop(copy);
        assert_eq!(s.statistics().unwrap().alive, 0);
    }
    assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
}

#[test]
fn tasks_hold_futures_of_tasks_that_completed_long_ago() {
    let s = scheduler(2);
    let old = s
        .spawn(&Policy::single(), 8, |ctx| ctx.set_result(41i64).unwrap())
        .unwrap();
    s.wait().unwrap();
    for _ in 0..3 {
        // Plenty of other tasks come and go meanwhile.
        assert_eq!(run_fib(&s, 12), 144);
    }
    let held = old.clone();
    let reader = s
        .spawn(&Policy::single().after(&old), 8, move |ctx| {
            ctx.set_result(held.get::<i64>().unwrap() + 1).unwrap()
        })
        .unwrap();
    drop(old);
    s.wait().unwrap();
    assert_eq!(reader.get::<i64>().unwrap(), 42);
}

#[test]
fn a_future_may_outlive_its_scheduler() {
    let s = scheduler(1);
    let f = s
        .spawn(&Policy::single(), 8, |ctx| ctx.set_result(5i64).unwrap())
        .unwrap();
    s.wait().unwrap();
    let pool = Arc::clone(s.pool());
    drop(s);
    assert_eq!(f.get::<i64>().unwrap(), 5);
    assert_eq!(pool.usage_statistics().consumed_blocks, 1);
    drop(f);
    assert_eq!(pool.usage_statistics().consumed_blocks, 0);
}

#[test]
fn a_dependence_cycle_is_reported_as_a_deadlock_once() {
    let s = scheduler(2);
    let slot: Arc<Mutex<Option<Future>>> = Arc::new(Mutex::new(None));
    let other = Arc::clone(&slot);
    // `a` respawns on `b`, which waits for `a`.
    let a = s
        .spawn(&Policy::single(), 0, move |ctx| {
            let b = other.lock().unwrap().take();
            if let Some(b) = b {
                ctx.respawn(Some(&b), Priority::Regular).unwrap();
            }
        })
        .unwrap();
    let b = s.spawn(&Policy::single().after(&a), 0, |_| {}).unwrap();
    *slot.lock().unwrap() = Some(b.clone());
    let e = s.wait().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Deadlock);
    assert!(e.message().contains("2 task(s)"), "{}", e.message());
    // Reported once; the scheduler keeps working.
    assert_eq!(run_fib(&s, 8), 21);
}

fn add_i64(a: &mut [u8], b: &[u8]) {
    let sum = i64::from_ne_bytes(a[..8].try_into().unwrap())
        + i64::from_ne_bytes(b[..8].try_into().unwrap());
    a.copy_from_slice(&sum.to_ne_bytes());
}

#[test]
fn team_tasks_run_on_every_member_with_barrier_reduce_and_scan() {
    for (workers, team_size) in [(1, 1), (2, 2), (4, 2), (6, 3)] {
        let s = scheduler_with(
            workers,
            1 << 20,
            SchedulerConfig {
                team_size,
                team_scratch_bytes: 64,
            },
        );
        assert_eq!(s.team_size(), team_size);
        let calls = Arc::new(AtomicUsize::new(0));
        let mut futures = Vec::new();
        for t in 0..8i64 {
            let calls = Arc::clone(&calls);
            futures.push(
                s.spawn_team(&Policy::single(), 16, move |ctx| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    let m = ctx.team();
                    assert_eq!(m.size(), team_size);
                    let mut sum = (t * 100 + m.rank() as i64).to_ne_bytes();
                    m.reduce(&mut sum, &add_i64).unwrap();
                    let mut prefix = 1i64.to_ne_bytes();
                    m.scan(&mut prefix, &0i64.to_ne_bytes(), &add_i64, false, None)
                        .unwrap();
                    assert_eq!(i64::from_ne_bytes(prefix), m.rank() as i64);
                    m.barrier();
                    if m.rank() == 0 {
                        let result = [i64::from_ne_bytes(sum), m.size() as i64];
                        ctx.set_result(result).unwrap();
                    }
                })
                .unwrap(),
            );
        }
        s.wait().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 8 * team_size);
        for (t, f) in futures.iter().enumerate() {
            let ts = team_size as i64;
            let [sum, size] = f.get::<[i64; 2]>().unwrap();
            assert_eq!(size, ts);
            assert_eq!(sum, t as i64 * 100 * ts + ts * (ts - 1) / 2);
        }
        assert_eq!(s.statistics().unwrap().task_executions, 8);
    }
}

#[test]
fn only_one_team_member_may_spawn_or_respawn() {
    let s = scheduler_with(
        2,
        1 << 20,
        SchedulerConfig {
            team_size: 2,
            team_scratch_bytes: 0,
        },
    );
    let refused = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&refused);
    let runs = AtomicUsize::new(0);
    let f = s
        .spawn_team(&Policy::single(), 0, move |ctx| {
            let m = ctx.team();
            if m.rank() == 0 {
                ctx.spawn(&Policy::single(), 0, |_| {}).unwrap();
            }
            m.barrier();
            if m.rank() == 1 {
                let e = ctx.respawn(None, Priority::Regular).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::WrongThread);
                r.fetch_add(1, Ordering::Relaxed);
            } else if runs.fetch_add(1, Ordering::Relaxed) == 0 {
                ctx.respawn(None, Priority::Regular).unwrap();
            }
        })
        .unwrap();
    s.wait().unwrap();
    assert!(f.is_ready());
    assert_eq!(refused.load(Ordering::Relaxed), 2);
    // A team task's run counts once, however many members run it, so completed tasks are the
    // executions less the respawns for team tasks too: the team task ran twice (one respawn),
    // each run spawned a single task.
    let st = s.statistics().unwrap();
    assert_eq!(
        (st.tasks_spawned, st.task_executions, st.tasks_respawned),
        (3, 4, 1)
    );
    assert_eq!(st.tasks_completed, 3);
}

#[test]
fn a_team_member_whose_respawn_fails_keeps_no_spawn_right() {
    let s = scheduler_with(
        2,
        1 << 20,
        SchedulerConfig {
            team_size: 2,
            team_scratch_bytes: 0,
        },
    );
    let own: Arc<Mutex<Option<Future>>> = Arc::default();
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let (own2, k) = (Arc::clone(&own), Arc::clone(&kinds));
    let runs = AtomicUsize::new(0);
    let f = s
        .spawn_team(&Policy::single(), 0, move |ctx| {
            let m = ctx.team();
            let first = runs.load(Ordering::Relaxed) == 0;
            if first && m.rank() == 1 {
                // Refused (the task's own future, a second respawn): neither takes the right.
                let me = own2.lock().unwrap().clone().unwrap();
                let first_kind = ctx.respawn(Some(&me), Priority::Low).unwrap_err().kind();
                let second_kind = ctx
                    .respawn_when_all(&[&me], Priority::Low)
                    .unwrap_err()
                    .kind();
                k.lock().unwrap().extend([first_kind, second_kind]);
            }
            m.barrier();
            if first && m.rank() == 0 {
                // No unwrap: a panic here would leave member 1 at the barrier below.
                if let Err(e) = ctx.respawn_when_all(&[], Priority::Low) {
                    k.lock().unwrap().push(e.kind());
                }
            }
            m.barrier();
            if m.rank() == 0 {
                runs.fetch_add(1, Ordering::Relaxed);
            }
        })
        .unwrap();
    *own.lock().unwrap() = Some(f.clone());
    s.wait().unwrap();
    assert_eq!(
        *kinds.lock().unwrap(),
        [ErrorKind::InvalidArgument, ErrorKind::InvalidArgument]
    );
    let st = s.statistics().unwrap();
    assert_eq!((st.tasks_respawned, st.task_executions), (1, 2));
    *own.lock().unwrap() = None;
}

#[test]
fn misuse_is_reported_and_the_scheduler_keeps_working() {
    let s = scheduler(1);
    let serial = scheduler(0);
    let other = scheduler(1);
    // Team task on the Serial space.
    let e = serial.spawn_team(&Policy::single(), 0, |_| {}).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    // A state larger than the pool's largest block.
    let big = [0u8; 5000];
    let e = s
        .spawn(&Policy::single(), 0, move |_| assert_eq!(big.len(), 5000))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("largest block"), "{}", e.message());
    // A dependence of another scheduler.
    let foreign = other.spawn(&Policy::single(), 0, |_| {}).unwrap();
    let e = s
        .spawn(&Policy::single().after(&foreign), 0, |_| {})
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = s.when_all(&[&foreign]).unwrap_err();
    assert!(e.message().contains("another scheduler"), "{}", e.message());
    // Reading an incomplete task.
    let pending = s.spawn(&Policy::single(), 8, |_| {}).unwrap();
    assert_eq!(
        pending.get::<i64>().unwrap_err().kind(),
        ErrorKind::NotReady
    );
    // Respawn twice, depend on itself, wait inside a task.
    let errors = Arc::new(Mutex::new(Vec::new()));
    let e2 = Arc::clone(&errors);
    let waiter = s.clone();
    let mut first = true;
    let _t = s
        .spawn(&Policy::single(), 0, move |ctx| {
            if !std::mem::take(&mut first) {
                return;
            }
            let mut e = e2.lock().unwrap();
            ctx.respawn(None, Priority::Low).unwrap();
            e.push(ctx.respawn(None, Priority::Low).unwrap_err().kind());
            e.push(waiter.wait().unwrap_err().kind());
            e.push(
                waiter
                    .spawn(&Policy::single(), 0, |_| {})
                    .unwrap_err()
                    .kind(),
            );
        })
        .unwrap();
    s.wait().unwrap();
    assert_eq!(
        *errors.lock().unwrap(),
        [
            ErrorKind::InvalidArgument,
            ErrorKind::WrongThread,
            ErrorKind::WrongThread
        ]
    );
    assert_eq!(run_fib(&s, 10), 55);
    other.wait().unwrap();
}

#[test]
fn pool_exhaustion_fails_the_spawn_and_changes_nothing_else() {
    let s = scheduler_with(1, 8192, SchedulerConfig::default());
    let mut kept = Vec::new();
    let e = loop {
        match s.spawn(&Policy::single(), 0, |_| {}) {
            Ok(f) => kept.push(f),
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), ErrorKind::PoolExhausted);
    let st = s.statistics().unwrap();
    assert_eq!(st.alive as usize, kept.len());
    assert_eq!(st.tasks_spawned as usize, kept.len());
    assert_eq!(st.allocation_failures, 1);
    s.wait().unwrap();
    drop(kept);
    assert_eq!(run_fib(&s, 5), 5);
}

#[test]
fn futures_are_busy_for_other_threads_while_a_wait_runs() {
    let s = scheduler(0);
    let f = s.spawn(&Policy::single(), 0, |_| {}).unwrap();
    let started = Arc::new(std::sync::Barrier::new(2));
    let release = Arc::new(AtomicUsize::new(0));
    let (st, rel) = (Arc::clone(&started), Arc::clone(&release));
    let _spinner = s
        .spawn(&Policy::single(), 0, move |_| {
            st.wait();
            while rel.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
        })
        .unwrap();
    let s2 = s.clone();
    let waiter = std::thread::spawn(move || s2.wait());
    started.wait();
    let e = s.spawn(&Policy::single(), 0, |_| {}).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert_eq!(s.statistics().unwrap_err().kind(), ErrorKind::Busy);
    // SAFETY: `f` holds a reference.
    let e = unsafe { super::future::retain(f.header(), "retain") }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    // The spinner, spawned last, runs first; readiness may be asked any time.
    assert!(!f.is_ready());
    release.store(1, Ordering::Release);
    waiter.join().unwrap().unwrap();
    assert!(f.is_ready());
}

/// A worker that leaves a wait late (3 ms, the test hook) sits out the next waits
/// (`laggards.rs`): it is not called in, and the waits still compute exactly without it.
#[test]
fn a_worker_late_to_leave_a_wait_sits_out_the_next_ones() {
    let s = scheduler(8);
    let shared = s.shared();
    shared.leave_late.store(2, Ordering::Relaxed);
    // Other workers may be late too on a machine with fewer cores than workers, and at most
    // three of seven may sit out at once, so it may take a few waits.
    let mut left_out = 0;
    for _ in 0..400 {
        assert_eq!(run_fib(&s, 16), fib_reference(16));
        if !shared.workers[2].takes_part.load(Ordering::Relaxed) {
            assert_ne!(
                shared.last_to_leave.load(Ordering::Relaxed),
                2,
                "a worker left out of a wait ran it"
            );
            left_out += 1;
            if left_out == 3 {
                break;
            }
        }
    }
    assert_eq!(left_out, 3, "worker 2 was never left out");
    assert!(s.statistics().unwrap().workers_sat_out >= 3);
    // Many waits while it sits out (or comes back, late again): each ends, and exactly.
    for _ in 0..100 {
        assert_eq!(run_fib(&s, 14), fib_reference(14));
    }
    assert!(shared.workers[0].takes_part.load(Ordering::Relaxed));
    shared.leave_late.store(0, Ordering::Relaxed);
    assert_eq!(run_fib(&s, 20), fib_reference(20));
    let st = s.statistics().unwrap();
    assert_eq!(st.alive, 0, "{st:?}");
    assert_eq!(st.tasks_completed, st.tasks_spawned, "{st:?}");
    assert_eq!(
        st.task_executions,
        st.tasks_completed + st.tasks_respawned,
        "{st:?}"
    );
}

/// A scheduler on three pinned threads (`run_delay::busy_cpu`) whose late exits do not count,
/// so that only lost cores leave workers out.
fn lost_core_scheduler() -> Option<(Scheduler, Vec<usize>)> {
    let (space, pinned) = crate::run_delay::busy_cpu::three_pinned_threads()?;
    let pool = Arc::new(MemoryPool::new(&PoolConfig::with_total(8 << 20)).unwrap());
    let s = Scheduler::new(space, pool, SchedulerConfig::default()).unwrap();
    s.shared().ignore_late_exits.store(true, Ordering::Relaxed);
    Some((s, pinned))
}

/// Waits on `s` until `done` or 300 waits; returns how many ran. Each computes the smallest
/// F(n) whose wait takes 3 ms or more here (debug builds are many times slower): lost cores
/// count only in waits of 1 ms or more, and confirm each other only within 100 ms.
fn waits_until(s: &Scheduler, done: impl Fn() -> bool) -> usize {
    let n = (14..26)
        .find(|&n| {
            let t = std::time::Instant::now();
            assert_eq!(run_fib(s, n), fib_reference(n));
            t.elapsed() >= std::time::Duration::from_millis(3)
        })
        .unwrap_or(26);
    let mut waits = 0;
    while waits < 300 && !done() {
        assert_eq!(run_fib(s, n), fib_reference(n));
        waits += 1;
    }
    waits
}

/// A worker whose CPU a busy thread shares loses time slices during waits; it notices at its
/// leave (its thread's wait for the CPU, `run_delay.rs`) and sits out the next waits
/// (`laggards.rs`).
#[test]
fn a_worker_that_loses_its_core_sits_out_the_next_waits() {
    let Some((s, pinned)) = lost_core_scheduler() else {
        return;
    };
    let shared = s.shared();
    shared
        .only_workers_lose_cores
        .store(true, Ordering::Relaxed);
    let sits_out = |r: usize| !shared.workers[r].takes_part.load(Ordering::Relaxed);
    let cpu = pinned[2];
    let waits = crate::run_delay::busy_cpu::beside_a_thread_spinning_on(cpu, || {
        waits_until(&s, || (1..3).any(sits_out))
    });
    assert!(
        (1..3).any(|r| pinned[r] == cpu && sits_out(r)),
        "no worker on CPU {cpu} sat out after {waits} waits beside a thread spinning there \
         (workers pinned to {pinned:?}, sitting out: {:?})",
        (1..3).filter(|&r| sits_out(r)).collect::<Vec<_>>()
    );
    // The waits without it compute exactly.
    for _ in 0..20 {
        assert_eq!(run_fib(&s, 20), fib_reference(20));
    }
    assert!(s.statistics().unwrap().workers_sat_out >= 1);
}

/// The waiting thread (rank 0) whose CPU a busy thread shares loses time slices too; it
/// notices after the wait and, the next time, runs its waits on the CPU of the last worker,
/// which sits out for it (`Laggards::stand_in`).
#[test]
fn a_waiting_thread_that_loses_its_core_takes_a_workers() {
    let Some((s, pinned)) = lost_core_scheduler() else {
        return;
    };
    let shared = s.shared();
    shared
        .only_rank_0_loses_cores
        .store(true, Ordering::Relaxed);
    let stand_in = || {
        let laggards = shared.laggards.lock().unwrap();
        laggards.stand_in(std::time::Instant::now())
    };
    let (waits, seen) = crate::run_delay::busy_cpu::beside_a_thread_spinning_on(pinned[0], || {
        let waits = waits_until(&s, || stand_in().is_some());
        let seen = stand_in();
        if seen.is_some() {
            // A wait on the stand-in's CPU, without the stand-in, computes exactly.
            assert_eq!(run_fib(&s, 20), fib_reference(20));
            assert!(!shared.workers[2].takes_part.load(Ordering::Relaxed));
        }
        (waits, seen)
    });
    assert_eq!(
        seen,
        Some(2),
        "no stand-in after {waits} waits beside a thread spinning on CPU {}",
        pinned[0]
    );
}

/// Where team tasks need teams of several threads, every worker takes part in every wait.
#[test]
fn with_teams_of_two_no_worker_sits_out() {
    let s = scheduler_with(
        4,
        4 << 20,
        SchedulerConfig {
            team_size: 2,
            ..SchedulerConfig::default()
        },
    );
    let shared = s.shared();
    shared.leave_late.store(3, Ordering::Relaxed);
    for _ in 0..5 {
        assert_eq!(run_fib(&s, 14), fib_reference(14));
        assert!(shared
            .workers
            .iter()
            .all(|w| w.takes_part.load(Ordering::Relaxed)));
    }
    assert_eq!(s.statistics().unwrap().workers_sat_out, 0);
}

/// Idle workers keep asking the others for tasks, in turn, all wait long: with two workers, the
/// second gets tasks handed over again and again, not just at its first request (a worker that
/// lost its place in the turn asked once and never again). Waits until it has had ten, for up
/// to 10 s: on a loaded machine the second thread may not run during a short wait. F(22), a few
/// milliseconds of work, because under load the second thread may come only after F(18) was
/// done, wait after wait (a stress loop beside two compilers once saw no hand-over in 2486
/// waits of F(18)).
#[test]
fn an_idle_worker_keeps_asking_for_tasks() {
    let s = scheduler(2);
    let start = std::time::Instant::now();
    let mut waits = 0;
    while s.statistics().unwrap().steals < 10 && start.elapsed().as_secs() < 10 {
        assert_eq!(run_fib(&s, 22), fib_reference(22));
        waits += 1;
    }
    let steals = s.statistics().unwrap().steals;
    assert!(steals >= 10, "{steals} tasks handed over in {waits} waits");
}
