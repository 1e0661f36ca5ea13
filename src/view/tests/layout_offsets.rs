//! The index formulas of every layout, for every rank 0..8, against offsets computed by hand
//! (Horner's rule over the extents, with the padded row length where there is one).

use super::*;

/// Element offset of `index` in `view`, through the checked element address.
fn offset(view: &View, index: &[usize]) -> usize {
    let ptr = view.element_ptr(&as_i64(index)).unwrap();
    (ptr.as_ptr() as usize - view.data() as usize) / view.element().size()
}

/// Extents for rank `rank`: small, with a stride-one extent of 35 so that padding (8-byte
/// elements: rows above 32 elements round up to multiples of 8) shows.
fn extents(rank: usize, layout: Layout) -> Vec<usize> {
    let mut e: Vec<usize> = (0..rank).map(|d| 2 + d % 2).collect();
    if rank > 0 {
        let fast = if layout == Layout::Left { 0 } else { rank - 1 };
        e[fast] = 35;
    }
    e
}

/// C order: ((i0 * e1 + i1) * e2 + i2) ..., with the last extent replaced by the row length.
fn right_offset(index: &[usize], extents: &[usize], row: usize) -> usize {
    let r = index.len();
    (0..r).fold(0, |acc, k| {
        acc * if k == r - 1 { row } else { extents[k] } + index[k]
    })
}

/// Fortran order: ((i_{r-1} * e_{r-2} + i_{r-2}) * ... ) * e0 + i0, with e0 the column length.
fn left_offset(index: &[usize], extents: &[usize], column: usize) -> usize {
    (0..index.len()).rev().fold(0, |acc, k| {
        acc * if k == 0 { column } else { extents[k] } + index[k]
    })
}

#[test]
fn layout_right_and_left_offsets_match_hand_computed_ones_for_every_rank() {
    for rank in 0..=MAX_RANK {
        for (layout, pad) in [
            (Layout::Right, false),
            (Layout::Right, true),
            (Layout::Left, false),
            (Layout::Left, true),
        ] {
            let e = extents(rank, layout);
            let mut spec = ViewSpec::new("A", ElementType::F64, &e).layout(layout);
            spec.pad = pad;
            let view = View::allocate(&spec).unwrap();
            // Padding applies only with a second dimension: 35 -> 40.
            let row = if rank == 0 {
                1
            } else if pad && rank > 1 {
                40
            } else {
                35
            };
            let mut last = 0;
            for index in indices(&e) {
                let expected = if rank == 0 {
                    0
                } else if layout == Layout::Right {
                    right_offset(&index, &e, row)
                } else {
                    left_offset(&index, &e, row)
                };
                assert_eq!(
                    offset(&view, &index),
                    expected,
                    "{layout} pad={pad} {index:?}"
                );
                last = last.max(expected);
            }
            assert_eq!(view.span(), last + 1, "{layout} pad={pad} rank {rank}");
            assert_eq!(
                view.is_contiguous(),
                !(pad && rank > 1),
                "{layout} rank {rank}"
            );
            assert_eq!(view.layout(), layout);
            assert_eq!(view.rank(), rank);
            assert_eq!(view.extents(), &e[..]);
        }
    }
}

#[test]
fn layout_stride_offsets_are_the_dot_product_with_the_strides_for_every_rank() {
    for rank in 0..=MAX_RANK {
        let e: Vec<usize> = (0..rank).map(|d| 2 + d % 3).collect();
        // Dimensions nested in reverse-odd order with a gap of 1 after each: unique, not
        // contiguous.
        let mut order: Vec<usize> = (0..rank).filter(|d| d % 2 == 1).rev().collect();
        order.extend((0..rank).filter(|d| d % 2 == 0));
        let mut strides = vec![0; rank];
        let mut next = 1;
        for &d in &order {
            strides[d] = next;
            next = next * e[d] + 1;
        }
        let view =
            View::allocate(&ViewSpec::new("S", ElementType::F64, &e).strides(&strides)).unwrap();
        assert_eq!(view.layout(), Layout::Stride);
        assert_eq!(view.strides(), &strides[..]);
        let mut last = 0;
        for index in indices(&e) {
            let expected: usize = (0..rank).map(|k| index[k] * strides[k]).sum();
            assert_eq!(offset(&view, &index), expected, "rank {rank} {index:?}");
            last = last.max(expected);
        }
        assert_eq!(view.span(), last + 1);
        assert_eq!(view.is_contiguous(), rank <= 1);
    }
}

#[test]
fn worked_examples_of_the_three_layouts() {
    let right = u64_view("R", &[3, 4, 5], Layout::Right);
    assert_eq!(right.strides(), &[20, 5, 1]);
    assert_eq!(offset(&right, &[1, 2, 3]), 20 + 10 + 3);
    let left = u64_view("L", &[3, 4, 5], Layout::Left);
    assert_eq!(left.strides(), &[1, 3, 12]);
    assert_eq!(offset(&left, &[1, 2, 3]), 1 + 6 + 36);
    // 4-byte elements: 16 per cache line; rows above 64 elements are padded.
    let padded = View::allocate(&ViewSpec::new("P", ElementType::F32, &[3, 100]).padded()).unwrap();
    assert_eq!(padded.strides(), &[112, 1]);
    assert_eq!(padded.span(), 2 * 112 + 100);
    assert_eq!(padded.data() as usize % PAD_ALIGNMENT_BYTES, 0);
    // Short rows stay unpadded even when asked.
    let short = View::allocate(&ViewSpec::new("Q", ElementType::F32, &[3, 60]).padded()).unwrap();
    assert_eq!(short.strides(), &[60, 1]);
    let scalar = u64_view("s", &[], Layout::Right);
    assert_eq!((scalar.rank(), scalar.span(), scalar.size()), (0, 1, 1));
}
