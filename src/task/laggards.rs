//! Workers that leave a wait late, or that lost their CPU during it, are left out of the next
//! waits for a while. Work-graph runs use the same record for lost cores (`work_graph/
//! lost_cores.rs`).
//!
//! A wait returns only when every worker it called in has left its loop (the dispatch joins
//! them), and an idle worker leaves only when its thread runs. A worker whose core another busy
//! process shares gets it back only after that process's time slice. Beside four busy
//! processes on the 16-core GPU machine, the DAG of F(20) on 16 workers was done after about
//! 0.3 ms, and then the wait waited 2.5-8 ms for the last worker to leave, in up to a third of
//! the waits (with unpinned threads, in all of them); some processes fell into a lockstep in
//! which every wait took a time slice. oneTBB, whose wait returns when its task group is done,
//! took 0.3 ms per wait (`bench/results/16-core-gpu-machine-session23-rescues-and-laggards.md`).
//!
//! The same slice is lost inside a wait when the worker is switched out while it holds work:
//! the task in hand and the parents on its stack that ran it ahead cannot be rescued by other
//! workers (executor.rs). Beside one busy loop, F(27) on 16 workers took one slice (3-4 ms) in
//! nearly every wait, and the late exits did not show it (session 30). So a worker also looks,
//! when it leaves a wait that took `LATE` or more, at how long its thread waited for its CPU
//! since it last looked (`run_delay.rs`); `LATE` or more is a lost core (`LostCoreFlags`),
//! which counts like a late exit of that worker.
//!
//! The waiting thread measures how long after its own part it waited for the others (the
//! worker that left last is late when that is more than `LATE`). A worker late or with a lost
//! core twice within `CONFIRM_WITHIN` is left out of the waits that start in the next
//! `FIRST_LEAVE`, doubled for each further strike less than `FORGET_AFTER` after the previous
//! leave ended, up to 2^(`MAX_STRIKES` - 1) times.
//!
//! Rank 0 is the waiting thread itself and always takes part, and the other process may as
//! well share its CPU (it did in several of session 31's processes beside one busy loop,
//! whose waits then all lost a slice). So the waiting thread looks too, after the wait; when it is struck out, it
//! is displaced instead: the last worker not out on its own account stands in (`stand_in`),
//! sits out, and the waiting thread runs the waits on the stand-in's CPU
//! (`Space::run_on_all_lazily`'s `home`). Leaving the stand-in out alone, with rank 0 sent
//! back to its own CPU at every wait as usual, did not help (session 31: beside a busy loop
//! pinned to rank 0's CPU, 35 of 40 waits of F(27) still lost a slice).
//!
//! A worker left out is not called in (`Recruit::only`): its thread sleeps in the pool, and its core is the other
//! process's. It counts as idle for the whole wait, which it is (executor.rs, "Termination"):
//! no task in hand, empty queues (its last wait ended with them empty), and nobody pushes into
//! them; a task handed to it on a request of an earlier wait would sit in its mailbox until an
//! idle worker raids it. Nobody asks it for work (`Worker::ask_for_work`). At most half of the
//! workers besides rank 0 are left out at once, and none where team tasks need whole teams of
//! several threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A worker that leaves this long after the waiting thread's own part is late; one that waited
/// this long for its CPU lost its core.
pub(crate) const LATE: Duration = Duration::from_millis(1);
/// Whether the calling thread, at the end of its part of a wait or run that took `took`, lost
/// its core: waited `LATE` or more for its CPU (`run_delay.rs`) since it last looked. It looks
/// only when `took` is `LATE` or more: a shorter one lost no time slice, and a look (a system
/// call, 0.3-0.5 us) would be a measurable part of the shortest waits.
pub(crate) fn lost_core(took: Duration) -> bool {
    took >= LATE && crate::run_delay::since_last_look().is_some_and(|waited| waited >= LATE)
}

/// Which workers of the current wait or run lost their core: set by each worker as it leaves,
/// read and cleared by the calling thread after the dispatch has joined them all.
pub(crate) struct LostCoreFlags {
    lost: Box<[AtomicBool]>,
    /// Set with any flag, so that the calling thread reads the others only then.
    any: AtomicBool,
}

impl LostCoreFlags {
    pub(crate) fn new(workers: usize) -> LostCoreFlags {
        LostCoreFlags {
            lost: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            any: AtomicBool::new(false),
        }
    }

    /// Worker `rank` lost its core (ranks beyond `new`'s count are not tracked).
    pub(crate) fn set(&self, rank: usize) {
        if let Some(flag) = self.lost.get(rank) {
            // Relaxed: read after the dispatch has joined every worker.
            flag.store(true, Ordering::Relaxed);
            self.any.store(true, Ordering::Relaxed);
        }
    }

    /// Whether any flag is set.
    pub(crate) fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Clears the flags; `record(rank)` for each that was set, if `count`.
    pub(crate) fn take(&self, count: bool, mut record: impl FnMut(usize)) {
        if !self.any() || !self.any.swap(false, Ordering::Relaxed) {
            return;
        }
        for (rank, lost) in self.lost.iter().enumerate() {
            if lost.swap(false, Ordering::Relaxed) && count {
                record(rank);
            }
        }
    }
}

/// How long a late worker is left out the first time. Beside four busy processes (F(20) on 16
/// workers, means of 1000 waits, session 23, without `CONFIRM_WITHIN`): 100 ms 14.2-21.5 ns per
/// node, 20 ms 22.5-25.0, never left out 59.6-75.8 (oneTBB 12.8-13.5).
const FIRST_LEAVE: Duration = Duration::from_millis(100);
/// Late exits that each double the leave, at most.
const MAX_STRIKES: u32 = 7;
/// A late exit this long after the end of the previous leave starts the count again.
const FORGET_AFTER: Duration = Duration::from_secs(2);
/// A worker with no leave behind it is left out only when it is late twice within this: a
/// host that deschedules a vCPU now and then makes single late exits of any worker, which a
/// leave would not prevent, while a worker whose core another process shares is late again
/// within a few waits.
const CONFIRM_WITHIN: Duration = Duration::from_millis(100);

/// The record of late exits of a scheduler's workers (by rank). The waiting thread's alone.
pub(crate) struct Laggards {
    workers: Vec<Record>,
    /// False where team tasks need every member of teams of several threads.
    enabled: bool,
}

#[derive(Clone, Copy, Default)]
struct Record {
    /// Left out of the waits that start before this.
    out_until: Option<Instant>,
    strikes: u32,
    /// A late exit not yet followed by a leave.
    suspect_since: Option<Instant>,
}

impl Laggards {
    /// For `workers` workers; `enabled` false leaves every worker in every wait (one worker,
    /// or teams of several threads).
    pub(crate) fn new(workers: usize, enabled: bool) -> Laggards {
        Laggards {
            workers: vec![Record::default(); workers],
            enabled,
        }
    }

    /// For a work-graph plan, which may run on spaces of different sizes: `workers` workers
    /// from now on, with a clean record when that is a change. Allocates nothing while
    /// `workers` is at most the number this was made for; more disable it.
    pub(crate) fn resize(&mut self, workers: usize) {
        if workers == self.workers.len() {
            return;
        }
        self.enabled = workers > 1 && workers <= self.workers.capacity();
        self.workers.clear();
        self.workers
            .resize(workers.min(self.workers.capacity()), Record::default());
    }

    /// Whether anybody can be left out (several workers, teams of one).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether worker `rank` takes part in a wait that starts at `now`.
    pub(crate) fn takes_part(&self, rank: usize, now: Instant) -> bool {
        rank == 0 || (!self.is_out(rank, now) && Some(rank) != self.stand_in(now))
    }

    fn is_out(&self, rank: usize, now: Instant) -> bool {
        self.workers[rank].out_until.is_some_and(|t| now < t)
    }

    /// While rank 0 is displaced (it lost its core), the worker that sits out a wait starting
    /// at `now` so that the waiting thread runs the wait on that worker's CPU: the last rank not
    /// out on its own account.
    pub(crate) fn stand_in(&self, now: Instant) -> Option<usize> {
        if !self.is_out(0, now) {
            return None;
        }
        (1..self.workers.len())
            .rev()
            .find(|&r| !self.is_out(r, now))
    }

    /// After a wait that ended at `now`: the last worker to leave was `last` (0 for none
    /// besides the waiting thread), `tail` after the waiting thread's own part ended.
    pub(crate) fn record(&mut self, last: usize, tail: Duration, now: Instant) {
        if last != 0 && tail >= LATE {
            self.strike(last, now);
        }
    }

    /// After a wait that ended at `now`: worker `rank` waited `LATE` or more for its CPU since
    /// it last looked (`lost_core`).
    pub(crate) fn record_lost_core(&mut self, rank: usize, now: Instant) {
        self.strike(rank, now);
    }

    /// A late exit or a lost core of worker `rank`: a suspect the first time, left out when it
    /// happens again soon (rank 0: displaced, `stand_in`).
    fn strike(&mut self, rank: usize, now: Instant) {
        if !self.enabled || rank >= self.workers.len() {
            return;
        }
        let out = (1..self.workers.len())
            .filter(|&r| !self.takes_part(r, now))
            .count();
        if out >= (self.workers.len() - 1) / 2 {
            return;
        }
        let w = &mut self.workers[rank];
        w.strikes = match w.out_until {
            Some(t) if now < t + FORGET_AFTER => (w.strikes + 1).min(MAX_STRIKES),
            _ => match w.suspect_since {
                Some(t) if now.duration_since(t) < CONFIRM_WITHIN => 1,
                _ => {
                    w.suspect_since = Some(now);
                    return;
                }
            },
        };
        w.suspect_since = None;
        w.out_until = Some(now + FIRST_LEAVE * (1 << (w.strikes - 1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_worker_is_left_out_for_a_while_and_longer_when_late_again() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut l = Laggards::new(8, true);
        assert!((0..8).all(|r| l.takes_part(r, t0)));
        l.record(3, ms(4), t0 - ms(1) - CONFIRM_WITHIN);
        l.record(3, ms(4), t0 - ms(1));
        assert!(
            l.takes_part(3, t0),
            "a late exit long after the first is a first again"
        );
        l.record(3, ms(4), t0);
        let first = FIRST_LEAVE;
        assert!(!l.takes_part(3, t0));
        assert!(!l.takes_part(3, t0 + first - ms(1)));
        assert!(l.takes_part(3, t0 + first), "back after the first leave");
        let t1 = t0 + first + ms(1);
        l.record(3, ms(4), t1);
        assert!(
            !l.takes_part(3, t1 + 2 * first - ms(1)),
            "the second leave is twice as long"
        );
        assert!(l.takes_part(3, t1 + 2 * first));
        // Strikes stop doubling at MAX_STRIKES.
        let mut t = t1 + 2 * first;
        for _ in 0..10 {
            l.record(3, ms(4), t);
            t += ms(10);
        }
        let last = t - ms(10);
        let longest = first * (1 << (MAX_STRIKES - 1));
        assert!(!l.takes_part(3, last + longest - ms(1)));
        assert!(l.takes_part(3, last + longest));
        // A late exit soon after the leave ends still counts; one long after starts again.
        let soon = last + longest + FORGET_AFTER - ms(1);
        l.record(3, ms(4), soon);
        assert!(!l.takes_part(3, soon + first), "still the longest leave");
        let later = soon + longest + FORGET_AFTER;
        l.record(3, ms(4), later);
        assert!(l.takes_part(3, later), "strikes forgotten: a suspect again");
        l.record(3, ms(4), later + ms(50));
        assert!(
            !l.takes_part(3, later + ms(50) + first - ms(1)),
            "a first leave"
        );
        assert!(l.takes_part(3, later + ms(50) + first));
    }

    #[test]
    fn only_late_exits_of_other_workers_count() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut l = Laggards::new(4, true);
        for _ in 0..2 {
            l.record(2, LATE / 2, t0);
            l.record(0, ms(10), t0);
            l.record(9, ms(10), t0);
        }
        assert!((0..4).all(|r| l.takes_part(r, t0)));
        l.record(2, LATE, t0);
        l.record(2, LATE, t0);
        assert!(!l.takes_part(2, t0), "late twice: left out");
        let mut teams = Laggards::new(4, false);
        teams.record(2, ms(10), t0);
        teams.record(2, ms(10), t0);
        assert!(
            teams.takes_part(2, t0),
            "disabled for teams of several threads"
        );
    }

    #[test]
    fn a_lost_core_counts_like_a_late_exit() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut l = Laggards::new(4, true);
        l.record_lost_core(3, t0);
        assert!(l.takes_part(3, t0), "once: a suspect");
        l.record(3, LATE, t0 + ms(1));
        assert!(!l.takes_part(3, t0 + ms(1)), "then a late exit: left out");
        assert!(l.takes_part(3, t0 + ms(1) + FIRST_LEAVE));
        let t1 = t0 + ms(1) + FIRST_LEAVE;
        l.record_lost_core(3, t1);
        assert!(
            !l.takes_part(3, t1 + 2 * FIRST_LEAVE - ms(1)),
            "lost again soon after the leave: twice as long"
        );
        let mut teams = Laggards::new(4, false);
        teams.record_lost_core(2, t0);
        teams.record_lost_core(2, t0);
        assert!(
            teams.takes_part(2, t0),
            "disabled for teams of several threads"
        );
    }

    #[test]
    fn a_displaced_rank_0_takes_the_core_of_the_last_worker_not_out() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut l = Laggards::new(6, true);
        assert_eq!(l.stand_in(t0), None);
        l.record_lost_core(0, t0);
        assert_eq!(l.stand_in(t0), None, "once: a suspect");
        l.record_lost_core(0, t0 + ms(1));
        let t1 = t0 + ms(1);
        assert_eq!(l.stand_in(t1), Some(5));
        assert!(l.takes_part(0, t1), "rank 0 always takes part");
        assert!(!l.takes_part(5, t1), "the stand-in sits out");
        assert!((1..5).all(|r| l.takes_part(r, t1)));
        // Worker 5 out on its own account: the next one stands in.
        l.record_lost_core(5, t1);
        l.record_lost_core(5, t1);
        assert_eq!(l.stand_in(t1), Some(4));
        assert!(!l.takes_part(4, t1) && !l.takes_part(5, t1));
        // Both leaves, begun at t1, end together.
        let t2 = t1 + FIRST_LEAVE;
        assert_eq!(l.stand_in(t2), None);
        assert!((1..6).all(|r| l.takes_part(r, t2)));
        // Displaced again soon after: twice as long.
        l.record_lost_core(0, t2 + ms(1));
        assert_eq!(l.stand_in(t2 + ms(1) + 2 * FIRST_LEAVE - ms(1)), Some(5));
        assert_eq!(l.stand_in(t2 + ms(1) + 2 * FIRST_LEAVE), None);
    }

    #[test]
    fn at_most_half_of_the_other_workers_are_left_out() {
        let t0 = Instant::now();
        let mut l = Laggards::new(9, true);
        for r in 1..9 {
            l.record(r, Duration::from_millis(5), t0);
            l.record(r, Duration::from_millis(5), t0);
        }
        let out = (1..9).filter(|&r| !l.takes_part(r, t0)).count();
        assert_eq!(out, 4);
        assert!(l.takes_part(0, t0));
    }
}
