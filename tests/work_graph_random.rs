//! Random DAGs run at 1 to 8 workers, with an order checker that records when every item starts
//! and finishes and verifies every edge: each item runs exactly once and F(j) starts after F(i)
//! returned for each dependence "j after i".
//!
//! Sizes: up to 10^5 items here (debug builds stay fast); the 10^6-item test is ignored in debug
//! builds and runs in release:
//!     cargo test --release --test work_graph_random -- --include-ignored
//! (ctest runs a 10^6-item random DAG in release through cpp-tests/test_work_graph_random.cpp.)

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use taskdag::exec::{PoolOptions, Space};
use taskdag::priority::Priority;
use taskdag::work_graph::{Crs, WorkGraph};

/// xorshift64: deterministic, so a failing graph can be rebuilt from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random DAG of `n` items: a random topological order, and for each item a random number of
/// successors (mean `degree`) later in that order, either anywhere (`window` = n) or within the
/// next `window` positions (long chains and many levels).
fn random_dag(n: usize, degree: u64, window: usize, seed: u64) -> Crs {
    let mut rng = Rng(seed | 1);
    let mut order: Vec<u32> = (0..n as u32).collect();
    for k in (1..n).rev() {
        order.swap(k, rng.below(k as u64 + 1) as usize);
    }
    let mut rows = vec![Vec::new(); n];
    for p in 0..n.saturating_sub(1) {
        let later = (n - p - 1).min(window) as u64;
        for _ in 0..rng.below(2 * degree + 1) {
            let q = p + 1 + rng.below(later) as usize;
            rows[order[p] as usize].push(order[q]);
        }
    }
    let mut row_map = vec![0u32];
    let mut entries = Vec::new();
    for row in rows {
        entries.extend(row);
        row_map.push(entries.len() as u32);
    }
    Crs::from_parts(row_map, entries).unwrap()
}

fn space(workers: usize) -> Space {
    Space::threads(&PoolOptions {
        threads: workers,
        ..Default::default()
    })
    .unwrap()
}

/// Start and finish times of every item on one global clock, reused across runs.
struct OrderChecker {
    clock: AtomicU64,
    start: Vec<AtomicU64>,
    finish: Vec<AtomicU64>,
    runs: Vec<AtomicU32>,
}

impl OrderChecker {
    fn new(n: usize) -> OrderChecker {
        OrderChecker {
            clock: AtomicU64::new(0),
            start: (0..n).map(|_| AtomicU64::new(0)).collect(),
            finish: (0..n).map(|_| AtomicU64::new(0)).collect(),
            runs: (0..n).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    fn work(&self, i: usize) {
        self.start[i].store(self.clock.fetch_add(1, Ordering::SeqCst), Ordering::Relaxed);
        self.runs[i].fetch_add(1, Ordering::Relaxed);
        self.finish[i].store(self.clock.fetch_add(1, Ordering::SeqCst), Ordering::Relaxed);
    }

    /// Checks run number `run` (1-based) of `graph`.
    fn verify(&self, graph: &Crs, run: u32, what: &str) {
        for i in 0..graph.num_rows() {
            let runs = self.runs[i].load(Ordering::Relaxed);
            assert_eq!(runs, run, "{what}: item {i} ran {runs} times in {run} runs");
            let done = self.finish[i].load(Ordering::Relaxed);
            for &j in graph.row(i) {
                let began = self.start[j as usize].load(Ordering::Relaxed);
                assert!(
                    done < began,
                    "{what}: item {j} started at {began} before item {i}, which it executes \
                     after, finished at {done}"
                );
            }
        }
    }
}

fn check(n: usize, degree: u64, window: usize, workers: &[usize], seed: u64) {
    let graph = Arc::new(random_dag(n, degree, window, seed));
    let plan = WorkGraph::new(Arc::clone(&graph), None).unwrap();
    let checker = OrderChecker::new(n);
    let mut run = 0;
    let serial = Space::serial();
    for &w in workers {
        let pool = space(w);
        let space = if w == 1 { &serial } else { &pool };
        plan.run(space, |i| checker.work(i)).unwrap();
        run += 1;
        let what = format!("n={n} degree={degree} window={window} workers={w} seed={seed}");
        checker.verify(&graph, run, &what);
    }
}

#[test]
fn random_dags_of_every_density_respect_every_edge() {
    for (k, &n) in [1usize, 2, 10, 1000, 100_000].iter().enumerate() {
        for degree in [0, 1, 4, 8] {
            for window in [n, 16] {
                check(
                    n,
                    degree,
                    window,
                    &[1, 2, 3, 4, 8],
                    17 + k as u64 * 131 + degree,
                );
            }
        }
    }
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "10^6 items: run in release (see the file comment)"
)]
fn a_random_dag_of_a_million_items_respects_every_edge() {
    for degree in [1, 4] {
        check(1_000_000, degree, 1_000_000, &[1, 2, 4, 8], 99 + degree);
    }
    check(1_000_000, 2, 64, &[1, 8], 7);
}

/// Stress: many runs of one plan on more workers than cores, with priorities, checking every
/// run; stealing, root claims and stack exchanges race constantly.
#[test]
fn repeated_runs_on_an_oversubscribed_pool_keep_every_edge() {
    let n = 5_000;
    let graph = Arc::new(random_dag(n, 3, 200, 5));
    let levels: Vec<Priority> = (0..n).map(|i| Priority::ALL[i * 7 % 3]).collect();
    let checker = OrderChecker::new(n);
    for (run, plan) in [
        WorkGraph::new(Arc::clone(&graph), None).unwrap(),
        WorkGraph::new(Arc::clone(&graph), Some(&levels)).unwrap(),
    ]
    .iter()
    .enumerate()
    {
        let pool = space(8);
        for k in 1..=100 {
            plan.run(&pool, |i| checker.work(i)).unwrap();
            checker.verify(
                &graph,
                run as u32 * 100 + k,
                &format!("plan {run}, run {k}"),
            );
        }
    }
}
