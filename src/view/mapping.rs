//! The map from a multi-index to an element offset: extents, strides (in elements) and span,
//! validated once when a view is made so that every later offset is in bounds of its memory.
//!
//! `offset(i) = sum_k i[k] * stride[k]`, and `span = 1 + sum_k (extent[k] - 1) * stride[k]`
//! elements: the distance from the first element to one past the last. A mapping is contiguous
//! when its span equals its element count (no gaps).

use super::element::ElementType;
use super::errors;
use super::layout::{padded_extent, strides_fit, Layout};
use crate::error::Result;

/// The largest rank a view may have (004: "up to 8 ... dimensions (maximum rank)").
pub const MAX_RANK: usize = 8;

/// Extents, strides and span of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    layout: Layout,
    rank: usize,
    extents: [usize; MAX_RANK],
    strides: [usize; MAX_RANK],
    span: usize,
}

impl Mapping {
    /// The mapping of a new array of `layout`. Right and Left compute their strides (padding the
    /// stride-one extent when `pad`); Stride takes `strides`, which must not alias.
    ///
    /// Errors (`InvalidArgument`, naming `label` and the dimension): rank above 8, a zero extent,
    /// a size above `isize::MAX` bytes, a wrong number of strides, aliasing strides.
    pub(crate) fn new(
        label: &str,
        element: ElementType,
        layout: Layout,
        extents: &[usize],
        strides: &[usize],
        pad: bool,
    ) -> Result<Mapping> {
        let rank = extents.len();
        Mapping::check_rank(label, rank)?;
        if let Some(dim) = extents.iter().position(|&e| e == 0) {
            return Err(errors::zero_extent(label, dim));
        }
        let mut mapping = Mapping {
            layout,
            rank,
            extents: [0; MAX_RANK],
            strides: [0; MAX_RANK],
            span: 1,
        };
        mapping.extents[..rank].copy_from_slice(extents);
        match layout {
            Layout::Right | Layout::Left => mapping.set_compact_strides(label, element, pad)?,
            Layout::Stride => {
                if strides.len() != rank {
                    return Err(errors::stride_count(label, strides.len(), rank));
                }
                mapping.strides[..rank].copy_from_slice(strides);
                mapping.check_unique(label)?;
            }
        }
        mapping.span = mapping.checked_span(label, element)?;
        Ok(mapping)
    }

    /// Checks that `rank` is at most `MAX_RANK`; the error names `label`.
    pub fn check_rank(label: &str, rank: usize) -> Result<()> {
        if rank > MAX_RANK {
            return Err(errors::rank_too_large(label, rank, MAX_RANK));
        }
        Ok(())
    }

    /// Strides of LayoutRight or LayoutLeft (layout.rs), built outwards from the stride-one
    /// dimension with overflow checks.
    fn set_compact_strides(&mut self, label: &str, element: ElementType, pad: bool) -> Result<()> {
        let rank = self.rank;
        let order: Vec<usize> = match self.layout {
            Layout::Right => (0..rank).rev().collect(),
            _ => (0..rank).collect(),
        };
        let mut stride = 1usize;
        for (n, &dim) in order.iter().enumerate() {
            self.strides[dim] = stride;
            let extent = self.extents[dim];
            // Only the stride-one extent is padded, and only when another dimension follows.
            let step = if n == 0 && pad && rank > 1 {
                padded_extent(extent, element.size())
            } else {
                Some(extent)
            };
            stride = match step.and_then(|s| stride.checked_mul(s)) {
                Some(s) => s,
                None => return Err(errors::too_large(label, dim, extent, element)),
            };
        }
        Ok(())
    }

    /// `1 + sum (extent - 1) * stride`, and a check that the span in bytes fits an allocation;
    /// the error names the first dimension that pushes it past the limit.
    fn checked_span(&self, label: &str, element: ElementType) -> Result<usize> {
        let limit = isize::MAX as usize / element.size();
        let mut span = 1usize;
        for dim in self.dims_by_stride() {
            let extent = self.extents[dim];
            span = (extent - 1)
                .checked_mul(self.strides[dim])
                .and_then(|reach| span.checked_add(reach))
                .filter(|&s| s <= limit)
                .ok_or_else(|| errors::too_large(label, dim, extent, element))?;
        }
        Ok(span)
    }

    /// Rejects strides under which two indices reach the same element. The test is the nesting
    /// rule: ordered by stride, each dimension of extent > 1 must step past everything the
    /// dimensions before it reach. It is sufficient for uniqueness and holds for every layout
    /// Right, Left or a subview produces; unique layouts that interleave dimensions are
    /// rejected too.
    fn check_unique(&self, label: &str) -> Result<()> {
        let mut reach = 0usize; // largest offset the dimensions visited so far reach
        let mut previous = None;
        for dim in self.dims_by_stride() {
            let (extent, stride) = (self.extents[dim], self.strides[dim]);
            if extent == 1 {
                continue;
            }
            if stride == 0 {
                return Err(errors::zero_stride(label, dim, extent));
            }
            if let Some(inner) = previous {
                if stride <= reach {
                    return Err(errors::strides_alias(label, dim, stride, inner));
                }
            }
            // Overflow here means the span is too large; checked_span reports it by dimension.
            reach = reach.saturating_add((extent - 1).saturating_mul(stride));
            previous = Some(dim);
        }
        Ok(())
    }

    /// Dimension indices in increasing stride order (ties by index).
    fn dims_by_stride(&self) -> Vec<usize> {
        let mut dims: Vec<usize> = (0..self.rank).collect();
        dims.sort_by_key(|&d| (self.strides[d], d));
        dims
    }

    /// The mapping of a subview: extents and strides taken from a valid parent, so no checks are
    /// needed. It keeps the parent's layout when its strides still have that layout's form, and
    /// becomes LayoutStride otherwise.
    pub(crate) fn from_parent(parent: Layout, extents: &[usize], strides: &[usize]) -> Mapping {
        let rank = extents.len();
        let layout = match parent {
            Layout::Right | Layout::Left if strides_fit(parent, extents, strides) => parent,
            _ => Layout::Stride,
        };
        let mut mapping = Mapping {
            layout,
            rank,
            extents: [0; MAX_RANK],
            strides: [0; MAX_RANK],
            span: 1,
        };
        mapping.extents[..rank].copy_from_slice(extents);
        mapping.strides[..rank].copy_from_slice(strides);
        mapping.span = 1
            + (0..rank)
                .map(|d| (extents[d] - 1) * strides[d])
                .sum::<usize>();
        mapping
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn extents(&self) -> &[usize] {
        &self.extents[..self.rank]
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[usize] {
        &self.strides[..self.rank]
    }

    /// Elements from the first element to one past the last, gaps included.
    pub fn span(&self) -> usize {
        self.span
    }

    /// Number of elements (the product of the extents; 1 for rank 0).
    pub fn size(&self) -> usize {
        self.extents().iter().product()
    }

    /// True when the elements fill their span without gaps.
    pub fn is_contiguous(&self) -> bool {
        self.span == self.size()
    }

    /// Offset in elements of `indices`, which the caller has checked against the extents.
    #[inline]
    pub fn offset(&self, indices: &[usize]) -> usize {
        debug_assert_eq!(indices.len(), self.rank);
        indices
            .iter()
            .zip(self.strides())
            .map(|(&i, &s)| i * s)
            .sum()
    }

    /// Offset in elements of `indices`, checked: one index per dimension, each in
    /// `[0, extent)`. Errors name `label` and the dimension.
    pub fn checked_offset(&self, label: &str, indices: &[i64]) -> Result<usize> {
        if indices.len() != self.rank {
            return Err(errors::index_count(label, indices.len(), self.rank));
        }
        let mut offset = 0;
        for (dim, &index) in indices.iter().enumerate() {
            let extent = self.extents[dim];
            match usize::try_from(index) {
                Ok(i) if i < extent => offset += i * self.strides[dim],
                _ => return Err(errors::index_out_of_range(label, dim, index, extent)),
            }
        }
        Ok(offset)
    }
}
