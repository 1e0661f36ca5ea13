//! Futures (000 §3.2.1): shared-ownership references to a task or when_all, through which its
//! completion is awaited and its result read.
//!
//! A future is the address of the entity's header in pool memory with the entity's generation in
//! its low `TAG_BITS` bits; there is no registry, so retain and release touch only the header.
//! What is detected (reported, nothing changed):
//! - a release without a user reference left (released more often than retained) while the
//!   entity is still alive, because user references are counted apart from the scheduler's holds;
//! - use of a released entity, because its `ident` says so (`IDENT_FREED` with the future's
//!   generation);
//! - use after the block was reused by another task or when_all, because the generation differs
//!   (with probability 63/64: generations have 6 bits);
//! - pointers that are no future at all, when their memory does not start with a valid `ident`;
//! - a future of another scheduler, where a scheduler is known (spawn, when_all, respawn).
//!
//! Not detected: a reused block whose generation happens to match, a future whose scheduler and
//! pool were freed (its memory is gone), and pointers into unmapped memory (they fault).

use super::header::{
    Access, Kind, TaskHeader, IDENT_FREED, IDENT_KIND_MASK, IDENT_TASK, IDENT_WHEN_ALL, TAG_BITS,
    TAG_MASK, USER_REF,
};
use super::place::Place;
use super::scheduler::Shared;
use crate::error::{Error, ErrorKind, Result};
use std::ffi::c_void;
use std::ptr::NonNull;

/// Why a pointer is not a usable future; the C API reports it as `TD_ERROR_INVALID_HANDLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadFuture {
    raw: usize,
    reason: BadFutureReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BadFutureReason {
    NotAFuture,
    Released,
    Reused,
}

impl BadFuture {
    /// The message for an argument called `name`.
    #[cold]
    pub fn message(&self, name: &str) -> String {
        let raw = self.raw as *const c_void;
        match self.reason {
            BadFutureReason::NotAFuture => format!(
                "argument `{name}` ({raw:p}) is not a td_future (pass a future returned by \
                 td_host_spawn, td_task_spawn or td_when_all)"
            ),
            BadFutureReason::Released => format!(
                "argument `{name}` ({raw:p}) was already released: its last reference is gone \
                 and its task's memory went back to the pool; a future may not be used after \
                 its last td_future_release"
            ),
            BadFutureReason::Reused => format!(
                "argument `{name}` ({raw:p}) was already released, and its memory now belongs to \
                 another task or when_all; a future may not be used after its last \
                 td_future_release"
            ),
        }
    }
}

/// Blocks of tasks and when_alls are at least this large, and aligned to it.
const MIN_BLOCK: usize = 128;
const _: () = assert!(
    MIN_BLOCK == 1 << (TAG_BITS + 1),
    "`decode` tests one alignment bit"
);

/// Checks that `raw` (non-null) is a future of a live task or when_all and returns its header.
///
/// # Safety
/// `raw` with its tag bits cleared must point to readable memory of at least 4 bytes when it is
/// aligned to 128 (otherwise it is rejected without being read).
#[inline(always)]
pub(crate) unsafe fn decode(
    raw: *const c_void,
) -> std::result::Result<NonNull<TaskHeader>, BadFuture> {
    let Some((header, tag)) = split(raw) else {
        return Err(BadFuture {
            raw: raw as usize,
            reason: BadFutureReason::NotAFuture,
        });
    };
    let ident = header.as_ref().ident();
    if ident == IDENT_TASK | tag || ident == IDENT_WHEN_ALL | tag {
        return Ok(header);
    }
    Err(bad_ident(raw, ident, tag))
}

/// The header address and the generation of `raw`, unless the address cannot be a block's (it
/// is then not read).
#[inline(always)]
fn split(raw: *const c_void) -> Option<(NonNull<TaskHeader>, u32)> {
    let address = raw as usize & !TAG_MASK;
    // `address != 0 && address % MIN_BLOCK == 0` as one signed test: the tag is cleared, so bit
    // `TAG_BITS` is the only one the alignment still needs to be zero; rotated to the sign bit,
    // the address is positive exactly when that bit is clear and some other bit is set.
    if (address.rotate_right(TAG_BITS + 1) as isize) <= 0 {
        return None;
    }
    // SAFETY: not null, as tested above.
    let header = unsafe { NonNull::new_unchecked(address as *mut TaskHeader) };
    Some((header, (raw as usize & TAG_MASK) as u32))
}

/// The header and generation of a live task behind `raw`, or `None` for anything else (a
/// when_all, a bad future, NULL), for fast paths that leave the rest, and its messages, to
/// `decode`.
///
/// # Safety
/// As for `decode`.
#[inline(always)]
unsafe fn decode_task(raw: *const c_void) -> Option<(NonNull<TaskHeader>, u32)> {
    let (header, tag) = split(raw)?;
    (header.as_ref().ident() == IDENT_TASK | tag).then_some((header, tag))
}

/// The header of a live task behind `raw` (not a when_all's), or `None` for anything else,
/// for fast paths that leave the rest to `decode`.
///
/// # Safety
/// As for `decode`.
#[inline(always)]
pub(crate) unsafe fn live_task(raw: *const c_void) -> Option<NonNull<TaskHeader>> {
    decode_task(raw).map(|(header, _)| header)
}

#[cold]
fn bad_ident(raw: *const c_void, ident: u32, tag: u32) -> BadFuture {
    let bad = |reason| BadFuture {
        raw: raw as usize,
        reason,
    };
    let kind = ident & IDENT_KIND_MASK;
    bad(if kind == IDENT_FREED && ident & TAG_MASK as u32 == tag {
        BadFutureReason::Released
    } else if matches!(kind, IDENT_FREED | IDENT_TASK | IDENT_WHEN_ALL) {
        BadFutureReason::Reused
    } else {
        BadFutureReason::NotAFuture
    })
}

/// The future (tagged pointer) of an entity.
#[inline]
pub(crate) fn encode(entity: NonNull<TaskHeader>) -> *mut c_void {
    // SAFETY: the caller holds the entity.
    let generation = unsafe { entity.as_ref() }.generation() as usize;
    (entity.as_ptr() as usize | generation) as *mut c_void
}

/// Whether `entity` belongs to `shared`.
#[inline]
pub(crate) fn same_scheduler(entity: NonNull<TaskHeader>, shared: &Shared) -> bool {
    // SAFETY: validated entities the caller holds.
    std::ptr::eq(unsafe { entity.as_ref() }.scheduler(), shared)
}

/// Fails unless `entity` belongs to `shared`; `what` names the future in the message.
#[inline]
pub(crate) fn check_scheduler(
    entity: NonNull<TaskHeader>,
    shared: &Shared,
    what: &str,
) -> Result<()> {
    if same_scheduler(entity, shared) {
        Ok(())
    } else {
        Err(other_scheduler(what))
    }
}

#[cold]
pub(crate) fn other_scheduler(what: &str) -> Error {
    Error::invalid_argument(format!(
        "{what} is a future of another scheduler; futures may only be combined with (and used \
         as dependences by) tasks of the scheduler that created them"
    ))
}

/// Runs `f` at the place for the calling thread and `entity`'s scheduler: the worker if it runs
/// a wait of that scheduler, else a host place in a foreign section. Frees the scheduler's state
/// when the host operation released its last use.
///
/// # Safety
/// `entity` is a validated live entity.
#[inline(always)]
unsafe fn at_entity_place<R>(
    entity: NonNull<TaskHeader>,
    what: &str,
    f: impl FnOnce(&Place<'_>) -> R,
) -> Result<R> {
    let shared_ptr = entity.as_ref().scheduler();
    if let Some(worker) = (*shared_ptr).current_worker() {
        let place = Place::worker(&*shared_ptr, worker);
        return Ok(f(&place));
    }
    at_host_place(shared_ptr, what, f)
}

/// `at_entity_place` from a thread that runs no wait of the scheduler.
///
/// # Safety
/// As for `at_entity_place`.
#[inline(never)]
unsafe fn at_host_place<R>(
    shared_ptr: *const Shared,
    what: &str,
    f: impl FnOnce(&Place<'_>) -> R,
) -> Result<R> {
    let unused;
    let result;
    {
        let shared = &*shared_ptr;
        let guard = shared.enter_foreign(what)?;
        let place = Place::host(shared, &guard);
        result = f(&place);
        unused = place.scheduler_unused();
    }
    if unused {
        // The last entity and the last handle are gone, and our foreign section ended.
        Shared::free(NonNull::new_unchecked(shared_ptr as *mut Shared));
    }
    Ok(result)
}

/// Adds a user reference to the entity behind a valid future.
///
/// # Safety
/// `entity` is a validated live entity.
#[inline]
pub(crate) unsafe fn retain(entity: NonNull<TaskHeader>, what: &str) -> Result<()> {
    let h = entity.as_ref();
    if h.user_refs() == 0 {
        return Err(released_too_often(what));
    }
    at_entity_place(entity, what, |place| h.add_ref(USER_REF, place.access))
}

/// Drops a user reference; the last reference frees the entity.
///
/// # Safety
/// `entity` is a validated live entity.
#[inline(always)]
pub(crate) unsafe fn release(entity: NonNull<TaskHeader>, what: &str) -> Result<()> {
    let shared_ptr = entity.as_ref().scheduler();
    let shared = &*shared_ptr;
    let released = match shared.current_worker() {
        Some(worker) => {
            // Never null (`worker::NO_RECORD`).
            let record = worker.owned().record;
            // The running task releases its own respawn dependence: the scheduler keeps this
            // reference instead of taking another (see `Respawn`).
            if (*record).take_over_release(entity) {
                return Ok(());
            }
            // One copy for each access, so that neither tests it again.
            if worker.access() == Access::Exclusive {
                Place::exclusive(shared, worker).release_user(entity)
            } else {
                Place::worker(shared, worker).release_user(entity)
            }
        }
        None => at_host_place(shared_ptr, what, |place| place.release_user(entity))?,
    };
    released.map_err(|()| released_too_often(what))
}

/// What `release_last` did with a future.
pub(crate) enum FastRelease {
    /// Released it.
    Done,
    /// Nothing: it is a live task's future, for `release` (no need to `decode` it again).
    Task(NonNull<TaskHeader>),
    /// Nothing: it is no live task's future (a when_all's, a bad one, NULL), for `decode`.
    NotATask,
}

/// `release` of the future `raw` in the case a wait meets at most releases: on a worker's
/// thread of the task's scheduler, the last reference to a complete task, whose block the
/// worker's cache has room for, while the running task (if any) has not asked to respawn (so the
/// reference is not one to take over). Frees the task; in every other case it changes and
/// reports nothing and says how far it got. Its checks come before any change, and nothing on
/// it is a call: `td_future_release` takes its general paths by tail calls, so that this one
/// saves no registers.
///
/// The thread's worker is one thread-local read (`worker::current`), so this serves waits of
/// several workers too, where the general path found the worker again and built a place for
/// `Place::release_user`: callgrind, F(22), two workers: td_future_release (with its tail call)
/// 96 -> 59 instructions per Fibonacci node; one worker, where it replaced a test of the
/// scheduler's only worker, 55 -> 53.
///
/// # Safety
/// As for `decode`.
#[inline(always)]
pub(crate) unsafe fn release_last(raw: *const c_void) -> FastRelease {
    let Some((task, generation)) = decode_task(raw) else {
        return FastRelease::NotATask;
    };
    let t = task.as_ref();
    let shared = &*t.scheduler();
    let other = FastRelease::Task(task);
    // A thread that serves an outer wait of this scheduler (a task that waits on another) is
    // left to the general path.
    let (serving, worker) = super::worker::current();
    if !std::ptr::eq(serving, shared) {
        return other;
    }
    // SAFETY: the thread serves this scheduler's wait as `worker`.
    let worker = &*worker;
    // Never null (`worker::NO_RECORD`).
    let record = worker.owned().record;
    if (*record).has_respawn() {
        return other;
    }
    // The test by which `TaskHeader::release_user` frees (its shared path with no
    // read-modify-write), in its order and with its orderings: `refs` first with Acquire (the
    // caller holds the only reference, so nobody else can reach the task any more, and every
    // earlier holder released with Release), then the closed queue with Acquire (the completer
    // is done with the task; wait_queue.rs, "Who frees an entity"). `refs` stays as it is: a
    // freed block's is never read (a stale future fails `decode`, a reuse writes a new header).
    if !t.refs_are(USER_REF) || !t.is_complete() {
        return other;
    }
    // One copy for each access, whose place then has constant fields.
    let freed = match worker.access() {
        Access::Exclusive => Place::exclusive(shared, worker).free_task_to_cache(task, generation),
        Access::Shared => Place::shared_worker(shared, worker).free_task_to_cache(task, generation),
    };
    if !freed {
        return other;
    }
    FastRelease::Done
}

#[cold]
fn released_too_often(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "{what}: the future has no reference left to release: it was released as many times \
             as it was returned and retained (the scheduler still holds its task, so its memory \
             is not freed yet); release each future exactly once per reference"
        ),
    )
}

/// Whether the entity is complete. Any thread, any time (the caller holds a reference).
pub(crate) fn is_ready(entity: NonNull<TaskHeader>) -> bool {
    // SAFETY: the caller holds a reference.
    unsafe { entity.as_ref() }.is_complete()
}

/// The result bytes of a complete task (empty for a when_all). `NotReady` before completion.
///
/// # Safety
/// The caller holds a reference for as long as it uses the slice.
#[inline(always)]
pub(crate) unsafe fn result<'a>(entity: NonNull<TaskHeader>, what: &str) -> Result<&'a [u8]> {
    let h = entity.as_ref();
    // Acquire (in `is_complete`): the result written before completion is visible.
    if !h.is_complete() {
        return Err(not_ready(h.kind(), what));
    }
    Ok(match h.kind() {
        Kind::Task => std::slice::from_raw_parts(TaskHeader::result_ptr(entity), h.size()),
        Kind::WhenAll => &[],
    })
}

/// The result bytes of the complete task behind the future `raw`; `None`, having reported
/// nothing, for anything else (a when_all, an incomplete task, a bad future, NULL), which
/// `decode` and `result` then report. For `td_future_get`'s fast path.
///
/// # Safety
/// As for `decode`; the caller holds a reference for as long as it uses the slice.
#[inline(always)]
pub(crate) unsafe fn complete_task_result<'a>(raw: *const c_void) -> Option<&'a [u8]> {
    let (task, _) = decode_task(raw)?;
    let t = task.as_ref();
    // Acquire (in `is_complete`): the result written before completion is visible.
    t.is_complete()
        .then(|| std::slice::from_raw_parts(TaskHeader::result_ptr(task), t.size()))
}

#[cold]
fn not_ready(kind: Kind, what: &str) -> Error {
    Error::new(
        ErrorKind::NotReady,
        format!(
            "{what}: the {} is not complete yet, so it has no result; read it after td_wait \
             returns, or in a task that depends on this future",
            match kind {
                Kind::Task => "task",
                Kind::WhenAll => "when_all",
            }
        ),
    )
}

/// Bytes of the task's result (0 for a when_all).
pub(crate) fn result_size(entity: NonNull<TaskHeader>) -> usize {
    // SAFETY: the caller holds a reference.
    let h = unsafe { entity.as_ref() };
    match h.kind() {
        Kind::Task => h.size(),
        Kind::WhenAll => 0,
    }
}

/// An owning reference to a task or when_all (000 §3.2.1): `Clone` retains, `Drop` releases.
///
/// Retain and release from a thread other than the scheduler's workers while a wait runs wait
/// until it returns (the C API reports `TD_ERROR_BUSY` instead).
pub struct Future {
    raw: NonNull<c_void>,
}

// SAFETY: futures are shared-ownership handles whose operations are thread-safe (module comment
// and `scheduler.rs`).
unsafe impl Send for Future {}
unsafe impl Sync for Future {}

impl Future {
    /// Takes over the user reference the entity was created with.
    pub(crate) fn from_header(entity: NonNull<TaskHeader>) -> Future {
        Future {
            // SAFETY: an encoded header address is non-null.
            raw: unsafe { NonNull::new_unchecked(encode(entity)) },
        }
    }

    #[inline]
    pub(crate) fn header(&self) -> NonNull<TaskHeader> {
        // SAFETY: the address part of a future is its header.
        unsafe { NonNull::new_unchecked((self.raw.as_ptr() as usize & !TAG_MASK) as *mut _) }
    }

    /// The header, checked to belong to `shared`.
    pub(crate) fn checked_header(&self, shared: &Shared) -> Result<NonNull<TaskHeader>> {
        let h = self.header();
        check_scheduler(h, shared, "a dependence")?;
        Ok(h)
    }

    /// Whether the task (or when_all) is complete.
    pub fn is_ready(&self) -> bool {
        is_ready(self.header())
    }

    /// The task's result as a `T`; `NotReady` before completion, `InvalidArgument` when `T` does
    /// not have the result's size.
    pub fn get<T: Copy>(&self) -> Result<T> {
        let bytes = self.result_bytes()?;
        if bytes.len() != std::mem::size_of::<T>() {
            return Err(Error::invalid_argument(format!(
                "get: the task's result has {} bytes, but the requested type has {}",
                bytes.len(),
                std::mem::size_of::<T>()
            )));
        }
        // SAFETY: `bytes` has exactly size_of::<T>() bytes; T is Copy (any bytes the task wrote
        // as a T are a T).
        Ok(unsafe { bytes.as_ptr().cast::<T>().read_unaligned() })
    }

    /// The task's result bytes (empty for a when_all); `NotReady` before completion.
    pub fn result_bytes(&self) -> Result<&[u8]> {
        // SAFETY: this future holds a reference while the slice is borrowed.
        unsafe { result(self.header(), "get") }
    }

    /// Gives up ownership: the returned pointer is the C `td_future*` with this reference.
    pub fn into_raw(self) -> *mut c_void {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    /// Takes ownership of one reference of a C `td_future*`.
    ///
    /// # Safety
    /// `raw` is a valid future and the caller owns the reference it transfers.
    pub unsafe fn from_raw(raw: NonNull<c_void>) -> Future {
        Future { raw }
    }
}

/// Retries an operation that a running wait refuses.
fn until_not_busy(mut op: impl FnMut() -> Result<()>) {
    loop {
        match op() {
            Err(e) if e.kind() == ErrorKind::Busy => std::thread::yield_now(),
            other => {
                debug_assert!(other.is_ok(), "future operation failed: {other:?}");
                return;
            }
        }
    }
}

impl Clone for Future {
    fn clone(&self) -> Future {
        // SAFETY: this future holds a reference, so the entity is alive.
        until_not_busy(|| unsafe { retain(self.header(), "Future::clone") });
        Future { raw: self.raw }
    }
}

impl Drop for Future {
    fn drop(&mut self) {
        // SAFETY: as above; this is the reference being given up.
        until_not_busy(|| unsafe { release(self.header(), "Future::drop") });
    }
}

impl std::fmt::Debug for Future {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Future")
            .field("raw", &self.raw)
            .field("ready", &self.is_ready())
            .finish()
    }
}
