//! What the scheduler keeps per work item: the waiting count W(j) of 000 §2.4.1, the link that
//! threads the item onto a ready stack, and the item's constant in-degree and priority level.
//! They share one 16-byte record so that releasing an item touches one cache line.

use crate::sync::atomic::{AtomicU32, Ordering};

/// Marks "no item": the empty ready stack, the end of a stack's links, no continuation.
pub(super) const NO_ITEM: u32 = u32::MAX;

#[repr(C, align(16))]
pub(super) struct ItemState {
    /// Predecessors of the item that have not completed in the current run. Starts at
    /// `indegree`; the predecessor that brings it to zero readies the item and stores
    /// `indegree` back, so the next run finds it initialized without a pass over all items.
    pub pending: AtomicU32,
    /// The item below this one on the ready stack that holds it (`NO_ITEM` at the bottom).
    pub link: AtomicU32,
    /// Number of execute-after dependences of the item (entries naming it).
    pub indegree: u32,
    /// Dense priority level: 0 is the highest level that has items in this graph.
    pub level: u32,
}

impl ItemState {
    pub(super) fn new(indegree: u32, level: u32) -> ItemState {
        ItemState {
            pending: AtomicU32::new(indegree),
            link: AtomicU32::new(NO_ITEM),
            indegree,
            level,
        }
    }

    /// Restores the count a run starts from (after a run that ended early).
    pub(super) fn reset(&self) {
        self.pending.store(self.indegree, Ordering::Relaxed);
    }
}
