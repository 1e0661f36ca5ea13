//! The compressed-row-storage graph of execute-after dependences (000 §2.4.1, §3.3.1).
//!
//! Row `i` lists the items that execute after item `i`: `j = C(k)` for `k` in `[R(i), R(i+1))`
//! means F(j) begins only after F(i) has returned. Construction checks the structural
//! requirements of 000 §3.3.1 in one pass, O(N + NZ): `R(0) = 0`, `R(N) = NZ`, `R(i) <= R(i+1)`
//! and `C(k) < N`. Whether the graph is acyclic is checked when a work graph is planned from it
//! (`acyclic`), because a CRS by itself (for example one about to be transposed) may be any
//! graph.
//!
//! Indices are stored as `u32`: the scheduler's hot loop reads `R` and `C` for every item, and
//! half-width indices halve that traffic. The limits are checked with a message:
//! N <= `MAX_ITEMS`, NZ <= `MAX_ENTRIES`.

use crate::error::{Error, ErrorKind, Result};
use std::fmt::Display;

/// Largest number of work items (rows) in a graph, 2^32 - 1, so that items, and positions in a
/// plan's schedule, are 32-bit.
pub const MAX_ITEMS: usize = u32::MAX as usize;
/// Largest number of dependences (entries) in a graph, 2^32 - 1, so that offsets are 32-bit.
pub const MAX_ENTRIES: usize = u32::MAX as usize;

/// An integer type callers may build a graph from: signed or unsigned, of any width. Values that
/// are negative or do not fit the graph's range are reported with the value.
pub trait CrsIndex: Copy + Display {
    /// The value as an unsigned integer, or `None` when it is negative.
    fn to_u64(self) -> Option<u64>;
}

macro_rules! crs_index {
    ($($t:ty),*) => {$(
        impl CrsIndex for $t {
            #[inline]
            fn to_u64(self) -> Option<u64> {
                u64::try_from(self).ok()
            }
        }
    )*};
}
crs_index!(i32, i64, u32, u64, usize);

/// A directed graph in compressed row storage: `row_map` (N + 1 offsets) and `entries` (NZ
/// column indices). Immutable once built; share it with `Arc`.
#[derive(Clone, PartialEq, Eq)]
pub struct Crs {
    row_map: Box<[u32]>,
    entries: Box<[u32]>,
}

impl Crs {
    /// Builds a graph from caller arrays, copying them into the compact form. `row_map` holds
    /// N + 1 offsets (N >= 0, so at least `[0]`), `entries` the NZ = `row_map[N]` targets.
    ///
    /// Fails with `InvalidArgument` naming the first offset (by row) or entry (by position and
    /// row) that breaks 000 §3.3.1, or a size above the limits; `OutOfMemory` if the copy fails.
    pub fn new<I: CrsIndex>(row_map: &[I], entries: &[I]) -> Result<Crs> {
        check_sizes(row_map.len(), entries.len())?;
        let mut offsets = reserve(row_map.len(), "row_map")?;
        for (i, &v) in row_map.iter().enumerate() {
            match v.to_u64() {
                Some(x) if x <= MAX_ENTRIES as u64 => offsets.push(x as u32),
                Some(_) => {
                    return Err(Error::invalid_argument(format!(
                        "row_map[{i}] = {v} is above the number of entries, {}; offsets index \
                         into entries",
                        entries.len()
                    )))
                }
                None => {
                    return Err(Error::invalid_argument(format!(
                        "row_map[{i}] = {v} is negative; offsets are >= 0"
                    )))
                }
            }
        }
        check_offsets(&offsets, entries.len())?;
        let mut targets = reserve(entries.len(), "entries")?;
        let n = offsets.len() - 1;
        for (i, row) in offsets.windows(2).enumerate() {
            let start = row[0] as usize;
            for (k, &v) in (start..).zip(&entries[start..row[1] as usize]) {
                match v.to_u64() {
                    Some(x) if x < n as u64 => targets.push(x as u32),
                    _ => return Err(bad_entry(k, i, v, n)),
                }
            }
        }
        Ok(Crs {
            row_map: offsets.into_boxed_slice(),
            entries: targets.into_boxed_slice(),
        })
    }

    /// Builds a graph from arrays already in the compact form, without copying; the same checks
    /// as `new`.
    pub fn from_parts(row_map: Vec<u32>, entries: Vec<u32>) -> Result<Crs> {
        check_sizes(row_map.len(), entries.len())?;
        check_offsets(&row_map, entries.len())?;
        let n = row_map.len() - 1;
        for (i, row) in row_map.windows(2).enumerate() {
            let start = row[0] as usize;
            for (k, &v) in (start..).zip(&entries[start..row[1] as usize]) {
                if v as usize >= n {
                    return Err(bad_entry(k, i, v, n));
                }
            }
        }
        Ok(Crs {
            row_map: row_map.into_boxed_slice(),
            entries: entries.into_boxed_slice(),
        })
    }

    /// Builds from parts that are valid by construction (the transpose).
    pub(super) fn from_valid_parts(row_map: Vec<u32>, entries: Vec<u32>) -> Crs {
        debug_assert!(check_offsets(&row_map, entries.len()).is_ok());
        Crs {
            row_map: row_map.into_boxed_slice(),
            entries: entries.into_boxed_slice(),
        }
    }

    /// N, the number of rows (work items).
    pub fn num_rows(&self) -> usize {
        self.row_map.len() - 1
    }

    /// NZ, the number of entries (dependences).
    pub fn num_entries(&self) -> usize {
        self.entries.len()
    }

    /// The N + 1 row offsets.
    pub fn row_map(&self) -> &[u32] {
        &self.row_map
    }

    /// The NZ column indices.
    pub fn entries(&self) -> &[u32] {
        &self.entries
    }

    /// The entries of row `i`: the items that execute after item `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[u32] {
        &self.entries[self.row_map[i] as usize..self.row_map[i + 1] as usize]
    }
}

impl std::fmt::Debug for Crs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crs")
            .field("num_rows", &self.num_rows())
            .field("num_entries", &self.num_entries())
            .finish()
    }
}

fn check_sizes(offsets: usize, entries: usize) -> Result<()> {
    if offsets > MAX_ITEMS + 1 {
        return Err(Error::invalid_argument(format!(
            "a graph of {} items exceeds the limit of {MAX_ITEMS} work items",
            offsets - 1
        )));
    }
    if entries > MAX_ENTRIES {
        return Err(Error::invalid_argument(format!(
            "{entries} entries exceed the limit of {MAX_ENTRIES} dependences per graph"
        )));
    }
    Ok(())
}

fn reserve(len: usize, name: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!("no memory to copy the {len} values of {name}"),
        )
    })?;
    Ok(out)
}

#[cold]
fn bad_entry(k: usize, row: usize, value: impl Display, n: usize) -> Error {
    let range = if n == 0 {
        "the graph has no items".to_string()
    } else {
        format!("items are 0..={}", n - 1)
    };
    Error::invalid_argument(format!(
        "entries[{k}] = {value} (in row {row}) is not an item of this graph: {range}; if the \
         indices are 1-based, subtract 1 from each"
    ))
}

/// The offset requirements of 000 §3.3.1: at least one offset, R(0) = 0, no decrease, and
/// R(N) = NZ.
fn check_offsets(row_map: &[u32], num_entries: usize) -> Result<()> {
    let Some(&first) = row_map.first() else {
        return Err(Error::invalid_argument(
            "row_map is empty: it needs N + 1 offsets, so [0] for a graph of no items",
        ));
    };
    if first != 0 {
        return Err(Error::invalid_argument(format!(
            "row_map[0] = {first}, but row 0 must start at entry 0; if the offsets are 1-based, \
             subtract 1 from each"
        )));
    }
    if let Some(i) = row_map.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::invalid_argument(format!(
            "row {i} ends before it starts: row_map[{i}] = {} > row_map[{}] = {}; offsets must \
             not decrease",
            row_map[i],
            i + 1,
            row_map[i + 1]
        )));
    }
    let n = row_map.len() - 1;
    let last = row_map[n] as usize;
    if last != num_entries {
        return Err(Error::invalid_argument(format!(
            "row_map[{n}] = {last} (the end of the last row) must equal the number of entries, \
             {num_entries}"
        )));
    }
    Ok(())
}
