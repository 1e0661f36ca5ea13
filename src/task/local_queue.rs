//! A worker's private ready queues, one per priority: only the owning worker touches them, so
//! pushing and popping take no atomic operation. Last-ready-first-run within a priority
//! (002 §2.1.2): the owner pushes and pops at the back. When another worker is idle the owner
//! hands over the oldest task of its highest non-empty priority (the front, which in recursive
//! DAGs is the root of the largest remaining subtree) by publishing it (`executor.rs`).

use super::header::TaskHeader;
use crate::priority::Priority;
use std::collections::VecDeque;
use std::ptr::NonNull;

pub(crate) struct LocalQueues {
    queues: [VecDeque<NonNull<TaskHeader>>; 3],
    len: usize,
    /// Bit `p` set when the queue of priority index `p` is non-empty, so that the highest
    /// non-empty priority is one `trailing_zeros` away.
    nonempty: u32,
}

impl LocalQueues {
    pub(crate) fn new() -> LocalQueues {
        LocalQueues {
            queues: std::array::from_fn(|_| VecDeque::new()),
            len: 0,
            nonempty: 0,
        }
    }

    /// Pushes a task of the priority whose index (below 3) is `p`.
    #[inline]
    pub(crate) fn push_index(&mut self, task: NonNull<TaskHeader>, p: usize) {
        self.queues[p].push_back(task);
        self.len += 1;
        self.nonempty |= 1 << p;
    }

    /// The newest task of `priority`.
    #[inline]
    pub(crate) fn pop(&mut self, priority: Priority) -> Option<NonNull<TaskHeader>> {
        self.pop_index(priority.index())
    }

    /// The newest task of the highest priority that has one.
    #[inline]
    pub(crate) fn pop_highest(&mut self) -> Option<NonNull<TaskHeader>> {
        if self.nonempty == 0 {
            return None;
        }
        self.pop_index(self.nonempty.trailing_zeros() as usize)
    }

    #[inline(always)]
    fn pop_index(&mut self, p: usize) -> Option<NonNull<TaskHeader>> {
        let queue = &mut self.queues[p];
        let task = queue.pop_back()?;
        if queue.is_empty() {
            self.nonempty &= !(1 << p);
        }
        self.len -= 1;
        Some(task)
    }

    /// The oldest task of the highest priority that has one, with its priority.
    pub(crate) fn take_oldest(&mut self) -> Option<(NonNull<TaskHeader>, Priority)> {
        for priority in Priority::ALL {
            let queue = &mut self.queues[priority.index()];
            if let Some(task) = queue.pop_front() {
                if queue.is_empty() {
                    self.nonempty &= !(1 << priority.index());
                }
                self.len -= 1;
                return Some((task, priority));
            }
        }
        None
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
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
        assert_eq!(q.len(), 0);
    }
}
