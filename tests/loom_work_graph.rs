//! Model checks of work-graph runs on two workers under every interleaving (up to a preemption
//! bound) and every weak-memory outcome loom explores: pieces of each height claimed from the
//! shared cursor (one priority level) and chunk claims of the whole schedule (several levels), the completion flags
//! (Release after F, Acquire before a successor), waiting, low-water marks, run numbers across
//! runs, and termination. A rank runs on its own thread, or, when that thread has not claimed it
//! by then, on the calling thread after rank 0, as `Space::run_blocks` runs a plan: rank 0 then
//! completes the run alone, running the other's slices as a thief.
//!
//! Run with:
//!     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_work_graph
//! The preemption bound defaults to 3; `LOOM_MAX_PREEMPTIONS` overrides it.
//!
//! Each item's output is a loom `UnsafeCell`: F(j) reads the cells of the items it executes
//! after and writes its own, so loom reports a data race if F(j) does not happen after each
//! F(i) it depends on, and the values check that each predecessor had run (and run once).

#![cfg(loom)]

use loom::cell::UnsafeCell;
use std::sync::Arc;
use taskdag::priority::Priority;
use taskdag::work_graph::{Crs, WorkGraph};

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(model);
}

/// One output cell per item: the number of times the item ran.
struct Outputs(Vec<UnsafeCell<u32>>);

// SAFETY: the cells are only accessed through loom, which checks that no two accesses race.
unsafe impl Sync for Outputs {}

fn graph(n: usize, edges: &[(u32, u32)]) -> Crs {
    let mut row_map = vec![0u32; n + 1];
    let mut entries = Vec::new();
    for i in 0..n {
        entries.extend(edges.iter().filter(|e| e.0 as usize == i).map(|e| e.1));
        row_map[i + 1] = entries.len() as u32;
    }
    Crs::from_parts(row_map, entries).unwrap()
}

/// Runs the graph of `edges` on two loom workers and checks order and completeness.
fn run_two_workers(n: usize, edges: &'static [(u32, u32)]) {
    run_two_workers_with(n, edges, None);
}

/// The same with priorities, which make the workers claim chunks from the shared cursor.
fn run_two_workers_with(
    n: usize,
    edges: &'static [(u32, u32)],
    priorities: Option<&'static [Priority]>,
) {
    check(move || {
        let graph = Arc::new(graph(n, edges));
        let predecessors = graph.transpose();
        let plan = Arc::new(WorkGraph::new(Arc::clone(&graph), priorities).unwrap());
        let outputs = Arc::new(Outputs((0..n).map(|_| UnsafeCell::new(0)).collect()));
        let out = Arc::clone(&outputs);
        plan.run_on_loom_threads(
            2,
            Arc::new(move |j: usize| {
                for &i in predecessors.row(j) {
                    let ran = out.0[i as usize].with(|p| unsafe { *p });
                    assert_eq!(ran, 1, "item {j} started before item {i} ran");
                }
                out.0[j].with_mut(|p| unsafe { *p += 1 });
            }),
        );
        for (i, cell) in outputs.0.iter().enumerate() {
            assert_eq!(cell.with(|p| unsafe { *p }), 1, "item {i}");
        }
    });
}

/// Two inputs, one per worker: item 2, alone in its height, runs on worker 0 after its own
/// input and the other worker's flag.
#[test]
fn a_join_runs_after_both_inputs() {
    run_two_workers(3, &[(0, 2), (1, 2)]);
}

/// A diamond: worker 0 runs the top, one middle item and the bottom; worker 1 the other middle
/// item, after the top's flag; the bottom waits for its flag in turn.
#[test]
fn a_diamond_runs_in_order_on_two_workers() {
    run_two_workers(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
}

/// Three items after one root (worker 0's): worker 1 gets two of them, which wait for it;
/// every item runs exactly once.
#[test]
fn a_fan_out_runs_each_item_once() {
    run_two_workers(4, &[(0, 1), (0, 2), (0, 3)]);
}

/// A chain: heights of one item run on worker 0 alone, and worker 1, with nothing to run,
/// finishes at once.
#[test]
fn a_chain_runs_on_one_worker() {
    run_two_workers(3, &[(0, 1), (1, 2)]);
}

/// A chain numbered out of order (0, then 2, then 1), which worker 0 runs as one stretch of
/// narrow heights whose items are not consecutive (`run_ready`'s general path), then two items
/// after its last, one per worker: worker 1's waits for the stretch's flag or mark.
#[test]
fn a_stretch_numbered_out_of_order_hands_its_results_on() {
    run_two_workers(5, &[(0, 2), (2, 1), (1, 3), (1, 4)]);
}

/// Three heights of two items, each item after both items of the height before: at every
/// height each worker waits for the other's item (one item per worker and height).
#[test]
fn workers_wait_for_each_other_at_every_height() {
    run_two_workers(
        6,
        &[
            (0, 2),
            (0, 3),
            (1, 2),
            (1, 3),
            (2, 4),
            (2, 5),
            (3, 4),
            (3, 5),
        ],
    );
}

/// Claimed chunks of two positions (priorities make the workers claim from the cursor; the
/// schedule is items 0, 1, 2, 3): item 2 waits for item 0, item 3 for nothing, so a worker
/// that claims 2 and 3 while 0 runs runs 3 first and comes back to 2.
#[test]
fn chunks_skip_items_that_are_not_ready() {
    const LEVELS: &[Priority] = &[
        Priority::High,
        Priority::High,
        Priority::Regular,
        Priority::Low,
    ];
    run_two_workers_with(4, &[(0, 2)], Some(LEVELS));
}

/// Six items in two heights: before its chunk of the second height a worker reads the
/// low-water marks, and may skip the flag of a predecessor below them only if it is complete.
#[test]
fn the_low_water_mark_only_covers_completed_items() {
    run_two_workers(6, &[(0, 4), (1, 5), (2, 4)]);
}

/// Pieces of two positions of each height, claimed by either worker: items 2 and 3 wait for 0
/// and 1, which may be on the other worker, and item 4 for nothing, so a worker may run 4
/// while 3 waits.
#[test]
fn pieces_run_ready_items_first_and_wait_for_the_others() {
    run_two_workers(5, &[(0, 2), (0, 3), (1, 2)]);
}

/// With priorities the workers claim chunks of two from the shared cursor: the diamond's
/// middle items may be claimed by either worker while the top is still running.
#[test]
fn claimed_chunks_keep_the_order() {
    const LEVELS: &[Priority] = &[
        Priority::High,
        Priority::Low,
        Priority::High,
        Priority::Regular,
    ];
    run_two_workers_with(4, &[(0, 1), (0, 2), (1, 3), (2, 3)], Some(LEVELS));
}

/// Low-water marks with claimed chunks: a worker's second claim reads the marks and may skip a
/// predecessor's flag only if it is complete.
#[test]
fn claimed_chunks_trust_only_complete_low_water() {
    const LEVELS: &[Priority] = &[
        Priority::High,
        Priority::High,
        Priority::Low,
        Priority::Low,
        Priority::Regular,
        Priority::Regular,
    ];
    run_two_workers_with(6, &[(0, 4), (1, 5), (2, 4)], Some(LEVELS));
}

/// The plan is reused: flags set in the first run must not count as done in the second, which
/// runs under a new run number.
#[test]
fn a_second_run_does_not_see_the_first_runs_flags() {
    check(|| {
        let graph = Arc::new(graph(3, &[(0, 2), (1, 2)]));
        let predecessors = graph.transpose();
        let plan = Arc::new(WorkGraph::new(graph, None).unwrap());
        let outputs = Arc::new(Outputs((0..3).map(|_| UnsafeCell::new(0)).collect()));
        for run in 1..=2 {
            let out = Arc::clone(&outputs);
            let before = predecessors.clone();
            plan.run_on_loom_threads(
                2,
                Arc::new(move |j: usize| {
                    for &i in before.row(j) {
                        let ran = out.0[i as usize].with(|p| unsafe { *p });
                        assert_eq!(ran, run, "item {j} started before item {i} ran again");
                    }
                    out.0[j].with_mut(|p| unsafe { *p += 1 });
                }),
            );
            for cell in &outputs.0 {
                assert_eq!(cell.with(|p| unsafe { *p }), run);
            }
        }
    });
}
