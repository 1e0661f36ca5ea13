//! Priorities of tasks and work items (000 §2.2.1, §2.4.2): ready work of a higher priority runs
//! before ready work of a lower one.

/// A scheduling priority; `High` runs first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Priority {
    High = 0,
    #[default]
    Regular = 1,
    Low = 2,
}

impl Priority {
    /// All priorities, highest first; the index of each is its value.
    pub const ALL: [Priority; 3] = [Priority::High, Priority::Regular, Priority::Low];

    pub fn index(self) -> usize {
        self as usize
    }
}
