//! What device code needs to allocate from a device pool, passed to kernels by value
//! (`td_dev_pool` in C, used by `cuda/pool.cuh`), and the layout of the pool's usage counters in
//! device memory.

use crate::pool::PoolLayout;
use std::ffi::c_void;

// The usage counters of a device pool are an array of u64 words in device memory; each counter
// sits alone on a 128-byte line pair.

/// Index of the count of failed allocations (exact) in a device pool's usage counters.
pub const USAGE_FAILED_ALLOCATIONS: usize = 0;
/// Index of the net bytes flushed from the lane counters, two's complement.
pub const USAGE_TOTAL: usize = 16;
/// Index of the high-water mark: the largest flushed total seen.
pub const USAGE_HIGH_WATER: usize = 32;
/// Index of the first lane counter; lane counter `i` is `USAGE_STRIDE * i` words further.
pub const USAGE_LANES_START: usize = 48;
/// Words between lane counters.
pub const USAGE_STRIDE: usize = 16;
/// Number of lane counters (a power of two); warps share them by lane index modulo this.
pub const USAGE_LANES: usize = 256;
/// Length of the usage counter array in words.
pub const USAGE_WORDS: usize = USAGE_LANES_START + USAGE_LANES * USAGE_STRIDE;

/// A device pool as kernels see it: its geometry and the device addresses of its span, state,
/// hints and usage counters. Plain data: copy it into kernel arguments; it stays valid while the
/// pool exists.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevicePoolRef {
    /// The pool's geometry (src/pool/layout.rs).
    pub layout: PoolLayout,
    /// A lane's usage counter is flushed into the total beyond this many bytes.
    pub flush_threshold: u64,
    /// Device address of the first byte of the span; every block lies in the span.
    pub span: *mut c_void,
    /// The superblock state words: header and claim bitset per superblock.
    pub superblocks: *mut u64,
    /// One hint per (lane, block size).
    pub hints: *mut u32,
    /// The usage counters (TD_DEV_POOL_USAGE_*).
    pub usage: *mut u64,
}
