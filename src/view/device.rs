//! deep_copy and fill when a view is in device memory (TD_SPACE_CUDA): the copies run on the GPU.
//!
//! - device <-> device: one `cuMemcpy` when both views are contiguous in the same layout, else
//!   the permuting kernel (`cuda::copy_strided_raw`: a tiled transpose when the two fastest
//!   dimensions swap, the general strided kernel otherwise). Views of one allocation whose
//!   bytes overlap go through a device staging copy, so the source is read before it is
//!   written.
//! - host <-> device with different layouts: the host side always moves in one contiguous
//!   `cuMemcpy` at full link speed, and the permutation runs on the device through a staging
//!   buffer. The link is ~50x slower than device memory, so the extra pass on the device costs
//!   a few percent, whereas a kernel reading or writing host memory element by element over the
//!   link would be far slower. A host view with gaps (a subview) is first compacted on the host
//!   (or, going to the host, written from a compact host copy), so no gap byte is ever written.
//!   The staging buffer is kept between copies (`cuda::with_staging`).
//!
//! Host and pinned views are host-accessible and never come here on their own (copy.rs).

use super::copy::may_overlap;
use super::copy::{compact_strides_in_order, deep_copy as any_deep_copy, host_accessible};
use super::errors;
use super::spec::ViewSpec;
use super::view::View;
use crate::cuda::MAX_FILL_ELEMENT;
use crate::cuda::{
    copy_bytes, copy_strided_raw, fill_raw, with_staging, DeviceBuffer, Gpu, StridedCopy,
};
use crate::error::Result;
use crate::memory_space::MemorySpace;

/// deep_copy with at least one device view; shapes were checked by the caller.
///
/// # Safety
/// As `view::deep_copy`.
pub(crate) unsafe fn deep_copy(dst: &View, src: &View) -> Result<()> {
    let device = if host_accessible(dst) { src } else { dst };
    let gpu = Gpu::get().map_err(|e| errors::in_view(device.label(), e))?;
    let done = match (host_accessible(dst), host_accessible(src)) {
        (false, false) => device_to_device(&gpu, dst, src),
        (false, true) => host_to_device(&gpu, dst, src),
        _ => device_to_host(&gpu, dst, src),
    };
    done.map_err(|e| errors::in_view(device.label(), e))
}

/// Writes `value` to every element of the device view `dst`: the driver's memset or the fill
/// kernel for contiguous views; for others the value is put in a one-element device buffer and
/// copied everywhere by the strided kernel with source strides 0.
///
/// # Safety
/// As `view::fill`.
pub(crate) unsafe fn fill(dst: &View, value: &[u8]) -> Result<()> {
    let gpu = Gpu::get().map_err(|e| errors::in_view(dst.label(), e))?;
    let done = if dst.is_contiguous() && value.len() <= MAX_FILL_ELEMENT {
        fill_raw(&gpu, address(dst), dst.size(), value)
    } else {
        let mut one = DeviceBuffer::new(value.len())?;
        one.copy_from_host(0, value).and_then(|()| {
            let shape = shape(dst, dst.strides(), &vec![0; dst.rank()]);
            copy_strided_raw(&gpu, address(dst), one.address(), &shape)
        })
    };
    done.map_err(|e| errors::in_view(dst.label(), e))
}

fn address(view: &View) -> u64 {
    view.data() as u64
}

/// The copy of `view`'s shape from `src_strides` to `dst_strides` (elements).
fn shape(view: &View, dst_strides: &[usize], src_strides: &[usize]) -> StridedCopy {
    let signed = |s: &[usize]| s.iter().map(|&s| s as isize).collect();
    StridedCopy {
        elem_bytes: view.element().size(),
        extents: view.extents().to_vec(),
        src_strides: signed(src_strides),
        dst_strides: signed(dst_strides),
    }
}

/// Bytes of `view`'s elements without gaps.
fn compact_bytes(view: &View) -> usize {
    view.size() * view.element().size()
}

unsafe fn device_to_device(gpu: &Gpu, dst: &View, src: &View) -> Result<()> {
    if may_overlap(dst, src) {
        // Two views of one allocation: read all of `src` before writing `dst`.
        let order = compact_strides_in_order(src.extents(), src.strides());
        let staging = DeviceBuffer::new(compact_bytes(src))?;
        copy_strided_raw(
            gpu,
            staging.address(),
            address(src),
            &shape(src, &order, src.strides()),
        )?;
        return copy_strided_raw(
            gpu,
            address(dst),
            staging.address(),
            &shape(dst, dst.strides(), &order),
        );
    }
    copy_strided_raw(
        gpu,
        address(dst),
        address(src),
        &shape(dst, dst.strides(), src.strides()),
    )
}

/// A host view of `view`'s shape with compact `strides`, not initialized.
fn host_compact(view: &View, strides: &[usize]) -> Result<View> {
    View::allocate(
        &ViewSpec::new(view.label(), view.element(), view.extents())
            .strides(strides)
            .space(MemorySpace::Host)
            .without_initializing(),
    )
}

unsafe fn host_to_device(gpu: &Gpu, dst: &View, src: &View) -> Result<()> {
    // The host side as one contiguous piece: `src` itself, or a compact copy in its order.
    let compacted;
    let host = if src.is_contiguous() {
        src
    } else {
        compacted = host_compact(src, &compact_strides_in_order(src.extents(), src.strides()))?;
        any_deep_copy(&compacted, src)?;
        &compacted
    };
    let bytes = compact_bytes(host);
    if dst.is_contiguous() && dst.strides() == host.strides() {
        return copy_bytes(address(dst), host.data() as u64, bytes);
    }
    with_staging(gpu, bytes, |staging| {
        copy_bytes(staging, host.data() as u64, bytes)?;
        copy_strided_raw(
            gpu,
            address(dst),
            staging,
            &shape(dst, dst.strides(), host.strides()),
        )
    })
}

unsafe fn device_to_host(gpu: &Gpu, dst: &View, src: &View) -> Result<()> {
    // The order the host side receives in one contiguous piece: `dst`'s own when it has no
    // gaps, else a compact host copy's in `dst`'s dimension order.
    let order = if dst.is_contiguous() {
        dst.strides().to_vec()
    } else {
        compact_strides_in_order(dst.extents(), dst.strides())
    };
    let bytes = compact_bytes(dst);
    if src.is_contiguous() && src.strides() == order.as_slice() {
        return download(dst, &order, address(src), bytes);
    }
    with_staging(gpu, bytes, |staging| {
        copy_strided_raw(
            gpu,
            staging,
            address(src),
            &shape(src, &order, src.strides()),
        )?;
        download(dst, &order, staging, bytes)
    })
}

/// Copies the `bytes` of device address `piece`, `dst`'s elements compact in `order`, to `dst`.
unsafe fn download(dst: &View, order: &[usize], piece: u64, bytes: usize) -> Result<()> {
    if dst.is_contiguous() {
        return copy_bytes(address(dst), piece, bytes);
    }
    let compact = host_compact(dst, order)?;
    copy_bytes(compact.data() as u64, piece, bytes)?;
    any_deep_copy(dst, &compact)
}
