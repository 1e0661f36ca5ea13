//! Data-parallel dispatch (004) from C: parallel_for, parallel_reduce and parallel_scan over
//! index ranges, and the team policy. Bodies receive ranges [begin, end), not single indices, so
//! the loop over indices is the caller's own, compiled and inlined in the caller's language.

use super::boundary::{call, null_argument, read_versioned, UserPtr, Versioned};
use super::error::CResult;
use super::reduction::{td_reduce_op, td_reducer, td_scalar_type, Combine};
use super::space::{space_arg, td_space};
use super::status::td_status;
use super::team::{td_team, team_ptr};
use crate::parallel::{self, RangePolicy, Reducer, TeamPolicy};
use std::ffi::{c_int, c_void};

/// Indices [begin, end) to run over. Initialize with TD_RANGE_POLICY_INIT, then set begin/end.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_range_policy {
    /// sizeof(td_range_policy) as the caller was compiled; set by TD_RANGE_POLICY_INIT.
    pub struct_size: usize,
    /// First index.
    pub begin: i64,
    /// One past the last index; end >= begin.
    pub end: i64,
    /// Indices per chunk; 0 = one contiguous block per thread (lowest overhead). With a chunk
    /// size, td_parallel_for hands out chunks dynamically for load balance; reductions assign
    /// chunks round-robin so their result stays deterministic; scans ignore it.
    pub chunk_size: u64,
    /// Fraction (0, 1] of the space's threads to use, rounded up (003 masks); 0 = all.
    pub mask: f64,
}

unsafe impl Versioned for td_range_policy {
    const NAME: &'static str = "td_range_policy";
    const MIN_SIZE: usize = std::mem::size_of::<td_range_policy>();
    fn defaults() -> Self {
        td_range_policy {
            struct_size: std::mem::size_of::<td_range_policy>(),
            begin: 0,
            end: 0,
            chunk_size: 0,
            mask: 1.0,
        }
    }
}

/// A league of teams. Initialize with TD_TEAM_POLICY_INIT, then set league_size.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_team_policy {
    /// sizeof(td_team_policy) as the caller was compiled; set by TD_TEAM_POLICY_INIT.
    pub struct_size: usize,
    /// League entries; each is run by one whole team.
    pub league_size: i64,
    /// Threads per team, at most the space's concurrency; 0 = the hardware threads of a core.
    pub team_size: i64,
    /// Bytes of team-shared scratch memory (td_team_scratch), 8-byte aligned.
    pub scratch_bytes: usize,
    /// Fraction (0, 1] of the space's threads to use, rounded up; 0 = all.
    pub mask: f64,
}

unsafe impl Versioned for td_team_policy {
    const NAME: &'static str = "td_team_policy";
    const MIN_SIZE: usize = std::mem::size_of::<td_team_policy>();
    fn defaults() -> Self {
        td_team_policy {
            struct_size: std::mem::size_of::<td_team_policy>(),
            league_size: 0,
            team_size: 0,
            scratch_bytes: 0,
            mask: 1.0,
        }
    }
}

/// Body of td_parallel_for: handles indices [begin, end).
pub type td_range_fn = Option<unsafe extern "C" fn(begin: i64, end: i64, user: *mut c_void)>;
/// Body of td_parallel_reduce: folds the values of indices [begin, end) into `value` (of the
/// reduction's type, private to the calling thread).
pub type td_reduce_fn =
    Option<unsafe extern "C" fn(begin: i64, end: i64, value: *mut c_void, user: *mut c_void)>;
/// Body of td_parallel_scan: for each i in [begin, end), adds i's value to `update`; when
/// `final_pass` is non-zero it also writes the result for i — before adding for an exclusive
/// scan, after adding for an inclusive one. Called twice per range (004 two-pass scan).
pub type td_scan_fn = Option<
    unsafe extern "C" fn(
        begin: i64,
        end: i64,
        update: *mut c_void,
        final_pass: c_int,
        user: *mut c_void,
    ),
>;
/// Body of td_parallel_team: runs on every member of a team for each league entry.
pub type td_team_fn = Option<unsafe extern "C" fn(team: *const td_team, user: *mut c_void)>;

unsafe fn range_policy(policy: *const td_range_policy) -> CResult<RangePolicy> {
    let p: td_range_policy = read_versioned(policy, "policy", false)?;
    Ok(RangePolicy {
        begin: p.begin,
        end: p.end,
        chunk: p.chunk_size,
        mask: if p.mask == 0.0 { 1.0 } else { p.mask },
    })
}

/// Where a reduction's result is assembled before it is copied to the caller's `*result`
/// (written only on success): on the stack for the built-in types and small custom values, so
/// that an empty reduction allocates nothing.
enum ResultRoom {
    Stack([u8; 64], usize),
    Heap(Vec<u8>),
}

impl ResultRoom {
    fn new(size: usize) -> ResultRoom {
        if size <= 64 {
            ResultRoom::Stack([0; 64], size)
        } else {
            ResultRoom::Heap(vec![0; size])
        }
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            ResultRoom::Stack(bytes, size) => &mut bytes[..*size],
            ResultRoom::Heap(bytes) => bytes,
        }
    }
}

fn required<F>(f: Option<F>, name: &str) -> CResult<F> {
    f.ok_or_else(|| null_argument(name))
}

/// Calls `body(b, e, user)` on disjoint ranges covering [policy->begin, policy->end), on the
/// threads of `space`, and returns when every call has returned.
///
/// Thread safety: only the space's control thread may call it (any thread for the Serial
/// space); `body` runs concurrently on the space's threads.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_STRUCT_SIZE; TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT (end < begin, mask outside (0, 1]); TD_ERROR_WRONG_THREAD (not
/// the control thread); TD_ERROR_BUSY (called from inside a dispatch on the same space).
#[no_mangle]
pub unsafe extern "C" fn td_parallel_for(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_range_fn,
    user: *mut c_void,
) -> td_status {
    call("td_parallel_for", || {
        let space = space_arg(space, "space")?;
        let policy = range_policy(policy)?;
        let body = required(body, "body")?;
        let user = UserPtr(user);
        parallel::parallel_for(space, &policy, &|b, e| {
            let u = user;
            body(b, e, u.0)
        })?;
        Ok(())
    })
}

unsafe fn reduce_with(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_reduce_fn,
    user: *mut c_void,
    combine: &Combine,
    result: *mut c_void,
) -> CResult<()> {
    let space = space_arg(space, "space")?;
    let policy = range_policy(policy)?;
    let body = required(body, "body")?;
    if result.is_null() {
        return Err(null_argument("result"));
    }
    let size = combine.value_size();
    let reducer = Reducer {
        value_size: size,
        init: &|v| combine.init(v),
        join: &|d, s| combine.join(d, s),
    };
    let user = UserPtr(user);
    let mut room = ResultRoom::new(size);
    let out = room.bytes();
    parallel::parallel_reduce(
        space,
        &policy,
        &reducer,
        &|b, e, v| {
            let u = user;
            body(b, e, v.as_mut_ptr().cast(), u.0)
        },
        out,
    )?;
    std::ptr::copy_nonoverlapping(out.as_ptr(), result.cast::<u8>(), size);
    Ok(())
}

/// Reduces over [policy->begin, policy->end) with a built-in operator: the range is split into
/// one block per thread, each block's `value` starts at the operator's identity, `body` folds
/// the block's indices into it, and the blocks' values are joined in block order into `*result`
/// (a `type` value). For a given thread count the result is the same on every run, also for
/// floating point (004), whichever thread ran which block.
///
/// Thread safety and statuses as td_parallel_for, plus TD_ERROR_INVALID_ARGUMENT for an
/// unknown `op` or `type`. `*result` is written only on success.
#[no_mangle]
pub unsafe extern "C" fn td_parallel_reduce(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_reduce_fn,
    user: *mut c_void,
    op: td_reduce_op,
    r#type: td_scalar_type,
    result: *mut c_void,
) -> td_status {
    call("td_parallel_reduce", || {
        let combine = Combine::builtin(op, r#type)?;
        reduce_with(space, policy, body, user, &combine, result)
    })
}

/// Like td_parallel_reduce with a custom reducer (value size, identity, join); `*result`
/// receives `reducer->value_size` bytes. `init` and `join` run on the space's threads.
#[no_mangle]
pub unsafe extern "C" fn td_parallel_reduce_custom(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_reduce_fn,
    user: *mut c_void,
    reducer: *const td_reducer,
    result: *mut c_void,
) -> td_status {
    call("td_parallel_reduce_custom", || {
        let combine = Combine::custom(reducer)?;
        reduce_with(space, policy, body, user, &combine, result)
    })
}

unsafe fn scan_with(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_scan_fn,
    user: *mut c_void,
    combine: &Combine,
    total: *mut c_void,
) -> CResult<()> {
    let space = space_arg(space, "space")?;
    let policy = range_policy(policy)?;
    let body = required(body, "body")?;
    let size = combine.value_size();
    let reducer = Reducer {
        value_size: size,
        init: &|v| combine.init(v),
        join: &|d, s| combine.join(d, s),
    };
    let user = UserPtr(user);
    let mut room = ResultRoom::new(size);
    let out = room.bytes();
    parallel::parallel_scan(
        space,
        &policy,
        &reducer,
        &|b, e, v, last| {
            let u = user;
            body(b, e, v.as_mut_ptr().cast(), c_int::from(last), u.0)
        },
        out,
    )?;
    if !total.is_null() {
        std::ptr::copy_nonoverlapping(out.as_ptr(), total.cast::<u8>(), size);
    }
    Ok(())
}

/// Prefix scan over [policy->begin, policy->end) with a built-in operator, in two passes (see
/// td_scan_fn); inclusive or exclusive is chosen by where `body` writes. `*total` (nullable)
/// receives the join of all values.
///
/// Thread safety and statuses as td_parallel_reduce.
#[no_mangle]
pub unsafe extern "C" fn td_parallel_scan(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_scan_fn,
    user: *mut c_void,
    op: td_reduce_op,
    r#type: td_scalar_type,
    total: *mut c_void,
) -> td_status {
    call("td_parallel_scan", || {
        let combine = Combine::builtin(op, r#type)?;
        scan_with(space, policy, body, user, &combine, total)
    })
}

/// Like td_parallel_scan with a custom reducer.
#[no_mangle]
pub unsafe extern "C" fn td_parallel_scan_custom(
    space: *const td_space,
    policy: *const td_range_policy,
    body: td_scan_fn,
    user: *mut c_void,
    reducer: *const td_reducer,
    total: *mut c_void,
) -> td_status {
    call("td_parallel_scan_custom", || {
        let combine = Combine::custom(reducer)?;
        scan_with(space, policy, body, user, &combine, total)
    })
}

/// Runs `body(team, user)` on every member of a team for each of `policy->league_size` league
/// entries. Teams are consecutive threads of `space`; team t runs entries t, t + teams, …
/// Members use the td_team_* functions (rank, barrier, reduce, scan, broadcast, scratch).
///
/// Thread safety as td_parallel_for. Returns TD_OK; TD_ERROR_NULL_ARGUMENT;
/// TD_ERROR_STRUCT_SIZE; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT (negative sizes,
/// team larger than the space, mask outside (0, 1]); TD_ERROR_OUT_OF_MEMORY (scratch);
/// TD_ERROR_WRONG_THREAD; TD_ERROR_BUSY.
#[no_mangle]
pub unsafe extern "C" fn td_parallel_team(
    space: *const td_space,
    policy: *const td_team_policy,
    body: td_team_fn,
    user: *mut c_void,
) -> td_status {
    call("td_parallel_team", || {
        let space = space_arg(space, "space")?;
        let p: td_team_policy = read_versioned(policy, "policy", false)?;
        let body = required(body, "body")?;
        let league_size = usize::try_from(p.league_size).map_err(|_| {
            super::error::CError::invalid(format!(
                "`policy->league_size` is {}; it must be >= 0",
                p.league_size
            ))
        })?;
        let team_size = usize::try_from(p.team_size).map_err(|_| {
            super::error::CError::invalid(format!(
                "`policy->team_size` is {}; it must be >= 0 (0 = automatic)",
                p.team_size
            ))
        })?;
        let policy = TeamPolicy {
            league_size,
            team_size,
            scratch_bytes: p.scratch_bytes,
            mask: if p.mask == 0.0 { 1.0 } else { p.mask },
        };
        let user = UserPtr(user);
        parallel::parallel_team(space, &policy, &|m| {
            let u = user;
            body(team_ptr(m), u.0)
        })?;
        Ok(())
    })
}
