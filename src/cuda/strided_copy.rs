//! Copies between two strided layouts of the same shape on the device (the permuting copy behind
//! `deep_copy` between views of different layouts, 004): up to `MAX_RANK` dimensions, any element
//! size, strides in elements, possibly negative.
//!
//! The host simplifies the shape before the launch: it drops dimensions of extent 1, orders the
//! dimensions so that the destination's smallest stride is innermost (consecutive threads then
//! write consecutive addresses), and merges dimensions that are contiguous in both layouts. A copy
//! that ends up contiguous in both is a plain `cuMemcpy`. When the destination's stride-one
//! dimension is not the source's but another dimension is stride-one in the source (a
//! Left <-> Right copy; any other dimensions form a batch), 4-, 8- and 16-byte elements go
//! through a tiled transpose in shared memory (`td_transpose_copy_*`), which reads and writes
//! whole sectors. Everything else goes to the general kernel (`td_strided_copy`), which moves
//! each element in the widest aligned unit (16, 8, 4, 2 or 1 bytes) that divides the element,
//! both base addresses and every stride. Both are in `cuda/strided_copy.cu`.

use super::gpu::Gpu;
use super::memory::{copy_bytes, DeviceBuffer};
use crate::error::{Error, Result};
use std::ffi::c_void;

/// Most dimensions a strided copy takes: a view's (the kernel's TD_STRIDED_COPY_MAX_RANK must
/// match).
pub use crate::view::MAX_RANK;

/// The shape of a copy: `extents[d]` elements along dimension `d`, element `(i0, i1, ...)` at
/// `sum(i_d * stride_d)` elements from each side's base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedCopy {
    pub elem_bytes: usize,
    pub extents: Vec<usize>,
    pub src_strides: Vec<isize>,
    pub dst_strides: Vec<isize>,
}

/// One dimension in bytes, after validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dim {
    extent: u64,
    src: i64,
    dst: i64,
}

/// Argument of `td_strided_copy`; `#[repr(C)]` as `td_strided_copy_desc` in the kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Desc {
    dst: u64,
    src: u64,
    count: u64,
    rank: u32,
    /// Bytes moved per access: 16, 8, 4, 2 or 1.
    unit: u32,
    /// Units per element.
    units: u32,
    _pad: u32,
    extents: [u64; MAX_RANK],
    src_strides: [i64; MAX_RANK],
    dst_strides: [i64; MAX_RANK],
}

/// Most batch dimensions of the tiled transpose (the kernel's TD_TRANSPOSE_MAX_BATCH).
const MAX_BATCH: usize = MAX_RANK - 2;
/// Edge of a square transpose tile in elements (the kernel's TD_TRANSPOSE_TILE and TY) and rows
/// of its block.
const TILE: u64 = 32;
const TILE_ROWS: u32 = 8;

/// Argument of `td_transpose_copy_*`; `#[repr(C)]` as `td_transpose_desc` in the kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct TransposeDesc {
    dst: u64,
    src: u64,
    nx: u64,
    ny: u64,
    src_x: i64,
    dst_y: i64,
    tiles_x: u64,
    tiles_y: u64,
    tiles: u64,
    batch_rank: u32,
    _pad: u32,
    batch_extents: [u64; MAX_BATCH],
    batch_src: [i64; MAX_BATCH],
    batch_dst: [i64; MAX_BATCH],
}

/// Byte offsets `[lowest, highest + elem_bytes)` that one side of a copy touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub start: i64,
    pub end: i64,
}

impl StridedCopy {
    fn dims(&self) -> Result<Vec<Dim>> {
        let rank = self.extents.len();
        if rank > MAX_RANK || self.src_strides.len() != rank || self.dst_strides.len() != rank {
            return Err(Error::invalid_argument(format!(
                "strided copy: rank {rank} with {} source and {} destination strides; give one \
                 stride per extent on each side, at most {MAX_RANK} dimensions",
                self.src_strides.len(),
                self.dst_strides.len()
            )));
        }
        if self.elem_bytes == 0 {
            return Err(Error::invalid_argument(
                "strided copy: the element size is 0 bytes; give the element size in bytes",
            ));
        }
        let overflow = || {
            Error::invalid_argument(format!(
                "strided copy: extents {:?} with strides {:?} / {:?} of {}-byte elements span \
                 more bytes than an address holds",
                self.extents, self.src_strides, self.dst_strides, self.elem_bytes
            ))
        };
        let elem = i64::try_from(self.elem_bytes).map_err(|_| overflow())?;
        (0..rank)
            .map(|d| {
                let bytes = |stride: isize| (stride as i64).checked_mul(elem).ok_or_else(overflow);
                Ok(Dim {
                    extent: self.extents[d] as u64,
                    src: bytes(self.src_strides[d])?,
                    dst: bytes(self.dst_strides[d])?,
                })
            })
            .collect()
    }

    /// Number of elements copied.
    pub fn count(&self) -> usize {
        self.extents.iter().product()
    }

    /// The bytes each side touches, relative to its base: (source, destination). `None` for an
    /// empty copy.
    pub fn byte_ranges(&self) -> Result<Option<(ByteRange, ByteRange)>> {
        let dims = self.dims()?;
        if dims.iter().any(|d| d.extent == 0) {
            return Ok(None);
        }
        let range = |stride: fn(&Dim) -> i64| -> Option<ByteRange> {
            let (mut start, mut end) = (0i64, self.elem_bytes as i64);
            for d in &dims {
                let reach = stride(d).checked_mul(d.extent as i64 - 1)?;
                if reach < 0 {
                    start = start.checked_add(reach)?;
                } else {
                    end = end.checked_add(reach)?;
                }
            }
            Some(ByteRange { start, end })
        };
        match (range(|d| d.src), range(|d| d.dst)) {
            (Some(src), Some(dst)) => Ok(Some((src, dst))),
            _ => Err(Error::invalid_argument(format!(
                "strided copy: extents {:?} with strides {:?} / {:?} span more bytes than an \
                 address holds",
                self.extents, self.src_strides, self.dst_strides
            ))),
        }
    }
}

/// The dimensions to launch over: extent-1 dimensions dropped, destination strides descending,
/// dimensions contiguous on both sides merged.
fn simplify(mut dims: Vec<Dim>) -> Vec<Dim> {
    dims.retain(|d| d.extent != 1);
    dims.sort_by_key(|d| std::cmp::Reverse(d.dst.unsigned_abs()));
    let mut merged: Vec<Dim> = Vec::with_capacity(dims.len());
    for d in dims {
        match merged.last_mut() {
            Some(outer)
                if outer.src == d.src * d.extent as i64 && outer.dst == d.dst * d.extent as i64 =>
            {
                *outer = Dim {
                    extent: outer.extent * d.extent,
                    src: d.src,
                    dst: d.dst,
                };
            }
            _ => merged.push(d),
        }
    }
    merged
}

/// Copies `shape` from `src` (at byte `src_offset`) to `dst` (at byte `dst_offset`), checking
/// that both sides stay inside their buffers.
pub fn copy_strided(
    dst: &mut DeviceBuffer,
    dst_offset: usize,
    src: &DeviceBuffer,
    src_offset: usize,
    shape: &StridedCopy,
) -> Result<()> {
    let Some((src_range, dst_range)) = shape.byte_ranges()? else {
        return Ok(());
    };
    let inside = |offset: usize, range: ByteRange, buffer: &DeviceBuffer, side: &str| {
        let start = offset as i64 + range.start;
        let end = offset as i64 + range.end;
        if start >= 0 && end as u64 <= buffer.len() as u64 {
            Ok(())
        } else {
            Err(Error::invalid_argument(format!(
                "strided copy: the {side} spans bytes [{start}, {end}) of a {}-byte buffer; \
                 check its offset, extents and strides",
                buffer.len()
            )))
        }
    };
    inside(src_offset, src_range, src, "source")?;
    inside(dst_offset, dst_range, dst, "destination")?;
    // SAFETY: both sides were checked to lie inside their buffers, which are distinct (`&mut`).
    unsafe {
        copy_strided_raw(
            dst.gpu(),
            dst.address() + dst_offset as u64,
            src.address() + src_offset as u64,
            shape,
        )
    }
}

/// Copies `shape` from device-accessible address `src` to `dst` (device or pinned memory).
///
/// # Safety
/// Every byte of `shape.byte_ranges()` must be readable at `src` and writable at `dst`, and the
/// two sides must not overlap.
pub unsafe fn copy_strided_raw(gpu: &Gpu, dst: u64, src: u64, shape: &StridedCopy) -> Result<()> {
    let dims = shape.dims()?;
    if dims.iter().any(|d| d.extent == 0) {
        return Ok(());
    }
    let dims = simplify(dims);
    let elem = shape.elem_bytes as i64;
    let contiguous = match dims.as_slice() {
        [] => Some(elem as usize),
        [d] if d.src == elem && d.dst == elem => Some(d.extent as usize * elem as usize),
        _ => None,
    };
    if let Some(bytes) = contiguous {
        return copy_bytes(dst, src, bytes);
    }
    let unit = [16u64, 8, 4, 2, 1]
        .into_iter()
        .find(|&u| {
            let fits = |v: i64| v.unsigned_abs() % u == 0;
            fits(elem)
                && dst % u == 0
                && src % u == 0
                && dims.iter().all(|d| fits(d.src) && fits(d.dst))
        })
        .expect("1 divides everything");
    if matches!(unit, 4 | 8 | 16) && unit == elem as u64 {
        if let Some(desc) = transpose(&dims, elem, dst, src) {
            return launch_transpose(gpu, desc, unit);
        }
    }
    let mut desc = Desc {
        dst,
        src,
        count: dims.iter().map(|d| d.extent).product(),
        rank: dims.len() as u32,
        unit: unit as u32,
        units: (elem as u64 / unit) as u32,
        ..Desc::default()
    };
    for (i, d) in dims.iter().enumerate() {
        desc.extents[i] = d.extent;
        desc.src_strides[i] = d.src;
        desc.dst_strides[i] = d.dst;
    }
    let kernel = gpu.kernel("strided_copy", "td_strided_copy")?;
    let block = 256u32;
    let grid = desc
        .count
        .div_ceil(u64::from(block))
        .min(u64::from(gpu.multiprocessors()) * 32) as u32;
    let mut params = [&mut desc as *mut Desc as *mut c_void];
    gpu.launch(kernel, grid.max(1), block, &mut params)
}

/// The tiled transpose of simplified `dims` (destination strides descending), if the copy is
/// one: the last dimension `x` is stride-one in the destination, another dimension `y` is
/// stride-one in the source, and both span at least half a tile (narrower ones would leave
/// most of each tile idle, where the general kernel does as well).
fn transpose(dims: &[Dim], elem: i64, dst: u64, src: u64) -> Option<TransposeDesc> {
    let (x, outer) = dims.split_last()?;
    let wide = |extent: u64| extent >= TILE / 2;
    if x.dst != elem || x.src == elem || !wide(x.extent) || x.src == 0 {
        return None;
    }
    let y = outer.iter().position(|d| d.src == elem && d.dst != 0)?;
    if !wide(outer[y].extent) {
        return None;
    }
    let mut desc = TransposeDesc {
        dst,
        src,
        nx: x.extent,
        ny: outer[y].extent,
        src_x: x.src,
        dst_y: outer[y].dst,
        tiles_x: x.extent.div_ceil(TILE),
        tiles_y: outer[y].extent.div_ceil(TILE),
        ..TransposeDesc::default()
    };
    let mut batch = 1u64;
    for (_, d) in outer.iter().enumerate().filter(|&(i, _)| i != y) {
        let k = desc.batch_rank as usize;
        desc.batch_extents[k] = d.extent;
        desc.batch_src[k] = d.src;
        desc.batch_dst[k] = d.dst;
        desc.batch_rank += 1;
        batch *= d.extent;
    }
    desc.tiles = desc.tiles_x * desc.tiles_y * batch;
    Some(desc)
}

/// Runs the tiled transpose of `unit`-byte elements (4, 8 or 16; others use the general kernel).
unsafe fn launch_transpose(gpu: &Gpu, mut desc: TransposeDesc, unit: u64) -> Result<()> {
    let name = match unit {
        4 => "td_transpose_copy_4",
        8 => "td_transpose_copy_8",
        16 => "td_transpose_copy_16",
        _ => unreachable!("transpose() only accepts 4-, 8- and 16-byte elements"),
    };
    let kernel = gpu.kernel("strided_copy", name)?;
    // Eight blocks of 256 threads per SM: a full H100 SM, each block looping over tiles.
    let grid = desc.tiles.min(u64::from(gpu.multiprocessors()) * 8) as u32;
    let mut params = [&mut desc as *mut TransposeDesc as *mut c_void];
    gpu.launch_2d(kernel, grid.max(1), (TILE as u32, TILE_ROWS), &mut params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(extent: u64, src: i64, dst: i64) -> Dim {
        Dim { extent, src, dst }
    }

    #[test]
    fn contiguous_layouts_merge_into_one_dimension() {
        // 3 x 4 row-major on both sides, 8-byte elements.
        let dims = simplify(vec![dim(3, 32, 32), dim(4, 8, 8)]);
        assert_eq!(dims, vec![dim(12, 8, 8)]);
    }

    #[test]
    fn transpose_orders_by_destination_stride_and_keeps_both_dimensions() {
        // Source row-major 3 x 4, destination column-major.
        let dims = simplify(vec![dim(3, 16, 4), dim(4, 4, 12)]);
        assert_eq!(dims, vec![dim(4, 4, 12), dim(3, 16, 4)]);
    }

    #[test]
    fn left_to_right_copies_are_tiled_transposes_with_the_rest_as_batch() {
        // 64 x 48 doubles, Left -> Right.
        let dims = simplify(vec![dim(64, 8, 384), dim(48, 512, 8)]);
        let t = transpose(&dims, 8, 0, 0).unwrap();
        assert_eq!((t.nx, t.ny, t.src_x, t.dst_y), (48, 64, 512, 384));
        assert_eq!((t.tiles_x, t.tiles_y, t.tiles, t.batch_rank), (2, 2, 4, 0));
        // A 40^3 cube of 4-byte elements, Left -> Right: the middle dimension is the batch.
        let n = 40i64;
        let dims = simplify(vec![
            dim(40, 4, 4 * n * n),
            dim(40, 4 * n, 4 * n),
            dim(40, 4 * n * n, 4),
        ]);
        let t = transpose(&dims, 4, 0, 0).unwrap();
        assert_eq!((t.nx, t.ny, t.batch_rank, t.tiles), (40, 40, 1, 4 * 40));
        assert_eq!(
            (t.batch_extents[0], t.batch_src[0], t.batch_dst[0]),
            (40, 160, 160)
        );
    }

    #[test]
    fn copies_without_a_swapped_stride_one_dimension_or_too_narrow_are_not_transposes() {
        // Padded rows on one side only: both stride-one dimensions agree.
        let dims = simplify(vec![dim(64, 8 * 72, 8 * 64), dim(64, 8, 8)]);
        assert!(transpose(&dims, 8, 0, 0).is_none());
        // The source has no stride-one dimension (a fill: source strides 0).
        let dims = simplify(vec![dim(64, 0, 8 * 64), dim(64, 0, 8)]);
        assert!(transpose(&dims, 8, 0, 0).is_none());
        // Four columns: narrower than half a tile.
        let dims = simplify(vec![dim(1000, 8, 32), dim(4, 8000, 8)]);
        assert!(transpose(&dims, 8, 0, 0).is_none());
    }

    #[test]
    fn unit_extents_are_dropped() {
        let dims = simplify(vec![dim(1, 100, 7), dim(5, 4, 4), dim(1, 3, 3)]);
        assert_eq!(dims, vec![dim(5, 4, 4)]);
    }

    #[test]
    fn byte_ranges_cover_negative_strides() {
        let shape = StridedCopy {
            elem_bytes: 4,
            extents: vec![3, 2],
            src_strides: vec![-2, 1],
            dst_strides: vec![1, 3],
        };
        let (src, dst) = shape.byte_ranges().unwrap().unwrap();
        assert_eq!(src, ByteRange { start: -16, end: 8 });
        assert_eq!(dst, ByteRange { start: 0, end: 24 });
    }

    #[test]
    fn mismatched_ranks_and_zero_sized_elements_are_rejected() {
        let bad = StridedCopy {
            elem_bytes: 4,
            extents: vec![3, 2],
            src_strides: vec![1],
            dst_strides: vec![1, 3],
        };
        assert!(bad.byte_ranges().unwrap_err().message().contains("rank 2"));
        let zero = StridedCopy {
            elem_bytes: 0,
            extents: vec![3],
            src_strides: vec![1],
            dst_strides: vec![1],
        };
        assert!(zero
            .byte_ranges()
            .unwrap_err()
            .message()
            .contains("0 bytes"));
        let deep = StridedCopy {
            elem_bytes: 1,
            extents: vec![1; 9],
            src_strides: vec![1; 9],
            dst_strides: vec![1; 9],
        };
        assert!(deep.byte_ranges().is_err());
    }
}
