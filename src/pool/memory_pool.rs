//! The host memory pool (000 §3.1): owns a span of host memory and the pool's state, and runs the
//! algorithm of `claim.rs`, `release.rs` and `search.rs` over them.

use super::config::PoolConfig;
use super::failure::AllocFailure;
use super::lane::{self, Lane, LANES};
use super::layout::PoolLayout;
use super::state::{Claim, PoolState};
use super::thread_cache::{Cached, ThreadCaches};
use super::usage::{self, UsageCounters, UsageStatistics};
use crate::cache_line::LineAligned;
use crate::error::{Error, ErrorKind, Result};
use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// A finite, thread-safe pool of power-of-two blocks carved from one span of host memory.
/// Every block is aligned to its own size.
///
/// Ownership: the pool owns its span and state and frees them when dropped, which ends every
/// block still allocated. A block belongs to its caller from `allocate` until `deallocate`.
/// Thread safety: every method takes `&self` and may run concurrently from any thread.
pub struct MemoryPool {
    state: PoolState<LineAligned<AtomicU64>, LineAligned<AtomicU32>>,
    span: NonNull<u8>,
    span_layout: Layout,
    usage: UsageCounters,
    caches: ThreadCaches,
    /// `layout.max_block_size()` and `layout.min_block_size() - 1`, for `block_lg2_for`, which
    /// every allocation runs and which would otherwise shift them into place each time.
    max_block_size: usize,
    min_block_mask: usize,
}

// SAFETY: the span is plain memory that the pool hands out one block at a time, and every piece
// of shared state is atomic, but for the thread caches' byte counts, which only a lane's owner
// accesses, the owners being ordered by the lane registry's handover (`thread_cache.rs`); so the
// pool may be moved to and used from any thread.
unsafe impl Send for MemoryPool {}
// SAFETY: as above; `&MemoryPool` only reaches the span through claims and releases of blocks.
unsafe impl Sync for MemoryPool {}

impl MemoryPool {
    /// A pool for `config`, with its span taken from the global allocator.
    ///
    /// Errors: `InvalidArgument` for parameters that break 000 §3.1's constraints (the message
    /// names the inequality and values); `OutOfMemory` when the span or state cannot be allocated.
    pub fn new(config: &PoolConfig) -> Result<MemoryPool> {
        let layout = config.layout()?;
        let out_of_memory = |what: &str, bytes: usize| {
            Error::new(
                ErrorKind::OutOfMemory,
                format!("memory pool: cannot allocate {bytes} bytes for its {what}"),
            )
        };
        let superblocks = LineAligned::new(layout.state_words(), || AtomicU64::new(0))
            .map_err(|_| out_of_memory("superblock state", layout.state_words() * 8))?;
        let hints = LineAligned::new(layout.hint_count(), || AtomicU32::new(0))
            .map_err(|_| out_of_memory("hints", layout.hint_count() * 4))?;
        for lane in 0..LANES {
            for block_lg2 in layout.min_block_lg2..=layout.max_block_lg2 {
                let start = layout.lane_window_start(lane, block_lg2) as u32;
                // Relaxed: the pool is not shared yet; whatever shares it publishes these.
                hints[layout.hint_index(lane, block_lg2)].store(start, Relaxed);
            }
        }
        // Aligned to the superblock size, so that every block is aligned to its own size in
        // absolute address terms, not only relative to the span.
        let span_layout = Layout::from_size_align(layout.capacity(), layout.superblock_size())
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "memory pool: a span of {} bytes aligned to {} bytes is not allocatable ({e}); \
                     lower min_total_alloc_size",
                    layout.capacity(),
                    layout.superblock_size()
                ))
            })?;
        // SAFETY: the layout has a non-zero size (at least one superblock).
        let span = NonNull::new(unsafe { alloc::alloc(span_layout) })
            .ok_or_else(|| out_of_memory("span", layout.capacity()))?;
        Ok(MemoryPool {
            state: PoolState::new(layout, span.as_ptr() as usize, superblocks, hints),
            span,
            span_layout,
            usage: UsageCounters::new(layout.max_block_size() as u64, layout.capacity() as u64),
            caches: ThreadCaches::new(
                config.thread_cache,
                layout.capacity(),
                span.as_ptr() as usize,
            ),
            max_block_size: layout.max_block_size(),
            min_block_mask: layout.min_block_size() - 1,
        })
    }

    /// A block of at least `size` bytes, aligned to its own size, searching at most
    /// `attempt_limit` rounds (0 counts as 1) when blocks are short (000 §3.1 `allocate`).
    ///
    /// Thread-safe and lock-free. The block is the caller's until passed to `deallocate`.
    /// Errors: `ZeroSize` for 0 bytes (not an error), `TooLarge` above the largest block,
    /// `Exhausted` when no block was found (counted in the statistics).
    #[inline(always)]
    pub fn allocate(
        &self,
        size: usize,
        attempt_limit: u32,
    ) -> std::result::Result<NonNull<u8>, AllocFailure> {
        // The usual case alone, with everything else out of line: a thread with a lane of its
        // own (its usage counter needs no test of the lane's kind, and it has a thread cache),
        // a size the pool serves, and a block in the thread's cache or the hinted superblock.
        // With the lane lookup of `lane.rs`, measured with callgrind (bench/pool, one thread,
        // instructions per alloc+free pair including the benchmark's loop): 64 B 330 -> 284,
        // 1 KiB 346 -> 299, mixed 64-4096 B 379 -> 332.
        if let Some(lane) = lane::cached() {
            if let Some(block_lg2) = self.block_lg2_for(size) {
                if let Some(block) = self.pop_cached(lane, block_lg2) {
                    return Ok(block);
                }
                if let Some(claim) = self.state.claim_from_hint(lane, block_lg2) {
                    return Ok(self.hand_out(lane, claim));
                }
            }
        }
        self.allocate_otherwise(size, attempt_limit)
    }

    /// The thread-cache hit of `allocate`, alone: a block when the calling thread owns a lane
    /// whose cache holds one of the size, `None` otherwise (then call `allocate`, which does
    /// everything this does and more). Small enough to inline where a caller's own checks and
    /// error handling would otherwise keep registers busy (the C API's fast path).
    #[inline(always)]
    pub fn allocate_cached(&self, size: usize) -> Option<NonNull<u8>> {
        let lane = lane::cached()?;
        let bits = size.wrapping_sub(1);
        if bits >= self.max_block_size {
            return None;
        }
        // `block_lg2_for`, but `| 1` spares the compiler the case of a zero operand; it changes
        // the result only for 1 byte with 1-byte minimum blocks (1 instead of 0), and no cache
        // holds either size.
        let block_lg2 = usize::BITS - (bits | self.min_block_mask | 1).leading_zeros();
        let address = self.caches.pop(lane, block_lg2, true)?;
        // SAFETY: cached blocks are blocks of the span, never at address 0.
        Some(unsafe { NonNull::new_unchecked(address as *mut u8) })
    }

    /// `allocate` once its usual case did not apply (a claim in the hinted superblock is tried
    /// again, as the first step of the search).
    #[cold]
    #[inline(never)]
    fn allocate_otherwise(
        &self,
        size: usize,
        attempt_limit: u32,
    ) -> std::result::Result<NonNull<u8>, AllocFailure> {
        let lane = lane::current();
        if lane.is_exclusive() {
            if let Some(block) = self
                .block_lg2_for(size)
                .and_then(|block_lg2| self.pop_cached(lane, block_lg2))
            {
                return Ok(block);
            }
        }
        self.allocate_in_lane(lane, size, attempt_limit)
    }

    /// lg2 of the block that serves `size` bytes (`PoolLayout::block_lg2_for`), or `None` for 0
    /// and sizes above the largest block (one comparison rejects both).
    #[inline(always)]
    fn block_lg2_for(&self, size: usize) -> Option<u32> {
        let bits = size.wrapping_sub(1);
        // The bit length of `size - 1` is ceil(lg2(size)); or-ing in the minimum block's low bits
        // raises it to the minimum's lg2 where it is smaller.
        (bits < self.max_block_size)
            .then(|| usize::BITS - (bits | self.min_block_mask).leading_zeros())
    }

    /// A block of the lane's cache for the size, counted as consumed; the lane is the caller's
    /// own, not shared.
    #[inline(always)]
    fn pop_cached(&self, lane: Lane, block_lg2: u32) -> Option<NonNull<u8>> {
        let address = match self.caches.pop(lane, block_lg2, true) {
            Some(address) => address,
            None => self.pop_recording(lane, block_lg2)?,
        };
        // SAFETY: cached blocks are blocks of the span, never at address 0.
        Some(unsafe { NonNull::new_unchecked(address as *mut u8) })
    }

    /// `pop_cached` for a pop that takes the lane's usage count beyond its limits.
    #[cold]
    #[inline(never)]
    fn pop_recording(&self, lane: Lane, block_lg2: u32) -> Option<usize> {
        let address = self.caches.pop(lane, block_lg2, false)?;
        self.record(lane, 0);
        Some(address)
    }

    /// Counts `bytes` claimed (positive) or released (negative) in the bitsets by the thread of
    /// `lane`, and the pops and pushes of its cache since the last count
    /// (`ThreadCaches::record_usage`).
    #[inline(always)]
    fn record(&self, lane: Lane, bytes: i64) {
        let flush_beyond = self.usage.flush_beyond() as usize;
        self.caches.record_usage(lane, flush_beyond, |unrecorded| {
            self.usage.record(lane, bytes + unrecorded)
        });
    }

    /// `allocate` with a lane chosen by the caller instead of the thread's own, bypassing the
    /// thread caches. Internal: for model checks, which run their threads on one OS thread. On a
    /// pool with thread caches an exclusive `lane` must be the calling thread's own: the usage
    /// count of its cache (`ThreadCaches::record_usage`) is its owner's alone.
    #[doc(hidden)]
    #[inline(always)]
    pub fn allocate_in_lane(
        &self,
        lane: Lane,
        size: usize,
        attempt_limit: u32,
    ) -> std::result::Result<NonNull<u8>, AllocFailure> {
        let Some(block_lg2) = self.block_lg2_for(size) else {
            return Err(self.unservable(size));
        };
        match self.state.claim_from_hint(lane, block_lg2) {
            Some(claim) => Ok(self.hand_out(lane, claim)),
            None => self.allocate_searching(lane, size, block_lg2, attempt_limit),
        }
    }

    /// The allocation's slow path: the search of 000 §2.5.3 over the superblocks; when it finds
    /// nothing, cached blocks go back to the bitsets and the search runs once more.
    #[cold]
    #[inline(never)]
    fn allocate_searching(
        &self,
        lane: Lane,
        size: usize,
        block_lg2: u32,
        attempt_limit: u32,
    ) -> std::result::Result<NonNull<u8>, AllocFailure> {
        let search = || {
            self.state
                .claim_block_searching(lane, block_lg2, attempt_limit)
        };
        let claim = search().or_else(|| (self.return_cached_blocks() > 0).then(search).flatten());
        match claim {
            Some(claim) => Ok(self.hand_out(lane, claim)),
            None => Err(self.exhausted(size, block_lg2, attempt_limit)),
        }
    }

    /// Returns to the bitsets the blocks in the calling thread's cache and in the caches of lanes
    /// no thread owns (threads that exited); returns how many. Blocks in the caches of other live
    /// threads stay there (the exhaustion message counts them).
    #[cold]
    #[inline(never)]
    fn return_cached_blocks(&self) -> u64 {
        if !self.caches.enabled() {
            return 0;
        }
        let mut returned = self.flush_thread_cache();
        lane::for_each_unowned_lane(|lane| returned += self.flush_lane(lane));
        returned
    }

    /// Returns the blocks in the calling thread's cache to the bitsets, so that other threads
    /// can allocate them and their superblocks can be reassigned; returns how many. A thread
    /// that shares a lane has no cache.
    pub fn flush_thread_cache(&self) -> u64 {
        let lane = lane::current();
        if lane.is_exclusive() {
            self.flush_lane(lane)
        } else {
            0
        }
    }

    /// Flushes `lane`'s cache, which the caller owns.
    fn flush_lane(&self, lane: Lane) -> u64 {
        // The count first: flushing needs it up to date (`ThreadCaches::flush`).
        self.record(lane, 0);
        self.caches.flush(lane, |address, block_lg2| {
            // A cached block is claimed in its bitset and of the size it is cached under.
            let released = self.state.release(address, 1 << block_lg2);
            debug_assert_eq!(released.ok(), Some(block_lg2));
        })
    }

    #[inline(always)]
    fn hand_out(&self, lane: Lane, claim: Claim) -> NonNull<u8> {
        self.record(lane, 1 << claim.block_lg2);
        // SAFETY: a claim's offset is below the capacity, inside the span.
        unsafe { self.span.add(claim.offset) }
    }

    #[cold]
    #[inline(never)]
    fn unservable(&self, size: usize) -> AllocFailure {
        if size == 0 {
            AllocFailure::ZeroSize
        } else {
            AllocFailure::TooLarge {
                size,
                max_block_size: self.layout().max_block_size(),
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn exhausted(&self, size: usize, block_lg2: u32, attempt_limit: u32) -> AllocFailure {
        self.usage.record_failure();
        let cached = self.caches.cached();
        AllocFailure::Exhausted {
            size,
            block_size: 1 << block_lg2,
            attempt_limit: attempt_limit.max(1),
            capacity: self.capacity(),
            consumed_bytes: self.state.census().bytes.saturating_sub(cached.bytes),
            cached_bytes: cached.bytes,
        }
    }

    /// Releases a block (000 §3.1 `deallocate`) in constant time. Thread-safe and lock-free.
    ///
    /// Errors, all `InvalidArgument` and leaving the pool unchanged: `ptr` outside the span, not
    /// the start of a block, not allocated (a double free is caught unless the block was
    /// allocated again meanwhile, also while the block sits in a thread cache; two frees of one
    /// block racing with each other are caught only without thread caches), or `size` needing a
    /// larger block than the one at `ptr` (a smaller `size` is accepted, as blocks of larger
    /// superblocks serve small requests).
    ///
    /// With thread caches on, a block freed by a thread that owns a lane goes to that thread's
    /// cache for its size (it stays claimed in the bitset); see `thread_cache.rs`.
    ///
    /// # Safety
    /// `ptr` must come from `allocate` on this pool and not have been released, with `size` the
    /// size asked for; the caller gives the block up: no access to it may follow this call, and
    /// accesses that preceded it must happen-before it.
    #[inline(always)]
    pub unsafe fn deallocate(&self, ptr: *mut u8, size: usize) -> Result<()> {
        // As in `allocate`.
        match lane::cached() {
            // SAFETY: forwarded to the caller.
            Some(lane) => unsafe { self.deallocate_caching(lane, ptr, size) },
            // SAFETY: forwarded to the caller.
            None => unsafe { self.deallocate_otherwise(ptr, size) },
        }
    }

    /// The thread-cache case of `deallocate`, alone: `true` when the block passed every check of
    /// `deallocate` and went into the calling thread's cache; `false`, with nothing changed, in
    /// every other case (a thread without a lane of its own, a full cache, a bad argument, a
    /// block carrying a cache tag): then call `deallocate`, which checks again and reports.
    ///
    /// # Safety
    /// As for `deallocate`.
    #[inline(always)]
    pub unsafe fn deallocate_cached(&self, ptr: *mut u8, size: usize) -> bool {
        let address = ptr as usize;
        // The lane after the block: fewer values live at once, so no registers to save.
        let Some(block_lg2) = self.state.claimed_block_quietly(address, size) else {
            return false;
        };
        // A tagged block may sit in a cache: `push` leaves it to `deallocate`, which searches.
        lane::cached().is_some_and(|lane| self.caches.push(lane, address, block_lg2, true))
    }

    /// `deallocate` by the owner of `lane`, or by a thread sharing it (`lane` not exclusive),
    /// which releases to the bitset. Validates as `PoolState::release` does, then rejects a
    /// block that is not claimed or that sits in a thread cache, then caches or releases it.
    ///
    /// # Safety
    /// As for `deallocate`; `lane`, when exclusive, is the calling thread's own.
    #[inline(always)]
    unsafe fn deallocate_caching(&self, lane: Lane, ptr: *mut u8, size: usize) -> Result<()> {
        let address = ptr as usize;
        let located = self.state.locate(address, size)?;
        let block_lg2 = located.block_lg2;
        if !self.state.is_claimed(located) || self.caches.is_cached(address, block_lg2) {
            return Err(super::failure::not_allocated(address, block_lg2));
        }
        if lane.is_exclusive() && self.caches.push(lane, address, block_lg2, false) {
            self.record(lane, 0);
        } else {
            self.state.release_located(address, located)?;
            self.record(lane, -(1 << block_lg2));
        }
        Ok(())
    }

    /// `deallocate` for a thread whose lane is not cached.
    ///
    /// # Safety
    /// As for `deallocate`.
    #[cold]
    #[inline(never)]
    unsafe fn deallocate_otherwise(&self, ptr: *mut u8, size: usize) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.deallocate_caching(lane::current(), ptr, size) }
    }

    /// `deallocate` with a lane chosen by the caller, bypassing the thread caches (a block that
    /// sits in one is not detected: use it on pools without thread caches, or pass the calling
    /// thread's own lane, as for `allocate_in_lane`). Internal: for model checks.
    ///
    /// # Safety
    /// As for `deallocate`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn deallocate_in_lane(&self, lane: Lane, ptr: *mut u8, size: usize) -> Result<()> {
        let block_lg2 = self.state.release(ptr as usize, size)?;
        self.record(lane, -(1 << block_lg2));
        Ok(())
    }

    /// The block size `allocate(size)` would use: the smallest power of two at least
    /// `max(size, min_block_size())`, or 0 when `size` exceeds `max_block_size()`.
    pub fn allocate_block_size(&self, size: usize) -> usize {
        if size > self.layout().max_block_size() {
            0
        } else {
            1 << self.layout().block_lg2_for(size.max(1))
        }
    }

    /// Bytes the pool can hand out: at least `min_total_alloc_size`.
    pub fn capacity(&self) -> usize {
        self.layout().capacity()
    }

    pub fn min_block_size(&self) -> usize {
        self.layout().min_block_size()
    }

    pub fn max_block_size(&self) -> usize {
        self.layout().max_block_size()
    }

    pub fn superblock_size(&self) -> usize {
        self.layout().superblock_size()
    }

    pub fn superblock_count(&self) -> usize {
        self.layout().superblock_count as usize
    }

    /// The pool's geometry, as shared with device code.
    pub fn layout(&self) -> &PoolLayout {
        &self.state.layout
    }

    /// Whether `ptr` points into the pool's span.
    pub fn contains(&self, ptr: *const u8) -> bool {
        (ptr as usize).wrapping_sub(self.span.as_ptr() as usize) < self.capacity()
    }

    /// Block size of the superblock holding `ptr`, or `None` outside the span or in a superblock
    /// never assigned. Internal: lets model checks see a superblock's size while holding a block.
    #[doc(hidden)]
    pub fn block_size_at(&self, ptr: *const u8) -> Option<usize> {
        let offset = (ptr as usize).wrapping_sub(self.span.as_ptr() as usize);
        if offset >= self.capacity() {
            return None;
        }
        self.state.block_lg2_at(offset).map(|lg2| 1 << lg2)
    }

    /// The first byte of the span, `capacity()` bytes long: for registering the span with other
    /// systems (page-locking it for a GPU). Blocks in it belong to their allocators.
    pub fn span_address(&self) -> *mut u8 {
        self.span.as_ptr()
    }

    /// A snapshot of the pool's use; see `UsageStatistics` for what is exact when. Blocks in
    /// thread caches count as reserved, not consumed.
    pub fn usage_statistics(&self) -> UsageStatistics {
        let (high_water, failed) = self.usage.high_water_and_failures();
        let Cached { blocks, bytes } = self.caches.cached();
        let mut census = self.state.census();
        // Saturating: counted at slightly different moments while threads run.
        census.blocks = census.blocks.saturating_sub(blocks);
        census.bytes = census.bytes.saturating_sub(bytes);
        census.free_blocks += blocks;
        census.free_bytes += bytes;
        UsageStatistics {
            cached_blocks: blocks,
            cached_bytes: bytes,
            ..usage::statistics(&self.state.layout, census, high_water, failed)
        }
    }
}

impl Drop for MemoryPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout and freed only here.
        unsafe { alloc::dealloc(self.span.as_ptr(), self.span_layout) }
    }
}

impl std::fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryPool")
            .field("span", &self.span)
            .field("layout", &self.state.layout)
            .finish_non_exhaustive()
    }
}
