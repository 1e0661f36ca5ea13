//! `View`: a labelled, reference-counted reference to a multidimensional array (004, "Views to
//! Arrays"). Cloning a view is a shallow copy; the memory goes with the last view of it.

use super::allocation::{self, AllocationRecord};
use super::element::ElementType;
use super::errors;
use super::layout::Layout;
use super::mapping::Mapping;
use super::spec::ViewSpec;
use crate::error::Result;
use crate::memory_space::MemorySpace;
use std::ffi::CStr;
use std::ptr::NonNull;
use std::sync::Arc;

/// A view of an array: where its first element is, how indices map to elements, and a shared
/// reference to the allocation that holds them.
///
/// Ownership: clones share the allocation (004: "Assign ... a shallow copy"; "Last view ...
/// deallocates array data"); subviews share it too and keep it alive.
///
/// Thread safety: a view may be cloned, sent and queried from any thread. Its elements are
/// shared memory, as in Kokkos: the operations that read or write them are `unsafe` and require
/// that no other thread writes elements they touch (or reads elements they write) meanwhile.
#[derive(Debug, Clone)]
pub struct View {
    record: Arc<AllocationRecord>,
    /// Element (0, ..., 0); inside the record's memory, at the subview's offset.
    data: NonNull<u8>,
    element: ElementType,
    mapping: Mapping,
    /// Created with padding; mirrors and resized copies are padded likewise.
    padded: bool,
}

// SAFETY: `data` points into memory the shared record owns (or, unmanaged, that the caller keeps
// valid for the view's lifetime, see `wrap`). Safe methods never dereference it; the unsafe ones
// make their callers rule out data races.
unsafe impl Send for View {}
// SAFETY: as above.
unsafe impl Sync for View {}

impl View {
    /// Allocates the array `spec` describes, zero-filled unless `spec.initialize` is off.
    ///
    /// Errors: `InvalidArgument` for a bad shape (message names the label and the dimension) or
    /// a label with a NUL byte; `Unavailable` for the CUDA spaces without a usable GPU (the
    /// message says why); `OutOfMemory` when the allocator refuses.
    pub fn allocate(spec: &ViewSpec) -> Result<View> {
        let label = allocation::c_label(&spec.label)?;
        let mapping = spec.mapping()?;
        let bytes = mapping.span() * spec.element.size();
        let record = AllocationRecord::allocate(label, spec.space, bytes, spec.initialize)?;
        Ok(View::over(Arc::new(record), spec, mapping))
    }

    /// An unmanaged view of the caller's memory at `data` with the shape `spec` describes (004,
    /// "Wrapping your memory in a View"). taskdag never frees it; `spec.initialize` is ignored.
    ///
    /// Errors: as `allocate`, except `OutOfMemory`.
    ///
    /// # Safety
    /// `data` must be valid for reads and writes of `span * element size` bytes (see `span`;
    /// query it with `spec.mapping()`) in `spec.space` for as long as this view, or any view
    /// made from it, lives.
    pub unsafe fn wrap(spec: &ViewSpec, data: NonNull<u8>) -> Result<View> {
        let label = allocation::c_label(&spec.label)?;
        let mapping = spec.mapping()?;
        let record = AllocationRecord::unmanaged(label, spec.space, data)?;
        Ok(View::over(Arc::new(record), spec, mapping))
    }

    fn over(record: Arc<AllocationRecord>, spec: &ViewSpec, mapping: Mapping) -> View {
        View {
            data: record.base(),
            record,
            element: spec.element,
            mapping,
            padded: spec.pad,
        }
    }

    /// A view of the same allocation at `offset` elements from this one's first element, with
    /// `mapping` (subview.rs).
    pub(crate) fn derived(&self, offset: usize, mapping: Mapping) -> View {
        // SAFETY: the caller computed `offset` from in-range indices, so it lies in the span.
        let data =
            unsafe { NonNull::new_unchecked(self.data.as_ptr().add(offset * self.element.size())) };
        View {
            record: Arc::clone(&self.record),
            data,
            element: self.element,
            mapping,
            padded: self.padded,
        }
    }

    /// The user's label (004: used in error messages; need not be unique). Subviews and
    /// retained copies share the label of their allocation.
    pub fn label(&self) -> &str {
        self.record.label()
    }

    /// The label as a C string, valid as long as the view (or any view of its allocation) lives.
    pub fn c_label(&self) -> &CStr {
        self.record.c_label()
    }

    pub fn element(&self) -> ElementType {
        self.element
    }

    pub fn mapping(&self) -> &Mapping {
        &self.mapping
    }

    pub fn layout(&self) -> Layout {
        self.mapping.layout()
    }

    pub fn rank(&self) -> usize {
        self.mapping.rank()
    }

    pub fn extents(&self) -> &[usize] {
        self.mapping.extents()
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[usize] {
        self.mapping.strides()
    }

    /// Elements from the first to one past the last, gaps included.
    pub fn span(&self) -> usize {
        self.mapping.span()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.mapping.size()
    }

    pub fn is_contiguous(&self) -> bool {
        self.mapping.is_contiguous()
    }

    /// Whether taskdag owns the memory (false for `wrap`ped memory and views of it).
    pub fn is_managed(&self) -> bool {
        self.record.is_managed()
    }

    /// How many views (clones, subviews, mirror views of host memory) share this view's
    /// allocation, this one included (Kokkos' `use_count`). Exact only while no other thread
    /// clones or drops views of it.
    pub fn use_count(&self) -> usize {
        Arc::strong_count(&self.record)
    }

    /// Whether the view was created with padding (`ViewSpec::padded`).
    pub fn is_padded(&self) -> bool {
        self.padded
    }

    pub fn space(&self) -> MemorySpace {
        self.record.space()
    }

    /// Address of element (0, ..., 0).
    pub fn data(&self) -> *mut u8 {
        self.data.as_ptr()
    }

    /// Address of the element at `indices`, after checking that there is one index per
    /// dimension and each is in `[0, extent)`; errors name the label and the dimension.
    pub fn element_ptr(&self, indices: &[i64]) -> Result<NonNull<u8>> {
        let offset = self.mapping.checked_offset(self.label(), indices)?;
        // SAFETY: a checked offset lies inside the span.
        Ok(unsafe { self.data.add(offset * self.element.size()) })
    }

    /// `dim` as a dimension index (0..rank) of this view; the error names the label.
    pub fn check_dimension(&self, dim: i64) -> Result<usize> {
        usize::try_from(dim)
            .ok()
            .filter(|&d| d < self.rank())
            .ok_or_else(|| errors::dimension_out_of_range(self.label(), dim, self.rank()))
    }

    /// True when both views have the same first element and mapping (one is a shallow copy of
    /// the other), which makes a deep_copy between them a no-op.
    pub fn same_elements(&self, other: &View) -> bool {
        self.data == other.data && self.mapping == other.mapping && self.element == other.element
    }

    /// The spec of a new allocation like this view with `extents` (same label, element type,
    /// layout, padding and space), for resize and realloc. Only Right and Left layouts.
    pub(crate) fn respec(&self, label: &str, extents: &[usize]) -> ViewSpec {
        let mut spec = ViewSpec::new(label, self.element, extents)
            .layout(self.layout())
            .space(self.space());
        spec.pad = self.padded;
        spec
    }
}
