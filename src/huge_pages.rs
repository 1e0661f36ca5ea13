//! Large host arrays on transparent huge pages, for views (view/allocation.rs) and work-graph
//! plans (work_graph/plan.rs, schedule.rs).
//!
//! Large arrays are mapped directly, aligned to 2 MiB, and advised to the kernel as transparent
//! huge pages (`MADV_HUGEPAGE`), on Linux and unless the environment variable
//! `TASKDAG_HUGE_PAGES` is `0`: views of at least `HUGE_PAGE_BYTES` (`wanted`), and the
//! fixed-size arrays of `HostArray` from half of that. With 4 KiB pages, a walk over a few MiB
//! costs a TLB entry per 4 KiB and often a page walk, and which cache sets the pages share
//! depends on where they land in physical memory, which changes from one process to the next:
//! a permuting deep_copy touches a few hundred pages per tile (docs/views.md), a work-graph run
//! a new page of each 4-byte per-position array every 1024 positions on every worker
//! (docs/work-graph.md). With 2 MiB
//! pages a 256 MiB transpose touches a handful. An environment variable rather than a flag
//! because huge pages are a policy of the machine and the run (memory footprint, THP settings),
//! like glibc's `glibc.malloc.hugetlb` tunable, not of the code making the array; it needs no
//! rebuild to compare.

use std::ptr::NonNull;

/// Size and alignment of a transparent huge page on x86-64 (and on aarch64 with 4 KiB pages);
/// host arrays of at least this size are mapped for huge pages.
pub(crate) const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Whether a view of `bytes` gets huge pages: at least `HUGE_PAGE_BYTES`, and `enabled`.
pub(crate) fn wanted(bytes: usize) -> bool {
    bytes >= HUGE_PAGE_BYTES && enabled()
}

/// Whether huge pages are used at all: on Linux, unless `TASKDAG_HUGE_PAGES=0` (read once per
/// process).
fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    cfg!(target_os = "linux")
        && *ENABLED
            .get_or_init(|| !matches!(std::env::var_os("TASKDAG_HUGE_PAGES"), Some(v) if v == "0"))
}

/// Zero-filled memory mapped at a 2 MiB boundary and advised for transparent huge pages; unmapped
/// on drop.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct HugePages {
    base: NonNull<u8>,
    /// The mapped length: the size asked for, rounded up to the page size.
    len: usize,
}

// SAFETY: the mapping is owned like a `Box<[u8]>`; its users say who reads and writes it.
#[cfg(target_os = "linux")]
unsafe impl Send for HugePages {}
// SAFETY: `&HugePages` exposes only the address.
#[cfg(target_os = "linux")]
unsafe impl Sync for HugePages {}

#[cfg(target_os = "linux")]
impl HugePages {
    /// Maps `bytes` (> 0) of zero-filled memory (lazily, at the first touch) at a 2 MiB boundary
    /// and advises transparent huge pages for it. None when the kernel refuses the mapping.
    ///
    /// The mapping is made `HUGE_PAGE_BYTES` longer than needed and trimmed to the aligned part,
    /// since mmap only promises page alignment. The advice may fail (a kernel without THP, or
    /// THP set to "never" answers EINVAL): the memory is then used with ordinary pages, which is
    /// what the global allocator would have given.
    pub(crate) fn map(bytes: usize) -> Option<HugePages> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|p| p.is_power_of_two() && *p <= HUGE_PAGE_BYTES)?;
        let len = bytes.checked_next_multiple_of(page)?;
        let reserved = len.checked_add(HUGE_PAGE_BYTES)?;
        // SAFETY: a fresh private anonymous mapping; it aliases nothing.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                reserved,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let start = (base as usize).next_multiple_of(HUGE_PAGE_BYTES);
        let head = start - base as usize;
        let tail = reserved - head - len;
        // SAFETY: the head [base, start) and the tail [start + len, base + reserved) are
        // page-aligned parts of the mapping just made (base, start, len and reserved are
        // multiples of the page size), which nothing else uses; [start, start + len) stays
        // mapped. The advice only changes how the kernel backs [start, start + len).
        unsafe {
            if head > 0 {
                libc::munmap(base, head);
            }
            if tail > 0 {
                libc::munmap((start + len) as *mut libc::c_void, tail);
            }
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
        NonNull::new(start as *mut u8).map(|base| HugePages { base, len })
    }

    /// The first byte, at a 2 MiB boundary.
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }
}

#[cfg(target_os = "linux")]
impl Drop for HugePages {
    fn drop(&mut self) {
        // SAFETY: mapped by `map` with this length and owned by `self`. munmap of a mapping we
        // own fails only for invalid arguments, which these are not.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
}

/// A host array of fixed length, made once: on huge pages when it is large and huge pages are
/// `enabled`, otherwise from the global allocator like a `Box<[T]>`. Reads are plain slice
/// accesses (no branch on where the memory came from).
///
/// "Large" is at least half a huge page here, and the mapping is rounded up to whole huge
/// pages: such an array is walked whole (a work-graph plan's per-item arrays, every run), so
/// every part of it should be on huge pages, and the rounding at most doubles an array of
/// 1 MiB. The completion flags of fib(29), one byte for each of 1.7 M items, are such an array;
/// those of fib(30) (2.7 M items) would have a fifth of their bytes on 4 KiB pages without the
/// rounding.
pub(crate) struct HostArray<T> {
    ptr: NonNull<T>,
    len: usize,
    /// The mapping holding the elements, or None for a leaked `Box<[T]>` of `len` elements.
    #[cfg(target_os = "linux")]
    pages: Option<HugePages>,
}

// SAFETY: owns its elements like a `Box<[T]>`.
unsafe impl<T: Send> Send for HostArray<T> {}
// SAFETY: `&HostArray<T>` gives out only `&[T]`.
unsafe impl<T: Sync> Sync for HostArray<T> {}

impl<T> HostArray<T> {
    /// The array of `values`: moved into a huge-page mapping when it is large (and huge pages
    /// are wanted and granted), else kept where it is, without a copy.
    pub(crate) fn from_vec(values: Vec<T>) -> HostArray<T> {
        #[cfg(target_os = "linux")]
        if let Some(pages) = Self::map(values.len()) {
            let ptr = pages.base().cast::<T>();
            let len = values.len();
            for (i, value) in values.into_iter().enumerate() {
                // SAFETY: the mapping holds `len` elements of T, suitably aligned (`map`).
                unsafe { ptr.add(i).write(value) };
            }
            return HostArray {
                ptr,
                len,
                pages: Some(pages),
            };
        }
        let boxed = Box::leak(values.into_boxed_slice());
        HostArray {
            len: boxed.len(),
            ptr: NonNull::from(boxed).cast(),
            #[cfg(target_os = "linux")]
            pages: None,
        }
    }

    /// The array of `len` elements `value(0), value(1), ...`, made in place: on huge pages when
    /// it is large (as `from_vec`), else from the global allocator. None when the global
    /// allocator refuses the memory.
    pub(crate) fn from_fn(len: usize, value: impl FnMut(usize) -> T) -> Option<HostArray<T>> {
        #[cfg(target_os = "linux")]
        if let Some(pages) = Self::map(len) {
            let ptr = pages.base().cast::<T>();
            for (i, v) in (0..len).map(value).enumerate() {
                // SAFETY: as in `from_vec`.
                unsafe { ptr.add(i).write(v) };
            }
            return Some(HostArray {
                ptr,
                len,
                pages: Some(pages),
            });
        }
        let mut values = Vec::new();
        values.try_reserve_exact(len).ok()?;
        values.extend((0..len).map(value));
        Some(Self::from_vec(values))
    }

    /// A mapping of whole huge pages for `len` elements, aligned for T, if they are to get one
    /// and the kernel grants it; None sends them to the global allocator.
    #[cfg(target_os = "linux")]
    fn map(len: usize) -> Option<HugePages> {
        let bytes = len.checked_mul(size_of::<T>())?;
        if bytes >= HUGE_PAGE_BYTES / 2 && align_of::<T>() <= HUGE_PAGE_BYTES && enabled() {
            HugePages::map(bytes.checked_next_multiple_of(HUGE_PAGE_BYTES)?)
        } else {
            None
        }
    }

    /// True when the elements are on a huge-page mapping.
    #[cfg(test)]
    pub(crate) fn on_huge_pages(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.pages.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }
}

impl<T> std::ops::Deref for HostArray<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialized elements, owned by `self` (`from_vec`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for HostArray<T> {
    fn drop(&mut self) {
        let elements = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
        #[cfg(target_os = "linux")]
        if self.pages.is_some() {
            // SAFETY: the elements were written in `from_vec`/`from_fn` and are dropped once;
            // the mapping itself is unmapped when the field drops, after this.
            unsafe { std::ptr::drop_in_place(elements) };
            return;
        }
        // SAFETY: the `Box<[T]>` leaked in `from_vec`, given back once.
        drop(unsafe { Box::from_raw(elements) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_arrays_are_on_huge_page_boundaries_and_keep_their_values() {
        let small = HostArray::from_fn(1000, |i| i as u32).unwrap();
        assert!(!small.on_huge_pages());
        // Just at the threshold (half a huge page), and above a huge page with a length that is
        // not a whole page.
        for len in [HUGE_PAGE_BYTES / 8, (3 << 20) / 4 + 5] {
            let array = HostArray::from_fn(len, |i| i as u32 ^ 0x5a5a).unwrap();
            assert_eq!(array.on_huge_pages(), enabled(), "{len} elements");
            if array.on_huge_pages() {
                assert_eq!(array.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
            }
            assert!(array
                .iter()
                .enumerate()
                .all(|(i, &v)| v == i as u32 ^ 0x5a5a));
            let moved = HostArray::from_vec(array.to_vec());
            assert_eq!(moved.on_huge_pages(), array.on_huge_pages());
            assert_eq!(*moved, *array);
        }
    }

    #[test]
    fn elements_are_dropped_once_wherever_they_live() {
        use std::rc::Rc;
        let counted = Rc::new(());
        // Rc is 8 bytes: 2^18 of them fill a huge page.
        for len in [3, HUGE_PAGE_BYTES / 8 + 1] {
            let array = HostArray::from_fn(len, |_| Rc::clone(&counted)).unwrap();
            assert_eq!(Rc::strong_count(&counted), len + 1);
            drop(array);
            assert_eq!(Rc::strong_count(&counted), 1);
        }
    }
}
