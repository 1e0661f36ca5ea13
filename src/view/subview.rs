//! Subviews: a view of part of another view's elements, sharing (and keeping alive) its memory.
//! Each dimension is fixed at an index (the dimension disappears), cut to a range, or kept whole.

use super::errors;
use super::mapping::{Mapping, MAX_RANK};
use super::view::View;
use crate::error::Result;

/// What a subview keeps of one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// One index; the dimension is dropped from the subview (rank goes down by one).
    Index(i64),
    /// The half-open range `[begin, end)`, non-empty; the subview's indices start at 0.
    Range(i64, i64),
    /// The whole dimension.
    All,
}

impl View {
    /// The subview selecting `slices`, one per dimension. It shares this view's memory and
    /// keeps it alive; its layout stays this view's when the strides allow, else LayoutStride.
    ///
    /// Errors (`InvalidArgument`, naming the label and the dimension): a slice count other than
    /// the rank, an index outside `[0, extent)`, a range that is empty or leaves `[0, extent]`.
    pub fn subview(&self, slices: &[Slice]) -> Result<View> {
        if slices.len() != self.rank() {
            return Err(errors::slice_count(self.label(), slices.len(), self.rank()));
        }
        let mut first = [0usize; MAX_RANK];
        let mut extents = Vec::with_capacity(MAX_RANK);
        let mut strides = Vec::with_capacity(MAX_RANK);
        for (dim, slice) in slices.iter().enumerate() {
            let (extent, stride) = (self.extents()[dim], self.strides()[dim]);
            let in_range = |i: i64, limit: usize| usize::try_from(i).ok().filter(|&i| i <= limit);
            match *slice {
                Slice::Index(i) => match in_range(i, extent - 1) {
                    Some(i) => first[dim] = i,
                    None => return Err(errors::index_out_of_range(self.label(), dim, i, extent)),
                },
                Slice::Range(begin, end) => {
                    match (in_range(begin, extent), in_range(end, extent)) {
                        (Some(b), Some(e)) if b < e => {
                            first[dim] = b;
                            extents.push(e - b);
                            strides.push(stride);
                        }
                        _ => {
                            return Err(errors::range_out_of_range(
                                self.label(),
                                dim,
                                begin,
                                end,
                                extent,
                            ))
                        }
                    }
                }
                Slice::All => {
                    extents.push(extent);
                    strides.push(stride);
                }
            }
        }
        let offset = self.mapping().offset(&first[..self.rank()]);
        let mapping = Mapping::from_parent(self.layout(), &extents, &strides);
        Ok(self.derived(offset, mapping))
    }
}
