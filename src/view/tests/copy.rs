//! deep_copy between every pair of layouts for random shapes of rank 1..8, element by element;
//! element sizes; the parallel path; overlapping views; fill.

use super::*;

/// The kinds of view a copy may go between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Right,
    Left,
    RightPadded,
    LeftPadded,
    /// LayoutStride with a random dimension order and random gaps.
    Strided,
    /// A subview of a larger LayoutRight parent (gaps between rows); the parent is returned too.
    Sub,
}

pub(super) const KINDS: [Kind; 6] = [
    Kind::Right,
    Kind::Left,
    Kind::RightPadded,
    Kind::LeftPadded,
    Kind::Strided,
    Kind::Sub,
];

/// Marks the parent's elements outside a `Kind::Sub` view, to catch stray writes.
pub(super) const UNTOUCHED: u64 = 0xdead_beef;

/// A zero-filled u64 view of `kind`, and for `Kind::Sub` its parent.
fn make(kind: Kind, extents: &[usize], rng: &mut Rng) -> (View, Option<View>) {
    if kind == Kind::Sub {
        let bigger: Vec<usize> = (0..extents.len()).map(|d| extents[d] + d % 2).collect();
        let parent = u64_view("parent", &bigger, Layout::Right);
        for index in indices(&bigger) {
            set(&parent, &index, UNTOUCHED);
        }
        let sub = parent.subview(&sub_slices(extents)).unwrap();
        for index in indices(extents) {
            set(&sub, &index, 0);
        }
        return (sub, Some(parent));
    }
    (View::allocate(&spec_of(kind, extents, rng)).unwrap(), None)
}

/// The spec of a u64 view of `kind` (for `Kind::Sub`: of its parent, one larger in every odd
/// dimension, LayoutRight; `sub_slices` cuts the subview out of it).
pub(super) fn spec_of(kind: Kind, extents: &[usize], rng: &mut Rng) -> ViewSpec {
    let spec = ViewSpec::new(&format!("{kind:?}"), ElementType::U64, extents);
    match kind {
        Kind::Right => spec,
        Kind::Left => spec.layout(Layout::Left),
        Kind::RightPadded => spec.padded(),
        Kind::LeftPadded => spec.layout(Layout::Left).padded(),
        Kind::Strided => {
            let mut order: Vec<usize> = (0..extents.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.range(0, i));
            }
            let mut strides = vec![0; extents.len()];
            let mut next = 1;
            for d in order {
                strides[d] = next;
                next = next * extents[d] + rng.range(0, 2);
            }
            spec.strides(&strides)
        }
        Kind::Sub => {
            let bigger: Vec<usize> = (0..extents.len()).map(|d| extents[d] + d % 2).collect();
            ViewSpec::new("parent", ElementType::U64, &bigger)
        }
    }
}

/// The slices that cut a `Kind::Sub` view of `extents` out of its parent.
pub(super) fn sub_slices(extents: &[usize]) -> Vec<Slice> {
    (0..extents.len())
        .map(|d| Slice::Range((d % 2) as i64, (d % 2 + extents[d]) as i64))
        .collect()
}

/// A random shape of `rank`: long stride-one dimensions at low ranks (so padding shows), short
/// ones at high ranks (so the tests stay fast).
pub(super) fn shape(rank: usize, rng: &mut Rng) -> Vec<usize> {
    (0..rank)
        .map(|d| {
            if rank <= 3 && (d == 0 || d == rank - 1) {
                rng.range(33, 37)
            } else {
                rng.range(1, if rank <= 4 { 5 } else { 3 })
            }
        })
        .collect()
}

fn check_copy(dst: &View, parent: Option<&View>, src: &View, what: &str) {
    for index in indices(src.extents()) {
        assert_eq!(get(dst, &index), tag(&index), "{what} at {index:?}");
    }
    if let Some(parent) = parent {
        let inside = indices(parent.extents())
            .into_iter()
            .filter(|i| get(parent, i) != UNTOUCHED)
            .count();
        assert_eq!(inside, dst.size(), "{what}: writes outside the subview");
    }
}

#[test]
fn deep_copy_between_every_pair_of_layouts_for_random_shapes_of_rank_1_to_8() {
    let mut rng = Rng(0x5eed);
    for rank in 1..=MAX_RANK {
        let extents = shape(rank, &mut rng);
        for from in KINDS {
            let (src, _src_parent) = make(from, &extents, &mut rng);
            fill_with_tags(&src);
            for to in KINDS {
                let (dst, dst_parent) = make(to, &extents, &mut rng);
                // SAFETY: this thread alone uses the views.
                unsafe { deep_copy(&dst, &src) }.unwrap();
                check_copy(
                    &dst,
                    dst_parent.as_ref(),
                    &src,
                    &format!("{from:?} -> {to:?} {extents:?}"),
                );
            }
        }
    }
}

#[test]
fn deep_copy_moves_elements_of_every_size_between_layouts() {
    let types = [
        ElementType::I8,
        ElementType::U16,
        ElementType::F32,
        ElementType::ComplexF32,
        ElementType::ComplexF64,
        ElementType::Opaque(3),
        ElementType::Opaque(24),
    ];
    let extents = [5, 6, 7];
    for element in types {
        let size = element.size();
        let src =
            View::allocate(&ViewSpec::new("src", element, &extents).layout(Layout::Left)).unwrap();
        let dst = View::allocate(&ViewSpec::new("dst", element, &extents)).unwrap();
        let byte = |index: &[usize], b: usize| (tag(index) >> (b % 8 * 8)) as u8 ^ b as u8;
        for index in indices(&extents) {
            let p = src.element_ptr(&as_i64(&index)).unwrap().as_ptr();
            for b in 0..size {
                // SAFETY: inside the element at a checked address.
                unsafe { p.add(b).write(byte(&index, b)) };
            }
        }
        // SAFETY: this thread alone uses the views.
        unsafe { deep_copy(&dst, &src) }.unwrap();
        for index in indices(&extents) {
            let p = dst.element_ptr(&as_i64(&index)).unwrap().as_ptr();
            for b in 0..size {
                // SAFETY: as above.
                assert_eq!(
                    unsafe { p.add(b).read() },
                    byte(&index, b),
                    "{element} {index:?}"
                );
            }
        }
    }
}

#[test]
fn large_copies_run_on_threads_and_stay_correct() {
    // 10 MB each way: above the parallel threshold. Checked through raw slices to stay fast.
    let (rows, cols) = (1200, 1100);
    let left = u64_view("left", &[rows, cols], Layout::Left);
    let right = u64_view("right", &[rows, cols], Layout::Right);
    let again = u64_view("again", &[rows, cols], Layout::Right);
    let n = rows * cols;
    // SAFETY: each view holds `n` u64 and this thread alone uses them.
    unsafe {
        let l = std::slice::from_raw_parts_mut(left.data().cast::<u64>(), n);
        for j in 0..cols {
            for i in 0..rows {
                l[i + j * rows] = (i * cols + j) as u64;
            }
        }
        deep_copy(&right, &left).unwrap();
        let r = std::slice::from_raw_parts(right.data().cast::<u64>(), n);
        assert!(r.iter().enumerate().all(|(k, &v)| v == k as u64));
        deep_copy(&again, &right).unwrap(); // contiguous: one memcpy per thread
        let a = std::slice::from_raw_parts(again.data().cast::<u64>(), n);
        assert!(a == r);
    }
}

#[test]
fn large_transposes_of_4_byte_elements_and_of_unaligned_memory_stay_correct() {
    // Above the streaming threshold: f32 goes through non-temporal stores, the unaligned
    // destination through ordinary ones.
    let extents = [150, 160, 110];
    let n: usize = extents.iter().product();
    let spec =
        |label: &str, layout| ViewSpec::new(label, ElementType::F32, &extents).layout(layout);
    let src = View::allocate(&spec("src", Layout::Left)).unwrap();
    let dst = View::allocate(&spec("dst", Layout::Right)).unwrap();
    let mut bytes = vec![0u8; n * 4 + 1];
    let unaligned = std::ptr::NonNull::new(bytes.as_mut_ptr().wrapping_add(1)).unwrap();
    // SAFETY: `bytes` holds the n elements after its first byte and outlives the view.
    let odd = unsafe { View::wrap(&spec("odd", Layout::Right), unaligned) }.unwrap();
    let value = |i: usize, j: usize, k: usize| (i * 1_000_000 + j * 1000 + k) as f32;
    // SAFETY: views of n f32 used by this thread alone; `odd` is read unaligned.
    unsafe {
        let s = std::slice::from_raw_parts_mut(src.data().cast::<f32>(), n);
        for k in 0..extents[2] {
            for j in 0..extents[1] {
                for i in 0..extents[0] {
                    s[i + extents[0] * (j + extents[1] * k)] = value(i, j, k);
                }
            }
        }
        deep_copy(&dst, &src).unwrap();
        deep_copy(&odd, &src).unwrap();
        let d = std::slice::from_raw_parts(dst.data().cast::<f32>(), n);
        let o = odd.data().cast::<f32>();
        for i in 0..extents[0] {
            for j in 0..extents[1] {
                for k in 0..extents[2] {
                    let at = (i * extents[1] + j) * extents[2] + k;
                    assert_eq!(d[at], value(i, j, k));
                    assert_eq!(o.add(at).read_unaligned(), value(i, j, k));
                }
            }
        }
    }
}

#[test]
fn large_transposes_of_8_byte_elements_with_odd_extents_stay_correct() {
    // Above the streaming threshold (stream.rs), both ways, with odd extents along both tiled
    // dimensions, so tiles end in odd rows and columns. 151 x 160 x 111 doubles, about 21 MB.
    let extents = [151, 160, 111];
    let n: usize = extents.iter().product();
    let spec =
        |label: &str, layout| ViewSpec::new(label, ElementType::F64, &extents).layout(layout);
    let src = View::allocate(&spec("src", Layout::Left)).unwrap();
    let dst = View::allocate(&spec("dst", Layout::Right)).unwrap();
    let back = View::allocate(&spec("back", Layout::Left)).unwrap();
    let value = |i: usize, j: usize, k: usize| (i * 1_000_000 + j * 1000 + k) as f64;
    let left_at = |i: usize, j: usize, k: usize| i + extents[0] * (j + extents[1] * k);
    // SAFETY: views of n f64 used by this thread alone.
    unsafe {
        let s = std::slice::from_raw_parts_mut(src.data().cast::<f64>(), n);
        for k in 0..extents[2] {
            for j in 0..extents[1] {
                for i in 0..extents[0] {
                    s[left_at(i, j, k)] = value(i, j, k);
                }
            }
        }
        deep_copy(&dst, &src).unwrap();
        deep_copy(&back, &dst).unwrap();
        let d = std::slice::from_raw_parts(dst.data().cast::<f64>(), n);
        let b = std::slice::from_raw_parts(back.data().cast::<f64>(), n);
        for i in 0..extents[0] {
            for j in 0..extents[1] {
                for k in 0..extents[2] {
                    assert_eq!(d[(i * extents[1] + j) * extents[2] + k], value(i, j, k));
                    assert_eq!(b[left_at(i, j, k)], value(i, j, k));
                }
            }
        }
    }
}

#[test]
fn deep_copy_of_a_view_onto_itself_or_an_overlapping_view_reads_the_source_first() {
    let a = u64_view("a", &[10], Layout::Right);
    fill_with_tags(&a);
    let mirror = a.create_mirror_view().unwrap();
    // SAFETY: this thread alone uses the views.
    unsafe { deep_copy(&mirror, &a) }.unwrap();
    let front = a.subview(&[Slice::Range(0, 9)]).unwrap();
    let back = a.subview(&[Slice::Range(1, 10)]).unwrap();
    // SAFETY: as above.
    unsafe { deep_copy(&back, &front) }.unwrap();
    assert_eq!(get(&a, &[0]), tag(&[0]));
    for i in 1..10 {
        assert_eq!(get(&a, &[i]), tag(&[i - 1]), "element {i}");
    }
    // Two interleaved columns of one matrix.
    let m = u64_view("m", &[4, 2], Layout::Right);
    fill_with_tags(&m);
    let col0 = m.subview(&[Slice::All, Slice::Index(0)]).unwrap();
    let col1 = m.subview(&[Slice::All, Slice::Index(1)]).unwrap();
    // SAFETY: as above.
    unsafe { deep_copy(&col1, &col0) }.unwrap();
    for i in 0..4 {
        assert_eq!(get(&m, &[i, 1]), tag(&[i, 0]));
    }
}

#[test]
fn fill_writes_the_value_to_every_element_and_nothing_else() {
    let mut rng = Rng(0xf111);
    for rank in 0..=MAX_RANK {
        let extents = shape(rank, &mut rng);
        for kind in KINDS {
            let (view, parent) = make(kind, &extents, &mut rng);
            // SAFETY: this thread alone uses the view.
            unsafe { fill(&view, &7u64.to_ne_bytes()) }.unwrap();
            for index in indices(&extents) {
                assert_eq!(get(&view, &index), 7, "{kind:?} {index:?}");
            }
            if let Some(parent) = parent {
                let written = indices(parent.extents())
                    .into_iter()
                    .filter(|i| get(&parent, i) == 7)
                    .count();
                assert_eq!(written, view.size(), "{kind:?}: writes outside the subview");
            }
        }
    }
    let odd = View::allocate(&ViewSpec::new("odd", ElementType::Opaque(3), &[4, 5])).unwrap();
    // SAFETY: as above.
    unsafe { fill(&odd, &[1, 2, 3]) }.unwrap();
    // SAFETY: 20 elements of 3 bytes, contiguous.
    let bytes = unsafe { std::slice::from_raw_parts(odd.data(), 60) };
    assert!(bytes.chunks(3).all(|c| c == [1, 2, 3]));
}
