//! Workers that leave a wait late are left out of the next waits for a while.
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
//! So the waiting thread measures how long after its own part it waited for the others. When
//! that is more than `LATE` twice within `CONFIRM_WITHIN` for the same worker (the one that
//! left last), that worker is left out of the waits that start in the next `FIRST_LEAVE`,
//! doubled for each further late exit less than `FORGET_AFTER` after
//! the previous leave ended, up to 2^(`MAX_STRIKES` - 1) times. A worker left out is not
//! called in (`Recruit::only`): its thread sleeps in the pool, and its core is the other
//! process's. It counts as idle for the whole wait, which it is (executor.rs, "Termination"):
//! no task in hand, empty queues (its last wait ended with them empty), and nobody pushes into
//! them; a task handed to it on a request of an earlier wait would sit in its mailbox until an
//! idle worker raids it. Nobody asks it for work (`Worker::ask_for_work`). At most half of the
//! workers besides rank 0 are left out at once, and none where team tasks need whole teams of
//! several threads. Rank 0 is the waiting thread itself and always takes part.

use std::time::{Duration, Instant};

/// A worker that leaves this long after the waiting thread's own part is late.
const LATE: Duration = Duration::from_millis(1);
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

    /// Whether anybody can be left out (several workers, teams of one).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether worker `rank` takes part in a wait that starts at `now`.
    pub(crate) fn takes_part(&self, rank: usize, now: Instant) -> bool {
        rank == 0 || self.workers[rank].out_until.map_or(true, |t| now >= t)
    }

    /// After a wait that ended at `now`: the last worker to leave was `last` (0 for none
    /// besides the waiting thread), `tail` after the waiting thread's own part ended.
    pub(crate) fn record(&mut self, last: usize, tail: Duration, now: Instant) {
        if !self.enabled || last == 0 || last >= self.workers.len() || tail < LATE {
            return;
        }
        let out = (1..self.workers.len())
            .filter(|&r| !self.takes_part(r, now))
            .count();
        if out >= (self.workers.len() - 1) / 2 {
            return;
        }
        let w = &mut self.workers[last];
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
