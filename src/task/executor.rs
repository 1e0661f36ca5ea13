//! The worker loop of a wait (000 §2.3.3, 002 §3.3.2): find a ready task by priority, run it,
//! complete or respawn it; go idle when nothing is available, and end when the whole DAG is done.
//!
//! ## Where a worker looks, and what "available to it" means
//! For each priority from High to Low, a worker looks in: (1) its private queue, (2) the
//! injection stack of host-spawned tasks, (3) if it leads a team, the team-task stack. (2) and
//! (3) are skipped with one load each when their count hints (`Shared::shared_ready`,
//! `team_ready`) are zero, and both with one load when the summary hint `shared_ready[ANY_READY]`
//! is not positive; then the highest non-empty private priority is a bit scan away
//! (`LocalQueues::pop_highest`). A private High task needs not even that load: nothing can come
//! before it. The hints are changed after each push (Release) and after each pop, so they may
//! lag the stacks briefly (even go negative for a moment), never for good: a task missed because
//! of a lagging hint is found at a later look, and termination does not read the hints (it
//! examines the stacks, see below). It runs the first task it finds. A task is *available* to a
//! worker when it is in one of these places at the moment the worker examines that place, so a
//! worker never takes a lower-priority task while a higher-priority one was available to it
//! during its search. Within a place, the newest ready task runs first (LIFO, 002 §2.1.2). With
//! one worker everything is in its own queues and the order is exactly: highest priority first,
//! newest first within a priority (host-spawned tasks, in the injection stack, after the
//! worker's own tasks of the same priority).
//!
//! ## How idle workers get work: they ask
//! Tasks in another worker's private queue are not available. An idle worker asks the other
//! workers for one, in turn, one every `REQUEST_EVERY` polls: it writes 1 + its rank into the
//! other's `request` word unless a request is there already (`ask_for_work`). A busy worker
//! looks at its own `request` before each task it runs (`share_on_request`) and after each push
//! that leaves no High task in its queue (`share_after_push`), and when asked hands its oldest
//! task (of its highest non-empty priority: the largest piece of work in a recursion) to the
//! asker's `mailbox`, a stack only the asker pops; the asker moves what it finds there into its
//! private queue (`take_mail`).
//! So a busy worker reads no line that other workers write until one asks it, and a task goes
//! to one idle worker, not to a shared stack that every idle worker rushes at. Before this
//! (session 9's code), busy workers read the shared idle count on every push and published to
//! shared stacks while idle workers outnumbered the tasks there: those lines changed with every
//! idle period and publication (about 1100 times per wait at 16 workers, whatever the size),
//! each change a cache miss for every busy worker, which made F(20) on 16 workers spend
//! 1.5x the cycles per task of F(30); on the 16-core machine F(20) on 16 workers went from
//! 21.5-26.2 to 13.8-16.3 ns per node (`bench/results/16-core-gpu-machine-session10-requests.md`).
//! A task handed to a worker that is not running then (its thread descheduled) or that found
//! work meanwhile would wait for it: every `RAID_EVERY` polls an idle worker also takes a task
//! from any other worker's mailbox (`full_mailbox`). Requests are hints: a lost or stale one
//! only delays a task, and no worker waits for an answer, so they bear on neither correctness
//! nor termination.
//! The other way round, an idle worker reads of another worker only lines that the other does
//! not write at every task, each alone on its lines: its `mailbox` and `request` (written by
//! the workers that hand and ask) and `takes_part` (set between waits). When idle workers read
//! each worker's `rank` and `takes_part` as they looked for work, which lay beside the owner's
//! private queues, every such read made the owner's next write to its queues a miss. Apart,
//! F(17) on 16 workers of the GPU machine went from 17.3 to 14.7 ns per node and on 8 from
//! 19.8 to 17.2 (docs/PERFORMANCE.md, session 38).
//!
//! ## Rescue: a worker that does not come back
//! A busy worker answers only between tasks, one task per request, so one that stays in a long
//! task function or whose thread lost its core would keep its queued tasks from every idle
//! worker. An idle worker whose request to it stays unanswered for `RESCUE_AFTER` (or four times
//! the latest rescue's barrier, `rescue_patience`) takes half of its queued tasks itself
//! (`rescue`; one victim per idle period), under the lock of `queue_guard.rs`, which the owner's
//! brackets around every use of its queues make safe without an atomic read-modify-write on
//! the owner's side. An idle worker answers requests at once, with nothing, so that it is not
//! taken for one that does not come back. The rescuer leaves idle before it looks, as a worker
//! that raids a mailbox does, so a rescue does not bear on termination. On 16 workers of the
//! GPU machine, a task that spawned 150 children of 1 ms and then worked 10 ms itself took
//! 82-84 ms without it, 12-13 ms with it (`bench/results/16-core-gpu-machine-session12-rescue.md`).
//!
//! ## Termination (002 §3.3.2, by an equivalent of the ready-plus-executing count)
//! A worker that finds nothing increments the idle count of `Shared::idle`; one that leaves idle
//! adds `IDLE_EPOCH_ONE - 1`, which also bumps the epoch in the upper bits. A worker is idle only
//! with an empty private queue and no task in hand, and only non-idle workers push tasks. The
//! DAG is done when an idle worker reads the word with all workers idle (`s1`), finds every
//! shared stack and every mailbox empty, and reads the word again unchanged (`s2`): no worker
//! left idle between the reads (the epoch did not move), so nobody pushed or popped during the
//! scan (a worker pops from a mailbox, its own or another's, only after leaving idle), and the
//! empty stacks, mailboxes and private queues with no task running mean no task is ready or
//! executing. Ordering: pushes and unlocks of the stacks and mailboxes are Release and the scan's loads Acquire, so a pop or push
//! the scan observes happens-before `s2`; a worker's leave, which precedes its pop, would then
//! be visible to `s2` (SeqCst). Entities still waiting at that point can never run: `wait`
//! reports them as a deadlock.
//!
//! ## Starting alone
//! A wait starts on its calling thread, rank 0, alone: the other workers are not dispatched
//! yet, and the idle count starts at n - 1, counting them idle (`Scheduler::wait`), which they
//! are in the sense above: no task in hand, empty queues, no push. Rank 0's `request` word holds
//! `RECRUIT`, so the look at it that every push and every task already makes (`answer`) notices
//! when a second task is ready: a spawn by a running task, two tasks queued after a push, or
//! anything queued or visible when rank 0 takes a task. Rank 0 then calls in the others
//! (`Recruit::only`), once: those that take part in this wait (a worker late to leave an earlier
//! one sits out a while, `laggards.rs`; one that never runs is idle all wait long, with empty
//! queues, and nobody asks it for work). They start through the instance's job slot, which
//! every idle worker sees at once (recruit.rs). Each starts in `wait_idle` without counting
//! itself again and, like any idle worker, leaves idle before it takes a task, so the
//! termination argument above holds as it is; one that starts after the end finds `done` and
//! leaves, and one that has not started when rank 0 leaves does not run at all
//! (`Latecomers::Skip`): it never left idle, so it holds no task. A team task calls
//! them in when it is made ready or run, since its team's members must take part. So a wait of
//! one task, or of tasks that become ready one at a time (a respawn chain, a chain of
//! dependences), runs on the calling thread alone and costs what it costs with one worker: one
//! task took 7.8 us on 16 workers of the GPU machine, with every worker dispatched, idling and
//! leaving, and 0.63 us now (docs/PERFORMANCE.md, session 16); a wait with parallel work calls
//! the others in at its first spawn.

use super::context::TaskContext;
use super::header::{Access, TaskHeader, INTERNAL_REF};
use super::place::{Count, Place};
use super::queue_guard;
use super::scheduler::{Shared, ANY_READY, IDLE_COUNT_MASK, IDLE_EPOCH_ONE};
use super::statistics::Rooms;
use super::team_task::{ExecutionRecord, Respawn, TeamState};
use super::worker::{CurrentWorker, Worker, RECRUIT};
use crate::exec::Recruit;
use crate::priority::Priority;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Tasks run inside spawns (the single-worker mitigation) and inside `respawn_when_all` calls
/// (`Worker::run_ahead`) nest at most this deep, so that the stack stays bounded.
const MAX_NESTING: u32 = 32;
/// An idle worker of a wait spins on its core for the space's idle spin (5 ms unless
/// `td_init_args.idle_spin_us` says otherwise) before it yields the core between polls, and
/// reads the clock every this many polls to know. It used to yield after 64 polls: beside one
/// busy process on the 16-core GPU machine, 16 workers then lost a time slice (about 4 ms) in
/// most waits of F(20), which take 0.3 ms (a median of 182 ns per node), since a yield gives
/// the core to the other process for its slice and the wait ends only when every worker has
/// left it; spinning, 11.7-14.1 ns, with 62-82 of 1000 waits still 2 ms longer than the median,
/// and the same figures as before when alone (`docs/PERFORMANCE.md`, session 12). A pool with
/// more threads than CPUs yields at once, as before: its idle workers must leave their cores to
/// the busy ones.
const SPIN_CHECK_POLLS: u32 = 64;
/// An idle worker asks another for a task when it becomes idle and then every this many polls
/// (`ask_for_work`, module comment), about a microsecond. Measured on the 16-core machine
/// against 4 and 64 (`bench/results/16-core-gpu-machine-session10-requests.md`): 4 was no
/// faster, and 64 left F(20) on 16 workers 18-33% slower in call 3 (not in call 2).
const REQUEST_EVERY: u32 = 16;
/// An idle worker takes a task from another worker's mailbox every this many polls (module
/// comment): a task handed over waits at most about that long for a worker that is not
/// running.
const RAID_EVERY: u32 = 32;
/// An idle worker starts handing over what it would hand over when the wait ends
/// (`hand_over_some`) after this many polls, about as long as a request for work waits. At the
/// end of a wait every worker returned its cached blocks at once, and the misses on the pool's
/// shared lines made that 30-120 ns a block: 3-8 us for the last worker to leave on 16 workers
/// of the GPU machine. Workers that idle before the end now do it then; from the DAG's end to
/// `td_wait`'s return went from 4.0-10.1 us to 2.9-6.5 (F(10)-F(24)), with F(24) and F(30) as
/// fast per node as before (docs/PERFORMANCE.md, session 37).
const HAND_OVER_AFTER_POLLS: u32 = 16;
/// Cached blocks an idle worker returns to the pool per poll.
const HAND_OVER_BLOCKS: usize = 4;
/// An idle worker looks at the clock every this many polls, to see whether it is time to
/// rescue tasks (`rescue`).
const RESCUE_POLLS: u32 = 64;
/// How long a request of an idle worker stays unanswered before that worker tries to rescue
/// tasks from the one it asked (`rescue`): far longer than a busy worker takes to look at its
/// requests (a task's time; idle ones answer at once, with nothing), far shorter than the time
/// slices of a descheduled thread (milliseconds). Each attempt that finds nothing doubles the
/// time before the next one, up to 2^`MAX_RESCUE_MISSES` times this, so that a worker that
/// runs one long task with nothing queued is interrupted rarely (each attempt interrupts every
/// running worker of the process once).
const RESCUE_AFTER: Duration = Duration::from_micros(50);
const MAX_RESCUE_MISSES: u32 = 7;
/// A rescue also waits at least this many times as long as the process's latest rescue barrier
/// took (`queue_guard::barrier_cost`). The barrier waits for every CPU that runs a thread of
/// the process, so on a VM whose host deschedules vCPUs it took up to 6.3 ms, and the wait
/// cannot end while a rescuer is in it: on such a VM (16 workers of the GPU machine, session
/// 22, call 15) waits of F(20) that rescued stalled for up to 65 ms, against at most 3.2 ms in
/// a build that never rescues. A worker that has stayed away four barriers' time is likely to
/// stay away longer than one more.
const BARRIER_PATIENCE: u32 = 4;

/// How long a request stays unanswered before its asker rescues, after `misses` attempts in a
/// row that took nothing, when the latest rescue barrier took `barrier`.
fn rescue_patience(misses: u32, barrier: Duration) -> Duration {
    RESCUE_AFTER
        .max(barrier.saturating_mul(BARRIER_PATIENCE))
        .saturating_mul(1 << misses)
}

/// Who uses a task's future through references other than those counted in `refs`, as far as
/// the executor of its last run knows: tasks may use a future through another task's reference
/// (a `td_future*` in shared memory, docs/tasks.md "Threads"), unless the holder lent it to
/// `TaskContext::respawn_when_all_private`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holders {
    /// Anyone: a task taken from the queues, or run ahead for `respawn_when_all`.
    Anyone,
    /// Only the task this thread runs it ahead for (`run_ahead` for `respawn_when_all_private`),
    /// which waits, inside the call, for it to return (`Place::complete_task_run_ahead`).
    CallerOnly,
}

impl Holders {
    /// `CallerOnly` if `caller_only`, else `Anyone`: for code generic over a constant.
    #[inline(always)]
    pub(crate) const fn of(caller_only: bool) -> Holders {
        if caller_only {
            Holders::CallerOnly
        } else {
            Holders::Anyone
        }
    }
}

/// How a run of a task ended (`Worker::execute`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The task completed.
    Completed,
    /// The task completed and made ready a task that waited on it, the one the caller's loop
    /// would take next, without queuing it: the caller runs it now (`Place::complete_task_next`,
    /// one worker only).
    Woke(NonNull<TaskHeader>),
    /// The task respawned and was scheduled.
    Scheduled,
    /// The task respawned with no dependence at High priority and was not scheduled: the
    /// caller runs it again now (`Worker::finish`'s `again`).
    RunsAgain,
}

/// The context of every single task one loop runs, built once per loop: only its task changes
/// from run to run (`TaskContext::set_task`), and taking its record's respawn request after a
/// run leaves the record as new. Built for each run instead, the context and the record cost
/// one worker 12 instructions more per Fibonacci node and two workers 11 (callgrind, F(22):
/// 736 -> 724 and 837 -> 826; the loops run 1.5 tasks per node, and `run_ready_tasks` is
/// entered once per two nodes). The context holds a copy of the loop's place
/// (`TaskContext::new`): were it `place`, which the task function can reach through the
/// context, every use of its fields after the call would load them again, and in
/// `run_ready_tasks` they are constants. (No call receives `place` itself: out-of-line steps
/// take its fields, `Place::out_of_line`. A worker's place never sets `scheduler_unused`.)
/// The loop passes the context's record beside it (`execute`), not in this struct: the task
/// function can reach the context, so a field beside it was loaded again after each run, where
/// the loop's own reference is an address on its stack (callgrind, F(22): `run_ready_tasks`
/// 121.4 -> 119.4 instructions per node with one worker, `run_ahead_for` 127 -> 125 with two).
pub(crate) struct SingleRuns<'a> {
    context: TaskContext<'a>,
}

impl<'a> SingleRuns<'a> {
    /// For single tasks that `worker` runs at `place`, with `record`, which no run uses yet.
    #[inline(always)]
    fn new(place: &Place<'a>, worker: &'a Worker, record: &'a ExecutionRecord) -> Self {
        let member = worker.single_team.member(0, 0, 1);
        SingleRuns {
            context: TaskContext::new(place, NonNull::dangling(), member, record),
        }
    }
}

/// The context of the running task that `Worker::run_ahead_for` lends to every task it runs,
/// and that task (`owner`), whose context it is again when this is dropped.
#[derive(Clone, Copy)]
struct Lent<'c, 'a> {
    context: &'c TaskContext<'a>,
    owner: NonNull<TaskHeader>,
}

impl Lent<'_, '_> {
    /// Makes the context its owner's again.
    #[inline(always)]
    fn give_back(&self) {
        self.context.set_task(self.owner);
    }
}

/// The record and the context of the task the worker's thread runs now (`Owned::record`,
/// `worker::running_context`).
#[derive(Clone, Copy)]
struct Running {
    record: *const ExecutionRecord,
    context: *const (),
}

/// How `Worker::execute` makes a single task's context and record the running ones.
#[derive(Clone, Copy)]
enum Calls<'c, 'a> {
    /// Gives back after each run these, the running ones the loop found when it started: a
    /// task function, a nested loop or anything else the loop runs between its runs gives back
    /// what it changes before it returns, so they stay the same for the whole loop. Read once,
    /// where saving them at each run (`run_with`) took a load and a store of both (callgrind,
    /// F(22), one worker: `run_ready_tasks` 119.4 -> 117.4 instructions per node).
    Restore(Running),
    /// The context is a running task's, lent (`run_ahead_for`), and so the running one already.
    Lent(Lent<'c, 'a>),
}

/// Gives a lent context back to its owner when dropped.
struct Lending<'c, 'a>(Lent<'c, 'a>);

impl Drop for Lending<'_, '_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.give_back();
    }
}

impl Worker {
    /// Rank 0's part of a wait: its loop, run alone until a second task is ready, when it calls
    /// in the other workers (module comment, "Starting alone").
    pub(crate) fn run_lead(&self, shared: &Shared, recruit: &Recruit<'_>) {
        let alone = shared.workers.len() > 1;
        if alone {
            // SAFETY: the worker's thread, before its loop; cleared below, before `recruit` goes.
            unsafe { self.owned().recruit = (recruit as *const Recruit<'_>).cast() };
            // Relaxed: no other worker runs yet; `recruit` publishes what follows.
            self.request.store(RECRUIT, Ordering::Relaxed);
        }
        self.run_loop(shared, false);
        if alone {
            // SAFETY: as above, after the loop.
            unsafe { self.owned().recruit = std::ptr::null() };
            // Relaxed: only this thread writes RECRUIT; a request an idle worker left stays.
            let _ = self
                .request
                .compare_exchange(RECRUIT, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// The loop one thread runs during a wait. A worker called in by rank 0 (`recruited`)
    /// starts idle, as the wait counted it.
    pub(crate) fn run_loop(&self, shared: &Shared, recruited: bool) {
        let _current = CurrentWorker::enter(shared, self);
        let place = Place::worker(shared, self);
        let record = ExecutionRecord::new();
        let single = SingleRuns::new(&place, self, &record);
        let outer = self.running();
        let team = self.team(shared);
        let team_rank = self.rank % shared.team_size;
        let leader = team_rank == 0;
        if recruited && self.wait_idle(shared, team, leader, true) {
            self.leave(shared);
            return;
        }
        loop {
            if !leader {
                // SAFETY: the worker's thread; a short borrow.
                let seen = unsafe { &mut self.owned().team_seq };
                if let Some(task) = team.take_post(seen) {
                    self.run_as_member(&place, task, team, team_rank);
                    continue;
                }
            }
            if let Some(mut task) = self.find_task(shared, leader, place.access) {
                loop {
                    self.share_on_request(shared);
                    match self.execute(
                        &place,
                        task,
                        Holders::Anyone,
                        &single.context,
                        &record,
                        false,
                        Calls::Restore(outer),
                    ) {
                        Ended::Woke(waiter) => task = waiter,
                        _ => break,
                    }
                }
                continue;
            }
            if self.take_mail() {
                continue;
            }
            if self.wait_idle(shared, team, leader, false) {
                break;
            }
        }
        self.leave(shared);
    }

    /// Leaves the wait: `end_wait`, and a note of who left last (`laggards.rs`).
    fn leave(&self, shared: &Shared) {
        self.end_wait(shared);
        if self.rank != 0 {
            #[cfg(test)]
            if shared.leave_late.load(Ordering::Relaxed) == self.rank {
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
            // Relaxed: read after the dispatch has joined every worker.
            shared.last_to_leave.store(self.rank, Ordering::Relaxed);
            if shared.tracks_lost_cores && super::laggards::lost_core(shared.wait_time()) {
                shared.lost_cores.set(self.rank);
            }
        }
    }

    fn team<'s>(&self, shared: &'s Shared) -> &'s TeamState {
        &shared.teams[self.rank / shared.team_size]
    }

    /// The highest-priority available task (module comment). `access` is the wait's.
    #[inline]
    pub(crate) fn find_task(
        &self,
        shared: &Shared,
        leader: bool,
        access: Access,
    ) -> Option<NonNull<TaskHeader>> {
        let _bracket = self.bracket(access);
        // SAFETY: the worker's thread, in a bracket where needed; a short borrow.
        let local = unsafe { self.queues() };
        // A private High task is the answer whatever the other places hold: none has a higher
        // priority, and at each priority the worker's own queue comes first. So no look at the
        // shared hints, whose line changes with every publication and take: with several
        // workers, most searches of a Fibonacci DAG end here.
        if let Some(task) = local.pop_high() {
            return Some(task);
        }
        // Next: nothing outside the private queues (one load), so the highest non-empty
        // private priority is the answer.
        if !shared.any_visible() {
            return local.pop_highest();
        }
        self.find_task_anywhere(shared, leader)
    }

    /// `find_task` when other places may hold tasks: each priority, highest first, everywhere.
    /// Inside `find_task`'s bracket, where needed.
    #[inline(never)]
    fn find_task_anywhere(&self, shared: &Shared, leader: bool) -> Option<NonNull<TaskHeader>> {
        for priority in Priority::ALL {
            let p = priority.index();
            // SAFETY: the worker's thread, in the caller's bracket; a short borrow.
            if let Some(task) = unsafe { self.queues() }.pop(priority) {
                return Some(task);
            }
            if shared.shared_ready[p].load(Ordering::Relaxed) > 0 {
                if let Some(task) = shared.injection[p].pop() {
                    shared.shared_ready[p].fetch_sub(1, Ordering::Relaxed);
                    shared.shared_ready[ANY_READY].fetch_sub(1, Ordering::Relaxed);
                    return Some(task);
                }
            }
            if leader && shared.team_ready[p].load(Ordering::Relaxed) > 0 {
                if let Some(task) = shared.team_queue[p].pop() {
                    shared.team_ready[p].fetch_sub(1, Ordering::Relaxed);
                    shared.shared_ready[ANY_READY].fetch_sub(1, Ordering::Relaxed);
                    return Some(task);
                }
            }
        }
        None
    }

    /// Hands the oldest private task to the idle worker that asked for one, if one did (module
    /// comment). The test is inlined: one load of a line that only changes when somebody asks.
    #[inline(always)]
    pub(crate) fn share_on_request(&self, shared: &Shared) {
        // Relaxed: a hint. A request seen late delays the idle worker by a task; one that is
        // stale (the asker found work meanwhile) hands it a task it runs after its own.
        let request = self.request.load(Ordering::Relaxed);
        if request != 0 {
            self.answer(shared, request, false);
        }
    }

    /// `share_on_request` after a push, except while a High task is queued: the request then
    /// waits for the next task this worker runs. A task of 000 Fig. 3.4 pushes its High child
    /// F(n-2) and then its Regular child F(n-1); answered at those pushes, a request got the
    /// High child of the deepest level, about the smallest piece of work there is, and the
    /// asker soon asked again. Answered when this worker has taken that child to run, it gets
    /// the oldest Regular task, the largest piece. F(20) on 16 workers: 12.55 -> 10.93 ns per
    /// node, mean of six processes (docs/PERFORMANCE.md, session 15). A task that pushes only
    /// Regular or Low tasks is asked at every push, as before.
    #[inline(always)]
    pub(crate) fn share_after_push(&self, shared: &Shared) {
        let request = self.request.load(Ordering::Relaxed);
        if request != 0 {
            self.answer(shared, request, true);
        }
    }

    /// Answers the non-zero `request` word: hands the asker a task (`hand_oldest`), or, for
    /// rank 0's `RECRUIT`, calls in the other workers if a second task is ready. `after_push`:
    /// right after a push, else right before this worker runs a task it took.
    #[inline(never)]
    fn answer(&self, shared: &Shared, request: usize, after_push: bool) {
        if request != RECRUIT {
            self.hand_oldest(shared, request - 1, after_push);
        } else if self.has_second_task(shared, after_push) {
            self.recruit(shared);
        }
    }

    /// Whether another task is ready besides the one this worker runs or is about to run.
    fn has_second_task(&self, shared: &Shared, after_push: bool) -> bool {
        // SAFETY: the worker's thread, in a bracket; short borrows.
        let _bracket = self.guard.enter();
        let queued = unsafe { self.queues() }.len();
        if after_push {
            // A task function running here pushed a task (a spawn), or two are queued.
            super::worker::runs_task() || queued >= 2
        } else {
            queued >= 1 || shared.work_visible(true)
        }
    }

    /// Calls in the other workers of the wait rank 0 runs alone (`RECRUIT`), once: those that
    /// take part in it (`laggards.rs`). Nothing on other workers or afterwards. The worker's
    /// thread.
    #[cold]
    #[inline(never)]
    pub(crate) fn recruit(&self, shared: &Shared) {
        // SAFETY: the worker's thread; a short borrow.
        let recruit = std::mem::replace(unsafe { &mut self.owned().recruit }, std::ptr::null());
        // SAFETY: set by `run_lead` for the duration of its loop, which runs this.
        if let Some(recruit) = unsafe { recruit.as_ref() } {
            // Relaxed: `only` below publishes it to the workers called in.
            self.request.store(0, Ordering::Relaxed);
            // Relaxed: set before the wait; `only` publishes it.
            recruit.only(|rank| shared.workers[rank].takes_part.load(Ordering::Relaxed));
        }
    }

    /// Answers `asker`'s request with this worker's oldest task, if it has one; unless
    /// `unless_high` and a High task is queued, when the request stays for later.
    #[inline(never)]
    fn hand_oldest(&self, shared: &Shared, asker: usize, unless_high: bool) {
        let taken = {
            let _bracket = self.guard.enter();
            // SAFETY: the worker's thread, in a bracket; a short borrow.
            let queues = unsafe { self.queues() };
            if unless_high && queues.has_high() {
                return;
            }
            self.request.store(0, Ordering::Relaxed);
            queues.take_oldest()
        };
        let Some((task, _)) = taken else {
            return;
        };
        // SAFETY: the task is ready and ours; we give it up. Release (the push): the asker's
        // pop sees the task as this thread left it.
        unsafe { shared.workers[asker].mailbox.push(task) };
    }

    /// Moves the tasks handed to this worker into its private queues; false if there were
    /// none. The mailbox is this worker's line, so the test costs no miss until a task came.
    #[inline]
    fn take_mail(&self) -> bool {
        if self.mailbox.looks_empty() {
            return false;
        }
        while let Some(task) = self.mailbox.pop() {
            self.take_handed(task);
        }
        true
    }

    /// Puts a task handed over by another worker into the private queue.
    fn take_handed(&self, task: NonNull<TaskHeader>) {
        // SAFETY: the task was handed over ready; the worker's thread, short borrows.
        let p = unsafe { task.as_ref() }.priority_index();
        // Shared: mail comes only from other workers.
        self.local_push(task, p, Access::Shared);
        unsafe { self.owned().counters.steals += 1 };
    }

    /// Another worker whose mailbox holds a task: one handed to a worker whose thread is not
    /// running (descheduled) or that found work meanwhile would otherwise wait for it. Reads
    /// the mailboxes' lines only, not the workers' `rank`, which lies beside their private
    /// queues (module comment, "How idle workers get work").
    fn full_mailbox<'s>(&self, shared: &'s Shared) -> Option<&'s Worker> {
        shared
            .workers
            .iter()
            .enumerate()
            .find(|&(rank, w)| rank != self.rank && !w.mailbox.looks_empty())
            .map(|(_, w)| w)
    }

    /// The worker that has left this one's request unanswered for at least `patience`, if any
    /// (the first in rank order): its owner looks at its requests at every task it runs and
    /// every push (an idle one at once), so it is descheduled or inside a long task function.
    /// Forgets the requests found answered (`Owned::asked`).
    fn unanswered<'s>(&self, shared: &'s Shared, patience: Duration) -> Option<&'s Worker> {
        // SAFETY: the worker's thread; a short borrow.
        let asked = unsafe { &mut self.owned().asked };
        let now = Instant::now();
        for (w, since) in shared.workers.iter().zip(asked.iter_mut()) {
            let Some(t) = *since else { continue };
            // Relaxed: a hint, as every request.
            if w.request.load(Ordering::Relaxed) != self.rank + 1 {
                *since = None;
            } else if now.duration_since(t) >= patience {
                return Some(w);
            }
        }
        None
    }

    /// Rescues tasks from `victim`, which left this worker's request unanswered too long
    /// (`unanswered`); whether it took any. The caller has left idle.
    fn rescue_unanswered(&self, victim: &Worker) -> bool {
        if self.rescue(victim) {
            return true;
        }
        // A rescue that got the lock answered the request (`rescue`); one that did not (the
        // victim inside a bracket, or another rescuer holding it) leaves it pending, and this
        // worker never asks that victim again while it is: watch it from now on, or it would
        // never be rescued. (Found with a variant that registered for barriers in the
        // background: every first attempt failed, and the C test's spawner waited in vain.)
        // SAFETY: the worker's thread; a short borrow.
        unsafe {
            self.owned().asked[victim.rank] =
                (victim.request.load(Ordering::Relaxed) == self.rank + 1).then(Instant::now);
        }
        false
    }

    /// Takes half the queued tasks of `victim`, oldest first, into this worker's queues, while
    /// `victim` stays away from the scheduler: its thread descheduled, or in a long task
    /// function (`queue_guard.rs`). True if it took any. Called by an idle worker after it left
    /// idle: the taken tasks keep the wait from ending, as a popped mailbox's do.
    #[cold]
    #[inline(never)]
    fn rescue(&self, victim: &Worker) -> bool {
        // Our own bracket first: while it holds the victim's lock, this thread must not wait
        // for a rescuer of its own queues (the lock is only tried, never waited for).
        let _bracket = self.guard.enter();
        let Some(_lock) = victim.guard.try_lock(self.rank) else {
            return false;
        };
        // SAFETY: the lock keeps the victim's owner out of its queues, our bracket keeps
        // rescuers out of ours; short borrows.
        let (theirs, ours) = unsafe { (victim.queues(), self.queues()) };
        let want = theirs.len().div_ceil(2);
        let mut taken = 0;
        while taken < want {
            let Some((task, priority)) = theirs.take_oldest() else {
                break;
            };
            ours.push_index(task, priority.index());
            taken += 1;
        }
        // Answered: the victim need not hand a task over when it comes back.
        let _ =
            victim
                .request
                .compare_exchange(self.rank + 1, 0, Ordering::Relaxed, Ordering::Relaxed);
        if taken == 0 {
            return false;
        }
        // SAFETY: the worker's thread; a short borrow.
        unsafe { self.owned().counters.steals += taken as u64 };
        true
    }

    /// Asks the next other worker in turn for a task (`share_on_request`). A load first: a
    /// request already raised is not written again, so its owner's line stays valid.
    fn ask_for_work(&self, shared: &Shared) {
        let n = shared.workers.len();
        if n == 1 {
            return;
        }
        // SAFETY: the worker's thread; a short borrow.
        let owned = unsafe { self.owned() };
        // The next worker after the last one asked that is not this one and takes part in
        // the wait (`laggards.rs`): one left out would never answer. Rank 0 always takes part.
        let Some(victim) = (1..=n).map(|k| (owned.next_victim + k) % n).find(|&v| {
            // Relaxed: set before the wait (`recruit`).
            v != self.rank && shared.workers[v].takes_part.load(Ordering::Relaxed)
        }) else {
            return;
        };
        owned.next_victim = victim;
        let request = &shared.workers[victim].request;
        // Relaxed: a hint (`share_on_request`).
        if request.load(Ordering::Relaxed) == 0 {
            request.store(self.rank + 1, Ordering::Relaxed);
            if owned.asked.len() != n {
                owned.asked = vec![None; n];
            }
            owned.asked[victim] = Some(Instant::now());
        }
    }

    /// Idles until work may be available (`false`) or the DAG is done (`true`). `counted`: the
    /// idle count already counts this worker (a worker called in late).
    fn wait_idle(&self, shared: &Shared, team: &TeamState, leader: bool, counted: bool) -> bool {
        let n = shared.workers.len() as u64;
        if !counted {
            shared.idle.fetch_add(1, Ordering::SeqCst);
        }
        let mut polls: u32 = 0;
        let mut spin_until: Option<Instant> = None;
        let mut yielding = false;
        let mut handing_over = true;
        loop {
            if shared.done.load(Ordering::Acquire) {
                return true;
            }
            if handing_over && polls >= HAND_OVER_AFTER_POLLS {
                handing_over = self.hand_over_some(shared);
            }
            // SAFETY: the worker's thread; a short read.
            let seen = unsafe { self.owned().team_seq };
            if (!leader && team.has_post(seen))
                || !self.mailbox.looks_empty()
                || shared.work_visible(leader)
            {
                shared.idle.fetch_add(IDLE_EPOCH_ONE - 1, Ordering::SeqCst);
                // Work came the usual way: the next idle period rescues early again.
                // SAFETY: the worker's thread; a short borrow.
                unsafe { self.owned().rescue_misses = 0 };
                return false;
            }
            if shared.idle.load(Ordering::SeqCst) & IDLE_COUNT_MASK == n && shared.try_terminate() {
                return true;
            }
            // An idle worker has nothing to hand over: it answers requests with nothing, so
            // that its askers do not take it for a worker that does not come back (`rescue`).
            let request = self.request.load(Ordering::Relaxed);
            if request != 0 && request != RECRUIT {
                self.request.store(0, Ordering::Relaxed);
            }
            if polls % REQUEST_EVERY == 0 {
                self.ask_for_work(shared);
            }
            if polls % RAID_EVERY == RAID_EVERY - 1 {
                if let Some(owner) = self.full_mailbox(shared) {
                    shared.idle.fetch_add(IDLE_EPOCH_ONE - 1, Ordering::SeqCst);
                    if let Some(task) = owner.mailbox.pop() {
                        self.take_handed(task);
                    }
                    return false;
                }
            }
            if polls % RESCUE_POLLS == RESCUE_POLLS - 1 {
                // SAFETY: the worker's thread; a short read.
                let misses = unsafe { self.owned().rescue_misses };
                let patience = rescue_patience(misses, queue_guard::barrier_cost());
                if let Some(victim) = self.unanswered(shared, patience) {
                    // Not idle from here on, as before any take (termination).
                    shared.idle.fetch_add(IDLE_EPOCH_ONE - 1, Ordering::SeqCst);
                    let took = self.rescue_unanswered(victim);
                    // SAFETY: as above.
                    unsafe {
                        self.owned().rescue_misses = if took {
                            0
                        } else {
                            (misses + 1).min(MAX_RESCUE_MISSES)
                        }
                    };
                    return false;
                }
            }
            polls = polls.wrapping_add(1);
            if !yielding && polls % SPIN_CHECK_POLLS == 0 {
                let now = Instant::now();
                yielding = now >= *spin_until.get_or_insert(now + shared.idle_spin);
            }
            if yielding {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Runs a task this worker took: a single task, or a team task it leads. Inlined into its
    /// loops (`run_loop`, `run_ready_tasks`, `run_ahead_for`), so that a task's run costs no call
    /// and no saving of registers of its own: with one worker nearly every task runs in
    /// `run_ready_tasks`, where this saved 21 instructions per Fibonacci node. `single` is the
    /// loop's context for single tasks (`SingleRuns`, or a running task's, `Calls::Lent`),
    /// `record` its record. `again`: the task comes from the private queues, and may run again
    /// at once (`finish`). `calls`: how `single` and `record` become the running ones.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        place: &Place<'_>,
        task: NonNull<TaskHeader>,
        holders: Holders,
        single: &TaskContext<'_>,
        record: &ExecutionRecord,
        again: bool,
        calls: Calls<'_, '_>,
    ) -> Ended {
        let shared = place.shared;
        let lent = match calls {
            Calls::Lent(lent) => Some(lent),
            _ => None,
        };
        // SAFETY: a ready task is alive (incomplete hold) and ours until we complete it.
        let t = unsafe { task.as_ref() };
        // With `again` the task comes from the private queues, which hold single tasks only
        // (team tasks are made ready on the team queue, `Place::make_ready_as`): no test, and
        // no team paths in `run_ahead_for` (callgrind, F(22), two workers: 142.0 -> 139.5
        // instructions per node there).
        debug_assert!(!again || !t.is_team());
        let team_task = !again && t.is_team();
        let ended = if !team_task {
            single.set_task(task);
            // A lent context's record is read from it after the run, where a reference
            // beside it took a register or a stack slot across the loop (`run_ahead_for`
            // 121 -> 118.5 instructions per node).
            let record = match calls {
                Calls::Lent(lent) => {
                    self.call_function(task, single);
                    lent.context.record()
                }
                Calls::Restore(outer) => {
                    let address = single as *const TaskContext<'_>;
                    self.set_running(Running {
                        record,
                        context: address.cast(),
                    });
                    self.call_function(task, single);
                    self.set_running(outer);
                    record
                }
            };
            self.finish(place, task, record.take_respawn(), holders, again, lent)
        } else if shared.team_size > 1 {
            // The team's other members must be running (module comment, "Starting alone").
            self.recruit(shared);
            let team = self.team(shared);
            team.post(task);
            let member = team.team.member(0, 0, 1);
            self.call(task, &TaskContext::new(place, task, member, &team.record));
            member.barrier();
            self.finish(
                place,
                task,
                team.record.take_respawn(),
                holders,
                false,
                lent,
            )
        } else {
            let record = ExecutionRecord::new();
            let member = self.team(shared).team.member(0, 0, 1);
            let context = TaskContext::new(place, task, member, &record);
            self.run_with(task, &context, &record);
            self.finish(place, task, record.take_respawn(), holders, false, lent)
        };
        // SAFETY: the worker's thread; a short borrow.
        unsafe { self.owned().counters.executions += 1 };
        ended
    }

    /// Makes `running` the worker's running task.
    #[inline(always)]
    fn set_running(&self, running: Running) {
        // SAFETY: the worker's thread; a short borrow.
        let owned = unsafe { self.owned() };
        owned.record = running.record;
        super::worker::set_running_context(running.context);
    }

    /// The worker's running task.
    #[inline(always)]
    fn running(&self) -> Running {
        // SAFETY: the worker's thread; a short borrow.
        let owned = unsafe { self.owned() };
        Running {
            record: owned.record,
            context: super::worker::running_context(),
        }
    }

    /// Runs a task alone (a single task, or a team task of a team of one) with `context`, whose
    /// record is `record`, the running ones during the call.
    #[inline(always)]
    fn run_with(
        &self,
        task: NonNull<TaskHeader>,
        context: &TaskContext<'_>,
        record: &ExecutionRecord,
    ) {
        // SAFETY: the worker's thread; short borrows. Nested runs (inside a spawn) save and
        // restore the pointer the same way.
        let outer = unsafe { std::mem::replace(&mut self.owned().record, record) };
        self.call(task, context);
        unsafe { self.owned().record = outer };
    }

    /// A member's part in a team task its leader posted.
    fn run_as_member(
        &self,
        place: &Place<'_>,
        task: NonNull<TaskHeader>,
        team: &TeamState,
        team_rank: usize,
    ) {
        let member = team.team.member(team_rank, 0, 1);
        self.call(task, &TaskContext::new(place, task, member, &team.record));
        // The leader completes the task after this barrier; the task is not touched after it.
        member.barrier();
    }

    /// Calls the task function of `task` with `context`, whose task it is, the running context
    /// during the call. Inlined, so that no call receives `place` (the context holds a copy).
    #[inline(always)]
    fn call(&self, task: NonNull<TaskHeader>, context: &TaskContext<'_>) {
        let address = context as *const TaskContext<'_>;
        // Tasks run inside a spawn nest, so the outer context comes back when this call returns.
        let outer = super::worker::replace_running_context(address.cast());
        self.call_function(task, context);
        super::worker::set_running_context(outer);
    }

    /// `call` where `context` is the running context already (a lent one, `run_ahead_for`).
    #[inline(always)]
    fn call_function(&self, task: NonNull<TaskHeader>, context: &TaskContext<'_>) {
        // SAFETY: a task's header holds the function of the closure it was spawned with
        // (`spawn`), which has one (`RawClosure::function`); only when_alls have none.
        let function = unsafe { task.as_ref().function().unwrap_unchecked() };
        let state = TaskHeader::state_ptr(task).cast::<c_void>();
        let address = context as *const TaskContext<'_>;
        // SAFETY: the function was given for this state; the context outlives the call.
        unsafe { function(address as *mut c_void, state) };
    }

    /// After a run: respawn the task (000 §2.2.1) or complete it (000 §2.3.1). With `again`
    /// (a single task, which a private queue holds when ready), a task that respawns at High
    /// priority with no dependence is not scheduled: the caller runs it again at once, as the
    /// one it would take next (`Ended::RunsAgain`). `lent`: the context `run_ahead_for` lent
    /// to the task's run, if it did (`Calls::Lent`).
    #[inline(always)]
    fn finish(
        &self,
        place: &Place<'_>,
        task: NonNull<TaskHeader>,
        respawn: Option<Respawn>,
        holders: Holders,
        again: bool,
        lent: Option<Lent<'_, '_>>,
    ) -> Ended {
        // SAFETY: we hold the task until it is scheduled or completed.
        let t = unsafe { task.as_ref() };
        // The dependence held since the previous respawn is complete: let it go (with one
        // worker, its completion usually did, `Place::complete_task_next`). The field keeps it:
        // only the end of the task's next run reads it, and a respawn writes it anew (below), a
        // completion leaves no next run.
        // SAFETY: the executing thread holds the task.
        let held = unsafe { t.dependence() };
        if let Some(held) = NonNull::new(held) {
            // SAFETY: as above.
            let user = unsafe { t.dependence_is_user() };
            if user {
                // The reference the task's release handed over: it is there to be released.
                let released = place.release_user(held);
                debug_assert!(released.is_ok());
            } else {
                place.release_internal(held);
            }
        }
        match respawn {
            Some(r) if again && r.dependence.is_none() && r.priority == Priority::High => {
                // The general path's writes with the request's fields known: an update of the
                // flags with a constant and a store of null (callgrind, F(22), two workers:
                // `Worker::run_ahead_for` 146.5 -> 142.0 instructions per node).
                // SAFETY: as below; the task stays ours.
                unsafe {
                    t.set_priority(Priority::High);
                    t.set_dependence(std::ptr::null_mut(), false);
                }
                place.count(Count::Respawned);
                Ended::RunsAgain
            }
            Some(r) => {
                if let (Some(d), false) = (r.dependence, r.taken_over) {
                    // The caller kept its future: take a reference of our own (see `Respawn`).
                    // SAFETY: the caller's future keeps `d` alive until now.
                    unsafe { d.as_ref() }.add_ref(INTERNAL_REF, place.access);
                }
                // SAFETY: as above; written before the task becomes visible to other threads.
                unsafe {
                    t.set_priority(r.priority);
                    t.set_dependence(
                        r.dependence.map_or(std::ptr::null_mut(), |d| d.as_ptr()),
                        r.taken_over,
                    );
                }
                place.count(Count::Respawned);
                place.schedule_task(task, r.dependence, r.priority, t.is_team());
                Ended::Scheduled
            }
            None => {
                // 002 §2.2.5: the closure is destroyed as soon as the task completes, so futures
                // it holds are released before anything waiting on the task runs.
                if let Some(destroy) = t.destroy_function() {
                    // The task's run has ended: the callback sees the running task a run
                    // outside the loop would, with a lent context its owner (the next run
                    // sets its own task).
                    if let Some(lent) = lent {
                        lent.give_back();
                    }
                    // SAFETY: the state was built for this callback; it runs once, here.
                    unsafe { destroy(TaskHeader::state_ptr(task).cast()) };
                }
                match holders {
                    // With one worker (a constant test where the place's access is).
                    Holders::Anyone if place.access == Access::Exclusive => {
                        if let Some(next) = place.complete_task_next(task) {
                            return Ended::Woke(next);
                        }
                    }
                    Holders::Anyone => place.complete_task(task),
                    Holders::CallerOnly => place.complete_task_run_ahead(task),
                }
                Ended::Completed
            }
        }
    }

    /// Whether a task is ready for this worker (a hint for the single-worker mitigation).
    #[inline(always)]
    pub(crate) fn has_ready_tasks(&self, shared: &Shared) -> bool {
        // SAFETY: the worker's thread; a short read. Only with one worker (`spawn_at`), so no
        // bracket.
        let queued = unsafe { !self.queues().is_empty() };
        queued || shared.work_visible(true)
    }

    /// Runs every available task before a spawn allocates, when this is the only worker
    /// (002 §3.3.2: keeps the memory high-water mark of a single worker down). The tasks run at
    /// a place whose fields are constants here (`Place::exclusive`), so that the executions
    /// inlined below test neither the access nor the worker.
    #[inline(never)]
    pub(crate) fn run_ready_tasks(&self, shared: &Shared) {
        self.nested(|| {
            let place = &Place::exclusive(shared, self);
            let record = ExecutionRecord::new();
            let single = SingleRuns::new(place, self, &record);
            let outer = self.running();
            let mut next = self.find_task(place.shared, true, place.access);
            while let Some(task) = next {
                next = match self.execute(
                    place,
                    task,
                    Holders::Anyone,
                    &single.context,
                    &record,
                    false,
                    Calls::Restore(outer),
                ) {
                    Ended::Woke(waiter) => Some(waiter),
                    _ => self.find_task(place.shared, true, place.access),
                };
            }
        });
    }

    /// Runs elements of `elements`, nested, while the task this worker would run next is one
    /// of them, until all have completed: the run-ahead of `TaskContext::respawn_when_all_raw`
    /// with several workers. A task that respawns on its children (000 Fig. 3.4) has them on
    /// top of its own queue, so the worker would run them as soon as the task returns; run
    /// inside the call instead (each running ahead on its own children in turn, depth first),
    /// they have usually completed by the time the task respawns, which then needs no
    /// dependence: no when_all to make and complete, no reference to take and drop, no atomic
    /// push onto a wait queue, and the task runs again at once. The worker's order is kept
    /// (`LocalQueues::pop_next_if`: what `find_task` would take), its other tasks stay where idle
    /// workers can be handed them, and requests are answered before each run, as in the loop.
    /// Only elements run, at most twice each: a task that the caller's code after the call is
    /// to unblock (tasks should not need one, but a test gate does) never runs here, and an
    /// element that keeps respawning does not keep the worker here. Nesting is bounded
    /// (`MAX_NESTING`). `context` is the calling task's, a single task's; the caller holds
    /// every non-null entity of `elements`; `holders` says whether others may use them through
    /// its references meanwhile. Returns true when they have all completed (false says
    /// nothing: the caller looks).
    #[inline(always)]
    pub(crate) fn run_ahead(
        &self,
        context: &TaskContext<'_>,
        elements: &[*mut TaskHeader],
        holders: Holders,
    ) -> bool {
        // A team task in a team of one (`execute`) does not lend its context: its member is
        // its team's, not the single tasks' (`Worker::single_team`).
        // SAFETY: the running task is alive.
        if unsafe { context.task().as_ref() }.is_team() {
            return false;
        }
        // One copy for each, so that the completions inlined into it know which they are: a
        // value tested at run time inlined both, and the compiler then kept the loop's body out
        // of line (+50 instructions per Fibonacci node on two workers, callgrind).
        match holders {
            Holders::Anyone => self.run_ahead_for::<false>(context, elements),
            Holders::CallerOnly => self.run_ahead_for::<true>(context, elements),
        }
    }

    /// `run_ahead` for `Holders::CallerOnly` when `CALLER_ONLY`, else `Holders::Anyone`.
    #[inline(never)]
    fn run_ahead_for<const CALLER_ONLY: bool>(
        &self,
        context: &TaskContext<'_>,
        elements: &[*mut TaskHeader],
    ) -> bool {
        let shared = context.shared();
        let mut all_complete = false;
        self.nested(|| {
            // Each completion here is that of another element (a task completes once, and the
            // caller's hold keeps an element's block from serving another task), so once as
            // many have completed here as `elements` has entries, all have. Else (a null entry,
            // an element given twice, one that another worker completed) the caller looks.
            // A look at every element after each completion here cost 21 instructions per
            // Fibonacci node more (callgrind, F(22), two workers: 173.0 -> 151.9 in this
            // function), a count of the incomplete ones at the start 18.6.
            let mut not_completed_here = elements.len();
            // Only with several workers (the caller tests it): a place whose access is a
            // constant, so that the executions inlined below test it no more than
            // `run_ready_tasks`' do.
            let place = &Place::shared_worker(shared, self);
            // Every task runs with the calling task's context and record, the running ones
            // already, and its task set (`Lent`); the caller's context is its own again when
            // this returns, and while a destroy callback runs (`finish`). Between the runs only
            // the callbacks run code that can look, and they see the caller's, as they saw it
            // when each run here had a context of the loop's, made the running one for the
            // loop (`worker::running_context`, `Owned::record`): the caller's record holds no respawn
            // request during the call (`respawn_when_all` asks after its run-ahead), and taking
            // a run's request leaves it so again. The caller's context, the place of a worker
            // of a wait with several workers, is what a loop's would be; so is its member, the
            // single tasks' team of one (`run_ahead`). A context of the loop's, built, made
            // the running one and given back at each call, cost two workers 5.5 instructions
            // per Fibonacci node more (callgrind, F(22): `Worker::run_ahead_for` 125 -> 118.5,
            // with the record read from the context after each run, `execute`;
            // `td_task_respawn_when_all_private` 58.5 -> 59.5, `run_ahead`'s test). One misuse
            // the check of a context (`TaskContext::check`) no longer tells: a task run here
            // that keeps its context and uses it after its run, in its destroy callback or in a
            // later task run here, acts on the task that context belongs to then, the caller or
            // that later task, as a context kept past its call whose address a later context
            // occupies does (context.rs).
            let record = context.record();
            let lent = Lent {
                context,
                owner: context.task(),
            };
            let _lending = Lending(lent);
            // Two elements, a task's two children, are the usual case: compared without a
            // loop (callgrind, F(22), two workers: 133.0 -> 130.5 instructions per node here).
            let element = |t: *mut TaskHeader| match *elements {
                [a, b] => t == a || t == b,
                _ => elements.contains(&t),
            };
            let next = || {
                let _bracket = self.bracket(place.access);
                let shared_may_hold = || shared.any_visible();
                // SAFETY: the worker's thread, in a bracket where needed; a short borrow.
                unsafe { self.queues() }.pop_next_if(shared_may_hold, element)
            };
            // A first run and the run after the element's own respawn each; a task that
            // respawns itself until the caller's code after the call lets it complete (a
            // polling gate) would otherwise keep the worker here for ever.
            let mut runs_left = 2 * elements.len();
            let Some(mut task) = next() else { return };
            loop {
                self.share_on_request(shared);
                // An element that respawns with no dependence at High priority (a Fibonacci
                // task whose children completed here) runs again without a push and a pop:
                // it is what `next` would take (a High task comes first), and a request
                // answered before its run, as before any run, finds the queues as it would
                // have after that pop. A third of the runs here are such; pushed and popped, they
                // cost 41 instructions per Fibonacci node more (callgrind, F(22), two
                // workers: 214.3 -> 173.0 in this function).
                let holders = Holders::of(CALLER_ONLY);
                let ended = self.execute(
                    place,
                    task,
                    holders,
                    context,
                    record,
                    true,
                    Calls::Lent(lent),
                );
                if ended == Ended::Completed {
                    not_completed_here -= 1;
                    if not_completed_here == 0 {
                        all_complete = true;
                        return;
                    }
                }
                runs_left -= 1;
                if runs_left == 0 {
                    return;
                }
                if ended != Ended::RunsAgain {
                    let Some(t) = next() else { return };
                    task = t;
                }
            }
        });
        all_complete
    }

    /// Calls `body` one nesting level deeper, unless tasks already nest `MAX_NESTING` deep
    /// (then nothing runs), so that the stack stays bounded.
    #[inline(always)]
    fn nested(&self, body: impl FnOnce()) {
        // SAFETY: the worker's thread; short borrows around the nested runs.
        let depth = unsafe { self.owned().nesting };
        if depth < MAX_NESTING {
            unsafe { self.owned().nesting = depth + 1 };
            body();
            unsafe { self.owned().nesting = depth };
        }
    }

    /// Part of `end_wait`, done while the worker idles (`wait_idle`, `HAND_OVER_AFTER_POLLS`):
    /// returns at most `HAND_OVER_BLOCKS` cached blocks to the pool, a few at a time so that the
    /// worker still sees work or the wait's end between them, and once none are left hands over
    /// the counts. Returns whether blocks are left. A worker that takes tasks again caches and
    /// counts anew, and `end_wait` hands that over; nothing is handed over twice (`take`). The
    /// worker's thread; with one worker, nothing (it idles only at the end).
    fn hand_over_some(&self, shared: &Shared) -> bool {
        // SAFETY: the worker's thread; a short borrow.
        let owned = unsafe { self.owned() };
        if owned.access == Access::Exclusive {
            return false;
        }
        if owned.cache.return_some(&shared.pool, HAND_OVER_BLOCKS) {
            return true;
        }
        self.hand_over_counts(shared);
        false
    }

    /// Hands the worker's live-task deltas and statistics to the scheduler.
    fn hand_over_counts(&self, shared: &Shared) {
        // SAFETY: the worker's thread; a short borrow.
        let owned = unsafe { self.owned() };
        shared.flush_alive(
            std::mem::take(&mut owned.alive_delta),
            std::mem::take(&mut owned.bytes_delta),
        );
        shared.totals.add(&std::mem::take(&mut owned.counters));
    }

    /// After the loop: return cached blocks to the pool and hand the counts to the scheduler.
    fn end_wait(&self, shared: &Shared) {
        // SAFETY: the worker's thread, after its last task.
        let owned = unsafe { self.owned() };
        owned.cache.flush(&shared.pool);
        if owned.access == Access::Exclusive {
            shared.end_rooms(Rooms {
                alive: owned.alive_room,
                bytes: owned.bytes_room,
            });
        }
        self.hand_over_counts(shared);
        // SAFETY: the worker's thread after the wait's end: no rescuer runs any more.
        debug_assert!(unsafe { self.queues() }.is_empty());
    }
}

impl Shared {
    /// Whether any shared stack may hold a task (a hint, like `work_visible`).
    #[inline(always)]
    pub(crate) fn any_visible(&self) -> bool {
        self.shared_ready[ANY_READY].load(Ordering::Acquire) > 0
    }

    /// Whether a worker may find a task outside its private queue (a hint; see the module
    /// comment).
    #[inline(always)]
    pub(crate) fn work_visible(&self, leader: bool) -> bool {
        self.any_visible()
            && (0..3).any(|p| {
                self.shared_ready[p].load(Ordering::Acquire) > 0
                    || (leader && self.team_ready[p].load(Ordering::Acquire) > 0)
            })
    }

    /// Ends the wait if every worker is idle and no task is ready (module comment).
    fn try_terminate(&self) -> bool {
        let n = self.workers.len() as u64;
        let before = self.idle.load(Ordering::SeqCst);
        if before & IDLE_COUNT_MASK != n {
            return false;
        }
        let all_empty = (0..3)
            .all(|p| self.injection[p].looks_empty() && self.team_queue[p].looks_empty())
            && self.workers.iter().all(|w| w.mailbox.looks_empty());
        if !all_empty || self.idle.load(Ordering::SeqCst) != before {
            return false;
        }
        self.done.store(true, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rescues_wait_longer_after_slow_barriers_and_misses() {
        let us = Duration::from_micros;
        assert_eq!(rescue_patience(0, Duration::ZERO), RESCUE_AFTER);
        // A fast barrier leaves the floor; a slow one sets the patience.
        assert_eq!(rescue_patience(0, us(5)), RESCUE_AFTER);
        assert_eq!(rescue_patience(0, us(6300)), us(4 * 6300));
        assert_eq!(rescue_patience(3, us(1000)), us(8 * 4 * 1000));
        assert_eq!(
            rescue_patience(MAX_RESCUE_MISSES, us(1)),
            RESCUE_AFTER * 128
        );
        // No overflow, whatever a barrier measured.
        assert_eq!(
            rescue_patience(MAX_RESCUE_MISSES, Duration::MAX),
            Duration::MAX
        );
    }
}
