//! `td_team`: one member's view of its thread team, shared by the team policy (004) and team
//! tasks (000 §2.3.2). A `td_team*` is borrowed: it is valid only during the callback that
//! received it, on the thread that received it.

use super::boundary::{call, call_or, null_argument};
use super::error::{CError, CResult};
use super::parallel::{td_range_fn, td_reduce_fn};
use super::reduction::{td_reduce_op, td_reducer, td_scalar_type, Combine};
use super::status::td_status;
use crate::exec::{TeamMember, TEAM_VALUE_BYTES};
use std::ffi::{c_int, c_void};

/// A member of a thread team, passed to team callbacks. Not reference-counted: valid only for
/// the duration of the callback, on the calling thread.
pub struct td_team {
    _private: [u8; 0],
}

/// The C view of a member that lives on the calling thread's stack for the callback.
pub(crate) fn team_ptr(member: &TeamMember<'_>) -> *mut td_team {
    member as *const TeamMember<'_> as *mut td_team
}

/// # Safety
/// `team` is NULL or came from `team_ptr` for a member that is still in its callback.
pub(crate) unsafe fn member<'a>(team: *const td_team) -> CResult<&'a TeamMember<'a>> {
    (team as *const TeamMember<'a>)
        .as_ref()
        .ok_or_else(|| null_argument("team"))
}

/// This member's rank in its team, 0 ≤ rank < size; -1 (and an error message) when `team` is
/// NULL. Thread safety: the member's own thread, inside its callback.
#[no_mangle]
pub unsafe extern "C" fn td_team_rank(team: *const td_team) -> i64 {
    call_or("td_team_rank", || Ok(member(team)?.rank() as i64)).unwrap_or(-1)
}

/// Members in this member's team; -1 when `team` is NULL.
#[no_mangle]
pub unsafe extern "C" fn td_team_size(team: *const td_team) -> i64 {
    call_or("td_team_size", || Ok(member(team)?.size() as i64)).unwrap_or(-1)
}

/// The league entry this team is working on (team policy), or 0 in a team task; -1 when `team`
/// is NULL.
#[no_mangle]
pub unsafe extern "C" fn td_team_league_rank(team: *const td_team) -> i64 {
    call_or("td_team_league_rank", || {
        Ok(member(team)?.league_rank() as i64)
    })
    .unwrap_or(-1)
}

/// Entries in the league (team policy), or 1 in a team task; -1 when `team` is NULL.
#[no_mangle]
pub unsafe extern "C" fn td_team_league_size(team: *const td_team) -> i64 {
    call_or("td_team_league_size", || {
        Ok(member(team)?.league_size() as i64)
    })
    .unwrap_or(-1)
}

/// Waits until every member of the team has called td_team_barrier; writes made before it by
/// any member are visible to every member after it.
///
/// Every member must call it, the same number of times. Returns TD_OK; TD_ERROR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn td_team_barrier(team: *const td_team) -> td_status {
    call("td_team_barrier", || {
        member(team)?.barrier();
        Ok(())
    })
}

unsafe fn value_arg<'a>(value: *mut c_void, size: usize, name: &str) -> CResult<&'a mut [u8]> {
    if value.is_null() {
        return Err(null_argument(name));
    }
    if size > TEAM_VALUE_BYTES {
        return Err(CError::invalid(format!(
            "team collectives take values of at most {TEAM_VALUE_BYTES} bytes; this one has \
             {size} (reduce a pointer to larger data instead)"
        )));
    }
    Ok(std::slice::from_raw_parts_mut(value.cast::<u8>(), size))
}

unsafe fn team_reduce_with(
    team: *const td_team,
    combine: &Combine,
    value: *mut c_void,
) -> CResult<()> {
    let m = member(team)?;
    let v = value_arg(value, combine.value_size(), "value")?;
    m.reduce(v, &|d, s| combine.join(d, s))?;
    Ok(())
}

/// Team reduction with a built-in operator: every member passes its value in `*value` (a
/// `type`) and every member gets the join of all members' values back in `*value`, joined in
/// rank order (deterministic). Every member must call it.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_ARGUMENT (unknown op or type).
#[no_mangle]
pub unsafe extern "C" fn td_team_reduce(
    team: *const td_team,
    op: td_reduce_op,
    r#type: td_scalar_type,
    value: *mut c_void,
) -> td_status {
    call("td_team_reduce", || {
        team_reduce_with(team, &Combine::builtin(op, r#type)?, value)
    })
}

/// Like td_team_reduce with a custom reducer (value_size at most 256 bytes).
#[no_mangle]
pub unsafe extern "C" fn td_team_reduce_custom(
    team: *const td_team,
    reducer: *const td_reducer,
    value: *mut c_void,
) -> td_status {
    call("td_team_reduce_custom", || {
        team_reduce_with(team, &Combine::custom(reducer)?, value)
    })
}

/// Team prefix scan with a built-in operator over the members' values in rank order: member r
/// gets v0 ⊕ … ⊕ v(r-1) (exclusive, identity for rank 0) or v0 ⊕ … ⊕ vr (inclusive) in
/// `*value`; `*total` (nullable) receives the join of all values. Every member must call it.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn td_team_scan(
    team: *const td_team,
    op: td_reduce_op,
    r#type: td_scalar_type,
    inclusive: c_int,
    value: *mut c_void,
    total: *mut c_void,
) -> td_status {
    call("td_team_scan", || {
        let combine = Combine::builtin(op, r#type)?;
        let m = member(team)?;
        let size = combine.value_size();
        let v = value_arg(value, size, "value")?;
        let mut identity = vec![0u8; size];
        combine.init(&mut identity);
        let total = if total.is_null() {
            None
        } else {
            Some(std::slice::from_raw_parts_mut(total.cast::<u8>(), size))
        };
        m.scan(
            v,
            &identity,
            &|d, s| combine.join(d, s),
            inclusive != 0,
            total,
        )?;
        Ok(())
    })
}

/// Copies `bytes` bytes at `value` of member `root` into `value` of every member. Every member
/// must call it with the same `bytes` and `root`.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_ARGUMENT (root outside the team,
/// more than 256 bytes).
#[no_mangle]
pub unsafe extern "C" fn td_team_broadcast(
    team: *const td_team,
    value: *mut c_void,
    bytes: usize,
    root: i64,
) -> td_status {
    call("td_team_broadcast", || {
        let m = member(team)?;
        let v = value_arg(value, bytes, "value")?;
        let root = usize::try_from(root).map_err(|_| {
            CError::invalid(format!("root {root} is negative; pass a rank of the team"))
        })?;
        m.broadcast(v, root)?;
        Ok(())
    })
}

/// Returns the team's shared scratch memory (8-byte aligned, the policy's `scratch_bytes`
/// long, zeroed when the dispatch starts and kept across the league entries a team runs) and
/// writes its size to `*bytes` when `bytes` is not NULL. NULL when `team` is NULL or the policy
/// asked for no scratch. The memory is shared: synchronize with td_team_barrier.
#[no_mangle]
pub unsafe extern "C" fn td_team_scratch(team: *const td_team, bytes: *mut usize) -> *mut c_void {
    call_or("td_team_scratch", || {
        let (ptr, len) = member(team)?.scratch();
        if !bytes.is_null() {
            *bytes = len;
        }
        Ok(if len == 0 {
            std::ptr::null_mut()
        } else {
            ptr.cast()
        })
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Team-level parallel loop: each member calls `body` on its own contiguous part of
/// [begin, end) (parts in rank order). No barrier is implied; call td_team_barrier before using
/// other members' results. Every member must call it.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_ARGUMENT (end < begin).
#[no_mangle]
pub unsafe extern "C" fn td_team_parallel_for(
    team: *const td_team,
    begin: i64,
    end: i64,
    body: td_range_fn,
    user: *mut c_void,
) -> td_status {
    call("td_team_parallel_for", || {
        let m = member(team)?;
        let body = body.ok_or_else(|| null_argument("body"))?;
        let r = team_range(m, begin, end)?;
        if !r.is_empty() {
            body(r.start, r.end, user);
        }
        Ok(())
    })
}

fn team_range(m: &TeamMember<'_>, begin: i64, end: i64) -> CResult<std::ops::Range<i64>> {
    if end < begin {
        return Err(CError::invalid(format!(
            "the range [{begin}, {end}) ends before it begins"
        )));
    }
    Ok(m.team_range(begin, end))
}

/// Team-level reduction over [begin, end) with a built-in operator: each member folds its part
/// into a value starting at the identity, then the members' values are joined (rank order) and
/// every member receives the result in `*result`. Every member must call it.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn td_team_parallel_reduce(
    team: *const td_team,
    begin: i64,
    end: i64,
    body: td_reduce_fn,
    user: *mut c_void,
    op: td_reduce_op,
    r#type: td_scalar_type,
    result: *mut c_void,
) -> td_status {
    call("td_team_parallel_reduce", || {
        let combine = Combine::builtin(op, r#type)?;
        let m = member(team)?;
        let body = body.ok_or_else(|| null_argument("body"))?;
        let out = value_arg(result, combine.value_size(), "result")?;
        let r = team_range(m, begin, end)?;
        combine.init(out);
        if !r.is_empty() {
            body(r.start, r.end, out.as_mut_ptr().cast(), user);
        }
        m.reduce(out, &|d, s| combine.join(d, s))?;
        Ok(())
    })
}
