//! Team tasks (000 §2.3.2, 002 §2.2.2, §3.3.2): a team task's function is called on every member
//! of a thread team, with the member API of the team policy (`crate::exec::TeamMember`).
//!
//! Teams are groups of `team_size` consecutive workers; the first is the leader. Only leaders take
//! team tasks (from the scheduler's team queue). A leader posts the task to its team (the task
//! pointer, then a Release increment of `seq`); each member notices the new `seq` at the top of
//! its loop (also while idle), runs the function as its team rank, and meets the others in the
//! team barrier at the end. Only then does the leader complete or respawn the task, so no member
//! touches a task after it may have been freed. Between team tasks the members run single tasks
//! on their own, unlike 002 §3.3.2 where they idle: a posted team task waits at most for the
//! single tasks its members are running to return.
//!
//! Spawn and respawn rights (000 §2.3.2: "only one thread of that team"): the first member that
//! spawns or respawns in a run of a team task claims the right for that run; another member's
//! attempt is an error. The claim and the respawn request live in the team's `ExecutionRecord`;
//! a single task uses one on its worker's stack.

use super::header::TaskHeader;
use crate::cache_line::CachePadded;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::Team;
use crate::priority::Priority;
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// A respawn request (000 §3.2.2 `respawn`): the dependence and the priority.
///
/// The scheduler must keep the dependence alive from the request until the task is in its wait
/// queue. Usually the caller releases its own future of the dependence right after the request
/// (000 Fig. 3.4: `respawn(this, when_all(...))`); a single task's release of exactly that future
/// during the same run is taken over as the scheduler's reference (`taken_over`), which saves a
/// retain and a release. Otherwise the executor takes an internal hold when the run ends, while
/// the caller's future still keeps the dependence alive. `respawn_when_all` makes the request
/// with a user reference of the scheduler's own already taken (`taken_over` from the start).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Respawn {
    pub dependence: Option<NonNull<TaskHeader>>,
    pub priority: Priority,
    /// The scheduler owns a user reference to the dependence: the caller's, which it released,
    /// or one `respawn_when_all` took.
    pub taken_over: bool,
}

const NO_MEMBER: usize = usize::MAX;

/// What one run of a task records for the executor: who may spawn and respawn, and the respawn
/// request.
pub(crate) struct ExecutionRecord {
    spawner: AtomicUsize,
    respawn: UnsafeCell<Option<Respawn>>,
}

// SAFETY: `respawn` is written only by the member that holds the claim (`spawner`), and read by
// the leader after the team's end barrier.
unsafe impl Sync for ExecutionRecord {}

impl ExecutionRecord {
    pub(crate) const fn new() -> ExecutionRecord {
        ExecutionRecord {
            spawner: AtomicUsize::new(NO_MEMBER),
            respawn: UnsafeCell::new(None),
        }
    }

    /// Makes the record ready for a new run. Only the leader, while no member runs the task.
    pub(crate) fn reset(&self) {
        self.spawner.store(NO_MEMBER, Ordering::Relaxed);
        // SAFETY: no member runs a task of this team now.
        unsafe { *self.respawn.get() = None };
    }

    /// Claims the spawn and respawn rights of this run for team rank `rank` (once claimed, other
    /// members are refused); `true` when this call took the claim. Teams of one need no claim.
    /// A call that then fails gives back a claim it took (`give_back`), so that a refused spawn
    /// or respawn changes nothing, not even which member may spawn.
    #[inline(always)]
    pub(crate) fn claim(&self, rank: usize, team_size: usize, what: &str) -> Result<bool> {
        if team_size == 1 {
            return Ok(false);
        }
        self.claim_in_team(rank, what)
    }

    /// Gives back the claim `claim` took (`taken`) for a call that failed.
    #[inline(always)]
    pub(crate) fn give_back<R, E>(
        &self,
        taken: bool,
        result: std::result::Result<R, E>,
    ) -> std::result::Result<R, E> {
        if result.is_err() && taken {
            // Relaxed: as the claim; only this member can hold it now.
            self.spawner.store(NO_MEMBER, Ordering::Relaxed);
        }
        result
    }

    /// The claim in a team of more than one (out of line: single tasks only test the size);
    /// `true` when this call took it.
    #[inline(never)]
    fn claim_in_team(&self, rank: usize, what: &str) -> Result<bool> {
        // Relaxed: the claim orders nothing; the respawn request is read after the barrier.
        match self
            .spawner
            .compare_exchange(NO_MEMBER, rank, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => Ok(true),
            Err(owner) if owner == rank => Ok(false),
            Err(owner) => Err(Error::new(
                ErrorKind::WrongThread,
                format!(
                    "{what}: team member {rank} may not spawn or respawn: member {owner} already \
                     did in this run of the team task, and only one member of a team may \
                     (000 §2.3.2); let member {owner} do it, e.g. guard the call with \
                     td_team_rank(team) == {owner}"
                ),
            )),
        }
    }

    /// Whether this run already asked to respawn.
    ///
    /// # Safety
    /// As for `request_respawn`.
    #[inline(always)]
    pub(crate) unsafe fn has_respawn(&self) -> bool {
        (*self.respawn.get()).is_some()
    }

    /// Records a respawn request; fails when one was already made in this run.
    ///
    /// # Safety
    /// The caller holds the claim (or runs a single task).
    pub(crate) unsafe fn request_respawn(&self, request: Respawn) -> std::result::Result<(), ()> {
        let slot = &mut *self.respawn.get();
        if slot.is_some() {
            return Err(());
        }
        *slot = Some(request);
        Ok(())
    }

    /// Records a respawn request in a run that has made none (`has_respawn`).
    ///
    /// # Safety
    /// As for `request_respawn`.
    #[inline(always)]
    pub(crate) unsafe fn set_respawn(&self, request: Respawn) {
        debug_assert!(!self.has_respawn());
        *self.respawn.get() = Some(request);
    }

    /// Takes over a released user reference to `entity` if it is this run's respawn dependence
    /// (see `Respawn`); `true` when taken over.
    ///
    /// # Safety
    /// A single task's record, on its worker's thread, during the run.
    #[inline]
    pub(crate) unsafe fn take_over_release(&self, entity: NonNull<TaskHeader>) -> bool {
        match &mut *self.respawn.get() {
            Some(r) if r.dependence == Some(entity) && !r.taken_over => {
                r.taken_over = true;
                true
            }
            _ => false,
        }
    }

    /// The respawn request of the run that ended; the record is then ready for a single task's
    /// next run.
    #[inline(always)]
    pub(crate) fn take_respawn(&self) -> Option<Respawn> {
        // SAFETY: the run has ended (a team task's members passed its end barrier).
        unsafe { (*self.respawn.get()).take() }
    }
}

/// A team of workers that runs team tasks together.
pub(crate) struct TeamState {
    pub(crate) team: Team,
    /// Team tasks posted so far; members compare it with the count they have run.
    seq: CachePadded<AtomicU64>,
    posted: AtomicPtr<TaskHeader>,
    pub(crate) record: ExecutionRecord,
}

impl TeamState {
    pub(crate) fn new(size: usize, scratch_bytes: usize) -> Result<TeamState> {
        Ok(TeamState {
            team: Team::new(size, scratch_bytes)?,
            seq: CachePadded(AtomicU64::new(0)),
            posted: AtomicPtr::new(std::ptr::null_mut()),
            record: ExecutionRecord::new(),
        })
    }

    /// The leader hands `task` to the members.
    pub(crate) fn post(&self, task: NonNull<TaskHeader>) {
        self.record.reset();
        // Relaxed: published by the Release increment.
        self.posted.store(task.as_ptr(), Ordering::Relaxed);
        self.seq.fetch_add(1, Ordering::Release);
    }

    /// A team task posted since the member last joined one (`seen` is the member's count, updated).
    #[inline]
    pub(crate) fn take_post(&self, seen: &mut u64) -> Option<NonNull<TaskHeader>> {
        // Acquire: pairs with `post`, so the task pointer and the reset record are visible.
        let seq = self.seq.load(Ordering::Acquire);
        if seq == *seen {
            return None;
        }
        *seen = seq;
        NonNull::new(self.posted.load(Ordering::Relaxed))
    }

    /// Whether a team task was posted that the member has not joined.
    #[inline]
    pub(crate) fn has_post(&self, seen: u64) -> bool {
        self.seq.load(Ordering::Relaxed) != seen
    }
}
