//! Statistics of a scheduler: what it spawned, ran, respawned and created, how many entities are
//! alive and the most that were, steals, and the pool's high-water mark.
//!
//! Workers count in plain per-worker counters during a wait and add them to the scheduler's
//! totals when the wait ends, or earlier while they idle (`Worker::hand_over_some`);
//! host-side operations add to the totals directly. The totals are
//! therefore exact whenever no wait runs, which is when they can be queried.
//!
//! Live entities (tasks and when_alls whose block is allocated) are counted the same way, except
//! that the peak needs the running total: with one worker the worker keeps the total, as its
//! distance below the peak (`Rooms`), and the peak is exact; with more, each worker adds its changes once they reach
//! `ALIVE_FLUSH` in magnitude, so the peak is within `ALIVE_FLUSH` per worker of the true one.
//! The bytes of their blocks are counted the same way. (Blocks in the workers' caches are not
//! counted here; the pool counts them as allocated.)

use super::scheduler::Shared;
use std::sync::atomic::{AtomicU64, Ordering};

/// A worker adds its count of created minus released entities to the shared total when the count
/// reaches this magnitude (with more than one worker). Each addition is an atomic operation on a
/// line all workers share; at a few nanoseconds per task and 16 workers, a threshold of 32 would
/// make that line the bottleneck. A power of two (`AliveDelta`).
pub(crate) const ALIVE_FLUSH: i64 = 256;

/// How far `ALIVE_FLUSH` is shifted to reach an `i32`'s overflow.
const ALIVE_SHIFT: u32 = 31 - ALIVE_FLUSH.ilog2();
const _: () =
    assert!(ALIVE_FLUSH > 0 && ALIVE_FLUSH == 1 << ALIVE_FLUSH.ilog2() && ALIVE_SHIFT < 31);

/// A worker's count of created minus released entities not yet added to the shared total
/// (with more than one worker), scaled so that reaching `ALIVE_FLUSH` in magnitude overflows an
/// `i32`: a count is an addition to memory and a jump on overflow, where a compare with the
/// threshold took a load, the addition, a store, the compare and the jump (callgrind, F(22),
/// two workers: td_task_spawn 192 -> 189, td_future_release 56 -> 52 instructions per node).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct AliveDelta(i32);

impl AliveDelta {
    /// Counts one entity created (`sign` 1) or released (-1). When the count reaches
    /// `ALIVE_FLUSH` in magnitude (256 or -257), it returns the count before this one, for the
    /// caller to add to the total, and keeps only this one.
    #[inline(always)]
    pub(crate) fn add(&mut self, sign: i64) -> Option<AliveDelta> {
        let step = (sign as i32) << ALIVE_SHIFT;
        let (after, overflow) = self.0.overflowing_add(step);
        self.0 = after;
        if overflow {
            self.0 = step;
            // The count before was at its limit on the side of `sign`: a constant, where the
            // value kept the sum from being added to memory in place.
            let before = if sign > 0 {
                ALIVE_FLUSH - 1
            } else {
                -ALIVE_FLUSH
            };
            return Some(AliveDelta((before as i32) << ALIVE_SHIFT));
        }
        None
    }

    /// The count.
    pub(crate) fn count(self) -> i64 {
        (self.0 >> ALIVE_SHIFT) as i64
    }
}

/// With one worker (`Access::Exclusive`), the live counts during a wait as their distance below
/// the peaks: `peak_alive - alive` and `peak_bytes - alive_bytes` (the worker's `alive_room` and
/// `bytes_room`). An allocation lowers a room,
/// and when one goes below zero the peak rises by as much and the room is zero again
/// (`Shared::raise_peaks`); a release raises it. Only the worker touches the counts meanwhile
/// (other threads get `Busy`), so they are written back exactly when the wait ends.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Rooms {
    pub alive: i64,
    pub bytes: i64,
}

impl Shared {
    /// The rooms at the start of a wait with one worker.
    pub(crate) fn begin_rooms(&self) -> Rooms {
        // Relaxed: no other thread uses the counts now (no wait runs, the caller starts one).
        let alive = self.alive.load(Ordering::Relaxed);
        let bytes = self.alive_bytes.load(Ordering::Relaxed);
        // A peak is at least its count; `max` keeps the rooms non-negative regardless.
        let peak_alive = self
            .peak_alive
            .fetch_max(alive, Ordering::Relaxed)
            .max(alive);
        let peak_bytes = self
            .peak_bytes
            .fetch_max(bytes, Ordering::Relaxed)
            .max(bytes);
        Rooms {
            alive: peak_alive - alive,
            bytes: peak_bytes - bytes,
        }
    }

    /// Raises the peaks by the rooms' deficits (see `Rooms`).
    #[cold]
    #[inline(never)]
    pub(crate) fn raise_peaks(&self, alive_room: &mut i64, bytes_room: &mut i64) {
        // Relaxed: only the worker of the wait touches the peaks now.
        if *alive_room < 0 {
            self.peak_alive.fetch_add(-*alive_room, Ordering::Relaxed);
            *alive_room = 0;
        }
        if *bytes_room < 0 {
            self.peak_bytes.fetch_add(-*bytes_room, Ordering::Relaxed);
            *bytes_room = 0;
        }
    }

    /// `flush_alive` of a worker's delta and of its bytes' delta, which it takes. Out of line
    /// and given the bytes' delta by reference, so that the count's common path adds to it in
    /// memory, where reading it here after the addition kept the sum in a register for a store
    /// of its own (callgrind, F(22), two workers: td_future_release 52 -> 51, run_ahead_for
    /// 214.3 -> 212.8 instructions per node).
    #[cold]
    #[inline(never)]
    pub(crate) fn flush_alive_taking(&self, delta: AliveDelta, bytes_delta: &mut i64) {
        self.flush_alive(delta, std::mem::take(bytes_delta));
    }

    /// Writes the live counts back from the rooms when the wait ends.
    pub(crate) fn end_rooms(&self, rooms: Rooms) {
        // Relaxed: the end of the wait orders these writes before any later reader.
        let alive = self.peak_alive.load(Ordering::Relaxed) - rooms.alive;
        self.alive.store(alive, Ordering::Relaxed);
        let bytes = self.peak_bytes.load(Ordering::Relaxed) - rooms.bytes;
        self.alive_bytes.store(bytes, Ordering::Relaxed);
    }
}

/// A scheduler's statistics (`Scheduler::statistics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedulerStatistics {
    /// Tasks spawned (from the host and from tasks).
    pub tasks_spawned: u64,
    /// Runs of task functions; a respawned task runs again, a team task counts once per run.
    pub task_executions: u64,
    /// Respawn requests honoured.
    pub tasks_respawned: u64,
    /// Tasks that completed (ran without asking to respawn).
    pub tasks_completed: u64,
    /// when_all futures created (including the internal ones that split a large when_all).
    pub when_alls_created: u64,
    /// Spawns and when_alls refused because the pool was exhausted.
    pub allocation_failures: u64,
    /// Tasks a worker received from another worker (handed over on request).
    pub steals: u64,
    /// Tasks and when_alls whose memory is allocated now (held by futures or not complete).
    pub alive: u64,
    /// The most tasks and when_alls alive at once (see the module comment for its accuracy).
    pub peak_alive: u64,
    /// The most bytes of pool blocks their tasks and when_alls held at once (same accuracy).
    pub peak_bytes: u64,
    /// The pool's high-water mark in bytes (all users of the pool; see the pool's statistics).
    pub pool_high_water_bytes: u64,
    /// Waits that ran.
    pub waits: u64,
    /// Workers left out of waits, summed over the waits: a worker late to leave earlier waits,
    /// or that lost its CPU to another thread during them, sits out the next ones for a while
    /// (`laggards.rs`, docs/tasks.md "Threads").
    pub workers_sat_out: u64,
}

/// A worker's counts during a wait. Tasks complete only on workers, at the end of a run that did
/// not respawn, so a worker's completed tasks are `executions - respawned` (not counted apart).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counters {
    pub spawned: u64,
    pub executions: u64,
    pub respawned: u64,
    pub when_alls: u64,
    pub when_alls_completed: u64,
    pub allocation_failures: u64,
    pub steals: u64,
}

/// The scheduler's totals.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub spawned: AtomicU64,
    pub executions: AtomicU64,
    pub respawned: AtomicU64,
    pub tasks_completed: AtomicU64,
    pub when_alls: AtomicU64,
    pub when_alls_completed: AtomicU64,
    pub allocation_failures: AtomicU64,
    pub steals: AtomicU64,
    pub waits: AtomicU64,
    pub workers_sat_out: AtomicU64,
}

impl Totals {
    /// Adds a worker's counts. Relaxed: read only after the wait, ordered by its end.
    pub(crate) fn add(&self, c: &Counters) {
        let pairs = [
            (&self.spawned, c.spawned),
            (&self.executions, c.executions),
            (&self.respawned, c.respawned),
            (&self.tasks_completed, c.executions - c.respawned),
            (&self.when_alls, c.when_alls),
            (&self.when_alls_completed, c.when_alls_completed),
            (&self.allocation_failures, c.allocation_failures),
            (&self.steals, c.steals),
        ];
        for (total, count) in pairs {
            if count != 0 {
                total.fetch_add(count, Ordering::Relaxed);
            }
        }
    }

    /// Counts one host-side event. Relaxed: read after the operation, ordered by its end.
    pub(crate) fn count(&self, what: super::place::Count) {
        use super::place::Count;
        match what {
            Count::Spawned => &self.spawned,
            Count::Respawned => &self.respawned,
            Count::WhenAlls => &self.when_alls,
            Count::WhenAllsCompleted => &self.when_alls_completed,
            Count::AllocationFailures => &self.allocation_failures,
        }
        .fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_live_delta_hands_over_its_count_at_the_threshold_and_keeps_the_last() {
        let mut d = AliveDelta::default();
        for _ in 1..ALIVE_FLUSH {
            assert!(d.add(1).is_none());
        }
        assert_eq!(d.count(), ALIVE_FLUSH - 1);
        assert_eq!(d.add(1).map(AliveDelta::count), Some(ALIVE_FLUSH - 1));
        assert_eq!(d.count(), 1);
        assert!(d.add(-1).is_none());
        for _ in 0..ALIVE_FLUSH {
            assert!(d.add(-1).is_none());
        }
        assert_eq!(d.count(), -ALIVE_FLUSH);
        assert_eq!(d.add(-1).map(AliveDelta::count), Some(-ALIVE_FLUSH));
        assert_eq!(d.count(), -1);
    }
}
