//! Which worker the calling thread runs, without a thread-local (a thread-local costs a call to
//! `__tls_get_addr` in a shared library): an open-addressing table from thread id (the thread
//! pointer, `thread_id::current`) to worker rank, filled when a wait starts and cleared when it
//! ends.
//!
//! Correctness: a thread only ever looks up its own id, and only its own insertion wrote it, so
//! the lookup needs no ordering beyond program order (Relaxed). Insertions claim empty slots with
//! a CAS, so concurrent inserts never share a slot, and a probe that reaches an empty slot has
//! passed every slot the thread could have taken (slots are only emptied when the wait is over,
//! after every task, so no lookup runs while entries disappear).

use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) struct ThreadTable {
    ids: Box<[AtomicUsize]>,
    ranks: Box<[AtomicUsize]>,
    mask: usize,
}

#[inline(always)]
fn slot(id: usize, mask: usize) -> usize {
    (crate::thread_id::spread(id) >> 40) & mask
}

impl ThreadTable {
    /// A table for `workers` threads (kept at most a quarter full).
    pub(crate) fn new(workers: usize) -> ThreadTable {
        let len = (4 * workers).next_power_of_two().max(16);
        ThreadTable {
            ids: (0..len).map(|_| AtomicUsize::new(0)).collect(),
            ranks: (0..len).map(|_| AtomicUsize::new(0)).collect(),
            mask: len - 1,
        }
    }

    /// Records that thread `id` runs worker `rank`.
    pub(crate) fn insert(&self, id: usize, rank: usize) {
        let mut j = slot(id, self.mask);
        loop {
            // Relaxed: see the module comment.
            if self.ids[j]
                .compare_exchange(0, id, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                self.ranks[j].store(rank, Ordering::Relaxed);
                return;
            }
            j = (j + 1) & self.mask;
        }
    }

    /// The rank of the worker thread `id` runs, if it runs one.
    #[inline(always)]
    pub(crate) fn find(&self, id: usize) -> Option<usize> {
        let mut j = slot(id, self.mask);
        loop {
            // SAFETY-free indexing: `j` is masked to the table's power-of-two length.
            let entry = self.ids[j].load(Ordering::Relaxed);
            if entry == id {
                return Some(self.ranks[j].load(Ordering::Relaxed));
            }
            if entry == 0 {
                return None;
            }
            j = (j + 1) & self.mask;
        }
    }

    /// Empties the table (every worker has finished its tasks).
    pub(crate) fn clear(&self) {
        for id in self.ids.iter() {
            id.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn threads_find_their_rank_and_strangers_find_nothing() {
        let table = ThreadTable::new(8);
        // Ids that collide in the hash still get their own slots.
        let ids: Vec<usize> = (1..=8).map(|i| i << 40).collect();
        for (rank, &id) in ids.iter().enumerate() {
            table.insert(id, rank);
        }
        for (rank, &id) in ids.iter().enumerate() {
            assert_eq!(table.find(id), Some(rank));
        }
        assert_eq!(table.find(12345), None);
        table.clear();
        assert_eq!(table.find(ids[0]), None);
    }
}
