//! A worker's idle loop: it polls its mailbox (whole-instance jobs, shutdown) and the job slot
//! of the instance it currently belongs to (caller-first block dispatch), then parks (003
//! `sleep`/`wake`).
//!
//! Which slot a worker serves is its route: the root instance's slot from the start, a
//! sub-instance's slot while a partition runs. Routes change only through whole-instance jobs
//! that `run_instances` posts before and after the partition (space.rs), so each worker changes
//! its own route, between two deliveries, and reads it back after every delivery.

use super::mailbox::{Delivery, Mailbox};
use super::slot::Slot;
use crate::sync::thread;
use crate::sync::Backoff;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// How long an idle worker spins before it starts yielding its core between polls, and how long
/// it polls in all before it parks. Back-to-back dispatches (a time-step loop) then find workers
/// awake, and so do dispatches a little apart (a step's serial part in between), while a worker
/// that polls gives its core to any other ready thread; an idle pool stops polling after
/// `POLL_BEFORE_PARK`.
///
/// Why so long: waking parked workers is slow. Each is a futex wake from the dispatching thread,
/// one after the other, and in a virtual machine an idle vCPU takes tens of microseconds to run
/// again. Measured on the 16-core GPU machine (a VM; bench/work_graph, 16 workers, whose
/// benchmark resets the graph's outputs, about 1-2 ms, between runs): with workers parked after
/// 100 us, fib(25) ran at 1.6-2.5 ns per item and fib(30) at 0.8-1.0; polling for 2 ms, at
/// 0.45-0.51 and 0.38-0.51 (one worker: 3.2 and 3.6), in alternating processes of one call.
/// GCC's OpenMP likewise spins for a while (GOMP_SPINCOUNT) before it sleeps.
const SPIN_BEFORE_YIELD: Duration = Duration::from_micros(100);
pub(crate) const POLL_BEFORE_PARK: Duration = Duration::from_millis(2);

/// The slot a worker serves and its rank in that slot's instance.
pub(crate) struct Route {
    slot: Arc<Slot>,
    rank: usize,
    /// The last generation of the slot this worker looked at.
    seen: u64,
}

impl Route {
    pub(crate) fn new(slot: Arc<Slot>, rank: usize) -> Route {
        Route {
            slot,
            rank,
            seen: 0,
        }
    }

    /// Looks at the slot once: claims and runs this member's block of a generation it has not
    /// seen yet. Returns whether there was such a generation.
    pub(crate) fn help(&mut self) -> bool {
        self.slot.help(self.rank, &mut self.seen)
    }

    /// The last generation of the slot this member looked at.
    #[cfg(all(test, loom))]
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }
}

thread_local! {
    static ROUTE: RefCell<Option<(Arc<Slot>, usize)>> = const { RefCell::new(None) };
}

/// Makes the calling thread serve `slot` as rank `rank` once it is idle again.
pub(crate) fn set_route(slot: &Arc<Slot>, rank: usize) {
    ROUTE.with(|r| *r.borrow_mut() = Some((Arc::clone(slot), rank)));
}

/// Brings `route` up to date with the calling thread's last `set_route`.
pub(crate) fn refresh_route(route: &mut Option<Route>) {
    ROUTE.with(|r| {
        let wanted = r.borrow();
        let same = match (&*wanted, &*route) {
            (Some((slot, rank)), Some(cur)) => Arc::ptr_eq(slot, &cur.slot) && *rank == cur.rank,
            (None, None) => true,
            _ => false,
        };
        if !same {
            *route = wanted
                .as_ref()
                .map(|(slot, rank)| Route::new(Arc::clone(slot), *rank));
        }
    });
}

/// Serves the route's slot until something arrives in the mailbox, which it returns.
pub(crate) fn wait(mailbox: &Mailbox, route: &mut Option<Route>) -> Delivery {
    let mut backoff = Backoff::yielding_after(SPIN_BEFORE_YIELD, POLL_BEFORE_PARK);
    loop {
        if let Some(delivery) = mailbox.poll() {
            return delivery;
        }
        if route.as_mut().is_some_and(Route::help) {
            backoff = Backoff::yielding_after(SPIN_BEFORE_YIELD, POLL_BEFORE_PARK);
            continue;
        }
        if backoff.keep_polling() {
            continue;
        }
        park_until_news(mailbox, route.as_ref());
    }
}

/// Parks the mailbox's owner until something is posted to it or the route's slot publishes a
/// generation the route has not seen; returns at once if either already happened.
pub(crate) fn park_until_news(mailbox: &Mailbox, route: Option<&Route>) {
    if !mailbox.prepare_sleep() {
        return; // something was posted
    }
    if route.is_some_and(|r| !r.slot.announce_sleeper(r.seen)) {
        mailbox.cancel_sleep();
        return; // a dispatch was published
    }
    // A poster unparks us after replacing SLEEPING; a slot dispatch after reading it (slot.rs).
    // Both are re-checked after every return from park.
    while mailbox.is_sleeping() && route.map_or(true, |r| !r.slot.has_news(r.seen)) {
        thread::park();
    }
    mailbox.cancel_sleep();
}
