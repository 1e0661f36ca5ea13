//! when_all (000 §2.2.2, §3.2.2; 002 §2.1.2, Fig. 3.5): a future that completes when all of its
//! dependences have, so that a task with one dependence can wait for many.
//!
//! Creation finds the last incomplete dependence while the caller still holds them all, copies
//! the dependences before it into a block (the ones after it are never examined), and takes
//! internal holds only on the incomplete dependences before it, which the scan will examine
//! later from other threads; complete ones are dropped from the array (they stay complete), so
//! they need no hold. The scan then waits on one dependence at a time, from the last to the first
//! (`Place::advance_when_all`), as 002 Fig. 3.5 does: tasks spawned earlier at higher priority
//! tend to finish first, so the when_all usually waits once. A when_all with no incomplete
//! dependence (or none at all) is complete when it is returned.
//!
//! A when_all with more dependences than one pool block holds is built as a tree: when_alls of
//! chunks of the dependences, and a when_all of the chunks that owns them.

use super::bytes;
use super::future::Future;
use super::header::{when_all_bytes, Access, HeaderInit, Kind, TaskHeader, INTERNAL_REF, USER_REF};
use super::place::{Count, Place};
use super::scheduler::{Scheduler, Shared};
use crate::error::{Error, Result};
use crate::priority::Priority;
use std::ptr::NonNull;

/// Creates a when_all of `deps` (entities of this scheduler that the caller holds; null entries
/// are skipped) and returns it with one user reference.
#[inline(always)]
pub(crate) fn when_all(
    place: &Place<'_>,
    deps: &[*mut TaskHeader],
    what: &str,
) -> Result<NonNull<TaskHeader>> {
    build(place, deps, Holds::Borrowed, USER_REF, what)
}

/// Whether the when_all takes over one internal hold on each dependence (chunks it created
/// itself), or borrows the caller's references.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
    Borrowed,
    Owned,
}

#[inline(always)]
fn build(
    place: &Place<'_>,
    deps: &[*mut TaskHeader],
    holds: Holds,
    result_ref: u64,
    what: &str,
) -> Result<NonNull<TaskHeader>> {
    if deps.len() > place.shared.when_all_per_block {
        // A copy: a place whose reference no call receives stays in registers (constant for
        // one worker). A when_all's creation never sets `scheduler_unused`: its caller holds the
        // scheduler.
        return build_tree(&place.detached(), deps, holds, result_ref, what);
    }
    build_block(place, deps, holds, result_ref, what)
}

/// A when_all of more dependences than one block holds: when_alls of chunks, and one of them.
#[inline(never)]
fn build_tree(
    place: &Place<'_>,
    deps: &[*mut TaskHeader],
    holds: Holds,
    result_ref: u64,
    what: &str,
) -> Result<NonNull<TaskHeader>> {
    let per_block = place.shared.when_all_per_block;
    let mut chunks: Vec<*mut TaskHeader> = Vec::with_capacity(deps.len().div_ceil(per_block));
    for chunk in deps.chunks(per_block) {
        match build(place, chunk, holds, INTERNAL_REF, what) {
            Ok(c) => chunks.push(c.as_ptr()),
            Err(e) => {
                release_all(place, &chunks);
                if holds == Holds::Owned {
                    release_all(place, &deps[chunks.len() * per_block..]);
                }
                return Err(e);
            }
        }
    }
    build(place, &chunks, Holds::Owned, result_ref, what)
}

/// A when_all of at most one block's worth of dependences.
#[inline(always)]
fn build_block(
    place: &Place<'_>,
    deps: &[*mut TaskHeader],
    holds: Holds,
    result_ref: u64,
    what: &str,
) -> Result<NonNull<TaskHeader>> {
    let count = deps.len();
    let bytes = when_all_bytes(count).unwrap_or(usize::MAX);
    let block_lg2 = place.block_lg2(bytes);
    let block = match place.allocate(bytes, block_lg2, what) {
        Ok(block) => block,
        Err(e) => {
            if holds == Holds::Owned {
                release_all(&place.detached(), deps);
            }
            return Err(e);
        }
    };
    let init = HeaderInit {
        kind: Kind::WhenAll,
        generation: place.next_generation(),
        priority: Priority::Regular,
        team: false,
        scheduler: place.shared,
        function: None,
        destroy: None,
        size: count as u32,
        alloc_size: bytes as u32,
        block_lg2,
        refs: result_ref,
    };
    // SAFETY: a fresh block of `bytes` bytes, ours.
    let w = unsafe { TaskHeader::init(block, &init) };
    place.count(Count::WhenAlls);
    let header = unsafe { w.as_ref() };
    let array = TaskHeader::dependences_ptr(w);
    // SAFETY (dereferences below): the caller holds every dependence during this call.
    let last_incomplete = deps
        .iter()
        .rposition(|&d| !d.is_null() && !unsafe { (*d).is_complete() });
    let retained = match holds {
        Holds::Owned => {
            // SAFETY: the array has room for `count` pointers.
            unsafe {
                bytes::copy(
                    array.cast(),
                    deps.as_ptr().cast(),
                    std::mem::size_of_val(deps),
                );
            }
            count
        }
        // Only the entries before the last incomplete dependence are written: the scan waits
        // on that one first (below, from `deps`), and a free reads only the held ones.
        Holds::Borrowed => match last_incomplete {
            None => 0,
            Some(last) => {
                // One past the last dependence held: the entries from it on are null or never
                // written, so neither the scan nor a free looks at them (none at all when every
                // earlier one was done).
                let mut held_end = 0;
                for (i, &d) in deps[..last].iter().enumerate() {
                    let entry = match NonNull::new(d) {
                        // Complete for good: nothing to wait for, so no hold either.
                        Some(d) if !unsafe { d.as_ref() }.is_complete() => {
                            unsafe { d.as_ref() }.add_ref(INTERNAL_REF, place.access);
                            held_end = i + 1;
                            d.as_ptr()
                        }
                        _ => std::ptr::null_mut(),
                    };
                    // SAFETY: `i < count`, the array's room.
                    unsafe { *array.add(i) = entry };
                }
                held_end
            }
        },
    };
    // SAFETY: the when_all is not published yet.
    unsafe { header.set_retained(retained as u32) };
    match last_incomplete {
        None => {
            // SAFETY: as above.
            unsafe { header.set_scan(0) };
            place.complete_when_all(w);
        }
        Some(last) if holds == Holds::Borrowed => {
            // The scan's first step, here: it waits on the last incomplete dependence, and goes
            // on from the last one held, since the entries between them are null.
            // SAFETY: as above; written before the push, as in the scan.
            unsafe { header.set_scan(retained as u32) };
            // SAFETY: the when_all is in no queue; the caller holds `deps[last]` (non-null).
            let d = unsafe { NonNull::new_unchecked(deps[last]) };
            if !unsafe { place.when_all_waits_on(w, d) } {
                // Completed meanwhile (another thread): on to the held ones.
                place.advance_when_all(w);
            }
        }
        Some(last) => {
            // SAFETY: as above.
            unsafe { header.set_scan(last as u32 + 1) };
            place.advance_when_all(w);
        }
    }
    Ok(w)
}

/// Drops one internal hold on each non-null entity.
fn release_all(place: &Place<'_>, entities: &[*mut TaskHeader]) {
    for &e in entities {
        if let Some(e) = NonNull::new(e) {
            place.release_internal(e);
        }
    }
}

/// Runs `f` at the place for the calling thread: its worker if it runs a wait of `scheduler`,
/// else a host place in a foreign section.
#[inline(always)]
fn at_place<R>(
    scheduler: &Scheduler,
    what: &str,
    f: impl FnOnce(&Place<'_>) -> Result<R>,
) -> Result<R> {
    let shared = scheduler.shared();
    if let Some(worker) = shared.current_worker() {
        let place = Place::worker(shared, worker);
        return f(&place);
    }
    at_host_place(shared, what, f)
}

/// `at_place` from a thread that runs no wait of the scheduler.
#[inline(never)]
fn at_host_place<R>(
    shared: &Shared,
    what: &str,
    f: impl FnOnce(&Place<'_>) -> Result<R>,
) -> Result<R> {
    let guard = shared.enter_foreign(what)?;
    let place = Place::host(shared, &guard);
    f(&place)
}

impl Scheduler {
    /// A future that completes when all of `dependences` have (000 §3.2.2 `when_all`); complete
    /// at once when they all are (or there are none). From the host, or from a task of this
    /// scheduler.
    ///
    /// Errors: `InvalidArgument` for a future of another scheduler, `PoolExhausted`, `Busy` from
    /// a thread outside a running wait.
    pub fn when_all(&self, dependences: &[&Future]) -> Result<Future> {
        let shared = self.shared();
        let deps: Vec<*mut TaskHeader> = dependences
            .iter()
            .map(|f| f.checked_header(shared).map(NonNull::as_ptr))
            .collect::<Result<_>>()?;
        at_place(self, "when_all", |place| when_all(place, &deps, "when_all"))
            .map(Future::from_header)
    }

    /// A when_all of the futures `generator(i)` returns for i in 0..count (000 §3.2.2); `None`
    /// entries are skipped.
    pub fn when_all_generate(
        &self,
        count: usize,
        mut generator: impl FnMut(usize) -> Option<Future>,
    ) -> Result<Future> {
        let futures: Vec<Option<Future>> = (0..count).map(&mut generator).collect();
        let shared = self.shared();
        let deps: Vec<*mut TaskHeader> = futures
            .iter()
            .map(|f| match f {
                Some(f) => f.checked_header(shared).map(NonNull::as_ptr),
                None => Ok(std::ptr::null_mut()),
            })
            .collect::<Result<_>>()?;
        at_place(self, "when_all", |place| when_all(place, &deps, "when_all"))
            .map(Future::from_header)
    }

    /// `when_all` over validated entities of this scheduler (null entries skipped).
    #[inline(always)]
    pub(crate) fn when_all_raw(
        &self,
        deps: &[*mut TaskHeader],
        what: &str,
    ) -> Result<NonNull<TaskHeader>> {
        if deps.len() > u32::MAX as usize {
            return Err(Error::invalid_argument(format!(
                "{what}: {} dependences; at most {} are supported",
                deps.len(),
                u32::MAX
            )));
        }
        let shared = self.shared();
        if let Some(worker) = shared.current_worker() {
            // One copy for each access, so that neither tests it again.
            if worker.access() == Access::Exclusive {
                return when_all(&Place::exclusive(shared, worker), deps, what);
            }
            return when_all(&Place::worker(shared, worker), deps, what);
        }
        at_host_place(shared, what, |place| when_all(place, deps, what))
    }
}
