//! The device staging buffer of host<->device copies between layouts (view deep_copy): kept
//! between copies, because allocating and freeing a large device buffer (`cuMemAlloc` and the
//! synchronizing `cuMemFree`) costs as much as a tenth of the copy it serves (measured on an
//! H100: 256 MiB permuting copies at 81% of cudaMemcpy bandwidth with a fresh buffer each time).
//!
//! One buffer is kept: the largest asked for, up to an eighth of the device's memory; larger
//! requests get a buffer of their own, freed after the copy. A copy that finds the kept buffer
//! in use by another thread also gets one of its own, so copies never wait for each other.

use super::gpu::Gpu;
use super::memory::DeviceBuffer;
use crate::error::Result;
use std::sync::{Mutex, TryLockError};

static KEPT: Mutex<Option<DeviceBuffer>> = Mutex::new(None);

/// Runs `use_it` with the address of at least `bytes` bytes of device memory that nothing else
/// uses during the call.
pub(crate) fn with_staging<R>(
    gpu: &Gpu,
    bytes: usize,
    use_it: impl FnOnce(u64) -> Result<R>,
) -> Result<R> {
    let keep_limit = gpu.memory_info().map_or(0, |(_, total)| total / 8);
    let mut kept = match KEPT.try_lock() {
        Ok(kept) => kept,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return use_it(DeviceBuffer::new(bytes)?.address()),
    };
    if bytes > keep_limit {
        return use_it(DeviceBuffer::new(bytes)?.address());
    }
    if !kept.as_ref().is_some_and(|b| b.len() >= bytes) {
        // The smaller buffer goes first, so the two never hold device memory together.
        *kept = None;
        *kept = Some(DeviceBuffer::new(bytes)?);
    }
    use_it(kept.as_ref().expect("set above").address())
}
