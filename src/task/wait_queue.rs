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
//! as the swap would.

use super::header::{Access, TaskHeader};
use crate::sync::atomic::{AtomicPtr, Ordering};
use std::ptr::NonNull;

/// The head value of a completed entity's wait queue. No block lives at this address (blocks are
/// pool blocks of at least 128 bytes, aligned to their size).
#[inline]
pub(crate) fn closed() -> *mut TaskHeader {
    NonNull::<TaskHeader>::dangling().as_ptr()
}

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
    !head.load(Ordering::Relaxed).is_null()
}

/// The queue's only waiter, if it holds exactly one (it may be pushed onto the queue after this
/// returns `None`, but once seen it stays: only the completer takes waiters).
#[inline]
pub fn sole_waiter(head: &AtomicPtr<TaskHeader>) -> Option<NonNull<TaskHeader>> {
    let top = NonNull::new(head.load(Ordering::Acquire))?;
    // SAFETY: a listed waiter is alive (its incomplete hold) and its `next` was written before it
    // was pushed (acquired above).
    (top.as_ptr() != closed() && unsafe { next_waiter(top) }.is_null()).then_some(top)
}

/// Closes a queue that nobody can push onto any more (module comment); its waiters were taken
/// with `sole_waiter`.
#[inline]
pub fn close_unreachable(head: &AtomicPtr<TaskHeader>) {
    head.store(closed(), Ordering::Relaxed);
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
    match access {
        Access::Exclusive => {
            let top = head.load(Ordering::Relaxed);
            if top == closed() {
                return false;
            }
            waiter_ref.next.store(top, Ordering::Relaxed);
            head.store(waiter.as_ptr(), Ordering::Relaxed);
            true
        }
        Access::Shared => {
            let mut top = head.load(Ordering::Acquire);
            loop {
                if top == closed() {
                    return false;
                }
                // Relaxed: published by the Release CAS below.
                waiter_ref.next.store(top, Ordering::Relaxed);
                match head.compare_exchange_weak(
                    top,
                    waiter.as_ptr(),
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

/// Closes the queue at `head` and returns the waiters it held (a list through `next`, ending in
/// null), or `None` if it was already closed (002 Fig. 3.6 line 5: only one completer wins).
#[inline]
pub fn close(head: &AtomicPtr<TaskHeader>, access: Access) -> Option<*mut TaskHeader> {
    let list = match access {
        Access::Exclusive => {
            let list = head.load(Ordering::Relaxed);
            head.store(closed(), Ordering::Relaxed);
            list
        }
        // AcqRel: see the module comment.
        Access::Shared => head.swap(closed(), Ordering::AcqRel),
    };
    (list != closed()).then_some(list)
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
