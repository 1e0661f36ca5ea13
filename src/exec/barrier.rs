//! A reusable barrier for the members of a thread team: a central counter with a generation
//! number (sense reversal), polled with back-off.
//!
//! Correctness: a member reads `generation` before it arrives. The last of `size` arrivals
//! resets `count` and then increments `generation` (Release); the others wait until they read a
//! newer generation (Acquire), which orders the reset before any of their later arrivals, so a
//! fast member re-entering the barrier cannot be counted in the old phase. The AcqRel arrival
//! makes every member's writes before the barrier visible to every member after it.

use crate::cache_line::CachePadded;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct TeamBarrier {
    size: usize,
    count: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicUsize>,
}

/// Polls before each yield while waiting; teams are pinned one thread per core, so a short wait
/// is the common case, but an oversubscribed team must let the late member run.
const SPINS_PER_YIELD: u32 = 256;

impl TeamBarrier {
    pub fn new(size: usize) -> TeamBarrier {
        TeamBarrier {
            size: size.max(1),
            count: CachePadded(AtomicUsize::new(0)),
            generation: CachePadded(AtomicUsize::new(0)),
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Returns once all `size` members have called it.
    pub fn wait(&self) {
        if self.size == 1 {
            return;
        }
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.size {
            // Relaxed: published by the Release increment below.
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            spins += 1;
            if spins % SPINS_PER_YIELD == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}
