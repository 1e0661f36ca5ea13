//! Lanes: a small index each thread carries so that threads spread over the pool's hints,
//! superblock windows and usage counters instead of meeting on one cache line.
//!
//! A process-wide registry hands each thread a lane of its own at its first allocation and takes
//! it back when the thread exits. While every lane is taken, further threads share lanes; a shared
//! lane is marked so its usage counter is updated with read-modify-writes (see `usage.rs`).
//!
//! The registry uses `std` atomics even under `--cfg loom`: it lives in statics, which loom's
//! atomics cannot, and the loom models pass lanes explicitly instead.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Number of lanes. Under loom it is 2, so a model's pool stays small enough to explore.
pub const LANES: usize = if cfg!(loom) { 2 } else { 64 };

const ALL_LANES: u64 = if LANES == 64 {
    u64::MAX
} else {
    (1 << LANES) - 1
};

/// Bit `i` is set while lane `i` is not owned by a thread.
static FREE_LANES: AtomicU64 = AtomicU64::new(ALL_LANES);

/// Spreads the threads that find no free lane over the shared ones.
static OVERFLOW_THREADS: AtomicUsize = AtomicUsize::new(0);

// `Cell<u32>` has no destructor, so reading it is a plain thread-local load and stays possible
// while the thread's other locals are being destroyed.
thread_local! {
    static CURRENT: Cell<u32> = const { Cell::new(NO_LANE) };
    static RELEASE_ON_EXIT: ReleaseOnExit = const { ReleaseOnExit };
}

const NO_LANE: u32 = 0;
const HAS_LANE: u32 = 1;
const EXCLUSIVE: u32 = 2;
const INDEX_SHIFT: u32 = 2;

/// A thread's lane: its index in `[0, LANES)` and whether the thread owns it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    index: u32,
    exclusive: bool,
}

impl Lane {
    /// A lane chosen by the caller instead of the registry. Internal: for model checks and
    /// benchmarks that pin lanes. `exclusive` promises that no other thread uses this lane index
    /// with `exclusive` set at the same time; breaking it loses usage counts, never blocks.
    #[doc(hidden)]
    pub fn explicit(index: usize, exclusive: bool) -> Lane {
        assert!(index < LANES, "lane {index} is out of range [0, {LANES})");
        Lane {
            index: index as u32,
            exclusive,
        }
    }

    /// The lane index in `[0, LANES)`.
    #[inline]
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// Whether only the calling thread uses this lane.
    #[inline]
    pub fn is_exclusive(self) -> bool {
        self.exclusive
    }

    fn encode(self) -> u32 {
        (self.index << INDEX_SHIFT) | HAS_LANE | if self.exclusive { EXCLUSIVE } else { 0 }
    }

    fn decode(encoded: u32) -> Lane {
        Lane {
            index: encoded >> INDEX_SHIFT,
            exclusive: encoded & EXCLUSIVE != 0,
        }
    }
}

/// The calling thread's lane, assigned at its first call.
#[inline]
pub fn current() -> Lane {
    let encoded = CURRENT.with(Cell::get);
    if encoded != NO_LANE {
        Lane::decode(encoded)
    } else {
        assign_current()
    }
}

#[cold]
fn assign_current() -> Lane {
    // Registering the release first: a thread already tearing down its locals cannot register it
    // any more, and then shares a lane rather than leaking one.
    let can_release = RELEASE_ON_EXIT.try_with(|_| ()).is_ok();
    let lane = can_release
        .then(take_free_lane)
        .flatten()
        .unwrap_or_else(shared_lane);
    CURRENT.with(|current| current.set(lane.encode()));
    lane
}

fn take_free_lane() -> Option<Lane> {
    // Relaxed: only a first guess; the compare-exchange below validates it.
    let mut free = FREE_LANES.load(Ordering::Relaxed);
    while free != 0 {
        let index = free.trailing_zeros();
        // Acquire on success: the lane's previous owner released it with Release after its last
        // plain store to the lane's usage counters, which this thread continues from.
        // Relaxed on failure: the value is only the next guess.
        match FREE_LANES.compare_exchange_weak(
            free,
            free & !(1 << index),
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => {
                return Some(Lane {
                    index,
                    exclusive: true,
                })
            }
            Err(now) => free = now,
        }
    }
    None
}

fn shared_lane() -> Lane {
    // Relaxed: the counter only spreads threads over lanes; nothing is published through it.
    let n = OVERFLOW_THREADS.fetch_add(1, Ordering::Relaxed);
    Lane {
        index: (n % LANES) as u32,
        exclusive: false,
    }
}

struct ReleaseOnExit;

impl Drop for ReleaseOnExit {
    fn drop(&mut self) {
        let lane = Lane::decode(CURRENT.with(Cell::get));
        if lane.exclusive {
            // Anything this thread still allocates or frees while exiting goes through the
            // shared-lane path, because the lane is about to have a new owner.
            let shared = Lane {
                exclusive: false,
                ..lane
            };
            CURRENT.with(|current| current.set(shared.encode()));
            // Release: publishes this thread's last stores to the lane's counters to the next owner.
            FREE_LANES.fetch_or(1 << lane.index, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::{Arc, Barrier, Mutex};

    /// Serializes the tests that count free lanes, since one of them takes every lane.
    static LANE_COUNTING: Mutex<()> = Mutex::new(());

    /// Lanes of `threads` threads that are all alive at the same time.
    fn lanes_of_concurrent_threads(threads: usize) -> Vec<Lane> {
        let barrier = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let lane = current();
                    barrier.wait();
                    lane
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn a_thread_keeps_its_lane() {
        std::thread::spawn(|| {
            let first = current();
            assert!(first.index() < LANES);
            assert_eq!(current(), first);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn live_threads_own_distinct_lanes() {
        let lanes = lanes_of_concurrent_threads(8);
        let exclusive: Vec<_> = lanes.iter().filter(|l| l.is_exclusive()).collect();
        let distinct: HashSet<_> = exclusive.iter().map(|l| l.index()).collect();
        assert_eq!(
            distinct.len(),
            exclusive.len(),
            "two live threads own one lane: {lanes:?}"
        );
    }

    #[test]
    fn exiting_threads_return_their_lanes() {
        let _serial = LANE_COUNTING.lock().unwrap_or_else(|e| e.into_inner());
        // 10 x 8 acquisitions exceed the 64 lanes: if exits did not return lanes, later rounds
        // would find none free. Other tests running alongside hold far fewer than 56 lanes.
        for round in 0..10 {
            let lanes = lanes_of_concurrent_threads(8);
            assert!(
                lanes.iter().all(|l| l.is_exclusive()),
                "round {round}: a thread got a shared lane: {lanes:?}"
            );
        }
    }

    #[test]
    fn threads_beyond_the_lane_count_share_lanes() {
        let _serial = LANE_COUNTING.lock().unwrap_or_else(|e| e.into_inner());
        let lanes = lanes_of_concurrent_threads(LANES + 4);
        assert!(lanes.iter().all(|l| l.index() < LANES));
        let shared = lanes.iter().filter(|l| !l.is_exclusive()).count();
        assert!(
            shared >= 4,
            "{} threads but only {shared} shared lanes",
            LANES + 4
        );
    }

    #[test]
    fn lane_encoding_round_trips() {
        for index in 0..LANES {
            for exclusive in [false, true] {
                let lane = Lane::explicit(index, exclusive);
                assert_ne!(lane.encode(), NO_LANE);
                assert_eq!(Lane::decode(lane.encode()), lane);
            }
        }
    }
}
