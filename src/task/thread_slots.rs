//! The scheduler and worker the calling thread serves, without a thread-local: in a shared
//! library every thread-local access is a call to `__tls_get_addr`, and every call that takes a
//! task context needs this (`TaskContext::check`), three times per Fibonacci node.
//!
//! A process-wide table of `SLOTS` slots, each a thread id (`thread_id::current`) and the
//! scheduler and worker that thread serves. A thread that enters a wait's loop claims a free slot
//! among the `PROBES` that follow its id's hash (CAS from 0 to its id), or keeps the one it holds
//! from an outer wait; it records its worker there, restores the outer worker when it leaves, and
//! frees the slot when it leaves its outermost wait. A lookup probes the same `PROBES` slots for
//! the id. A thread that finds no free slot (more than `PROBES` threads of one hash bucket run
//! waits at once) gets `None`, and `worker::current` falls back to the thread-local, which is
//! always kept up to date.
//!
//! Correctness: only thread T stores T's id into a slot, and only T clears it; ids are unique
//! among live threads, and T clears its slot before it leaves the loop (the guard's drop, also
//! when unwinding), so a slot that holds T's id was claimed by T itself, and its worker fields
//! were written by T. T reading its own writes needs no ordering beyond program order (Relaxed);
//! other threads only compare the id with theirs, which no value of it can make equal.

use super::scheduler::Shared;
use super::worker::Worker;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Slots in the table (a power of two).
const SLOTS: usize = 256;
/// Slots a thread may use, from its hash on.
const PROBES: usize = 4;

pub(crate) struct Slot {
    thread: AtomicUsize,
    shared: AtomicPtr<Shared>,
    worker: AtomicPtr<Worker>,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    thread: AtomicUsize::new(0),
    shared: AtomicPtr::new(std::ptr::null_mut()),
    worker: AtomicPtr::new(std::ptr::null_mut()),
};

pub(crate) struct Table {
    slots: [Slot; SLOTS],
}

/// The process's table.
pub(crate) static TABLE: Table = Table {
    slots: [EMPTY; SLOTS],
};

#[inline(always)]
fn home(id: usize) -> usize {
    crate::thread_id::spread(id) >> (usize::BITS - SLOTS.trailing_zeros())
}

impl Slot {
    /// The scheduler and worker recorded by the slot's thread.
    #[inline(always)]
    pub(crate) fn get(&self) -> (*const Shared, *const Worker) {
        (
            self.shared.load(Ordering::Relaxed),
            self.worker.load(Ordering::Relaxed),
        )
    }

    /// The worker recorded by the slot's thread (`get` without the scheduler, one load).
    #[inline(always)]
    pub(crate) fn worker(&self) -> *const Worker {
        self.worker.load(Ordering::Relaxed)
    }

    fn set(&self, (shared, worker): (*const Shared, *const Worker)) {
        self.shared.store(shared.cast_mut(), Ordering::Relaxed);
        self.worker.store(worker.cast_mut(), Ordering::Relaxed);
    }
}

/// A thread's entry in the table, undone when dropped (see the module comment).
pub(crate) struct SlotGuard<'t> {
    slot: Option<&'t Slot>,
    /// What the slot held before (an outer wait's worker), when the thread already held it.
    previous: Option<(*const Shared, *const Worker)>,
}

impl Table {
    /// The slots thread `id` may use.
    #[inline(always)]
    fn probes(&self, id: usize) -> impl Iterator<Item = &Slot> {
        let h = home(id);
        (0..PROBES).map(move |k| &self.slots[(h + k) & (SLOTS - 1)])
    }

    /// The slot thread `id` holds, if any.
    #[inline(always)]
    pub(crate) fn find(&self, id: usize) -> Option<&Slot> {
        // Relaxed: see the module comment.
        self.probes(id)
            .find(|slot| slot.thread.load(Ordering::Relaxed) == id)
    }

    /// Records that thread `id` (the caller) serves `current` until the guard drops.
    pub(crate) fn enter(
        &self,
        id: usize,
        current: (*const Shared, *const Worker),
    ) -> SlotGuard<'_> {
        if let Some(slot) = self.find(id) {
            let previous = slot.get();
            slot.set(current);
            return SlotGuard {
                slot: Some(slot),
                previous: Some(previous),
            };
        }
        let slot = self.probes(id).find(|slot| {
            slot.thread
                .compare_exchange(0, id, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        });
        if let Some(slot) = slot {
            slot.set(current);
        }
        SlotGuard {
            slot,
            previous: None,
        }
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let Some(slot) = self.slot else { return };
        match self.previous {
            Some(previous) => slot.set(previous),
            None => {
                slot.set((std::ptr::null(), std::ptr::null()));
                slot.thread.store(0, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn nested_entries_restore_the_outer_worker_and_free_the_slot_last() {
        // An id no live thread has (thread pointers are aligned addresses).
        let table = Table {
            slots: [EMPTY; SLOTS],
        };
        let id = 0x5000_0000_0040;
        let a = (8 as *const Shared, 16 as *const Worker);
        let b = (24 as *const Shared, 32 as *const Worker);
        assert!(table.find(id).is_none());
        {
            let _outer = table.enter(id, a);
            assert_eq!(table.find(id).map(Slot::get), Some(a));
            {
                let _inner = table.enter(id, b);
                assert_eq!(table.find(id).map(Slot::get), Some(b));
            }
            assert_eq!(table.find(id).map(Slot::get), Some(a));
        }
        assert!(table.find(id).is_none());
    }

    #[test]
    fn a_full_bucket_leaves_the_thread_without_a_slot() {
        // Ids with the same hash: the first PROBES get slots, the next none, and a freed slot
        // serves a later one.
        let table = Table {
            slots: [EMPTY; SLOTS],
        };
        let ids: Vec<usize> = (1..=PROBES + 1)
            .map(|i| {
                let mut id = (i << 32) | 0x7000_0000_0000_0000;
                while home(id) != 200 {
                    id += 64;
                }
                id
            })
            .collect();
        let value = (8 as *const Shared, 16 as *const Worker);
        let mut guards: Vec<SlotGuard<'_>> = ids.iter().map(|&id| table.enter(id, value)).collect();
        for &id in &ids[..PROBES] {
            assert_eq!(table.find(id).map(Slot::get), Some(value));
        }
        assert!(table.find(ids[PROBES]).is_none());
        guards.remove(0);
        let late = table.enter(ids[PROBES], value);
        assert_eq!(table.find(ids[PROBES]).map(Slot::get), Some(value));
        drop(late);
        drop(guards);
        assert!(ids.iter().all(|&id| table.find(id).is_none()));
    }
}
