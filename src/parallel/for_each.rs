//! `parallel_for` (004): every index of the range exactly once, on the space's threads.

use super::range::RangePolicy;
use crate::error::Result;
use crate::exec::Space;
use std::sync::atomic::{AtomicU64, Ordering};

/// Calls `body(b, e)` on disjoint ranges that together cover the policy's range, and returns
/// when all calls have returned.
pub fn parallel_for(
    space: &Space,
    policy: &RangePolicy,
    body: &(dyn Fn(i64, i64) + Sync),
) -> Result<()> {
    policy.validate("parallel_for")?;
    let space = space.masked(policy.mask)?;
    if policy.chunk == 0 {
        return space.run_blocks(&|w| {
            let r = policy.block(w.rank, w.size);
            if !r.is_empty() {
                body(r.start, r.end);
            }
        });
    }
    // Dynamic chunks: each block claims chunks until none is left, so a block that a late
    // thread claims finds the chunks already done by the others and returns at once. Relaxed is
    // enough: the counter only hands out distinct chunk numbers; the dispatch's completion
    // orders everything else.
    let next = AtomicU64::new(0);
    let chunks = policy.chunks();
    space.run_blocks(&|_| loop {
        let c = next.fetch_add(1, Ordering::Relaxed);
        if c >= chunks {
            break;
        }
        let r = policy.chunk_range(c);
        body(r.start, r.end);
    })
}
