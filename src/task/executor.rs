//! The worker loop of a wait (000 §2.3.3, 002 §3.3.2): find a ready task by priority, run it,
//! complete or respawn it; go idle when nothing is available, and end when the whole DAG is done.
//!
//! ## Where a worker looks, and what "available to it" means
//! For each priority from High to Low, a worker looks in: (1) its private queue, (2) its own
//! published stack, (3) the injection stack of host-spawned tasks, (4) the published stacks of the
//! other workers, (5) if it leads a team, the team-task stack. (2)–(4) and (5) are skipped with
//! one load each when their count hints (`Shared::shared_ready`, `team_ready`) are zero, and all
//! of them with one load when the summary hint `shared_ready[ANY_READY]` is not positive; then the
//! highest non-empty private priority is a bit scan away (`LocalQueues::pop_highest`). The hints
//! are changed after each push (Release) and after each pop, so they may lag the stacks briefly
//! (even go negative for a moment), never for good: a task missed because of a lagging hint is
//! found at a later look, and termination does not read the hints (it examines the stacks, see
//! below). It runs the first task it finds. A task is *available* to a worker when it
//! is in one of these places at the moment the worker examines that place, so a worker never
//! takes a lower-priority task while a higher-priority one was available to it during its
//! search. Within a place, the newest ready task runs first (LIFO, 002 §2.1.2). Tasks in another
//! worker's private queue are not available; that worker publishes its oldest one while idle
//! workers outnumber the tasks in the shared stacks (`share_if_idle`), so idle workers get work
//! without busy workers paying for atomic queue operations, and without a busy worker publishing
//! (and taking back) every task while an idle one is slow to take any. With one worker everything is in its own queues and the order is
//! exactly: highest priority first, newest first within a priority (host-spawned tasks, in the
//! injection stack, after the worker's own tasks of the same priority).
//!
//! ## Termination (002 §3.3.2, by an equivalent of the ready-plus-executing count)
//! A worker that finds nothing increments the idle count of `Shared::idle`; one that leaves idle
//! adds `IDLE_EPOCH_ONE - 1`, which also bumps the epoch in the upper bits. A worker is idle only
//! with an empty private queue and no task in hand, and only non-idle workers push tasks. The
//! DAG is done when an idle worker reads the word with all workers idle (`s1`), finds every
//! shared stack empty, and reads the word again unchanged (`s2`): no worker left idle between
//! the reads (the epoch did not move), so nobody pushed or popped during the scan, and the empty
//! stacks and private queues with no task running mean no task is ready or executing. Ordering:
//! pushes and unlocks of the stacks are Release and the scan's loads Acquire, so a pop or push
//! the scan observes happens-before `s2`; a worker's leave, which precedes its pop, would then
//! be visible to `s2` (SeqCst). Entities still waiting at that point can never run: `wait`
//! reports them as a deadlock.

use super::context::TaskContext;
use super::header::{Access, TaskHeader, INTERNAL_REF};
use super::place::{Count, Place};
use super::scheduler::{Shared, ANY_READY, IDLE_COUNT_MASK, IDLE_EPOCH_ONE};
use super::statistics::Rooms;
use super::team_task::{ExecutionRecord, Respawn, TeamState};
use super::worker::{CurrentWorker, Worker};
use crate::exec::TeamMember;
use crate::priority::Priority;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

/// Tasks run inside spawns (the single-worker mitigation) nest at most this deep, so that the
/// stack stays bounded.
const MAX_NESTING: u32 = 32;
/// Polls of an idle worker before it starts yielding its core between polls.
const SPINS_BEFORE_YIELD: u32 = 64;

impl Worker {
    /// The loop one thread runs during a wait.
    pub(crate) fn run_loop(&self, shared: &Shared) {
        let _current = CurrentWorker::enter(shared, self);
        let place = Place::worker(shared, self);
        let team = self.team(shared);
        let team_rank = self.rank % shared.team_size;
        let leader = team_rank == 0;
        loop {
            if !leader {
                // SAFETY: the worker's thread; a short borrow.
                let seen = unsafe { &mut self.owned().team_seq };
                if let Some(task) = team.take_post(seen) {
                    self.run_as_member(&place, task, team, team_rank);
                    continue;
                }
            }
            if let Some(task) = self.find_task(shared, leader) {
                self.share_if_idle(shared);
                self.execute(&place, task);
                continue;
            }
            if self.wait_idle(shared, team, leader) {
                break;
            }
        }
        self.end_wait(shared);
    }

    fn team<'s>(&self, shared: &'s Shared) -> &'s TeamState {
        &shared.teams[self.rank / shared.team_size]
    }

    /// The highest-priority available task (module comment).
    #[inline]
    pub(crate) fn find_task(&self, shared: &Shared, leader: bool) -> Option<NonNull<TaskHeader>> {
        // The common case: nothing outside the private queues (one load), so the highest
        // non-empty private priority is the answer.
        if !shared.any_visible() {
            // SAFETY: the worker's thread; a short borrow.
            return unsafe { self.owned().local.pop_highest() };
        }
        self.find_task_anywhere(shared, leader)
    }

    /// `find_task` when other places may hold tasks: each priority, highest first, everywhere.
    #[inline(never)]
    fn find_task_anywhere(&self, shared: &Shared, leader: bool) -> Option<NonNull<TaskHeader>> {
        for priority in Priority::ALL {
            let p = priority.index();
            if let Some(task) = self.local_pop(priority) {
                return Some(task);
            }
            if shared.shared_ready[p].load(Ordering::Relaxed) > 0 {
                if let Some(task) = self.take_shared(shared, p) {
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

    /// A task of priority `p` from this worker's published stack, the injection stack, or
    /// another worker's published stack.
    fn take_shared(&self, shared: &Shared, p: usize) -> Option<NonNull<TaskHeader>> {
        if let Some(task) = self.published[p].pop() {
            return Some(task);
        }
        if let Some(task) = shared.injection[p].pop() {
            return Some(task);
        }
        let n = shared.workers.len();
        for k in 1..n {
            let victim = &shared.workers[(self.rank + k) % n];
            if let Some(task) = victim.published[p].pop() {
                // SAFETY: the worker's thread; a short borrow.
                unsafe { self.owned().counters.steals += 1 };
                return Some(task);
            }
        }
        None
    }

    /// Publishes the oldest private task when idle workers outnumber the published tasks
    /// (module comment). The test is inlined; with one worker it is all there is.
    #[inline(always)]
    pub(crate) fn share_if_idle(&self, shared: &Shared) {
        if shared.workers.len() == 1 {
            return;
        }
        let idle = shared.idle.load(Ordering::Relaxed) & IDLE_COUNT_MASK;
        // Relaxed, both: hints. A task published beyond what the idle workers take comes back
        // to its owner, which pays a push and a pop for nothing; an idle worker that is slow to
        // look (descheduled, or yielding between polls) would otherwise have every busy worker
        // publish and take back each of its tasks until it does.
        if idle == 0 || shared.shared_ready[ANY_READY].load(Ordering::Relaxed) >= idle as isize {
            return;
        }
        self.share_oldest(shared);
    }

    #[inline(never)]
    fn share_oldest(&self, shared: &Shared) {
        // SAFETY: the worker's thread; a short borrow.
        let owned = unsafe { self.owned() };
        let Some((task, priority)) = owned.local.take_oldest() else {
            return;
        };
        // The task may be the dependence a when_all waits on privately: that wait no longer is
        // (`Place::respawn_access`).
        owned.private_wait = std::ptr::null_mut();
        let p = priority.index();
        // SAFETY: the task is ready and ours; we give it up.
        unsafe { self.published[p].push(task) };
        // Release: an idle worker that sees the count then finds the task in the stack.
        shared.shared_ready[p].fetch_add(1, Ordering::Release);
        shared.shared_ready[ANY_READY].fetch_add(1, Ordering::Release);
    }

    /// Idles until work may be available (`false`) or the DAG is done (`true`).
    fn wait_idle(&self, shared: &Shared, team: &TeamState, leader: bool) -> bool {
        let n = shared.workers.len() as u64;
        shared.idle.fetch_add(1, Ordering::SeqCst);
        let mut polls: u32 = 0;
        loop {
            if shared.done.load(Ordering::Acquire) {
                return true;
            }
            // SAFETY: the worker's thread; a short read.
            let seen = unsafe { self.owned().team_seq };
            if (!leader && team.has_post(seen)) || shared.work_visible(leader) {
                shared.idle.fetch_add(IDLE_EPOCH_ONE - 1, Ordering::SeqCst);
                return false;
            }
            if shared.idle.load(Ordering::SeqCst) & IDLE_COUNT_MASK == n && shared.try_terminate() {
                return true;
            }
            polls = polls.wrapping_add(1);
            if polls < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Runs a task this worker took: a single task, or a team task it leads. Inlined into its
    /// two loops (`run_loop`, `run_ready_tasks`), so that a task's run costs no call and no
    /// saving of registers of its own: with one worker nearly every task runs in
    /// `run_ready_tasks`, where this saved 21 instructions per Fibonacci node.
    #[inline(always)]
    pub(crate) fn execute(&self, place: &Place<'_>, task: NonNull<TaskHeader>) {
        let shared = place.shared;
        // The task's context holds a copy of the place (`TaskContext::new`): were it `place`,
        // which the task function can reach through the context, every use of its fields after
        // the call would load them again, and in `run_ready_tasks` they are constants. (No call
        // receives `place` itself: out-of-line steps take its fields,
        // `Place::out_of_line`. A worker's place never sets `scheduler_unused`.)
        // SAFETY: a ready task is alive (incomplete hold) and ours until we complete it.
        let team_task = unsafe { task.as_ref() }.is_team();
        if team_task && shared.team_size > 1 {
            let team = self.team(shared);
            team.post(task);
            let member = team.team.member(0, 0, 1);
            self.call(place, task, member, &team.record);
            member.barrier();
            self.finish(place, task, team.record.take_respawn());
        } else {
            let record = ExecutionRecord::new();
            let member = if team_task {
                self.team(shared).team.member(0, 0, 1)
            } else {
                self.single_team.member(0, 0, 1)
            };
            // SAFETY: the worker's thread; short borrows. Nested runs (inside a spawn) save and
            // restore the pointer the same way.
            let outer = unsafe { std::mem::replace(&mut self.owned().record, &record) };
            self.call(place, task, member, &record);
            unsafe { self.owned().record = outer };
            self.finish(place, task, record.into_respawn());
        }
        // SAFETY: the worker's thread; a short borrow.
        unsafe { self.owned().counters.executions += 1 };
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
        self.call(place, task, member, &team.record);
        // The leader completes the task after this barrier; the task is not touched after it.
        member.barrier();
    }

    /// Calls the task function with a context for `member`. Inlined, so that no call receives
    /// `place` (the context holds a copy).
    #[inline(always)]
    fn call(
        &self,
        place: &Place<'_>,
        task: NonNull<TaskHeader>,
        member: TeamMember<'_>,
        record: &ExecutionRecord,
    ) {
        let ctx = TaskContext::new(place, task, member, record);
        let address = &ctx as *const TaskContext<'_>;
        // SAFETY: the worker's thread; short borrows, none held across the call. Tasks run
        // inside a spawn nest, so the outer context comes back when this call returns.
        let outer = unsafe { std::mem::replace(&mut self.owned().context, address.cast()) };
        // A private wait recorded by an earlier run is no longer one (`Place::respawn_access`).
        unsafe { self.owned().private_wait = std::ptr::null_mut() };
        // SAFETY: tasks always have a function (spawn requires one).
        let function = unsafe { task.as_ref() }.function();
        if let Some(function) = function {
            let state = TaskHeader::state_ptr(task).cast::<c_void>();
            // SAFETY: the function was given for this state; the context outlives the call.
            unsafe { function(address as *mut c_void, state) };
        }
        // SAFETY: as above.
        unsafe { self.owned().context = outer };
    }

    /// After a run: respawn the task (000 §2.2.1) or complete it (000 §2.3.1).
    #[inline(always)]
    fn finish(&self, place: &Place<'_>, task: NonNull<TaskHeader>, respawn: Option<Respawn>) {
        // SAFETY: we hold the task until it is scheduled or completed.
        let t = unsafe { task.as_ref() };
        // The dependence held since the previous respawn is complete: let it go.
        // SAFETY: the executing thread holds the task.
        let held = unsafe { t.dependence() };
        if let Some(held) = NonNull::new(held) {
            // SAFETY: as above.
            let user = unsafe { t.dependence_is_user() };
            unsafe { t.set_dependence(std::ptr::null_mut(), false) };
            if user {
                // The reference the task's release handed over: it is there to be released.
                let released = place.release_user(held);
                debug_assert!(released.is_ok());
            } else {
                place.release_internal(held);
            }
        }
        match respawn {
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
                let access = place.respawn_access(r.dependence, r.taken_over);
                place.schedule_task_with(task, r.dependence, r.priority, t.is_team(), access);
            }
            None => {
                // 002 §2.2.5: the closure is destroyed as soon as the task completes, so futures
                // it holds are released before anything waiting on the task runs.
                if let Some(destroy) = t.destroy_function() {
                    // SAFETY: the state was built for this callback; it runs once, here.
                    unsafe { destroy(TaskHeader::state_ptr(task).cast()) };
                }
                place.complete_task(task);
            }
        }
    }

    /// Whether a task is ready for this worker (a hint for the single-worker mitigation).
    #[inline(always)]
    pub(crate) fn has_ready_tasks(&self, shared: &Shared) -> bool {
        // SAFETY: the worker's thread; a short read.
        let queued = unsafe { !self.owned().local.is_empty() };
        queued || shared.work_visible(true)
    }

    /// Runs every available task before a spawn allocates, when this is the only worker
    /// (002 §3.3.2: keeps the memory high-water mark of a single worker down). The tasks run at
    /// a place whose fields are constants here (`Place::exclusive`), so that the executions
    /// inlined below test neither the access nor the worker.
    #[inline(never)]
    pub(crate) fn run_ready_tasks(&self, shared: &Shared) {
        let place = &Place::exclusive(shared, self);
        // SAFETY: the worker's thread; short borrows around the nested runs.
        let depth = unsafe { self.owned().nesting };
        if depth >= MAX_NESTING {
            return;
        }
        unsafe { self.owned().nesting = depth + 1 };
        while let Some(task) = self.find_task(place.shared, true) {
            self.execute(place, task);
        }
        unsafe { self.owned().nesting = depth };
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
        shared.flush_alive(
            std::mem::take(&mut owned.alive_delta),
            std::mem::take(&mut owned.bytes_delta),
        );
        shared.totals.add(&std::mem::take(&mut owned.counters));
        debug_assert!(owned.local.is_empty());
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
        let all_empty = (0..3).all(|p| {
            self.injection[p].looks_empty()
                && self.team_queue[p].looks_empty()
                && self.workers.iter().all(|w| w.published[p].looks_empty())
        });
        if !all_empty || self.idle.load(Ordering::SeqCst) != before {
            return false;
        }
        self.done.store(true, Ordering::Release);
        true
    }
}
