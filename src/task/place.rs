//! Where an operation on tasks and when_alls runs: on a worker during a wait, or on a host thread
//! outside one. The place decides how entities synchronize (`Access`), where memory comes from and
//! goes to (the worker's block cache or the pool), where ready tasks go (the worker's queues or
//! the shared stacks), and where counts are kept.
//!
//! This file holds the life-cycle steps every entity shares (000 §2.3.1, 002 §3.3.1): scheduling
//! a task into a wait or ready queue (Fig. 3.4), advancing a when_all's scan (Fig. 3.5),
//! completing an entity (Fig. 3.6), and releasing references down to freeing the block.

use super::block_cache::{block_lg2, return_to_pool};
use super::header::{Access, Kind, TaskHeader, USER_REF};
use super::scheduler::{ForeignGuard, Shared, ANY_READY};
use super::wait_queue;
use super::worker::Worker;
use crate::error::{Error, ErrorKind, Result};
use crate::pool::AllocFailure;
use crate::priority::Priority;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

/// Search rounds a pool allocation may take before the spawn reports exhaustion.
const ALLOCATE_ATTEMPTS: u32 = 4;

pub(crate) struct Place<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) worker: Option<&'a Worker>,
    pub(crate) access: Access,
    /// Set on the host when the scheduler's last live entity and last owner are gone: the caller
    /// must then free the scheduler (after its foreign guard ended).
    scheduler_unused: Cell<bool>,
}

/// What `Place::count` counts.
#[derive(Clone, Copy)]
pub(crate) enum Count {
    Spawned,
    Respawned,
    WhenAlls,
    WhenAllsCompleted,
    AllocationFailures,
}

impl<'a> Place<'a> {
    /// The calling worker, during a wait.
    #[inline]
    pub(crate) fn worker(shared: &'a Shared, worker: &'a Worker) -> Place<'a> {
        Place {
            shared,
            worker: Some(worker),
            access: worker.access(),
            scheduler_unused: Cell::new(false),
        }
    }

    /// Runs the rare or large step `f` out of line, at a place with this place's fields. The
    /// call takes the fields, not `&self`: a place whose reference no call receives stays in
    /// registers, and constant where its fields are (`Worker::run_ready_tasks`); a reference
    /// would make every caller build its place in memory for the call. Each `f` gets its own
    /// out-of-line copy (`at_fields` is generic), so the calls stay direct.
    #[inline(always)]
    fn out_of_line(&self, f: impl FnOnce(&Place<'_>)) {
        if Place::at_fields(self.shared, self.worker, self.access, f) {
            self.scheduler_unused.set(true);
        }
    }

    /// `out_of_line`'s call: runs `f` at a place with these fields and returns that place's
    /// `scheduler_unused`.
    #[inline(never)]
    fn at_fields<F: FnOnce(&Place<'_>)>(
        shared: &Shared,
        worker: Option<&Worker>,
        access: Access,
        f: F,
    ) -> bool {
        let place = Place::at(shared, worker, access);
        f(&place);
        place.scheduler_unused()
    }

    /// A place with these fields, for the out-of-line calls above and `spawn`'s.
    #[inline(always)]
    pub(crate) fn at(shared: &'a Shared, worker: Option<&'a Worker>, access: Access) -> Place<'a> {
        Place {
            shared,
            worker,
            access,
            scheduler_unused: Cell::new(false),
        }
    }

    /// The calling worker, during a wait with several workers (`Access::Shared`): a place whose
    /// access is a constant where it is inlined, as `exclusive`'s.
    #[inline(always)]
    pub(crate) fn shared_worker(shared: &'a Shared, worker: &'a Worker) -> Place<'a> {
        Place::worker_with(shared, worker, Access::Shared)
    }

    /// The calling worker, during a wait with one worker (`Access::Exclusive`).
    #[inline(always)]
    pub(crate) fn exclusive(shared: &'a Shared, worker: &'a Worker) -> Place<'a> {
        Place::worker_with(shared, worker, Access::Exclusive)
    }

    /// The calling worker, whose wait's access is `access` (a constant at the callers above).
    #[inline(always)]
    fn worker_with(shared: &'a Shared, worker: &'a Worker, access: Access) -> Place<'a> {
        debug_assert_eq!(worker.access(), access);
        Place {
            shared,
            worker: Some(worker),
            access,
            scheduler_unused: Cell::new(false),
        }
    }

    /// A host thread, inside a foreign section (no wait runs meanwhile).
    pub(crate) fn host(shared: &'a Shared, _guard: &ForeignGuard<'a>) -> Place<'a> {
        Place {
            shared,
            worker: None,
            access: Access::Shared,
            scheduler_unused: Cell::new(false),
        }
    }

    /// Whether the caller must free the scheduler once its foreign section has ended.
    pub(crate) fn scheduler_unused(&self) -> bool {
        self.scheduler_unused.get()
    }

    /// Counts one event: in the worker's counters, or from the host in the totals.
    #[inline]
    pub(crate) fn count(&self, what: Count) {
        match self.worker {
            Some(w) => {
                // SAFETY: the worker's thread; a short borrow.
                let c = unsafe { &mut w.owned().counters };
                *match what {
                    Count::Spawned => &mut c.spawned,
                    Count::Respawned => &mut c.respawned,
                    Count::WhenAlls => &mut c.when_alls,
                    Count::WhenAllsCompleted => &mut c.when_alls_completed,
                    Count::AllocationFailures => &mut c.allocation_failures,
                } += 1;
            }
            None => self.shared.totals.count(what),
        }
    }

    #[inline]
    pub(crate) fn next_generation(&self) -> u32 {
        match self.worker {
            Some(w) => w.next_generation(),
            // Relaxed: only spreads generations.
            None => self.shared.host_generation.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// lg2 of the size of the pool block that serves a request of `bytes` (at least a header's,
    /// at most the largest block, 000 §2.5.3).
    #[inline(always)]
    pub(crate) fn block_lg2(&self, bytes: usize) -> u32 {
        block_lg2(bytes, self.shared.min_block_mask)
    }

    /// Adds one allocated (`sign` 1) or released (`sign` -1) block of `2^block_lg2` bytes to the
    /// live counts (see `statistics.rs` for the peaks' accuracy).
    #[inline(always)]
    fn alive_add(&self, sign: i64, block_lg2: u32) {
        let shared = self.shared;
        let bytes = sign << block_lg2;
        match (self.worker, self.access) {
            (Some(w), Access::Exclusive) => {
                // The only thread touching the scheduler: exact peaks, through the rooms below
                // them (`Rooms`): one update and one sign test per count, where the counts and
                // peaks themselves would take a load, an update and a compare with the peak.
                // Only an allocation can raise a peak (`sign` is a constant where this is
                // inlined). A test after each update: each is then a read-modify-write of memory
                // and a jump on its sign, where one test of both rooms' `|` loaded and stored
                // both (callgrind, F(22): td_task_spawn 186.5 -> 184.5 instructions per node
                // with one worker).
                // SAFETY: the worker's thread; a short borrow.
                let owned = unsafe { w.owned() };
                owned.alive_room -= sign;
                if sign > 0 && owned.alive_room < 0 {
                    shared.raise_peaks(&mut owned.alive_room, &mut owned.bytes_room);
                }
                owned.bytes_room -= bytes;
                if sign > 0 && owned.bytes_room < 0 {
                    shared.raise_peaks(&mut owned.alive_room, &mut owned.bytes_room);
                }
            }
            (Some(w), Access::Shared) => {
                // SAFETY: the worker's thread.
                let owned = unsafe { w.owned() };
                owned.bytes_delta += bytes;
                if let Some(d) = owned.alive_delta.add(sign) {
                    shared.flush_alive_taking(d, &mut owned.bytes_delta);
                }
            }
            (None, _) => {
                if Place::host_alive_add(self.shared, sign, bytes) {
                    self.scheduler_unused.set(true);
                }
            }
        }
    }

    /// `alive_add` from the host; `true` when it brought the live count to zero (the place's
    /// `scheduler_unused`). The scheduler state, not `&self`, as for `out_of_line`.
    #[inline(never)]
    fn host_alive_add(shared: &Shared, sign: i64, bytes: i64) -> bool {
        let total = shared.alive_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        shared.peak_bytes.fetch_max(total, Ordering::Relaxed);
        // AcqRel: the thread that brings the count to zero frees the scheduler and must see
        // every other thread's use of it.
        let before = shared.alive.fetch_add(sign, Ordering::AcqRel);
        shared
            .peak_alive
            .fetch_max(before + sign, Ordering::Relaxed);
        before + sign == 0
    }

    /// A block of `bytes`, whose size has lg2 `block_lg2` (`block_lg2(bytes)`), for a new
    /// entity, counted live; `what` names the operation for messages.
    #[inline(always)]
    pub(crate) fn allocate(&self, bytes: usize, block_lg2: u32, what: &str) -> Result<NonNull<u8>> {
        let block = match self.take_cached(block_lg2) {
            Some(block) => block,
            None => self.allocate_uncached(bytes, what)?,
        };
        self.count_allocated(block_lg2);
        Ok(block)
    }

    /// The cached part of `allocate`: a block of `2^block_lg2` bytes from the worker's cache,
    /// not counted yet, or `None`. Callers that apply `?` to `allocate_uncached` alone keep the
    /// cache hit free of a test of the merged result (callgrind, F(22): td_task_spawn
    /// 203.5 -> 200.5 instructions per node).
    #[inline(always)]
    pub(crate) fn take_cached(&self, block_lg2: u32) -> Option<NonNull<u8>> {
        let w = self.worker?;
        // SAFETY: the worker's thread; the cache does not re-enter the scheduler.
        unsafe { w.owned().cache.take_lg2(block_lg2) }
    }

    /// `allocate` once `take_cached` has found nothing; not counted yet.
    #[inline(always)]
    pub(crate) fn allocate_uncached(&self, bytes: usize, what: &str) -> Result<NonNull<u8>> {
        self.detached().allocate_from_pool(bytes, what)
    }

    /// Counts a block of `2^block_lg2` bytes from `take_cached` or `allocate_uncached` live,
    /// before the place's next allocation or release.
    #[inline(always)]
    pub(crate) fn count_allocated(&self, block_lg2: u32) {
        self.alive_add(1, block_lg2);
    }

    /// A copy of the place, for out-of-line calls from inlined hot paths that cannot set
    /// `scheduler_unused` (an allocation, a when_all's creation, a task's context: only a host
    /// release can bring the live count to zero): passing `self` would let it escape, so that
    /// the code after the call would reload its fields from memory after every store through a
    /// pointer.
    #[inline(always)]
    pub(crate) fn detached(&self) -> Place<'a> {
        Place {
            shared: self.shared,
            worker: self.worker,
            access: self.access,
            scheduler_unused: Cell::new(false),
        }
    }

    #[inline(never)]
    fn allocate_from_pool(&self, bytes: usize, what: &str) -> Result<NonNull<u8>> {
        let pool = &*self.shared.pool;
        let block = match pool.allocate(bytes, ALLOCATE_ATTEMPTS) {
            Ok(block) => block,
            Err(AllocFailure::Exhausted { .. }) => {
                // Blocks this worker cached may free superblocks for other sizes.
                let retry = self.worker.and_then(|w| {
                    // SAFETY: as above.
                    unsafe { w.owned().cache.flush(pool) };
                    pool.allocate(bytes, ALLOCATE_ATTEMPTS).ok()
                });
                match retry {
                    Some(block) => block,
                    None => {
                        self.count(Count::AllocationFailures);
                        return Err(self.exhausted(bytes, what));
                    }
                }
            }
            Err(failure) => {
                return Err(failure.into_error().unwrap_or_else(|| {
                    Error::new(
                        ErrorKind::Internal,
                        format!("{what}: a zero-byte allocation"),
                    )
                }))
            }
        };
        Ok(block)
    }

    #[cold]
    fn exhausted(&self, bytes: usize, what: &str) -> Error {
        let pool = &self.shared.pool;
        let stats = pool.usage_statistics();
        Error::new(
            ErrorKind::PoolExhausted,
            format!(
                "{what}: the scheduler's memory pool has no free block of {} bytes ({} of {} \
                 bytes are allocated); let running tasks complete and release their futures, \
                 throttle spawning (respawn a driver task at low priority), or create the \
                 scheduler with a larger pool",
                pool.allocate_block_size(bytes),
                stats.consumed_bytes,
                stats.capacity_bytes
            ),
        )
    }

    /// Frees an entity whose last reference is gone: a when_all first drops the references it
    /// still holds to its dependences, then the block goes to the worker's cache or the pool.
    /// Inlined: a call would need the place in memory, which a future's release builds only for
    /// it, and the common path is a few loads and stores.
    #[inline(always)]
    pub(crate) fn free(&self, entity: NonNull<TaskHeader>) {
        // SAFETY: nobody references the entity any more.
        let e = unsafe { entity.as_ref() };
        // Only a when_all retains dependences (a task's `retained` stays 0 from `init`), so the
        // kind need not be tested.
        // SAFETY (`retained`): nobody references the entity, so no scan runs.
        if unsafe { e.retained() } != 0 {
            self.out_of_line(|place| place.release_dependences(entity));
        }
        let lg2 = e.block_lg2();
        e.mark_freed();
        // SAFETY: the block is unreferenced; the cache does not re-enter the scheduler.
        let kept = self
            .worker
            .is_some_and(|w| unsafe { w.owned().cache.keep_lg2(entity, lg2) });
        if !kept {
            // SAFETY: as above.
            unsafe { return_to_pool(&self.shared.pool, entity, e.alloc_size()) };
        }
        self.alive_add(-1, lg2);
    }

    /// `free` for a task of `generation` that nobody references any more, into the worker's
    /// block cache; `false`, changing nothing, when the place has no worker or the cache's list
    /// for the block's size is full. No call, unlike `free` (`future::release_last`).
    #[inline(always)]
    pub(crate) fn free_task_to_cache(&self, task: NonNull<TaskHeader>, generation: u32) -> bool {
        // SAFETY: nobody references the task any more.
        let t = unsafe { task.as_ref() };
        // SAFETY (`retained`): as above, no scan runs.
        debug_assert_eq!(unsafe { t.retained() }, 0, "a task holds no dependences");
        let lg2 = t.block_lg2();
        // SAFETY: the block is unreferenced; the cache does not re-enter the scheduler.
        let kept = self
            .worker
            .is_some_and(|w| unsafe { w.owned().cache.keep_lg2(task, lg2) });
        if kept {
            t.mark_freed_as(generation);
            self.alive_add(-1, lg2);
        }
        kept
    }

    /// Drops the holds a freed when_all still has on dependences it had not examined (run out of
    /// line by `free`).
    fn release_dependences(&self, when_all: NonNull<TaskHeader>) {
        // SAFETY: the last reference is gone, so no scan runs; the array has `size` entries.
        let w = unsafe { when_all.as_ref() };
        let deps = TaskHeader::dependences_ptr(when_all);
        let held = unsafe { w.retained() } as usize;
        for i in 0..held {
            if let Some(d) = NonNull::new(unsafe { *deps.add(i) }) {
                self.release_internal(d);
            }
        }
    }

    /// Drops an internal hold; frees the entity if it was the last reference of a complete one.
    #[inline(always)]
    pub(crate) fn release_internal(&self, entity: NonNull<TaskHeader>) {
        // SAFETY: the caller owns the hold, so the entity is alive.
        if unsafe { entity.as_ref() }.release_internal(self.access) {
            self.free(entity);
        }
    }

    /// Drops a user reference; frees the entity if it was the last one. Fails, changing nothing,
    /// when the entity has no user reference left (a future released twice).
    #[inline(always)]
    pub(crate) fn release_user(&self, entity: NonNull<TaskHeader>) -> std::result::Result<(), ()> {
        // SAFETY: validated by the caller; it claims to hold a user reference.
        if unsafe { entity.as_ref() }.release_user(self.access)? {
            self.free(entity);
        }
        Ok(())
    }

    /// Schedules a task that has `dependence` (002 Fig. 3.4): into the dependence's wait queue
    /// while it is incomplete, else into a ready queue. `priority` and `team` are what the task's
    /// header holds; the callers (spawn, respawn) have them at hand, so the header written just
    /// before need not be read back.
    #[inline(always)]
    pub(crate) fn schedule_task(
        &self,
        task: NonNull<TaskHeader>,
        dependence: Option<NonNull<TaskHeader>>,
        priority: Priority,
        team: bool,
    ) {
        if let Some(d) = dependence {
            // SAFETY: the caller holds `task` and a reference to `d`; `task` is in no queue.
            if unsafe { wait_queue::push(&d.as_ref().wait, task, self.access) } {
                return;
            }
        }
        self.make_ready_as(task, priority.index(), team);
    }

    /// Puts a ready task where it can run: a team task on the team queue; a single task on this
    /// worker's private queue (published when an idle worker asks), or, from the host, on the
    /// injection stack that every worker reads.
    #[inline(always)]
    pub(crate) fn make_ready(&self, task: NonNull<TaskHeader>) {
        // SAFETY: the caller holds the ready task.
        let t = unsafe { task.as_ref() };
        self.make_ready_as(task, t.priority_index(), t.is_team());
    }

    /// `make_ready` for a task of priority index `p` (below 3) that is a team task if `team`.
    #[inline(always)]
    fn make_ready_as(&self, task: NonNull<TaskHeader>, p: usize, team: bool) {
        if team {
            if let Some(w) = self.worker {
                // Team tasks run on other workers: have them running (executor.rs, "Starting
                // alone").
                w.recruit(self.shared);
            }
            // SAFETY: the task is in no queue; we give it up.
            unsafe { self.shared.team_queue[p].push(task) };
            // Release: a worker that sees the count finds the task in the stack.
            self.shared.team_ready[p].fetch_add(1, Ordering::Release);
            self.shared.shared_ready[ANY_READY].fetch_add(1, Ordering::Release);
            return;
        }
        match self.worker {
            Some(w) => {
                w.local_push(task, p, self.access);
                // With one worker nobody is there to share with (a constant test where the
                // place's access is, see `Place::exclusive`). While a High task is queued, a
                // request waits for the worker's next task (`Worker::share_after_push`).
                if self.access == Access::Shared {
                    w.share_after_push(self.shared);
                }
            }
            None => {
                // SAFETY: as above.
                unsafe { self.shared.injection[p].push(task) };
                self.shared.shared_ready[p].fetch_add(1, Ordering::Release);
                self.shared.shared_ready[ANY_READY].fetch_add(1, Ordering::Release);
            }
        }
    }

    /// Continues a when_all's scan of its dependences (002 Fig. 3.5), from the last to the first:
    /// waits on the next incomplete one, or completes the when_all when none is left. Runs on one
    /// thread at a time: the creator, then whoever completes the dependence it waits on.
    /// Inlined, with the when_all's usual completion (`complete_when_all`), into the completion
    /// of the dependence it waited on: no call between a task's end and its waiter's.
    #[inline(always)]
    pub(crate) fn advance_when_all(&self, when_all: NonNull<TaskHeader>) {
        // SAFETY: this thread runs the scan; the when_all is incomplete, so its incomplete hold
        // keeps it alive until `complete` below.
        let w = unsafe { when_all.as_ref() };
        let deps = TaskHeader::dependences_ptr(when_all);
        loop {
            // SAFETY: see above.
            let remaining = unsafe { w.scan() };
            if remaining == 0 {
                self.complete_when_all(when_all);
                return;
            }
            // Written before the push: once pushed, the dependence's completer continues the
            // scan on another thread.
            unsafe { w.set_scan(remaining - 1) };
            // SAFETY: `remaining - 1 < size`; the dependence is held by the when_all (below
            // `retained`) or was examined while the creator's caller held it.
            let Some(d) = NonNull::new(unsafe { *deps.add(remaining as usize - 1) }) else {
                continue;
            };
            // SAFETY: as above.
            if unsafe { self.when_all_waits_on(when_all, d) } {
                return;
            }
        }
    }

    /// One step of a when_all's scan: pushes the when_all onto the wait queue of dependence `d`
    /// (the scan's position already written past it); `false` when `d` is complete.
    ///
    /// # Safety
    /// The caller runs the scan, and the when_all is in no queue; `d` is held (by the when_all
    /// or, while creating, by the caller).
    #[inline(always)]
    pub(crate) unsafe fn when_all_waits_on(
        &self,
        when_all: NonNull<TaskHeader>,
        d: NonNull<TaskHeader>,
    ) -> bool {
        wait_queue::push(&d.as_ref().wait, when_all, self.access)
    }

    /// Completes a when_all whose scan has ended: counts it, then completes it as `complete`
    /// does, with the usual case (000 Fig. 3.4: a task respawned on it and released its future,
    /// `complete_respawn_dependence`) inlined into the scan; the others take `complete_waited`,
    /// out of line, so that the recursion (a when_all waiting on a when_all) has a call.
    #[inline(always)]
    pub(crate) fn complete_when_all(&self, when_all: NonNull<TaskHeader>) {
        self.count(Count::WhenAllsCompleted);
        if !self.complete_respawn_dependence(when_all) {
            self.complete_waited(when_all);
        }
    }

    /// Completes a task whose destroy callback has run (002 Fig. 3.6): closes its wait queue,
    /// schedules every waiter, which ends the hold it had while incomplete. Completed tasks are
    /// not counted: every run of a task ends in a respawn or here, so they are the executions
    /// less the respawns (`Totals::add`). Inlined into the executor with the scan of a when_all
    /// waiting on the task and that when_all's usual completion: from a task's end to its
    /// waiter's scheduling, no call.
    #[inline(always)]
    pub(crate) fn complete(&self, task: NonNull<TaskHeader>) {
        if !self.complete_respawn_dependence(task) {
            self.close_and_schedule(task);
        }
    }

    /// `close_and_schedule`, out of the when_all scan that is inlined into `complete`.
    #[inline(always)]
    fn complete_waited(&self, when_all: NonNull<TaskHeader>) {
        self.out_of_line(|place| place.close_and_schedule(when_all));
    }

    /// The rest of `complete` once the entity is known not to end as a respawn dependence.
    #[inline(always)]
    fn close_and_schedule(&self, entity: NonNull<TaskHeader>) {
        // SAFETY: the incomplete hold (the open queue) keeps the entity alive until the close.
        let e = unsafe { entity.as_ref() };
        let closed = wait_queue::close(&e.wait, self.access);
        debug_assert!(closed.is_some(), "an entity completed twice");
        // The entity is not touched again unless nobody else holds it (`Closed`).
        if let Some(closed) = closed {
            self.schedule_waiters(closed.waiters);
            if closed.orphaned {
                self.free(entity);
            }
        }
    }

    /// `complete` for a task whose destroy callback has run, with the case of a task nobody
    /// waits on inlined into the executor: close the queue and drop the hold. That case is
    /// common in recursive DAGs (with one worker, about half of Fibonacci's tasks: a first child
    /// runs before a spawn and completes before its parent creates the when_all).
    #[inline(always)]
    pub(crate) fn complete_task(&self, task: NonNull<TaskHeader>) {
        // SAFETY: the incomplete hold (the open queue) keeps the task alive until the close.
        if wait_queue::has_waiters(unsafe { &task.as_ref().wait }) {
            self.complete(task);
            return;
        }
        self.complete_unwaited(task);
    }

    /// `complete_task` with one worker (`Access::Exclusive`), for a loop that runs next, instead
    /// of queuing it, the task this completion makes ready when that is the task the loop would
    /// take next (`Worker::run_ready_tasks`): returns it. That is the usual end of a task that
    /// its parent respawned on (000 Fig. 3.4 with one worker: the parent waits on its second
    /// child alone, `TaskContext::respawn_when_all_raw`), whose completion makes the parent
    /// ready at High priority, the newest High task, which `find_task` takes first. The
    /// parent's reference to the task, taken for its respawn, goes here too, where the task's
    /// fields are at hand, and not at the end of the parent's next run (`Worker::finish`).
    #[inline(always)]
    pub(crate) fn complete_task_next(
        &self,
        task: NonNull<TaskHeader>,
    ) -> Option<NonNull<TaskHeader>> {
        // SAFETY: as in `complete_task`.
        if wait_queue::has_waiters(unsafe { &task.as_ref().wait }) {
            return self.complete_waited_next(task);
        }
        self.complete_unwaited(task);
        None
    }

    /// `complete_task_next` for a task that has a waiter: one that holds its reference to the
    /// task as its respawn dependence (`Respawn`) has it dropped and its dependence cleared, and
    /// is returned when it is a single High task; every other waiter is scheduled.
    #[inline(always)]
    fn complete_waited_next(&self, task: NonNull<TaskHeader>) -> Option<NonNull<TaskHeader>> {
        debug_assert!(self.access == Access::Exclusive);
        // SAFETY: as in `complete_task`.
        let t = unsafe { task.as_ref() };
        if let Some(waiter) = wait_queue::sole_waiter(&t.wait) {
            // SAFETY: the waiter is alive (incomplete hold) and not running: it is ours until it
            // is scheduled.
            let w = unsafe { waiter.as_ref() };
            // Only tasks set a dependence (a when_all's stays null from `init`): no kind test.
            if unsafe { w.dependence() } == task.as_ptr() && unsafe { w.dependence_is_user() } {
                // With one worker nobody else touches the task, so a plain store closes its
                // queue, as `close` would.
                wait_queue::close_unreachable(&t.wait);
                // SAFETY: as above; the waiter is done with the task, which has completed.
                unsafe { w.set_dependence(std::ptr::null_mut(), false) };
                // The waiter's reference: a user reference (tested above), so no error.
                if t.release_user(self.access) == Ok(true) {
                    self.free(task);
                }
                // A single High task would be the newest High one in the private queues, which
                // `find_task` takes first. Pushed and popped, it cost one worker 16 instructions
                // per Fibonacci node more (callgrind, F(22): 543.4 -> 527.4, `run_ready_tasks`
                // 139.9 -> 123.9, the reference's release included).
                if w.priority_index() == Priority::High.index() && !w.is_team() {
                    return Some(waiter);
                }
                self.make_ready(waiter);
                return None;
            }
        }
        self.close_and_schedule(task);
        None
    }

    /// The rest of `complete_task` for a task that no waiter was seen on.
    #[inline(always)]
    fn complete_unwaited(&self, task: NonNull<TaskHeader>) {
        // SAFETY: as in `complete_task`.
        let t = unsafe { task.as_ref() };
        let closed = wait_queue::close(&t.wait, self.access);
        debug_assert!(closed.is_some(), "a task completed twice");
        // The task is not touched again unless nobody else holds it (`Closed`).
        if let Some(closed) = closed {
            // Waiters pushed between the look above and the close: none with one worker,
            // where the test is a constant (callgrind, F(22), one worker: `run_ready_tasks`
            // 123.9 -> 121.4 instructions per node).
            if self.access == Access::Shared {
                if let Some(first) = NonNull::new(closed.waiters) {
                    self.out_of_line(|place| place.schedule_waiters(first.as_ptr()));
                }
            }
            if closed.orphaned {
                self.free(task);
            }
        }
    }

    /// `complete_task` for a task that `Worker::run_ahead` ran for the task on this thread's stack
    /// that holds a reference to it and promised that nobody else uses that reference meanwhile
    /// (`Holders::CallerOnly`, `TaskContext::respawn_when_all_private`). When that reference
    /// is the only reference or hold and no waiter is queued, nobody can push onto the queue:
    /// a push needs a reference or hold, a new one is only made from an existing one, and the
    /// one holder is suspended in this thread's call until the task completes. So a plain store
    /// closes it (`TaskHeader::close_if_sole_holder`) instead of the exchange; nothing is
    /// orphaned, since the caller's reference remains. With several workers most tasks of a
    /// Fibonacci DAG complete here.
    #[inline(always)]
    pub(crate) fn complete_task_run_ahead(&self, task: NonNull<TaskHeader>) {
        // SAFETY: the incomplete hold (the open queue) keeps the task alive until the close.
        if !unsafe { task.as_ref() }.close_if_sole_holder() {
            self.complete_task(task);
        }
    }

    /// Schedules the waiters of a list `close` returned.
    #[inline(always)]
    fn schedule_waiters(&self, list: *mut TaskHeader) {
        let mut next = list;
        while let Some(waiter) = NonNull::new(next) {
            // SAFETY: the waiter came from the closed list and is not scheduled yet.
            next = unsafe { wait_queue::next_waiter(waiter) };
            // SAFETY: a waiter is alive while it waits (incomplete hold).
            match unsafe { waiter.as_ref() }.kind() {
                Kind::Task => self.make_ready(waiter),
                Kind::WhenAll => self.advance_when_all(waiter),
            }
        }
    }

    /// The usual end of a when_all (000 Fig. 3.4: a task respawns on it and releases its future),
    /// without an atomic read-modify-write: when the entity's only waiter is a task that holds the
    /// entity's only user reference as its respawn dependence (taken over from its release, see
    /// `Respawn`), and no other reference or hold exists (`refs` is that user reference; the
    /// entity's own hold is its open queue), nobody else can reach the entity: a new reference is
    /// only made from an existing one, and the waiter is not running (its pusher is done with it;
    /// it is ours until we schedule it). So nobody can push onto the wait queue, which a plain
    /// store closes, and the waiter is done with the entity before it runs again: both references
    /// go now and the entity is freed, instead of one release here and one after the waiter's next
    /// run. Ordering: the Acquire load of the waiter (`sole_waiter`) pairs with the waiter's
    /// Release push, and the Acquire load of `refs` with the Release of every earlier holder's
    /// release, so the free happens after all their accesses, as `release_internal`'s would.
    /// Returns whether it completed the entity.
    #[inline(always)]
    fn complete_respawn_dependence(&self, entity: NonNull<TaskHeader>) -> bool {
        // SAFETY: as in `complete`.
        let e = unsafe { entity.as_ref() };
        // With one worker nothing changes between the loads, so the count comes first: it is
        // the test that fails when a task keeps its children's futures for its next run (the
        // Fibonacci benchmark's: the parent's and the respawn's references), after 13
        // instructions when it came last (callgrind, F(22), one worker: 166.9 -> 160.9 per node
        // in `run_ready_tasks`).
        let exclusive = self.access == Access::Exclusive;
        if exclusive && !e.refs_are(USER_REF) {
            return false;
        }
        let Some(waiter) = wait_queue::sole_waiter(&e.wait) else {
            return false;
        };
        // SAFETY: the waiter is alive (incomplete hold) and not running (see above); its fields
        // were written before its push.
        let w = unsafe { waiter.as_ref() };
        // A when_all waiter fails the first test: only tasks set a dependence (a when_all's stays
        // null from `init`), so the kind need not be tested.
        let reachable = unsafe { w.dependence() } != entity.as_ptr()
            || !unsafe { w.dependence_is_user() }
            || (!exclusive && !e.refs_are(USER_REF));
        if reachable {
            return false;
        }
        wait_queue::close_unreachable(&e.wait);
        // SAFETY: the waiter is ours until it is scheduled.
        unsafe { w.set_dependence(std::ptr::null_mut(), false) };
        self.make_ready(waiter);
        self.free(entity);
        true
    }
}
