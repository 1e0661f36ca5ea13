//! A whole-instance dispatch whose members join late: the control thread starts alone, and the
//! other members run the job only once it calls `Recruit::all` (the task DAG's wait, which
//! needs them only when a second task is ready: a wait of one task or of a chain of tasks then
//! costs what it costs with one thread, docs/tasks.md "Threads").
//!
//! The members are called in through the instance's job slot (slot.rs): `all` opens their
//! blocks and publishes them with one store that every idle member sees at once. Posting to
//! each member's mailbox in turn, as this did before, took 0.19-0.29 us per member on the
//! 16-core machine, so the 16th started 3.5-5.2 us after the call (docs/PERFORMANCE.md,
//! session 36). When the control thread's own part returns, the dispatch ends as the slot's
//! `finish` does: blocks no member has claimed yet run on the control thread or not at all
//! (`Latecomers`), and the dispatch waits for the blocks members claimed.

use super::slot::{BlockFn, Slot};
use std::cell::Cell;

/// The handle through which the control thread of a late-joining dispatch calls in the other
/// members. Not `Sync`: the control thread's alone.
pub struct Recruit<'a> {
    opening: Option<Opening<'a>>,
    /// The generation published, once the members are called in.
    published: Cell<Option<u64>>,
}

struct Opening<'a> {
    slot: &'a Slot,
    /// Blocks of the dispatch: instance ranks `0..size`, the control thread's first.
    size: usize,
    /// Whether `size` covers every member of the slot's instance.
    whole_instance: bool,
    work: &'a BlockFn<'a>,
    /// Unparks the member of a block if it sleeps.
    wake: &'a dyn Fn(usize),
}

impl<'a> Recruit<'a> {
    /// For a dispatch with nobody to call in (one thread).
    pub(crate) fn none() -> Recruit<'static> {
        Recruit {
            opening: None,
            published: Cell::new(None),
        }
    }

    /// # Safety
    /// The caller must be the control thread of the instance of `slot`, with no other dispatch
    /// on it running, `size` at most its member count, and it must end the dispatch with
    /// `finish` before `work` goes.
    pub(crate) unsafe fn new(
        slot: &'a Slot,
        size: usize,
        whole_instance: bool,
        work: &'a BlockFn<'a>,
        wake: &'a dyn Fn(usize),
    ) -> Self {
        Recruit {
            opening: Some(Opening {
                slot,
                size,
                whole_instance,
                work,
                wake,
            }),
            published: Cell::new(None),
        }
    }

    /// Calls in every other member, once; later calls do nothing.
    pub fn all(&self) {
        self.only(|_| true);
    }

    /// Calls in the other members `i` (by index in the instance, the control thread being 0)
    /// for which `take(i)`, once; later calls, of either kind, do nothing. The others never run
    /// the job.
    pub fn only(&self, take: impl Fn(usize) -> bool) {
        let Some(o) = &self.opening else { return };
        if self.published.get().is_some() {
            return;
        }
        let every_member = o.whole_instance && (1..o.size).all(&take);
        let wake = || {
            for b in (1..o.size).filter(|&b| take(b)) {
                (o.wake)(b);
            }
        };
        // SAFETY: `new`'s contract; a dispatch publishes once.
        let generation = unsafe { o.slot.publish(o.size, &take, !every_member, o.work, wake) };
        self.published.set(Some(generation));
    }

    /// Ends the dispatch (the module comment): returns the first panic of a member's block.
    pub(crate) fn finish(
        &self,
        latecomers: super::Latecomers,
    ) -> Option<Box<dyn std::any::Any + Send>> {
        let (Some(o), Some(generation)) = (&self.opening, self.published.get()) else {
            return None;
        };
        o.slot.finish(o.size, generation, latecomers, *o.work)
    }
}
