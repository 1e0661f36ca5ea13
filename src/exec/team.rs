//! Thread teams: the member API shared by the team policy (004) and team tasks (000 §2.3.2,
//! 002 §2.2.2): rank and size, barrier, reduce, scan and broadcast over byte values with a join
//! callback, and team-shared scratch memory.
//!
//! Collectives exchange values through one slot per member. Each collective is bracketed by
//! barriers so a slot is never rewritten while another member still reads it. Joins are applied
//! in rank order, so results are deterministic for a given team size.

use super::barrier::TeamBarrier;
use crate::error::{Error, Result};
use std::cell::UnsafeCell;

/// Bytes each member may contribute to one reduce, scan or broadcast.
pub const TEAM_VALUE_BYTES: usize = 256;

/// Joins `src` into `dst` (both `value_bytes` long): dst = dst ⊕ src.
pub type JoinFn<'a> = &'a dyn Fn(&mut [u8], &[u8]);

/// The state one team shares: barrier, exchange slots and scratch memory.
pub struct Team {
    barrier: TeamBarrier,
    slots: Box<[UnsafeCell<[u64; TEAM_VALUE_BYTES / 8]>]>,
    scratch: UnsafeCell<Box<[u64]>>,
    scratch_bytes: usize,
}

// SAFETY: the slots and scratch are written only between barriers that order every access (see
// the module comment); scratch memory is the caller's to synchronize, as in Kokkos.
unsafe impl Sync for Team {}
unsafe impl Send for Team {}

impl Team {
    /// A team of `size` members with `scratch_bytes` of shared scratch memory.
    pub fn new(size: usize, scratch_bytes: usize) -> Result<Team> {
        if size == 0 {
            return Err(Error::invalid_argument("a team needs at least one member"));
        }
        let words = scratch_bytes.div_ceil(8);
        let mut scratch = Vec::new();
        scratch.try_reserve_exact(words).map_err(|_| {
            Error::new(
                crate::ErrorKind::OutOfMemory,
                format!("could not allocate {scratch_bytes} bytes of team scratch memory"),
            )
        })?;
        scratch.resize(words, 0u64);
        Ok(Team {
            barrier: TeamBarrier::new(size),
            slots: (0..size)
                .map(|_| UnsafeCell::new([0; TEAM_VALUE_BYTES / 8]))
                .collect(),
            scratch: UnsafeCell::new(scratch.into_boxed_slice()),
            scratch_bytes,
        })
    }

    pub fn size(&self) -> usize {
        self.barrier.size()
    }

    /// The member with `rank` of this team, working on league entry `league_rank`.
    pub fn member(&self, rank: usize, league_rank: usize, league_size: usize) -> TeamMember<'_> {
        debug_assert!(rank < self.size());
        TeamMember {
            team: self,
            rank,
            league_rank,
            league_size,
        }
    }

    fn slot(&self, rank: usize) -> *mut u8 {
        self.slots[rank].get() as *mut u8
    }
}

/// One member's view of its team.
#[derive(Clone, Copy)]
pub struct TeamMember<'a> {
    team: &'a Team,
    rank: usize,
    league_rank: usize,
    league_size: usize,
}

impl<'a> TeamMember<'a> {
    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.team.size()
    }

    pub fn league_rank(&self) -> usize {
        self.league_rank
    }

    pub fn league_size(&self) -> usize {
        self.league_size
    }

    pub fn barrier(&self) {
        self.team.barrier.wait();
    }

    /// Team-shared scratch memory (8-byte aligned) and its size; contents persist across league
    /// entries run by the same team.
    pub fn scratch(&self) -> (*mut u8, usize) {
        // SAFETY: the box is never reallocated while the team lives; only its pointer is read.
        let words = unsafe { &mut *self.team.scratch.get() };
        (words.as_mut_ptr() as *mut u8, self.team.scratch_bytes)
    }

    fn check_len(value: &[u8]) -> Result<()> {
        if value.len() > TEAM_VALUE_BYTES {
            return Err(Error::invalid_argument(format!(
                "team collective on a {}-byte value; at most {TEAM_VALUE_BYTES} bytes per member \
                 are supported (reduce a pointer to larger data instead)",
                value.len()
            )));
        }
        Ok(())
    }

    /// Every member passes its value; every member gets the join of all values (rank order).
    pub fn reduce(&self, value: &mut [u8], join: JoinFn<'_>) -> Result<()> {
        Self::check_len(value)?;
        let n = value.len();
        // SAFETY (all slot accesses below): between the barriers each member writes only its own
        // slot; reads of other slots happen after the barrier that follows the writes.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), self.team.slot(self.rank), n) };
        self.barrier();
        if self.rank == 0 {
            let acc = unsafe { std::slice::from_raw_parts_mut(self.team.slot(0), n) };
            for r in 1..self.size() {
                let other = unsafe { std::slice::from_raw_parts(self.team.slot(r), n) };
                join(acc, other);
            }
        }
        self.barrier();
        unsafe { std::ptr::copy_nonoverlapping(self.team.slot(0), value.as_mut_ptr(), n) };
        self.barrier();
        Ok(())
    }

    /// Prefix join over ranks. Exclusive: member r gets identity ⊕ v0 ⊕ … ⊕ v(r-1), with
    /// `value` holding the identity on entry for that purpose only on rank 0's output; inclusive
    /// adds its own value. Returns the team total as well, like Kokkos' team_scan.
    pub fn scan(
        &self,
        value: &mut [u8],
        identity: &[u8],
        join: JoinFn<'_>,
        inclusive: bool,
        total: Option<&mut [u8]>,
    ) -> Result<()> {
        Self::check_len(value)?;
        let n = value.len();
        if identity.len() != n {
            return Err(Error::invalid_argument(format!(
                "team scan: the identity has {} bytes but the value has {n}",
                identity.len()
            )));
        }
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), self.team.slot(self.rank), n) };
        self.barrier();
        let upto = if inclusive { self.rank + 1 } else { self.rank };
        value.copy_from_slice(identity);
        for r in 0..upto {
            let other = unsafe { std::slice::from_raw_parts(self.team.slot(r), n) };
            join(value, other);
        }
        if let Some(total) = total {
            total.copy_from_slice(identity);
            for r in 0..self.size() {
                let other = unsafe { std::slice::from_raw_parts(self.team.slot(r), n) };
                join(total, other);
            }
        }
        self.barrier();
        Ok(())
    }

    /// Copies `value` of member `root` into `value` of every member.
    pub fn broadcast(&self, value: &mut [u8], root: usize) -> Result<()> {
        Self::check_len(value)?;
        if root >= self.size() {
            return Err(Error::invalid_argument(format!(
                "team broadcast from rank {root}, but the team has {} members",
                self.size()
            )));
        }
        let n = value.len();
        if self.rank == root {
            unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), self.team.slot(root), n) };
        }
        self.barrier();
        if self.rank != root {
            unsafe { std::ptr::copy_nonoverlapping(self.team.slot(root), value.as_mut_ptr(), n) };
        }
        self.barrier();
        Ok(())
    }

    /// The part of [begin, end) this member handles in a team-level parallel loop: contiguous
    /// blocks in rank order, so team-level reductions are deterministic.
    pub fn team_range(&self, begin: i64, end: i64) -> std::ops::Range<i64> {
        let len = (end - begin).max(0) as u64;
        let size = self.size() as u64;
        let r = self.rank as u64;
        let lo = begin + (len * r / size) as i64;
        let hi = begin + (len * (r + 1) / size) as i64;
        lo..hi
    }
}
