//! 000 Fig. 3.4's Fibonacci task and a scheduler on a Threads space (or the Serial one), for
//! the task DAG's integration tests.
// Each test crate that includes this file uses part of it.
#![allow(dead_code)]

use std::sync::Arc;
use taskdag::exec::{PoolOptions, Space};
use taskdag::pool::{MemoryPool, PoolConfig};
use taskdag::priority::Priority;
use taskdag::task::{Future, Policy, Scheduler, SchedulerConfig, TaskContext};

/// A scheduler on `workers` threads (0: the Serial space) with a pool of `pool_bytes`.
pub fn scheduler(workers: usize, pool_bytes: usize) -> Scheduler {
    scheduler_with(workers, pool_bytes, SchedulerConfig::default())
}

/// `scheduler` with `config` (team size, scratch).
pub fn scheduler_with(workers: usize, pool_bytes: usize, config: SchedulerConfig) -> Scheduler {
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

/// How a task waits for its children: a when_all and a respawn on it, respawn_when_all, or
/// respawn_when_all_private (the children are the task's own).
#[derive(Clone, Copy)]
pub enum Join {
    WhenAllThenRespawn,
    RespawnWhenAll,
    RespawnWhenAllPrivate,
}

/// F(n-2) at high priority, F(n-1) regular, and a respawn once both completed (000 Fig. 3.4).
pub fn fib_task(n: i64, join: Join) -> impl FnMut(&TaskContext<'_>) + Send + 'static {
    let mut children: Option<(Future, Future)> = None;
    move |ctx| {
        if n < 2 {
            ctx.set_result(n).unwrap();
        } else if let Some((a, b)) = &children {
            ctx.set_result(a.get::<i64>().unwrap() + b.get::<i64>().unwrap())
                .unwrap();
        } else {
            let high = Policy::single().priority(Priority::High);
            let a = ctx.spawn(&high, 8, fib_task(n - 2, join)).unwrap();
            let b = ctx
                .spawn(&Policy::single(), 8, fib_task(n - 1, join))
                .unwrap();
            match join {
                Join::WhenAllThenRespawn => {
                    let all = ctx.when_all(&[&a, &b]).unwrap();
                    ctx.respawn(Some(&all), Priority::High).unwrap();
                }
                Join::RespawnWhenAll => ctx.respawn_when_all(&[&a, &b], Priority::High).unwrap(),
                Join::RespawnWhenAllPrivate => ctx
                    .respawn_when_all_private(&[&a, &b], Priority::High)
                    .unwrap(),
            }
            children = Some((a, b));
        }
    }
}

/// Runs F(n) with `join` for each of `ns` on schedulers of each of `workers` (0: Serial) and
/// checks every result, and that nothing stays alive or allocated.
pub fn check_fib_exact(join: Join, workers: &[usize], ns: &[i64]) {
    for &w in workers {
        let s = scheduler(w, 4 << 20);
        for &n in ns {
            let f = s.spawn(&Policy::single(), 8, fib_task(n, join)).unwrap();
            s.wait().unwrap();
            assert_eq!(
                f.get::<i64>().unwrap(),
                fib_reference(n),
                "fib({n}), {w} workers"
            );
        }
        let st = s.statistics().unwrap();
        assert_eq!(st.alive, 0, "{w} workers: {st:?}");
        assert_eq!(st.tasks_spawned, st.tasks_completed);
        assert_eq!(s.pool().usage_statistics().consumed_blocks, 0);
    }
}

/// F(n) by iteration.
pub fn fib_reference(n: i64) -> i64 {
    let (mut a, mut b) = (0, 1);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}
