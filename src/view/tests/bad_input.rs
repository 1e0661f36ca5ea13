//! Every rejected input: its error kind, and a message that names the view's label and the
//! offending dimension.

use super::*;
use crate::error::{Error, ErrorKind};
#[cfg(not(feature = "cuda"))]
use crate::memory_space::MemorySpace;
use std::ptr::NonNull;

/// Asserts `result` failed with `kind` and a message containing every one of `parts`.
fn assert_error<T: std::fmt::Debug>(
    result: crate::error::Result<T>,
    kind: ErrorKind,
    parts: &[&str],
) {
    let e: Error = result.unwrap_err();
    assert_eq!(e.kind(), kind, "{}", e.message());
    for part in parts {
        assert!(
            e.message().contains(part),
            "expected {part:?} in: {}",
            e.message()
        );
    }
}

fn allocate(label: &str, extents: &[usize]) -> crate::error::Result<View> {
    View::allocate(&ViewSpec::new(label, ElementType::F64, extents))
}

#[test]
fn shapes_with_too_many_dimensions_zero_or_overflowing_extents_are_rejected() {
    let invalid = ErrorKind::InvalidArgument;
    assert_error(
        allocate("B", &[2; 9]),
        invalid,
        &["view \"B\"", "rank 9", "maximum rank 8"],
    );
    assert_error(
        allocate("Z", &[3, 0, 2]),
        invalid,
        &["view \"Z\"", "extent(1) is 0"],
    );
    // The element count overflows size_t while the strides are built.
    assert_error(
        allocate("O", &[1 << 40, 1 << 30]),
        invalid,
        &["view \"O\"", "extent(0) = 1099511627776", "overflow"],
    );
    // The count fits, the bytes do not.
    assert_error(
        allocate("Y", &[1, 1 << 61]),
        invalid,
        &["view \"Y\"", "extent(1)", "isize::MAX"],
    );
    let left = ViewSpec::new("LL", ElementType::U8, &[1 << 62, 3]).layout(Layout::Left);
    assert_error(
        View::allocate(&left),
        invalid,
        &["view \"LL\"", "extent(1) = 3"],
    );
    let far = ViewSpec::new("F", ElementType::F64, &[2, 3]).strides(&[1, 1 << 62]);
    assert_error(
        View::allocate(&far),
        invalid,
        &["view \"F\"", "extent(1) = 3"],
    );
}

#[test]
fn aliasing_or_missing_strides_are_rejected() {
    let invalid = ErrorKind::InvalidArgument;
    // (4, 0) and (0, 1) would both be element 4.
    let alias = ViewSpec::new("S", ElementType::F64, &[5, 3]).strides(&[1, 4]);
    assert_error(
        View::allocate(&alias),
        invalid,
        &[
            "view \"S\"",
            "strides alias",
            "stride(1) = 4",
            "dimension 0",
        ],
    );
    let zero = ViewSpec::new("S0", ElementType::F64, &[5, 3]).strides(&[0, 5]);
    assert_error(
        View::allocate(&zero),
        invalid,
        &["view \"S0\"", "stride(0) is 0", "extent(0) is 5"],
    );
    let equal = ViewSpec::new("S2", ElementType::F64, &[2, 2]).strides(&[3, 3]);
    assert_error(
        View::allocate(&equal),
        invalid,
        &["view \"S2\"", "stride(1) = 3"],
    );
    let few = ViewSpec::new("S3", ElementType::F64, &[2, 2]).strides(&[1]);
    assert_error(
        View::allocate(&few),
        invalid,
        &["view \"S3\"", "1 given for rank 2"],
    );
    // Extent-1 dimensions may have any stride; nested strides with gaps are fine.
    let ok = ViewSpec::new("ok", ElementType::F64, &[1, 4, 3]).strides(&[0, 1, 5]);
    assert!(View::allocate(&ok).is_ok());
}

#[test]
fn out_of_range_indices_name_the_view_and_the_dimension() {
    let v = allocate("A", &[4, 5]).unwrap();
    let invalid = ErrorKind::InvalidArgument;
    assert_error(
        v.element_ptr(&[1, 5]),
        invalid,
        &["view \"A\"", "index 5 in dimension 1", "[0, 5)"],
    );
    assert_error(
        v.element_ptr(&[-1, 0]),
        invalid,
        &["index -1 in dimension 0"],
    );
    assert_error(
        v.element_ptr(&[1]),
        invalid,
        &["view \"A\"", "1 indices given for a view of rank 2"],
    );
    assert_error(
        v.check_dimension(2),
        invalid,
        &["view \"A\"", "dimension 2"],
    );
    assert!(v.element_ptr(&[3, 4]).is_ok());
}

#[test]
fn out_of_range_subviews_name_the_view_and_the_dimension() {
    let v = allocate("A", &[4, 5, 6]).unwrap();
    let invalid = ErrorKind::InvalidArgument;
    let sub = |s: &[Slice]| v.subview(s);
    assert_error(
        sub(&[Slice::All, Slice::Index(5), Slice::All]),
        invalid,
        &["view \"A\"", "index 5 in dimension 1"],
    );
    assert_error(
        sub(&[Slice::All, Slice::All, Slice::Range(3, 7)]),
        invalid,
        &["view \"A\"", "[3, 7) in dimension 2", "[0, 6)"],
    );
    assert_error(
        sub(&[Slice::Range(2, 2), Slice::All, Slice::All]),
        invalid,
        &["[2, 2) in dimension 0"],
    );
    assert_error(
        sub(&[Slice::Range(-1, 2), Slice::All, Slice::All]),
        invalid,
        &["[-1, 2) in dimension 0"],
    );
    assert_error(
        sub(&[Slice::All, Slice::All]),
        invalid,
        &["view \"A\"", "2 slices given for a view of rank 3"],
    );
}

#[test]
fn deep_copy_between_different_shapes_or_types_names_both_views_and_the_dimension() {
    let a = allocate("A", &[4, 5, 6]).unwrap();
    let b = allocate("B", &[4, 5, 7]).unwrap();
    let c = allocate("C", &[4, 5]).unwrap();
    let i = View::allocate(&ViewSpec::new("I", ElementType::I64, &[4, 5, 6])).unwrap();
    let invalid = ErrorKind::InvalidArgument;
    // SAFETY (all calls): rejected before touching elements.
    unsafe {
        assert_error(
            deep_copy(&a, &b),
            invalid,
            &[
                "from view \"B\" to view \"A\"",
                "extent(2) is 7 in \"B\" but 6 in \"A\"",
            ],
        );
        assert_error(
            deep_copy(&a, &c),
            invalid,
            &["\"C\"", "\"A\"", "ranks differ (2 and 3)"],
        );
        assert_error(
            deep_copy(&a, &i),
            invalid,
            &["\"I\"", "\"A\"", "int64 into double"],
        );
        assert_error(
            fill(&a, &[0u8; 4]),
            invalid,
            &["view \"A\"", "4 bytes", "8 bytes"],
        );
    }
}

#[test]
fn resize_and_realloc_refuse_views_they_cannot_reallocate() {
    let invalid = ErrorKind::InvalidArgument;
    let mut buffer = [0.0f64; 6];
    let spec = ViewSpec::new("W", ElementType::F64, &[6]);
    let ptr = NonNull::new(buffer.as_mut_ptr().cast::<u8>()).unwrap();
    // SAFETY: the buffer outlives the view, which is only resized (rejected).
    let mut wrapped = unsafe { View::wrap(&spec, ptr) }.unwrap();
    // SAFETY: rejected before touching elements.
    assert_error(
        unsafe { wrapped.resize(&[8]) },
        invalid,
        &["view \"W\"", "resize", "unmanaged"],
    );
    assert_error(
        wrapped.check_realloc(&[8]),
        invalid,
        &["view \"W\"", "realloc", "unmanaged"],
    );
    let mut strided =
        View::allocate(&ViewSpec::new("S", ElementType::F64, &[2, 2]).strides(&[2, 1])).unwrap();
    // SAFETY: as above.
    assert_error(
        unsafe { strided.resize(&[3, 3]) },
        invalid,
        &["view \"S\"", "LayoutStride"],
    );
    let mut a = allocate("A", &[2, 2]).unwrap();
    // SAFETY: as above.
    assert_error(
        unsafe { a.resize(&[3]) },
        invalid,
        &["view \"A\"", "1 extents given for a view of rank 2"],
    );
    // SAFETY: as above.
    assert_error(
        unsafe { a.resize(&[3, 0]) },
        invalid,
        &["view \"A\"", "extent(1) is 0"],
    );
    assert_eq!(a.extents(), &[2, 2]);
}

#[test]
fn labels_with_nul_and_empty_opaque_types_are_rejected() {
    // The CUDA spaces without a GPU: tests/device.rs (they work where there is one).
    #[cfg(not(feature = "cuda"))]
    for space in [MemorySpace::Cuda, MemorySpace::CudaHostPinned] {
        let spec = ViewSpec::new("D", ElementType::F64, &[4]).space(space);
        assert_error(
            View::allocate(&spec),
            ErrorKind::Unavailable,
            &["view \"D\"", "without the `cuda` feature"],
        );
    }
    assert_error(
        allocate("a\0b", &[1]),
        ErrorKind::InvalidArgument,
        &["a\\0b", "position 1"],
    );
    assert_error(
        ElementType::opaque(0),
        ErrorKind::InvalidArgument,
        &["at least 1 byte"],
    );
}
