//! resize keeps the overlapping elements; realloc keeps none; other views keep the old memory.

use super::*;

#[test]
fn resize_preserves_the_overlapping_index_range_in_every_direction() {
    for layout in [Layout::Right, Layout::Left] {
        let mut a = u64_view("A", &[4, 5, 6], layout);
        fill_with_tags(&a);
        let old = a.clone();
        // SAFETY: this thread alone uses the views.
        unsafe { a.resize(&[6, 3, 7]) }.unwrap();
        assert_eq!(
            (a.extents(), a.layout(), a.label()),
            (&[6, 3, 7][..], layout, "A")
        );
        for index in indices(a.extents()) {
            let kept = index[0] < 4 && index[1] < 5 && index[2] < 6;
            let expected = if kept { tag(&index) } else { 0 };
            assert_eq!(get(&a, &index), expected, "{layout} {index:?}");
        }
        // The old allocation is untouched and still held by `old`.
        assert_eq!(old.extents(), &[4, 5, 6]);
        assert_eq!(get(&old, &[3, 4, 5]), tag(&[3, 4, 5]));
        assert_eq!((old.use_count(), a.use_count()), (1, 1));
    }
}

#[test]
fn resize_of_a_padded_scalar_and_of_a_subview_allocates_like_the_view() {
    let mut p = View::allocate(&ViewSpec::new("P", ElementType::U64, &[2, 40]).padded()).unwrap();
    fill_with_tags(&p);
    // SAFETY: as above.
    unsafe { p.resize(&[3, 50]) }.unwrap();
    assert!(p.is_padded());
    assert_eq!(p.strides(), &[56, 1]);
    assert_eq!(get(&p, &[1, 39]), tag(&[1, 39]));
    let mut s = u64_view("s", &[], Layout::Right);
    set(&s, &[], 42);
    // SAFETY: as above.
    unsafe { s.resize(&[]) }.unwrap();
    assert_eq!(get(&s, &[]), 42);
    let parent = u64_view("parent", &[4, 4], Layout::Right);
    fill_with_tags(&parent);
    let mut rows = parent.subview(&[Slice::Range(1, 3), Slice::All]).unwrap();
    // SAFETY: as above.
    unsafe { rows.resize(&[3, 4]) }.unwrap();
    assert_eq!(get(&rows, &[0, 2]), tag(&[1, 2]));
    assert_eq!(get(&rows, &[2, 2]), 0);
    assert_eq!(parent.use_count(), 1);
}

#[test]
fn realloc_gives_fresh_zeroed_memory_of_the_new_shape() {
    let a = u64_view("A", &[4, 4], Layout::Left);
    fill_with_tags(&a);
    let b = a.realloc(&[2, 9]).unwrap();
    assert_eq!(
        (b.extents(), b.layout(), b.label()),
        (&[2, 9][..], Layout::Left, "A")
    );
    assert!(indices(b.extents()).iter().all(|i| get(&b, i) == 0));
    // check_realloc finds bad extents while the view is still there.
    let e = b.check_realloc(&[2, 0]).unwrap_err();
    assert!(e.message().contains("extent(1) is 0"), "{}", e.message());
    assert_eq!(b.extents(), &[2, 9]);
}
