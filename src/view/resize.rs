//! resize and realloc (004, "Resizing and reallocation"): the view is reassigned to a new
//! allocation; other views of the old one are unchanged.

use super::copy::deep_copy;
use super::errors;
use super::layout::Layout;
use super::subview::Slice;
use super::view::View;
use crate::error::Result;

impl View {
    /// Reassigns this view to a new zero-filled allocation with `extents` (same label, element
    /// type, layout, padding and space), holding the old elements in the index range both
    /// shapes share. Other views of the old allocation keep it.
    ///
    /// Errors (the view is then unchanged): `InvalidArgument` for an unmanaged or LayoutStride
    /// view, a number of extents other than the rank, or a bad extent (naming the dimension);
    /// `OutOfMemory`.
    ///
    /// # Safety
    /// No other thread may write this view's elements during the call.
    pub unsafe fn resize(&mut self, extents: &[usize]) -> Result<()> {
        self.check_reallocatable("resize", extents)?;
        let resized = View::allocate(&self.respec(self.label(), extents))?;
        let overlap: Vec<Slice> = (0..self.rank())
            .map(|d| Slice::Range(0, self.extents()[d].min(extents[d]) as i64))
            .collect();
        deep_copy(&resized.subview(&overlap)?, &self.subview(&overlap)?)?;
        *self = resized;
        Ok(())
    }

    /// Drops this view and allocates a new zero-filled one like it with `extents`, keeping no
    /// elements. When this was the last view of its allocation, the old memory is freed before
    /// the new is allocated, which avoids the "spike" of holding both (004).
    ///
    /// Errors: those of `check_realloc`, and `OutOfMemory`. The view is consumed either way;
    /// call `check_realloc` first to keep it when the extents may be bad.
    pub fn realloc(self, extents: &[usize]) -> Result<View> {
        self.check_realloc(extents)?;
        let spec = self.respec(self.label(), extents);
        drop(self);
        View::allocate(&spec)
    }

    /// Checks what `realloc` checks before freeing anything: `InvalidArgument` for an unmanaged
    /// or LayoutStride view, a number of extents other than the rank, or a bad extent (naming
    /// the dimension).
    pub fn check_realloc(&self, extents: &[usize]) -> Result<()> {
        self.check_reallocatable("realloc", extents)?;
        self.respec(self.label(), extents).mapping().map(|_| ())
    }

    fn check_reallocatable(&self, operation: &str, extents: &[usize]) -> Result<()> {
        if !self.is_managed() {
            return Err(errors::resize_unmanaged(self.label(), operation));
        }
        if self.layout() == Layout::Stride {
            return Err(errors::resize_strided(self.label(), operation));
        }
        if extents.len() != self.rank() {
            return Err(errors::resize_rank(
                self.label(),
                operation,
                extents.len(),
                self.rank(),
            ));
        }
        Ok(())
    }
}
