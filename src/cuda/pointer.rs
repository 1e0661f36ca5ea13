//! What kind of memory an address is, from the driver's pointer attributes: used to tell a caller
//! who passed a device pointer where host memory is required.

use cudarc::driver::sys;

/// Where an address points, as far as the CUDA driver knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointerKind {
    /// Device memory (cuMemAlloc, cudaMalloc): not accessible from the host.
    Device,
    /// Host memory registered with or allocated by CUDA (pinned).
    PinnedHost,
    /// Managed (unified) memory.
    Managed,
    /// Memory CUDA does not know: ordinary host memory, or no GPU to ask.
    Unknown,
}

/// The kind of memory at `address`. Never fails: without a driver everything is `Unknown`.
pub fn pointer_kind(address: u64) -> PointerKind {
    // SAFETY: only probes whether the driver library can be loaded.
    if !unsafe { sys::is_culib_present() } || cudarc::driver::result::init().is_err() {
        return PointerKind::Unknown;
    }
    let mut memory_type = 0u32;
    let mut managed = 0u32;
    // SAFETY: each attribute is written as a 32-bit integer into the locals; an address the
    // driver does not know yields an error, which means ordinary host memory.
    unsafe {
        if sys::cuPointerGetAttribute(
            (&mut memory_type as *mut u32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            address,
        )
        .result()
        .is_err()
        {
            return PointerKind::Unknown;
        }
        let _ = sys::cuPointerGetAttribute(
            (&mut managed as *mut u32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            address,
        );
    }
    if managed != 0 {
        PointerKind::Managed
    } else if memory_type == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
        PointerKind::Device
    } else if memory_type == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32 {
        PointerKind::PinnedHost
    } else {
        PointerKind::Unknown
    }
}
