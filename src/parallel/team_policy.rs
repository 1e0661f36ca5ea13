//! The team policy (004): a league of `league_size` entries, each run by a team of `team_size`
//! threads that share a barrier, collectives and scratch memory.
//!
//! The space's threads are grouped into ⌊threads / team_size⌋ teams of consecutive ranks; team
//! t runs league entries t, t + teams, t + 2·teams, … (a static assignment, so team-level
//! reductions are deterministic for a given thread count), with a team barrier between
//! consecutive entries so that an entry starts only when the whole team has left the previous
//! one.

use crate::error::{Error, Result};
use crate::exec::{Space, Team, TeamMember};

/// League size × team size, with scratch memory per team.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TeamPolicy {
    pub league_size: usize,
    /// Threads per team; 0 = chosen by taskdag (the hardware threads of one core).
    pub team_size: usize,
    /// Bytes of team-shared scratch memory.
    pub scratch_bytes: usize,
    /// Fraction (0, 1] of the space's threads to use (003 masks).
    pub mask: f64,
}

/// The team size chosen when the policy says 0: one hardware thread per team member on a core,
/// so a team shares a core's caches (Kokkos chooses the same on CPUs).
fn auto_team_size(threads: usize) -> usize {
    let topo = crate::topology::Topology::detect();
    (topo.hardware_threads / topo.cores.max(1)).clamp(1, threads)
}

/// Runs `body` on every member of a team for every league entry.
pub fn parallel_team(
    space: &Space,
    policy: &TeamPolicy,
    body: &(dyn Fn(&TeamMember<'_>) + Sync),
) -> Result<()> {
    let space = space.masked(policy.mask)?;
    let threads = space.concurrency();
    let team_size = if policy.team_size == 0 {
        auto_team_size(threads)
    } else {
        policy.team_size
    };
    if team_size > threads {
        return Err(Error::invalid_argument(format!(
            "parallel_team: team_size {team_size} exceeds the {threads} thread(s) of this space; \
             pass a team size of at most {threads}, or 0 to let taskdag choose"
        )));
    }
    let teams_count = threads / team_size;
    let teams: Vec<Team> = (0..teams_count)
        .map(|_| Team::new(team_size, policy.scratch_bytes))
        .collect::<Result<_>>()?;
    let league = policy.league_size;
    space.run_on_all(&|w| {
        let t = w.rank / team_size;
        if t >= teams_count {
            return; // threads left over when team_size does not divide the thread count
        }
        let rank = w.rank % team_size;
        let mut entry = t;
        while entry < league {
            let member = teams[t].member(rank, entry, league);
            body(&member);
            entry += teams_count;
            if entry < league {
                // Members must not lap one another: the next entry may overwrite scratch memory
                // that a slower member still reads in this one (Kokkos' team rendezvous between
                // league entries).
                member.barrier();
            }
        }
    })
}
