//! The host threads that large copies and fills run on: the runtime's Threads space when the
//! caller is its control thread (the usual case: the thread that called td_initialize), else
//! scoped threads over the CPUs the process may use, so a copy from any other thread is still
//! parallel. This is the views' only parallel loop.

use crate::exec::{self, Space};
use crate::parallel::{parallel_for, RangePolicy};
use crate::runtime;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Work below this many bytes runs on the calling thread: starting threads costs more.
const PARALLEL_MIN_BYTES: usize = 4 << 20;

/// Blocks a thread claims at a time, per thread: enough claims to even out blocks of uneven
/// cost, few enough that the shared counter is not contended.
const CLAIMS_PER_THREAD: usize = 16;

/// The runtime's Threads space, when the calling thread may dispatch to it now.
fn runtime_space() -> Option<Space> {
    if exec::is_in_parallel() {
        return None;
    }
    runtime::threads_space()
        .ok()
        .filter(|s| s.is_control_thread() && !s.is_busy())
}

/// The threads a parallel loop uses: the runtime's Threads space, or those the process may run
/// on (its CPU affinity).
pub(crate) fn thread_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    runtime_space().map_or_else(
        || *COUNT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        |s| s.concurrency(),
    )
}

/// Runs `body(block)` once for every block in `0..blocks`, on up to `thread_count()` threads
/// (the caller's among them) when the work moves at least `PARALLEL_MIN_BYTES`, else serially.
/// Returns when every block is done; their writes are visible to the caller.
pub(crate) fn for_each_block(blocks: usize, bytes: usize, body: &(dyn Fn(usize) + Sync)) {
    let threads = if bytes < PARALLEL_MIN_BYTES {
        1
    } else {
        thread_count().min(blocks)
    };
    if threads <= 1 {
        (0..blocks).for_each(body);
        return;
    }
    let chunk = blocks.div_ceil(threads * CLAIMS_PER_THREAD);
    if let Some(space) = runtime_space() {
        let policy = RangePolicy {
            chunk: chunk as u64,
            ..RangePolicy::new(0, blocks as i64)
        };
        // Dynamic chunks; the dispatch returns when every chunk is done. It fails only if
        // another thread took the space in between, in which case the scoped threads below
        // do the work.
        let ran = parallel_for(&space, &policy, &|b, e| {
            (b as usize..e as usize).for_each(body)
        });
        if ran.is_ok() {
            return;
        }
    }
    let next = AtomicUsize::new(0);
    let worker = || loop {
        // Relaxed: the counter only hands out disjoint ranges of blocks (each fetch_add takes
        // its own range in the counter's modification order); it publishes no data. The
        // blocks' writes reach the caller through the joins at the end of the scope.
        let start = next.fetch_add(chunk, Ordering::Relaxed);
        if start >= blocks {
            break;
        }
        (start..blocks.min(start + chunk)).for_each(body);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(worker);
        }
        worker();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU8;

    #[test]
    fn every_block_runs_exactly_once_serially_and_in_parallel() {
        for (blocks, bytes) in [
            (0, 0),
            (1, 0),
            (1000, 0),
            (1000, usize::MAX),
            (3, usize::MAX),
        ] {
            let runs: Vec<AtomicU8> = (0..blocks).map(|_| AtomicU8::new(0)).collect();
            for_each_block(blocks, bytes, &|b| {
                runs[b].fetch_add(1, Ordering::Relaxed);
            });
            assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
        }
    }
}
