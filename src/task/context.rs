//! The context a task function receives (000 §3.2.3 `member_type`): its team member, its result,
//! and the calls that only a running task may make: spawn, respawn and when_all from the worker
//! that runs it.
//!
//! A context lives on the worker's stack for one call of the task function and is valid only
//! there, on that thread. The thread records the address of the context it runs now
//! (`worker::running_context`), and every call that takes a context compares with it before
//! reading anything through the pointer, so a context kept past its call (a dead stack frame) or
//! taken to another thread is refused without being touched. One misuse stays invisible: a kept
//! context whose address a later task's context on the same thread occupies is that later
//! context, and acts on its task. Contexts are reused, so that address is often the same: one
//! loop's single tasks share one context (`executor::SingleRuns`), and the tasks that a respawn
//! runs ahead run with the respawning task's own (`Worker::run_ahead_for`), so a context kept by
//! one of those and used in a destroy callback that runs there acts on the respawning task.

use super::executor::Holders;
use super::future::{check_scheduler, Future};
use super::header::{Access, TaskHeader, USER_REF};
use super::place::Place;
use super::scheduler::Shared;
use super::spawn::{Known, Policy, RawClosure, RawPolicy, SpawnArgs};
use super::team_task::{ExecutionRecord, Respawn};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::TeamMember;
use crate::priority::Priority;
use std::any::Any;
use std::cell::Cell;
use std::ptr::NonNull;

/// `TaskContext::respawn_when_all_raw` runs ahead (`Worker::run_ahead`) only on at most this
/// many elements: each step looks for the next task among them, and checks them all.
const RUN_AHEAD_ELEMENTS: usize = 8;

/// The incomplete entities among a respawn's dependences, noted while the caller checks each
/// one (`note`): the last one, how many, and whether one is the calling task's own (only an
/// incomplete one can be). Counted, not flagged: a flag for a second incomplete entity cost
/// more (with the access tested first and the request stored without a second test,
/// `respawn_when_all_claimed`, a call of `td_task_respawn_when_all_private` with two elements
/// took 197 -> 170 instructions; callgrind, F(22), one worker). The C entry points note each
/// element in the pass that decodes it (`capi::task_context::respawn_when_all`, with the
/// figures), so that no second pass reads the elements again: that loop took 15 instructions
/// per element and 8 to start.
#[derive(Clone, Copy)]
pub(crate) struct Pending {
    own: NonNull<TaskHeader>,
    last: Option<NonNull<TaskHeader>>,
    count: u32,
    has_own: bool,
}

impl Pending {
    /// Nothing noted yet, for dependences of the task `own`.
    #[inline(always)]
    fn new(own: NonNull<TaskHeader>) -> Pending {
        Pending {
            own,
            last: None,
            count: 0,
            has_own: false,
        }
    }

    /// Notes the dependence `d`, which the caller holds; `false`, noting nothing, when it is
    /// the task's own.
    #[inline(always)]
    pub(crate) fn note(&mut self, d: NonNull<TaskHeader>) -> bool {
        // SAFETY: the caller holds `d`.
        if !unsafe { d.as_ref() }.is_complete() {
            // The running task is incomplete until its run ends, so only an incomplete entity
            // can be its own.
            if d == self.own {
                return false;
            }
            self.count += 1;
            self.last = Some(d);
        }
        true
    }

    /// The notes of every non-null entity of `deps`, which the caller holds.
    #[inline(always)]
    fn of(deps: &[*mut TaskHeader], own: NonNull<TaskHeader>) -> Pending {
        let mut pending = Pending::new(own);
        for &d in deps {
            if let Some(d) = NonNull::new(d) {
                pending.has_own |= !pending.note(d);
            }
        }
        pending
    }
}

/// What `TaskContext::respawn_two` did.
pub(crate) enum QuickRespawn {
    /// The task respawns.
    Done,
    /// Nothing: with several workers, the elements may run ahead (`respawn_two_run_ahead`).
    RunAhead,
    /// Nothing: anything else, for the general path, which finds and reports any error.
    General,
}

/// What a running task sees: its team member, its result, and spawn/respawn/when_all.
pub struct TaskContext<'a> {
    /// A copy of the executor's place (`Place::detached`): the task function can reach the
    /// context, so the executor's own place must not be reachable from it (its fields would be
    /// loaded again after the call), and a copy here is one pointer less to follow.
    place: Place<'a>,
    /// A cell: the run-ahead of `respawn_when_all` lends the calling task's context to the
    /// tasks it runs (`Worker::run_ahead`).
    task: Cell<NonNull<TaskHeader>>,
    member: TeamMember<'a>,
    record: &'a ExecutionRecord,
    team_size: usize,
}

#[cold]
fn stale_context(what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what}: `ctx` is not the context of a running task (this thread runs none): a \
         td_task_ctx is valid only during the call of the task function that received it, on \
         that thread"
    ))
}

#[cold]
fn own_future(what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what}: the dependence is the task's own future; a task cannot wait for its own \
         completion"
    ))
}

#[cold]
fn second_respawn(what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what}: this run of the task already asked to respawn; a task may respawn at most once \
         per run (000 §3.2.2)"
    ))
}

#[cold]
fn foreign_context(what: &str) -> Error {
    Error::new(
        ErrorKind::WrongThread,
        format!(
            "{what}: `ctx` is not the context of the task this thread runs: it belongs to a \
             task on another thread or to a call that returned; use the context your task \
             function received, on the thread that called it"
        ),
    )
}

impl<'a> TaskContext<'a> {
    pub(crate) fn new(
        place: &Place<'a>,
        task: NonNull<TaskHeader>,
        member: TeamMember<'a>,
        record: &'a ExecutionRecord,
    ) -> TaskContext<'a> {
        TaskContext {
            place: place.detached(),
            task: Cell::new(task),
            team_size: member.size(),
            member,
            record,
        }
    }

    /// Makes this the context of `task`, for a loop that gives each single task it runs the
    /// same context (`executor::SingleRuns`, `Worker::run_ahead`).
    #[inline(always)]
    pub(crate) fn set_task(&self, task: NonNull<TaskHeader>) {
        self.task.set(task);
    }

    /// The task whose context this is now.
    #[inline(always)]
    pub(crate) fn task(&self) -> NonNull<TaskHeader> {
        self.task.get()
    }

    /// The record of this context's runs.
    #[inline(always)]
    pub(crate) fn record(&self) -> &'a ExecutionRecord {
        self.record
    }

    /// The context behind `ctx` when it is the context of the task function the calling thread
    /// runs now; only then is it read. The running context is never null
    /// (`thread_worker::not_running()` when the thread runs no task), so NULL needs no test of
    /// its own.
    ///
    /// # Safety
    /// None: a pointer that is not the running context (NULL included) is refused before it is
    /// dereferenced.
    #[inline(always)]
    pub(crate) unsafe fn running(ctx: *const TaskContext<'a>) -> Option<&'a Self> {
        if super::worker::running_context() != ctx.cast::<()>() {
            return None;
        }
        // SAFETY: the running context is alive on this thread's stack for this call.
        Some(&*ctx)
    }

    /// Why `running` refuses a context other than NULL (which the caller reports): this thread
    /// runs no task, or another.
    #[cold]
    pub(crate) fn refused(what: &str) -> Error {
        if super::worker::runs_task() {
            foreign_context(what)
        } else {
            stale_context(what)
        }
    }

    pub(crate) fn shared(&self) -> &'a Shared {
        self.place.shared
    }

    /// This member of the task's team (a team of one for a single task).
    pub fn team(&self) -> &TeamMember<'a> {
        &self.member
    }

    /// The task's result bytes, shared by the members of a team task.
    pub fn result_ptr(&self) -> *mut u8 {
        TaskHeader::result_ptr(self.task.get())
    }

    /// Bytes of the task's result, as spawned.
    pub fn result_size(&self) -> usize {
        // SAFETY: the running task is alive.
        unsafe { self.task.get().as_ref() }.size()
    }

    /// Writes the task's result; its size must be the result size it was spawned with.
    pub fn set_result<T: Copy>(&self, value: T) -> Result<()> {
        if std::mem::size_of::<T>() != self.result_size() {
            return Err(Error::invalid_argument(format!(
                "set_result: a value of {} bytes for a task spawned with a result of {} bytes",
                std::mem::size_of::<T>(),
                self.result_size()
            )));
        }
        // SAFETY: the result area has `result_size` bytes at a 16-byte aligned offset.
        unsafe { self.result_ptr().cast::<T>().write_unaligned(value) };
        Ok(())
    }

    /// Spawns a task from this task (000 §3.2.2 `task_spawn`) running the closure `f`.
    pub fn spawn<F>(&self, policy: &Policy<'_>, result_size: usize, f: F) -> Result<Future>
    where
        F: FnMut(&TaskContext<'_>) + Send + 'static,
    {
        let raw = self.checked_policy(policy, false)?;
        super::closure::spawn_with(f, result_size, |closure| {
            // SAFETY: the closure describes a valid state (closure.rs).
            unsafe { self.spawn_raw(&raw, closure, "task_spawn") }
        })
    }

    /// Spawns a team task from this task; see `Scheduler::spawn_team`.
    pub fn spawn_team<F>(&self, policy: &Policy<'_>, result_size: usize, f: F) -> Result<Future>
    where
        F: Fn(&TaskContext<'_>) + Send + Sync + 'static,
    {
        let raw = self.checked_policy(policy, true)?;
        super::closure::spawn_team_with(f, result_size, |closure| {
            // SAFETY: the closure describes a valid state (closure.rs).
            unsafe { self.spawn_raw(&raw, closure, "task_spawn") }
        })
    }

    /// Spawns a task described by a raw closure; a team task if `team`.
    ///
    /// # Safety
    /// `closure.state` points to `closure.state_size` readable bytes (or is the source `init`
    /// expects), and the function and callbacks may be called as a task's (for a team task, by
    /// every member at once).
    pub unsafe fn spawn_raw_future(
        &self,
        policy: &Policy<'_>,
        team: bool,
        closure: &RawClosure,
    ) -> Result<Future> {
        let raw = self.checked_policy(policy, team)?;
        self.spawn_raw(&raw, closure, "task_spawn")
            .map(Future::from_header)
    }

    fn checked_policy(&self, policy: &Policy<'_>, team: bool) -> Result<RawPolicy> {
        let raw = policy.raw(team);
        if let Some(d) = raw.dependence {
            check_scheduler(d, self.shared(), "task_spawn: the dependence")?;
        }
        Ok(raw)
    }

    /// # Safety
    /// As for `spawn_raw_future`; `policy.dependence` is a validated entity the caller holds.
    #[inline(always)]
    pub(crate) unsafe fn spawn_raw(
        &self,
        policy: &RawPolicy,
        closure: &RawClosure,
        what: &str,
    ) -> Result<NonNull<TaskHeader>> {
        self.spawn_raw_with(Known { policy, closure }, what)
    }

    /// `spawn_raw` with the policy and closure that `args` reads (`spawn::spawn`).
    ///
    /// # Safety
    /// As for `spawn_raw`, for what `args` reads.
    #[inline(always)]
    pub(crate) unsafe fn spawn_raw_with<A: SpawnArgs>(
        &self,
        args: A,
        what: &str,
    ) -> std::result::Result<NonNull<TaskHeader>, A::Error> {
        // A single task needs no claim, so nothing to give back: its own copy of the spawn
        // tests no `taken` flag once it has spawned (callgrind, F(22): td_task_spawn
        // 205.5 -> 203.5 instructions per node).
        if self.team_size == 1 {
            return self.spawn_single_with(args, what);
        }
        self.spawn_in_team(args, what)
    }

    /// `spawn_raw_with` for a single task (`is_single`), which needs no claim.
    ///
    /// # Safety
    /// As for `spawn_raw_with`.
    #[inline(always)]
    pub(crate) unsafe fn spawn_single_with<A: SpawnArgs>(
        &self,
        args: A,
        what: &str,
    ) -> std::result::Result<NonNull<TaskHeader>, A::Error> {
        debug_assert!(self.is_single());
        super::spawn::spawn(&self.place, args, what)
    }

    /// `spawn_raw_with` in a team of more than one: out of line, so that the single tasks'
    /// spawn is not copied again.
    ///
    /// # Safety
    /// As for `spawn_raw_with`.
    #[inline(never)]
    unsafe fn spawn_in_team<A: SpawnArgs>(
        &self,
        args: A,
        what: &str,
    ) -> std::result::Result<NonNull<TaskHeader>, A::Error> {
        let taken = self.claim(what)?;
        let spawned = super::spawn::spawn(&self.place, args, what);
        self.record.give_back(taken, spawned)
    }

    /// A future that completes when all of `dependences` have (000 §3.2.2 `when_all`).
    pub fn when_all(&self, dependences: &[&Future]) -> Result<Future> {
        let deps: Vec<*mut TaskHeader> = dependences
            .iter()
            .map(|f| f.checked_header(self.shared()).map(NonNull::as_ptr))
            .collect::<Result<_>>()?;
        super::when_all::when_all(&self.place, &deps, "when_all").map(Future::from_header)
    }

    /// Asks to run this task again after `dependence` completes (or as soon as possible), at
    /// `priority` (000 §2.2.1, §3.2.2 `respawn`). At most once per run; in a team task only the
    /// member that holds the spawn right may call it. The task keeps its state.
    pub fn respawn(&self, dependence: Option<&Future>, priority: Priority) -> Result<()> {
        let dep = dependence
            .map(|f| f.checked_header(self.shared()))
            .transpose()?;
        self.respawn_raw(dep, priority, "respawn")
    }

    /// `respawn` with a validated dependence of this scheduler.
    #[inline(always)]
    pub(crate) fn respawn_raw(
        &self,
        dependence: Option<NonNull<TaskHeader>>,
        priority: Priority,
        what: &str,
    ) -> Result<()> {
        let taken = self.claim(what)?;
        if dependence == Some(self.task.get()) {
            return self.record.give_back(taken, Err(own_future(what)));
        }
        let request = Respawn {
            dependence,
            priority,
            taken_over: false,
        };
        // SAFETY: the claim is ours (or this is a single task).
        if unsafe { self.record.request_respawn(request) }.is_err() {
            return self.record.give_back(taken, Err(second_respawn(what)));
        }
        // The caller's future keeps the dependence alive until the run ends, when the executor
        // takes its own reference (see `Respawn`).
        Ok(())
    }

    /// Asks to run this task again once all of `dependences` have completed, at `priority`:
    /// `respawn(when_all(dependences))` of 000 Fig. 3.4 in one call, which makes a when_all only
    /// where one is needed (see `respawn_when_all_raw`). The futures are borrowed for the call
    /// only. At most once per run, like `respawn`. With several workers, a single task's call
    /// with at most 8 elements may first run, nested, the elements its worker would run next
    /// (at most twice each); they must not wait for the code after the call.
    ///
    /// Errors: as `respawn` and `when_all` (`InvalidArgument` for the task's own future or a
    /// future of another scheduler, a second respawn; `PoolExhausted`).
    pub fn respawn_when_all(&self, dependences: &[&Future], priority: Priority) -> Result<()> {
        self.respawn_when_all_checked(dependences, priority, Holders::Anyone, "respawn_when_all")
    }

    /// `respawn_when_all` with a promise: until the call returns, no other task uses
    /// `dependences` through this task's references (tasks that hold references of their own
    /// may). The elements the call runs ahead, with several workers, then complete without an
    /// atomic read-modify-write when this task holds their only reference (000 Fig. 3.4's
    /// children: F(30) on 16 workers up to 8% faster, docs/PERFORMANCE.md, session 26). A
    /// broken promise is a logic error, not undefined behaviour: a task that another task made
    /// wait on an element through this task's reference during the call may never run, and
    /// `wait` then reports `Deadlock`.
    pub fn respawn_when_all_private(
        &self,
        dependences: &[&Future],
        priority: Priority,
    ) -> Result<()> {
        self.respawn_when_all_checked(
            dependences,
            priority,
            Holders::CallerOnly,
            "respawn_when_all_private",
        )
    }

    fn respawn_when_all_checked(
        &self,
        dependences: &[&Future],
        priority: Priority,
        holders: Holders,
        what: &str,
    ) -> Result<()> {
        let deps: Vec<*mut TaskHeader> = dependences
            .iter()
            .map(|f| f.checked_header(self.shared()).map(NonNull::as_ptr))
            .collect::<Result<_>>()?;
        self.respawn_when_all_raw(&deps, priority, holders, what)
    }

    /// Whether the task is a single task (a team of one), which needs no claim to spawn or
    /// respawn.
    #[inline(always)]
    pub(crate) fn is_single(&self) -> bool {
        self.team_size == 1
    }

    /// Nothing noted yet, for the dependences of a respawn of this task
    /// (`respawn_when_all_raw`).
    #[inline(always)]
    pub(crate) fn pending(&self) -> Pending {
        Pending::new(self.task.get())
    }

    /// `respawn_when_all` with validated entities of this scheduler (null entries skipped).
    ///
    /// The dependence the respawn records is the least the task must wait for: none when every
    /// entity is complete; the entity itself when exactly one is incomplete (it completes
    /// exactly when a when_all of them all would); else a when_all. With one worker a Fibonacci
    /// task's first child has usually run by the time the task respawns (the spawn of the
    /// second one ran it, 002 §3.3.2), so the task waits on the second child directly and no
    /// when_all block is made, filled, completed and freed: 834 -> 729 instructions per node
    /// (callgrind, `bench_fib_taskdag --n 20 --threads 1`). With several workers a single
    /// task first runs the elements its worker would run next (`Worker::run_ahead`), for at most
    /// `RUN_AHEAD_ELEMENTS`: a Fibonacci task's children then have completed (F(30), 16
    /// workers: 9.7 ns per node against 11.4 without, docs/PERFORMANCE.md, session 14).
    ///
    /// The scheduler takes a reference of its own on the dependence now (a when_all is created
    /// with one), since the caller's futures are only borrowed for the call; the executor
    /// treats it as a reference taken over (`Respawn::taken_over`) and drops it after the next
    /// run.
    #[inline(always)]
    pub(crate) fn respawn_when_all_raw(
        &self,
        deps: &[*mut TaskHeader],
        priority: Priority,
        holders: Holders,
        what: &str,
    ) -> Result<()> {
        let taken = self.claim(what)?;
        let pending = Pending::of(deps, self.task.get());
        let single = self.is_single();
        let requested =
            self.respawn_when_all_claimed(deps, pending, priority, holders, single, what);
        self.record.give_back(taken, requested)
    }

    /// `respawn_when_all_raw` for a single task (`is_single`: no claim to take), with
    /// `pending`, the notes of every non-null entity of `deps` (`Pending::note`).
    #[inline(always)]
    pub(crate) fn respawn_single_when_all(
        &self,
        deps: &[*mut TaskHeader],
        pending: Pending,
        priority: Priority,
        holders: Holders,
        what: &str,
    ) -> Result<()> {
        debug_assert!(self.is_single());
        self.respawn_when_all_claimed(deps, pending, priority, holders, true, what)
    }

    /// The respawn of a single task (`is_single`) after the two live entities `a` and `b` of
    /// this scheduler, when it calls nothing: no request yet, neither entity the task's own, and
    /// with one worker at most one incomplete. With several workers `RunAhead` in that case.
    /// Changes nothing unless `Done`.
    #[inline(always)]
    pub(crate) fn respawn_two(
        &self,
        a: NonNull<TaskHeader>,
        b: NonNull<TaskHeader>,
        priority: Priority,
    ) -> QuickRespawn {
        debug_assert!(self.is_single());
        // SAFETY: a single task's record, read by its run only.
        if unsafe { self.record.has_respawn() } {
            return QuickRespawn::General;
        }
        if self.place.access == Access::Shared {
            // The run-ahead looks at the elements anyway: no notes here, only the test for the
            // task's own (the task is incomplete, so no test of completion is needed either).
            if a == self.task() || b == self.task() {
                return QuickRespawn::General;
            }
            return QuickRespawn::RunAhead;
        }
        let mut pending = Pending::new(self.task());
        if !pending.note(a) || !pending.note(b) {
            return QuickRespawn::General;
        }
        let dependence = match pending.last {
            Some(_) if pending.count > 1 => return QuickRespawn::General,
            Some(d) => {
                // SAFETY: the caller holds `d`.
                unsafe { d.as_ref() }.add_ref(USER_REF, Access::Exclusive);
                Some(d)
            }
            None => None,
        };
        // SAFETY: as above; no request was made in this run (tested above).
        unsafe { self.set_respawn_after(dependence, priority) };
        QuickRespawn::Done
    }

    /// `respawn_two`'s `RunAhead`: the single task's respawn after `deps`, its two entities,
    /// neither its own, with several workers, when it made no request yet. The elements run
    /// ahead (`Worker::run_ahead`) also when none is incomplete, which `respawn_two` did not
    /// test: none is then the next task, and nothing runs.
    #[inline(always)]
    pub(crate) fn respawn_two_run_ahead(
        &self,
        deps: &[*mut TaskHeader; 2],
        priority: Priority,
        holders: Holders,
        what: &str,
    ) -> Result<()> {
        debug_assert!(self.is_single() && self.place.access == Access::Shared);
        match self.place.worker {
            Some(w) if w.run_ahead(self, deps, holders) => {
                // SAFETY: a single task's record, which has no request (`respawn_two`).
                unsafe { self.set_respawn_after(None, priority) };
                Ok(())
            }
            _ => self.respawn_after_looking(deps, priority, what),
        }
    }

    /// `respawn_two_run_ahead` when an element may still be incomplete: out of line, so that
    /// only the task's context and the priority live across the run-ahead on the common path
    /// (callgrind, F(22), two workers: respawn_two_run_ahead 20 -> 17 instructions per node).
    #[inline(never)]
    fn respawn_after_looking(
        &self,
        deps: &[*mut TaskHeader; 2],
        priority: Priority,
        what: &str,
    ) -> Result<()> {
        // Neither entry is the task's own (`respawn_two`).
        let now = Pending::of(deps, self.task());
        self.respawn_after(deps, now.last, now.count > 1, priority, what)
    }

    /// `respawn_when_all_raw` once the claim is ours (or this is a single task: `single`, which
    /// the caller knows: read here, after the elements' Acquire loads, the team size was loaded
    /// again).
    #[inline(always)]
    fn respawn_when_all_claimed(
        &self,
        deps: &[*mut TaskHeader],
        pending: Pending,
        priority: Priority,
        holders: Holders,
        single: bool,
        what: &str,
    ) -> Result<()> {
        // SAFETY: the claim is ours.
        if unsafe { self.record.has_respawn() } {
            return Err(second_respawn(what));
        }
        // Every entry is checked before anything changes, so an error leaves no trace.
        if pending.has_own {
            return Err(own_future(what));
        }
        let (mut incomplete, mut several) = (pending.last, pending.count > 1);
        // The access first: with one worker the rest need not be looked at.
        if let (Access::Shared, Some(_), true, true, Some(w)) = (
            self.place.access,
            incomplete,
            single,
            deps.len() <= RUN_AHEAD_ELEMENTS,
            self.place.worker,
        ) {
            // Elements that the worker would run next run now (`Worker::run_ahead`), and then
            // need no waiting for.
            (incomplete, several) = if w.run_ahead(self, deps, holders) {
                (None, false)
            } else {
                // The entries passed the test for `own` above.
                let now = Pending::of(deps, self.task.get());
                (now.last, now.count > 1)
            };
        }
        self.respawn_after(deps, incomplete, several, priority, what)
    }

    /// The request to respawn after `deps`, of which `incomplete` is the last incomplete one,
    /// `several` if not the only one, once no request was made in this run (the claim ours):
    /// the scheduler's own reference on the dependence (see `respawn_when_all_raw`).
    #[inline(always)]
    fn respawn_after(
        &self,
        deps: &[*mut TaskHeader],
        incomplete: Option<NonNull<TaskHeader>>,
        several: bool,
        priority: Priority,
        what: &str,
    ) -> Result<()> {
        let dependence = match incomplete {
            Some(_) if several => Some(super::when_all::when_all(&self.place, deps, what)?),
            Some(d) => {
                // SAFETY: the caller holds `d`.
                unsafe { d.as_ref() }.add_ref(USER_REF, self.place.access);
                Some(d)
            }
            None => None,
        };
        // SAFETY: as the caller's.
        unsafe { self.set_respawn_after(dependence, priority) };
        Ok(())
    }

    /// Records the request to respawn after `dependence`, on which the scheduler took its own
    /// reference.
    ///
    /// # Safety
    /// The claim is ours (or this is a single task), and no request was made in this run.
    #[inline(always)]
    unsafe fn set_respawn_after(
        &self,
        dependence: Option<NonNull<TaskHeader>>,
        priority: Priority,
    ) {
        let request = Respawn {
            dependence,
            priority,
            taken_over: dependence.is_some(),
        };
        self.record.set_respawn(request);
    }

    /// Claims this run's spawn and respawn rights for this member (`ExecutionRecord::claim`);
    /// `true` when this call took them, to be given back if the call fails.
    #[inline(always)]
    fn claim(&self, what: &str) -> Result<bool> {
        self.record.claim(self.member.rank(), self.team_size, what)
    }

    /// Records a panic of a task closure; `wait` rethrows it.
    pub(crate) fn record_panic(&self, payload: Box<dyn Any + Send>) {
        self.shared().record_panic(payload);
    }

    /// The C handle of the scheduler running this task (not a reference).
    pub fn scheduler_handle(&self) -> *mut std::ffi::c_void {
        self.shared().user_handle()
    }
}
