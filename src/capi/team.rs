//! `td_team`: one member's view of its thread team, shared by the team policy (004) and team
//! tasks (000 §2.3.2). A `td_team*` is borrowed: it is valid only during the callback that
//! received it, on the thread that received it.

use super::boundary::{call, call_or, null_argument};
use super::error::CResult;
use super::status::td_status;
use crate::exec::TeamMember;

/// A member of a thread team, passed to team callbacks. Not reference-counted: valid only for
/// the duration of the callback, on the calling thread.
pub struct td_team {
    _private: [u8; 0],
}

/// The C view of a member that lives on the calling thread's stack for the callback.
#[allow(dead_code)] // TEMP: users land with the team policy and team tasks
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
