//! A ready queue that many threads push to and pop from: the LIFO linked list of 002 §3.3.1 with
//! the atomic push of Fig. 3.2 and the almost-atomic pop of Fig. 3.3. It holds the tasks that are
//! visible to every worker: a worker's published tasks (for thieves), tasks spawned from the host,
//! and team tasks.
//!
//! Correctness argument:
//! - Pop swaps the head for `LOCKED` with an Acquire CAS, reads the popped task's `next`, and
//!   unlocks by storing that `next` as the new head with Release. While the head is `LOCKED` no
//!   push or pop can change it (both wait for it to change), so `next` cannot change under the
//!   popper and a task cannot be popped twice; there is no ABA because the head cannot move away
//!   from and back to the popped task while it is locked.
//! - Push writes the task's `next`, then installs the task with a Release CAS. A popper's Acquire
//!   CAS reads a value written either by a push (a release sequence of CASes starting at some
//!   push's Release) or by an earlier popper's Release unlock; either way it synchronizes with
//!   the writer of every task below, so each popped task's `next` and contents are visible.
//! - Waiting for `LOCKED` to go away spins; the lock is held for three instructions of another
//!   thread, unless that thread is preempted there.

use super::header::TaskHeader;
use crate::sync::atomic::{AtomicPtr, Ordering};
use std::ptr::NonNull;

/// The head value while a pop runs. No block lives at this address.
#[inline]
fn locked() -> *mut TaskHeader {
    NonNull::<TaskHeader>::dangling().as_ptr()
}

#[inline]
fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// A LIFO list of tasks that any thread may push to and pop from.
pub struct ReadyStack {
    head: AtomicPtr<TaskHeader>,
}

impl Default for ReadyStack {
    fn default() -> Self {
        ReadyStack::new()
    }
}

impl ReadyStack {
    pub fn new() -> ReadyStack {
        ReadyStack {
            head: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Pushes `task` on top.
    ///
    /// # Safety
    /// `task` is in no other queue, and the caller gives it up: after the push another thread
    /// may pop and run it.
    #[inline]
    pub unsafe fn push(&self, task: NonNull<TaskHeader>) {
        let mut top = self.head.load(Ordering::Relaxed);
        loop {
            if top == locked() {
                spin();
                top = self.head.load(Ordering::Relaxed);
                continue;
            }
            // Relaxed: published by the Release CAS.
            task.as_ref().next.store(top, Ordering::Relaxed);
            match self.head.compare_exchange_weak(
                top,
                task.as_ptr(),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => top = now,
            }
        }
    }

    /// Pops the top task, if any.
    #[inline]
    pub fn pop(&self) -> Option<NonNull<TaskHeader>> {
        let mut top = self.head.load(Ordering::Relaxed);
        loop {
            if top.is_null() {
                return None;
            }
            if top == locked() {
                spin();
                top = self.head.load(Ordering::Relaxed);
                continue;
            }
            match self.head.compare_exchange_weak(
                top,
                locked(),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    // SAFETY: `top` was pushed and, locked by us, cannot be popped by anyone else.
                    let next = unsafe { (*top).next.load(Ordering::Relaxed) };
                    // Release: the next popper sees what was visible to us (module comment).
                    self.head.store(next, Ordering::Release);
                    return NonNull::new(top);
                }
                Err(now) => top = now,
            }
        }
    }

    /// Whether the stack looked empty. A pop in progress counts as not empty. Acquire: a caller
    /// that reads the head a pusher or popper wrote sees what they did before (`executor.rs`
    /// relies on this to decide that the task DAG is quiescent).
    #[inline]
    pub fn looks_empty(&self) -> bool {
        self.head.load(Ordering::Acquire).is_null()
    }
}
