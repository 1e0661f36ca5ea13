//! A worker's private ready queues, one per priority: only the owning worker touches them, so
//! pushing and popping take no atomic operation. Last-ready-first-run within a priority
//! (002 §2.1.2): the owner pushes and pops at the back. When another worker is idle the owner
//! hands over the oldest task of its highest non-empty priority (the front, which in recursive
//! DAGs is the root of the largest remaining subtree) by publishing it (`executor.rs`).
//!
//! Each queue is a ring of power-of-two capacity, so that an index wraps with one mask (a
//! `VecDeque` of arbitrary capacity wraps with a compare and a select, and its push is a call).

use super::header::TaskHeader;
use crate::priority::Priority;
use std::ptr::NonNull;

/// Slots of a ring when the worker is created; it doubles when full.
const INITIAL_CAPACITY: usize = 64;

/// One priority's tasks, oldest at `head`.
struct Ring {
    /// `mask + 1` slots, a power of two: a boxed slice's (`Ring::boxed`, `Ring::unbox`), kept
    /// as its pointer and mask, so that an index wraps with the mask as it is (a `Box<[_]>`
    /// keeps the length, from which each push and pop computed the mask: callgrind, F(22),
    /// instructions per Fibonacci node, one worker: 597.4 -> 592.9, two workers: td_task_spawn
    /// 199 -> 198, `Worker::run_ahead_for` 135.0 -> 133.0). `len` of them from `head` on
    /// (wrapping) hold tasks.
    slots: NonNull<*mut TaskHeader>,
    mask: usize,
    head: usize,
    len: usize,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            slots: Ring::boxed(INITIAL_CAPACITY),
            mask: INITIAL_CAPACITY - 1,
            head: 0,
            len: 0,
        }
    }

    /// `capacity` null slots, given up by their box (`unbox` takes them back).
    fn boxed(capacity: usize) -> NonNull<*mut TaskHeader> {
        let slots: Box<[*mut TaskHeader]> = vec![std::ptr::null_mut(); capacity].into();
        // SAFETY: a box is never null.
        unsafe { NonNull::new_unchecked(Box::into_raw(slots).cast()) }
    }

    /// Takes back the box of the slots.
    ///
    /// # Safety
    /// The slots are not used afterwards.
    unsafe fn unbox(&mut self) -> Box<[*mut TaskHeader]> {
        let slice = std::ptr::slice_from_raw_parts_mut(self.slots.as_ptr(), self.mask + 1);
        // SAFETY: `boxed` made them with this length, and they are given back once.
        Box::from_raw(slice)
    }

    /// Slot `i` (masked).
    #[inline(always)]
    fn slot(&self, i: usize) -> *mut *mut TaskHeader {
        // SAFETY: masked, so below the capacity.
        unsafe { self.slots.as_ptr().add(i & self.mask) }
    }

    #[inline(always)]
    fn push_back(&mut self, task: NonNull<TaskHeader>) {
        if self.len > self.mask {
            self.grow();
        }
        // SAFETY: the ring's slot, which holds no task.
        unsafe { *self.slot(self.head + self.len) = task.as_ptr() };
        self.len += 1;
    }

    /// The newest task, if `wanted` says yes to it; else the ring stays as it is. The slot is
    /// found once, for the test and the pop.
    ///
    /// # Safety
    /// `len > 0`.
    #[inline(always)]
    unsafe fn pop_back_unchecked_if(
        &mut self,
        wanted: impl Fn(*mut TaskHeader) -> bool,
    ) -> Option<NonNull<TaskHeader>> {
        debug_assert!(self.len > 0);
        let len = self.len - 1;
        // SAFETY: the slot holds a task (non-null) pushed there.
        let task = *self.slot(self.head + len);
        if !wanted(task) {
            return None;
        }
        self.len = len;
        Some(NonNull::new_unchecked(task))
    }

    fn pop_front(&mut self) -> Option<NonNull<TaskHeader>> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: the slot holds a task pushed there.
        let task = unsafe { *self.slot(self.head) };
        self.head = (self.head + 1) & self.mask;
        self.len -= 1;
        NonNull::new(task)
    }

    /// Doubles the capacity, moving the tasks to the front in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let capacity = 2 * (self.mask + 1);
        let slots = Ring::boxed(capacity);
        for k in 0..self.len {
            // SAFETY: below the new capacity; the old slot holds a task.
            unsafe { *slots.as_ptr().add(k) = *self.slot(self.head + k) };
        }
        // SAFETY: replaced below.
        drop(unsafe { self.unbox() });
        self.slots = slots;
        self.mask = capacity - 1;
        self.head = 0;
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the ring goes.
        drop(unsafe { self.unbox() });
    }
}

pub(crate) struct LocalQueues {
    queues: [Ring; 3],
    /// Bit `p` set when the queue of priority index `p` is non-empty, so that the highest
    /// non-empty priority is one `trailing_zeros` away, and emptiness one test.
    nonempty: u32,
}

impl LocalQueues {
    pub(crate) fn new() -> LocalQueues {
        LocalQueues {
            queues: std::array::from_fn(|_| Ring::new()),
            nonempty: 0,
        }
    }

    /// Pushes a task of the priority whose index (below 3) is `p`.
    #[inline(always)]
    pub(crate) fn push_index(&mut self, task: NonNull<TaskHeader>, p: usize) {
        self.queues[p].push_back(task);
        self.nonempty |= 1 << p;
    }

    /// The newest task of `priority`.
    #[inline]
    pub(crate) fn pop(&mut self, priority: Priority) -> Option<NonNull<TaskHeader>> {
        self.pop_index(priority.index())
    }

    /// Whether a High task is queued.
    #[inline(always)]
    pub(crate) fn has_high(&self) -> bool {
        self.nonempty & 1 != 0
    }

    /// The newest High task, if any.
    #[inline(always)]
    pub(crate) fn pop_high(&mut self) -> Option<NonNull<TaskHeader>> {
        self.pop_index(Priority::High.index())
    }

    /// The newest task of the highest non-empty priority.
    #[inline(always)]
    pub(crate) fn pop_highest(&mut self) -> Option<NonNull<TaskHeader>> {
        if self.nonempty == 0 {
            return None;
        }
        // Below 3: only bits 0 to 2 are ever set (`min` lets the compiler see it).
        let p = (self.nonempty.trailing_zeros() as usize).min(2);
        // SAFETY: its bit is set.
        Some(unsafe { self.pop_nonempty(p) })
    }

    /// Pops the task `Worker::find_task` would take next from these queues if `wanted` says yes
    /// to it: the newest High task, or the newest of the highest non-empty priority when no
    /// shared stack may hold a task that comes first (`shared_may_hold` says false). Asked only
    /// when no High task is queued: a Fibonacci task's High child is popped without the load
    /// (callgrind, F(22), two workers: `Worker::run_ahead_for` 221.3 -> 214.8 instructions per node).
    #[inline(always)]
    pub(crate) fn pop_next_if(
        &mut self,
        shared_may_hold: impl FnOnce() -> bool,
        wanted: impl Fn(*mut TaskHeader) -> bool,
    ) -> Option<NonNull<TaskHeader>> {
        if self.nonempty == 0 {
            return None;
        }
        if self.nonempty & 1 == 0 && shared_may_hold() {
            return None;
        }
        // Below 3, as in `pop_highest`.
        let p = (self.nonempty.trailing_zeros() as usize).min(2);
        // One look at the newest task's slot (`Ring::pop_back_unchecked_if`): a look followed
        // by a pop found it twice, 22 instructions per Fibonacci node of a wait with several
        // workers (callgrind of F(22) on one worker given their code by an experiment switch:
        // 839 -> 817). SAFETY: its bit is set.
        unsafe { self.pop_nonempty_if(p, wanted) }
    }

    /// The newest task of priority index `p`, without a test of its queue's length.
    ///
    /// # Safety
    /// Bit `p` of `nonempty` is set, so the queue holds a task.
    #[inline(always)]
    unsafe fn pop_nonempty(&mut self, p: usize) -> NonNull<TaskHeader> {
        self.pop_nonempty_if(p, |_| true).unwrap_unchecked()
    }

    /// `pop_nonempty` if `wanted` says yes to the task it would return; else the queues stay as
    /// they are.
    ///
    /// # Safety
    /// As for `pop_nonempty`.
    #[inline(always)]
    unsafe fn pop_nonempty_if(
        &mut self,
        p: usize,
        wanted: impl Fn(*mut TaskHeader) -> bool,
    ) -> Option<NonNull<TaskHeader>> {
        let queue = &mut self.queues[p];
        let task = queue.pop_back_unchecked_if(wanted)?;
        if queue.len == 0 {
            self.nonempty &= !(1 << p);
        }
        Some(task)
    }

    #[inline(always)]
    fn pop_index(&mut self, p: usize) -> Option<NonNull<TaskHeader>> {
        // SAFETY: tested non-empty.
        (self.nonempty & (1 << p) != 0).then(|| unsafe { self.pop_nonempty(p) })
    }

    /// The oldest task of the highest priority that has one, with its priority.
    pub(crate) fn take_oldest(&mut self) -> Option<(NonNull<TaskHeader>, Priority)> {
        for priority in Priority::ALL {
            let queue = &mut self.queues[priority.index()];
            if let Some(task) = queue.pop_front() {
                if queue.len == 0 {
                    self.nonempty &= !(1 << priority.index());
                }
                return Some((task, priority));
            }
        }
        None
    }

    /// The tasks queued, of every priority.
    pub(crate) fn len(&self) -> usize {
        self.queues.iter().map(|q| q.len).sum()
    }

    /// Whether every queue is empty.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.nonempty == 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn newest_first_within_a_priority_oldest_goes_to_thieves() {
        let headers: Vec<Box<TaskHeader>> = (0..4).map(|_| TaskHeader::for_model()).collect();
        let p: Vec<NonNull<TaskHeader>> = headers.iter().map(|h| NonNull::from(&**h)).collect();
        let mut q = LocalQueues::new();
        q.push_index(p[0], Priority::Low.index());
        q.push_index(p[1], Priority::Regular.index());
        q.push_index(p[2], Priority::Regular.index());
        q.push_index(p[3], Priority::Regular.index());
        assert!(!q.is_empty());
        assert_eq!(q.len(), 4);
        q.push_index(p[0], Priority::High.index());
        assert_eq!(q.pop_highest(), Some(p[0]));
        assert_eq!(q.take_oldest(), Some((p[1], Priority::Regular)));
        assert_eq!(q.pop(Priority::Regular), Some(p[3]));
        assert_eq!(q.pop(Priority::Regular), Some(p[2]));
        assert_eq!(q.pop(Priority::Regular), None);
        assert_eq!(q.pop(Priority::High), None);
        assert_eq!(q.pop_highest(), Some(p[0]));
        assert_eq!(q.pop_highest(), None);
        assert_eq!(q.take_oldest(), None);
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn pop_next_if_takes_what_find_task_would_only_when_wanted() {
        let headers: Vec<Box<TaskHeader>> = (0..4).map(|_| TaskHeader::for_model()).collect();
        let p: Vec<NonNull<TaskHeader>> = headers.iter().map(|h| NonNull::from(&**h)).collect();
        let (high, regular) = (Priority::High.index(), Priority::Regular.index());
        let yes = |_: *mut TaskHeader| true;
        let mut q = LocalQueues::new();
        assert_eq!(q.pop_next_if(|| false, yes), None);
        // Move the Regular ring's head off 0, so that its newest task is not at `len - 1`.
        for &t in &p {
            q.push_index(t, regular);
        }
        for &t in &p[..3] {
            assert_eq!(q.take_oldest(), Some((t, Priority::Regular)));
        }
        q.push_index(p[0], regular);
        q.push_index(p[1], high);
        q.push_index(p[2], high);
        // The newest High task comes first, whatever the shared stacks may hold; an unwanted
        // one stays where it is.
        assert_eq!(q.pop_next_if(|| true, |t| t == p[1].as_ptr()), None);
        assert_eq!(q.len(), 4);
        assert_eq!(q.pop_next_if(|| true, |t| t == p[2].as_ptr()), Some(p[2]));
        assert_eq!(q.pop_next_if(|| false, yes), Some(p[1]));
        assert!(!q.has_high());
        // Below High, a shared stack may hold a task that comes first.
        assert_eq!(q.pop_next_if(|| true, yes), None);
        assert_eq!(q.pop_next_if(|| false, |t| t == p[3].as_ptr()), None);
        assert_eq!(q.pop_next_if(|| false, |t| t == p[0].as_ptr()), Some(p[0]));
        assert_eq!(q.pop_next_if(|| false, yes), Some(p[3]));
        assert!(q.is_empty());
        assert_eq!(q.pop_next_if(|| false, yes), None);
    }

    #[test]
    fn a_full_ring_grows_and_keeps_the_order_across_the_wrap() {
        let headers: Vec<Box<TaskHeader>> = (0..3 * INITIAL_CAPACITY)
            .map(|_| TaskHeader::for_model())
            .collect();
        let p: Vec<NonNull<TaskHeader>> = headers.iter().map(|h| NonNull::from(&**h)).collect();
        let r = Priority::Regular;
        let mut q = LocalQueues::new();
        // Move the head off 0 so that the ring wraps before it is full.
        for &t in &p[..INITIAL_CAPACITY / 2] {
            q.push_index(t, r.index());
        }
        for &t in &p[..INITIAL_CAPACITY / 2] {
            assert_eq!(q.take_oldest(), Some((t, r)));
        }
        // Fill past two doublings; then oldest from the front, newest from the back.
        for &t in &p {
            q.push_index(t, r.index());
        }
        assert_eq!(q.take_oldest(), Some((p[0], r)));
        for &t in p[1..].iter().rev() {
            assert_eq!(q.pop(r), Some(t));
        }
        assert!(q.is_empty());
    }
}
