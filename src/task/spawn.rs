//! Spawning (000 §2.3.1, §3.2.2; 002 §3.3.1 "Spawn, respawn, and creating a when-all"): allocate
//! the task from the pool, copy its closure (function and state blob) in, and schedule it.

use super::bytes;
use super::future::Future;
use super::header::{
    task_bytes, Access, DestroyFunction, HeaderInit, InitFunction, Kind, TaskFunction, TaskHeader,
    HEADER_BYTES, STATE_ALIGN, USER_REF,
};
use super::place::{Count, Place};
use super::scheduler::{Scheduler, Shared};
use super::worker::Worker;
use crate::error::{Error, ErrorKind, Result};
use crate::priority::Priority;
use std::ptr::NonNull;

/// How a task is scheduled (000 §3.2.2 `TaskSingle` / `TaskTeam`): after which future and at
/// which priority. Whether it runs on one thread or a team is chosen by the spawn function
/// (`spawn` or `spawn_team`), because a team task's closure is shared by the members.
#[derive(Clone, Copy, Default)]
pub struct Policy<'a> {
    /// The task runs after this completes (a task or when_all of the same scheduler).
    pub dependence: Option<&'a Future>,
    pub priority: Priority,
}

impl<'a> Policy<'a> {
    /// Regular priority, ready at once.
    pub fn single() -> Policy<'a> {
        Policy::default()
    }

    pub fn priority(self, priority: Priority) -> Policy<'a> {
        Policy { priority, ..self }
    }

    /// Runs after `dependence` completes.
    pub fn after(self, dependence: &'a Future) -> Policy<'a> {
        Policy {
            dependence: Some(dependence),
            ..self
        }
    }

    pub(crate) fn raw(&self, team: bool) -> RawPolicy {
        RawPolicy {
            dependence: self.dependence.map(Future::header),
            priority: self.priority,
            team,
        }
    }
}

/// A policy whose dependence the caller has validated and holds.
#[derive(Clone, Copy)]
pub(crate) struct RawPolicy {
    pub dependence: Option<NonNull<TaskHeader>>,
    pub priority: Priority,
    pub team: bool,
}

/// A task as C describes it: a function, a state blob to copy into the task, the result size,
/// and optional callbacks.
#[derive(Clone, Copy)]
pub struct RawClosure {
    pub function: TaskFunction,
    /// `state_size` bytes to copy into the task, or the source `init` builds the state from.
    pub state: *const u8,
    pub state_size: usize,
    pub result_size: usize,
    /// Called with the state when the task completes.
    pub destroy: Option<DestroyFunction>,
    /// Builds the state in the task from `state` instead of copying its bytes.
    pub init: Option<InitFunction>,
}

/// The arguments of a spawn, which `spawn` reads once it has begun.
pub(crate) trait SpawnArgs: Sized {
    type Error: From<Error>;

    /// Reads and checks the policy and the closure: `plain`'s result for a single task with no
    /// dependence, else `general`'s, which reads them with `read`. Each called once (`Fn`, so
    /// that the call is the closure's own body; see `spawn_at`).
    ///
    /// # Safety
    /// As for `spawn`.
    unsafe fn plain_or<R>(
        self,
        plain: impl Fn(Priority, &RawClosure) -> std::result::Result<R, Self::Error>,
        general: impl Fn(Self) -> std::result::Result<R, Self::Error>,
    ) -> std::result::Result<R, Self::Error>;

    /// Reads and checks the policy and the closure, whatever they are.
    ///
    /// # Safety
    /// As for `spawn`.
    unsafe fn read(self) -> std::result::Result<(RawPolicy, RawClosure), Self::Error>;
}

/// A policy and a closure that the caller has read and checked.
pub(crate) struct Known<'a> {
    pub policy: &'a RawPolicy,
    pub closure: &'a RawClosure,
}

impl SpawnArgs for Known<'_> {
    type Error = Error;

    #[inline(always)]
    unsafe fn plain_or<R>(
        self,
        plain: impl Fn(Priority, &RawClosure) -> Result<R>,
        general: impl Fn(Self) -> Result<R>,
    ) -> Result<R> {
        if !self.policy.team && self.policy.dependence.is_none() {
            return plain(self.policy.priority, self.closure);
        }
        general(self)
    }

    #[inline(always)]
    unsafe fn read(self) -> Result<(RawPolicy, RawClosure)> {
        Ok((*self.policy, *self.closure))
    }
}

/// Spawns a task at `place` (000 §3.2.2 `host_spawn`/`task_spawn`); returns it with one user
/// reference for the future. `args` are read and checked with one worker only after the ready
/// tasks have run (002 §3.3.2), so that nothing read from them lives across that call in stack
/// slots (callgrind, F(22): td_task_spawn 224.0 -> 217.5 instructions per node). `what` names
/// the caller in messages.
///
/// # Safety
/// The closure `args` reads is valid as for `TaskContext::spawn_raw_future`; its policy's
/// dependence is a validated entity of this scheduler that the caller holds.
#[inline(always)]
pub(crate) unsafe fn spawn<A: SpawnArgs>(
    place: &Place<'_>,
    args: A,
    what: &str,
) -> std::result::Result<NonNull<TaskHeader>, A::Error> {
    // One copy for each kind of place (a worker of a wait with one worker, a worker of a wait
    // with several, the host), so that none tests the access or the worker again: on a worker
    // of a shared wait this took 26 instructions off each Fibonacci node (callgrind, one worker
    // forced to shared access, docs/PERFORMANCE.md, session 17). A spawn never sets
    // `scheduler_unused` (see `Place::detached`); the copies keep the place's fields in
    // registers.
    match (place.worker, place.access) {
        (Some(worker), Access::Exclusive) => {
            if worker.has_ready_tasks(place.shared) {
                worker.run_ready_tasks(place.shared);
            }
            spawn_at(&Place::exclusive(place.shared, worker), args, what)
        }
        (Some(worker), Access::Shared) => {
            spawn_at(&Place::shared_worker(place.shared, worker), args, what)
        }
        (None, _) => spawn_at(&place.detached(), args, what),
    }
}

/// `spawn` at a place that no call receives, once the ready tasks have run.
///
/// # Safety
/// As for `spawn`.
#[inline(always)]
unsafe fn spawn_at<A: SpawnArgs>(
    place: &Place<'_>,
    args: A,
    what: &str,
) -> std::result::Result<NonNull<TaskHeader>, A::Error> {
    // A team task, or one with a dependence, takes its own copy, out of line, so that the
    // single task's copy has `team` and the dependence as constants: no register or stack slot
    // holds them across the allocation, and the scheduling tests neither (callgrind, F(22):
    // td_task_spawn 196.5 -> 188.5 instructions per node with one worker, 202 -> 200 with two,
    // for `team`; with the C policy's plain reading, `SpawnCArgs`, for both: 182.5 -> 172 with
    // one worker, 184 -> 171 with two).
    // Always inlined: else the compiler called the single task's spawn (callgrind, F(22): 66
    // instructions per node more with one worker).
    let plain = {
        #[inline(always)]
        |priority, closure: &RawClosure| spawn_task_at(place, None, priority, closure, false, what)
    };
    // The general copy takes the place's fields, each as an argument: a reference, or a tuple
    // (passed in memory), kept them in memory on the usual path (see `Place::out_of_line`).
    // `Fn`, not `FnOnce`, as `plain`'s: the call of an `FnOnce` closure went through a shim
    // that the compiler did not inline.
    let (shared, worker, access) = (place.shared, place.worker, place.access);
    args.plain_or(plain, move |args| {
        spawn_general_at(shared, worker, access, args, what)
    })
}

/// `spawn_at` for a team task or a task with a dependence, at a place with these fields (as
/// `Place::out_of_line`'s).
///
/// # Safety
/// As for `spawn`.
#[inline(never)]
unsafe fn spawn_general_at<A: SpawnArgs>(
    shared: &Shared,
    worker: Option<&Worker>,
    access: Access,
    args: A,
    what: &str,
) -> std::result::Result<NonNull<TaskHeader>, A::Error> {
    let (policy, closure) = args.read()?;
    if policy.team && !shared.supports_teams() {
        return Err(no_teams(what).into());
    }
    spawn_task_at(
        &Place::at(shared, worker, access),
        policy.dependence,
        policy.priority,
        &closure,
        policy.team,
        what,
    )
}

/// `spawn_at` for a task that is a team task if `team` (a constant on the single task's path;
/// the policy's `team` is not read).
///
/// # Safety
/// As for `spawn`; a team task's scheduler supports teams.
#[inline(always)]
unsafe fn spawn_task_at<E: From<Error>>(
    place: &Place<'_>,
    dependence: Option<NonNull<TaskHeader>>,
    priority: Priority,
    closure: &RawClosure,
    team: bool,
    what: &str,
) -> std::result::Result<NonNull<TaskHeader>, E> {
    let shared = place.shared;
    // One test for the sizes and the task's bytes: when both sizes are at most the largest
    // block (at most u32::MAX, as the header stores them), the sum cannot wrap and is exact;
    // when one is larger, the `|` exceeds the largest block whatever the wrapped sum is
    // (callgrind, F(22): td_task_spawn 214.5 -> 212.5 instructions per node).
    let max = shared.max_task_bytes;
    let bytes = (closure
        .result_size
        .wrapping_add(HEADER_BYTES + STATE_ALIGN - 1)
        & !(STATE_ALIGN - 1))
        .wrapping_add(closure.state_size);
    if (closure.result_size | closure.state_size | bytes) > max {
        return Err(too_large(shared, closure.state_size, closure.result_size, what).into());
    }
    let block_lg2 = place.block_lg2(bytes);
    // A reused block's generation follows the one it had, read from its header beside the link
    // the cache read, instead of the worker's counter, loaded and stored (callgrind, F(22):
    // td_task_spawn 184.5 -> 183.5 instructions per node with one worker, 189 -> 188 with two).
    // Its stale futures then see another generation for 63 reuses from the cache, where the
    // worker's counter spread them (a block from the pool still takes the counter's).
    let (block, generation) = match place.take_cached(block_lg2) {
        // SAFETY: a cached block holds a released header.
        Some(block) => (
            block,
            unsafe { block.cast::<TaskHeader>().as_ref() }.generation() + 1,
        ),
        None => (
            place.allocate_uncached(bytes, what)?,
            place.next_generation(),
        ),
    };
    let init = HeaderInit {
        kind: Kind::Task,
        generation,
        priority,
        team,
        scheduler: shared,
        function: Some(closure.function),
        destroy: closure.destroy,
        size: closure.result_size as u32,
        alloc_size: bytes as u32,
        block_lg2,
        refs: USER_REF,
    };
    let task = TaskHeader::init(block, &init);
    // A result that is read before the task writes it reads zeros, not old pool contents. The
    // 16 bytes after the header lie in every block (at least 128 bytes), so they are cleared
    // whatever the result size, one store for the usual results; the state, which may start
    // there, is written next.
    const _: () = assert!(HEADER_BYTES + 16 <= 128);
    let result = TaskHeader::result_ptr(task);
    result.cast::<u128>().write_unaligned(0);
    if closure.result_size > 16 {
        bytes::zero(result.add(16), closure.result_size - 16);
    }
    let state = TaskHeader::state_ptr(task);
    match closure.init {
        Some(init) => init(state.cast(), closure.state.cast()),
        None => bytes::copy(state, closure.state, closure.state_size),
    }
    place.count(Count::Spawned);
    place.schedule_task(task, dependence, priority, team);
    // The block is counted live last: a flush of the counts (a call) then finds only the task in
    // registers, where right after the allocation it found all that the spawn still needed
    // (callgrind, F(22): td_task_spawn 195 -> 192 instructions per node with two workers).
    // Nothing in between allocates or frees a block (the state's `init` copies a state), so
    // the peaks are as exact as before; from the host, the caller holds the scheduler or the
    // dependence, whose count keeps the live count above zero meanwhile.
    place.count_allocated(block_lg2);
    Ok(task)
}

#[cold]
fn no_teams(what: &str) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!(
            "{what}: a team task needs a scheduler on a Threads space; this scheduler runs on the \
             Serial space, which has no thread teams. Spawn it as a single task, or create the \
             scheduler on td_space_threads (a team may have one thread)"
        ),
    )
}

#[cold]
fn too_large(shared: &Shared, state_size: usize, result_size: usize, what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what}: a task with {state_size} bytes of state and a {result_size}-byte result needs {} \
         bytes with its header, more than the pool's largest block ({} bytes); keep large data \
         outside the task and put a pointer to it in the state, or create the pool with a larger \
         max_block_alloc_size",
        task_bytes(result_size, state_size)
            .map_or_else(|| "more than usize::MAX".to_string(), |b| b.to_string()),
        shared.pool.max_block_size(),
    ))
}

/// Spawns a task from a thread that does not run a wait of `shared` (000 §3.2.2 `host_spawn`).
///
/// # Safety
/// As for `spawn`; the dependence belongs to `shared`.
pub(crate) unsafe fn host_spawn(
    shared: &Shared,
    policy: &RawPolicy,
    closure: &RawClosure,
    what: &str,
) -> Result<NonNull<TaskHeader>> {
    if shared.current_worker().is_some() {
        return Err(Error::new(
            ErrorKind::WrongThread,
            format!(
                "{what}: called from inside a task of this scheduler; spawn from a task with \
                 td_task_spawn(ctx, ...)"
            ),
        ));
    }
    let guard = shared.enter_foreign(what)?;
    let place = Place::host(shared, &guard);
    spawn(&place, Known { policy, closure }, what)
}

impl Scheduler {
    /// Spawns a task from the host (000 §3.2.2 `host_spawn`) that runs the closure `f` with a
    /// result of `result_size` bytes. Inside a task of this scheduler use `TaskContext::spawn`.
    ///
    /// Errors: `PoolExhausted` (nothing changes), `InvalidArgument` (closure too large for the
    /// pool, a dependence of another scheduler), `Unavailable` (a team task on the Serial
    /// space), `Busy` while a wait runs, `WrongThread` inside a task of this scheduler.
    pub fn spawn<F>(&self, policy: &Policy<'_>, result_size: usize, f: F) -> Result<Future>
    where
        F: FnMut(&super::TaskContext<'_>) + Send + 'static,
    {
        let raw = self.checked_policy(policy, false)?;
        super::closure::spawn_with(f, result_size, |closure| {
            // SAFETY: the closure describes a valid state (closure.rs).
            unsafe { self.host_spawn_raw(&raw, closure, "host_spawn") }
        })
    }

    /// Spawns a team task from the host (000 §3.2.2 `TaskTeam`): `f` runs on every member of a
    /// team at once, so it is `Fn + Sync`; state it changes between runs needs interior
    /// mutability. Errors as for `spawn`.
    pub fn spawn_team<F>(&self, policy: &Policy<'_>, result_size: usize, f: F) -> Result<Future>
    where
        F: Fn(&super::TaskContext<'_>) + Send + Sync + 'static,
    {
        let raw = self.checked_policy(policy, true)?;
        super::closure::spawn_team_with(f, result_size, |closure| {
            // SAFETY: the closure describes a valid state (closure.rs).
            unsafe { self.host_spawn_raw(&raw, closure, "host_spawn") }
        })
    }

    /// The policy with its dependence checked to belong to this scheduler.
    fn checked_policy(&self, policy: &Policy<'_>, team: bool) -> Result<RawPolicy> {
        let raw = policy.raw(team);
        if let Some(d) = raw.dependence {
            super::future::check_scheduler(d, self.shared(), "host_spawn: the dependence")?;
        }
        Ok(raw)
    }

    /// Spawns a task described by a raw closure from the host; a team task if `team`.
    ///
    /// # Safety
    /// As for `TaskContext::spawn_raw_future`.
    pub unsafe fn spawn_raw(
        &self,
        policy: &Policy<'_>,
        team: bool,
        closure: &RawClosure,
    ) -> Result<Future> {
        let raw = self.checked_policy(policy, team)?;
        self.host_spawn_raw(&raw, closure, "host_spawn")
            .map(Future::from_header)
    }

    /// # Safety
    /// As for `spawn`; the dependence belongs to this scheduler.
    pub(crate) unsafe fn host_spawn_raw(
        &self,
        policy: &RawPolicy,
        closure: &RawClosure,
        what: &str,
    ) -> Result<NonNull<TaskHeader>> {
        host_spawn(self.shared(), policy, closure, what)
    }
}
