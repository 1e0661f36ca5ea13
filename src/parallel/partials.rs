//! One reduction value per block, each on its own cache lines so threads do not falsely share.
//! A few threads' values live in stack room the caller provides, so that a reduction on them
//! allocates nothing (an allocation and its free were a third of an empty one-thread reduction).

use crate::error::{Error, ErrorKind, Result};
use std::marker::PhantomData;
use std::mem::MaybeUninit;

// Two lines per value: neighbouring-line prefetch makes one line of padding not enough.
const STRIDE_ALIGN: usize = 128;

/// Words of stack room: four 128-byte values.
const INLINE_WORDS: usize = 4 * STRIDE_ALIGN / 8;

/// Stack room for the values of a small reduction, aligned like the values' stride.
#[repr(C, align(128))]
pub(crate) struct InlineRoom([MaybeUninit<u64>; INLINE_WORDS]);

impl InlineRoom {
    pub(crate) fn new() -> InlineRoom {
        InlineRoom([MaybeUninit::uninit(); INLINE_WORDS])
    }
}

pub(crate) struct Partials<'a> {
    /// The first value: in the caller's `InlineRoom` or in `heap`.
    base: *mut u64,
    /// Owns the values when they do not fit the room; moving the Vec does not move them.
    _heap: Option<Vec<u64>>,
    stride_words: usize,
    value_size: usize,
    _room: PhantomData<&'a mut InlineRoom>,
}

impl<'a> Partials<'a> {
    /// `count` zeroed values of `value_size` bytes, in `room` when they fit.
    pub(crate) fn new(
        count: usize,
        value_size: usize,
        room: &'a mut InlineRoom,
    ) -> Result<Partials<'a>> {
        let stride = value_size.div_ceil(STRIDE_ALIGN).max(1) * STRIDE_ALIGN;
        let words = count
            .checked_mul(stride / 8)
            .ok_or_else(|| Error::invalid_argument("reduction value too large"))?;
        let (base, heap) = if words <= INLINE_WORDS {
            for w in &mut room.0[..words] {
                w.write(0);
            }
            (room.0.as_mut_ptr().cast::<u64>(), None)
        } else {
            let mut bytes = Vec::new();
            bytes.try_reserve_exact(words).map_err(|_| {
                Error::new(
                    ErrorKind::OutOfMemory,
                    format!("could not allocate {count} reduction values of {value_size} bytes"),
                )
            })?;
            bytes.resize(words, 0);
            (bytes.as_mut_ptr(), Some(bytes))
        };
        Ok(Partials {
            base,
            _heap: heap,
            stride_words: stride / 8,
            value_size,
            _room: PhantomData,
        })
    }

    /// Value `i`. Callers give each block its own index, so the mutable slices they take do not
    /// overlap.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slot(&self, i: usize) -> &mut [u8] {
        // SAFETY: `new` initialized `count` strides from `base`; callers pass `i < count`.
        let p = self.base.add(i * self.stride_words) as *mut u8;
        std::slice::from_raw_parts_mut(p, self.value_size)
    }
}

// SAFETY: threads access disjoint values between the dispatch's start and end (see `slot`).
unsafe impl Sync for Partials<'_> {}
