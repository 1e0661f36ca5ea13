//! `td_task_ctx`: what a running task function can do through its context (000 §3.2.2–3.2.3):
//! spawn from the task, respawn, write its result, reach its team and its scheduler.
//!
//! A context is borrowed: it is valid only during the call of the task function that received
//! it, on that thread. Any other pointer is refused before it is read: TD_ERROR_INVALID_ARGUMENT
//! on a thread that runs no task (a context kept past its call), TD_ERROR_WRONG_THREAD on one
//! that runs another task (a context of another thread, or of an earlier call).

use super::boundary::{call, call_or, null_argument};
use super::dependences::{count_arg, dependence, null_futures, with_decoded, STACK_DEPENDENCES};
use super::error::{set_last_error, CError, CResult};
use super::future::{future_arg, future_ptr, td_future};
use super::priority::{
    priority_arg, td_priority, TD_PRIORITY_HIGH, TD_PRIORITY_LOW, TD_PRIORITY_REGULAR,
};
use super::scheduler::{scheduler_arg, td_scheduler};
use super::status::td_status;
use super::task_closure::{
    closure_arg, closure_fields, current_version, policy_arg, td_task_closure, td_task_ctx,
    td_task_policy,
};
use super::team::{td_team, team_ptr};
use crate::priority::Priority;
use crate::task::header::TaskHeader;
use crate::task::raw::{self, RawPolicy, SpawnArgs};
use crate::task::RawClosure;
use crate::task::TaskContext;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// The running task's context behind `ctx`, checked. NULL is never the running context, so it
/// is told apart from other refused pointers only on the error path: its own test cost two
/// instructions per call (callgrind, F(22)).
///
/// # Safety
/// None: anything but the running context is refused without being read.
#[inline(always)]
unsafe fn context<'a>(ctx: *mut td_task_ctx, what: &str) -> CResult<&'a TaskContext<'a>> {
    match TaskContext::running(ctx as *const TaskContext<'a>) {
        Some(c) => Ok(c),
        None => Err(refused_context(ctx, what)),
    }
}

/// The error of `context` for a `ctx` that is not the running context.
#[cold]
fn refused_context(ctx: *mut td_task_ctx, what: &str) -> CError {
    if ctx.is_null() {
        null_argument("ctx")
    } else {
        TaskContext::refused(what).into()
    }
}

/// Spawns a task from inside a running task (000 §3.2.2 `task_spawn`) on the running task's
/// scheduler: allocates it, copies the closure's state and schedules it with the policy
/// (`policy->scheduler` may be NULL). With one worker, the tasks that are ready run first, so
/// that their memory is released before this one is allocated (002 §3.3.2); they run before
/// `policy` and `closure` are read, also when these are then refused. In a team task only
/// one member may spawn (and respawn) per run.
///
/// Returns the task's future with one reference (release it with td_future_release, typically
/// in the spawning task's destroy callback), or NULL with td_last_error() set:
/// TD_ERROR_POOL_EXHAUSTED (nothing else changes), TD_ERROR_NULL_ARGUMENT, TD_ERROR_STRUCT_SIZE,
/// TD_ERROR_INVALID_HANDLE, TD_ERROR_INVALID_ARGUMENT (unknown priority, a dependence or
/// scheduler that is not the task's, too large a state, a context used on a thread that runs no
/// task), TD_ERROR_UNAVAILABLE (a team task on the Serial space), TD_ERROR_WRONG_THREAD (not the
/// context of the task this thread runs; a second team member spawning).
///
/// Thread safety: the thread running the task.
#[no_mangle]
pub unsafe extern "C" fn td_task_spawn(
    ctx: *mut td_task_ctx,
    policy: *const td_task_policy,
    closure: *const td_task_closure,
) -> *mut td_future {
    let spawn = || -> Result<NonNull<TaskHeader>, SpawnError> {
        let c = context(ctx, SPAWN)?;
        // A team task's spawn out of line, with a copy of its own of the arguments' reader: a
        // reader that the single task's path shared with it was passed to it in memory, and
        // the compiler stored its captures on the common path (callgrind, F(22): td_task_spawn
        // 197.5 -> 194.5 instructions per node with one worker, 204 -> 201 with two).
        if !c.is_single() {
            return spawn_from_team(c, policy, closure);
        }
        c.spawn_single_with(SpawnCArgs { c, policy, closure }, SPAWN)
    };
    call_or(SPAWN, || {
        Ok(spawn().map_or(std::ptr::null_mut(), future_ptr))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// The name `td_task_spawn` gives its errors.
const SPAWN: &str = "td_task_spawn";

/// An error of `td_task_spawn`, reported (`set_last_error`) where it is made, by the
/// conversion that every error of the spawn goes through on its way out (no spawn path makes
/// an error that it then drops). Zero-sized, so that the spawn's result is one pointer, null on
/// failure: with the error itself in the result, the paths' results met in an error flag that
/// the usual path set to a constant and tested (callgrind, F(22): td_task_spawn 166 -> 162
/// instructions per node with one worker, 163-164 -> 160 with two). A panic is still caught
/// and reported by the boundary (`call_or`).
struct SpawnError;

impl From<CError> for SpawnError {
    #[cold]
    #[inline(never)]
    fn from(e: CError) -> SpawnError {
        set_last_error(SPAWN, e.status, &e.message);
        SpawnError
    }
}

impl From<crate::error::Error> for SpawnError {
    #[cold]
    #[inline(never)]
    fn from(e: crate::error::Error) -> SpawnError {
        CError::from(e).into()
    }
}

/// `td_task_spawn` from a member of a team of more than one.
///
/// # Safety
/// As for `td_task_spawn`.
#[inline(never)]
unsafe fn spawn_from_team(
    c: &TaskContext<'_>,
    policy: *const td_task_policy,
    closure: *const td_task_closure,
) -> Result<NonNull<TaskHeader>, SpawnError> {
    c.spawn_raw_with(SpawnCArgs { c, policy, closure }, SPAWN)
}

/// `td_task_spawn`'s arguments, which the spawn reads and checks once it has begun (after the
/// single-worker mitigation: see `td_task_spawn`).
struct SpawnCArgs<'a> {
    c: &'a TaskContext<'a>,
    policy: *const td_task_policy,
    closure: *const td_task_closure,
}

impl SpawnArgs for SpawnCArgs<'_> {
    type Error = SpawnError;

    /// The usual arguments (a policy and a closure of our version, no scheduler named, no
    /// dependence, a single task) in a few tests, the priority and the team flag in one; any
    /// others, and every error of the policy, read and diagnosed by `read`, out of line, in
    /// the order of its checks. The policy's tests and their results kept took about 25
    /// instructions, and the spawn then tested the scheduler, the dependence and the team flag
    /// again (callgrind, F(22), with the single task's spawn copy of `spawn::spawn_at`:
    /// td_task_spawn 182.5 -> 172 instructions per node with one worker, 184 -> 171 with two).
    #[inline(always)]
    unsafe fn plain_or<R>(
        self,
        plain: impl Fn(Priority, &RawClosure) -> Result<R, SpawnError>,
        general: impl Fn(Self) -> Result<R, SpawnError>,
    ) -> Result<R, SpawnError> {
        // One call of `general`, which each unusual argument breaks to (a call for each kept
        // its captures in memory on the usual path), the scheduler and the dependence tested
        // as one, and the closure's pointer and size tested first: tested after the priority's
        // range, the compiler merged the two tests into one branch with flags (callgrind,
        // F(22): td_task_spawn 172 -> 167 instructions per node with one worker, 171 -> 164-165
        // with two).
        'plain: {
            let Some(c) = current_version(self.closure) else {
                break 'plain;
            };
            let Some(p) = current_version(self.policy) else {
                break 'plain;
            };
            if (p.scheduler as usize | p.dependence as usize) != 0 {
                break 'plain;
            }
            // The priority and the team flag as one number: below 3 exactly when the team flag
            // is 0 and the priority one of the three (their discriminants).
            let priority = match u64::from(p.priority as u32) | u64::from(p.team as u32) << 32 {
                0 => Priority::High,
                1 => Priority::Regular,
                2 => Priority::Low,
                _ => break 'plain,
            };
            return plain(priority, &closure_fields(c)?);
        }
        general(self)
    }

    #[inline(always)]
    unsafe fn read(self) -> Result<(RawPolicy, RawClosure), SpawnError> {
        Ok(spawn_args_checked(self.c, self.policy, self.closure)?)
    }
}

/// `SpawnCArgs::read`: each argument read and checked, in order, with its error.
///
/// # Safety
/// As for `td_task_spawn`.
unsafe fn spawn_args_checked(
    c: &TaskContext<'_>,
    policy: *const td_task_policy,
    closure: *const td_task_closure,
) -> CResult<(RawPolicy, RawClosure)> {
    let p = policy_arg(policy)?;
    let cl = closure_arg(closure)?;
    let shared = c.shared();
    if !p.scheduler.is_null()
        && !std::ptr::eq(
            scheduler_arg(p.scheduler, "policy->scheduler")?.shared(),
            shared,
        )
    {
        return Err(raw::other_scheduler("`policy->scheduler`").into());
    }
    if let Some(d) = p.dependence {
        raw::check_scheduler(d, shared, "`policy->dependence`")?;
    }
    let raw_policy = RawPolicy {
        dependence: p.dependence,
        priority: p.priority,
        team: p.team,
    };
    Ok((raw_policy, cl))
}

/// Asks that the running task run again after `dependence` completes (NULL: as soon as
/// possible), at `priority` (000 §2.2.1, §3.2.2 `respawn`). The task keeps its state, so it can
/// tell its runs apart; its result is kept too. `dependence` is borrowed (the scheduler holds its
/// own reference until the task's next run ends). At most once per run; in a team task only one
/// member may respawn (the one that spawned, if any); a respawn cannot turn a single task into a
/// team task or back.
///
/// Thread safety: the thread running the task.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`ctx`); TD_ERROR_INVALID_HANDLE (a released
/// dependence); TD_ERROR_INVALID_ARGUMENT (a second respawn in this run, the task's own future,
/// a dependence of another scheduler, unknown priority, a context used on a thread that runs
/// no task); TD_ERROR_WRONG_THREAD (not the context of the task this thread runs; a second team
/// member).
#[no_mangle]
pub unsafe extern "C" fn td_task_respawn(
    ctx: *mut td_task_ctx,
    dependence: *const td_future,
    priority: td_priority,
) -> td_status {
    call("td_task_respawn", || {
        let c = context(ctx, "td_task_respawn")?;
        let priority = priority_arg(priority, "priority")?;
        let dep = if dependence.is_null() {
            None
        } else {
            let d = future_arg(dependence, "dependence")?;
            raw::check_scheduler(d, c.shared(), "`dependence`")?;
            Some(d)
        };
        Ok(c.respawn_raw(dep, priority, "td_task_respawn")?)
    })
}

/// Asks that the running task run again once all `count` futures in `futures` have completed,
/// at `priority`: the same as td_task_respawn on td_when_all of them followed by releasing the
/// when_all's future (000 Fig. 3.4), in one call that makes no future. NULL elements are skipped;
/// no element, or none incomplete, respawns as soon as possible. The futures are borrowed for the
/// call only: they may be released right after it. At most one respawn (of either kind) per
/// run; in a team task only one member may respawn (the one that spawned, if any). A when_all is
/// created (and counted in the statistics) only when more than one element is incomplete. With
/// several workers, in a single task with at most 8 elements, the call first runs, nested on
/// this thread, the elements this worker would run next (typically the children the task just
/// spawned, and theirs in turn), at most twice each, so that they need no waiting for; the
/// code after the call runs when they return. Elements therefore must not wait for that code.
///
/// Thread safety: the thread running the task.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`ctx`, `futures` with `count` > 0);
/// TD_ERROR_INVALID_HANDLE (a released element); TD_ERROR_INVALID_ARGUMENT (`count` < 0, a
/// second respawn in this run, the task's own future, an element of another scheduler, unknown
/// priority, a context used on a thread that runs no task); TD_ERROR_WRONG_THREAD (as
/// td_task_respawn); TD_ERROR_POOL_EXHAUSTED (no room for the when_all). On error the task does
/// not respawn.
#[no_mangle]
pub unsafe extern "C" fn td_task_respawn_when_all(
    ctx: *mut td_task_ctx,
    futures: *const *mut td_future,
    count: c_int,
    priority: td_priority,
) -> td_status {
    respawn_when_all_entry::<false>(ctx, futures, count, priority)
}

/// td_task_respawn_when_all with a promise: until the call returns, no other task uses these
/// futures through the caller's references (a task that holds a reference of its own to one may
/// use it). With several workers, the elements the call runs ahead then complete without an
/// atomic read-modify-write when the caller holds their only reference, as it does for the
/// children it just spawned (000 Fig. 3.4): F(30) on 16 workers up to 8% faster. Use it where
/// the futures are the task's own, not published in shared memory for other tasks to wait on
/// meanwhile. A broken promise is not undefined behaviour: a task made to wait on an element
/// through the caller's reference during the call may never run, and td_wait then returns
/// TD_ERROR_DEADLOCK.
///
/// Thread safety: the thread running the task. Returns as td_task_respawn_when_all.
#[no_mangle]
pub unsafe extern "C" fn td_task_respawn_when_all_private(
    ctx: *mut td_task_ctx,
    futures: *const *mut td_future,
    count: c_int,
    priority: td_priority,
) -> td_status {
    respawn_when_all_entry::<true>(ctx, futures, count, priority)
}

/// The name of the respawn after several futures in messages.
const fn respawn_what<const CALLER_ONLY: bool>() -> &'static str {
    if CALLER_ONLY {
        "td_task_respawn_when_all_private"
    } else {
        "td_task_respawn_when_all"
    }
}

/// The two respawns after several futures: the call of 000 Fig. 3.4 (a single task, two
/// valid elements) on a path that calls nothing, and so saves no registers (`respawn_two`);
/// with several workers it checks the elements and jumps to the run-ahead, with no notes of
/// them (the run-ahead looks at them anyway); anything else takes the general path, by a tail
/// call too, which checks everything again and reports what it finds. Callgrind, F(22),
/// instructions per node: td_task_respawn_when_all_private 52 -> 38 with one worker; with two
/// 56.5 -> 52.5 (32.5 and 20 in `respawn_two_run_ahead`; with the notes taken here first,
/// 41 and 20).
#[inline(always)]
unsafe fn respawn_when_all_entry<const CALLER_ONLY: bool>(
    ctx: *mut td_task_ctx,
    futures: *const *mut td_future,
    count: c_int,
    priority: td_priority,
) -> td_status {
    if let Some(status) = respawn_two_entry::<CALLER_ONLY>(ctx, futures, count, priority) {
        return status;
    }
    respawn_when_all_general::<CALLER_ONLY>(ctx, futures, count, priority)
}

/// `respawn_when_all_entry`'s path for two elements: `None`, having changed nothing, for
/// anything else. Each test returns at once, and only tasks' futures take it (the general path
/// takes a when_all's): with the elements decoded as options tested together, and a test for a
/// when_all's ident each, td_task_respawn_when_all_private took 38 instructions per node with
/// one worker instead of 33.5, 32.5 with two instead of 29 (callgrind, F(22)).
#[inline(always)]
unsafe fn respawn_two_entry<const CALLER_ONLY: bool>(
    ctx: *mut td_task_ctx,
    futures: *const *mut td_future,
    count: c_int,
    priority: td_priority,
) -> Option<td_status> {
    let c = TaskContext::running(ctx as *const TaskContext<'_>)?;
    if count != 2 || futures.is_null() || !c.is_single() {
        return None;
    }
    let p = quick_priority(priority)?;
    let shared = c.shared();
    let a = raw::live_task((*futures).cast())?;
    if !raw::same_scheduler(a, shared) {
        return None;
    }
    let b = raw::live_task((*futures.add(1)).cast())?;
    if !raw::same_scheduler(b, shared) {
        return None;
    }
    match c.respawn_two(a, b, p) {
        raw::QuickRespawn::Done => Some(td_status::TD_OK),
        raw::QuickRespawn::RunAhead => {
            Some(respawn_two_run_ahead::<CALLER_ONLY>(c, a, b, priority))
        }
        raw::QuickRespawn::General => None,
    }
}

/// A valid `priority`, or `None` (which the general path reports).
#[inline(always)]
fn quick_priority(priority: td_priority) -> Option<Priority> {
    match priority {
        TD_PRIORITY_HIGH => Some(Priority::High),
        TD_PRIORITY_REGULAR => Some(Priority::Regular),
        TD_PRIORITY_LOW => Some(Priority::Low),
        _ => None,
    }
}

/// `respawn_when_all_entry` for two valid elements `a` and `b` of the scheduler of the running
/// single task `c`, with a valid `priority`: `QuickRespawn::RunAhead`. `extern "C"`, which cannot
/// unwind (`call` catches panics), so that the caller can jump to it.
///
/// # Safety
/// `c` is the running context, the caller's; `priority` is valid.
#[inline(never)]
unsafe extern "C" fn respawn_two_run_ahead<const CALLER_ONLY: bool>(
    c: *const TaskContext<'_>,
    a: NonNull<TaskHeader>,
    b: NonNull<TaskHeader>,
    priority: td_priority,
) -> td_status {
    let what = respawn_what::<CALLER_ONLY>();
    call(what, || {
        // SAFETY: the running context, as the caller found.
        let c = &*c;
        // SAFETY: the caller found it valid. Checked again, its error's path made the compiler
        // keep the elements in saved registers (callgrind, F(22), two workers:
        // respawn_two_run_ahead 17 -> 14 instructions per node).
        let priority = quick_priority(priority).unwrap_unchecked();
        let holders = raw::Holders::of(CALLER_ONLY);
        Ok(c.respawn_two_run_ahead(&[a.as_ptr(), b.as_ptr()], priority, holders, what)?)
    })
}

/// `respawn_when_all_entry` for any arguments; as `respawn_two_run_ahead`.
#[inline(never)]
unsafe extern "C" fn respawn_when_all_general<const CALLER_ONLY: bool>(
    ctx: *mut td_task_ctx,
    futures: *const *mut td_future,
    count: c_int,
    priority: td_priority,
) -> td_status {
    let what = respawn_what::<CALLER_ONLY>();
    call(what, || {
        respawn_when_all::<CALLER_ONLY>(ctx, futures, count, priority, what)
    })
}

/// The body of the two respawns after several futures, which differ in who may use them
/// meanwhile (`raw::Holders::CallerOnly` if `CALLER_ONLY`). A copy for each, with the choice a
/// constant in every closure: the compiler keeps a closure that tests it out of line.
///
/// # Safety
/// As for `td_task_respawn_when_all`.
#[inline(always)]
unsafe fn respawn_when_all<const CALLER_ONLY: bool>(
    ctx: *mut td_task_ctx,
    futures: *const *mut td_future,
    count: c_int,
    priority: td_priority,
    what: &str,
) -> CResult<()> {
    let c = context(ctx, what)?;
    let priority = priority_arg(priority, "priority")?;
    let n = count_arg(count)?;
    if futures.is_null() {
        null_futures(n)?;
    }
    let holders = raw::Holders::of(CALLER_ONLY);
    // A team task takes the general path too (its member claims the right to respawn), so that
    // the single task's path tests neither a claim nor, after the elements' Acquire loads, the
    // team size again (callgrind, F(22): td_task_respawn_when_all_private 60 -> 58.5
    // instructions per node with two workers, 54.5 -> 54.0 with one).
    if n > STACK_DEPENDENCES || !c.is_single() {
        return respawn_when_all_checked(c, futures, n, priority, holders, what);
    }
    // The usual call: a single task, live futures of the scheduler, none NULL or the task's
    // own, decoded on the stack and each noted as it is decoded (`TaskContext::pending`), in
    // one pass. Anything else takes the general path, which decodes the elements again and
    // reports what it finds in order (nothing has changed before), so that this pass builds no
    // error and keeps no flag: with them here, the compiler kept the notes on the stack
    // (callgrind, F(22): td_task_respawn_when_all_private 84 -> 76.5 instructions per node
    // with two workers, 79 -> 70 with one; without them 63 and 57.5).
    let shared = c.shared();
    let mut pending = c.pending();
    let mut buffer = [MaybeUninit::<*mut TaskHeader>::uninit(); STACK_DEPENDENCES];
    for (i, slot) in buffer.iter_mut().take(n).enumerate() {
        match raw::decode((*futures.add(i)).cast()).ok() {
            Some(d) if raw::same_scheduler(d, shared) && pending.note(d) => {
                slot.write(d.as_ptr());
            }
            _ => return respawn_when_all_checked(c, futures, n, priority, holders, what),
        }
    }
    // SAFETY: the first `n` elements were written just above.
    let deps = std::slice::from_raw_parts(buffer.as_ptr().cast(), n);
    Ok(c.respawn_single_when_all(deps, pending, priority, holders, what)?)
}

/// `respawn_when_all` past its checks of `ctx` and the arguments, for any elements: each one
/// checked, in order, with its error.
///
/// # Safety
/// As for `td_task_respawn_when_all`; `futures` holds `n` elements.
#[inline(never)]
unsafe fn respawn_when_all_checked(
    c: &TaskContext<'_>,
    futures: *const *mut td_future,
    n: usize,
    priority: Priority,
    holders: raw::Holders,
    what: &str,
) -> CResult<()> {
    let shared = c.shared();
    let decode = |i: usize| -> CResult<*mut TaskHeader> {
        let f = *futures.add(i);
        if f.is_null() {
            Ok(std::ptr::null_mut())
        } else {
            dependence(shared, f, i)
        }
    };
    with_decoded(n, decode, |deps| {
        c.respawn_when_all_raw(deps, priority, holders, what)
    })
}

/// Returns the running task's result bytes (the closure's `result_size` bytes, zero before the
/// task writes them; shared by the members of a team task), or NULL when the task has no result
/// (no error) or `ctx` is bad (error set).
///
/// Ownership: the bytes belong to the task. Thread safety: the thread running the task.
#[no_mangle]
pub unsafe extern "C" fn td_task_result(ctx: *mut td_task_ctx) -> *mut c_void {
    // The running task's own context takes a path without the panic boundary, which calls
    // nothing that could panic: no frame to set up (callgrind, F(22): td_task_result
    // 17.0 -> 14.0 instructions per node). Anything else gets the checks and their errors.
    if let Some(c) = TaskContext::running(ctx as *const TaskContext<'_>) {
        return task_result(c);
    }
    task_result_refused(ctx)
}

/// The result bytes of the running task's context `c`, or NULL when it has none.
#[inline(always)]
fn task_result(c: &TaskContext<'_>) -> *mut c_void {
    if c.result_size() == 0 {
        std::ptr::null_mut()
    } else {
        c.result_ptr().cast()
    }
}

/// `td_task_result` for a `ctx` that is not the running task's: the error it reports. The C
/// calling convention lets the entry point jump here.
#[cold]
#[inline(never)]
unsafe extern "C" fn task_result_refused(ctx: *mut td_task_ctx) -> *mut c_void {
    call_or("td_task_result", || {
        Ok(task_result(context(ctx, "td_task_result")?))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Returns the running task's team member (000 §2.3.2): for a team task this thread's member of
/// the team; for a single task a team of one. Use it with the td_team_* functions. NULL (error
/// set) when `ctx` is bad.
///
/// Ownership: borrowed, valid during the task function's call. Thread safety: the thread running
/// the task.
#[no_mangle]
pub unsafe extern "C" fn td_task_team(ctx: *mut td_task_ctx) -> *mut td_team {
    call_or("td_task_team", || {
        Ok(team_ptr(context(ctx, "td_task_team")?.team()))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Returns the scheduler that runs the task, for td_when_all (not a new reference: do not
/// release it). NULL (error set) when `ctx` is bad.
///
/// Thread safety: the thread running the task.
#[no_mangle]
pub unsafe extern "C" fn td_task_scheduler(ctx: *mut td_task_ctx) -> *mut td_scheduler {
    call_or("td_task_scheduler", || {
        Ok(context(ctx, "td_task_scheduler")?
            .scheduler_handle()
            .cast::<td_scheduler>())
    })
    .unwrap_or(std::ptr::null_mut())
}
