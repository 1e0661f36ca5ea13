//! A host memory pool whose span is page-locked and mapped into the GPU's address space
//! (TD_SPACE_CUDA_HOST_PINNED): host threads allocate and free exactly as from a TD_SPACE_HOST
//! pool, and the blocks can be copied to and from the device at full PCIe speed, or read and
//! written by kernels through the same addresses (unified addressing).
//!
//! The span comes from the host pool itself and is registered with the driver afterwards
//! (`cuMemHostRegister`), so the pool's algorithm and state are the host pool's, unchanged.

use super::gpu::{driver_error, Gpu};
use crate::error::Result;
use crate::pool::{MemoryPool, PoolConfig};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// A host pool with a page-locked, device-mapped span. The registration ends when this value
/// drops; the pool itself lives on while anything else (a scheduler) holds it, with its pages no
/// longer locked.
#[derive(Debug)]
pub struct PinnedPool {
    pool: Arc<MemoryPool>,
    gpu: Arc<Gpu>,
}

impl PinnedPool {
    /// A pool for `config` whose span is page-locked for every context and mapped for the device.
    ///
    /// Errors: `Unavailable` without a usable GPU (the message says why), the host pool's errors,
    /// `OutOfMemory` (through the driver's error) when the pages cannot be locked.
    pub fn new(config: &PoolConfig) -> Result<PinnedPool> {
        let gpu = Gpu::get()?;
        let pool = Arc::new(MemoryPool::new(config)?);
        let bytes = pool.capacity();
        // SAFETY: the span is `bytes` bytes of memory the pool owns for its whole life, and the
        // registration is undone in `drop`, before `pool`'s last owner here lets it go.
        unsafe {
            sys::cuMemHostRegister_v2(
                pool.span_address().cast::<c_void>(),
                bytes,
                sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP,
            )
        }
        .result()
        .map_err(|e| driver_error(&format!("page-locking a pool span of {bytes} bytes"), e))?;
        Ok(PinnedPool { pool, gpu })
    }

    /// The host pool, shared with whatever allocates from it as long as it lives.
    pub fn host(&self) -> &Arc<MemoryPool> {
        &self.pool
    }
}

impl Drop for PinnedPool {
    fn drop(&mut self) {
        // Unregistering fails only when the driver is already gone (process exit), which ends
        // the registration anyway.
        if self.gpu.bind().is_ok() {
            // SAFETY: registered in `new` at this address, unregistered only here.
            let _ = unsafe { sys::cuMemHostUnregister(self.pool.span_address().cast::<c_void>()) };
        }
    }
}
