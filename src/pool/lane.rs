//! Lanes: a small index each thread carries so that threads spread over the pool's hints,
//! superblock windows and usage counters instead of meeting on one cache line.
//!
//! A process-wide registry hands each thread a lane of its own at its first allocation and takes
//! it back when the thread exits. While every lane is taken, further threads share lanes; a shared
//! lane is marked so its usage counter is updated with read-modify-writes (see `usage.rs`).
//!
//! Finding the calling thread's lane: the thread-local that records it costs a call to
//! `__tls_get_addr` per allocation and per release in a shared library (measured with callgrind:
//! 22 of the 330 instructions per alloc+free pair of bench/pool). So a thread that owns a lane
//! also records it in `LANE_CACHE`, a process-wide table indexed by a hash of the thread's id
//! (its thread pointer, one load), and `current` reads it there; the thread-local stays the
//! record, read only when the table has no entry for the thread.
//!
//! Why a table hit is the caller's own lane. An entry is 0 (empty) or `id | lane index` for an
//! id that is a multiple of `LANES` (thread pointers are 64-byte aligned on x86-64 Linux; other
//! ids are not cached), written by the thread with that id when it took the lane, with a
//! compare-exchange from 0, so no thread overwrites another's entry; the writer clears it in its
//! exit destructor before it returns the lane to the registry. A lookup hits only an entry whose
//! id part equals the caller's id (tested as "less than LANES below it" where ids are thread
//! pointers, which is the same there: `matching_lane`), which is never 0 (the thread pointer points at the thread's
//! control block), so never an empty entry. Live threads have distinct ids, so such an entry was
//! written by the caller, or by an exited thread that had the same id (a reused thread control
//! block); that thread cleared its entry before it ended, and a control block is reused only
//! after its thread ended, so the clear happens-before the caller started and the caller cannot
//! read the old entry. Hence every access may be Relaxed: the caller reads its own writes
//! (program order), and entries publish nothing else. (In a child process after `fork`, the
//! entries of the parent's other threads remain, and a child thread that reuses one of their
//! control blocks takes over that thread's lane; the registry still counts the lane taken and
//! no other live thread has that id, so the lane stays exclusive.)
//!
//! The registry uses `std` atomics even under `--cfg loom`: it lives in statics, which loom's
//! atomics cannot, and the loom models pass lanes explicitly instead.

use crate::thread_id;
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

/// Entries of `LANE_CACHE`: a power of two, 16 times the lanes, so that threads owning lanes
/// rarely meet in one entry (a thread that finds both of its entries taken is not cached).
const CACHE_ENTRIES: usize = 16 * LANES;

/// `thread id | lane index` of threads that own a lane, or 0; see the module comment.
static LANE_CACHE: [AtomicUsize; CACHE_ENTRIES] = [const { AtomicUsize::new(0) }; CACHE_ENTRIES];

/// The first of the two `LANE_CACHE` entries where thread `id` may be cached; the second is its
/// neighbour on the same line.
#[inline(always)]
fn cache_entry(id: usize) -> usize {
    // The top bits of the hash: the best mixed, and no mask needed.
    thread_id::spread(id) >> (usize::BITS - CACHE_ENTRIES.trailing_zeros())
}

/// The calling thread's lane, assigned at its first call.
#[inline]
pub fn current() -> Lane {
    cached().unwrap_or_else(current_uncached)
}

/// The calling thread's lane if it owns one and `LANE_CACHE` holds it: the common case, found
/// with no call (see the module comment).
#[inline(always)]
pub fn cached() -> Option<Lane> {
    let id = thread_id::current();
    // Relaxed: see the module comment.
    let entry = LANE_CACHE[cache_entry(id)].load(Ordering::Relaxed);
    matching_lane(entry, id).map(|index| Lane {
        index,
        exclusive: true,
    })
}

/// The lane index in `LANE_CACHE` entry `entry` if the entry is thread `id`'s.
#[inline(always)]
fn matching_lane(entry: usize, id: usize) -> Option<u32> {
    // Here an id is a thread pointer: the address of the thread's control block, which is larger
    // than LANES bytes and not shared by live threads. So an entry's id part, a multiple of
    // LANES, is less than LANES below `id` only when it is `id`, and never when it is 0: one xor
    // tests it and leaves the lane index (two instructions fewer per call than the mask).
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let index = entry ^ id;
        (index < LANES).then_some(index as u32)
    }
    // Elsewhere an id is a `pthread_t`, of which nothing is known but that it is unique.
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    {
        (entry & !(LANES - 1) == id).then_some((entry & (LANES - 1)) as u32)
    }
}

/// `current` for a thread not in the first of its cache entries.
#[cold]
#[inline(never)]
fn current_uncached() -> Lane {
    let id = thread_id::current();
    // Relaxed: see the module comment.
    let entry = LANE_CACHE[cache_entry(id) ^ 1].load(Ordering::Relaxed);
    if let Some(index) = matching_lane(entry, id) {
        return Lane {
            index,
            exclusive: true,
        };
    }
    let encoded = CURRENT.with(Cell::get);
    if encoded != NO_LANE {
        Lane::decode(encoded)
    } else {
        assign_current(id)
    }
}

fn assign_current(id: usize) -> Lane {
    // Registering the release first: a thread already tearing down its locals cannot register it
    // any more, and then shares a lane rather than leaking one.
    let can_release = RELEASE_ON_EXIT.try_with(|_| ()).is_ok();
    let lane = can_release
        .then(take_free_lane)
        .flatten()
        .unwrap_or_else(shared_lane);
    CURRENT.with(|current| current.set(lane.encode()));
    if lane.exclusive && id != 0 && id & (LANES - 1) == 0 {
        let first = cache_entry(id);
        // Relaxed: see the module comment; a failed exchange leaves the thread uncached.
        let _ = [first, first ^ 1].iter().any(|&e| {
            LANE_CACHE[e]
                .compare_exchange(0, id | lane.index(), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        });
    }
    lane
}

/// Clears the calling thread's `LANE_CACHE` entry, if it has one.
fn uncache(id: usize) {
    let first = cache_entry(id);
    for e in [first, first ^ 1] {
        // Relaxed: see the module comment. Only this thread writes its entry once set.
        if LANE_CACHE[e].load(Ordering::Relaxed) & !(LANES - 1) == id {
            LANE_CACHE[e].store(0, Ordering::Relaxed);
        }
    }
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

/// Runs `f` on each lane that no thread owns, holding the lane from the registry meanwhile, so
/// that `f` may use the lane's per-lane state as its owner would (draining the thread caches of
/// exited threads). A thread that asks for a lane meanwhile takes another, or shares one.
pub(crate) fn for_each_unowned_lane(mut f: impl FnMut(Lane)) {
    // Relaxed: only a first guess; the RMW below decides.
    let mut free = FREE_LANES.load(Ordering::Relaxed);
    while free != 0 {
        let index = free.trailing_zeros();
        free &= free - 1;
        let bit = 1 << index;
        // Acquire: as in `take_free_lane`, the lane's last owner's writes to its state.
        if FREE_LANES.fetch_and(!bit, Ordering::Acquire) & bit != 0 {
            f(Lane {
                index,
                exclusive: true,
            });
            // Release: as in `give_up_lane`, for the lane's next owner.
            FREE_LANES.fetch_or(bit, Ordering::Release);
        }
    }
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
        give_up_lane();
    }
}

/// Returns the calling thread's lane to the registry if it owns one; the thread shares that lane
/// index from then on.
fn give_up_lane() {
    let lane = Lane::decode(CURRENT.with(Cell::get));
    if lane.exclusive {
        // First out of the cache, so that `current` reads the thread-local below from now on.
        uncache(thread_id::current());
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
    fn an_owning_thread_is_cached_until_it_gives_its_lane_up() {
        std::thread::spawn(|| {
            let lane = current();
            assert!(lane.is_exclusive(), "{lane:?}");
            let id = thread_id::current();
            let first = cache_entry(id);
            let entries = || [first, first ^ 1].map(|e| LANE_CACHE[e].load(Ordering::Relaxed));
            // Thread pointers are 64-byte aligned on x86-64 Linux, so an owner is cached there
            // unless other threads hold both of its entries.
            if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
                let mine = id | lane.index();
                let taken = entries().iter().all(|&e| e != 0 && e != mine);
                assert!(entries().contains(&mine) || taken, "{lane:?}");
            }
            assert_eq!(current(), lane);
            // What the thread's exit does: afterwards nothing in the cache names this thread,
            // and it shares its former lane index.
            give_up_lane();
            assert!(
                entries().iter().all(|&e| e & !(LANES - 1) != id),
                "{:x?}",
                entries()
            );
            assert_eq!(cached(), None);
            assert_eq!(current(), Lane::explicit(lane.index(), false));
        })
        .join()
        .unwrap();
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
