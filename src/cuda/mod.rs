//! CUDA back-end. The driver is loaded at run time (cudarc with dynamic loading), so one library
//! binary serves machines with and without a GPU (DESIGN.md §5).
//!
//! Files: `detect` (driver and devices), `gpu` (context, kernel modules, launches), `kernels`
//! (the embedded fatbins), `memory` (device and pinned buffers, copies), `fill`, `strided_copy`
//! (the permuting copy between layouts), `pointer` (what an address is), `staging` (the kept staging buffer of view copies), `pool` and `pool_ref`
//! (the memory pool in device memory), `pinned_pool` (a host pool with a page-locked span), `tests` (GPU tests; they skip without a GPU).

mod detect;
mod pool_ref;

pub use detect::{detect, CudaDevice, CudaStatus};
pub use pool_ref::{
    DevicePoolRef, USAGE_FAILED_ALLOCATIONS, USAGE_HIGH_WATER, USAGE_LANES, USAGE_LANES_START,
    USAGE_STRIDE, USAGE_TOTAL, USAGE_WORDS,
};

#[cfg(feature = "cuda")]
mod fill;
#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
mod kernels;
#[cfg(feature = "cuda")]
mod memory;
#[cfg(feature = "cuda")]
mod pinned_pool;
#[cfg(feature = "cuda")]
mod pointer;
#[cfg(feature = "cuda")]
mod pool;
#[cfg(feature = "cuda")]
mod staging;
#[cfg(feature = "cuda")]
mod strided_copy;
#[cfg(all(test, feature = "cuda"))]
mod tests;

#[cfg(feature = "cuda")]
pub(crate) use fill::fill_raw;
#[cfg(feature = "cuda")]
pub use fill::MAX_FILL_ELEMENT;
#[cfg(feature = "cuda")]
pub use gpu::Gpu;
#[cfg(feature = "cuda")]
pub use kernels::{built as kernels_built, nvcc_version};
#[cfg(feature = "cuda")]
pub use memory::{copy_bytes, DeviceBuffer, PinnedBuffer};
#[cfg(feature = "cuda")]
pub use pinned_pool::PinnedPool;
#[cfg(feature = "cuda")]
pub use pointer::{pointer_kind, PointerKind};
#[cfg(feature = "cuda")]
pub use pool::{DevicePool, DEVICE_LANES};
#[cfg(feature = "cuda")]
pub(crate) use staging::with_staging;
#[cfg(feature = "cuda")]
pub use strided_copy::{copy_strided, copy_strided_raw, ByteRange, StridedCopy, MAX_RANK};
