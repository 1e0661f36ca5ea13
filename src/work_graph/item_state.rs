//! What the scheduler keeps per work item during a run: the waiting count W(j) of 000 §2.4.1,
//! next to the item's constant in-degree so that readying an item touches one 8-byte record.

use crate::sync::atomic::{AtomicU32, Ordering};

/// Marks "no item": the empty ready stack, the end of a stack's links, no continuation.
pub(super) const NO_ITEM: u32 = u32::MAX;

#[repr(C, align(8))]
pub(super) struct ItemState {
    /// Predecessors of the item that have not completed in the current run. Starts at
    /// `indegree`; the predecessor that brings it to zero readies the item and stores
    /// `indegree` back, so the next run finds it initialized without a pass over all items.
    pub pending: AtomicU32,
    /// Number of execute-after dependences of the item (entries naming it).
    pub indegree: u32,
}

impl ItemState {
    pub(super) fn new(indegree: u32) -> ItemState {
        ItemState {
            pending: AtomicU32::new(indegree),
            indegree,
        }
    }

    /// Restores the count a run starts from (after a run that ended early).
    pub(super) fn reset(&self) {
        self.pending.store(self.indegree, Ordering::Relaxed);
    }
}
