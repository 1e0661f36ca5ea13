//! Lets an idle worker take tasks out of another worker's private queues when that worker does
//! not come back to the scheduler: its thread is descheduled (another process, or the
//! hypervisor, took its core) or it runs a long task function. Without this, the tasks of a
//! private queue wait for their owner, however many workers are idle: on 2 cores with another
//! process on one of them, a tenth of the waits of F(20) on 2 workers took 4.4-8.6 ms instead of
//! 0.6 (oneTBB, whose deques any thread may steal from, at most 2.2-4.1).
//!
//! The owner keeps its queues free of atomic read-modify-writes and fences: it only brackets
//! each use of them (`enter`, `leave`: a store of its bracket depth and a load of the rescue
//! word, on a line that only it writes until a rescue). The rare rescuer pays instead
//! (`try_lock`): it claims the rescue word, then forces a full memory barrier on every running
//! thread of the process (`membarrier(2)`, MEMBARRIER_CMD_PRIVATE_EXPEDITED), then reads the
//! owner's depth, and if it is 0 confirms its claim with a compare-exchange (`LOCKED`). An
//! owner that finds a claim not yet confirmed when it enters a bracket withdraws it with a
//! compare-exchange instead of waiting for it, so that it never waits for a barrier, which can
//! take milliseconds on a VM whose vCPUs the host deschedules (the system call returns once
//! every CPU that runs a thread of the process has run the barrier). This is Dekker's mutual
//! exclusion with the owner's fence moved into the rescuer's system call (the asymmetric fence
//! of folly and liburcu):
//! - Exclusion. The barrier runs on the owner's thread at some point B between the claim and
//!   the rescuer's read (a descheduled thread passed a barrier when it was switched out). If
//!   the owner's depth store of a bracket precedes B, the rescuer reads a depth other than 0
//!   and gives up. Otherwise the owner's load of the rescue word follows B, which follows the
//!   claim, so the owner sees the claim: it withdraws it, or finds it confirmed (its withdrawal
//!   and the rescuer's confirmation are read-modify-writes of the one word: one of them fails)
//!   and waits, outside every bracket, until the rescuer unlocks. A rescuer whose claim was
//!   withdrawn fails to confirm it and gives up. A rescuer that claims after a withdrawal reads
//!   from it (Acquire after the owner's Release), so it reads the depth the owner stored
//!   before it, or a later one. The owner's store and load are kept in order by the compiler
//!   (`compiler_fence`); the processor may reorder them, which is what B undoes.
//! - Visibility. The owner leaves a bracket with a Release store of depth 0, which the
//!   rescuer's Acquire read of 0 synchronizes with; the rescuer unlocks with a Release store
//!   that the owner's Acquire load of the rescue word synchronizes with. So the queues' plain
//!   fields are handed back and forth with happens-before, as under a lock.
//! - Progress. A confirmed rescuer holds the lock only to move a few pointers; the owner waits
//!   for it only when it is about to touch its queues, and a rescuer that finds the owner
//!   inside a bracket, or its claim withdrawn, gives up at once.
//!
//! Where `membarrier` is unavailable (an older kernel, another OS, a sandbox that forbids it),
//! nothing is ever rescued, as before. Under loom both barriers are `fence(SeqCst)`, the model
//! of what the system call guarantees.
//!
//! A process registers for these barriers once, with a system call that waits for every CPU
//! (about 20 ms on the 2-vCPU developer VM, 6-23 ms on the 16-vCPU benchmark machine). It runs
//! on a thread of its own, which the first scheduler with several workers starts
//! (`register_in_background`); until it returns, nothing is rescued. The first rescue of a
//! process used to register: every idle worker that tried to rescue then waited for the call,
//! and the wait could not end meanwhile, so once per process a wait of F(20)-F(27) on 16
//! workers took that much longer (one repetition in each of the full benchmark's processes;
//! docs/PERFORMANCE.md, session 22).

use crate::sync::atomic::{AtomicU32, Ordering};

/// A worker's bracket depth and rescue word (see the module comment). Alone on its lines in the
/// worker, so that the owner's stores stay in its own cache.
#[derive(Default)]
pub struct QueueGuard {
    /// How many brackets the owner is inside; only the owner writes it.
    depth: AtomicU32,
    /// 0; or 1 + the rank of the worker that claimed the lock, with `LOCKED` once it confirmed
    /// the claim.
    rescuer: AtomicU32,
}

/// The rescue word's flag for a claim confirmed: the rescuer holds the lock.
const LOCKED: u32 = 1 << 31;

/// The owner's bracket: the owner may use its queues until it is dropped.
pub struct Bracket<'a> {
    guard: &'a QueueGuard,
    outer: u32,
}

impl Drop for Bracket<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // Release: a rescuer that reads 0 sees the queues as this bracket left them.
        self.guard.depth.store(self.outer, Ordering::Release);
    }
}

/// The rescuer's hold on another worker's queues: the owner stays out of them until it drops.
pub struct RescueLock<'a> {
    guard: &'a QueueGuard,
}

impl Drop for RescueLock<'_> {
    fn drop(&mut self) {
        // Release: the owner's Acquire load of 0 sees the queues as the rescuer left them.
        self.guard.rescuer.store(0, Ordering::Release);
    }
}

impl QueueGuard {
    pub fn new() -> QueueGuard {
        QueueGuard::default()
    }

    /// Owner: enters a bracket (nested ones cost a store and a load each).
    #[inline(always)]
    pub fn enter(&self) -> Bracket<'_> {
        let outer = self.depth.load(Ordering::Relaxed);
        self.depth.store(outer + 1, Ordering::Relaxed);
        light_barrier();
        // Acquire: pairs with the unlock of a rescue that ended before (module comment). In a
        // nested bracket a claim seen here is one that will give up: the outer bracket's depth
        // was stored before it.
        if outer == 0 && self.rescuer.load(Ordering::Acquire) != 0 {
            self.wait_for_rescuer();
        }
        Bracket { guard: self, outer }
    }

    /// Owner: enters a bracket outside every other one, as the worker's brackets around each
    /// use of its queues are (`Worker::bracket`): `enter` without the load of the depth,
    /// which it knows is 0, and with the same stores and loads as an outermost `enter` (so the
    /// argument of the module comment, and the model checked of `enter`, hold as they are).
    /// With two workers, a Fibonacci node's spawns and run-ahead take one per push and pop
    /// (callgrind, F(22), instructions per node: td_task_spawn 202 -> 199,
    /// `Worker::run_ahead_for` 152.0 -> 146.5).
    #[inline(always)]
    pub fn enter_outermost(&self) -> Bracket<'_> {
        debug_assert_eq!(self.depth.load(Ordering::Relaxed), 0, "inside a bracket");
        self.depth.store(1, Ordering::Relaxed);
        light_barrier();
        // Acquire: as in `enter`.
        if self.rescuer.load(Ordering::Acquire) != 0 {
            self.wait_for_rescuer();
        }
        Bracket {
            guard: self,
            outer: 0,
        }
    }

    /// Withdraws a claim not yet confirmed; waits, outside the bracket, while a confirmed one
    /// holds the lock (module comment). Returns inside the bracket, depth 1.
    #[cold]
    #[inline(never)]
    fn wait_for_rescuer(&self) {
        loop {
            // Acquire: as in `enter`.
            let claim = self.rescuer.load(Ordering::Acquire);
            if claim == 0 {
                return;
            }
            if claim & LOCKED == 0 {
                // AcqRel: a rescuer that claims after this reads from it, and so reads the
                // depth stored before it.
                if self
                    .rescuer
                    .compare_exchange(claim, 0, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            self.depth.store(0, Ordering::Release);
            while self.rescuer.load(Ordering::Acquire) != 0 {
                crate::sync::thread::yield_now();
            }
            self.depth.store(1, Ordering::Relaxed);
            light_barrier();
        }
    }

    /// Rescuer of rank `rank`: the lock when the owner is outside every bracket, else `None`
    /// (another rescuer holds it, the owner is inside a bracket or withdrew the claim, or the
    /// process cannot force barriers). Costs a system call that interrupts every running
    /// thread of the process.
    pub fn try_lock(&self, rank: usize) -> Option<RescueLock<'_>> {
        self.claim(rank)?.confirm()
    }

    /// The first step of `try_lock`: claims the lock, unless it is claimed or barriers are not
    /// available (yet).
    fn claim(&self, rank: usize) -> Option<Claim<'_>> {
        let claim = rank as u32 + 1;
        if !heavy_barrier_ready() || self.rescuer.load(Ordering::Relaxed) != 0 {
            return None;
        }
        // Acquire: reads from the owner's withdrawal of an earlier claim, if any (module
        // comment).
        self.rescuer
            .compare_exchange(0, claim, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        Some(Claim { guard: self, claim })
    }
}

/// A rescuer's claim on the lock, not yet confirmed: the owner may withdraw it.
struct Claim<'a> {
    guard: &'a QueueGuard,
    claim: u32,
}

impl<'a> Claim<'a> {
    /// The second step of `try_lock`: the barrier, then the lock if the owner is outside every
    /// bracket and has not withdrawn the claim.
    fn confirm(self) -> Option<RescueLock<'a>> {
        heavy_barrier();
        let rescuer = &self.guard.rescuer;
        // Acquire: pairs with the owner's Release when it left its last bracket.
        if self.guard.depth.load(Ordering::Acquire) == 0
            && rescuer
                .compare_exchange(
                    self.claim,
                    self.claim | LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            let lock = RescueLock { guard: self.guard };
            std::mem::forget(self);
            return Some(lock);
        }
        None // the drop takes the claim back
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        // Unless the owner withdrew it already (and another rescuer may have claimed since).
        let _ = self.guard.rescuer.compare_exchange(
            self.claim,
            0,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
}

/// Whether workers of this process can rescue tasks at all: the system lets it force memory
/// barriers on its threads. Registers for them if nothing has yet, and waits for the
/// registration to finish.
pub fn rescue_available() -> bool {
    heavy_barrier_available()
}

/// How long the latest barrier of a rescue took in this process (zero before the first): on a
/// VM whose host deschedules vCPUs it can take milliseconds, since it waits for every CPU that
/// runs a thread of the process, and a rescue should then be rarer (`Worker::wait_idle`).
pub fn barrier_cost() -> std::time::Duration {
    heavy_barrier_cost()
}

/// Starts the registration for the barriers that rescues need on a thread of its own, unless
/// it has started (module comment). A scheduler with several workers calls it when it is
/// created.
pub fn register_in_background() {
    register_barriers_in_background();
}

/// The owner's half of the asymmetric barrier: only the compiler is kept from reordering.
#[inline(always)]
fn light_barrier() {
    #[cfg(not(loom))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    crate::sync::atomic::fence(Ordering::SeqCst);
}

#[cfg(loom)]
fn heavy_barrier() {
    crate::sync::atomic::fence(Ordering::SeqCst);
}

#[cfg(loom)]
fn heavy_barrier_available() -> bool {
    true
}

#[cfg(loom)]
fn heavy_barrier_ready() -> bool {
    true
}

#[cfg(loom)]
fn register_barriers_in_background() {}

#[cfg(all(not(loom), target_os = "linux"))]
mod membarrier {
    use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
    use std::time::{Duration, Instant};

    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    /// Where this process's registration for expedited private barriers stands.
    static STATE: AtomicU8 = AtomicU8::new(NOT_STARTED);
    const NOT_STARTED: u8 = 0;
    const RUNNING: u8 = 1;
    const REGISTERED: u8 = 2;
    const REFUSED: u8 = 3;

    fn register() {
        // SAFETY: the system call takes and returns integers only.
        let ok = unsafe {
            libc::syscall(libc::SYS_membarrier, CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
        };
        // Release: a thread that reads REGISTERED calls the barrier after the registration.
        STATE.store(if ok { REGISTERED } else { REFUSED }, Ordering::Release);
    }

    /// Starts the registration on a thread of its own, once per process; if no thread can be
    /// started, registers on this one.
    pub(super) fn start() {
        if STATE
            .compare_exchange(NOT_STARTED, RUNNING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
            && std::thread::Builder::new()
                .name("taskdag-membarrier".into())
                .spawn(register)
                .is_err()
        {
            register();
        }
    }

    /// Whether the registration has succeeded, without waiting for it.
    pub(super) fn ready() -> bool {
        // Acquire: pairs with the store in `register`.
        STATE.load(Ordering::Acquire) == REGISTERED
    }

    /// Whether the registration succeeds, once it has finished (starting it if need be).
    pub(super) fn available() -> bool {
        start();
        loop {
            // Acquire: as in `ready`.
            match STATE.load(Ordering::Acquire) {
                REGISTERED => return true,
                REFUSED => return false,
                _ => std::thread::yield_now(),
            }
        }
    }

    /// How long the latest barrier took, in nanoseconds (0 before the first).
    static LAST_COST_NS: AtomicU64 = AtomicU64::new(0);

    /// A full memory barrier on every running thread of the process; its time is kept
    /// (`cost`).
    pub(super) fn barrier() {
        let start = Instant::now();
        // SAFETY: as above. It cannot fail once registered (`ready`), which the caller
        // checked.
        let r = unsafe { libc::syscall(libc::SYS_membarrier, CMD_PRIVATE_EXPEDITED, 0, 0) };
        debug_assert_eq!(r, 0, "membarrier failed after registration");
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: a measurement that only sets how patient rescuers are.
        LAST_COST_NS.store(ns, Ordering::Relaxed);
    }

    /// How long the latest barrier took (zero before the first).
    pub(super) fn cost() -> Duration {
        Duration::from_nanos(LAST_COST_NS.load(Ordering::Relaxed))
    }
}

#[cfg(all(not(loom), target_os = "linux"))]
fn heavy_barrier_available() -> bool {
    membarrier::available()
}

#[cfg(all(not(loom), target_os = "linux"))]
fn heavy_barrier_ready() -> bool {
    membarrier::ready()
}

#[cfg(all(not(loom), target_os = "linux"))]
fn register_barriers_in_background() {
    membarrier::start();
}

#[cfg(all(not(loom), target_os = "linux"))]
fn heavy_barrier() {
    membarrier::barrier();
}

#[cfg(all(not(loom), target_os = "linux"))]
fn heavy_barrier_cost() -> std::time::Duration {
    membarrier::cost()
}

#[cfg(all(not(loom), not(target_os = "linux")))]
fn heavy_barrier_available() -> bool {
    false
}

#[cfg(all(not(loom), not(target_os = "linux")))]
fn heavy_barrier_ready() -> bool {
    false
}

#[cfg(all(not(loom), not(target_os = "linux")))]
fn register_barriers_in_background() {}

#[cfg(all(not(loom), not(target_os = "linux")))]
fn heavy_barrier() {}

#[cfg(any(loom, not(target_os = "linux")))]
fn heavy_barrier_cost() -> std::time::Duration {
    std::time::Duration::ZERO
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_rescuer_gets_the_lock_only_outside_the_owners_brackets() {
        let guard = QueueGuard::new();
        if !heavy_barrier_available() {
            assert!(guard.try_lock(1).is_none());
            return;
        }
        {
            let _outer = guard.enter();
            let _inner = guard.enter();
            assert!(guard.try_lock(1).is_none());
        }
        let lock = guard.try_lock(1).expect("no bracket is open");
        assert!(
            barrier_cost() > std::time::Duration::ZERO,
            "the barrier was timed"
        );
        assert!(guard.try_lock(2).is_none(), "the lock is held");
        drop(lock);
        assert!(guard.try_lock(2).is_some(), "the lock was given back");
    }

    /// The registration runs on its own thread: a rescuer asks whether it is done and never
    /// waits for it; once it is, the lock is to be had wherever barriers are.
    #[test]
    fn the_registration_for_barriers_runs_in_the_background() {
        register_in_background();
        register_in_background();
        let guard = QueueGuard::new();
        let early = guard.try_lock(1);
        assert!(early.is_none() || heavy_barrier_ready());
        drop(early);
        let available = rescue_available();
        assert_eq!(heavy_barrier_ready(), available);
        assert_eq!(guard.try_lock(1).is_some(), available);
    }

    /// An owner that enters while a rescuer's barrier runs (between its claim and its
    /// confirmation) withdraws the claim instead of waiting; the rescuer then gives up.
    #[test]
    fn the_owner_withdraws_a_claim_that_is_not_confirmed() {
        let guard = QueueGuard::new();
        if !heavy_barrier_available() {
            return;
        }
        let claim = guard.claim(1).expect("nothing claimed yet");
        assert!(guard.claim(2).is_none(), "one claim at a time");
        let bracket = guard.enter();
        assert!(claim.confirm().is_none(), "the owner withdrew the claim");
        assert!(guard.try_lock(2).is_none(), "the owner is in its bracket");
        drop(bracket);
        let lock = guard.try_lock(2).expect("the owner left its bracket");
        drop(lock);
        // A claim given up without the owner returns the word to free.
        drop(guard.claim(1).expect("free again"));
        assert!(guard.try_lock(3).is_some());
    }

    #[test]
    fn the_owner_waits_for_a_rescue_to_end() {
        let guard = QueueGuard::new();
        if !heavy_barrier_available() {
            return;
        }
        // What the rescuer writes under the lock stands for the queues it changes.
        let queues = AtomicU32::new(0);
        let lock = guard.try_lock(1).expect("no bracket is open");
        std::thread::scope(|s| {
            let owner = s.spawn(|| {
                let _bracket = guard.enter();
                queues.load(Ordering::Relaxed)
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!owner.is_finished(), "the owner entered while a rescue ran");
            queues.store(1, Ordering::Relaxed);
            drop(lock);
            assert_eq!(
                owner.join().unwrap(),
                1,
                "the owner sees the rescuer's changes"
            );
        });
    }
}
