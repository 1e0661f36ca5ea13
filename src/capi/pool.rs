//! `td_pool`: the finite, lock-free memory pool of 000 §2.5 and §3.1 behind a C handle.

use super::boundary::{call, call_or, read_versioned, Out, Versioned};
use super::error::{CError, CResult};
use super::handle::{self, Handle};
use super::memory_space::{memory_space_arg, td_memory_space, TD_SPACE_HOST};
use super::status::td_status;
use crate::cuda::DevicePoolRef;
use crate::error::Result;
use crate::memory_space::MemorySpace;
use crate::pool::{MemoryPool, PoolConfig, PoolLayout, UsageStatistics};
use crate::runtime;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// The pool behind a `td_pool`: host memory, or device memory operated on by kernels.
// One value per pool, behind the handle's Arc: its size does not matter, and boxing the host pool
// would add a pointer chase to every host allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum PoolObject {
    /// Shared with the schedulers that allocate their tasks from it.
    Host(Arc<MemoryPool>),
    #[cfg(feature = "cuda")]
    Cuda(crate::cuda::DevicePool),
    /// A host pool whose span is page-locked for the GPU; host code uses it as a Host pool.
    #[cfg(feature = "cuda")]
    Pinned(crate::cuda::PinnedPool),
}

impl PoolObject {
    fn create(space: MemorySpace, config: &PoolConfig) -> CResult<PoolObject> {
        match space {
            MemorySpace::Host => Ok(PoolObject::Host(Arc::new(MemoryPool::new(config)?))),
            #[cfg(feature = "cuda")]
            MemorySpace::Cuda => crate::cuda::DevicePool::new(config)
                .map(PoolObject::Cuda)
                .map_err(|e| unavailable_hint(e, "TD_SPACE_CUDA pools need a GPU")),
            #[cfg(not(feature = "cuda"))]
            MemorySpace::Cuda => Err(CError::new(
                td_status::TD_ERROR_UNAVAILABLE,
                "td_pool_create: this library was built without the `cuda` feature, so it has no \
                 TD_SPACE_CUDA pools; rebuild with it, or use TD_SPACE_HOST",
            )),
            #[cfg(feature = "cuda")]
            MemorySpace::CudaHostPinned => crate::cuda::PinnedPool::new(config)
                .map(PoolObject::Pinned)
                .map_err(|e| {
                    unavailable_hint(
                        e,
                        "TD_SPACE_CUDA_HOST_PINNED pools page-lock their memory for a GPU",
                    )
                }),
            #[cfg(not(feature = "cuda"))]
            MemorySpace::CudaHostPinned => Err(CError::new(
                td_status::TD_ERROR_UNAVAILABLE,
                "td_pool_create: this library was built without the `cuda` feature, so it has no \
                 TD_SPACE_CUDA_HOST_PINNED pools; rebuild with it, or use TD_SPACE_HOST",
            )),
        }
    }

    fn layout(&self) -> &PoolLayout {
        match self {
            PoolObject::Host(pool) => pool.layout(),
            #[cfg(feature = "cuda")]
            PoolObject::Cuda(pool) => pool.layout(),
            #[cfg(feature = "cuda")]
            PoolObject::Pinned(pool) => pool.host().layout(),
        }
    }

    fn usage_statistics(&self) -> Result<UsageStatistics> {
        match self {
            PoolObject::Host(pool) => Ok(pool.usage_statistics()),
            #[cfg(feature = "cuda")]
            PoolObject::Cuda(pool) => pool.usage_statistics(),
            #[cfg(feature = "cuda")]
            PoolObject::Pinned(pool) => Ok(pool.host().usage_statistics()),
        }
    }

    /// The host pool as a shared reference, for objects that allocate from it as long as they
    /// live (schedulers); an error for `function` for a device pool.
    pub(crate) fn host_shared(&self, function: &'static str) -> CResult<Arc<MemoryPool>> {
        self.host_arc(function).map(Arc::clone)
    }

    /// The host pool, or `None` for a device pool (for fast paths, which leave errors to the
    /// full path).
    #[inline(always)]
    fn host_quietly(&self) -> Option<&MemoryPool> {
        match self {
            PoolObject::Host(pool) => Some(pool),
            #[cfg(feature = "cuda")]
            PoolObject::Pinned(pool) => Some(pool.host()),
            #[cfg(feature = "cuda")]
            PoolObject::Cuda(_) => None,
        }
    }

    /// The host pool, or an error for `function` saying that device pools are used from kernels.
    #[inline]
    fn host(&self, function: &'static str) -> CResult<&MemoryPool> {
        self.host_arc(function).map(|pool| &**pool)
    }

    // Without CUDA every pool is a host pool, and `function` names no other case.
    #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
    #[inline]
    fn host_arc(&self, function: &'static str) -> CResult<&Arc<MemoryPool>> {
        match self {
            PoolObject::Host(pool) => Ok(pool),
            #[cfg(feature = "cuda")]
            PoolObject::Pinned(pool) => Ok(pool.host()),
            #[cfg(feature = "cuda")]
            PoolObject::Cuda(_) => Err(device_pool_on_host(function)),
        }
    }
}

/// The error for host function `function` given a TD_SPACE_CUDA pool; out of line, so that the
/// allocation path passes nothing for it.
#[cfg(feature = "cuda")]
#[cold]
#[inline(never)]
fn device_pool_on_host(function: &'static str) -> CError {
    CError::invalid(format!(
        "argument `pool` is a TD_SPACE_CUDA pool, whose blocks live in device memory and are \
         allocated and freed by kernels; {function} serves TD_SPACE_HOST pools: pass \
         td_pool_device_handle's result to a kernel and call td_dev_pool_allocate / \
         td_dev_pool_deallocate there (taskdag_cuda.cuh)"
    ))
}

/// `e` as a C error; when it says no GPU can be used, with `why` the space needs one and the
/// way out.
#[cfg(feature = "cuda")]
fn unavailable_hint(e: crate::error::Error, why: &str) -> CError {
    let e = CError::from(e);
    if e.status == td_status::TD_ERROR_UNAVAILABLE {
        CError::new(
            e.status,
            format!("{}; {why}: use TD_SPACE_HOST here", e.message),
        )
    } else {
        e
    }
}

/// A memory pool: a fixed span of memory handing out power-of-two blocks, safe to use from many
/// threads at once. Reference-counted: td_pool_retain / td_pool_release.
pub struct td_pool {
    _private: [u8; 0],
}

unsafe impl Handle for td_pool {
    type Object = PoolObject;
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
    /// Where the pool's memory lives: TD_SPACE_HOST (allocate from host threads), TD_SPACE_CUDA
    /// (allocate from kernels, see td_pool_device_handle) or TD_SPACE_CUDA_HOST_PINNED (allocate
    /// from host threads; the span is page-locked, so blocks copy to and from the GPU at full
    /// speed and kernels may read and write them at the same addresses).
    pub memory_space: td_memory_space,
    /// Bytes available for allocations at least; rounded up to whole superblocks. Required.
    pub min_total_alloc_size: usize,
    /// Smallest block; smaller requests still take a whole block. 0 = 64.
    pub min_block_alloc_size: usize,
    /// Largest allocation the pool accepts. 0 = 4096.
    pub max_block_alloc_size: usize,
    /// Superblock size; each superblock holds blocks of one size at a time. 0 = max block size.
    pub min_superblock_size: usize,
    /// 1 (the default): a block freed by a thread goes to that thread's cache for its block size
    /// (up to 64 blocks per size and a share of capacity/16 bytes per thread), and the thread's
    /// next allocation of that size takes it back without an atomic operation. 0: every free
    /// returns the block to the pool at once. Other values are rejected. Host pools only; ignored
    /// for TD_SPACE_CUDA pools. See td_pool_flush_thread_cache.
    pub thread_cache: c_int,
}

unsafe impl Versioned for td_pool_args {
    const NAME: &'static str = "td_pool_args";
    // The first released version ended before `thread_cache`.
    const MIN_SIZE: usize = std::mem::offset_of!(td_pool_args, thread_cache);
    fn defaults() -> Self {
        td_pool_args {
            struct_size: std::mem::size_of::<td_pool_args>(),
            memory_space: TD_SPACE_HOST,
            min_total_alloc_size: 0,
            min_block_alloc_size: 0,
            max_block_alloc_size: 0,
            min_superblock_size: 0,
            thread_cache: 1,
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
    /// Highest consumed_bytes seen, within 32 max-size blocks per thread that used the pool
    /// (tracked without a shared counter on the allocation path); never above capacity_bytes.
    pub high_water_bytes: u64,
    /// Allocations that failed because the pool was exhausted.
    pub failed_allocations: u64,
    /// Free blocks held in threads' caches (td_pool_args.thread_cache); they are counted in
    /// reserved_blocks, not consumed_blocks.
    pub cached_blocks: u64,
    /// Bytes of those blocks; counted in reserved_bytes.
    pub cached_bytes: u64,
}

unsafe impl Versioned for td_pool_stats {
    const NAME: &'static str = "td_pool_stats";
    // The first released version ended before `cached_blocks`.
    const MIN_SIZE: usize = std::mem::offset_of!(td_pool_stats, cached_blocks);
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
            cached_blocks: s.cached_blocks,
            cached_bytes: s.cached_bytes,
        }
    }
}

/// Creates a memory pool.
///
/// Ownership: on success `*out` holds a new pool with one reference, released with
/// td_pool_release. On failure `*out` is not written.
/// Thread safety: any thread, after td_initialize.
///
/// A TD_SPACE_CUDA pool keeps its span and state in the memory of the runtime's GPU; kernels
/// allocate from it (td_pool_device_handle), the host reads its statistics, resets and releases
/// it. A TD_SPACE_CUDA_HOST_PINNED pool is a host pool whose span is page-locked and mapped for
/// the GPU until the pool's last td_pool_release.
///
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT (`args` or `out` NULL); TD_ERROR_STRUCT_SIZE;
/// TD_ERROR_INVALID_ARGUMENT (unknown memory space, sizes violating the inequality above, the
/// message names which, `thread_cache` not 0 or 1); TD_ERROR_OUT_OF_MEMORY (host or device); TD_ERROR_UNAVAILABLE
/// (TD_SPACE_CUDA without a usable GPU: the message says whether the driver or a device is
/// missing; the same for TD_SPACE_CUDA_HOST_PINNED); TD_ERROR_NOT_INITIALIZED.
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
        let thread_cache = match args.thread_cache {
            0 => false,
            1 => true,
            other => {
                return Err(CError::invalid(format!(
                    "`args->thread_cache` is {other}; it must be 1 (cache freed blocks per \
                     thread, the default) or 0 (return every freed block to the pool at once)"
                )))
            }
        };
        let pool = PoolObject::create(
            space,
            &PoolConfig {
                min_total_alloc_size: args.min_total_alloc_size,
                min_block_alloc_size: args.min_block_alloc_size,
                max_block_alloc_size: args.max_block_alloc_size,
                min_superblock_size: args.min_superblock_size,
                thread_cache,
            },
        )?;
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
/// `attempt_limit` < 1, a TD_SPACE_CUDA pool), TD_ERROR_NULL_ARGUMENT or TD_ERROR_INVALID_HANDLE.
///
/// Ownership: the block belongs to the caller until td_pool_deallocate; the pool must outlive it.
/// Thread safety: any number of threads concurrently; lock-free.
#[no_mangle]
pub unsafe extern "C" fn td_pool_allocate(
    pool: *mut td_pool,
    size: usize,
    attempt_limit: c_int,
) -> *mut c_void {
    // The thread-cache hit first, with no call: the checks below and their errors take
    // registers and a stack frame that the hit does not need (see `fast_path`).
    let block = fast_path(|| {
        if attempt_limit < 1 {
            return None;
        }
        handle::object_quietly(pool)?
            .host_quietly()?
            .allocate_cached(size)
    });
    match block {
        Some(block) => block.as_ptr() as *mut c_void,
        None => allocate_checked(pool, size, attempt_limit),
    }
}

/// `td_pool_allocate` past its fast path. `extern "C"`, so that the compiler knows that it does
/// not unwind (it catches every panic) and may jump to it from the fast path's frame (a tail
/// call) rather than keep a frame for the call.
#[inline(never)]
unsafe extern "C" fn allocate_checked(
    pool: *mut td_pool,
    size: usize,
    attempt_limit: c_int,
) -> *mut c_void {
    call_or("td_pool_allocate", || {
        let pool = handle::object(pool, "pool")?.host("td_pool_allocate")?;
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

/// Runs the fast path of an entry point: `None`, also for a panic, sends the caller to its full
/// path, which repeats every check and reports (and catches a panic again, reporting it).
#[inline(always)]
fn fast_path<T>(body: impl FnOnce() -> Option<T>) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(None)
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
/// A device pointer passed for a host pool is reported as such (the driver is asked what the
/// pointer is). TD_SPACE_CUDA pools free their blocks in kernels (td_dev_pool_deallocate).
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
    // As in td_pool_allocate: the block into the thread's cache, or the full checks below.
    let cached = fast_path(|| {
        let pool = handle::object_quietly(pool)?.host_quietly()?;
        pool.deallocate_cached(ptr as *mut u8, size).then_some(())
    });
    match cached {
        Some(()) => td_status::TD_OK,
        None => deallocate_checked(pool, ptr, size),
    }
}

/// `td_pool_deallocate` past its fast path; `extern "C"` as `allocate_checked`.
#[inline(never)]
unsafe extern "C" fn deallocate_checked(
    pool: *mut td_pool,
    ptr: *mut c_void,
    size: usize,
) -> td_status {
    call("td_pool_deallocate", || {
        let pool = handle::object(pool, "pool")?.host("td_pool_deallocate")?;
        // NULL is outside the span, so the pool rejects it without a check of its own here; the
        // error then says it is NULL.
        pool.deallocate(ptr as *mut u8, size)
            .map_err(|e| explain_rejected_pointer(pool, ptr, e.into()))
    })
}

/// Why a host pool rejected `ptr`: NULL, or GPU memory when the driver says so, or `e`.
#[cold]
#[inline(never)]
fn explain_rejected_pointer(pool: &MemoryPool, ptr: *mut c_void, e: CError) -> CError {
    if ptr.is_null() {
        return super::boundary::null_argument("ptr");
    }
    #[cfg(feature = "cuda")]
    if !pool.contains(ptr as *const u8)
        && crate::cuda::pointer_kind(ptr as u64) == crate::cuda::PointerKind::Device
    {
        return CError::invalid(format!(
            "{}. The pointer is device memory (CUDA), but this pool is a TD_SPACE_HOST pool: its \
             blocks are host memory; free device blocks in a kernel with td_dev_pool_deallocate",
            e.message
        ));
    }
    #[cfg(not(feature = "cuda"))]
    let _ = (pool, ptr);
    e
}

/// Returns the blocks in the calling thread's cache of `pool` (td_pool_args.thread_cache) to the
/// pool, so that other threads can allocate them and their superblocks can serve other block
/// sizes. Call it in a thread that freed many blocks and will not allocate from `pool` for a
/// while; an allocation that finds the pool exhausted does this for its own thread (and for the
/// caches of threads that have exited) before it fails. A no-op without thread caches.
///
/// Thread safety: any thread; affects only the calling thread's cache.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT (a
/// TD_SPACE_CUDA pool).
#[no_mangle]
pub unsafe extern "C" fn td_pool_flush_thread_cache(pool: *mut td_pool) -> td_status {
    call("td_pool_flush_thread_cache", || {
        handle::object(pool, "pool")?
            .host("td_pool_flush_thread_cache")?
            .flush_thread_cache();
        Ok(())
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
        let layout = handle::object(pool, "pool")?.layout();
        let out = Out::new(out, "out")?;
        if size > layout.max_block_size() {
            return Err(CError::invalid(format!(
                "argument `size` is {size}, above this pool's max block size {}",
                layout.max_block_size()
            )));
        }
        out.write(1 << layout.block_lg2_for(size.max(1)));
        Ok(())
    })
}

/// Writes one of the pool's sizes to `*out`.
unsafe fn pool_query(
    function: &'static str,
    pool: *const td_pool,
    out: *mut usize,
    query: fn(&PoolLayout) -> usize,
) -> td_status {
    call(function, || {
        let layout = handle::object(pool, "pool")?.layout();
        Out::new(out, "out")?.write(query(layout));
        Ok(())
    })
}

/// Writes to `*out` the allocatable bytes of the pool (>= min_total_alloc_size).
///
/// Thread safety: any thread. Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE.
#[no_mangle]
pub unsafe extern "C" fn td_pool_capacity(pool: *const td_pool, out: *mut usize) -> td_status {
    pool_query("td_pool_capacity", pool, out, PoolLayout::capacity)
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
        PoolLayout::min_block_size,
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
        PoolLayout::max_block_size,
    )
}

/// Fills `*out` with the pool's usage statistics. Set `out->struct_size` first
/// (TD_POOL_STATS_INIT); only that many bytes are written, so older callers keep working.
///
/// For a TD_SPACE_CUDA pool the statistics are counted from a copy of the device state taken
/// after the GPU finished its queued work, so they are exact once the kernels that use the pool
/// have completed.
///
/// Thread safety: any thread; exact only while no thread allocates or frees.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_STRUCT_SIZE;
/// TD_ERROR_INTERNAL if the GPU reports an error (for example a kernel that faulted).
#[no_mangle]
pub unsafe extern "C" fn td_pool_usage_statistics(
    pool: *const td_pool,
    out: *mut td_pool_stats,
) -> td_status {
    call("td_pool_usage_statistics", || {
        let pool = handle::object(pool, "pool")?;
        // Validates the caller's struct_size the same way as an input struct.
        let caller: td_pool_stats = read_versioned(out, "out", false)?;
        let stats = td_pool_stats::from(pool.usage_statistics()?);
        std::ptr::copy_nonoverlapping(
            &stats as *const td_pool_stats as *const u8,
            out as *mut u8,
            caller.struct_size,
        );
        (*out).struct_size = caller.struct_size;
        Ok(())
    })
}

/// Fills `*out` with what device code needs to allocate from the TD_SPACE_CUDA pool `pool`: pass
/// it by value to a kernel and call td_dev_pool_allocate / td_dev_pool_deallocate
/// (taskdag_cuda.cuh) with its address.
///
/// Ownership: `*out` holds device addresses owned by the pool; it is valid until the pool's last
/// release. Thread safety: any thread.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT (a
/// TD_SPACE_HOST pool).
#[no_mangle]
pub unsafe extern "C" fn td_pool_device_handle(
    pool: *const td_pool,
    out: *mut DevicePoolRef,
) -> td_status {
    call("td_pool_device_handle", || {
        let pool = handle::object(pool, "pool")?;
        // Checked in every build, written only where device pools exist.
        #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
        let out = Out::new(out, "out")?;
        match pool {
            #[cfg(feature = "cuda")]
            PoolObject::Cuda(pool) => {
                out.write(pool.device_ref());
                Ok(())
            }
            PoolObject::Host(_) => Err(CError::invalid(
                "argument `pool` is a TD_SPACE_HOST pool, which host threads use directly \
                 (td_pool_allocate); create the pool with TD_SPACE_CUDA for use in kernels",
            )),
            #[cfg(feature = "cuda")]
            PoolObject::Pinned(_) => Err(CError::invalid(
                "argument `pool` is a TD_SPACE_CUDA_HOST_PINNED pool, which host threads use \
                 directly (td_pool_allocate; kernels may then use its blocks); create the pool \
                 with TD_SPACE_CUDA for allocation in kernels",
            )),
        }
    })
}

/// Frees every block of the TD_SPACE_CUDA pool `pool` at once and zeroes its statistics, as if
/// it were new. Waits for the GPU's queued work first; no kernel may use the pool while this
/// runs, and blocks allocated before it must not be used after it.
///
/// Thread safety: any thread, while no other thread or kernel uses the pool.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT; TD_ERROR_INVALID_HANDLE; TD_ERROR_INVALID_ARGUMENT (a
/// TD_SPACE_HOST pool); TD_ERROR_INTERNAL if the GPU reports an error.
#[no_mangle]
pub unsafe extern "C" fn td_pool_reset(pool: *mut td_pool) -> td_status {
    call("td_pool_reset", || match handle::object(pool, "pool")? {
        #[cfg(feature = "cuda")]
        PoolObject::Cuda(pool) => Ok(pool.reset()?),
        PoolObject::Host(_) => Err(CError::invalid(
            "argument `pool` is a TD_SPACE_HOST pool; td_pool_reset applies to TD_SPACE_CUDA \
             pools (free host blocks with td_pool_deallocate, or release the pool)",
        )),
        #[cfg(feature = "cuda")]
        PoolObject::Pinned(_) => Err(CError::invalid(
            "argument `pool` is a TD_SPACE_CUDA_HOST_PINNED pool, used from host threads; \
             td_pool_reset applies to TD_SPACE_CUDA pools (free host blocks with \
             td_pool_deallocate, or release the pool)",
        )),
    })
}
