//! Stress tests of the task DAG with more workers than cores: exact Fibonacci numbers from many
//! repetitions, and random DAGs of spawns, when_alls and respawns (separate or in one call) whose
//! every task must run the expected number of times.
//!
//! The Fibonacci repetitions are long in a debug build and run in release mode only (scripts/test.sh
//! runs `cargo test --release --test task_stress`).

#[path = "common/fib.rs"]
mod fib;

use fib::{fib_reference, fib_task, scheduler, Join};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use taskdag::priority::Priority;
use taskdag::task::{Future, Policy, TaskContext};

fn fib_27_a_hundred_times(workers: usize) {
    let s = scheduler(workers, 32 << 20);
    for round in 0..100 {
        // Both ways of waiting for the children, in turn.
        let join = if round % 2 == 0 {
            Join::WhenAllThenRespawn
        } else {
            Join::RespawnWhenAll
        };
        let f = s.spawn(&Policy::single(), 8, fib_task(27, join)).unwrap();
        s.wait().unwrap();
        assert_eq!(
            f.get::<i64>().unwrap(),
            fib_reference(27),
            "round {round}, {workers} workers"
        );
    }
    let st = s.statistics().unwrap();
    assert_eq!(st.tasks_spawned, 100 * 635_621);
    assert_eq!(st.tasks_completed, st.tasks_spawned);
    assert_eq!(st.alive, 0);
    assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "long in a debug build; runs with --release"
)]
fn fib_27_a_hundred_times_on_two_workers_is_exact() {
    fib_27_a_hundred_times(2);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "long in a debug build; runs with --release"
)]
fn fib_27_a_hundred_times_on_eight_workers_is_exact() {
    fib_27_a_hundred_times(8);
}

/// xorshift64: a fixed sequence per seed.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A task that, `depth` levels deep, spawns a random number of children with random priorities,
/// some of them after a sibling, waits for all of them (a when_all and a respawn on it, or
/// respawn_when_all), and counts its runs.
fn random_task(
    seed: u64,
    depth: u32,
    runs: Arc<AtomicU64>,
    tasks: Arc<AtomicU64>,
) -> impl FnMut(&TaskContext<'_>) + Send + 'static {
    let mut children: Vec<Future> = Vec::new();
    let mut respawned = false;
    move |ctx| {
        runs.fetch_add(1, Ordering::Relaxed);
        if depth == 0 || respawned {
            for c in &children {
                assert!(c.is_ready(), "a dependence ran after its dependent");
            }
            children.clear();
            return;
        }
        tasks.fetch_add(1, Ordering::Relaxed);
        let mut random = Random(seed | 1);
        let count = 1 + random.below(4);
        for i in 0..count {
            let priority = Priority::ALL[random.below(3) as usize];
            let after =
                (i > 0 && random.below(2) == 0).then(|| &children[random.below(i) as usize]);
            let policy = Policy {
                dependence: after,
                priority,
            };
            let child = random_task(
                seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(i),
                depth - 1,
                Arc::clone(&runs),
                Arc::clone(&tasks),
            );
            let f = ctx.spawn(&policy, 0, child).unwrap();
            children.push(f);
        }
        let refs: Vec<&Future> = children.iter().collect();
        let priority = Priority::ALL[random.below(3) as usize];
        if random.below(2) == 0 {
            let all = ctx.when_all(&refs).unwrap();
            ctx.respawn(Some(&all), priority).unwrap();
        } else {
            ctx.respawn_when_all(&refs, priority).unwrap();
        }
        respawned = true;
    }
}

#[test]
fn random_dags_run_every_task_the_expected_number_of_times() {
    for workers in [1, 3, 8] {
        let s = scheduler(workers, 8 << 20);
        for seed in 1..9u64 {
            let runs = Arc::new(AtomicU64::new(0));
            let inner = Arc::new(AtomicU64::new(0));
            let spawned_before = s.statistics().unwrap().tasks_spawned;
            let root = s
                .spawn(
                    &Policy::single(),
                    0,
                    random_task(seed, 8, Arc::clone(&runs), Arc::clone(&inner)),
                )
                .unwrap();
            s.wait().unwrap();
            assert!(root.is_ready());
            let spawned = s.statistics().unwrap().tasks_spawned - spawned_before;
            // Inner tasks run twice (to spawn their children, then after them), leaves once.
            assert_eq!(
                runs.load(Ordering::Relaxed),
                spawned + inner.load(Ordering::Relaxed),
                "seed {seed}, {workers} workers"
            );
        }
        let st = s.statistics().unwrap();
        assert_eq!(st.alive, 0, "{workers} workers: {st:?}");
        assert_eq!(st.tasks_completed, st.tasks_spawned);
    }
}

/// A busy worker hands tasks to idle workers that ask: while the root task keeps its worker
/// busy (it returns only once a child ran elsewhere, or after 10 s), its children, which sit in
/// its private queue, can reach another worker only that way.
#[test]
fn idle_workers_get_tasks_from_a_busy_one() {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};
    let s = scheduler(3, 1 << 20);
    let elsewhere = Arc::new(AtomicBool::new(false));
    let root_elsewhere = elsewhere.clone();
    let root = s
        .spawn(&Policy::single(), 0, move |ctx: &TaskContext<'_>| {
            let root_thread = std::thread::current().id();
            let start = Instant::now();
            while !root_elsewhere.load(Ordering::Acquire)
                && start.elapsed() < Duration::from_secs(10)
            {
                let seen = root_elsewhere.clone();
                let child = ctx.spawn(&Policy::single(), 0, move |_: &TaskContext<'_>| {
                    if std::thread::current().id() != root_thread {
                        seen.store(true, Ordering::Release);
                    }
                });
                if child.is_err() {
                    break; // the pool is full of children nobody ran: the assertion below says so
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .unwrap();
    s.wait().unwrap();
    assert!(root.is_ready());
    assert!(
        elsewhere.load(Ordering::Acquire),
        "no child ran on another worker while the root's worker was busy"
    );
    let st = s.statistics().unwrap();
    assert!(st.steals > 0, "{st:?}");
    assert_eq!(st.tasks_completed, st.tasks_spawned);
}
