//! The innermost loops of deep_copy and fill: one tile of `rows` x `cols` elements, moved with
//! the element size's own integer type so each element is one load and one store.
//!
//! Addresses need not be aligned to the element size (wrapped memory may not be), so elements
//! move with unaligned loads and stores, which cost nothing extra on the targets we run on.

use std::ptr;

/// One tile: `cols` elements along the inner dimension, `rows` along the outer one; strides in
/// elements in the destination and the source.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tile {
    pub cols: usize,
    pub rows: usize,
    pub dst_col: usize,
    pub dst_row: usize,
    pub src_col: usize,
    pub src_row: usize,
}

/// Copies a tile of `size`-byte elements from `src` to `dst`.
///
/// # Safety
/// Every element address the tile reaches must be valid (reads in `src`, writes in `dst`), and
/// no destination element may overlap a source element.
pub(crate) unsafe fn copy_tile(size: usize, dst: *mut u8, src: *const u8, tile: &Tile) {
    match size {
        1 => copy_typed::<u8>(dst, src, tile),
        2 => copy_typed::<u16>(dst, src, tile),
        4 => copy_typed::<u32>(dst, src, tile),
        8 => copy_typed::<u64>(dst, src, tile),
        16 => copy_typed::<u128>(dst, src, tile),
        _ => copy_bytes(size, dst, src, tile),
    }
}

/// Writes the `size`-byte value at `value` to every element of a tile (its source strides are
/// ignored).
///
/// # Safety
/// `value` must be valid for a read of `size` bytes and every destination element address valid
/// for writes, not overlapping `value`.
pub(crate) unsafe fn fill_tile(size: usize, dst: *mut u8, value: *const u8, tile: &Tile) {
    match size {
        1 => fill_typed::<u8>(dst, value, tile),
        2 => fill_typed::<u16>(dst, value, tile),
        4 => fill_typed::<u32>(dst, value, tile),
        8 => fill_typed::<u64>(dst, value, tile),
        16 => fill_typed::<u128>(dst, value, tile),
        _ => fill_bytes(size, dst, value, tile),
    }
}

#[inline(always)]
unsafe fn copy_typed<T: Copy>(dst: *mut u8, src: *const u8, t: &Tile) {
    let (dst, src) = (dst.cast::<T>(), src.cast::<T>());
    for row in 0..t.rows {
        let d = dst.wrapping_add(row * t.dst_row);
        let s = src.wrapping_add(row * t.src_row);
        if t.dst_col == 1 && t.src_col == 1 {
            // A run that is contiguous on both sides: the library memcpy.
            ptr::copy_nonoverlapping(s.cast::<u8>(), d.cast::<u8>(), t.cols * size_of::<T>());
        } else {
            for col in 0..t.cols {
                let value = s.add(col * t.src_col).read_unaligned();
                d.add(col * t.dst_col).write_unaligned(value);
            }
        }
    }
}

#[inline(always)]
unsafe fn fill_typed<T: Copy>(dst: *mut u8, value: *const u8, t: &Tile) {
    let (dst, value) = (dst.cast::<T>(), value.cast::<T>().read_unaligned());
    for row in 0..t.rows {
        let d = dst.wrapping_add(row * t.dst_row);
        for col in 0..t.cols {
            d.add(col * t.dst_col).write_unaligned(value);
        }
    }
}

/// Elements of other sizes (user structs): a byte copy each.
unsafe fn copy_bytes(size: usize, dst: *mut u8, src: *const u8, t: &Tile) {
    for row in 0..t.rows {
        for col in 0..t.cols {
            ptr::copy_nonoverlapping(
                src.add((row * t.src_row + col * t.src_col) * size),
                dst.add((row * t.dst_row + col * t.dst_col) * size),
                size,
            );
        }
    }
}

unsafe fn fill_bytes(size: usize, dst: *mut u8, value: *const u8, t: &Tile) {
    for row in 0..t.rows {
        for col in 0..t.cols {
            ptr::copy_nonoverlapping(
                value,
                dst.add((row * t.dst_row + col * t.dst_col) * size),
                size,
            );
        }
    }
}
