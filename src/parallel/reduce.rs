//! `parallel_reduce` (004): the range is split into one static share per thread (a block), each
//! block is reduced into its own value by whichever thread claims it, then the values are joined
//! in block order. The split depends only on the range, the chunk size and the thread count, so
//! the result is the same on every run with the same thread count ("deterministic result",
//! 004), also for floating point.

use super::partials::{InlineRoom, Partials};
use super::range::RangePolicy;
use crate::error::{Error, Result};
use crate::exec::Space;

/// How to combine values of `value_size` bytes: `init` writes the identity, `join` folds the
/// second value into the first.
pub struct Reducer<'a> {
    pub value_size: usize,
    pub init: &'a (dyn Fn(&mut [u8]) + Sync),
    pub join: &'a (dyn Fn(&mut [u8], &[u8]) + Sync),
}

/// Calls `body(b, e, value)` on disjoint ranges covering the policy's range, each thread with
/// its own `value` (initialized by `reducer.init`), and writes the join of all values to
/// `result`.
pub fn parallel_reduce(
    space: &Space,
    policy: &RangePolicy,
    reducer: &Reducer<'_>,
    body: &(dyn Fn(i64, i64, &mut [u8]) + Sync),
    result: &mut [u8],
) -> Result<()> {
    policy.validate("parallel_reduce")?;
    check_value_size(reducer, result.len(), "parallel_reduce")?;
    let space = space.masked(policy.mask)?;
    let threads = space.concurrency();
    let mut room = InlineRoom::new();
    let partials = Partials::new(threads, reducer.value_size, &mut room)?;
    // Blocks, not threads, own the values: whoever runs block r folds into value r, so the
    // joins below see the same values in the same order whichever thread ran which block.
    space.run_blocks(&|w| {
        // SAFETY: each block takes only its own slot.
        let value = unsafe { partials.slot(w.rank) };
        (reducer.init)(value);
        policy.for_static_share(w.rank, w.size, |r| body(r.start, r.end, value));
    })?;
    (reducer.init)(result);
    for rank in 0..threads {
        // SAFETY: the dispatch has finished; nothing else touches the slots.
        (reducer.join)(result, unsafe { partials.slot(rank) });
    }
    Ok(())
}

pub(crate) fn check_value_size(reducer: &Reducer<'_>, result_len: usize, what: &str) -> Result<()> {
    if reducer.value_size == 0 || reducer.value_size != result_len {
        return Err(Error::invalid_argument(format!(
            "{what}: the reducer's value size is {} bytes and the result has {result_len}; \
             both must be the same, non-zero size",
            reducer.value_size
        )));
    }
    Ok(())
}
