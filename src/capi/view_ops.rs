//! Operations on `td_view`s that make or fill arrays: mirrors, deep_copy, fill, subviews,
//! resize and realloc (004, "Deep copy", "Resizing and reallocation").

use super::boundary::{call, null_argument, Out};
use super::error::CResult;
use super::handle;
use super::status::td_status;
use super::view::{new_view_handle, td_view};
use super::view_args::td_slice;
use crate::view::{self, Slice, View};
use std::ffi::c_void;

/// Allocates a host (TD_SPACE_HOST) view, whatever `view`'s space, with `view`'s element type, extents and layout (padded if `view` is;
/// a LayoutStride view gets compact strides in the same dimension order), labelled
/// "<label>_mirror" and zero-filled. The elements are not copied: use td_view_deep_copy.
///
/// Ownership: on success `*out` holds a new view with one reference (td_view_release).
/// Thread safety: any thread.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_OUT_OF_MEMORY.
#[no_mangle]
pub unsafe extern "C" fn td_view_create_mirror(
    view: *const td_view,
    out: *mut *mut td_view,
) -> td_status {
    call("td_view_create_mirror", || {
        let view = handle::object(view, "view")?;
        let out = Out::new(out, "out")?;
        out.write(new_view_handle(view.create_mirror()?));
        Ok(())
    })
}

/// Like td_view_create_mirror, except that a view whose memory the host can access already
/// (TD_SPACE_HOST, TD_SPACE_CUDA_HOST_PINNED) is not copied: `*out` is then a new reference to the same array, and
/// td_view_deep_copy between the two does nothing (004, create_mirror_view).
///
/// Ownership: on success `*out` holds a new view with one reference (td_view_release).
/// Thread safety: any thread.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_OUT_OF_MEMORY.
#[no_mangle]
pub unsafe extern "C" fn td_view_create_mirror_view(
    view: *const td_view,
    out: *mut *mut td_view,
) -> td_status {
    call("td_view_create_mirror_view", || {
        let view = handle::object(view, "view")?;
        let out = Out::new(out, "out")?;
        out.write(new_view_handle(view.create_mirror_view()?));
        Ok(())
    })
}

/// Copies every element of `src` to the element with the same indices in `dst`. Layouts and
/// strides may differ (the copy permutes, in cache-sized tiles on the host's threads); element
/// types, ranks and extents must be equal. Two contiguous views of one layout are copied with
/// memcpy. `dst` and `src` may share memory: the result is as if `src` were read first.
///
/// With a TD_SPACE_CUDA view on either side the copy runs on the GPU and is complete on
/// return: one cuMemcpy when both are contiguous in the same layout; otherwise the permutation
/// runs on the device (a tiled transpose or a strided kernel), and host memory moves in one
/// contiguous cuMemcpy through a device staging buffer (docs/views.md, "Device views").
///
/// Thread safety: any thread; no other thread may access `dst`'s elements, or write `src`'s,
/// during the call.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT
/// (different element types, ranks or extents: the message names both labels and the
/// dimension); TD_ERROR_OUT_OF_MEMORY (overlapping views, and device copies between layouts,
/// need a staging copy); TD_ERROR_UNAVAILABLE (a device view in a library built without nvcc
/// when a kernel is needed).
#[no_mangle]
pub unsafe extern "C" fn td_view_deep_copy(dst: *mut td_view, src: *const td_view) -> td_status {
    call("td_view_deep_copy", || {
        let dst = handle::object(dst, "dst")?;
        let src = handle::object(src, "src")?;
        Ok(view::deep_copy(dst, src)?)
    })
}

/// Writes the element at `value` (element_size bytes, e.g. a `double*` for TD_ELEMENT_DOUBLE)
/// to every element of `dst` (deep_copy of a scalar).
///
/// A TD_SPACE_CUDA view is filled on the GPU (`value` is host memory).
///
/// Thread safety: any thread; no other thread may access `dst`'s elements during the call.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_UNAVAILABLE (a device
/// view of 8- or 16-byte elements, or with gaps, in a library built without nvcc).
#[no_mangle]
pub unsafe extern "C" fn td_view_fill(dst: *mut td_view, value: *const c_void) -> td_status {
    call("td_view_fill", || {
        let dst = handle::object(dst, "dst")?;
        if value.is_null() {
            return Err(null_argument("value"));
        }
        let value = std::slice::from_raw_parts(value as *const u8, dst.element().size());
        Ok(view::fill(dst, value)?)
    })
}

/// Makes a view of part of `view`'s elements. `slices` holds `count` entries, one per dimension
/// (`count` must equal the rank): TD_ALL keeps the dimension, TD_INDEX(i) fixes it at index i
/// (the dimension disappears, so the rank drops by one), TD_RANGE(b, e) keeps indices [b, e)
/// renumbered from 0. For example, column 2 of a matrix:
///
/// ```c
/// td_slice column[2] = { TD_ALL, TD_INDEX(2) };
/// td_view_subview(matrix, column, 2, &col);
/// ```
///
/// The subview shares the memory and the label, and keeps the array alive. Its layout is the
/// parent's while the strides allow, else TD_LAYOUT_STRIDE.
///
/// Ownership: on success `*out` holds a new view with one reference (td_view_release).
/// Thread safety: any thread.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT
/// (`count` other than the rank, an unknown kind, an index or range outside the extent or an
/// empty range: the message names the label and the dimension).
#[no_mangle]
pub unsafe extern "C" fn td_view_subview(
    view: *const td_view,
    slices: *const td_slice,
    count: usize,
    out: *mut *mut td_view,
) -> td_status {
    call("td_view_subview", || {
        let view = handle::object(view, "view")?;
        let out = Out::new(out, "out")?;
        let slices: Vec<Slice> = if count == 0 {
            Vec::new()
        } else if slices.is_null() {
            return Err(null_argument("slices"));
        } else {
            std::slice::from_raw_parts(slices, count)
                .iter()
                .enumerate()
                .map(|(i, s)| s.to_slice(i))
                .collect::<CResult<_>>()?
        };
        out.write(new_view_handle(view.subview(&slices)?));
        Ok(())
    })
}

/// The `rank` extents at `extents` (NULL allowed for rank 0).
unsafe fn read_extents<'a>(extents: *const usize, rank: usize) -> CResult<&'a [usize]> {
    if rank == 0 {
        Ok(&[])
    } else if extents.is_null() {
        Err(null_argument("extents"))
    } else {
        Ok(std::slice::from_raw_parts(extents, rank))
    }
}

/// The view behind the handle at `*view`, checked.
unsafe fn view_at<'a>(view: *mut *mut td_view) -> CResult<&'a View> {
    if view.is_null() {
        return Err(null_argument("view"));
    }
    handle::object(*view, "*view")
}

/// Reassigns `*view` to a new zero-filled array with the `rank` extents at `extents` (same
/// label, element type, layout, padding and space), holding the old elements in the index
/// range both shapes share (004, resize). `rank` must equal the view's rank. A device view is
/// resized on the device (the shared range is copied there).
///
/// Ownership: on success the caller's reference in `*view` is released and `*view` receives a
/// new view with one reference. Other references to the old view, and its subviews, keep the
/// old array. On failure `*view` is unchanged.
/// Thread safety: any thread; no other thread may use the reference in `*view` or write the
/// old elements during the call.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT
/// (an unmanaged or TD_LAYOUT_STRIDE view; `rank` other than the view's; a zero or too large
/// extent, naming the label and the dimension); TD_ERROR_OUT_OF_MEMORY.
#[no_mangle]
pub unsafe extern "C" fn td_view_resize(
    view: *mut *mut td_view,
    extents: *const usize,
    rank: usize,
) -> td_status {
    call("td_view_resize", || {
        let mut resized = view_at(view)?.clone();
        resized.resize(read_extents(extents, rank)?)?;
        replace(view, resized)
    })
}

/// Reassigns `*view` to a new zero-filled array with the `rank` extents at `extents`, keeping no
/// elements (004, realloc). The old array is released first: when no other view holds it, it
/// is freed before the new one is allocated, so the two never exist at once.
///
/// Ownership: on success the caller's reference in `*view` is released and `*view` receives a
/// new view with one reference. On TD_ERROR_OUT_OF_MEMORY the reference was released already
/// and `*view` is set to NULL. On the other failures `*view` is unchanged.
/// Thread safety: as td_view_resize.
/// Returns TD_OK; the statuses of td_view_resize.
#[no_mangle]
pub unsafe extern "C" fn td_view_realloc(
    view: *mut *mut td_view,
    extents: *const usize,
    rank: usize,
) -> td_status {
    call("td_view_realloc", || {
        let old = view_at(view)?;
        let extents = read_extents(extents, rank)?;
        old.check_realloc(extents)?;
        let old = old.clone();
        // Our reference goes before the allocation; `old` is then the only holder we keep, and
        // realloc drops it before allocating.
        handle::release(*view, "*view")?;
        *view = std::ptr::null_mut();
        *view = new_view_handle(old.realloc(extents)?);
        Ok(())
    })
}

/// Stores a handle of `new` in `*view` and releases the reference that was there.
unsafe fn replace(view: *mut *mut td_view, new: View) -> CResult<()> {
    let old = *view;
    *view = new_view_handle(new);
    handle::release(old, "*view")
}
