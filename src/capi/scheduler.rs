//! `td_scheduler`: the dynamic task-DAG scheduler (000 §3.2.2) behind a C handle: creation on a
//! space and a pool, host spawn, when_all, wait, statistics.

use super::boundary::{call, null_argument, read_versioned, Out, Versioned};
use super::dependences::{count_arg, dependence, null_element, with_decoded};
use super::error::{CError, CResult};
use super::future::{future_or_null, td_future};
use super::handle::{self, Handle};
use super::pool::td_pool;
use super::space::{space_arg, td_space};
use super::status::td_status;
use super::task_closure::{closure_arg, policy_arg, td_task_closure, td_task_policy};
use crate::runtime;
use crate::task::header::TaskHeader;
use crate::task::raw::{self, RawPolicy, Shared};
use crate::task::{Scheduler, SchedulerConfig, SchedulerStatistics};
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

/// A task scheduler: spawns tasks into a memory pool and runs them on an execution space
/// instance. Reference-counted: td_scheduler_retain / td_scheduler_release.
pub struct td_scheduler {
    _private: [u8; 0],
}

unsafe impl Handle for td_scheduler {
    type Object = Scheduler;
    const NAME: &'static str = "td_scheduler";
    const TAG: u64 = 0x7464_5f73_6368_6564; // "td_sched"
}

/// Arguments of td_scheduler_create. Initialize with TD_SCHEDULER_ARGS_INIT, then set `pool`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_scheduler_args {
    /// sizeof(td_scheduler_args) as the caller was compiled; set by TD_SCHEDULER_ARGS_INIT.
    pub struct_size: usize,
    /// Where tasks run: td_space_serial, td_space_threads or a sub-instance; NULL = the root
    /// Threads instance. The scheduler keeps a reference.
    pub space: *mut td_space,
    /// The pool tasks and when_alls are allocated from. Required; the scheduler keeps a
    /// reference.
    pub pool: *mut td_pool,
    /// Threads per team for team tasks: 0 = from the topology (hardware threads per core when
    /// the space uses them all, else 1); otherwise it must divide the space's thread count.
    pub team_size: c_int,
    /// Bytes of team-shared scratch memory per team (td_team_scratch in team tasks).
    pub team_scratch_bytes: usize,
}

unsafe impl Versioned for td_scheduler_args {
    const NAME: &'static str = "td_scheduler_args";
    const MIN_SIZE: usize = std::mem::size_of::<td_scheduler_args>();
    fn defaults() -> Self {
        td_scheduler_args {
            struct_size: std::mem::size_of::<td_scheduler_args>(),
            space: std::ptr::null_mut(),
            pool: std::ptr::null_mut(),
            team_size: 0,
            team_scratch_bytes: 0,
        }
    }
}

/// Statistics of a scheduler (td_scheduler_statistics). Initialize with TD_SCHEDULER_STATS_INIT.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct td_scheduler_stats {
    /// sizeof(td_scheduler_stats) as the caller was compiled; set by TD_SCHEDULER_STATS_INIT.
    pub struct_size: usize,
    /// Tasks spawned, from the host and from tasks.
    pub tasks_spawned: u64,
    /// Runs of task functions (a respawned task runs again; a team task counts once per run).
    pub task_executions: u64,
    /// Respawns honoured.
    pub tasks_respawned: u64,
    /// Tasks that completed.
    pub tasks_completed: u64,
    /// when_alls created (including internal ones that split very large when_alls).
    pub when_alls_created: u64,
    /// Spawns and when_alls refused because the pool was exhausted.
    pub allocation_failures: u64,
    /// Tasks a worker took from another worker.
    pub steals: u64,
    /// Tasks and when_alls whose memory is allocated now.
    pub alive: u64,
    /// The most tasks and when_alls alive at once: exact with one worker, within 256 per worker
    /// otherwise.
    pub peak_alive: u64,
    /// The most bytes of pool blocks they held at once (same accuracy).
    pub peak_bytes: u64,
    /// The pool's high-water mark in bytes (td_pool_stats.high_water_bytes: all users of the pool,
    /// within 32 largest blocks per thread).
    pub pool_high_water_bytes: u64,
    /// td_wait calls that ran.
    pub waits: u64,
    /// Workers left out of td_wait calls, summed over the calls: a worker that was late to leave
    /// earlier waits, or waited for its CPU during them (its core shared with another busy
    /// process), sits out the next ones for a while. Zero on a machine where nothing else runs. (Added after the first version: a
    /// caller compiled without it passes a smaller struct_size and gets the fields before it.)
    pub workers_sat_out: u64,
}

unsafe impl Versioned for td_scheduler_stats {
    const NAME: &'static str = "td_scheduler_stats";
    const MIN_SIZE: usize = std::mem::offset_of!(td_scheduler_stats, workers_sat_out);
    fn defaults() -> Self {
        td_scheduler_stats {
            struct_size: std::mem::size_of::<td_scheduler_stats>(),
            ..Default::default()
        }
    }
}

impl From<SchedulerStatistics> for td_scheduler_stats {
    fn from(s: SchedulerStatistics) -> Self {
        td_scheduler_stats {
            struct_size: std::mem::size_of::<td_scheduler_stats>(),
            tasks_spawned: s.tasks_spawned,
            task_executions: s.task_executions,
            tasks_respawned: s.tasks_respawned,
            tasks_completed: s.tasks_completed,
            when_alls_created: s.when_alls_created,
            allocation_failures: s.allocation_failures,
            steals: s.steals,
            alive: s.alive,
            peak_alive: s.peak_alive,
            peak_bytes: s.peak_bytes,
            pool_high_water_bytes: s.pool_high_water_bytes,
            waits: s.waits,
            workers_sat_out: s.workers_sat_out,
        }
    }
}

/// Generates the i-th dependence of td_when_all_generate: a future (borrowed: the caller keeps
/// its reference until td_when_all_generate returns), or NULL for none.
pub type td_future_generator =
    Option<unsafe extern "C" fn(i: c_int, user: *mut c_void) -> *mut td_future>;

/// The scheduler behind a handle.
pub(crate) unsafe fn scheduler_arg<'a>(
    scheduler: *const td_scheduler,
    name: &str,
) -> CResult<&'a Scheduler> {
    handle::object(scheduler, name)
}

/// Creates a scheduler that runs tasks on `args->space` and allocates them from `args->pool`.
///
/// Ownership: on success `*out` holds a new scheduler with one reference, released with
/// td_scheduler_release; the scheduler keeps references to the space and the pool. Futures may
/// outlive the scheduler: its memory is freed when the last reference and the last future are
/// gone. Tasks still waiting to run when the last reference goes never run: call td_wait first.
/// Thread safety: any thread, after td_initialize.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`args`, `args->pool`, `out`); TD_ERROR_STRUCT_SIZE;
/// TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT (a team size that does not divide the
/// space's threads, a pool whose largest block cannot hold a task); TD_ERROR_NOT_INITIALIZED;
/// TD_ERROR_OUT_OF_MEMORY.
#[no_mangle]
pub unsafe extern "C" fn td_scheduler_create(
    args: *const td_scheduler_args,
    out: *mut *mut td_scheduler,
) -> td_status {
    call("td_scheduler_create", || {
        let args: td_scheduler_args = read_versioned(args, "args", false)?;
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_scheduler_create")?;
        if args.pool.is_null() {
            return Err(null_argument("args->pool"));
        }
        let pool =
            handle::object_arc(args.pool, "args->pool")?.host_shared("td_scheduler_create")?;
        let space = if args.space.is_null() {
            runtime::threads_space()?
        } else {
            space_arg(args.space, "args->space")?.clone()
        };
        let team_size = usize::try_from(args.team_size).map_err(|_| {
            CError::invalid(format!(
                "`args->team_size` is {}; it must be >= 0 (0 = from the topology)",
                args.team_size
            ))
        })?;
        let scheduler = Scheduler::new(
            space,
            pool,
            SchedulerConfig {
                team_size,
                team_scratch_bytes: args.team_scratch_bytes,
            },
        )?;
        let handle = handle::new_handle::<td_scheduler>(Arc::new(scheduler));
        scheduler_arg(handle, "out")?.set_user_handle(handle.cast());
        out.write(handle);
        Ok(())
    })
}

/// Adds a reference to `scheduler` (shared ownership, 000 §3.2.2).
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_scheduler_retain(scheduler: *mut td_scheduler) -> td_status {
    call("td_scheduler_retain", || {
        handle::retain(scheduler, "scheduler")
    })
}

/// Releases one reference to `scheduler`. NULL is a no-op. See td_scheduler_create for what
/// happens to futures and tasks when the last reference goes.
///
/// Thread safety: any thread, but not while a td_wait on this reference runs.
/// Returns TD_OK; TD_ERROR_INVALID_HANDLE (wrong type or already released).
#[no_mangle]
pub unsafe extern "C" fn td_scheduler_release(scheduler: *mut td_scheduler) -> td_status {
    call("td_scheduler_release", || {
        handle::release(scheduler, "scheduler")
    })
}

/// Writes to `*out` the number of workers (threads) the scheduler runs tasks on.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_scheduler_concurrency(
    scheduler: *const td_scheduler,
    out: *mut usize,
) -> td_status {
    call("td_scheduler_concurrency", || {
        let s = scheduler_arg(scheduler, "scheduler")?;
        Out::new(out, "out")?.write(s.concurrency());
        Ok(())
    })
}

/// Writes to `*out` the number of threads of the teams that run team tasks.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_scheduler_team_size(
    scheduler: *const td_scheduler,
    out: *mut usize,
) -> td_status {
    call("td_scheduler_team_size", || {
        let s = scheduler_arg(scheduler, "scheduler")?;
        Out::new(out, "out")?.write(s.team_size());
        Ok(())
    })
}

/// Fills `*out` with the scheduler's statistics. Set `out->struct_size` first
/// (TD_SCHEDULER_STATS_INIT); only that many bytes are written.
///
/// Thread safety: any thread, while no td_wait runs on the scheduler.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_STRUCT_SIZE;
/// TD_ERROR_BUSY (td_wait is running).
#[no_mangle]
pub unsafe extern "C" fn td_scheduler_statistics(
    scheduler: *const td_scheduler,
    out: *mut td_scheduler_stats,
) -> td_status {
    call("td_scheduler_statistics", || {
        let s = scheduler_arg(scheduler, "scheduler")?;
        let caller: td_scheduler_stats = read_versioned(out, "out", false)?;
        let stats = td_scheduler_stats::from(s.statistics()?);
        std::ptr::copy_nonoverlapping(
            &stats as *const td_scheduler_stats as *const u8,
            out as *mut u8,
            caller.struct_size,
        );
        (*out).struct_size = caller.struct_size;
        Ok(())
    })
}

/// Runs every spawned task to completion, including the tasks spawned by tasks, with the calling
/// thread as one of the workers (000 §3.2.2 `wait`). Tasks do not run before td_wait.
///
/// Thread safety: on the space's control thread (any thread for the Serial space); not from
/// inside a task. While it runs, other threads get TD_ERROR_BUSY from spawns, when_alls and
/// future retain/release of this scheduler.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_WRONG_THREAD (inside a
/// task, or not the space's control thread); TD_ERROR_BUSY (another td_wait runs on this
/// scheduler or its space); TD_ERROR_DEADLOCK (everything that could run has run, but tasks
/// remain that wait on futures that can never complete; the message counts them, and each is
/// reported once); TD_ERROR_INTERNAL.
#[no_mangle]
pub unsafe extern "C" fn td_wait(scheduler: *mut td_scheduler) -> td_status {
    call("td_wait", || {
        // A clone keeps the scheduler alive for the whole wait.
        let s = scheduler_arg(scheduler, "scheduler")?.clone();
        Ok(s.wait()?)
    })
}

/// Spawns a task from host code (000 §3.2.2 `host_spawn`): allocates it from the scheduler's
/// pool, copies the closure's state into it and schedules it with the policy. The scheduler is
/// `policy->scheduler`, or the dependence's when that is NULL.
///
/// Returns the task's future with one reference (release it with td_future_release), or NULL
/// with td_last_error() set: TD_ERROR_POOL_EXHAUSTED (nothing else changes), TD_ERROR_NULL_ARGUMENT
/// (`policy`, `closure`, `closure->function`, or both the scheduler and the dependence),
/// TD_ERROR_STRUCT_SIZE, TD_ERROR_INVALID_HANDLE (a released or foreign dependence),
/// TD_ERROR_INVALID_ARGUMENT (unknown priority, a dependence of another scheduler, state plus
/// result too large for the pool's largest block), TD_ERROR_UNAVAILABLE (a team task on the
/// Serial space), TD_ERROR_WRONG_THREAD (inside a task of this scheduler: use td_task_spawn),
/// TD_ERROR_BUSY (td_wait is running).
///
/// Thread safety: any thread while no td_wait runs on the scheduler.
#[no_mangle]
pub unsafe extern "C" fn td_host_spawn(
    policy: *const td_task_policy,
    closure: *const td_task_closure,
) -> *mut td_future {
    future_or_null("td_host_spawn", || {
        let p = policy_arg(policy)?;
        let c = closure_arg(closure)?;
        let shared = policy_scheduler(p.scheduler, p.dependence)?;
        let raw_policy = RawPolicy {
            dependence: p.dependence,
            priority: p.priority,
            team: p.team,
        };
        Ok(raw::host_spawn(shared, &raw_policy, &c, "td_host_spawn")?)
    })
}

/// The scheduler a host spawn uses: the policy's, which must own the dependence, or the
/// dependence's.
unsafe fn policy_scheduler<'a>(
    scheduler: *mut td_scheduler,
    dependence: Option<NonNull<TaskHeader>>,
) -> CResult<&'a Shared> {
    match (scheduler.is_null(), dependence) {
        (false, dep) => {
            let shared = scheduler_arg(scheduler, "policy->scheduler")?.shared();
            if let Some(d) = dep {
                raw::check_scheduler(d, shared, "`policy->dependence`")?;
            }
            Ok(shared)
        }
        (true, Some(d)) => Ok(&*d.as_ref().scheduler()),
        (true, None) => Err(CError::new(
            td_status::TD_ERROR_NULL_ARGUMENT,
            "`policy->scheduler` and `policy->dependence` are both NULL; set the scheduler to \
             spawn on (or a dependence, whose scheduler is then used)",
        )),
    }
}

/// Returns a future that completes when all `count` futures in `futures` have (000 §3.2.2
/// `when_all`); complete at once when they all are, or `count` is 0. The futures are borrowed.
/// A when_all can be the dependence of a task or an element of another when_all.
///
/// Returns the when_all's future with one reference, or NULL with td_last_error() set:
/// TD_ERROR_NULL_ARGUMENT (`scheduler`, `futures` with `count` > 0, or a NULL element),
/// TD_ERROR_INVALID_HANDLE (an element is released or no future), TD_ERROR_INVALID_ARGUMENT
/// (`count` < 0, a future of another scheduler), TD_ERROR_POOL_EXHAUSTED, TD_ERROR_BUSY (another
/// thread while td_wait runs).
///
/// Thread safety: any thread while no td_wait runs on the scheduler; its tasks during one.
#[no_mangle]
pub unsafe extern "C" fn td_when_all(
    scheduler: *mut td_scheduler,
    futures: *const *mut td_future,
    count: c_int,
) -> *mut td_future {
    future_or_null("td_when_all", || {
        let s = scheduler_arg(scheduler, "scheduler")?;
        let n = count_arg(count)?;
        if n > 0 && futures.is_null() {
            return Err(null_argument("futures"));
        }
        let shared = s.shared();
        let decode = |i: usize| -> CResult<*mut TaskHeader> {
            let f = *futures.add(i);
            if f.is_null() {
                return Err(null_element(i));
            }
            dependence(shared, f, i)
        };
        with_decoded(n, decode, |deps| s.when_all_raw(deps, "td_when_all"))
    })
}

/// Returns a future that completes when all futures `generator(i, user)` returns for
/// 0 <= i < `count` have (000 §3.2.2 `when_all` with a dependence generator); NULL results are
/// skipped. The generated futures are borrowed: keep them alive until this returns.
///
/// Returns the when_all's future with one reference, or NULL with td_last_error() set as for
/// td_when_all (TD_ERROR_NULL_ARGUMENT for a NULL `generator`).
///
/// Thread safety: as td_when_all.
#[no_mangle]
pub unsafe extern "C" fn td_when_all_generate(
    scheduler: *mut td_scheduler,
    count: c_int,
    generator: td_future_generator,
    user: *mut c_void,
) -> *mut td_future {
    future_or_null("td_when_all_generate", || {
        let s = scheduler_arg(scheduler, "scheduler")?;
        let n = count_arg(count)?;
        let Some(generator) = generator else {
            return Err(null_argument("generator"));
        };
        let decode = |i: usize| -> CResult<*mut TaskHeader> {
            let f = generator(i as c_int, user);
            if f.is_null() {
                Ok(std::ptr::null_mut())
            } else {
                dependence(s.shared(), f, i)
            }
        };
        with_decoded(n, decode, |deps| {
            s.when_all_raw(deps, "td_when_all_generate")
        })
    })
}
