//! One reduction value per thread, each on its own cache lines so threads do not falsely share.

use crate::error::{Error, ErrorKind, Result};

pub(crate) struct Partials {
    bytes: Vec<u64>,
    stride_words: usize,
    value_size: usize,
}

// Two lines per value: neighbouring-line prefetch makes one line of padding not enough.
const STRIDE_ALIGN: usize = 128;

impl Partials {
    pub(crate) fn new(count: usize, value_size: usize) -> Result<Partials> {
        let stride = value_size.div_ceil(STRIDE_ALIGN).max(1) * STRIDE_ALIGN;
        let words = count
            .checked_mul(stride / 8)
            .ok_or_else(|| Error::invalid_argument("reduction value too large"))?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(words).map_err(|_| {
            Error::new(
                ErrorKind::OutOfMemory,
                format!("could not allocate {count} reduction values of {value_size} bytes"),
            )
        })?;
        bytes.resize(words, 0);
        Ok(Partials {
            bytes,
            stride_words: stride / 8,
            value_size,
        })
    }

    /// Thread `i`'s value. Callers give each thread its own index, so the mutable slices they
    /// take do not overlap.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slot(&self, i: usize) -> &mut [u8] {
        let p = self.bytes.as_ptr().add(i * self.stride_words) as *mut u8;
        std::slice::from_raw_parts_mut(p, self.value_size)
    }
}

// SAFETY: threads access disjoint slots between the dispatch's start and end (see `slot`).
unsafe impl Sync for Partials {}
