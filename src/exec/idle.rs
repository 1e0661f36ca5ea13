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

/// How long an idle worker spins, polling its mailbox and its slot, before it parks, unless
/// `td_init_args.idle_spin_us` says otherwise. Back-to-back dispatches (a time-step loop) and
/// dispatches a few milliseconds apart (a step's serial part in between) then find workers
/// awake; an idle pool stops burning cores after this long. GCC's OpenMP spins in the same way
/// before it sleeps (`GOMP_SPINCOUNT`), Intel's OpenMP for 200 ms (`KMP_BLOCKTIME`).
///
/// Why so long: waking parked workers is slow. Each is a futex wake from the dispatching thread,
/// one after the other, and in a virtual machine an idle vCPU takes tens of microseconds to run
/// again. Measured on the 16-core GPU machine (a VM; bench/work_graph on 16 workers, whose
/// benchmark resets and checks the graph's outputs, about 1-3 ms, between runs), ns per item:
/// parking after 100 us, fib(30) 0.70-1.02 and fib(25) 1.40-3.09; spinning 2 ms, then parking,
/// 0.24-0.36 and 0.34-0.79 in most processes, with whole processes at 1.3-1.9 on fib(30) (the
/// pause between runs exceeded 2 ms); spinning 5 ms, 0.43-0.81 and 0.52-0.86, with no such
/// process (but a first repetition of fib(25) at 14 in two of three, as with 50 ms); one
/// worker 2.9-5.9 and 3.5-3.8 (two machines). Yielding the core between polls after the first
/// 100 us, which would leave it to other ready threads, kept fib(25) at 1.26-1.42, about as
/// slow as parking, against 0.34-0.41 for spinning in the same call.
///
/// A pool with more threads than the process has CPUs spins only briefly: a spinning worker
/// would hold a CPU that another thread of the pool needs (libgomp likewise cuts its spin count
/// when it has more threads than CPUs).
const DEFAULT_IDLE_SPIN: Duration = Duration::from_millis(5);
const OVERSUBSCRIBED_IDLE_SPIN: Duration = Duration::from_micros(100);

/// The idle spin of a pool of `threads` threads when its creator did not choose one.
pub(crate) fn default_spin(threads: usize) -> Duration {
    if oversubscribed(threads) {
        OVERSUBSCRIBED_IDLE_SPIN
    } else {
        DEFAULT_IDLE_SPIN
    }
}

/// Whether a pool of `threads` threads has more of them than the process has CPUs.
pub(crate) fn oversubscribed(threads: usize) -> bool {
    let cpus = crate::topology::available_cpus().len();
    cpus != 0 && threads > cpus
}

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
pub(crate) fn wait(mailbox: &Mailbox, route: &mut Option<Route>, spin: Duration) -> Delivery {
    let mut backoff = Backoff::new(spin);
    loop {
        if let Some(delivery) = mailbox.poll() {
            return delivery;
        }
        if route.as_mut().is_some_and(Route::help) {
            backoff = Backoff::new(spin);
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
