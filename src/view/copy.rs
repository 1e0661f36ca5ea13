//! deep_copy between two views and fill (deep_copy of a scalar). "Kokkos NEVER has a hidden,
//! expensive deep-copy" (004): copies happen only here, when asked for.

use super::errors;
use super::layout::Layout;
use super::plan::{Plan, Source};
use super::spec::ViewSpec;
use super::view::View;
use crate::error::{Error, ErrorKind, Result};
use crate::memory_space::MemorySpace;

/// Copies every element of `src` into the element at the same indices of `dst`. The views may
/// have any layouts and strides; their element types, ranks and extents must match. Copies
/// between two contiguous views of the same layout are one memcpy; others permute through
/// cache-sized tiles on the host threads. A view copied onto itself (the same elements, as
/// `create_mirror_view` of a host view gives) is left as it is.
///
/// Errors (`InvalidArgument`, naming both labels and the dimension): different element types,
/// ranks or extents. `Unavailable` when a view is not in host-accessible memory (until the CUDA
/// back-end).
///
/// # Safety
/// No other thread may access `dst`'s elements, or write `src`'s, during the call.
pub unsafe fn deep_copy(dst: &View, src: &View) -> Result<()> {
    check_same_shape(dst, src)?;
    require_host_access(dst, "deep_copy")?;
    require_host_access(src, "deep_copy")?;
    if dst.same_elements(src) {
        return Ok(());
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
/// Errors: `InvalidArgument` if `value` is not exactly one element's size; `Unavailable` for
/// memory that is not host-accessible (until the CUDA back-end).
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
    require_host_access(dst, "fill")?;
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
fn may_overlap(a: &View, b: &View) -> bool {
    let range = |v: &View| {
        let start = v.data() as usize;
        start..start + v.span() * v.element().size()
    };
    let (a, b) = (range(a), range(b));
    a.start < b.end && b.start < a.end
}

/// Host code can only touch host-accessible memory; the CUDA back-end routes device copies.
fn require_host_access(view: &View, operation: &str) -> Result<()> {
    match view.space() {
        MemorySpace::Host | MemorySpace::CudaHostPinned => Ok(()),
        MemorySpace::Cuda => Err(Error::new(
            ErrorKind::Unavailable,
            format!(
                "{operation}: view \"{}\" is in {} memory, which needs the CUDA back-end",
                view.label(),
                view.space()
            ),
        )),
    }
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
fn compact_strides_in_order(extents: &[usize], strides: &[usize]) -> Vec<usize> {
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
