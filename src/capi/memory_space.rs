//! Memory-space arguments: a C integer checked against the spaces this build knows.

use super::boundary::enum_arg;
use super::error::CResult;
use crate::memory_space::MemorySpace;

/// A memory space, one of the TD_SPACE_* values.
pub type td_memory_space = i32;

/// Host memory.
pub const TD_SPACE_HOST: td_memory_space = 0;
/// Device memory of the current CUDA device (TD_ERROR_UNAVAILABLE without a usable GPU).
pub const TD_SPACE_CUDA: td_memory_space = 1;
/// Page-locked host memory that the device can address (TD_ERROR_UNAVAILABLE without a GPU).
pub const TD_SPACE_CUDA_HOST_PINNED: td_memory_space = 2;

pub(crate) fn memory_space_arg(value: td_memory_space, name: &str) -> CResult<MemorySpace> {
    enum_arg(
        value,
        name,
        &[
            (TD_SPACE_HOST, MemorySpace::Host, "TD_SPACE_HOST"),
            (TD_SPACE_CUDA, MemorySpace::Cuda, "TD_SPACE_CUDA"),
            (
                TD_SPACE_CUDA_HOST_PINNED,
                MemorySpace::CudaHostPinned,
                "TD_SPACE_CUDA_HOST_PINNED",
            ),
        ],
    )
}
