//! The allocation record behind views (004, "Allocation and reference-counting semantics"): the
//! label, the memory space and the memory itself. Views share one record through an `Arc`, so a
//! subview keeps its parent's memory alive and the last view frees it.
//!
//! `Memory` is the enum of backing allocations, and `allocate` is the one place that picks a
//! memory space's allocator: the global allocator for host memory, the CUDA back-end's
//! `DeviceBuffer` (TD_SPACE_CUDA) and `PinnedBuffer` (TD_SPACE_CUDA_HOST_PINNED), each freed by
//! its own drop. Without the `cuda` feature the CUDA spaces report `Unavailable`.
//!
//! Large host arrays (at least 2 MiB, on Linux) are mapped for transparent huge pages by
//! `crate::huge_pages`, which work-graph plans use too, unless the environment variable
//! `TASKDAG_HUGE_PAGES` is `0`. A permuting deep_copy touches a few hundred pages per tile; with
//! 4 KiB pages each costs a TLB entry and often a page walk, with 2 MiB pages a 256 MiB
//! transpose touches a handful (one thread on the 16-core Xeon: see docs/views.md).

use super::errors;
use crate::error::Result;
use crate::huge_pages;
#[cfg(target_os = "linux")]
use crate::huge_pages::HugePages;
use crate::memory_space::MemorySpace;
use std::alloc::{self, Layout};
use std::ffi::{CStr, CString};
use std::ptr::NonNull;

/// Alignment of host allocations: a cache line, so that padded rows start on one (layout.rs).
const HOST_ALIGNMENT: usize = 64;

/// Where a view's elements live and who frees them.
#[derive(Debug)]
enum Memory {
    /// Host memory from the global allocator, freed with `layout`.
    Host { ptr: NonNull<u8>, layout: Layout },
    /// A large host array mapped for huge pages, unmapped when the mapping drops.
    #[cfg(target_os = "linux")]
    Mapped(HugePages),
    /// A caller's memory wrapped by an unmanaged view (004, "Unmanaged"); never freed here.
    Unmanaged { ptr: NonNull<u8> },
    /// Device memory (TD_SPACE_CUDA), freed when the buffer drops.
    #[cfg(feature = "cuda")]
    Device(crate::cuda::DeviceBuffer),
    /// Page-locked host memory (TD_SPACE_CUDA_HOST_PINNED), freed when the buffer drops.
    #[cfg(feature = "cuda")]
    Pinned(crate::cuda::PinnedBuffer),
}

/// One allocation (or wrapped region) and its label, shared by every view of it.
#[derive(Debug)]
pub(crate) struct AllocationRecord {
    label: CString,
    /// The label as Rust text (lossy for labels from C that are not UTF-8).
    text: String,
    space: MemorySpace,
    memory: Memory,
}

// SAFETY: the record owns its host memory like a `Box<[u8]>` (or refers to caller memory the
// caller promised to keep valid, see `View::wrap`) and never reads or writes it itself; element
// access goes through views, whose unsafe operations state the rules against data races.
unsafe impl Send for AllocationRecord {}
// SAFETY: as above; `&AllocationRecord` exposes only the label, the space and the address.
unsafe impl Sync for AllocationRecord {}

/// Checks that `label` can be handed to C (no interior NUL).
pub(crate) fn c_label(label: &str) -> Result<CString> {
    CString::new(label).map_err(|e| errors::label_has_nul(label, e.nul_position()))
}

impl AllocationRecord {
    /// Allocates `bytes` (> 0) in `space` for the view `label`, zero-filled when `zeroed`.
    ///
    /// Errors: `Unavailable` for the CUDA spaces without a usable GPU (the message says why:
    /// no driver, no device, built without the `cuda` feature), `OutOfMemory` when the
    /// allocator refuses (for device memory with the device's free and total memory).
    pub(crate) fn allocate(
        label: CString,
        space: MemorySpace,
        bytes: usize,
        zeroed: bool,
    ) -> Result<AllocationRecord> {
        let text = label.to_string_lossy().into_owned();
        let memory = match space {
            #[cfg(target_os = "linux")]
            MemorySpace::Host if huge_pages::wanted(bytes) => {
                // Fresh anonymous mappings are zero-filled (lazily, at the first touch), so
                // `zeroed` costs nothing here.
                let pages = HugePages::map(bytes)
                    .ok_or_else(|| errors::out_of_memory(&text, bytes, space))?;
                Memory::Mapped(pages)
            }
            MemorySpace::Host => {
                let layout = Layout::from_size_align(bytes, HOST_ALIGNMENT)
                    .map_err(|_| errors::out_of_memory(&text, bytes, space))?;
                // SAFETY: `bytes` > 0 (views have at least one element of at least one byte).
                let ptr = unsafe {
                    if zeroed {
                        alloc::alloc_zeroed(layout)
                    } else {
                        alloc::alloc(layout)
                    }
                };
                let ptr =
                    NonNull::new(ptr).ok_or_else(|| errors::out_of_memory(&text, bytes, space))?;
                Memory::Host { ptr, layout }
            }
            MemorySpace::Cuda | MemorySpace::CudaHostPinned => {
                cuda_memory(&text, space, bytes, zeroed)?
            }
        };
        Ok(AllocationRecord {
            label,
            text,
            space,
            memory,
        })
    }

    /// A record for caller memory at `ptr` in `space`, which taskdag never frees.
    ///
    /// Errors: `Unavailable` for the CUDA spaces without a usable GPU; `InvalidArgument` when
    /// the driver says `ptr` is not memory of `space` (a host pointer given as device memory, or
    /// the reverse).
    pub(crate) fn unmanaged(
        label: CString,
        space: MemorySpace,
        ptr: NonNull<u8>,
    ) -> Result<AllocationRecord> {
        let text = label.to_string_lossy().into_owned();
        if space != MemorySpace::Host {
            check_wrapped_cuda_memory(&text, space, ptr)?;
        }
        Ok(AllocationRecord {
            label,
            text,
            space,
            memory: Memory::Unmanaged { ptr },
        })
    }

    pub(crate) fn label(&self) -> &str {
        &self.text
    }

    pub(crate) fn c_label(&self) -> &CStr {
        &self.label
    }

    pub(crate) fn space(&self) -> MemorySpace {
        self.space
    }

    /// The first byte of the memory.
    pub(crate) fn base(&self) -> NonNull<u8> {
        match &self.memory {
            Memory::Host { ptr, .. } | Memory::Unmanaged { ptr } => *ptr,
            #[cfg(target_os = "linux")]
            Memory::Mapped(pages) => pages.base(),
            #[cfg(feature = "cuda")]
            Memory::Device(buffer) => address(buffer.address()),
            #[cfg(feature = "cuda")]
            Memory::Pinned(buffer) => address(buffer.address()),
        }
    }

    /// True when taskdag owns the memory (frees it with the last view).
    pub(crate) fn is_managed(&self) -> bool {
        !matches!(self.memory, Memory::Unmanaged { .. })
    }
}

impl Drop for AllocationRecord {
    fn drop(&mut self) {
        // Mapped memory and CUDA buffers free themselves when `memory` drops.
        if let Memory::Host { ptr, layout } = self.memory {
            // SAFETY: allocated in `allocate` with this layout; the last view is gone.
            unsafe { alloc::dealloc(ptr.as_ptr(), layout) }
        }
    }
}

/// A buffer's address as the record's base (buffers never sit at address 0).
#[cfg(feature = "cuda")]
fn address(address: u64) -> NonNull<u8> {
    NonNull::new(address as usize as *mut u8).expect("CUDA allocations are not at address 0")
}

/// Device or pinned memory for a view, zero-filled when `zeroed` (pinned memory always is).
#[cfg(feature = "cuda")]
fn cuda_memory(label: &str, space: MemorySpace, bytes: usize, zeroed: bool) -> Result<Memory> {
    let named = |e| errors::in_view(label, e);
    if space == MemorySpace::CudaHostPinned {
        return crate::cuda::PinnedBuffer::new(bytes)
            .map(Memory::Pinned)
            .map_err(named);
    }
    let mut buffer = crate::cuda::DeviceBuffer::new(bytes).map_err(named)?;
    if zeroed {
        // Byte-wise memset: needs no kernel, so a build without nvcc zero-fills too.
        buffer.fill(0, bytes, &[0]).map_err(named)?;
    }
    Ok(Memory::Device(buffer))
}

#[cfg(not(feature = "cuda"))]
fn cuda_memory(label: &str, space: MemorySpace, _bytes: usize, _zeroed: bool) -> Result<Memory> {
    Err(errors::space_unavailable(label, space))
}

/// Checks, where the driver can tell, that wrapped memory is of the space the view claims.
#[cfg(feature = "cuda")]
fn check_wrapped_cuda_memory(label: &str, space: MemorySpace, ptr: NonNull<u8>) -> Result<()> {
    use crate::cuda::{pointer_kind, Gpu, PointerKind};
    Gpu::get().map_err(|e| errors::in_view(label, e))?;
    let kind = pointer_kind(ptr.as_ptr() as u64);
    let fits = match space {
        MemorySpace::Cuda => matches!(kind, PointerKind::Device | PointerKind::Managed),
        _ => matches!(kind, PointerKind::PinnedHost | PointerKind::Managed),
    };
    if fits {
        Ok(())
    } else {
        Err(errors::wrapped_wrong_space(
            label,
            space,
            ptr.as_ptr(),
            kind,
        ))
    }
}

#[cfg(not(feature = "cuda"))]
fn check_wrapped_cuda_memory(label: &str, space: MemorySpace, _ptr: NonNull<u8>) -> Result<()> {
    Err(errors::space_unavailable(label, space))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(bytes: usize, zeroed: bool) -> AllocationRecord {
        AllocationRecord::allocate(c"big".into(), MemorySpace::Host, bytes, zeroed).unwrap()
    }

    #[test]
    fn large_host_arrays_are_zeroed_writable_and_on_huge_page_boundaries() {
        // Sizes that are not a whole number of pages, small and large ones, fresh and reused.
        for (bytes, zeroed) in [(64, true), ((2 << 20) - 8, true), ((3 << 20) + 24, true)]
            .into_iter()
            .chain([((5 << 20) + 8, false), ((2 << 20) + 4096, true)])
        {
            let r = record(bytes, zeroed);
            let base = r.base().as_ptr();
            if huge_pages::wanted(bytes) {
                assert_eq!(
                    base as usize % huge_pages::HUGE_PAGE_BYTES,
                    0,
                    "{bytes} bytes"
                );
            }
            assert_eq!(base as usize % HOST_ALIGNMENT, 0);
            // SAFETY: the record owns `bytes` bytes at `base`, used by this thread alone.
            let memory = unsafe { std::slice::from_raw_parts_mut(base, bytes) };
            if zeroed {
                assert!(memory.iter().all(|&b| b == 0), "{bytes} bytes");
            }
            memory.fill(0xa5);
            assert!(memory[0] == 0xa5 && memory[bytes - 1] == 0xa5);
        }
    }
}
