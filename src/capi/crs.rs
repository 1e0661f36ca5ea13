//! `td_crs`: a graph in compressed row storage (000 §3.3.1 `Crs`), the input of a work graph,
//! behind a C handle.

use super::boundary::{call, null_argument, Out};
use super::error::{CError, CResult};
use super::handle::{self, Handle};
use super::status::td_status;
use crate::runtime;
use crate::work_graph::{Crs, MAX_ENTRIES, MAX_ITEMS};
use std::sync::Arc;

/// A directed graph in compressed row storage: N rows (work items) whose entries are the items
/// that execute after them. Immutable; reference-counted: td_crs_retain / td_crs_release.
pub struct td_crs {
    _private: [u8; 0],
}

unsafe impl Handle for td_crs {
    type Object = Arc<Crs>;
    const NAME: &'static str = "td_crs";
    const TAG: u64 = 0x7464_5f63_7273_2121; // "td_crs!!"
}

/// The graph behind a handle, shared (a work graph keeps its own reference).
pub(crate) unsafe fn crs_arg<'a>(crs: *const td_crs, name: &str) -> CResult<&'a Arc<Crs>> {
    handle::object(crs, name)
}

/// A caller array of `len` elements as a slice; NULL is accepted only when `len` is 0.
unsafe fn array_arg<'a>(ptr: *const i64, len: usize, name: &str) -> CResult<&'a [i64]> {
    if len == 0 {
        Ok(&[])
    } else if ptr.is_null() {
        Err(null_argument(name))
    } else {
        Ok(std::slice::from_raw_parts(ptr, len))
    }
}

/// A count argument in [0, max].
fn count_arg(value: i64, name: &str, max: usize) -> CResult<usize> {
    usize::try_from(value)
        .ok()
        .filter(|&v| v <= max)
        .ok_or_else(|| {
            CError::invalid(format!(
                "argument `{name}` is {value}; it must be in [0, {max}]"
            ))
        })
}

/// Creates a graph of `num_rows` work items from `row_map` (num_rows + 1 offsets) and `entries`
/// (`num_entries` item indices): `j = entries[k]` for `k` in `[row_map[i], row_map[i+1])` means
/// item j executes after item i (000 §3.3.1). Indices are 0-based (Fortran callers: see
/// taskdag_crs%create_one_based). Duplicate entries are allowed and harmless.
///
/// Checks, in O(N + NZ): row_map[0] = 0, offsets never decrease, row_map[num_rows] =
/// num_entries, every entry in [0, num_rows), and the limits num_rows <= 4294967295 and
/// num_entries <= 4294967295 (TD_WORK_GRAPH_MAX_ITEMS, TD_WORK_GRAPH_MAX_ENTRIES). Cycles are allowed here (a graph may be built to be transposed);
/// td_work_graph_create rejects them.
///
/// Ownership: the arrays are copied (into 32-bit indices); the caller keeps them and may free
/// them on return. `*out` receives a new graph with one reference, released with
/// td_crs_release. On failure `*out` is not written.
/// Thread safety: any thread, after td_initialize.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`row_map`, `out`, or `entries` with num_entries > 0);
/// TD_ERROR_INVALID_ARGUMENT (the message names the offset's row or the entry's position, row
/// and value); TD_ERROR_OUT_OF_MEMORY; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_crs_create(
    num_rows: i64,
    row_map: *const i64,
    num_entries: i64,
    entries: *const i64,
    out: *mut *mut td_crs,
) -> td_status {
    call("td_crs_create", || {
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_crs_create")?;
        let rows = count_arg(num_rows, "num_rows", MAX_ITEMS)?;
        let nz = count_arg(num_entries, "num_entries", MAX_ENTRIES)?;
        if row_map.is_null() {
            return Err(null_argument("row_map"));
        }
        let offsets = array_arg(row_map, rows + 1, "row_map")?;
        let targets = array_arg(entries, nz, "entries")?;
        let crs = Crs::new(offsets, targets)?;
        out.write(handle::new_handle(Arc::new(Arc::new(crs))));
        Ok(())
    })
}

/// Creates the transpose of `crs` (000 §3.3.1 `transpose_crs`): row j of the result lists, in
/// increasing order, every i whose row in `crs` contains j. Use it to turn "item j waits for
/// these items" rows into the "these items run after item i" rows a work graph needs.
///
/// Ownership: `*out` receives a new graph with one reference (td_crs_release); `crs` is
/// unchanged. Thread safety: any thread, after td_initialize; `crs` may be in use elsewhere.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_crs_transpose(crs: *const td_crs, out: *mut *mut td_crs) -> td_status {
    call("td_crs_transpose", || {
        let graph = crs_arg(crs, "crs")?;
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_crs_transpose")?;
        out.write(handle::new_handle(Arc::new(Arc::new(graph.transpose()))));
        Ok(())
    })
}

/// Adds a reference to `crs`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_crs_retain(crs: *mut td_crs) -> td_status {
    call("td_crs_retain", || handle::retain(crs, "crs"))
}

/// Releases one reference to `crs`. Work graphs created from it keep the graph alive on their
/// own. NULL is a no-op.
///
/// Thread safety: any thread, but no other thread may use this reference concurrently.
/// Returns TD_OK; TD_ERROR_INVALID_HANDLE (wrong type or already released).
#[no_mangle]
pub unsafe extern "C" fn td_crs_release(crs: *mut td_crs) -> td_status {
    call("td_crs_release", || handle::release(crs, "crs"))
}

/// Writes N, the number of rows (work items), to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_crs_num_rows(crs: *const td_crs, out: *mut i64) -> td_status {
    call("td_crs_num_rows", || {
        let graph = crs_arg(crs, "crs")?;
        Out::new(out, "out")?.write(graph.num_rows() as i64);
        Ok(())
    })
}

/// Writes NZ, the number of entries (dependences), to `*out`.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_crs_num_entries(crs: *const td_crs, out: *mut i64) -> td_status {
    call("td_crs_num_entries", || {
        let graph = crs_arg(crs, "crs")?;
        Out::new(out, "out")?.write(graph.num_entries() as i64);
        Ok(())
    })
}

/// Copies the graph's arrays out as 0-based int64_t: its N + 1 offsets into `row_map` and its NZ
/// entries into `entries` (sizes from td_crs_num_rows and td_crs_num_entries). Either array
/// may be NULL to skip it; `row_map_len` and `entries_len` are the caller's capacities.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`crs`);
/// TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT when a capacity is too small (nothing is
/// written then).
#[no_mangle]
pub unsafe extern "C" fn td_crs_export(
    crs: *const td_crs,
    row_map: *mut i64,
    row_map_len: usize,
    entries: *mut i64,
    entries_len: usize,
) -> td_status {
    call("td_crs_export", || {
        let graph = crs_arg(crs, "crs")?;
        let wanted = [
            (row_map, row_map_len, graph.row_map(), "row_map"),
            (entries, entries_len, graph.entries(), "entries"),
        ];
        for &(ptr, len, from, name) in &wanted {
            if !ptr.is_null() && len < from.len() {
                return Err(CError::invalid(format!(
                    "`{name}_len` is {len}, but the graph has {} {name} values; pass an array \
                     of at least that many",
                    from.len()
                )));
            }
        }
        for (ptr, _, from, _) in wanted {
            if !ptr.is_null() {
                let to = std::slice::from_raw_parts_mut(ptr, from.len());
                to.iter_mut()
                    .zip(from)
                    .for_each(|(t, &f)| *t = i64::from(f));
            }
        }
        Ok(())
    })
}
