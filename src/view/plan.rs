//! How deep_copy and fill walk two strided arrays: a plan of cache-sized tiles spread over the
//! host threads (004: deep copy "between different array layouts ... requires permutation").
//!
//! Dimensions of extent 1 are dropped, and dimensions that are contiguous with each other in
//! both arrays are merged, so copies between equal layouts become a few long runs, and a copy
//! between two contiguous arrays of the same layout is a single run, done as one memcpy per
//! thread. Otherwise the copy is tiled over two dimensions: the one with the smallest
//! destination stride (`col`, written sequentially) and the one with the smallest source stride
//! (`row`). When they differ the copy transposes, and a tile of 1 KiB each way (cut evenly,
//! so no sliver is left at an edge) keeps the source and destination lines it touches in the
//! caches while it is done; large transposes also prefetch the next tile's source (a few lines
//! before each row of the current tile) and write with non-temporal stores (stream.rs). When
//! the two dimensions are the same, `row` is the next dimension by destination stride and tiles
//! are long runs. The remaining dimensions index the tiles. Each tile is one block of
//! `parallel::for_each_block`.

use super::kernel::{self, Tile};
use super::parallel;
use super::stream;

/// Bytes along each side of a transposing tile: sixteen cache lines, so each source run and each
/// destination run of the tile is whole lines and long enough that a page, once translated,
/// serves a kilobyte (measured best on the 2-core VM against 256 and 512 bytes and 2 KiB, for
/// 2-D and 3-D transposes of 256 MiB).
const TILE_EDGE_BYTES: usize = 1024;

/// Bytes in a cache line.
const LINE_BYTES: usize = 64;

/// Bytes one block moves at most: a square tile of doubles, which stays in a 2 MiB L2 with its
/// destination lines.
const BLOCK_BYTES: usize = 128 << 10;

/// Transposing copies of at least this many bytes prefetch and stream (stream.rs); smaller
/// ones stay in the caches, where the destination is likely read next.
const STREAMING_MIN_BYTES: usize = 8 << 20;

/// A contiguous copy is split into pieces of at least this size, one memcpy each.
const MIN_CHUNK_BYTES: usize = 1 << 20;

/// One dimension of a copy: extent and strides in elements in the destination and the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dim {
    extent: usize,
    dst: usize,
    src: usize,
}

/// Where the values come from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// Elements at this address, with the plan's source strides.
    Elements(*const u8),
    /// One value at this address, written to every element (fill).
    Value(*const u8),
}

/// A copy or fill of one array shape between two sets of strides.
#[derive(Debug)]
pub(crate) struct Plan {
    size: usize,
    col: Dim,
    row: Dim,
    tile_cols: usize,
    tile_rows: usize,
    col_tiles: usize,
    row_tiles: usize,
    /// The other dimensions, the one with the largest destination stride first.
    outer: Vec<Dim>,
    blocks: usize,
    elements: usize,
    /// A large transpose: prefetch the next tile's source, store with non-temporal stores.
    streaming: bool,
}

impl Plan {
    /// The plan for `extents` with strides (in elements) `dst_strides` and `src_strides` (all
    /// zero for a fill) and `size`-byte elements.
    pub(crate) fn new(
        extents: &[usize],
        dst_strides: &[usize],
        src_strides: &[usize],
        size: usize,
    ) -> Plan {
        let mut dims: Vec<Dim> = (0..extents.len())
            .filter(|&d| extents[d] > 1)
            .map(|d| Dim {
                extent: extents[d],
                dst: dst_strides[d],
                src: src_strides[d],
            })
            .collect();
        dims.sort_by_key(|d| (d.dst, d.src));
        let mut dims = merge(dims);
        if dims.is_empty() {
            // One element (rank 0, or every extent 1).
            dims.push(Dim {
                extent: 1,
                dst: 1,
                src: 1,
            });
        }
        let elements: usize = dims.iter().map(|d| d.extent).product();
        let col = dims.remove(0);
        // The dimension with the smallest source stride; the destination order breaks ties, so
        // `col` itself wins when it is (also) the source's fastest one.
        let fastest_src = dims
            .iter()
            .enumerate()
            .min_by_key(|(_, d)| d.src)
            .filter(|(_, d)| d.src < col.src)
            .map(|(i, _)| i);
        let transposing = fastest_src.is_some();
        let row = match fastest_src {
            Some(i) => dims.remove(i),
            None if !dims.is_empty() => dims.remove(0),
            None => Dim {
                extent: 1,
                dst: 0,
                src: 0,
            },
        };
        dims.reverse();
        // One run with unit strides on both sides: a few large chunks, one memcpy each.
        let (tile_cols, tile_rows) =
            if dims.is_empty() && row.extent == 1 && col.dst == 1 && col.src == 1 {
                let chunks = (elements * size / MIN_CHUNK_BYTES).clamp(1, parallel::thread_count());
                (elements.div_ceil(chunks), 1)
            } else {
                tile_shape(col.extent, row.extent, size, transposing)
            };
        let col_tiles = col.extent.div_ceil(tile_cols);
        let row_tiles = row.extent.div_ceil(tile_rows);
        let blocks = dims.iter().map(|d| d.extent).product::<usize>() * col_tiles * row_tiles;
        // Prefetching walks the source runs along `row`, so that must be source-contiguous.
        let streaming = transposing && row.src == 1 && elements * size >= STREAMING_MIN_BYTES;
        Plan {
            size,
            col,
            row,
            tile_cols,
            tile_rows,
            col_tiles,
            row_tiles,
            outer: dims,
            blocks,
            elements,
            streaming,
        }
    }

    /// Whether the plan is one run with unit strides on both sides: one memcpy (per thread).
    #[cfg(test)]
    pub(crate) fn is_contiguous(&self) -> bool {
        self.outer.is_empty() && self.row.extent == 1 && self.col.dst == 1 && self.col.src == 1
    }

    /// Runs the plan from `source` into the array at `dst`.
    ///
    /// # Safety
    /// `dst` (and, for `Source::Elements`, the source address) must be valid for every offset
    /// the strides given to `new` reach; destination elements must not overlap the source, and
    /// no other thread may access the destination, or write the source, meanwhile.
    pub(crate) unsafe fn run(&self, dst: *mut u8, source: Source) {
        let bytes = self.elements
            * self.size
            * if let Source::Elements(_) = source {
                2
            } else {
                1
            };
        // Raw pointers are not Sync; blocks get them as addresses.
        let (dst, src, fill) = match source {
            Source::Elements(p) => (dst as usize, p as usize, false),
            Source::Value(p) => (dst as usize, p as usize, true),
        };
        parallel::for_each_block(self.blocks, bytes, &|block| {
            let (dst_offset, src_offset, tile) = self.block(block);
            let dst = (dst as *mut u8).add(dst_offset * self.size);
            // SAFETY (of the block): the offsets come from in-range indices of the plan's
            // dimensions, and blocks write disjoint destination elements.
            if fill {
                kernel::fill_tile(self.size, dst, src as *const u8, &tile);
            } else if self.streaming {
                let mut prefetch = if block + 1 < self.blocks {
                    let (_, next, next_tile) = self.block(block + 1);
                    let next = (src as *const u8).wrapping_add(next * self.size);
                    stream::Prefetch::new(self.size, next, Some(&next_tile), tile.rows)
                } else {
                    stream::Prefetch::new(self.size, src as *const u8, None, tile.rows)
                };
                let src = (src as *const u8).add(src_offset * self.size);
                stream::copy_tile_streaming(self.size, dst, src, &tile, &mut prefetch);
            } else {
                let src = (src as *const u8).add(src_offset * self.size);
                kernel::copy_tile(self.size, dst, src, &tile);
            }
        });
    }

    /// The destination and source offsets (in elements) of block `block` and its tile.
    fn block(&self, block: usize) -> (usize, usize, Tile) {
        let col_tile = block % self.col_tiles;
        let mut rest = block / self.col_tiles;
        let row_tile = rest % self.row_tiles;
        rest /= self.row_tiles;
        let (col, row) = (col_tile * self.tile_cols, row_tile * self.tile_rows);
        let mut dst = col * self.col.dst + row * self.row.dst;
        let mut src = col * self.col.src + row * self.row.src;
        for d in self.outer.iter().rev() {
            let i = rest % d.extent;
            rest /= d.extent;
            dst += i * d.dst;
            src += i * d.src;
        }
        let tile = Tile {
            cols: self.tile_cols.min(self.col.extent - col),
            rows: self.tile_rows.min(self.row.extent - row),
            dst_col: self.col.dst,
            dst_row: self.row.dst,
            src_col: self.col.src,
            src_row: self.row.src,
        };
        (dst, src, tile)
    }
}

/// Merges neighbours (in destination stride order) that are contiguous with each other in both
/// arrays into one dimension.
fn merge(dims: Vec<Dim>) -> Vec<Dim> {
    let mut merged: Vec<Dim> = Vec::with_capacity(dims.len());
    for d in dims {
        match merged.last_mut() {
            Some(m) if d.dst == m.dst * m.extent && d.src == m.src * m.extent => {
                m.extent *= d.extent;
            }
            _ => merged.push(d),
        }
    }
    merged
}

/// Columns and rows of a tile of `size`-byte elements.
/// `extent` cut into pieces of about `target` (at least one), of equal length rounded up to
/// `multiple`, so that no sliver is left at the end.
fn balanced(extent: usize, target: usize, multiple: usize) -> usize {
    let pieces = extent.div_ceil(target.max(1));
    extent
        .div_ceil(pieces)
        .next_multiple_of(multiple)
        .min(extent)
}

fn tile_shape(cols: usize, rows: usize, size: usize, transposing: bool) -> (usize, usize) {
    let budget = (BLOCK_BYTES / size).max(1);
    if transposing {
        // Square where both sides are long; a short side gives its share to the other. Sides
        // are whole cache lines of elements where the extent allows.
        let edge = (TILE_EDGE_BYTES / size).max(1);
        let line = (LINE_BYTES / size).max(1);
        let tile_cols = balanced(cols, edge, line);
        let tile_rows = balanced(rows, edge.max(budget / tile_cols), line);
        (
            balanced(cols, edge.max(budget / tile_rows), line),
            tile_rows,
        )
    } else {
        let tile_cols = cols.min(budget);
        (tile_cols, rows.min((budget / tile_cols).max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_contiguous_layouts_merge_into_one_run() {
        let plan = Plan::new(&[4, 5, 6], &[30, 6, 1], &[30, 6, 1], 8);
        assert!(plan.is_contiguous());
        assert_eq!(plan.col.extent, 120);
        let plan = Plan::new(&[4, 5, 6], &[1, 4, 20], &[1, 4, 20], 8);
        assert!(plan.is_contiguous());
    }

    #[test]
    fn padded_rows_merge_only_the_unpadded_dimensions() {
        // LayoutRight [4][5][6] with rows padded to 8: dims 0 and 1 merge, dim 2 is the run.
        let plan = Plan::new(&[4, 5, 6], &[40, 8, 1], &[40, 8, 1], 8);
        assert!(!plan.is_contiguous());
        assert_eq!(plan.col.extent, 6);
        assert_eq!(plan.row.extent, 20);
        assert!(plan.outer.is_empty());
    }

    #[test]
    fn a_transpose_tiles_the_two_fastest_dimensions() {
        // Right [3][100][200] from Left: dst-fastest dim 2, src-fastest dim 0.
        let plan = Plan::new(&[3, 100, 200], &[20000, 200, 1], &[1, 3, 300], 8);
        assert_eq!(
            plan.col,
            Dim {
                extent: 200,
                dst: 1,
                src: 300
            }
        );
        assert_eq!(
            plan.row,
            Dim {
                extent: 3,
                dst: 20000,
                src: 1
            }
        );
        assert_eq!(
            plan.outer,
            vec![Dim {
                extent: 100,
                dst: 200,
                src: 3
            }]
        );
        assert_eq!(plan.blocks, 100 * plan.col_tiles * plan.row_tiles);
    }

    #[test]
    fn tiles_cover_every_element_once() {
        for (extents, dst, src) in [
            (vec![37usize, 41], vec![41usize, 1], vec![1usize, 37]),
            (vec![3, 1000], vec![1000, 1], vec![1, 3]),
            (vec![5, 7, 9], vec![63, 9, 1], vec![63, 9, 1]),
        ] {
            let plan = Plan::new(&extents, &dst, &src, 8);
            let mut covered = vec![0u8; extents.iter().product()];
            for b in 0..plan.blocks {
                let (d, _, t) = plan.block(b);
                for r in 0..t.rows {
                    for c in 0..t.cols {
                        covered[d + r * t.dst_row + c * t.dst_col] += 1;
                    }
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "{extents:?}");
        }
    }
}
