//! The messages of every failure about a view. Each names the view by its label (004: "a user
//! supplied label used for error messages") and the offending dimension, and says how to fix
//! the call. Built in cold functions so formatting stays out of the callers' paths.

use super::element::ElementType;
use super::layout::Layout;
use crate::error::{Error, ErrorKind};
use crate::memory_space::MemorySpace;

#[cold]
fn invalid(label: &str, what: String) -> Error {
    Error::invalid_argument(format!("view \"{label}\": {what}"))
}

#[cold]
pub(crate) fn rank_too_large(label: &str, rank: usize, max: usize) -> Error {
    invalid(
        label,
        format!(
            "rank {rank} exceeds the maximum rank {max}; merge dimensions to use at most {max}"
        ),
    )
}

#[cold]
pub(crate) fn zero_extent(label: &str, dim: usize) -> Error {
    invalid(
        label,
        format!("extent({dim}) is 0; every dimension needs at least one element"),
    )
}

#[cold]
pub(crate) fn too_large(label: &str, dim: usize, extent: usize, element: ElementType) -> Error {
    invalid(
        label,
        format!(
            "extent({dim}) = {extent} makes the array larger than any allocation can be: its \
             {element} elements need more than isize::MAX = {} bytes (or overflow size_t); use \
             smaller extents",
            isize::MAX
        ),
    )
}

#[cold]
pub(crate) fn stride_count(label: &str, strides: usize, rank: usize) -> Error {
    invalid(
        label,
        format!("LayoutStride needs one stride per dimension: {strides} given for rank {rank}"),
    )
}

#[cold]
pub(crate) fn strides_alias(label: &str, dim: usize, stride: usize, inner: usize) -> Error {
    invalid(
        label,
        format!(
            "strides alias: stride({dim}) = {stride} does not step past dimension {inner}, which \
             has a smaller or equal stride, so different indices would share an element; make \
             each stride larger than the offset reach ((extent - 1) * stride, summed) of every \
             dimension with a smaller stride"
        ),
    )
}

#[cold]
pub(crate) fn zero_stride(label: &str, dim: usize, extent: usize) -> Error {
    invalid(
        label,
        format!(
            "strides alias: stride({dim}) is 0 while extent({dim}) is {extent}, so all its \
             indices would share one element; give it a stride past the other dimensions"
        ),
    )
}

#[cold]
pub(crate) fn dimension_out_of_range(label: &str, dim: i64, rank: usize) -> Error {
    invalid(
        label,
        format!("dimension {dim} does not exist in a view of rank {rank}; use 0..{rank}"),
    )
}

#[cold]
pub(crate) fn index_count(label: &str, given: usize, rank: usize) -> Error {
    invalid(
        label,
        format!("{given} indices given for a view of rank {rank}; pass exactly {rank}"),
    )
}

#[cold]
pub(crate) fn index_out_of_range(label: &str, dim: usize, index: i64, extent: usize) -> Error {
    invalid(
        label,
        format!("index {index} in dimension {dim} is out of range [0, {extent})"),
    )
}

#[cold]
pub(crate) fn range_out_of_range(
    label: &str,
    dim: usize,
    begin: i64,
    end: i64,
    extent: usize,
) -> Error {
    invalid(
        label,
        format!(
            "subview range [{begin}, {end}) in dimension {dim} is not a non-empty range inside \
             [0, {extent}); a range needs 0 <= begin < end <= extent"
        ),
    )
}

#[cold]
pub(crate) fn slice_count(label: &str, given: usize, rank: usize) -> Error {
    invalid(
        label,
        format!(
            "subview: {given} slices given for a view of rank {rank}; pass one per dimension \
             (an index, a range or ALL)"
        ),
    )
}

#[cold]
pub(crate) fn copy_element_mismatch(
    dst: &str,
    dst_element: ElementType,
    src: &str,
    src_element: ElementType,
) -> Error {
    Error::invalid_argument(format!(
        "deep_copy from view \"{src}\" to view \"{dst}\": the element types differ ({src_element} \
         into {dst_element}); deep_copy copies values of one type"
    ))
}

#[cold]
pub(crate) fn copy_rank_mismatch(dst: &str, dst_rank: usize, src: &str, src_rank: usize) -> Error {
    Error::invalid_argument(format!(
        "deep_copy from view \"{src}\" to view \"{dst}\": the ranks differ ({src_rank} and \
         {dst_rank}); the shapes must match"
    ))
}

#[cold]
pub(crate) fn copy_extent_mismatch(
    dst: &str,
    dst_extent: usize,
    src: &str,
    src_extent: usize,
    dim: usize,
) -> Error {
    Error::invalid_argument(format!(
        "deep_copy from view \"{src}\" to view \"{dst}\": extent({dim}) is {src_extent} in \
         \"{src}\" but {dst_extent} in \"{dst}\"; the shapes must match (take a subview of the \
         larger one)"
    ))
}

#[cold]
pub(crate) fn fill_value_size(label: &str, given: usize, element: ElementType) -> Error {
    invalid(
        label,
        format!(
            "fill: the value has {given} bytes but an element is a {element} of {} bytes",
            element.size()
        ),
    )
}

#[cold]
pub(crate) fn resize_unmanaged(label: &str, operation: &str) -> Error {
    invalid(
        label,
        format!(
            "{operation}: the view is unmanaged (it wraps memory taskdag does not own), so it \
             cannot be reallocated; allocate a managed view and deep_copy into it"
        ),
    )
}

#[cold]
pub(crate) fn resize_strided(label: &str, operation: &str) -> Error {
    invalid(
        label,
        format!(
            "{operation}: the view has {}, whose strides are not defined for new extents; \
             allocate a new view with the strides you want",
            Layout::Stride
        ),
    )
}

#[cold]
pub(crate) fn resize_rank(label: &str, operation: &str, given: usize, rank: usize) -> Error {
    invalid(
        label,
        format!(
            "{operation}: {given} extents given for a view of rank {rank}; pass exactly {rank}"
        ),
    )
}

#[cold]
pub(crate) fn label_has_nul(label: &str, position: usize) -> Error {
    Error::invalid_argument(format!(
        "view label \"{}\" contains a NUL byte at position {position}; labels are C strings",
        label.replace('\0', "\\0")
    ))
}

#[cfg(not(feature = "cuda"))]
#[cold]
pub(crate) fn space_unavailable(label: &str, space: MemorySpace) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!(
            "view \"{label}\": views in the {space} memory space need the CUDA back-end, and \
             this library was built without the `cuda` feature; rebuild with it (the default) \
             or use the host memory space"
        ),
    )
}

#[cold]
pub(crate) fn out_of_memory(label: &str, bytes: usize, space: MemorySpace) -> Error {
    Error::new(
        ErrorKind::OutOfMemory,
        format!(
            "view \"{label}\": cannot allocate {bytes} bytes of {space} memory; free memory or \
             use smaller extents"
        ),
    )
}

/// `e` (from the CUDA layer) with the view's label in front; kind unchanged.
#[cfg(feature = "cuda")]
#[cold]
pub(crate) fn in_view(label: &str, e: Error) -> Error {
    Error::new(e.kind(), format!("view \"{label}\": {}", e.message()))
}

#[cfg(feature = "cuda")]
#[cold]
pub(crate) fn wrapped_wrong_space(
    label: &str,
    space: MemorySpace,
    ptr: *const u8,
    kind: crate::cuda::PointerKind,
) -> Error {
    invalid(
        label,
        format!(
            "td_view_wrap: {ptr:p} is not {space} memory (the CUDA driver reports it as \
             {kind:?}); wrap device memory with TD_SPACE_CUDA, cudaMallocHost/cudaHostAlloc \
             memory with TD_SPACE_CUDA_HOST_PINNED and other host memory with TD_SPACE_HOST"
        ),
    )
}
