//! Behaviour of the CRS graph, its checks and transpose, and of runs on small graphs of known
//! shape. Random DAGs up to 10^6 items at 1..8 workers are in tests/work_graph_random.rs, the
//! loom models in tests/loom_work_graph.rs.

use super::split::{ItemCost, Split, WorkerClock};
use super::worker;
use super::*;
use crate::error::ErrorKind;
use crate::exec::{PoolOptions, Space};
use crate::priority::Priority;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn crs(row_map: &[i64], entries: &[i64]) -> Crs {
    Crs::new(row_map, entries).unwrap()
}

/// A graph from a list of "j after i" edges (i, j), rows in the order given.
fn from_edges(n: usize, edges: &[(usize, usize)]) -> Crs {
    let mut rows = vec![Vec::new(); n];
    for &(i, j) in edges {
        rows[i].push(j as u32);
    }
    let mut row_map = vec![0u32];
    let mut entries = Vec::new();
    for row in rows {
        entries.extend(row);
        row_map.push(entries.len() as u32);
    }
    Crs::from_parts(row_map, entries).unwrap()
}

fn invalid(row_map: &[i64], entries: &[i64]) -> String {
    let e = Crs::new(row_map, entries).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    e.message().to_owned()
}

fn threads(n: usize) -> Space {
    Space::threads(&PoolOptions {
        threads: n,
        ..Default::default()
    })
    .unwrap()
}

/// The spaces every run test uses: Serial, and pools of 2 and 4 threads.
fn spaces() -> Vec<Space> {
    vec![Space::serial(), threads(2), threads(4)]
}

/// Runs `plan` on `space` once, checking that no item runs twice; returns the thread that ran
/// each item.
fn run_recording_threads(plan: &WorkGraph, space: &Space) -> Vec<std::thread::ThreadId> {
    let ran_by: Vec<Mutex<Option<std::thread::ThreadId>>> =
        (0..plan.num_items()).map(|_| Mutex::new(None)).collect();
    plan.run(space, |i| {
        let previous = ran_by[i]
            .lock()
            .unwrap()
            .replace(std::thread::current().id());
        assert!(previous.is_none(), "item {i} ran twice");
    })
    .unwrap();
    ran_by
        .into_iter()
        .map(|t| t.into_inner().unwrap().expect("every item runs"))
        .collect()
}

/// Runs `plan` on `space`, recording when each item starts and finishes on one global clock,
/// then checks that each item ran once and every F(j) started after each F(i) it depends on
/// finished. Returns the order in which items started.
fn run_checked(plan: &WorkGraph, space: &Space) -> Vec<usize> {
    let n = plan.num_items();
    let clock = AtomicUsize::new(0);
    let start: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(usize::MAX)).collect();
    let finish: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(usize::MAX)).collect();
    plan.run(space, |i| {
        let t = clock.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            start[i].swap(t, Ordering::SeqCst),
            usize::MAX,
            "item {i} ran twice"
        );
        finish[i].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
    })
    .unwrap();
    let graph = plan.graph();
    for (i, finished) in finish.iter().enumerate() {
        let done = finished.load(Ordering::SeqCst);
        assert_ne!(done, usize::MAX, "item {i} did not run");
        for &j in graph.row(i) {
            let began = start[j as usize].load(Ordering::SeqCst);
            assert!(
                done < began,
                "item {j} started at {began}, before item {i} (which it executes after) \
                 finished at {done}"
            );
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| start[i].load(Ordering::SeqCst));
    order
}

/// A plan whose runs on several workers use them all: these tests are about how workers share
/// the schedule (`small_runs_run_on_the_calling_thread_alone` is about the other case).
fn plan(graph: Crs) -> WorkGraph {
    let p = WorkGraph::new(Arc::new(graph), None).unwrap();
    p.item_cost.never_alone();
    p
}

#[test]
fn a_graph_keeps_its_rows_and_entries() {
    let g = crs(&[0, 2, 3, 3], &[1, 2, 2]);
    assert_eq!(g.num_rows(), 3);
    assert_eq!(g.num_entries(), 3);
    assert_eq!(g.row(0), &[1, 2]);
    assert_eq!(g.row(1), &[2]);
    assert!(g.row(2).is_empty());
    assert_eq!(g.row_map(), &[0, 2, 3, 3]);
    assert_eq!(g.entries(), &[1, 2, 2]);
    let empty = Crs::new::<i64>(&[0], &[]).unwrap();
    assert_eq!((empty.num_rows(), empty.num_entries()), (0, 0));
    assert_eq!(
        Crs::new(&[0u32, 1, 1], &[1u32]).unwrap(),
        crs(&[0, 1, 1], &[1])
    );
}

#[test]
fn malformed_offsets_are_rejected_naming_the_row() {
    assert!(invalid(&[], &[]).contains("row_map is empty"));
    let m = invalid(&[1, 2], &[0, 0]);
    assert!(m.contains("row_map[0] = 1"), "{m}");
    let m = invalid(&[0, 2, 1, 3], &[1, 2, 0]);
    assert!(m.contains("row 1 ends before it starts"), "{m}");
    assert!(m.contains("row_map[1] = 2 > row_map[2] = 1"), "{m}");
    let m = invalid(&[0, 1, 2], &[1, 0, 1]);
    assert!(m.contains("row_map[2] = 2"), "{m}");
    assert!(m.contains("number of entries, 3"), "{m}");
    let m = invalid(&[0, -1, 0], &[]);
    assert!(m.contains("row_map[1] = -1 is negative"), "{m}");
}

#[test]
fn entries_outside_the_items_are_rejected_naming_entry_and_row() {
    let m = invalid(&[0, 1, 3], &[1, 0, 2]);
    assert!(m.contains("entries[2] = 2 (in row 1)"), "{m}");
    assert!(m.contains("items are 0..=1"), "{m}");
    let m = invalid(&[0, 1, 1], &[-4]);
    assert!(m.contains("entries[0] = -4 (in row 0)"), "{m}");
    let e = Crs::from_parts(vec![0, 0, 1], vec![7]).unwrap_err();
    assert!(e.message().contains("entries[0] = 7 (in row 1)"), "{e}");
    let e = Crs::from_parts(vec![0, 2], vec![0]).unwrap_err();
    assert!(e.message().contains("row_map[1] = 2"), "{e}");
}

#[test]
fn transpose_reverses_every_edge() {
    // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 (a diamond).
    let g = from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    let t = g.transpose();
    assert_eq!(t.row_map(), &[0, 0, 1, 2, 4]);
    assert_eq!(t.entries(), &[0, 0, 1, 2]);
    assert_eq!(
        Crs::new::<i64>(&[0], &[]).unwrap().transpose().num_rows(),
        0
    );
}

#[test]
fn transpose_of_the_transpose_is_the_original() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for n in [1usize, 2, 10, 1000] {
        // Rows with sorted entries (duplicates allowed), any direction, cycles allowed.
        let mut edges = Vec::new();
        for i in 0..n {
            let mut row: Vec<usize> = (0..next() % 6)
                .map(|_| (next() % n as u64) as usize)
                .collect();
            row.sort_unstable();
            edges.extend(row.into_iter().map(|j| (i, j)));
        }
        let g = from_edges(n, &edges);
        assert_eq!(g.transpose().transpose(), g, "n = {n}");
    }
}

#[test]
fn self_dependence_is_a_cycle_of_length_one() {
    let g = from_edges(3, &[(0, 1), (1, 1)]);
    let e = WorkGraph::new(Arc::new(g), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cycle);
    assert!(e.message().contains("item 1 executes after itself"), "{e}");
    assert!(e.message().contains("entries[1] of row 1"), "{e}");
}

#[test]
fn a_cycle_is_reported_with_an_item_on_it_and_its_length() {
    // 0 -> 1 -> 2 -> 3 -> 1 is a cycle of 3 (1, 2, 3); 4 waits behind it.
    let g = from_edges(5, &[(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]);
    let e = WorkGraph::new(Arc::new(g), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cycle);
    let m = e.message();
    assert!(m.contains("cycle of length 3"), "{m}");
    let listed = m.split(": ").nth(1).unwrap().split(" (").next().unwrap();
    let items: Vec<u32> = listed.split(" -> ").map(|s| s.parse().unwrap()).collect();
    assert_eq!(items.len(), 4, "{m}");
    assert_eq!(items[0], items[3]);
    assert!(
        m.starts_with(&format!("item {} is on a cycle", items[0])),
        "{m}"
    );
    let mut on_cycle = items[..3].to_vec();
    on_cycle.sort_unstable();
    assert_eq!(on_cycle, [1, 2, 3]);
    // Each listed step is an edge of the graph.
    let g = from_edges(5, &[(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]);
    for w in items.windows(2) {
        assert!(g.row(w[0] as usize).contains(&w[1]), "{m}");
    }
}

#[test]
fn a_long_cycle_is_listed_in_part() {
    let n = 100;
    let edges: Vec<_> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    let e = WorkGraph::new(Arc::new(from_edges(n, &edges)), None).unwrap_err();
    assert!(e.message().contains("cycle of length 100"), "{e}");
    assert!(e.message().contains("(88 more)"), "{e}");
}

#[test]
fn priorities_must_cover_every_item() {
    let g = Arc::new(from_edges(3, &[(0, 1)]));
    let e = WorkGraph::new(g, Some(&[Priority::High])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e
        .message()
        .contains("1 priorities given for a graph of 3 items"));
}

#[test]
fn an_empty_graph_runs_nothing() {
    let p = plan(Crs::new::<i64>(&[0], &[]).unwrap());
    for space in spaces() {
        p.run(&space, |i| panic!("item {i} of an empty graph ran"))
            .unwrap();
    }
}

#[test]
fn items_without_dependences_all_run() {
    let p = plan(from_edges(1000, &[]));
    for space in spaces() {
        run_checked(&p, &space);
    }
}

#[test]
fn a_chain_runs_in_order() {
    let n = 500;
    let edges: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
    let p = plan(from_edges(n, &edges));
    for space in spaces() {
        assert_eq!(run_checked(&p, &space), (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn a_diamond_runs_its_top_first_and_its_bottom_last() {
    let p = plan(from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]));
    for space in spaces() {
        for _ in 0..200 {
            let order = run_checked(&p, &space);
            assert_eq!((order[0], order[3]), (0, 3));
        }
    }
}

#[test]
fn a_star_releases_every_point_after_its_center() {
    // Out-star: 0 before all; in-star: all before the last.
    let n = 2000;
    let out: Vec<_> = (1..n).map(|j| (0, j)).collect();
    let into: Vec<_> = (0..n - 1).map(|i| (i, n - 1)).collect();
    for edges in [out, into] {
        let p = plan(from_edges(n, &edges));
        for space in spaces() {
            run_checked(&p, &space);
        }
    }
}

#[test]
fn a_plan_runs_a_thousand_times() {
    // A binary reduction tree: leaves 7..15, each inner item after its two children. On three
    // workers, so the one-byte run numbers of the completion flags wrap around three times.
    let edges: Vec<_> = (1..15).map(|i| (i, (i - 1) / 2)).collect();
    let p = plan(from_edges(15, &edges));
    let space = threads(3);
    let runs = AtomicUsize::new(0);
    for _ in 0..1000 {
        let order = run_checked(&p, &space);
        assert_eq!(order[14], 0);
        runs.fetch_add(1, Ordering::Relaxed);
    }
    assert_eq!(runs.load(Ordering::Relaxed), 1000);
}

/// Fig. 3.6 of 000: naive Fibonacci as a work graph. Item 0 computes fib(n); every item whose
/// input is >= 2 executes after the two items computing its input - 1 and input - 2.
#[test]
fn fibonacci_of_000_figure_3_6() {
    let n = 20u64;
    let mut inputs = vec![(n, usize::MAX)];
    let mut k = 0;
    while k < inputs.len() {
        let (input, _) = inputs[k];
        if input >= 2 {
            inputs.push((input - 1, k));
            inputs.push((input - 2, k));
        }
        k += 1;
    }
    // Row i: the parent of item i executes after it (the figure's m_graph).
    let row_map: Vec<u32> = std::iter::once(0).chain(0..inputs.len() as u32).collect();
    let entries: Vec<u32> = inputs[1..].iter().map(|&(_, p)| p as u32).collect();
    let graph = Crs::from_parts(row_map, entries).unwrap();
    let depend = graph.transpose();
    let p = WorkGraph::new(Arc::new(graph), None).unwrap();
    let inputs: Vec<usize> = inputs.iter().map(|&(input, _)| input as usize).collect();
    for space in spaces() {
        assert_eq!(fibonacci_by_plan(&p, &depend, &inputs, &space), 6765);
    }
}

/// Runs a Fibonacci plan whose item i computes F(inputs[i]) as the sum of the two items it
/// executes after (`depend`, the transposed graph); returns item 0's value.
fn fibonacci_by_plan(p: &WorkGraph, depend: &Crs, inputs: &[usize], space: &Space) -> usize {
    let values: Vec<AtomicUsize> = inputs
        .iter()
        .map(|&input| AtomicUsize::new(if input < 2 { input } else { 0 }))
        .collect();
    p.run(space, |i| {
        if let [a, b] = *depend.row(i) {
            let sum = values[a as usize].load(Ordering::Relaxed)
                + values[b as usize].load(Ordering::Relaxed);
            values[i].store(sum, Ordering::Relaxed);
        }
    })
    .unwrap();
    values[0].load(Ordering::Relaxed)
}

#[test]
fn higher_priorities_run_first_on_one_worker() {
    use Priority::{High, Low, Regular};
    // Roots 0 (Low), 1 (Regular), 2 (High); 2 releases 3 (Low) and 4 (High); 1 releases 5
    // (High). One worker always takes the highest ready level.
    let g = from_edges(6, &[(2, 3), (2, 4), (1, 5)]);
    let levels = [Low, Regular, High, Low, High, High];
    let p = WorkGraph::new(Arc::new(g), Some(&levels)).unwrap();
    for space in [Space::serial(), threads(1)] {
        let order = Mutex::new(Vec::new());
        p.run(&space, |i| order.lock().unwrap().push(i)).unwrap();
        let order = order.into_inner().unwrap();
        // 2 (High root), 4 (High, released by 2), 1 (Regular), 5 (High, released by 1),
        // then the Low items 0 and 3 in either order.
        assert_eq!(order[..4], [2, 4, 1, 5], "{order:?}");
        let mut low = order[4..].to_vec();
        low.sort_unstable();
        assert_eq!(low, [0, 3]);
    }
}

#[test]
fn priorities_keep_dependences_on_many_workers() {
    let n = 3000;
    let edges: Vec<_> = (0..n)
        .flat_map(|i| [(i, (i * 7 + 1) % n), (i, (i * 13 + 5) % n)])
        .filter(|&(i, j)| i < j)
        .collect();
    let levels: Vec<Priority> = (0..n).map(|i| Priority::ALL[i % 3]).collect();
    let p = WorkGraph::new(Arc::new(from_edges(n, &edges)), Some(&levels)).unwrap();
    for space in spaces() {
        run_checked(&p, &space);
    }
}

#[test]
fn a_plan_runs_once_at_a_time() {
    let p = plan(from_edges(2, &[(0, 1)]));
    let space = Space::serial();
    let nested = Mutex::new(None);
    p.run(&space, |_| {
        *nested.lock().unwrap() = Some(p.run(&space, |_| {}).unwrap_err().kind());
    })
    .unwrap();
    assert_eq!(nested.into_inner().unwrap(), Some(ErrorKind::Busy));
}

#[test]
fn a_panicking_work_function_stops_the_run_and_the_plan_stays_usable() {
    let edges: Vec<_> = (1..200).map(|i| (i - 1, i)).collect();
    let p = plan(from_edges(200, &edges));
    for space in spaces() {
        let ran = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p.run(&space, |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                assert_ne!(i, 50, "deliberate failure");
            })
        }));
        assert!(result.is_err());
        // Items after 50 wait on it and never ran.
        assert_eq!(ran.load(Ordering::Relaxed), 51);
        assert_eq!(run_checked(&p, &space).len(), 200);
    }
}

#[test]
fn dispatch_from_another_thread_is_refused_and_runs_nothing() {
    let p = Arc::new(plan(from_edges(3, &[(0, 1)])));
    let space = threads(2);
    let (p2, s2) = (Arc::clone(&p), space.clone());
    let e = std::thread::spawn(move || p2.run(&s2, |_| panic!("ran")).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::WrongThread);
    run_checked(&p, &space);
}

/// Positions of the items in a plan's order, checking that every item appears once.
fn positions(plan: &WorkGraph) -> Vec<usize> {
    let mut at = vec![usize::MAX; plan.num_items()];
    for (p, &item) in plan.order().iter().enumerate() {
        assert_eq!(at[item as usize], usize::MAX, "item {item} scheduled twice");
        at[item as usize] = p;
    }
    assert!(at.iter().all(|&p| p != usize::MAX), "an item is missing");
    at
}

#[test]
fn the_schedule_is_a_topological_order_with_or_without_priorities() {
    let n = 2000;
    let edges: Vec<_> = (0..n)
        .flat_map(|i| [(i, (i * 7 + 3) % n), (i, (i * 31 + 11) % n)])
        .filter(|&(i, j)| i < j)
        .collect();
    let graph = Arc::new(from_edges(n, &edges));
    let levels: Vec<Priority> = (0..n).map(|i| Priority::ALL[i * 5 % 3]).collect();
    for priorities in [None, Some(&levels[..])] {
        let plan = WorkGraph::new(Arc::clone(&graph), priorities).unwrap();
        let at = positions(&plan);
        for &(i, j) in &edges {
            assert!(at[i] < at[j], "item {j} is scheduled before item {i}");
        }
    }
}

#[test]
fn the_longest_chain_is_scheduled_first() {
    // Items 0..10 are independent; 10 -> 11 -> ... -> 19 is a chain of 10.
    let edges: Vec<_> = (10..19).map(|i| (i, i + 1)).collect();
    let plan = plan(from_edges(20, &edges));
    // Heights 10 down to 2 along the chain, then every item of height 1 in index order: the
    // independent items and the end of the chain.
    assert_eq!(plan.order()[..9], (10..19).collect::<Vec<u32>>()[..]);
    let last: Vec<u32> = (0..10).chain([19]).collect();
    assert_eq!(plan.order()[9..], last[..]);
}

/// The execute-after graph of naive fib(n) numbered breadth-first (000 Fig. 3.6): row i holds
/// the parent of item i.
fn fib_graph(n: u64) -> Crs {
    let mut inputs = vec![(n, 0u32)];
    let mut k = 0;
    while k < inputs.len() {
        if inputs[k].0 >= 2 {
            let input = inputs[k].0;
            inputs.push((input - 1, k as u32));
            inputs.push((input - 2, k as u32));
        }
        k += 1;
    }
    let row_map: Vec<u32> = std::iter::once(0).chain(0..inputs.len() as u32).collect();
    let entries: Vec<u32> = inputs[1..].iter().map(|&(_, p)| p).collect();
    Crs::from_parts(row_map, entries).unwrap()
}

/// An n x n wavefront: (i, j), item i n + j, executes after (i - 1, j) and (i, j - 1).
fn wavefront(n: usize) -> Crs {
    let edges: Vec<_> = (0..n * n)
        .flat_map(|k| {
            let (i, j) = (k / n, k % n);
            [
                (i + 1 < n).then(|| (k, k + n)),
                (j + 1 < n).then(|| (k, k + 1)),
            ]
        })
        .flatten()
        .collect();
    from_edges(n * n, &edges)
}

#[test]
fn narrow_heights_run_on_the_first_worker_and_wide_ones_are_shared() {
    let p = plan(fib_graph(16));
    let (order, starts) = (p.order(), &p.schedule.level_starts);
    let widest = starts
        .windows(2)
        .map(|h| (h[1] - h[0]) as usize)
        .max()
        .unwrap();
    let first_run = p.item_cost.split();
    assert_eq!(first_run, Split::for_item_cost(0), "no item measured yet");
    assert!(
        !first_run.narrow(widest, 4),
        "fib(16)'s widest height is shared by 4 workers"
    );
    // The last height, fib(16) alone, is narrow: worker 0's, the thread that calls `run`.
    assert_eq!(order[order.len() - 1], 0);
    assert!(first_run.narrow(1, 4));
    let space = threads(4);
    let caller = std::thread::current().id();
    for _ in 0..20 {
        let steals_before = p.steals.load(Ordering::Relaxed);
        let ran_by = run_recording_threads(&p, &space);
        // The thresholds the run used: they change between runs as the items are measured.
        let split = p.item_cost.split();
        let thread_at = |position: usize| ran_by[order[position] as usize];
        for h in starts.windows(2) {
            let height = h[0] as usize..h[1] as usize;
            if split.narrow(height.len(), 4) {
                for position in height {
                    assert_eq!(
                        thread_at(position),
                        caller,
                        "position {position} of a narrow height left worker 0"
                    );
                }
                continue;
            }
            // A wide height's slices: each wholly on one worker; unless a worker that was held
            // up had one of its slices run by another (`claims`), each on its own worker, the
            // first on the caller.
            let stolen = p.steals.load(Ordering::Relaxed) != steals_before;
            let mut slice_threads = Vec::new();
            for rank in 0..4 {
                let slice = worker::slice(height.clone(), rank, 4, split);
                if slice.is_empty() {
                    // A height of a few items shared because they were measured costly (a
                    // disturbed core): fewer slices than workers.
                    assert!(
                        height.len() < 4 * 4,
                        "every worker has a slice of {height:?}"
                    );
                    continue;
                }
                let thread = if rank == 0 && !stolen {
                    caller
                } else {
                    thread_at(slice.start)
                };
                for position in slice {
                    assert_eq!(thread_at(position), thread, "rank {rank}'s slice");
                }
                assert!(
                    stolen || !slice_threads.contains(&thread),
                    "two slices on one worker"
                );
                slice_threads.push(thread);
            }
        }
    }
}

/// A stretch of narrow heights whose items are not in index order across its heights: the
/// chain 0 -> 2 -> 1 and item 3 have the positions [0, 2, 1, 3], whose first and last items
/// are 3 apart, as if they were 0..=3 in order (within one height they would be).
#[test]
fn a_stretch_of_heights_out_of_index_order_keeps_its_order() {
    let p = plan(from_edges(4, &[(0, 2), (2, 1)]));
    assert_eq!(positions(&p), vec![0, 2, 1, 3]);
    for space in spaces() {
        for _ in 0..20 {
            run_checked(&p, &space);
        }
    }
}

/// Chains between wide layers: each chain is a run of narrow heights, which worker 0 runs as
/// one piece (unless its items are measured costly), and the wide layers around it are shared. Layers A, B, D of 256 items, chains
/// C1 and C2 of 100: all of A before C1, C1 in order, the end of C1 before all of B, then B,
/// C2 and D likewise; each item of B also after the item of A at the same index.
#[test]
fn chains_between_wide_layers_run_on_worker_zero_in_order() {
    const WIDE: usize = 256;
    const CHAIN: usize = 100;
    let (a, c1, b) = (0, WIDE, WIDE + CHAIN);
    let (c2, d) = (b + WIDE, b + WIDE + CHAIN);
    let n = d + WIDE;
    let mut edges = Vec::new();
    let chain = |edges: &mut Vec<(usize, usize)>, from: usize, chain: usize, to: usize| {
        edges.extend((0..WIDE).map(|i| (from + i, chain)));
        edges.extend((chain..chain + CHAIN - 1).map(|i| (i, i + 1)));
        edges.extend((0..WIDE).map(|i| (chain + CHAIN - 1, to + i)));
    };
    chain(&mut edges, a, c1, b);
    chain(&mut edges, b, c2, d);
    edges.extend((0..WIDE).map(|i| (a + i, b + i)));
    let p = plan(from_edges(n, &edges));
    let space = threads(4);
    let caller = std::thread::current().id();
    for _ in 0..50 {
        let steals_before = p.steals.load(Ordering::Relaxed);
        run_checked(&p, &space);
        let ran_by = run_recording_threads(&p, &space);
        let thread = |i: usize| ran_by[i];
        // The thresholds the run used: a chain's heights of one item are shared too if the
        // items were measured to cost microseconds (a loaded machine, a debug build).
        if p.item_cost.split().narrow(1, 4) {
            for i in (c1..c1 + CHAIN).chain(c2..c2 + CHAIN) {
                assert_eq!(thread(i), caller, "chain item {i} left worker 0");
            }
        }
        if p.steals.load(Ordering::Relaxed) == steals_before {
            for layer in [a, b, d] {
                assert!(
                    (layer..layer + WIDE).any(|i| thread(i) != caller),
                    "the layer at {layer} is shared"
                );
            }
        }
    }
}

/// A worker held up (a descheduled core; here a long item, the last of its slice) has its
/// later slices run by the others, which wait for them (`claims`); the run stays correct.
/// Four layers of 256 items on 2 workers: worker r's slice of each layer is items 128 r..128 r +
/// 128 (a rest of 64 would not give each worker a smallest piece). Item i of a layer runs after
/// item i of the layer before, and the first 127 also after item i + 128 (worker 1's slice), so
/// worker 0 needs worker 1's slices; item 255 of the first layer, which nothing of worker 0's
/// needs, waits until a slice has been stolen (at most 5 s).
#[test]
fn the_slices_of_a_worker_held_up_are_run_by_the_others() {
    const WIDTH: usize = 256;
    let mut edges = Vec::new();
    for layer in 1..4 {
        for i in 0..WIDTH {
            edges.push(((layer - 1) * WIDTH + i, layer * WIDTH + i));
            if i < 127 {
                edges.push(((layer - 1) * WIDTH + i + 128, layer * WIDTH + i));
            }
        }
    }
    let p = plan(from_edges(4 * WIDTH, &edges));
    let split = p.item_cost.split();
    assert_eq!(split, Split::for_item_cost(0), "no item measured yet");
    let first_layer = p.schedule.height(0);
    assert_eq!(first_layer, 0..WIDTH);
    assert_eq!(worker::slice(first_layer.clone(), 1, 2, split), 128..256);
    let held_up = 255;
    let space = threads(2);
    let clock = AtomicUsize::new(0);
    let start: Vec<AtomicUsize> = (0..4 * WIDTH)
        .map(|_| AtomicUsize::new(usize::MAX))
        .collect();
    let finish: Vec<AtomicUsize> = (0..4 * WIDTH)
        .map(|_| AtomicUsize::new(usize::MAX))
        .collect();
    p.run(&space, |i| {
        let t = clock.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            start[i].swap(t, Ordering::SeqCst),
            usize::MAX,
            "item {i} ran twice"
        );
        let waited = std::time::Instant::now();
        while i == held_up
            && p.steals.load(Ordering::Relaxed) == 0
            && waited.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        finish[i].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
    })
    .unwrap();
    for (i, finished) in finish.iter().enumerate() {
        let done = finished.load(Ordering::SeqCst);
        assert_ne!(done, usize::MAX, "item {i} did not run");
        for &j in p.graph().row(i) {
            assert!(
                done < start[j as usize].load(Ordering::SeqCst),
                "{j} before {i}"
            );
        }
    }
    assert!(
        p.steals.load(Ordering::Relaxed) > 0,
        "no slice of the held-up worker was run by the other"
    );
}

/// Items that now and then take 100 us hold up their workers, whose later slices the others
/// then run, several at once (`claims`): every run keeps its order.
#[test]
fn runs_whose_workers_are_held_up_keep_their_order() {
    for graph in [fib_graph(16), wavefront(64)] {
        let p = plan(graph);
        let n = p.num_items();
        for workers in [3, 8] {
            let space = threads(workers);
            for run in 0..10 {
                let clock = AtomicUsize::new(0);
                let start: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                let finish: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                p.run(&space, |i| {
                    start[i].store(clock.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    if (i * 7919 + run) % 331 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                    finish[i].store(clock.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                })
                .unwrap();
                for (i, done) in finish.iter().enumerate() {
                    let done = done.load(Ordering::SeqCst);
                    assert_ne!(done, 0, "item {i} did not run");
                    for &j in p.graph().row(i) {
                        let began = start[j as usize].load(Ordering::SeqCst);
                        assert!(done < began, "{j} started before {i} finished");
                    }
                }
            }
        }
    }
}

#[test]
fn slices_cover_three_quarters_of_a_height_or_all_of_a_small_one_up_to_a_cap_per_worker() {
    let split = Split::for_item_cost(0);
    let slices = |height: std::ops::Range<usize>, size: usize| {
        (0..=size)
            .map(|rank| worker::slice(height.clone(), rank, size, split))
            .collect::<Vec<_>>()
    };
    // 4000 items on 3 workers: 3000 in slices of 1000, the pieces from 4000.
    assert_eq!(
        slices(1000..5000, 3),
        [1000..2000, 2000..3000, 3000..4000, 4000..4000]
    );
    // A rest of 3 x 256 items gives each worker a smallest piece; one item fewer does not, and
    // then the slices cover the whole height.
    assert_eq!(split.min_piece, 256);
    assert_eq!(slices(0..3072, 3)[3], 2304..2304);
    assert_eq!(slices(0..3068, 3)[3], 3068..3068);
    assert_eq!(
        slices(1000..2000, 3),
        [1000..1333, 1333..1666, 1666..2000, 2000..2000]
    );
    // A million items on 4 workers: slices of 8192, the rest in pieces.
    let wide = slices(0..1_000_000, 4);
    assert!(wide[..4].iter().all(|s| s.len() == split.max_slice));
    assert_eq!(wide[4], 4 * split.max_slice..4 * split.max_slice);
    // Consecutive and disjoint whatever the width.
    for width in [1, 2, 3, 7, 64, 65] {
        let s = slices(10..10 + width, 4);
        assert!(s.windows(2).all(|w| w[0].end == w[1].start), "{s:?}");
        assert_eq!(s[0].start, 10);
    }
}

#[test]
fn a_run_shares_heights_more_finely_as_items_cost_more() {
    let default = Split::for_item_cost(0);
    assert_eq!((default.alone_below, default.min_piece), (usize::MAX, 256));
    // By the count alone: narrower than 32 items per worker.
    assert!(default.narrow(127, 4) && !default.narrow(128, 4));
    assert!(default.narrow(511, 16) && !default.narrow(512, 16));
    // 1/16 ns units: items of 3 and 8 ns keep the counts tuned for Fibonacci items.
    for cheap in [3, 8] {
        let split = Split::for_item_cost(cheap * 16);
        assert_eq!(split.min_piece, 256);
        assert!(split.narrow(511, 16) && !split.narrow(512, 16));
    }
    // Items of 64 ns: a height of 64 items (4 us) is shared, one of 63 is not; pieces of 32,
    // slices of at most 512 (32 us).
    let costly = Split::for_item_cost(64 * 16);
    assert_eq!((costly.alone_below, costly.min_piece), (64, 32));
    assert_eq!((default.max_slice, costly.max_slice), (8192, 512));
    assert!(!costly.narrow(64, 16) && costly.narrow(63, 16));
    // Time only ever adds sharing: 40 such items (2.6 us) on 2 workers stay worker 0's.
    assert!(costly.narrow(40, 2) && !costly.narrow(64, 2));
    let slow = Split::for_item_cost(u32::MAX);
    assert_eq!((slow.alone_below, slow.min_piece), (1, 1));
    assert!(!slow.narrow(1, 2));
}

#[test]
fn worker_zero_measures_the_items_and_the_next_run_uses_it() {
    let cost = ItemCost::default();
    let mut others = WorkerClock::new(1);
    others.time(64, || {
        std::thread::sleep(std::time::Duration::from_micros(640))
    });
    others.finish(&cost);
    cost.start_run();
    assert_eq!(
        cost.split(),
        Split::for_item_cost(0),
        "only worker 0 measures"
    );
    let mut clock = WorkerClock::new(0);
    clock.time(64, || {
        std::thread::sleep(std::time::Duration::from_micros(640))
    });
    clock.finish(&cost);
    assert_eq!(
        cost.split(),
        Split::for_item_cost(0),
        "a run keeps its thresholds"
    );
    cost.start_run();
    // At least 10 us per item: one item is worth sharing, and makes a piece.
    let split = cost.split();
    assert_eq!((split.alone_below, split.min_piece), (1, 1));

    // In runs: one height of 2048 items of about 2 us each on 2 workers. Worker 0 times one of
    // its chunks in the first run where it takes a piece; from the next run on, pieces are
    // smaller than the 256 items of cheap items.
    let p = plan(from_edges(2048, &[]));
    let space = threads(2);
    let spin = |_| {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_micros(2) {}
    };
    let measured = (0..50).any(|_| {
        p.run(&space, spin).unwrap();
        p.item_cost.start_run();
        p.item_cost.split().min_piece < 256
    });
    assert!(measured, "worker 0 timed none of its chunks in 50 runs");
}

/// A run that one worker ends within about 12 us runs on the calling thread alone: 200
/// independent items, one height that two workers would share, run wholly on the caller
/// while they are known to be cheap, and on both threads once they are known to be costly
/// (unless a worker held up had its slice taken, `claims`). Each run's own timing is folded
/// into the estimate too, so before each run the test folds in its figure several times: a
/// test thread preempted during a run must not decide the next.
#[test]
fn small_runs_run_on_the_calling_thread_alone() {
    let p = WorkGraph::new(Arc::new(from_edges(200, &[])), None).unwrap();
    let n = p.num_items();
    let space = threads(2);
    thread_local! {
        static CALLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    CALLER.with(|c| c.set(true));
    let on_caller: Vec<std::sync::atomic::AtomicBool> =
        (0..n).map(|_| Default::default()).collect();
    let run = || {
        p.run(&space, |i| {
            on_caller[i].store(CALLER.with(|c| c.get()), Ordering::Relaxed);
        })
        .unwrap();
        on_caller
            .iter()
            .filter(|c| c.load(Ordering::Relaxed))
            .count()
    };
    let assume = |ns_per_item: u64| {
        for _ in 0..32 {
            p.item_cost.record_alone(ns_per_item * n as u64, n);
        }
    };
    // Cheap items, measured by worker 0 (a chunk of 64 items that took no time to speak of)
    // and by runs alone (1 ns each): every run, whichever rule decides it, is alone.
    let mut clock = WorkerClock::new(0);
    clock.time(64, || {});
    clock.finish(&p.item_cost);
    let shared_runs = || p.shared_runs.load(Ordering::Relaxed);
    let shared_before = shared_runs();
    for k in 0..40 {
        assume(1);
        assert_eq!(run(), n, "run {k} left the calling thread");
    }
    assert_eq!(
        shared_runs(),
        shared_before,
        "a run of cheap items went to the workers"
    );
    // Costly items, 10 us each or more: the runs use the other worker again. (Which thread
    // runs the other worker's share is not the rule's to say: the calling thread runs it when
    // the worker has not started by the time the calling thread's own share is done.)
    let mut clock = WorkerClock::new(0);
    clock.time(64, || {
        std::thread::sleep(std::time::Duration::from_micros(640))
    });
    clock.finish(&p.item_cost);
    assume(100_000);
    run();
    assert_eq!(
        shared_runs(),
        shared_before + 1,
        "a run of costly items stayed on the calling thread"
    );
}

/// A plan whose heights are all narrow runs on the calling thread alone from its first run
/// (worker 0 would run every item anyway): a chain of 50 items on 4 workers writes no
/// completion flag, which a run on several workers would. Narrow heights of costly items
/// (20 independent items of 200 us on 2 workers) run alone once, and the measurement of that
/// run has them shared from the next run on, as a first run on several workers would.
#[test]
fn a_plan_whose_heights_are_all_narrow_runs_alone() {
    // Whether the plan's last run stored any completion flag: only runs on several workers do.
    let stored_flags = |p: &WorkGraph| {
        let epoch = p.epoch.load(Ordering::Relaxed);
        p.done.iter().any(|d| d.load(Ordering::Relaxed) == epoch)
    };
    let edges: Vec<(usize, usize)> = (1..50).map(|i| (i - 1, i)).collect();
    let chain = WorkGraph::new(Arc::new(from_edges(50, &edges)), None).unwrap();
    let space = threads(4);
    for run in 0..20 {
        run_checked(&chain, &space);
        assert!(!stored_flags(&chain), "run {run} went to several workers");
    }
    let costly = WorkGraph::new(Arc::new(from_edges(20, &[])), None).unwrap();
    let space = threads(2);
    let wait = |_| std::thread::sleep(std::time::Duration::from_micros(200));
    costly.run(&space, wait).unwrap();
    assert!(
        !stored_flags(&costly),
        "the first run went to several workers"
    );
    costly.run(&space, wait).unwrap();
    assert!(stored_flags(&costly), "the second run stayed alone");
}

/// Once a plan has both kinds of run measured, it goes alone when that is clearly the faster
/// (`ItemCost::run_alone`): a plan whose runs on 16 workers take 20 us goes alone when runs
/// alone take 13, even though that is above the limit for a run alone known by itself, and
/// not when they take 18; one disturbed run on the workers does not send it alone; every 32nd
/// run tries the slower kind while it takes less than twice the faster; runs on a space of
/// another size count as not measured.
#[test]
fn with_both_kinds_of_run_measured_a_plan_goes_alone_when_clearly_faster() {
    let items = 1000;
    let close = ItemCost::default();
    close.record_alone(18_000, items);
    close.record_shared(20_000, items, 16);
    assert!(
        !close.run_alone(items, 1, 16),
        "18 us alone against 20: within the margin"
    );
    let cost = ItemCost::default();
    cost.record_alone(13_000, items);
    assert!(!cost.run_alone(items, 1, 16), "13 us is above the limit");
    cost.record_shared(20_000, items, 16);
    assert!(cost.run_alone(items, 1, 16) && cost.run_alone(items, 31, 16));
    assert!(!cost.run_alone(items, 32, 16), "the retry on 16 workers");
    assert!(
        !cost.run_alone(items, 1, 8),
        "16 workers' runs say nothing of 8"
    );
    // A run on the workers a hundred times slower than usual (a thread lost its core) moves
    // their figure by 1/8 of at most twice it, from 20 to 22.5 us: against runs alone of 22 us
    // the plan stays on its workers (folded as runs alone are, to 35 us, it would go alone).
    let steady = ItemCost::default();
    steady.record_alone(22_000, items);
    steady.record_shared(20_000, items, 16);
    steady.record_shared(2_000_000, items, 16);
    assert!(
        !steady.run_alone(items, 1, 16),
        "one disturbed run sent the plan alone"
    );
    // Runs alone slow down (a costlier work function): the plan goes back to its workers, and
    // tries alone again only while that is within twice their time.
    for _ in 0..4 {
        cost.record_alone(30_000, items);
    }
    assert!(!cost.run_alone(items, 1, 16) && cost.run_alone(items, 32, 16));
    for _ in 0..8 {
        cost.record_alone(45_000, items);
    }
    assert!(!cost.run_alone(items, 1, 16) && !cost.run_alone(items, 32, 16));
    // A space of another size starts its figure over.
    cost.record_shared(90_000, items, 8);
    assert!(
        !cost.run_alone(items, 1, 16),
        "8 workers' runs say nothing of 16"
    );
    assert!(
        cost.run_alone(items, 1, 8),
        "45 us alone against 90 on 8 workers"
    );
}

/// What decides a run alone (`ItemCost::run_alone`): nothing before a measurement; worker 0's
/// measurement with a margin of four; then the runs alone, except in every 32nd run.
#[test]
fn a_run_goes_alone_by_the_cost_of_runs_alone_and_first_by_worker_zero_with_a_margin() {
    let cost = ItemCost::default();
    cost.start_run();
    assert!(
        !cost.run_alone(1, 1, 16),
        "nothing is known of the items yet"
    );
    // Worker 0 measured at least 10 us per item: 10 items take at least 100 us, more than four
    // times the limit of about 12 us.
    let mut clock = WorkerClock::new(0);
    clock.time(64, || {
        std::thread::sleep(std::time::Duration::from_micros(640))
    });
    clock.finish(&cost);
    cost.start_run();
    assert!(!cost.run_alone(10, 1, 16));
    // Runs alone of 1 us per item: 10 items (10 us) go alone, 13 do not.
    cost.record_alone(1_000, 1);
    assert!(cost.run_alone(10, 1, 16) && cost.run_alone(10, 31, 16));
    assert!(!cost.run_alone(13, 1, 16));
    // Every 32nd run decides by worker 0's measurement again, into which the run alone was
    // folded (at least 7.75 us per item): 10 items are more than four times the limit.
    assert!(!cost.run_alone(10, 32, 16) && !cost.run_alone(10, 64, 16));
    let costly = ItemCost::default();
    costly.record_alone(1_000_000, 1);
    assert!(!costly.run_alone(1, 1, 16), "1 ms for one item");
    // A run alone of 1 us per item, then one disturbed (1 ms per item): it counts for at most
    // four times the estimate, so 6 items (at most 10.5 us) still go alone; a slower work
    // function (three more such runs) shows.
    let disturbed = ItemCost::default();
    disturbed.record_alone(1_000, 1);
    disturbed.record_alone(1_000_000, 1);
    assert!(disturbed.run_alone(6, 1, 16));
    for _ in 0..3 {
        disturbed.record_alone(1_000_000, 1);
    }
    assert!(!disturbed.run_alone(6, 1, 16));
    // A lower figure counts for half: from 9.4 us per item, three runs of 1 us bring 2 items
    // (at most 2.05 us each, 4.1 in all) alone.
    assert!(!disturbed.run_alone(2, 1, 16));
    for _ in 0..3 {
        disturbed.record_alone(1_000, 1);
    }
    assert!(disturbed.run_alone(2, 1, 16));
}

/// Stress: a tree and a wavefront, each run many times on 2, 3 and 8 workers with the order
/// checker, so that workers wait for each other's items in many interleavings.
#[test]
fn trees_and_wavefronts_keep_their_order_on_many_workers() {
    for graph in [fib_graph(17), wavefront(96)] {
        let p = plan(graph);
        for workers in [2, 3, 8] {
            let space = threads(workers);
            for _ in 0..10 {
                run_checked(&p, &space);
            }
        }
    }
}

/// A plan of fib(27) (635 621 items): its per-position arrays of 2.4 MiB each are on huge pages
/// unless TASKDAG_HUGE_PAGES=0 (its completion flags, 0.6 MiB, are not), and it computes
/// fib(27) on every space, twice, so that the second run reads flags the first one wrote.
#[test]
fn a_large_plan_keeps_its_arrays_on_huge_pages_and_runs_correctly() {
    use crate::huge_pages::{wanted, HUGE_PAGE_BYTES};
    let graph = fib_graph(27);
    let depend = graph.transpose();
    let p = plan(graph);
    let s = &p.schedule;
    for array in [&s.order, &s.pred_offsets, &s.pred_positions, &s.latest_pred] {
        assert_eq!(array.on_huge_pages(), wanted(HUGE_PAGE_BYTES));
        if array.on_huge_pages() {
            assert_eq!(array.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
        }
    }
    assert!(!p.done.on_huge_pages());
    let inputs: Vec<usize> = {
        let mut inputs = vec![27];
        for k in 0.. {
            if k == inputs.len() {
                break;
            }
            if inputs[k] >= 2 {
                inputs.extend([inputs[k] - 1, inputs[k] - 2]);
            }
        }
        inputs
    };
    for space in spaces() {
        for _ in 0..2 {
            assert_eq!(fibonacci_by_plan(&p, &depend, &inputs, &space), 196_418);
        }
    }
}

/// Items in `layers` rows of `width`; item (l, k) executes after (l - 1, k) and
/// (l - 1, (k + 1) % width).
fn layered(layers: usize, width: usize) -> Crs {
    let mut edges = Vec::new();
    for l in 1..layers {
        for k in 0..width {
            edges.push(((l - 1) * width + k, l * width + k));
            edges.push(((l - 1) * width + (k + 1) % width, l * width + k));
        }
    }
    from_edges(layers * width, &edges)
}

/// The plan of a graph whose runs take a few milliseconds, on three pinned threads
/// (`run_delay::busy_cpu`), run until `asked` or 300 times beside a thread spinning on CPU
/// `busy(pinned)`. Returns the plan, the space, the CPUs and whether `asked` became true; `None`
/// where the test cannot be made here.
fn beside_a_busy_thread(
    busy: impl Fn(&[usize]) -> usize,
    asked: impl Fn(&WorkGraph) -> bool,
    only: impl Fn(&WorkGraph),
) -> Option<(WorkGraph, Space, Vec<usize>, bool)> {
    let (space, pinned) = crate::run_delay::busy_cpu::three_pinned_threads()?;
    let plan = plan(layered(20, 200));
    only(&plan);
    let spin_us = |i: usize| {
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(1) {
            std::hint::spin_loop();
        }
        std::hint::black_box(i);
    };
    let seen = crate::run_delay::busy_cpu::beside_a_thread_spinning_on(busy(&pinned), || {
        (0..300).any(|_| {
            plan.run(&space, spin_us).unwrap();
            asked(&plan)
        })
    });
    Some((plan, space, pinned, seen))
}

/// A worker whose CPU a busy thread shares loses time slices during runs; it notices (its
/// thread's wait for the CPU, `run_delay.rs`) and sits out the next runs, which the others
/// run exactly (`lost_cores.rs`).
#[test]
fn a_worker_that_loses_its_core_sits_out_the_next_runs() {
    let sits_out = |p: &WorkGraph| (1..3).any(|r| !p.lost_cores.takes_part(r));
    let only_workers = |p: &WorkGraph| p.lost_cores.only_workers.store(true, Ordering::Relaxed);
    let Some((plan, space, pinned, seen)) = beside_a_busy_thread(|c| c[2], sits_out, only_workers)
    else {
        return;
    };
    assert!(
        seen,
        "no worker sat out in 300 runs beside a thread spinning on CPU {} (workers on {pinned:?})",
        pinned[2]
    );
    assert!((1..3).any(|r| pinned[r] == pinned[2] && !plan.lost_cores.takes_part(r)));
    // Within the leave (100 ms): runs on the other workers keep every dependence.
    run_checked(&plan, &space);
    assert!(sits_out(&plan), "the leave ended within one short run");
}

/// The calling thread whose CPU a busy thread shares is displaced: the last worker sits out
/// for it and the calling thread runs on that worker's CPU (`lost_cores.rs`).
#[test]
fn a_calling_thread_that_loses_its_core_takes_a_workers() {
    let displaced = |p: &WorkGraph| p.lost_cores.displaced();
    let only_caller = |p: &WorkGraph| {
        p.lost_cores
            .only_calling_thread
            .store(true, Ordering::Relaxed)
    };
    let Some((plan, space, pinned, seen)) = beside_a_busy_thread(|c| c[0], displaced, only_caller)
    else {
        return;
    };
    assert!(
        seen,
        "the calling thread was not displaced in 300 runs beside a thread spinning on its CPU {}",
        pinned[0]
    );
    run_checked(&plan, &space);
    assert!(!plan.lost_cores.takes_part(2), "the stand-in took part");
}

/// A run starts its workers through the instance's job slot, and the calling thread runs, after
/// its own share, every rank whose worker has not started yet (`WorkGraph::run_pinned`): with
/// workers held off the slot (`Space::hold_members_off`), every item of a wide height runs on
/// the calling thread, once, in every run. (With mailboxes, the posted workers would run their
/// ranks.)
#[test]
fn the_calling_thread_runs_the_ranks_of_workers_that_have_not_started() {
    const N: usize = 400;
    let p = plan(from_edges(N, &[]));
    let space = Space::threads(&PoolOptions {
        threads: 4,
        ..Default::default()
    })
    .unwrap();
    let caller = std::thread::current().id();
    space.hold_members_off(true);
    for run in 0..20 {
        let ran_by = run_recording_threads(&p, &space);
        let on_caller = ran_by.iter().filter(|&&t| t == caller).count();
        assert_eq!(
            on_caller, N,
            "run {run}: items ran on workers held off the slot"
        );
    }
    space.hold_members_off(false);
    run_recording_threads(&p, &space);
}
