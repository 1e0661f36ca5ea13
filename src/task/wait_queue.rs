//! Wait queues (002 §3.3.1, Figs. 3.2 and 3.6): every task and when_all heads a LIFO list of the
//! entities waiting for it to complete. Completion closes the list by swapping in `CLOSED`, which
//! also marks the entity complete: a push onto a closed list fails, and the pusher then treats
//! the dependence as satisfied.
//!
//! Correctness argument (shared access):
//! - A push writes the waiter's `next`, then publishes the waiter with a Release CAS on the head.
//!   The completer's swap is AcqRel: it acquires every pushed waiter's `next` (each successful
//!   CAS is in the release sequence the swap reads from), and releases everything the completer
//!   did before (the task's result, its destroy callback's effects) to whoever sees `CLOSED`.
//! - A push that finds `CLOSED` reads it with Acquire, so the pusher sees the result too; the same
//!   holds for `is_closed`, which is how futures tell that a result is ready.
//! - A waiter is in no other list while it is in this one, so its `next` is only written by its
//!   pusher before the CAS and read by the completer after the swap.
//! - Every push either lands before the swap (the completer takes it) or reads `CLOSED` (the
//!   pusher schedules the waiter itself): CAS and swap act on one location, so exactly one of the
//!   two happens for each waiter.
//!
//! With `Access::Exclusive` (a wait with one worker, nobody else touching the entities) the same
//! steps use plain loads and stores.
//!
//! Closing without a read-modify-write (`sole_waiter`, `close_unreachable`): when the completer
//! knows that no thread can push any more, because nobody but the waiters already in the list
//! and the completer holds a reference to the entity (see `Place::complete`), a plain store
//! closes the list. The Acquire load that finds the waiter pairs with its pusher's Release CAS,
//! as the swap would. The same holds for an entity whose only reference is that of a task
//! suspended in this thread's call, which promised that nobody else uses it meanwhile
//! (`TaskHeader::close_if_sole_holder`, for the tasks `respawn_when_all_private` runs ahead).
//!
//! Who frees an entity (`orphan`, the `ORPHAN` bit): an entity's block goes back once it is
//! complete and no reference or hold is left (`header.rs`, `refs`). Being incomplete counts as a
//! hold of its own, but not in `refs`: the queue's state is that hold, so that a completion
//! costs one read-modify-write, the close, and not a second one to drop a count. A holder that
//! takes `refs` to zero while the entity may still be incomplete calls `orphan`: if the queue is
//! closed, the entity is complete and the holder frees it; otherwise it sets the `ORPHAN` bit in
//! the head with a CAS, and the completer, whose close returns the bit, frees it. The CAS and the
//! close act on one location, so exactly one of the two happens first and exactly one party
//! frees. Nobody pushes onto a queue whose head has the bit: a pusher holds a reference while it
//! pushes, and the bit is set only once none is left. Ordering: the holder's decrement is
//! Release and its Acquire fence follows the count it read as zero (the pattern of `Arc`), so the
//! one that frees sees every holder's accesses; the close is AcqRel and the CAS Release, and the
//! holder that finds the queue closed reads it with Acquire, so the one that frees also sees
//! the completer's or the last holder's accesses.

use super::header::{Access, TaskHeader};
use crate::sync::atomic::{AtomicPtr, Ordering};
use std::ptr::NonNull;

/// The head value of a completed entity's wait queue. No block lives at this address (blocks are
/// pool blocks of at least 128 bytes, aligned to their size).
#[inline]
pub(crate) fn closed() -> *mut TaskHeader {
    NonNull::<TaskHeader>::dangling().as_ptr()
}

/// Set in the head of an incomplete entity's queue once no reference or hold is left: the
/// completer then frees the entity (module comment). Blocks are aligned to 128 bytes and
/// `closed()` is 8, so the bit is free in every other head value.
const ORPHAN: usize = 1;

/// Whether the queue at `head` is closed, i.e. its entity is complete.
#[inline]
pub fn is_closed(head: &AtomicPtr<TaskHeader>) -> bool {
    head.load(Ordering::Acquire) == closed()
}

/// Whether the queue holds a waiter now. A hint under shared access: one may be pushed right
/// after it says no (`close` then returns it). Relaxed: a caller that acts on a waiter reads the
/// head again with Acquire (`sole_waiter`, `close`).
#[inline]
pub fn has_waiters(head: &AtomicPtr<TaskHeader>) -> bool {
    head.load(Ordering::Relaxed) as usize & !ORPHAN != 0
}

/// The queue's only waiter, if it holds exactly one (it may be pushed onto the queue after this
/// returns `None`, but once seen it stays: only the completer takes waiters).
#[inline]
pub fn sole_waiter(head: &AtomicPtr<TaskHeader>) -> Option<NonNull<TaskHeader>> {
    let top = head.load(Ordering::Acquire);
    if top as usize & ORPHAN != 0 {
        // Nobody holds the entity any more: not the case this serves.
        return None;
    }
    let top = NonNull::new(top)?;
    // SAFETY: a listed waiter is alive (its incomplete hold) and its `next` was written before it
    // was pushed (acquired above).
    (top.as_ptr() != closed() && unsafe { next_waiter(top) }.is_null()).then_some(top)
}

/// Closes a queue that nobody can push onto any more (module comment); its waiters, if any,
/// were taken with `sole_waiter`. Release: a task that later finds the entity complete through
/// a reference it borrowed before (a future in shared memory, `TaskHeader::close_if_sole_holder`)
/// reads the result the completer wrote, as after the swap (a plain store on x86).
#[inline]
pub fn close_unreachable(head: &AtomicPtr<TaskHeader>) {
    head.store(closed(), Ordering::Release);
}

/// Pushes `waiter` onto the queue at `head`; `false` when the queue is closed.
///
/// # Safety
/// `waiter` is in no other queue and the caller holds it; after a successful push the caller
/// must not touch it again (the completer may already run it).
#[inline]
pub unsafe fn push(
    head: &AtomicPtr<TaskHeader>,
    waiter: NonNull<TaskHeader>,
    access: Access,
) -> bool {
    let waiter_ref = waiter.as_ref();
    update_open(head, access, |top| {
        debug_assert!(
            top as usize & ORPHAN == 0,
            "a push onto an entity nobody holds"
        );
        // Relaxed: published by the Release of the head's update.
        waiter_ref.next.store(top, Ordering::Relaxed);
        waiter.as_ptr()
    })
}

/// Replaces the head of an open queue with `new_head(head)`, with a Release compare-exchange
/// under shared access; `false`, changing nothing, when the queue is closed (its Acquire load
/// then sees what the completer did before the close). `new_head` may run more than once.
#[inline(always)]
fn update_open(
    head: &AtomicPtr<TaskHeader>,
    access: Access,
    mut new_head: impl FnMut(*mut TaskHeader) -> *mut TaskHeader,
) -> bool {
    match access {
        Access::Exclusive => {
            let top = head.load(Ordering::Relaxed);
            if top == closed() {
                return false;
            }
            head.store(new_head(top), Ordering::Relaxed);
            true
        }
        Access::Shared => {
            let mut top = head.load(Ordering::Acquire);
            loop {
                if top == closed() {
                    return false;
                }
                match head.compare_exchange_weak(
                    top,
                    new_head(top),
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return true,
                    Err(now) => top = now,
                }
            }
        }
    }
}

/// What a close found: the waiters (a list through `next`, ending in null), and whether the
/// entity was orphaned, so that the completer must free it (module comment).
pub struct Closed {
    pub waiters: *mut TaskHeader,
    pub orphaned: bool,
}

/// Closes the queue at `head` and returns what it held, or `None` if it was already closed
/// (002 Fig. 3.6 line 5: only one completer wins). Once it returns, the caller may touch the
/// entity again only if it was orphaned: a holder may free it as soon as it sees the close.
#[inline]
pub fn close(head: &AtomicPtr<TaskHeader>, access: Access) -> Option<Closed> {
    let list = match access {
        Access::Exclusive => {
            let list = head.load(Ordering::Relaxed);
            head.store(closed(), Ordering::Relaxed);
            list
        }
        // AcqRel: see the module comment.
        Access::Shared => head.swap(closed(), Ordering::AcqRel),
    };
    (list != closed()).then_some(Closed {
        waiters: (list as usize & !ORPHAN) as *mut TaskHeader,
        orphaned: list as usize & ORPHAN != 0,
    })
}

/// Called by the holder that took the entity's references and holds to zero: whether the entity
/// is complete, so that this holder must free it; otherwise the completer will (module
/// comment).
#[inline]
pub fn orphan(head: &AtomicPtr<TaskHeader>, access: Access) -> bool {
    // The Acquire of a closed head orders the free after the completer's accesses, the
    // Release of the update this holder's before the completer's free (module comment).
    !update_open(head, access, |top| {
        (top as usize | ORPHAN) as *mut TaskHeader
    })
}

/// The waiter after `waiter` in a list returned by `close`.
///
/// # Safety
/// `waiter` came from such a list and has not been scheduled yet (scheduling may rewrite `next`).
#[inline]
pub unsafe fn next_waiter(waiter: NonNull<TaskHeader>) -> *mut TaskHeader {
    // Relaxed: ordered by the swap in `close`, which acquired the pushes.
    waiter.as_ref().next.load(Ordering::Relaxed)
}
