//! Subviews: shared elements, rank reduction, layouts kept or turned into LayoutStride, and
//! subviews of subviews.

use super::*;

#[test]
fn a_subview_shares_elements_and_drops_indexed_dimensions() {
    let a = u64_view("A", &[4, 5, 6], Layout::Right);
    fill_with_tags(&a);
    let s = a
        .subview(&[Slice::Index(2), Slice::Range(1, 4), Slice::All])
        .unwrap();
    assert_eq!(s.rank(), 2);
    assert_eq!(s.extents(), &[3, 6]);
    assert_eq!(s.strides(), &[6, 1]);
    assert_eq!(s.label(), "A");
    for index in indices(s.extents()) {
        assert_eq!(get(&s, &index), tag(&[2, index[0] + 1, index[1]]));
    }
    set(&s, &[0, 0], 99);
    assert_eq!(get(&a, &[2, 1, 0]), 99);
    let scalar = a
        .subview(&[Slice::Index(3), Slice::Index(4), Slice::Index(5)])
        .unwrap();
    assert_eq!((scalar.rank(), scalar.span()), (0, 1));
    assert_eq!(get(&scalar, &[]), tag(&[3, 4, 5]));
}

#[test]
fn subviews_keep_their_parents_layout_only_while_the_strides_have_its_form() {
    let right = u64_view("R", &[4, 5, 6], Layout::Right);
    let rows = right
        .subview(&[Slice::Range(1, 3), Slice::All, Slice::All])
        .unwrap();
    assert_eq!((rows.layout(), rows.is_contiguous()), (Layout::Right, true));
    // Cutting the stride-one dimension keeps LayoutRight with a longer row stride (like LDA).
    let cut = right
        .subview(&[Slice::All, Slice::All, Slice::Range(0, 3)])
        .unwrap();
    assert_eq!((cut.layout(), cut.is_contiguous()), (Layout::Right, false));
    // Cutting a middle dimension does not.
    let middle = right
        .subview(&[Slice::All, Slice::Range(1, 3), Slice::All])
        .unwrap();
    assert_eq!(middle.layout(), Layout::Stride);
    let column = right
        .subview(&[Slice::All, Slice::Index(0), Slice::Index(0)])
        .unwrap();
    assert_eq!(
        (column.layout(), column.strides()),
        (Layout::Stride, &[30][..])
    );

    let left = u64_view("L", &[4, 5, 6], Layout::Left);
    let column = left
        .subview(&[Slice::All, Slice::Index(1), Slice::Index(2)])
        .unwrap();
    assert_eq!(
        (column.layout(), column.is_contiguous()),
        (Layout::Left, true)
    );
    let block = left
        .subview(&[Slice::Range(1, 3), Slice::All, Slice::Index(0)])
        .unwrap();
    assert_eq!(
        (block.layout(), block.strides()),
        (Layout::Left, &[1, 4][..])
    );
}

#[test]
fn a_subview_of_a_subview_composes_offsets_and_extents() {
    let a = u64_view("A", &[6, 7, 8], Layout::Left);
    fill_with_tags(&a);
    let s = a
        .subview(&[Slice::Range(1, 6), Slice::All, Slice::Range(2, 8)])
        .unwrap();
    let t = s
        .subview(&[Slice::Range(2, 4), Slice::Index(3), Slice::Range(1, 5)])
        .unwrap();
    assert_eq!(t.extents(), &[2, 4]);
    for index in indices(t.extents()) {
        let (i, k) = (index[0], index[1]);
        assert_eq!(
            get(&t, &index),
            tag(&[1 + 2 + i, 3, 2 + 1 + k]),
            "{index:?}"
        );
    }
    let u = t.subview(&[Slice::Index(1), Slice::Range(3, 4)]).unwrap();
    assert_eq!(get(&u, &[0]), tag(&[4, 3, 6]));
    assert_eq!(u.use_count(), a.use_count());
}
