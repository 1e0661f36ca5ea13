//! Device views (TD_SPACE_CUDA) and pinned views on the GPU: deep_copy in every direction
//! between every pair of layouts for random shapes of rank 1..8, tiled transposes of every
//! element size, fill, subviews, mirrors, resize, wrapping, and bad input. Device contents are
//! checked by downloading the raw bytes of the allocation (`copy_bytes` alone), not through the
//! deep_copy under test. Without a GPU each test prints a skip line naming the reason, except
//! the one that checks what a CUDA space reports then.

use super::copy::{shape, spec_of, sub_slices, Kind, KINDS, UNTOUCHED};
use super::*;
use crate::cuda::{copy_bytes, kernels_built, DeviceBuffer, Gpu};
use crate::error::ErrorKind;
use crate::memory_space::MemorySpace;
use std::io::Write;
use std::ptr::NonNull;
use std::sync::Mutex;

/// One test at a time on the GPU (the out-of-memory test must not starve the others).
static GPU_TESTS: Mutex<()> = Mutex::new(());

/// Whether device views can run here; prints the skip line naming the reason when not.
fn gpu_or_skip(test: &str) -> bool {
    let reason = match Gpu::get() {
        Ok(_) if kernels_built() => return true,
        Ok(_) => "library built without nvcc".to_string(),
        Err(e) => e.message().to_string(),
    };
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
    false
}

fn in_space(spec: ViewSpec, space: MemorySpace) -> View {
    View::allocate(&spec.space(space)).unwrap()
}

/// A zero-filled u64 view of `kind` in `space`, and for `Kind::Sub` its parent (filled with
/// UNTOUCHED around the zeroed subview).
fn make_in(
    space: MemorySpace,
    kind: Kind,
    extents: &[usize],
    rng: &mut Rng,
) -> (View, Option<View>) {
    let spec = spec_of(kind, extents, rng);
    if kind != Kind::Sub {
        return (in_space(spec, space), None);
    }
    let parent = in_space(spec, space);
    // SAFETY: this thread alone uses the views.
    unsafe { fill(&parent, &UNTOUCHED.to_ne_bytes()) }.unwrap();
    let sub = parent.subview(&sub_slices(extents)).unwrap();
    // SAFETY: as above.
    unsafe { fill(&sub, &0u64.to_ne_bytes()) }.unwrap();
    (sub, Some(parent))
}

/// The u64 elements of a device (or any) view's span, downloaded byte for byte.
fn span_words(view: &View) -> Vec<u64> {
    let mut words = vec![0u64; view.span()];
    // SAFETY: the span lies in the view's allocation; `words` holds as many bytes.
    unsafe {
        copy_bytes(
            words.as_mut_ptr() as u64,
            view.data() as u64,
            view.span() * 8,
        )
    }
    .unwrap();
    words
}

/// Element `index` of `view` from its downloaded span.
fn at(words: &[u64], view: &View, index: &[usize]) -> u64 {
    let offset: usize = index.iter().zip(view.strides()).map(|(i, s)| i * s).sum();
    words[offset]
}

/// Checks that device view `dst` holds `tag(index)` everywhere and, for a subview, that its
/// parent holds UNTOUCHED everywhere else.
fn check_device(dst: &View, parent: Option<&View>, what: &str) {
    let words = span_words(dst);
    for index in indices(dst.extents()) {
        assert_eq!(at(&words, dst, &index), tag(&index), "{what} at {index:?}");
    }
    if let Some(parent) = parent {
        let untouched = span_words(parent)
            .iter()
            .filter(|&&w| w == UNTOUCHED)
            .count();
        assert_eq!(
            untouched,
            parent.size() - dst.size(),
            "{what}: writes outside the subview"
        );
    }
}

fn check_host(dst: &View, parent: Option<&View>, what: &str) {
    for index in indices(dst.extents()) {
        assert_eq!(get(dst, &index), tag(&index), "{what} at {index:?}");
    }
    if let Some(parent) = parent {
        let untouched = indices(parent.extents())
            .into_iter()
            .filter(|i| get(parent, i) == UNTOUCHED)
            .count();
        assert_eq!(
            untouched,
            parent.size() - dst.size(),
            "{what}: writes outside the subview"
        );
    }
}

#[test]
fn deep_copy_host_to_device_device_to_device_and_back_for_every_layout_pair_of_rank_1_to_8() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    if !gpu_or_skip("deep_copy_host_to_device_device_to_device_and_back") {
        return;
    }
    let mut rng = Rng(0x00de_c0de);
    for rank in 1..=MAX_RANK {
        let extents = shape(rank, &mut rng);
        for from in KINDS {
            for to in KINDS {
                let what = format!("{from:?} -> {to:?} {extents:?}");
                let (host, _hp) = make_in(MemorySpace::Host, from, &extents, &mut rng);
                fill_with_tags(&host);
                let (dev, dev_parent) = make_in(MemorySpace::Cuda, to, &extents, &mut rng);
                let (dev2, dev2_parent) = make_in(MemorySpace::Cuda, from, &extents, &mut rng);
                let (back, back_parent) = make_in(MemorySpace::Host, to, &extents, &mut rng);
                // SAFETY: this thread alone uses the views.
                unsafe {
                    deep_copy(&dev, &host).unwrap();
                    check_device(&dev, dev_parent.as_ref(), &format!("h2d {what}"));
                    deep_copy(&dev2, &dev).unwrap();
                    check_device(&dev2, dev2_parent.as_ref(), &format!("d2d {what}"));
                    deep_copy(&back, &dev2).unwrap();
                }
                check_host(&back, back_parent.as_ref(), &format!("d2h {what}"));
            }
        }
    }
}

#[test]
fn tiled_transposes_of_every_element_size_and_batches_match_the_host() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    if !gpu_or_skip("tiled_transposes_of_every_element_size_and_batches_match_the_host") {
        return;
    }
    let types = [
        ElementType::I8,
        ElementType::U16,
        ElementType::F32,
        ElementType::F64,
        ElementType::opaque(16).unwrap(),
        ElementType::opaque(12).unwrap(),
    ];
    for element in types {
        let size = element.size();
        for extents in [vec![517, 300], vec![33, 70, 41], vec![3, 64, 5, 96]] {
            let spec = |layout| ViewSpec::new("t", element, &extents).layout(layout);
            let host = View::allocate(&spec(Layout::Left)).unwrap();
            let bytes = host.size() * size;
            let pattern: Vec<u8> = (0..bytes).map(|i| (i * 7 + i / 251) as u8).collect();
            // SAFETY: the host view holds `bytes` contiguous bytes.
            unsafe {
                host.data()
                    .copy_from_nonoverlapping(pattern.as_ptr(), bytes)
            };
            let left = in_space(spec(Layout::Left), MemorySpace::Cuda);
            let right = in_space(spec(Layout::Right), MemorySpace::Cuda);
            let reference = View::allocate(&spec(Layout::Right)).unwrap();
            let result = View::allocate(&spec(Layout::Right)).unwrap();
            // SAFETY: this thread alone uses the views.
            unsafe {
                deep_copy(&left, &host).unwrap();
                deep_copy(&right, &left).unwrap();
                deep_copy(&reference, &host).unwrap();
                copy_bytes(result.data() as u64, right.data() as u64, bytes).unwrap();
                let same = std::slice::from_raw_parts(result.data(), bytes)
                    == std::slice::from_raw_parts(reference.data(), bytes);
                assert!(same, "{element} {extents:?} Left -> Right on the device");
                // And back, Right -> Left, compared with the original.
                let again = in_space(spec(Layout::Left), MemorySpace::Cuda);
                deep_copy(&again, &right).unwrap();
                copy_bytes(result.data() as u64, again.data() as u64, bytes).unwrap();
                assert_eq!(
                    std::slice::from_raw_parts(result.data(), bytes),
                    &pattern[..],
                    "{element} {extents:?} Right -> Left on the device"
                );
            }
        }
    }
}

#[test]
fn fill_writes_device_views_contiguous_or_not_for_every_element_size() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    if !gpu_or_skip("fill_writes_device_views") {
        return;
    }
    for size in [1usize, 2, 4, 8, 12, 16, 24] {
        let element = ElementType::opaque(size).unwrap();
        let value: Vec<u8> = (0..size as u8).map(|b| b + 1).collect();
        let whole = in_space(ViewSpec::new("f", element, &[37, 11]), MemorySpace::Cuda);
        let column = whole.subview(&[Slice::All, Slice::Index(3)]).unwrap();
        let bytes = whole.size() * size;
        let mut got = vec![0u8; bytes];
        // SAFETY: this thread alone uses the views; `got` holds the whole span.
        unsafe {
            fill(&column, &value).unwrap();
            copy_bytes(got.as_mut_ptr() as u64, whole.data() as u64, bytes).unwrap();
        }
        for (e, element) in got.chunks(size).enumerate() {
            let expected: &[u8] = if e % 11 == 3 { &value } else { &vec![0; size] };
            assert_eq!(
                element, expected,
                "{size}-byte element {e} after filling column 3"
            );
        }
        // SAFETY: as above.
        unsafe {
            fill(&whole, &value).unwrap();
            copy_bytes(got.as_mut_ptr() as u64, whole.data() as u64, bytes).unwrap();
        }
        assert!(
            got.chunks(size).all(|e| e == value),
            "{size}-byte fill of the whole view"
        );
    }
}

#[test]
fn device_views_have_labels_refcounts_subviews_mirrors_and_resize_like_host_views() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    if !gpu_or_skip("device_views_have_labels_refcounts_subviews_mirrors") {
        return;
    }
    let spec = ViewSpec::new("dev", ElementType::U64, &[6, 5]).layout(Layout::Left);
    let dev = in_space(spec, MemorySpace::Cuda);
    assert_eq!(
        (dev.label(), dev.space(), dev.layout()),
        ("dev", MemorySpace::Cuda, Layout::Left)
    );
    assert!(
        span_words(&dev).iter().all(|&w| w == 0),
        "device views start zeroed"
    );
    let row = dev.subview(&[Slice::Index(2), Slice::All]).unwrap();
    assert_eq!(
        (row.space(), row.label(), dev.use_count()),
        (MemorySpace::Cuda, "dev", 2)
    );

    // create_mirror_view of a device view: a new host view like it; of a host view: itself.
    let mirror = dev.create_mirror_view().unwrap();
    assert_eq!(mirror.space(), MemorySpace::Host);
    assert_eq!(
        (mirror.label(), mirror.extents(), mirror.layout()),
        ("dev_mirror", dev.extents(), Layout::Left)
    );
    assert_eq!(
        dev.use_count(),
        2,
        "a device view's mirror does not share its memory"
    );
    assert!(mirror.create_mirror_view().unwrap().same_elements(&mirror));
    let copy = dev.create_mirror().unwrap();
    assert_eq!(
        (copy.space(), copy.extents()),
        (MemorySpace::Host, dev.extents())
    );

    fill_with_tags(&mirror);
    // SAFETY: this thread alone uses the views.
    unsafe { deep_copy(&dev, &mirror) }.unwrap();
    check_device(&dev, None, "mirror -> device");
    // The row subview: deep_copy to a host row.
    let host_row = View::allocate(&ViewSpec::new("row", ElementType::U64, &[5])).unwrap();
    // SAFETY: as above.
    unsafe { deep_copy(&host_row, &row) }.unwrap();
    for j in 0..5 {
        assert_eq!(get(&host_row, &[j]), tag(&[2, j]), "row element {j}");
    }

    // resize keeps the overlap on the device; the old allocation stays with `row`.
    let mut resized = dev.clone();
    // SAFETY: as above.
    unsafe { resized.resize(&[4, 7]) }.unwrap();
    assert_eq!(
        (resized.space(), resized.extents()),
        (MemorySpace::Cuda, &[4usize, 7][..])
    );
    let words = span_words(&resized);
    for index in indices(&[4, 7]) {
        let expected = if index[1] < 5 { tag(&index) } else { 0 };
        assert_eq!(
            at(&words, &resized, &index),
            expected,
            "resized at {index:?}"
        );
    }
    let reallocated = resized.realloc(&[2, 2]).unwrap();
    assert_eq!(reallocated.space(), MemorySpace::Cuda);
    assert!(span_words(&reallocated).iter().all(|&w| w == 0));
}

#[test]
fn pinned_views_are_host_views_the_gpu_copies_to_and_from() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    if !gpu_or_skip("pinned_views_are_host_views_the_gpu_copies_to_and_from") {
        return;
    }
    let spec = ViewSpec::new("pinned", ElementType::U64, &[40, 33]);
    let pinned = in_space(spec.clone(), MemorySpace::CudaHostPinned);
    assert!(pinned.create_mirror_view().unwrap().same_elements(&pinned));
    fill_with_tags(&pinned);
    let dev = in_space(spec.clone().layout(Layout::Left), MemorySpace::Cuda);
    let back = in_space(
        spec.layout(Layout::Left).padded(),
        MemorySpace::CudaHostPinned,
    );
    // SAFETY: this thread alone uses the views.
    unsafe {
        deep_copy(&dev, &pinned).unwrap();
        deep_copy(&back, &dev).unwrap();
    }
    check_device(&dev, None, "pinned -> device");
    check_host(&back, None, "device -> padded pinned");
}

#[test]
fn wrapped_device_memory_is_a_device_view_and_host_memory_is_refused_as_one() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    if !gpu_or_skip("wrapped_device_memory_is_a_device_view") {
        return;
    }
    let buffer = DeviceBuffer::new(8 * 16).unwrap();
    let spec = ViewSpec::new("w", ElementType::U64, &[4, 4]).space(MemorySpace::Cuda);
    let ptr = NonNull::new(buffer.address() as usize as *mut u8).unwrap();
    // SAFETY: the buffer outlives the view and holds its span.
    let wrapped = unsafe { View::wrap(&spec, ptr) }.unwrap();
    assert!(!wrapped.is_managed());
    // SAFETY: this thread alone uses the view.
    unsafe { fill(&wrapped, &5u64.to_ne_bytes()) }.unwrap();
    assert!(span_words(&wrapped).iter().all(|&w| w == 5));
    drop(wrapped);
    let mut host = [0u64; 16];
    let ptr = NonNull::new(host.as_mut_ptr().cast::<u8>()).unwrap();
    // SAFETY: refused before the pointer is kept.
    let e = unsafe { View::wrap(&spec, ptr) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e.message());
    assert!(e.message().contains("view \"w\"") && e.message().contains("not cuda memory"));
}

#[test]
fn mismatched_shapes_and_device_out_of_memory_are_errors_and_cuda_spaces_without_a_gpu_say_why() {
    let _gpu = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    let spec = ViewSpec::new("D", ElementType::F64, &[4]);
    if let Err(e) = Gpu::get() {
        // No GPU: both CUDA spaces are Unavailable, with the view's label and the reason.
        for space in [MemorySpace::Cuda, MemorySpace::CudaHostPinned] {
            let err = View::allocate(&spec.clone().space(space)).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Unavailable);
            assert!(err.message().contains("view \"D\""), "{}", err.message());
            assert!(err.message().contains(e.message()), "{}", err.message());
            let ptr = NonNull::<u8>::dangling();
            // SAFETY: refused before the pointer is kept.
            let err = unsafe { View::wrap(&spec.clone().space(space), ptr) }.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Unavailable, "{}", err.message());
        }
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED device bad-input checks: {}",
            e.message()
        );
        return;
    }
    let dev = in_space(spec.clone(), MemorySpace::Cuda);
    let host = View::allocate(&ViewSpec::new("H", ElementType::F64, &[5])).unwrap();
    // SAFETY: this thread alone uses the views.
    let err = unsafe { deep_copy(&dev, &host) }.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.message()
            .contains("extent(0) is 5 in \"H\" but 4 in \"D\""),
        "{}",
        err.message()
    );
    let huge = ViewSpec::new("huge", ElementType::F64, &[1 << 47]).space(MemorySpace::Cuda);
    let err = View::allocate(&huge).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfMemory, "{}", err.message());
    assert!(err.message().contains("view \"huge\""), "{}", err.message());
    // The device still works afterwards.
    // SAFETY: as above.
    unsafe { fill(&dev, &1.5f64.to_ne_bytes()) }.unwrap();
}
