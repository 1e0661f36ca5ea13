//! Atomics, threads and mutexes used by the lock-free structures, switched to loom's checked
//! versions under `--cfg loom` so the same code is model-checked.

#[cfg(loom)]
pub(crate) use loom::sync::{atomic, Mutex};
#[cfg(loom)]
pub(crate) use loom::thread;

#[cfg(not(loom))]
pub(crate) use std::sync::{atomic, Mutex};
#[cfg(not(loom))]
pub(crate) use std::thread;

/// Bounded polling before a thread parks. Under loom there is no polling: every wait goes
/// straight to the park protocol, whose interleavings are what the model explores.
pub(crate) struct Backoff {
    /// Read only once polling has gone on for a while: most waits end before that, and reading
    /// the clock costs as much as a short dispatch's bookkeeping.
    #[cfg(not(loom))]
    start: Option<std::time::Instant>,
    #[cfg(not(loom))]
    polls: u32,
    #[cfg(not(loom))]
    budget: std::time::Duration,
}

impl Backoff {
    pub(crate) fn new(budget: std::time::Duration) -> Backoff {
        #[cfg(loom)]
        let _ = budget;
        Backoff {
            #[cfg(not(loom))]
            start: None,
            #[cfg(not(loom))]
            polls: 0,
            #[cfg(not(loom))]
            budget,
        }
    }

    /// True while the caller should poll again (after a spin hint) rather than park.
    #[cfg(not(loom))]
    pub(crate) fn keep_polling(&mut self) -> bool {
        self.polls = self.polls.wrapping_add(1);
        // Reading the clock costs ~20 ns; check it every 64 polls.
        if self.polls % 64 != 0
            || self
                .start
                .get_or_insert_with(std::time::Instant::now)
                .elapsed()
                < self.budget
        {
            std::hint::spin_loop();
            true
        } else {
            false
        }
    }

    #[cfg(loom)]
    pub(crate) fn keep_polling(&mut self) -> bool {
        false
    }
}
