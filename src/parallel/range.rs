//! The range policy and the split of a range among threads.

use crate::error::{Error, Result};
use std::ops::Range;

/// Indices [begin, end), optionally in chunks, on a fraction of the space's threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangePolicy {
    pub begin: i64,
    pub end: i64,
    /// Indices per chunk; 0 = one contiguous block per thread. With a chunk size,
    /// `parallel_for` hands out chunks dynamically (load balance) and reductions assign them
    /// round-robin (deterministic); scans always use one block per thread.
    pub chunk: u64,
    /// Fraction (0, 1] of the space's threads to use (003 masks); 1 = all.
    pub mask: f64,
}

impl RangePolicy {
    pub fn new(begin: i64, end: i64) -> RangePolicy {
        RangePolicy {
            begin,
            end,
            chunk: 0,
            mask: 1.0,
        }
    }

    pub(crate) fn validate(&self, what: &str) -> Result<()> {
        if self.end < self.begin {
            return Err(Error::invalid_argument(format!(
                "{what}: the range [{}, {}) ends before it begins",
                self.begin, self.end
            )));
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> u64 {
        self.end.abs_diff(self.begin)
    }

    /// Block `part` of `parts` equal contiguous blocks.
    pub(crate) fn block(&self, part: usize, parts: usize) -> Range<i64> {
        let len = self.len() as u128;
        let lo = (len * part as u128 / parts as u128) as i64;
        let hi = (len * (part as u128 + 1) / parts as u128) as i64;
        self.begin + lo..self.begin + hi
    }

    pub(crate) fn chunks(&self) -> u64 {
        self.len().div_ceil(self.chunk.max(1))
    }

    /// Chunk `c` of the chunked split.
    pub(crate) fn chunk_range(&self, c: u64) -> Range<i64> {
        let lo = c * self.chunk;
        let hi = (lo + self.chunk).min(self.len());
        self.begin + lo as i64..self.begin + hi as i64
    }

    /// Calls `f` on each range that `rank` of `size` owns under the static split, in order.
    pub(crate) fn for_static_share(&self, rank: usize, size: usize, mut f: impl FnMut(Range<i64>)) {
        if self.chunk == 0 {
            let r = self.block(rank, size);
            if !r.is_empty() {
                f(r);
            }
        } else {
            let mut c = rank as u64;
            while c < self.chunks() {
                f(self.chunk_range(c));
                c += size as u64;
            }
        }
    }
}
