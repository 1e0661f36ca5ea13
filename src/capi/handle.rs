//! Opaque C handles that detect misuse instead of trusting it.
//!
//! A handle is a pointer to a `Slot` holding a type tag, a reference count and the object (an
//! `Arc`). Slots are type-stable memory: they are never returned to the allocator, so reading the
//! tag of a released handle is defined behaviour and reports `TD_ERROR_INVALID_HANDLE`. A
//! released slot waits in a quarantine of `QUARANTINE` later releases before it is reused, so a
//! stale handle is recognised as released unless that many handles were released since; memory
//! stays bounded by the live handles plus the quarantine.

use super::error::{CError, CResult};
use super::status::td_status;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const QUARANTINE: usize = 1024;
const RELEASED_TAG: u64 = 0x7464_5f72_656c_7364; // "td_relsd"

/// A C handle type: the opaque struct the header declares, and the Rust object behind it.
///
/// # Safety
/// `TAG` must be unique among handle types and differ from `RELEASED_TAG`.
pub(crate) unsafe trait Handle: Sized {
    type Object: Send + Sync + 'static;
    /// The C type name, for messages.
    const NAME: &'static str;
    const TAG: u64;
}

/// Every handle type's tag and name, so a wrong-type handle can be named in the message.
const KNOWN_TAGS: &[(u64, &str)] = &[
    (super::pool::td_pool::TAG, super::pool::td_pool::NAME),
    (super::space::td_space::TAG, super::space::td_space::NAME),
    (super::view::td_view::TAG, super::view::td_view::NAME),
    (
        super::scheduler::td_scheduler::TAG,
        super::scheduler::td_scheduler::NAME,
    ),
    (super::crs::td_crs::TAG, super::crs::td_crs::NAME),
    (
        super::work_graph::td_work_graph::TAG,
        super::work_graph::td_work_graph::NAME,
    ),
];

/// Alone on its pair of cache lines: every call reads the tag, from any thread, and a line
/// shared with memory that some thread writes all the time (the global allocator puts other
/// small allocations, the caller's among them, beside a 24-byte slot) made each such read a
/// cache miss. td_when_all from tasks on 16 workers: 17.4 -> 11.8 ns per Fibonacci node
/// (docs/PERFORMANCE.md, session 28).
#[repr(align(128))]
pub(crate) struct Slot {
    tag: AtomicU64,
    refs: AtomicUsize,
    object: AtomicPtr<()>,
}

static FREE_SLOTS: Mutex<VecDeque<usize>> = Mutex::new(VecDeque::new());

fn take_slot() -> &'static Slot {
    let mut free = FREE_SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    if free.len() > QUARANTINE {
        if let Some(addr) = free.pop_front() {
            // SAFETY: addresses in FREE_SLOTS come from leaked `Slot`s (below), which live forever.
            return unsafe { &*(addr as *const Slot) };
        }
    }
    Box::leak(Box::new(Slot {
        tag: AtomicU64::new(RELEASED_TAG),
        refs: AtomicUsize::new(0),
        object: AtomicPtr::new(std::ptr::null_mut()),
    }))
}

/// Wraps `object` in a new handle with one reference, owned by the caller.
pub(crate) fn new_handle<H: Handle>(object: Arc<H::Object>) -> *mut H {
    let slot = take_slot();
    slot.object
        .store(Arc::into_raw(object) as *mut (), Ordering::Relaxed);
    slot.refs.store(1, Ordering::Relaxed);
    // Release: a thread that sees the tag also sees the object and count stored above.
    slot.tag.store(H::TAG, Ordering::Release);
    slot as *const Slot as *mut H
}

/// Checks that `ptr` is a live handle of type `H` and returns its slot.
///
/// # Safety
/// `ptr` is NULL or was returned by `new_handle` (of any type); anything else cannot be checked.
#[inline]
unsafe fn slot<'a, H: Handle>(ptr: *const H, name: &str) -> CResult<&'a Slot> {
    let slot = (ptr as *const Slot)
        .as_ref()
        .ok_or_else(|| super::boundary::null_argument(name))?;
    // Acquire pairs with the Release in `new_handle`.
    let tag = slot.tag.load(Ordering::Acquire);
    if tag == H::TAG {
        Ok(slot)
    } else {
        Err(bad_handle::<H>(tag, name))
    }
}

#[cold]
fn bad_handle<H: Handle>(tag: u64, name: &str) -> CError {
    let what = if tag == RELEASED_TAG {
        format!(
            "was already released; a {} cannot be used after its last td_*_release",
            H::NAME
        )
    } else if let Some((_, other)) = KNOWN_TAGS.iter().find(|(t, _)| *t == tag) {
        format!("is a {other}, but a {} is required", H::NAME)
    } else {
        format!("is not a taskdag handle (expected a {})", H::NAME)
    };
    CError::new(
        td_status::TD_ERROR_INVALID_HANDLE,
        format!("argument `{name}` {what}"),
    )
}

/// Borrows the object behind a live handle for the duration of the call.
///
/// # Safety
/// As for `slot`; the caller keeps its reference for the duration of the call.
#[inline]
pub(crate) unsafe fn object<'a, H: Handle>(ptr: *const H, name: &str) -> CResult<&'a H::Object> {
    let slot = slot(ptr, name)?;
    // Relaxed: ordered after the tag's Acquire load above.
    Ok(&*(slot.object.load(Ordering::Relaxed) as *const H::Object))
}

/// `object` without the error, for fast paths that leave reporting to their full path: `None`
/// for NULL or a handle of another type or released.
///
/// # Safety
/// As for `object`.
#[inline(always)]
pub(crate) unsafe fn object_quietly<'a, H: Handle>(ptr: *const H) -> Option<&'a H::Object> {
    let slot = (ptr as *const Slot).as_ref()?;
    // Acquire, Relaxed: as in `slot` and `object`.
    (slot.tag.load(Ordering::Acquire) == H::TAG)
        .then(|| &*(slot.object.load(Ordering::Relaxed) as *const H::Object))
}

/// A new `Arc` of the object behind a live handle, for owners that outlive the call (a scheduler
/// keeps its pool).
///
/// # Safety
/// As for `object`.
pub(crate) unsafe fn object_arc<H: Handle>(ptr: *const H, name: &str) -> CResult<Arc<H::Object>> {
    let object: *const H::Object = object::<H>(ptr, name)?;
    // SAFETY: the slot's object pointer came from `Arc::into_raw` in `new_handle`, and the
    // caller's reference keeps that Arc alive while the count is raised.
    Arc::increment_strong_count(object);
    Ok(Arc::from_raw(object))
}

/// Adds a reference to a handle.
///
/// # Safety
/// As for `object`.
pub(crate) unsafe fn retain<H: Handle>(ptr: *const H, name: &str) -> CResult<()> {
    // Relaxed: a new reference is made from an existing one, which keeps the object alive.
    slot(ptr, name)?.refs.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Drops a reference; the last one releases the object and retires the slot. NULL is a no-op.
///
/// # Safety
/// As for `object`.
pub(crate) unsafe fn release<H: Handle>(ptr: *const H, name: &str) -> CResult<()> {
    if ptr.is_null() {
        return Ok(());
    }
    let slot = slot(ptr, name)?;
    // AcqRel: the last releaser must see every other holder's use of the object before dropping.
    if slot.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        slot.tag.store(RELEASED_TAG, Ordering::Release);
        let raw = slot.object.swap(std::ptr::null_mut(), Ordering::Relaxed);
        drop(Arc::from_raw(raw as *const H::Object));
        let mut free = FREE_SLOTS.lock().unwrap_or_else(|p| p.into_inner());
        free.push_back(slot as *const Slot as usize);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Apple;
    struct Pear;
    unsafe impl Handle for Apple {
        type Object = String;
        const NAME: &'static str = "td_apple";
        const TAG: u64 = 1;
    }
    unsafe impl Handle for Pear {
        type Object = u32;
        const NAME: &'static str = "td_pear";
        const TAG: u64 = 2;
    }

    #[test]
    fn each_handle_has_its_pair_of_cache_lines_to_itself() {
        let pair = 2 * crate::cache_line::CACHE_LINE_BYTES;
        let handles: Vec<*mut Apple> = (0..8)
            .map(|i| new_handle::<Apple>(Arc::new(i.to_string())))
            .collect();
        let mut addresses: Vec<usize> = handles.iter().map(|&h| h as usize).collect();
        addresses.sort_unstable();
        assert!(addresses.iter().all(|a| a % pair == 0), "{addresses:x?}");
        assert!(
            addresses.windows(2).all(|w| w[1] - w[0] >= pair),
            "{addresses:x?}"
        );
        assert!(size_of::<Slot>() <= pair);
        for h in handles {
            unsafe { release(h, "apple").unwrap() };
        }
    }

    #[test]
    fn released_and_wrong_type_handles_are_reported_not_trusted() {
        let apple = new_handle::<Apple>(Arc::new("a".to_string()));
        unsafe {
            assert_eq!(object(apple, "apple").unwrap(), "a");
            let e = object(apple as *const Pear, "pear").unwrap_err();
            assert_eq!(e.status, td_status::TD_ERROR_INVALID_HANDLE);
            assert!(e.message.contains("expected a td_pear"), "{}", e.message);
            retain(apple, "apple").unwrap();
            release(apple, "apple").unwrap();
            assert_eq!(object(apple, "apple").unwrap(), "a");
            release(apple, "apple").unwrap();
            let e = object(apple, "apple").unwrap_err();
            assert!(e.message.contains("already released"), "{}", e.message);
            let e = release(apple, "apple").unwrap_err();
            assert_eq!(e.status, td_status::TD_ERROR_INVALID_HANDLE);
            assert!(release(std::ptr::null::<Apple>(), "apple").is_ok());
            let e = object(std::ptr::null::<Apple>(), "apple").unwrap_err();
            assert_eq!(e.status, td_status::TD_ERROR_NULL_ARGUMENT);
        }
    }
}
