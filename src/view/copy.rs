//! deep_copy between two views and fill (deep_copy of a scalar). "Kokkos NEVER has a hidden,
//! expensive deep-copy" (004): copies happen only here, when asked for.

use super::errors;
use super::layout::Layout;
use super::plan::{Plan, Source};
use super::spec::ViewSpec;
use super::view::View;
use crate::error::Result;
use crate::memory_space::MemorySpace;

/// Copies every element of `src` into the element at the same indices of `dst`. The views may
/// have any layouts and strides; their element types, ranks and extents must match. Copies
/// between two contiguous views of the same layout are one memcpy; others permute through
/// cache-sized tiles on the host threads. A view copied onto itself (the same elements, as
/// `create_mirror_view` of a host view gives) is left as it is. When either view is in device
/// memory the copy runs on the GPU (`device.rs`: one `cuMemcpy` where the layouts agree, the
/// permuting kernel otherwise, host memory always moved in one contiguous piece).
///
/// Errors (`InvalidArgument`, naming both labels and the dimension): different element types,
/// ranks or extents. For device views: `Unavailable` without a GPU or kernels (the message says
/// why), `OutOfMemory` when a staging buffer does not fit.
///
/// # Safety
/// No other thread may access `dst`'s elements, or write `src`'s, during the call.
pub unsafe fn deep_copy(dst: &View, src: &View) -> Result<()> {
    check_same_shape(dst, src)?;
    if dst.same_elements(src) {
        return Ok(());
    }
    if !host_accessible(dst) || !host_accessible(src) {
        return device_copy(dst, src);
    }
    if may_overlap(dst, src) {
        // Reading the whole source before writing keeps the result defined; distinct views of
        // one allocation whose address ranges interleave (two columns) come here too.
        let staging = View::allocate(
            &ViewSpec::new(src.label(), src.element(), src.extents()).without_initializing(),
        )?;
        copy_host(&staging, src);
        copy_host(dst, &staging);
    } else {
        copy_host(dst, src);
    }
    Ok(())
}

/// Writes `value` (the bytes of one element) to every element of `dst` (004: deep_copy of a
/// scalar).
///
/// Device views are filled on the GPU (`device.rs`).
///
/// Errors: `InvalidArgument` if `value` is not exactly one element's size; for device views
/// `Unavailable` without a GPU, `OutOfMemory` (a non-contiguous view needs a one-element
/// buffer).
///
/// # Safety
/// No other thread may access `dst`'s elements during the call.
pub unsafe fn fill(dst: &View, value: &[u8]) -> Result<()> {
    if value.len() != dst.element().size() {
        return Err(errors::fill_value_size(
            dst.label(),
            value.len(),
            dst.element(),
        ));
    }
    if !host_accessible(dst) {
        return device_fill(dst, value);
    }
    let zeros = vec![0; dst.rank()];
    let plan = Plan::new(dst.extents(), dst.strides(), &zeros, value.len());
    plan.run(dst.data(), Source::Value(value.as_ptr()));
    Ok(())
}

/// # Safety
/// As for `deep_copy`, with distinct host-accessible memory for `dst` and `src`.
unsafe fn copy_host(dst: &View, src: &View) {
    let plan = Plan::new(
        dst.extents(),
        dst.strides(),
        src.strides(),
        dst.element().size(),
    );
    plan.run(dst.data(), Source::Elements(src.data()));
}

fn check_same_shape(dst: &View, src: &View) -> Result<()> {
    if dst.element() != src.element() {
        return Err(errors::copy_element_mismatch(
            dst.label(),
            dst.element(),
            src.label(),
            src.element(),
        ));
    }
    if dst.rank() != src.rank() {
        return Err(errors::copy_rank_mismatch(
            dst.label(),
            dst.rank(),
            src.label(),
            src.rank(),
        ));
    }
    match (0..dst.rank()).find(|&d| dst.extents()[d] != src.extents()[d]) {
        Some(dim) => Err(errors::copy_extent_mismatch(
            dst.label(),
            dst.extents()[dim],
            src.label(),
            src.extents()[dim],
            dim,
        )),
        None => Ok(()),
    }
}

/// Whether the byte ranges the two views span intersect.
pub(crate) fn may_overlap(a: &View, b: &View) -> bool {
    let range = |v: &View| {
        let start = v.data() as usize;
        start..start + v.span() * v.element().size()
    };
    let (a, b) = (range(a), range(b));
    a.start < b.end && b.start < a.end
}

/// Host code can touch host and pinned memory; device memory goes through the CUDA back-end.
pub(crate) fn host_accessible(view: &View) -> bool {
    matches!(
        view.space(),
        MemorySpace::Host | MemorySpace::CudaHostPinned
    )
}

#[cfg(feature = "cuda")]
unsafe fn device_copy(dst: &View, src: &View) -> Result<()> {
    super::device::deep_copy(dst, src)
}

#[cfg(feature = "cuda")]
unsafe fn device_fill(dst: &View, value: &[u8]) -> Result<()> {
    super::device::fill(dst, value)
}

/// Without the `cuda` feature no device view can exist (allocate and wrap refuse them).
#[cfg(not(feature = "cuda"))]
unsafe fn device_copy(dst: &View, _src: &View) -> Result<()> {
    Err(super::errors::space_unavailable(dst.label(), dst.space()))
}

#[cfg(not(feature = "cuda"))]
unsafe fn device_fill(dst: &View, _value: &[u8]) -> Result<()> {
    Err(super::errors::space_unavailable(dst.label(), dst.space()))
}

/// Mirrors (004, "Deep copy ... Mirror the layout in the Host memory space").
impl View {
    /// A new host view with this view's label plus "_mirror", element type, extents and layout
    /// (padded if this one is), zero-filled; the elements are not copied. A LayoutStride view
    /// gets compact strides in the same dimension order, so a deep_copy between the two streams.
    ///
    /// Errors: `OutOfMemory`.
    pub fn create_mirror(&self) -> Result<View> {
        let mut spec = ViewSpec::new(
            &format!("{}_mirror", self.label()),
            self.element(),
            self.extents(),
        )
        .layout(self.layout());
        spec.pad = self.is_padded();
        if self.layout() == Layout::Stride {
            spec.strides = compact_strides_in_order(self.extents(), self.strides());
        }
        View::allocate(&spec)
    }

    /// This view itself (a shallow copy) when its memory is host-accessible, which makes
    /// deep_copy between the two a no-op; otherwise `create_mirror` (004).
    ///
    /// Errors: as `create_mirror` when a mirror is allocated.
    pub fn create_mirror_view(&self) -> Result<View> {
        match self.space() {
            MemorySpace::Host | MemorySpace::CudaHostPinned => Ok(self.clone()),
            MemorySpace::Cuda => self.create_mirror(),
        }
    }
}

/// Strides without gaps that order the dimensions as `strides` do.
pub(crate) fn compact_strides_in_order(extents: &[usize], strides: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..extents.len()).collect();
    order.sort_by_key(|&d| (strides[d], d));
    let mut compact = vec![0; extents.len()];
    let mut next = 1;
    for d in order {
        compact[d] = next;
        next *= extents[d];
    }
    compact
}
