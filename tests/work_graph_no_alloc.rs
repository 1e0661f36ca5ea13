//! A work-graph run allocates nothing (000 §2.4: "does not require dynamic allocation"): every
//! allocation happens when the graph and the plan are made. Counted by a global allocator over
//! all threads, so the pool's workers are included; the file has no test harness
//! (`harness = false` in Cargo.toml) so that no harness thread allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use taskdag::exec::{PoolOptions, Space};
use taskdag::priority::Priority;
use taskdag::work_graph::{Crs, WorkGraph};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A binary reduction tree of `n` items: item i executes after its children 2i + 1 and 2i + 2.
fn tree(n: u32) -> Arc<Crs> {
    let row_map: Vec<u32> = std::iter::once(0).chain(0..n).collect();
    let entries: Vec<u32> = (1..n).map(|i| (i - 1) / 2).collect();
    Arc::new(Crs::from_parts(row_map, entries).unwrap())
}

fn main() {
    // A tree of 4095 items with and without mixed priorities, and one of 127 items whose runs
    // on several workers go on the calling thread alone once its items are measured cheap.
    let n = 4095u32;
    let graph = tree(n);
    let small = tree(127);
    let levels: Vec<Priority> = (0..n as usize).map(|i| Priority::ALL[i % 3]).collect();
    let sum = AtomicU64::new(0);
    let work = |i: usize| {
        sum.fetch_add(i as u64, Ordering::Relaxed);
    };
    // Spaces made, and their threads started, before anything is counted: a thread sets up its
    // own state when it starts, which is not the run's doing.
    let spaces = [
        Space::serial(),
        Space::threads(&PoolOptions {
            threads: 3,
            ..Default::default()
        })
        .unwrap(),
    ];
    for space in &spaces {
        space.run_on_all(&|_| {}).unwrap();
    }
    let plans = [
        WorkGraph::new(Arc::clone(&graph), None).unwrap(),
        WorkGraph::new(Arc::clone(&graph), Some(&levels[..])).unwrap(),
        WorkGraph::new(Arc::clone(&small), None).unwrap(),
    ];
    for plan in &plans {
        for space in &spaces {
            // The first dispatch may set up per-thread state of the pool's threads.
            plan.run(space, work).unwrap();
            let before = ALLOCATIONS.load(Ordering::SeqCst);
            for _ in 0..100 {
                plan.run(space, work).unwrap();
            }
            let allocated = ALLOCATIONS.load(Ordering::SeqCst) - before;
            assert_eq!(
                allocated, 0,
                "100 runs on {space:?} allocated {allocated} times"
            );
        }
    }
    let triangle = |n: u64| n * (n - 1) / 2;
    assert_eq!(
        sum.load(Ordering::Relaxed),
        2 * 101 * (2 * triangle(n as u64) + triangle(127))
    );
    println!("work_graph_no_alloc: 600 runs allocated nothing");
}
