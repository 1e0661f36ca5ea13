//! Ready stacks: where an item that became ready waits until a worker takes it.
//!
//! 000 §2.4.1 keeps one ready array Q(N) with a shared range (b, e) that every push and pop
//! updates atomically; with many workers those two words become the bottleneck. Here each worker
//! pushes onto its own stack per priority level and pops from it, and an idle worker pops from
//! the others' stacks (work stealing). A stack is a Treiber stack threaded through a link per
//! item, so it needs no storage of its own: like Q(N), the links are sized by N once,
//! and a stack can hold every item without overflowing or allocating.
//!
//! Correctness. The `top` word changes only by compare-exchange (with several workers), so
//! pushes and pops on one stack are linearizable at their successful exchange.
//! - No ABA: within one run an item becomes ready exactly once (its waiting count reaches zero
//!   once), so it is pushed at most once and, once popped, never returns to any stack. A pop that
//!   read `top == t` and `link(t) == u` therefore succeeds only if `t` is still on top, in which
//!   case nothing below `t` has changed (only the top is ever removed) and `u` is still the item
//!   below it. `link(t)` is written only while pushing `t`, before the Release exchange that
//!   publishes `t`, so the Acquire load that saw `t` on top also sees its link.
//! - Happens-before for the work itself: whoever pushes `j` made it ready, so it has acquired the
//!   completion of every predecessor of `j`; the push is a Release exchange and the pop that
//!   takes `j` read `top` with Acquire, so F(j) starts after every predecessor's F returned.
//! - Between runs, the dispatch that starts a run happens after the end of the previous one;
//!   an ended run leaves every stack empty (each item was popped), or the plan resets the stacks
//!   when a run ended early.
//!
//! With a single worker (`SHARED == false`) nothing else touches the stacks during the run, so
//! plain loads and stores replace the exchanges.

use super::item_state::NO_ITEM;
use crate::sync::atomic::{AtomicU32, Ordering};

pub(super) struct ReadyStack {
    top: AtomicU32,
}

impl ReadyStack {
    pub(super) fn new() -> ReadyStack {
        ReadyStack {
            top: AtomicU32::new(NO_ITEM),
        }
    }

    /// Empties the stack; only between runs.
    pub(super) fn clear(&self) {
        self.top.store(NO_ITEM, Ordering::Relaxed);
    }

    /// Pushes `item`, which must not be on any stack in this run.
    #[inline]
    pub(super) fn push<const SHARED: bool>(&self, item: u32, links: &[AtomicU32]) {
        let link = &links[item as usize];
        if !SHARED {
            link.store(self.top.load(Ordering::Relaxed), Ordering::Relaxed);
            self.top.store(item, Ordering::Relaxed);
            return;
        }
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            // Relaxed: published by the Release exchange below.
            link.store(top, Ordering::Relaxed);
            // Release: a worker that pops `item` sees its link and everything its readier saw.
            match self
                .top
                .compare_exchange_weak(top, item, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => top = now,
            }
        }
    }

    /// Pops the item on top, if any.
    #[inline]
    pub(super) fn pop<const SHARED: bool>(&self, links: &[AtomicU32]) -> Option<u32> {
        if !SHARED {
            let top = self.top.load(Ordering::Relaxed);
            if top == NO_ITEM {
                return None;
            }
            let below = links[top as usize].load(Ordering::Relaxed);
            self.top.store(below, Ordering::Relaxed);
            return Some(top);
        }
        // Acquire (here and on a failed exchange): pairs with the push that put `top` there.
        let mut top = self.top.load(Ordering::Acquire);
        loop {
            if top == NO_ITEM {
                return None;
            }
            // Relaxed: ordered after the Acquire that read `top` (module comment).
            let below = links[top as usize].load(Ordering::Relaxed);
            match self
                .top
                .compare_exchange_weak(top, below, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some(top),
                Err(now) => top = now,
            }
        }
    }
}
