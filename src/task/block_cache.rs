//! A worker's cache of pool blocks: blocks of released tasks and when_alls wait here, per block
//! size, for the worker's next allocation of that size, because a pool allocate+free pair costs
//! tens of nanoseconds and a Fibonacci node allocates two blocks.
//!
//! The blocks stay allocated in the pool while cached, so the pool's statistics count them, and
//! the cache is bounded: each size keeps at most `limit` blocks, where `limit` is chosen when the
//! scheduler is created so that all workers together cache at most 1/32 of the pool (and never
//! more than `MAX_PER_SIZE` per size). Caches are emptied into the pool when a wait ends and
//! before a failed allocation is retried, so they cannot hide memory from a spawn on the same
//! worker; blocks cached by other workers during a wait can (at most that 1/32).
//!
//! A cached block keeps its header, marked released (`ident` = `IDENT_FREED`), so a stale future
//! is still recognised; the cache links blocks through the header's `next`.

use super::header::TaskHeader;
use crate::pool::MemoryPool;
use crate::sync::atomic::Ordering;
use std::num::NonZeroUsize;
use std::ptr::NonNull;

/// Most blocks of one size a worker keeps.
pub(crate) const MAX_PER_SIZE: u32 = 64;
/// All workers' caches together hold at most this fraction of the pool's capacity.
const POOL_FRACTION: usize = 32;

/// Lists in a cache: one for every lg2 a block size can have, so that a size indexes its list
/// without a subtraction or a bounds test (callgrind, F(22): td_task_spawn 216.5 -> 214.5,
/// td_future_release 88.0 -> 86.0 instructions per node; the run loop, laid out anew, 178.9 ->
/// 180.9). Lists of sizes the pool has not stay empty.
const LISTS: usize = usize::BITS as usize;

/// The lists' heads and lengths in two arrays in the cache itself, where an array of lists
/// behind a pointer took a load of the pointer and a shift and an addition for the 16-byte
/// entry: a list is now its lg2 scaled in the addressing of the worker's own fields
/// (callgrind, F(22), per node: td_task_spawn 187.5 -> 186.5 instructions with one worker,
/// 199 -> 195 with two; td_future_release 53 -> 50 and 59 -> 56).
///
/// A list counts the blocks it may still take (its room, the limit less its length), not its
/// length: a keep then tests the room against zero, where a compare of the length with the
/// limit loaded both (callgrind, F(22): td_future_release 48 -> 47 instructions per node with
/// one worker, 49 -> 48 with two).
pub(crate) struct BlockCache {
    heads: [*mut TaskHeader; LISTS],
    rooms: [u32; LISTS],
    #[cfg(all(test, not(loom)))]
    min_lg2: u32,
    #[cfg(all(test, not(loom)))]
    limit: u32,
}

/// lg2 of the pool block that serves a request of `size` bytes (`1 < size`): the least `lg2`
/// with `size <= 2^lg2` and `min_mask < 2^lg2`, where `min_mask` is the pool's smallest block
/// size less one. Requests with the same value are served by blocks of the same size. The mask
/// in the operand takes the place of a `max` with the smallest block's lg2 (callgrind, F(22):
/// td_task_spawn 217.5 -> 216.5 instructions per node). The operand's bit 0, which changes
/// nothing for `1 < size`, makes it non-zero: an `or`, a `bsr` and an increment, where
/// `leading_zeros` of a value that may be zero took four instructions (td_task_spawn 188.5 ->
/// 187.5 instructions per node with one worker, 200 -> 199 with two).
#[inline(always)]
pub(crate) fn block_lg2(size: usize, min_mask: usize) -> u32 {
    (NonZeroUsize::MIN | (size - 1) | min_mask).ilog2() + 1
}

/// Blocks of each size one worker may cache when `workers` share a pool of `capacity` bytes
/// whose smallest block is `2^min_lg2`.
pub(crate) fn limit_per_size(capacity: usize, min_lg2: u32, workers: usize) -> u32 {
    let per_worker = capacity / POOL_FRACTION / workers.max(1);
    // Counted in smallest blocks: larger sizes may hold fewer bytes' worth, which only caches
    // less. (A fib node's task and when_all both take the smallest useful size, 128 bytes.)
    let blocks = per_worker >> (min_lg2.max(7));
    blocks.min(MAX_PER_SIZE as usize) as u32
}

impl BlockCache {
    pub(crate) fn new(pool: &MemoryPool, limit: u32) -> BlockCache {
        debug_assert!((pool.layout().max_block_lg2 as usize) < LISTS);
        BlockCache {
            heads: [std::ptr::null_mut(); LISTS],
            rooms: [limit; LISTS],
            #[cfg(all(test, not(loom)))]
            min_lg2: pool.layout().min_block_lg2,
            #[cfg(all(test, not(loom)))]
            limit,
        }
    }

    /// The index of the list for blocks of `2^lg2` bytes (a block size of the pool, 000 §2.5.3,
    /// so below `LISTS`).
    #[inline(always)]
    fn list(lg2: u32) -> usize {
        lg2 as usize % LISTS
    }

    /// lg2 of the block size that serves a request of `size` bytes (as `Place::block_lg2`).
    #[cfg(all(test, not(loom)))]
    fn block_lg2(&self, size: usize) -> u32 {
        block_lg2(size, (1 << self.min_lg2) - 1)
    }

    /// A cached block for a request of `size` bytes (`0 < size <= max block`), if any.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn take(&mut self, size: usize) -> Option<NonNull<u8>> {
        self.take_lg2(self.block_lg2(size))
    }

    /// A cached block of `2^lg2` bytes, if any.
    #[inline(always)]
    pub(crate) fn take_lg2(&mut self, lg2: u32) -> Option<NonNull<u8>> {
        let i = BlockCache::list(lg2);
        let block = NonNull::new(self.heads[i])?;
        // SAFETY: cached blocks hold a released header whose `next` links the list.
        self.heads[i] = unsafe { block.as_ref().next.load(Ordering::Relaxed) };
        self.rooms[i] += 1;
        Some(block.cast())
    }

    /// Keeps a released block for reuse, or returns it to the pool when its list is full.
    ///
    /// # Safety
    /// `block` is a released header of a block from `pool` allocated for `alloc_size` bytes, and
    /// nobody references it any more.
    #[cfg(all(test, not(loom)))]
    pub(crate) unsafe fn give(
        &mut self,
        pool: &MemoryPool,
        block: NonNull<TaskHeader>,
        alloc_size: usize,
    ) {
        if !self.keep_lg2(block, self.block_lg2(alloc_size)) {
            return_to_pool(pool, block, alloc_size);
        }
    }

    /// Keeps a released block of `2^lg2` bytes for reuse; `false` when its list is full
    /// and the caller must return it to the pool (so that the pool is looked up only then).
    ///
    /// # Safety
    /// As for `give`.
    #[inline(always)]
    pub(crate) unsafe fn keep_lg2(&mut self, block: NonNull<TaskHeader>, lg2: u32) -> bool {
        let i = BlockCache::list(lg2);
        if self.rooms[i] == 0 {
            return false;
        }
        block.as_ref().next.store(self.heads[i], Ordering::Relaxed);
        self.heads[i] = block.as_ptr();
        self.rooms[i] -= 1;
        true
    }

    /// Returns every cached block to the pool.
    pub(crate) fn flush(&mut self, pool: &MemoryPool) {
        self.return_some(pool, usize::MAX);
    }

    /// Returns at most `most` cached blocks to the pool; whether any stay cached.
    pub(crate) fn return_some(&mut self, pool: &MemoryPool, most: usize) -> bool {
        let mut left = most;
        for (head, room) in self.heads.iter_mut().zip(self.rooms.iter_mut()) {
            while let Some(block) = NonNull::new(*head) {
                if left == 0 {
                    return true;
                }
                left -= 1;
                // SAFETY: as in `take`; the block is ours until it is returned.
                unsafe {
                    *head = block.as_ref().next.load(Ordering::Relaxed);
                    *room += 1;
                    let size = block.as_ref().alloc_size();
                    return_to_pool(pool, block, size);
                }
            }
        }
        false
    }

    /// Blocks held, for tests.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn len(&self) -> usize {
        self.rooms.iter().map(|&r| (self.limit - r) as usize).sum()
    }
}

/// Returns a block to the pool.
///
/// # Safety
/// As for `BlockCache::give`.
#[inline(never)]
pub(crate) unsafe fn return_to_pool(pool: &MemoryPool, block: NonNull<TaskHeader>, size: usize) {
    // The block came from this pool with this size, so the pool cannot refuse it.
    let freed = pool.deallocate(block.as_ptr().cast(), size);
    debug_assert!(freed.is_ok(), "pool refused a task block: {freed:?}");
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::pool::PoolConfig;

    #[test]
    fn the_limit_keeps_caches_to_a_thirty_second_of_the_pool() {
        assert_eq!(limit_per_size(64 << 20, 6, 16), MAX_PER_SIZE);
        // 16 KiB among 1 worker: 512 bytes = 4 blocks of 128.
        assert_eq!(limit_per_size(16 << 10, 6, 1), 4);
        assert_eq!(limit_per_size(4096, 6, 2), 0);
    }

    /// A released header for a block allocated with `size` bytes, as the scheduler leaves it.
    fn released(block: NonNull<u8>, size: usize) -> NonNull<TaskHeader> {
        use super::super::header::{HeaderInit, Kind};
        let init = HeaderInit {
            kind: Kind::Task,
            generation: 0,
            priority: crate::priority::Priority::Regular,
            team: false,
            scheduler: std::ptr::null(),
            function: None,
            destroy: None,
            size: 0,
            alloc_size: size as u32,
            block_lg2: block_lg2(size, 0),
            refs: 0,
        };
        let h = unsafe { TaskHeader::init(block, &init) };
        unsafe { h.as_ref().mark_freed() };
        h
    }

    #[test]
    fn cached_blocks_are_reused_and_flushed_to_the_pool() {
        let pool = MemoryPool::new(&PoolConfig::with_total(1 << 16)).unwrap();
        let mut cache = BlockCache::new(&pool, 2);
        let blocks: Vec<NonNull<u8>> = (0..3).map(|_| pool.allocate(100, 1).unwrap()).collect();
        for &b in &blocks {
            unsafe { cache.give(&pool, released(b, 100), 100) };
        }
        // Two kept, the third went back to the pool.
        assert_eq!(cache.len(), 2);
        assert_eq!(pool.usage_statistics().consumed_blocks, 2);
        let again = cache.take(120).unwrap();
        assert!(blocks.contains(&again));
        assert_eq!(cache.len(), 1);
        unsafe { return_to_pool(&pool, again.cast(), 100) };
        cache.flush(&pool);
        assert_eq!(cache.len(), 0);
        assert_eq!(pool.usage_statistics().consumed_blocks, 0);
    }

    #[test]
    fn cached_blocks_return_to_the_pool_a_few_at_a_time() {
        let pool = MemoryPool::new(&PoolConfig::with_total(1 << 16)).unwrap();
        let mut cache = BlockCache::new(&pool, 8);
        // Two sizes, so that a batch spans lists.
        for size in [100, 100, 100, 300, 300] {
            let b = pool.allocate(size, 1).unwrap();
            unsafe { cache.give(&pool, released(b, size), size) };
        }
        assert_eq!(cache.len(), 5);
        assert!(cache.return_some(&pool, 2));
        assert_eq!(cache.len(), 3);
        assert_eq!(pool.usage_statistics().consumed_blocks, 3);
        assert!(cache.return_some(&pool, 2));
        assert_eq!(cache.len(), 1);
        assert!(!cache.return_some(&pool, 2));
        assert_eq!(cache.len(), 0);
        assert_eq!(pool.usage_statistics().consumed_blocks, 0);
        assert!(!cache.return_some(&pool, 2));
        // What is left is taken as before.
        let b = pool.allocate(100, 1).unwrap();
        unsafe { cache.give(&pool, released(b, 100), 100) };
        assert_eq!(cache.take(100), Some(b));
    }
}
