//! Array layouts (004, "Optionally specifying a particular array layout") and the stride formulas
//! of the two standard ones, including the padding of the stride-one dimension.
//!
//! LayoutRight makes the right-most index stride-one (C order): for extents `e` and rank `r`,
//! `stride[r-1] = 1`, `stride[r-2] = p(e[r-1])`, `stride[k] = stride[k+1] * e[k+1]` below. LayoutLeft
//! mirrors it (Fortran order): `stride[0] = 1`, `stride[1] = p(e[0])`, `stride[k] = stride[k-1] *
//! e[k-1]` above. `p` is the identity unless padding is asked for; then it rounds the stride-one
//! extent up to whole cache lines, "analogous to the LDA matrix parameter in the BLAS" (004), so
//! every row (column) starts on a cache line.

use std::fmt;

/// Cache-line size the padding aligns rows to, in bytes (Kokkos' MEMORY_ALIGNMENT).
pub const PAD_ALIGNMENT_BYTES: usize = 64;

/// Rows shorter than this many cache lines are not padded: the waste would outweigh the gain
/// (Kokkos' MEMORY_ALIGNMENT_THRESHOLD).
const PAD_THRESHOLD_LINES: usize = 4;

/// How a multi-index maps to an element offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Right-most index stride-one (C, row-major).
    Right,
    /// Left-most index stride-one (Fortran, column-major).
    Left,
    /// Explicit strides, one per dimension.
    Stride,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::Right => "LayoutRight",
            Layout::Left => "LayoutLeft",
            Layout::Stride => "LayoutStride",
        })
    }
}

/// The stride-one extent `extent` after padding for `element_size`-byte elements: rounded up to
/// a multiple of a cache line's worth of elements when elements tile a cache line and the row is
/// longer than `PAD_THRESHOLD_LINES` lines. `None` if the rounding overflows.
pub(crate) fn padded_extent(extent: usize, element_size: usize) -> Option<usize> {
    if element_size == 0 || PAD_ALIGNMENT_BYTES % element_size != 0 {
        return Some(extent);
    }
    let per_line = PAD_ALIGNMENT_BYTES / element_size;
    if extent <= PAD_THRESHOLD_LINES * per_line || extent % per_line == 0 {
        return Some(extent);
    }
    extent.checked_add(per_line - extent % per_line)
}

/// Whether `strides` are the strides of `layout` (Right or Left) for `extents` with some
/// padding of the stride-one dimension, as an allocation or a subview of one produces them.
pub(crate) fn strides_fit(layout: Layout, extents: &[usize], strides: &[usize]) -> bool {
    let rank = extents.len();
    // Indices from the stride-one dimension outwards.
    let order: Vec<usize> = match layout {
        Layout::Right => (0..rank).rev().collect(),
        Layout::Left => (0..rank).collect(),
        Layout::Stride => return false,
    };
    order.iter().enumerate().all(|(n, &d)| match n {
        0 => strides[d] == 1,
        1 => strides[d] >= extents[order[0]],
        _ => Some(strides[d]) == strides[order[n - 1]].checked_mul(extents[order[n - 1]]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_rounds_long_rows_to_whole_cache_lines_only() {
        // 8-byte elements: 8 per line, rows above 32 elements are padded.
        assert_eq!(padded_extent(32, 8), Some(32));
        assert_eq!(padded_extent(33, 8), Some(40));
        assert_eq!(padded_extent(40, 8), Some(40));
        assert_eq!(padded_extent(1000, 4), Some(1008));
        // Elements that do not tile a cache line are never padded.
        assert_eq!(padded_extent(1001, 12), Some(1001));
        assert_eq!(padded_extent(usize::MAX, 8), None);
    }

    #[test]
    fn strides_fit_accepts_padded_strides_and_rejects_permuted_ones() {
        assert!(strides_fit(Layout::Right, &[3, 4, 5], &[20, 5, 1]));
        assert!(strides_fit(Layout::Right, &[3, 4, 5], &[32, 8, 1]));
        assert!(!strides_fit(Layout::Right, &[3, 4, 5], &[1, 3, 12]));
        assert!(strides_fit(Layout::Left, &[3, 4, 5], &[1, 3, 12]));
        assert!(strides_fit(Layout::Left, &[3, 4, 5], &[1, 8, 32]));
        assert!(!strides_fit(Layout::Left, &[3, 4, 5], &[1, 8, 33]));
        assert!(!strides_fit(Layout::Stride, &[3], &[1]));
        assert!(strides_fit(Layout::Right, &[], &[]));
    }
}
