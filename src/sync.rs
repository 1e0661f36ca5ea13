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

/// Bounded polling before a thread parks: spinning at first, then, optionally, yielding the core
/// between polls, so that a thread that waits a little longer still reacts within microseconds
/// but gives way to any other thread that is ready to run on its core. Under loom there is no
/// polling: every wait goes straight to the park protocol, whose interleavings are what the
/// model explores.
pub(crate) struct Backoff {
    /// Read only once polling has gone on for a while: most waits end before that, and reading
    /// the clock costs as much as a short dispatch's bookkeeping.
    #[cfg(not(loom))]
    start: Option<std::time::Instant>,
    #[cfg(not(loom))]
    polls: u32,
    /// Polling with spin hints lasts this long...
    #[cfg(not(loom))]
    spin: std::time::Duration,
    /// ...and polling as a whole this long.
    #[cfg(not(loom))]
    budget: std::time::Duration,
    /// Whether the spinning phase is over.
    #[cfg(not(loom))]
    yielding: bool,
}

impl Backoff {
    /// Spins for `budget`, then tells the caller to park.
    pub(crate) fn new(budget: std::time::Duration) -> Backoff {
        Backoff::yielding_after(budget, budget)
    }

    /// Spins for `spin`, then polls with a yield of the core between polls until `budget` (at
    /// least `spin`) has passed, then tells the caller to park.
    pub(crate) fn yielding_after(
        spin: std::time::Duration,
        budget: std::time::Duration,
    ) -> Backoff {
        #[cfg(loom)]
        let _ = (spin, budget);
        Backoff {
            #[cfg(not(loom))]
            start: None,
            #[cfg(not(loom))]
            polls: 0,
            #[cfg(not(loom))]
            spin,
            #[cfg(not(loom))]
            budget,
            #[cfg(not(loom))]
            yielding: false,
        }
    }

    /// True while the caller should poll again (after a spin hint or a yield) rather than park.
    #[cfg(not(loom))]
    pub(crate) fn keep_polling(&mut self) -> bool {
        self.polls = self.polls.wrapping_add(1);
        // Reading the clock costs ~20 ns; check it every 64 polls.
        if self.polls % 64 == 0 {
            let elapsed = self
                .start
                .get_or_insert_with(std::time::Instant::now)
                .elapsed();
            if elapsed >= self.budget {
                return false;
            }
            self.yielding = elapsed >= self.spin;
        }
        if self.yielding {
            thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
        true
    }

    #[cfg(loom)]
    pub(crate) fn keep_polling(&mut self) -> bool {
        false
    }
}
