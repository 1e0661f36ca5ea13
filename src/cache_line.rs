//! Placement of shared atomics on cache lines, so that state written by different threads does
//! not share a line (false sharing turns independent writes into coherence traffic).

use std::collections::TryReserveError;
use std::ops::Deref;
use std::ptr::NonNull;

/// Bytes in a cache line on the machines we target (x86-64 and the CUDA L1 line).
pub const CACHE_LINE_BYTES: usize = 64;

/// A value alone on an aligned pair of cache lines: Intel's spatial prefetcher fetches lines in
/// such pairs, so threads writing neighbouring lines still contend (measured: 16 threads lost
/// 10% of their allocation rate with 64-byte padding of the usage counters).
#[derive(Debug, Default)]
#[repr(C, align(128))]
pub(crate) struct CachePadded<T>(pub T);

impl<T> Deref for CachePadded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// A slice of atomics whose first element starts a cache line, so that a layout which pads groups
/// of elements to whole lines keeps those groups on separate lines.
pub(crate) struct LineAligned<T> {
    /// All the elements, from `Box::into_raw`; freed in `drop`. A raw pointer rather than a box,
    /// so that moving this value does not invalidate `aligned`, which points into it.
    storage: NonNull<[T]>,
    aligned: NonNull<T>,
    len: usize,
}

// SAFETY: `LineAligned` owns its elements and only hands out shared references to them, like
// `Box<[T]>`.
unsafe impl<T: Sync> Sync for LineAligned<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for LineAligned<T> {}

impl<T> LineAligned<T> {
    /// `len` elements made by `init`; fails instead of aborting when memory is short.
    pub(crate) fn new(len: usize, init: impl Fn() -> T) -> Result<Self, TryReserveError> {
        // A line holds this many elements, so one of the first `slack` elements starts a line.
        let slack = (CACHE_LINE_BYTES / size_of::<T>().max(1)).max(1);
        let mut storage = Vec::new();
        storage.try_reserve_exact(len + slack)?;
        storage.extend((0..len + slack).map(|_| init()));
        // Under loom the element size does not divide a line and no element is aligned; the
        // alignment only matters for speed, so start at 0 then.
        let start = storage
            .iter()
            .take(slack)
            .position(|e| (e as *const T as usize) % CACHE_LINE_BYTES == 0)
            .unwrap_or(0);
        let storage = NonNull::from(Box::leak(storage.into_boxed_slice()));
        // SAFETY: `start < slack <= storage.len()`, so the pointer stays inside the allocation.
        let aligned = unsafe { storage.cast::<T>().add(start) };
        Ok(LineAligned {
            storage,
            aligned,
            len,
        })
    }
}

impl<T> Drop for LineAligned<T> {
    fn drop(&mut self) {
        // SAFETY: `storage` came from `Box::leak` in `new` and is released only here.
        drop(unsafe { Box::from_raw(self.storage.as_ptr()) });
    }
}

impl<T> Deref for LineAligned<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `aligned` points at element `start` of the storage this value owns, with
        // `start + len <= storage.len()`; the elements live as long as `self` and are only
        // shared.
        unsafe { std::slice::from_raw_parts(self.aligned.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, AtomicU64};

    #[test]
    fn line_aligned_atomics_start_a_cache_line() {
        for len in [1, 7, 8, 9, 1000] {
            let words = LineAligned::new(len, || AtomicU64::new(0)).unwrap();
            assert_eq!(words.len(), len);
            assert_eq!(words.as_ptr() as usize % CACHE_LINE_BYTES, 0);
            let hints = LineAligned::new(len, || AtomicU32::new(7)).unwrap();
            assert_eq!(hints.as_ptr() as usize % CACHE_LINE_BYTES, 0);
            assert!(hints
                .iter()
                .all(|h| h.load(std::sync::atomic::Ordering::Relaxed) == 7));
        }
    }

    #[test]
    fn padded_values_fill_a_pair_of_lines() {
        assert_eq!(size_of::<CachePadded<AtomicU64>>(), 2 * CACHE_LINE_BYTES);
        assert_eq!(align_of::<CachePadded<AtomicU64>>(), 2 * CACHE_LINE_BYTES);
    }
}
