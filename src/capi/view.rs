//! `td_view`: labelled, reference-counted multidimensional arrays (004, "Views to Arrays") behind
//! a C handle: creation, wrapping, sharing, queries and element addresses. Copies, mirrors,
//! subviews and reallocation are in `view_ops.rs`; the argument types in `view_args.rs`.

use super::boundary::{call, call_or, null_argument, read_versioned, Out};
use super::error::{CError, CResult};
use super::handle::{self, Handle};
use super::memory_space::td_memory_space;
use super::status::td_status;
use super::view_args::{element_type_code, layout_code, td_element_type, td_layout, td_view_args};
use crate::memory_space::MemorySpace;
use crate::runtime;
use crate::view::View;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

/// A view: a reference to a multidimensional array of rank 0..8 with a label, an element type,
/// extents, a layout and a memory space. Reference-counted: td_view_retain adds a reference to
/// the same view (a shallow copy); the array is freed when the last reference to it, and to
/// every subview and host mirror view of it, is released.
///
/// Elements are shared memory: td_view_deep_copy, td_view_fill and td_view_resize must not run
/// while another thread accesses the elements they write (or writes those they read).
pub struct td_view {
    _private: [u8; 0],
}

unsafe impl Handle for td_view {
    type Object = View;
    const NAME: &'static str = "td_view";
    const TAG: u64 = 0x7464_5f76_6965_7721; // "td_view!"
}

/// A new handle holding `view`, owned by the caller.
pub(crate) fn new_view_handle(view: View) -> *mut td_view {
    handle::new_handle(Arc::new(view))
}

/// Allocates a view: `rank` extents, zero-filled unless `args->flags` has TD_VIEW_NO_INIT.
///
/// Ownership: on success `*out` holds a new view with one reference, released with
/// td_view_release. On failure `*out` is not written.
/// Thread safety: any thread, after td_initialize.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`args` or `out` NULL); TD_ERROR_STRUCT_SIZE;
/// TD_ERROR_INVALID_ARGUMENT (unknown element type, layout, flags or space; rank above 8; a zero
/// extent; a size above the address space; LayoutStride strides that alias: the message names
/// the label and the dimension); TD_ERROR_UNAVAILABLE (TD_SPACE_CUDA or
/// TD_SPACE_CUDA_HOST_PINNED without a usable GPU: the message says why: no driver, no device,
/// or a library built without the `cuda` feature); TD_ERROR_OUT_OF_MEMORY (for device memory
/// the message gives the device's free and total memory); TD_ERROR_NOT_INITIALIZED.
///
/// TD_SPACE_CUDA views live in device memory: they have labels, layouts, references and
/// subviews as host views, and td_view_deep_copy / td_view_fill run on the GPU, but their
/// elements must not be read or written by the host (td_view_data and td_view_ptr give device
/// addresses, for kernels). TD_SPACE_CUDA_HOST_PINNED views are page-locked host memory: host
/// views in every respect, copied to and from the device at full link speed.
#[no_mangle]
pub unsafe extern "C" fn td_view_create(
    args: *const td_view_args,
    out: *mut *mut td_view,
) -> td_status {
    call("td_view_create", || {
        let args: td_view_args = read_versioned(args, "args", false)?;
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_view_create")?;
        let view = View::allocate(&args.to_spec()?)?;
        out.write(new_view_handle(view));
        Ok(())
    })
}

/// Makes an unmanaged view of the caller's memory at `data`, shaped by `args` (004, "Wrapping
/// your memory in a View"). Nothing is copied or initialized; taskdag never frees `data`.
/// `data` must hold the view's span (td_view_span) of elements laid out as `args` says, and stay
/// valid while the view or any view made from it lives. A Fortran array is TD_LAYOUT_LEFT with
/// its shape as the extents.
///
/// Ownership: as td_view_create; `data` stays the caller's.
/// Thread safety: any thread, after td_initialize.
///
/// With TD_SPACE_CUDA `data` must be device memory (cudaMalloc), with TD_SPACE_CUDA_HOST_PINNED
/// page-locked host memory (cudaMallocHost); the driver is asked where `data` points.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`args`, `out` or `data` NULL; for `data` the message
/// names the label and the extents); TD_ERROR_INVALID_ARGUMENT also when the driver reports
/// that `data` is not memory of the space given; the statuses of td_view_create except
/// TD_ERROR_OUT_OF_MEMORY.
#[no_mangle]
pub unsafe extern "C" fn td_view_wrap(
    args: *const td_view_args,
    data: *mut c_void,
    out: *mut *mut td_view,
) -> td_status {
    call("td_view_wrap", || {
        let args: td_view_args = read_versioned(args, "args", false)?;
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_view_wrap")?;
        let spec = args.to_spec()?;
        let mapping = spec.mapping()?;
        let data = NonNull::new(data as *mut u8).ok_or_else(|| {
            let shape = match spec.extents.first() {
                Some(extent) => format!("extent(0) = {extent}"),
                None => "rank 0".to_owned(),
            };
            CError::new(
                td_status::TD_ERROR_NULL_ARGUMENT,
                format!(
                    "argument `data` is NULL, but view \"{}\" has {shape} ({} elements of {} \
                     bytes in its span); pass the address of your array",
                    spec.label,
                    mapping.span(),
                    spec.element.size()
                ),
            )
        })?;
        out.write(new_view_handle(View::wrap(&spec, data)?));
        Ok(())
    })
}

/// Adds a reference to `view` (a shallow copy that shares the same array); each reference is
/// released with td_view_release.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_retain(view: *mut td_view) -> td_status {
    call("td_view_retain", || handle::retain(view, "view"))
}

/// Releases one reference to `view`. The array is freed when no reference to it, to a subview
/// of it or to a host mirror view of it remains (never for wrapped memory). NULL is a no-op.
///
/// Thread safety: any thread, but no other thread may use this reference concurrently.
/// Returns TD_OK; TD_ERROR_INVALID_HANDLE (wrong type or already released).
#[no_mangle]
pub unsafe extern "C" fn td_view_release(view: *mut td_view) -> td_status {
    call("td_view_release", || handle::release(view, "view"))
}

/// Writes one property of `view` to `*out`.
unsafe fn query<T>(
    function: &'static str,
    view: *const td_view,
    out: *mut T,
    get: impl FnOnce(&View) -> CResult<T>,
) -> td_status {
    call(function, || {
        let view = handle::object(view, "view")?;
        let out = Out::new(out, "out")?;
        out.write(get(view)?);
        Ok(())
    })
}

/// `dim` as a dimension index of `view`; the error names the view's label.
fn dimension(view: &View, dim: c_int) -> CResult<usize> {
    Ok(view.check_dimension(i64::from(dim))?)
}

/// Writes the rank (0..8) of `view` to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_rank(view: *const td_view, out: *mut c_int) -> td_status {
    query("td_view_rank", view, out, |v| Ok(v.rank() as c_int))
}

/// Writes the extent of dimension `dim` (0..rank-1) to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT (`dim` outside 0..rank-1; the message names the label).
#[no_mangle]
pub unsafe extern "C" fn td_view_extent(
    view: *const td_view,
    dim: c_int,
    out: *mut usize,
) -> td_status {
    query("td_view_extent", view, out, |v| {
        Ok(v.extents()[dimension(v, dim)?])
    })
}

/// Writes the stride of dimension `dim` (0..rank-1), in elements, to `*out`: element
/// (i0, i1, ...) is at `data + element_size * (i0 * stride(0) + i1 * stride(1) + ...)`.
///
/// Thread safety: any thread. Returns as td_view_extent.
#[no_mangle]
pub unsafe extern "C" fn td_view_stride(
    view: *const td_view,
    dim: c_int,
    out: *mut usize,
) -> td_status {
    query("td_view_stride", view, out, |v| {
        Ok(v.strides()[dimension(v, dim)?])
    })
}

/// Writes the span of `view` to `*out`: the number of elements from the first element to one
/// past the last, gaps (padding, or the parent's elements between a subview's) included. The
/// view is contiguous when the span equals the product of the extents.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_span(view: *const td_view, out: *mut usize) -> td_status {
    query("td_view_span", view, out, |v| Ok(v.span()))
}

/// Writes the address of element (0, ..., 0) to `*out`; it stays valid while the view (or any
/// view of its array) lives. For a TD_SPACE_CUDA view it is a device address: pass it to
/// kernels, never dereference it on the host.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_data(view: *const td_view, out: *mut *mut c_void) -> td_status {
    query("td_view_data", view, out, |v| Ok(v.data() as *mut c_void))
}

/// Writes the layout (TD_LAYOUT_RIGHT, TD_LAYOUT_LEFT or TD_LAYOUT_STRIDE) to `*out`. A subview
/// keeps its parent's layout while its strides still have that layout's form and is
/// TD_LAYOUT_STRIDE otherwise.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_layout(view: *const td_view, out: *mut td_layout) -> td_status {
    query("td_view_layout", view, out, |v| Ok(layout_code(v.layout())))
}

/// Writes the element type (TD_ELEMENT_*) to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_element_type(
    view: *const td_view,
    out: *mut td_element_type,
) -> td_status {
    query("td_view_element_type", view, out, |v| {
        Ok(element_type_code(v.element()))
    })
}

/// Writes the size of one element in bytes to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_element_size(view: *const td_view, out: *mut usize) -> td_status {
    query("td_view_element_size", view, out, |v| {
        Ok(v.element().size())
    })
}

/// Writes the label to `*out`. Subviews and mirror views share their array's label; a mirror
/// is labelled "<label>_mirror".
///
/// Ownership: the string belongs to the view and stays valid while the view (or any view of
/// its array) lives; do not free it.
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_label(view: *const td_view, out: *mut *const c_char) -> td_status {
    query("td_view_label", view, out, |v| Ok(v.c_label().as_ptr()))
}

/// Writes 1 to `*out` if the elements fill the span without gaps, else 0.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_is_contiguous(view: *const td_view, out: *mut c_int) -> td_status {
    query("td_view_is_contiguous", view, out, |v| {
        Ok(c_int::from(v.is_contiguous()))
    })
}

/// Writes 1 to `*out` if taskdag owns the array (td_view_create), 0 for wrapped memory
/// (td_view_wrap) and views of it.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_is_managed(view: *const td_view, out: *mut c_int) -> td_status {
    query("td_view_is_managed", view, out, |v| {
        Ok(c_int::from(v.is_managed()))
    })
}

/// Writes the memory space of the elements (TD_SPACE_*) to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_memory_space(
    view: *const td_view,
    out: *mut td_memory_space,
) -> td_status {
    query("td_view_memory_space", view, out, |v| {
        Ok(match v.space() {
            MemorySpace::Host => super::memory_space::TD_SPACE_HOST,
            MemorySpace::Cuda => super::memory_space::TD_SPACE_CUDA,
            MemorySpace::CudaHostPinned => super::memory_space::TD_SPACE_CUDA_HOST_PINNED,
        })
    })
}

/// Writes to `*out` how many views share this view's array: its references' views, subviews,
/// and host mirror views (Kokkos' use_count). Several references to one td_view count once.
///
/// Thread safety: any thread; exact while no other thread creates or releases views of it.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_view_use_count(view: *const td_view, out: *mut usize) -> td_status {
    query("td_view_use_count", view, out, |v| Ok(v.use_count()))
}

/// The `rank` indices at `indices` (NULL allowed for rank 0).
unsafe fn read_indices<'a>(indices: *const i64, rank: usize) -> CResult<&'a [i64]> {
    if rank == 0 {
        return Ok(&[]);
    }
    if indices.is_null() {
        return Err(null_argument("indices"));
    }
    Ok(std::slice::from_raw_parts(indices, rank))
}

/// Writes the address of element (indices[0], ..., indices[rank-1]) to `*out`, after checking
/// each index against its extent. `indices` holds `rank` values (NULL for rank 0). For a
/// TD_SPACE_CUDA view it is a device address: for kernels, never dereferenced on the host (read
/// elements through a host mirror: td_view_create_mirror_view and td_view_deep_copy).
///
/// For loops over many elements, compute addresses directly instead: query td_view_data,
/// td_view_element_size and td_view_stride once, then element (i0, i1, ...) is at
/// `(char*)data + element_size * (i0 * stride0 + i1 * stride1 + ...)`; or call
/// td_view_ptr_unchecked.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT (an index outside [0, extent): the message names the label, the
/// dimension and the index).
#[no_mangle]
pub unsafe extern "C" fn td_view_ptr(
    view: *const td_view,
    indices: *const i64,
    out: *mut *mut c_void,
) -> td_status {
    call("td_view_ptr", || {
        let view = handle::object(view, "view")?;
        let out = Out::new(out, "out")?;
        let indices = read_indices(indices, view.rank())?;
        out.write(view.element_ptr(indices)?.as_ptr() as *mut c_void);
        Ok(())
    })
}

/// The address of element (indices[0], ..., indices[rank-1]) WITHOUT bounds checks: the fast
/// form of td_view_ptr. Indices outside [0, extent) give an address outside the view, which
/// must not be accessed. The handle is still checked: NULL is returned, with td_last_error()
/// set, for an invalid handle or NULL `indices` with rank > 0.
///
/// Thread safety: any thread.
#[no_mangle]
pub unsafe extern "C" fn td_view_ptr_unchecked(
    view: *const td_view,
    indices: *const i64,
) -> *mut c_void {
    call_or("td_view_ptr_unchecked", || {
        let view = handle::object(view, "view")?;
        let indices = read_indices(indices, view.rank())?;
        let offset = indices
            .iter()
            .zip(view.strides())
            .fold(0isize, |acc, (&i, &s)| {
                acc.wrapping_add((i as isize).wrapping_mul(s as isize))
            });
        let bytes = offset.wrapping_mul(view.element().size() as isize);
        Ok(view.data().wrapping_offset(bytes) as *mut c_void)
    })
    .unwrap_or(std::ptr::null_mut())
}
