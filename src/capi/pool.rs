//! `td_pool`: the finite, lock-free memory pool of 000 §2.5 and §3.1 behind a C handle.

use super::boundary::{call, call_or, read_versioned, Out, Versioned};
use super::error::{CError, CResult};
use super::handle::{self, Handle};
use super::memory_space::{memory_space_arg, td_memory_space, TD_SPACE_HOST};
use super::status::td_status;
use crate::memory_space::MemorySpace;
use crate::pool::{MemoryPool, PoolConfig, UsageStatistics};
use crate::runtime;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// A memory pool: a fixed span of memory handing out power-of-two blocks, safe to use from many
/// threads at once. Reference-counted: td_pool_retain / td_pool_release.
pub struct td_pool {
    _private: [u8; 0],
}

unsafe impl Handle for td_pool {
    type Object = MemoryPool;
    const NAME: &'static str = "td_pool";
    const TAG: u64 = 0x7464_5f70_6f6f_6c21; // "td_pool!"
}

/// Arguments of td_pool_create. Initialize with TD_POOL_ARGS_INIT, then set
/// `min_total_alloc_size`.
///
/// Sizes are rounded up to powers of two and must satisfy
/// 0 < min_block_alloc_size <= max_block_alloc_size <= min_superblock_size <= min_total_alloc_size.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct td_pool_args {
    /// sizeof(td_pool_args) as the caller was compiled; set by TD_POOL_ARGS_INIT.
    pub struct_size: usize,
    /// Where the pool's memory lives: TD_SPACE_HOST.
    pub memory_space: td_memory_space,
    /// Bytes available for allocations at least; rounded up to whole superblocks. Required.
    pub min_total_alloc_size: usize,
    /// Smallest block; smaller requests still take a whole block. 0 = 64.
    pub min_block_alloc_size: usize,
    /// Largest allocation the pool accepts. 0 = 4096.
    pub max_block_alloc_size: usize,
    /// Superblock size; each superblock holds blocks of one size at a time. 0 = max block size.
    pub min_superblock_size: usize,
}

unsafe impl Versioned for td_pool_args {
    const NAME: &'static str = "td_pool_args";
    const MIN_SIZE: usize = std::mem::size_of::<td_pool_args>();
    fn defaults() -> Self {
        td_pool_args {
            struct_size: std::mem::size_of::<td_pool_args>(),
            memory_space: TD_SPACE_HOST,
            min_total_alloc_size: 0,
            min_block_alloc_size: 0,
            max_block_alloc_size: 0,
            min_superblock_size: 0,
        }
    }
}

/// Usage statistics of a pool (td_pool_usage_statistics). Initialize with TD_POOL_STATS_INIT.
/// Block counts and bytes are exact when no other thread is allocating or freeing.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct td_pool_stats {
    /// sizeof(td_pool_stats) as the caller was compiled; set by TD_POOL_STATS_INIT.
    pub struct_size: usize,
    /// Allocatable bytes in the pool (all superblocks).
    pub capacity_bytes: u64,
    /// Bytes in one superblock.
    pub superblock_bytes: u64,
    /// Smallest block size.
    pub min_block_bytes: u64,
    /// Largest block size.
    pub max_block_bytes: u64,
    /// Number of superblocks.
    pub capacity_superblocks: u64,
    /// Superblocks currently assigned to a block size.
    pub consumed_superblocks: u64,
    /// Blocks currently allocated.
    pub consumed_blocks: u64,
    /// Bytes in allocated blocks (block sizes, not requested sizes).
    pub consumed_bytes: u64,
    /// Free blocks inside superblocks that are assigned to a block size.
    pub reserved_blocks: u64,
    /// Bytes of those free blocks.
    pub reserved_bytes: u64,
    /// Highest consumed_bytes seen, within 16 max-size blocks per thread that used the pool
    /// (tracked without a shared counter on the allocation path); never above capacity_bytes.
    pub high_water_bytes: u64,
    /// Allocations that failed because the pool was exhausted.
    pub failed_allocations: u64,
}

unsafe impl Versioned for td_pool_stats {
    const NAME: &'static str = "td_pool_stats";
    const MIN_SIZE: usize = std::mem::size_of::<td_pool_stats>();
    fn defaults() -> Self {
        td_pool_stats {
            struct_size: std::mem::size_of::<td_pool_stats>(),
            ..Default::default()
        }
    }
}

impl From<UsageStatistics> for td_pool_stats {
    fn from(s: UsageStatistics) -> Self {
        td_pool_stats {
            struct_size: std::mem::size_of::<td_pool_stats>(),
            capacity_bytes: s.capacity_bytes,
            superblock_bytes: s.superblock_bytes,
            min_block_bytes: s.min_block_bytes,
            max_block_bytes: s.max_block_bytes,
            capacity_superblocks: s.capacity_superblocks,
            consumed_superblocks: s.consumed_superblocks,
            consumed_blocks: s.consumed_blocks,
            consumed_bytes: s.consumed_bytes,
            reserved_blocks: s.reserved_blocks,
            reserved_bytes: s.reserved_bytes,
            high_water_bytes: s.high_water_bytes,
            failed_allocations: s.failed_allocations,
        }
    }
}

/// Creates a memory pool.
///
/// Ownership: on success `*out` holds a new pool with one reference, released with
/// td_pool_release. On failure `*out` is not written.
/// Thread safety: any thread, after td_initialize.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`args` or `out` NULL); TD_ERROR_STRUCT_SIZE;
/// TD_ERROR_INVALID_ARGUMENT (unknown memory space, sizes violating the inequality above, the
/// message names which); TD_ERROR_OUT_OF_MEMORY; TD_ERROR_NOT_INITIALIZED.
#[no_mangle]
pub unsafe extern "C" fn td_pool_create(
    args: *const td_pool_args,
    out: *mut *mut td_pool,
) -> td_status {
    call("td_pool_create", || {
        let args: td_pool_args = read_versioned(args, "args", false)?;
        let out = Out::new(out, "out")?;
        runtime::require_initialized("td_pool_create")?;
        let space = memory_space_arg(args.memory_space, "args->memory_space")?;
        if space != MemorySpace::Host {
            return Err(CError::new(
                td_status::TD_ERROR_UNAVAILABLE,
                format!(
                    "td_pool_create: pools in the {space} memory space come with the CUDA \
                     back-end, which this build does not provide; use TD_SPACE_HOST"
                ),
            ));
        }
        let pool = MemoryPool::new(&PoolConfig {
            min_total_alloc_size: args.min_total_alloc_size,
            min_block_alloc_size: args.min_block_alloc_size,
            max_block_alloc_size: args.max_block_alloc_size,
            min_superblock_size: args.min_superblock_size,
        })?;
        out.write(handle::new_handle(Arc::new(pool)));
        Ok(())
    })
}

/// Adds a reference to `pool` (shared ownership, 000 §3.1); each reference is released with
/// td_pool_release.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_pool_retain(pool: *mut td_pool) -> td_status {
    call("td_pool_retain", || handle::retain(pool, "pool"))
}

/// Releases one reference to `pool`; the last one frees the pool's memory, so every block
/// allocated from it becomes invalid. NULL is a no-op.
///
/// Thread safety: any thread, but no other thread may use this reference concurrently.
/// Returns TD_OK; TD_ERROR_INVALID_HANDLE (wrong type or already released).
#[no_mangle]
pub unsafe extern "C" fn td_pool_release(pool: *mut td_pool) -> td_status {
    call("td_pool_release", || handle::release(pool, "pool"))
}

/// Allocates a block of at least `size` bytes, making up to `attempt_limit` (>= 1) searches of
/// the pool (000 §3.1). The block is aligned to its block size (td_pool_allocate_block_size).
///
/// Returns the block, or NULL: without an error for `size` 0 (as the report specifies), and
/// otherwise with td_last_error() set to TD_ERROR_POOL_EXHAUSTED (no free block; counted in
/// `failed_allocations`), TD_ERROR_INVALID_ARGUMENT (`size` above the max block size,
/// `attempt_limit` < 1), TD_ERROR_NULL_ARGUMENT or TD_ERROR_INVALID_HANDLE.
///
/// Ownership: the block belongs to the caller until td_pool_deallocate; the pool must outlive it.
/// Thread safety: any number of threads concurrently; lock-free.
#[no_mangle]
pub unsafe extern "C" fn td_pool_allocate(
    pool: *mut td_pool,
    size: usize,
    attempt_limit: c_int,
) -> *mut c_void {
    call_or("td_pool_allocate", || {
        let pool = handle::object(pool, "pool")?;
        let attempts = attempt_count(attempt_limit)?;
        match pool.allocate(size, attempts) {
            Ok(block) => Ok(block.as_ptr() as *mut c_void),
            Err(failure) => match failure.into_error() {
                Some(e) => Err(e.into()),
                None => Ok(std::ptr::null_mut()),
            },
        }
    })
    .unwrap_or(std::ptr::null_mut())
}

fn attempt_count(attempt_limit: c_int) -> CResult<u32> {
    u32::try_from(attempt_limit)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| {
            CError::invalid(format!(
                "argument `attempt_limit` is {attempt_limit}; it must be >= 1 (1 is the usual \
                 choice)"
            ))
        })
}

/// Returns a block to the pool. Pass the `size` the block was allocated with.
///
/// A pointer outside the pool, not at the start of a block, not currently allocated (double
/// free), or with a `size` that needs a larger block than the one at `ptr` is rejected with
/// TD_ERROR_INVALID_ARGUMENT and the pool is left unchanged. (A smaller size is accepted: the
/// pool may serve a small request from a larger block when no block of its own size is free,
/// 000 §2.5.3.)
///
/// Thread safety: any number of threads concurrently; constant time, lock-free.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`pool` or `ptr`); TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn td_pool_deallocate(
    pool: *mut td_pool,
    ptr: *mut c_void,
    size: usize,
) -> td_status {
    call("td_pool_deallocate", || {
        let pool = handle::object(pool, "pool")?;
        if ptr.is_null() {
            return Err(super::boundary::null_argument("ptr"));
        }
        Ok(pool.deallocate(ptr as *mut u8, size)?)
    })
}

/// Writes to `*out` the block size an allocation of `size` bytes takes: the smallest power of
/// two >= max(size, min block size).
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE;
/// TD_ERROR_INVALID_ARGUMENT if `size` is above the max block size (nothing written).
#[no_mangle]
pub unsafe extern "C" fn td_pool_allocate_block_size(
    pool: *const td_pool,
    size: usize,
    out: *mut usize,
) -> td_status {
    call("td_pool_allocate_block_size", || {
        let pool = handle::object(pool, "pool")?;
        let out = Out::new(out, "out")?;
        match pool.allocate_block_size(size) {
            0 => Err(CError::invalid(format!(
                "argument `size` is {size}, above this pool's max block size {}",
                pool.max_block_size()
            ))),
            block => {
                out.write(block);
                Ok(())
            }
        }
    })
}

/// Writes one of the pool's sizes to `*out`.
unsafe fn pool_query(
    function: &'static str,
    pool: *const td_pool,
    out: *mut usize,
    query: fn(&MemoryPool) -> usize,
) -> td_status {
    call(function, || {
        let pool = handle::object(pool, "pool")?;
        Out::new(out, "out")?.write(query(pool));
        Ok(())
    })
}

/// Writes to `*out` the allocatable bytes of the pool (>= min_total_alloc_size).
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_pool_capacity(pool: *const td_pool, out: *mut usize) -> td_status {
    pool_query("td_pool_capacity", pool, out, MemoryPool::capacity)
}

/// Writes to `*out` the smallest block size (>= min_block_alloc_size).
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_pool_min_block_size(
    pool: *const td_pool,
    out: *mut usize,
) -> td_status {
    pool_query(
        "td_pool_min_block_size",
        pool,
        out,
        MemoryPool::min_block_size,
    )
}

/// Writes to `*out` the largest block size, the largest allocation the pool accepts.
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_pool_max_block_size(
    pool: *const td_pool,
    out: *mut usize,
) -> td_status {
    pool_query(
        "td_pool_max_block_size",
        pool,
        out,
        MemoryPool::max_block_size,
    )
}

/// Fills `*out` with the pool's usage statistics. Set `out->struct_size` first
/// (TD_POOL_STATS_INIT); only that many bytes are written, so older callers keep working.
///
/// Thread safety: any thread; exact only while no thread allocates or frees.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_STRUCT_SIZE.
#[no_mangle]
pub unsafe extern "C" fn td_pool_usage_statistics(
    pool: *const td_pool,
    out: *mut td_pool_stats,
) -> td_status {
    call("td_pool_usage_statistics", || {
        let pool = handle::object(pool, "pool")?;
        // Validates the caller's struct_size the same way as an input struct.
        let caller: td_pool_stats = read_versioned(out, "out", false)?;
        let stats = td_pool_stats::from(pool.usage_statistics());
        std::ptr::copy_nonoverlapping(
            &stats as *const td_pool_stats as *const u8,
            out as *mut u8,
            caller.struct_size,
        );
        (*out).struct_size = caller.struct_size;
        Ok(())
    })
}
