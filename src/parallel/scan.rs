//! `parallel_scan` (004) in two passes over one static split, as Kokkos does: pass 1 reduces
//! each thread's share; the shares' totals are scanned in rank order; pass 2 runs the body again
//! with `final_pass` set and `update` holding the join of every value before the range. The body
//! writes its output in pass 2: before adding index i's value for an exclusive scan, after for
//! an inclusive one.

use super::partials::{InlineRoom, Partials};
use super::range::RangePolicy;
use super::reduce::{check_value_size, Reducer};
use crate::error::Result;
use crate::exec::{Space, TeamBarrier};

/// The body of a scan: `(begin, end, update, final_pass)`.
pub type ScanBody<'a> = &'a (dyn Fn(i64, i64, &mut [u8], bool) + Sync);

/// Runs the two passes and writes the join of all values to `total`.
pub fn parallel_scan(
    space: &Space,
    policy: &RangePolicy,
    reducer: &Reducer<'_>,
    body: ScanBody<'_>,
    total: &mut [u8],
) -> Result<()> {
    policy.validate("parallel_scan")?;
    check_value_size(reducer, total.len(), "parallel_scan")?;
    let space = space.masked(policy.mask)?;
    // A prefix per thread needs each thread's share to be one contiguous block.
    let policy = &RangePolicy {
        chunk: 0,
        ..*policy
    };
    let threads = space.concurrency();
    // One value per thread for pass 1, then each becomes that thread's starting prefix.
    let mut room = InlineRoom::new();
    let partials = Partials::new(threads, reducer.value_size, &mut room)?;
    let barrier = TeamBarrier::new(threads);
    space.run_on_all(&|w| {
        // SAFETY: before the barrier each rank touches only its own slot; after it, rank 0
        // rewrites all slots, and the second barrier hands each slot back to its owner.
        let mine = unsafe { partials.slot(w.rank) };
        (reducer.init)(mine);
        policy.for_static_share(w.rank, w.size, |r| body(r.start, r.end, mine, false));
        barrier.wait();
        if w.rank == 0 {
            let mut running = vec![0u8; reducer.value_size];
            (reducer.init)(&mut running);
            for rank in 0..threads {
                let slot = unsafe { partials.slot(rank) };
                let share_total = slot.to_vec();
                slot.copy_from_slice(&running);
                (reducer.join)(&mut running, &share_total);
            }
        }
        barrier.wait();
        let mine = unsafe { partials.slot(w.rank) };
        policy.for_static_share(w.rank, w.size, |r| body(r.start, r.end, mine, true));
    })?;
    // After pass 2 the last rank's slot holds the join of everything.
    total.copy_from_slice(unsafe { partials.slot(threads - 1) });
    Ok(())
}
