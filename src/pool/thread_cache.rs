//! Thread caches: per-lane stacks of freed blocks in front of the bitsets, so that a thread that
//! frees and allocates blocks of one size does so without an atomic read-modify-write (like
//! glibc's tcache).
//!
//! A freed block stays claimed in its superblock's bitset and goes onto the freeing thread's
//! lane's stack for its block size; an allocation of that size pops it. A stack is an array of
//! block addresses (`CLASS_CAPACITY` per block size, 32 B to 64 KiB blocks), so a pop touches no
//! block memory to find the next block.
//!
//! Ownership. A lane's caches are used only by the thread that owns the lane exclusively (the
//! registry in `lane.rs` hands each lane to one live thread at a time; threads beyond the lane
//! count share lanes and bypass the caches). Its stacks are therefore read and written with
//! Relaxed loads and stores, plain moves on x86-64: the owner reads its own writes. When the owner
//! exits it returns the lane with a Release RMW and the next owner takes it with an Acquire one,
//! so the next owner, which inherits the cached blocks, sees every write of the last one. A thread
//! that drains the caches of unowned lanes takes each lane from the registry the same way while it
//! drains (`lane::for_each_unowned_lane`). The stacks are atomics only because two kinds of
//! readers look at them without owning the lane: the statistics (which read `len`), and the
//! double-free check of another thread (below); neither writes them. The byte counts and usage
//! limits (below) have no such readers and are plain `Cell`s: every access is the owner's, and the
//! handover orders the owners, so there is no data race.
//!
//! Double frees. The bitset cannot tell a cached block from an allocated one (both are claimed),
//! so a push writes a tag into the block: word 2 holds the block's address xor a per-pool key
//! (blocks under 32 B are not cached). A free that finds its block tagged searches the stacks of
//! its size of every lane for the address and rejects the call only when it is there, so user
//! data that happens to equal a tag is not rejected. (The search is the slow path of a double
//! free or of such user data; the tag named the lane too until a second store per push was found
//! not worth it.) A pop clears word 2, so a
//! block handed out again carries no tag. The search reads the stack's `len` with Acquire, which
//! the owner stores with Release after writing an entry, so a free ordered after the push (the
//! sequential double free) finds the entry. Two frees of one block that race with each other are
//! a race in the caller that only the bitset's RMW could catch: with caches both may succeed;
//! `thread_cache = false` restores that check.
//!
//! Bounds. At most `CLASS_CAPACITY` blocks per size and lane, and at most a budget of bytes per
//! lane: a sixteenth of the capacity divided by the number of lanes that have used a cache of this
//! pool, so all caches together hold at most about a sixteenth of the pool (a lane filled under an
//! earlier, larger budget keeps its blocks until it pops them). Allocation that finds no block
//! returns the calling thread's cache and the caches of unowned lanes to the bitsets and searches
//! again (`MemoryPool::allocate_searching`), so a block cached by a thread that has exited is
//! never lost, and a superblock whose blocks are only cached becomes empty and reassignable again.
//!
//! Usage. The pool's usage count (`usage.rs`, for the high-water mark) must see every change of
//! the bytes a lane's thread holds, and a pop or a push changes it by a block. Updating that count
//! as well as the cache's own byte count cost 14 instructions per alloc+free pair, so a pop or a
//! push that keeps the count within its bounds changes only the cache's byte count `bytes`: the
//! bytes the lane's thread took out of its cache since the count last saw it are
//! `recorded_bytes - bytes`, and the count's net bytes plus them stay within the count's flush
//! threshold as long as `floor <= bytes <= ceiling` (set from the count by `record_usage`, which
//! adds those bytes to the count whenever it changes anyway: a claim or release in a bitset, a
//! pop or push outside the bounds, a flush). So the count, taken with the unrecorded bytes, is
//! what it would be with an update per pop and push, and flushes at the same points; the
//! high-water mark keeps its accuracy (`usage.rs`). A pop or push of the full paths updates the
//! count at once.
//!
//! The atomics are `std`'s even under `--cfg loom`, as in `lane.rs`: the registry's handover is
//! what orders the owners, and loom does not see it. The loom models run with the caches off.

use super::lane::{Lane, LANES};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{
    AtomicPtr, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};

/// lg2 of the smallest cached block: 32 bytes hold the tag in word 2.
const MIN_CACHED_LG2: u32 = 5;
/// Cached block sizes: 32 B to 64 KiB. Larger blocks are few per pool and go to the bitset.
const CLASSES: usize = 12;
/// Blocks per block size per lane.
pub(crate) const CLASS_CAPACITY: usize = 64;
/// Word index of the tag in a cached block.
const TAG_WORD: usize = 2;
/// `LaneCache::lens` of a block size that is not cached: above the capacity, so a push finds the
/// stack full, and its `len - 1` too, so a pop finds it empty (one comparison each).
const NOT_CACHED: usize = usize::MAX / 2;

/// The caches of one lane, on cache lines of their own.
#[repr(C, align(64))]
struct LaneCache {
    /// Bytes in all of the lane's stacks, for the budget and the usage count (module comment).
    /// This and the next three are read and written by the lane's owner alone (module comment),
    /// so plain cells: the compiler may then fold them into arithmetic, which it does not do
    /// with atomics.
    bytes: Cell<usize>,
    /// `bytes` when the usage count last took in the lane's pops and pushes.
    recorded_bytes: Cell<usize>,
    /// `bytes` may go down to `floor` and up to `ceiling` before the usage count must see it.
    floor: Cell<usize>,
    ceiling: Cell<usize>,
    /// Cached blocks of `2^lg2` bytes: `blocks[(lg2 - MIN_CACHED_LG2) * CLASS_CAPACITY..][..len]`
    /// with `len = lens[lg2]`, last in first out; `NOT_CACHED` for sizes outside the classes.
    /// Indexed by lg2 (0 to 64, what a bit length can be), so that no range check of the size
    /// precedes a push or pop.
    lens: [AtomicUsize; 65],
    blocks: [AtomicUsize; CLASSES * CLASS_CAPACITY],
}

impl LaneCache {
    /// Empty caches on the heap, for `Box::from_raw` to free.
    fn new_raw() -> *mut LaneCache {
        Box::into_raw(Box::new(LaneCache {
            bytes: Cell::new(0),
            recorded_bytes: Cell::new(0),
            // Nothing within limits until the first `record_usage` sets them.
            floor: Cell::new(usize::MAX),
            ceiling: Cell::new(0),
            lens: std::array::from_fn(|lg2| {
                let cached =
                    (MIN_CACHED_LG2 as usize..MIN_CACHED_LG2 as usize + CLASSES).contains(&lg2);
                AtomicUsize::new(if cached { 0 } else { NOT_CACHED })
            }),
            blocks: [const { AtomicUsize::new(0) }; CLASSES * CLASS_CAPACITY],
        }))
    }

    /// The stack entry `index` of blocks of `2^block_lg2` bytes.
    ///
    /// # Safety
    /// `index < CLASS_CAPACITY` and `lens[block_lg2]` is not `NOT_CACHED` (then `block_lg2` is
    /// one of the classes).
    #[inline(always)]
    unsafe fn entry(&self, block_lg2: u32, index: usize) -> &AtomicUsize {
        let class = (block_lg2 as usize).wrapping_sub(MIN_CACHED_LG2 as usize);
        debug_assert!(class < CLASSES && index < CLASS_CAPACITY);
        // SAFETY: by the caller's promise, `class < CLASSES` and `index < CLASS_CAPACITY`.
        unsafe { self.blocks.get_unchecked(class * CLASS_CAPACITY + index) }
    }

    /// The lg2 block sizes that are cached, with their stacks' lengths.
    fn classes(&self) -> impl Iterator<Item = (u32, &AtomicUsize)> {
        (MIN_CACHED_LG2..MIN_CACHED_LG2 + CLASSES as u32).map(|lg2| (lg2, &self.lens[lg2 as usize]))
    }
}

/// The thread caches of one pool.
pub(crate) struct ThreadCaches {
    /// Each lane's caches, created by its owner at its first cached free; `none` until then,
    /// and always when the caches are off. Freed with the pool.
    lanes: [AtomicPtr<LaneCache>; LANES],
    /// The caches of a lane that has none: every size's stack reads as full and as empty
    /// (`NOT_CACHED`), so pushes and pops fail without a test of the pointer, and nothing ever
    /// writes it. Freed with the pool.
    none: *mut LaneCache,
    enabled: bool,
    /// Bytes a lane may hold: `total_budget / lanes with a cache`; only decreases.
    lane_budget: AtomicUsize,
    lanes_with_cache: AtomicUsize,
    total_budget: usize,
    /// Tag key: any value that makes a tag unlikely to occur in user data.
    tag_key: usize,
}

/// Blocks and bytes held in thread caches.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cached {
    pub(crate) blocks: u64,
    pub(crate) bytes: u64,
}

impl ThreadCaches {
    /// Caches for a pool of `capacity` bytes whose span starts at `base`; `enabled` false gives
    /// caches that never hold a block.
    pub(crate) fn new(enabled: bool, capacity: usize, base: usize) -> ThreadCaches {
        let total_budget = capacity / 16;
        let none = LaneCache::new_raw();
        // SAFETY: just made, and not shared yet.
        for len in unsafe { &(*none).lens } {
            // Relaxed: published with the pool.
            len.store(NOT_CACHED, Relaxed);
        }
        ThreadCaches {
            lanes: std::array::from_fn(|_| AtomicPtr::new(none)),
            none,
            enabled,
            lane_budget: AtomicUsize::new(total_budget),
            lanes_with_cache: AtomicUsize::new(0),
            total_budget,
            tag_key: crate::thread_id::spread(base ^ 0x7464_5f63_6163_6865),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// The caches of `lane`, for its owner; `none`'s if the lane has none.
    #[inline(always)]
    fn lane_or_none(&self, lane: Lane) -> &LaneCache {
        // Relaxed: only owners write the pointer, and an owner reads its own write or, through
        // the registry's handover, its predecessor's (module comment). The mask drops the bounds
        // check (LANES is a power of two).
        let cache = self.lanes[lane.index() & (LANES - 1)].load(Relaxed);
        // SAFETY: the pointers come from `LaneCache::new_raw` and live as long as `self`.
        unsafe { &*cache }
    }

    /// The caches of `lane`, for its owner, if it has them.
    #[inline(always)]
    fn lane(&self, lane: Lane) -> Option<&LaneCache> {
        let cache = self.lane_or_none(lane);
        (!ptr::eq(cache, self.none)).then_some(cache)
    }

    /// The caches that lanes have, for readers other than their owners.
    fn all_lanes(&self) -> impl Iterator<Item = &LaneCache> {
        self.lanes.iter().filter_map(|lane| {
            // Acquire: the lane's stacks were created before the pointer was published.
            // SAFETY: as in `lane_or_none`.
            let cache = unsafe { &*lane.load(Acquire) };
            (!ptr::eq(cache, self.none)).then_some(cache)
        })
    }

    /// A cached block of `2^block_lg2` bytes from `lane`'s cache, its tag cleared. With `hit`,
    /// only when the lane's usage count needs no update for it (module comment, "Usage"), else
    /// `None` with nothing changed; without, the caller updates the count (`record_usage`).
    /// Only the lane's exclusive owner may call this.
    #[inline(always)]
    pub(crate) fn pop(&self, lane: Lane, block_lg2: u32, hit: bool) -> Option<usize> {
        let cache = self.lane_or_none(lane);
        // Relaxed loads and stores of the owner's stack: module comment. `len` is stored with
        // Release for the double-free search of other threads.
        let len = &cache.lens[block_lg2 as usize];
        let top = len.load(Relaxed).wrapping_sub(1);
        if top >= CLASS_CAPACITY {
            return None;
        }
        let bytes = cache.bytes.get() - (1 << block_lg2);
        if hit && bytes < cache.floor.get() {
            return None;
        }
        // SAFETY: `top < CLASS_CAPACITY`, so the size is cached (`NOT_CACHED`).
        let address = unsafe { cache.entry(block_lg2, top) }.load(Relaxed);
        len.store(top, Release);
        cache.bytes.set(bytes);
        // SAFETY: a cached block is claimed and unused, at least 32 bytes and aligned to its
        // size; the pool hands it to the caller next.
        unsafe { (address as *mut usize).add(TAG_WORD).write(0) };
        Some(address)
    }

    /// Caches the block at `address` of `2^block_lg2` bytes, claimed in its bitset, in `lane`'s
    /// cache; `false`, with nothing changed, when it does not fit there (the caller releases it
    /// to the bitset). Only the lane's exclusive owner may call this.
    ///
    /// Without `hit`, the caller has checked that the block is not cached (`is_cached`) and
    /// updates the usage count afterwards (`record_usage`); the lane's caches are created if the
    /// caches are on. With `hit` (a fast path), also `false` for a lane without caches yet, for
    /// a push that needs an update of the usage count (module comment, "Usage"), and for a
    /// block that carries a tag (it may be cached: the caller's full path searches).
    #[inline(always)]
    pub(crate) fn push(&self, lane: Lane, address: usize, block_lg2: u32, hit: bool) -> bool {
        if hit {
            // A lane without caches has `none`'s, where every push fails.
            return self.push_into(self.lane_or_none(lane), address, block_lg2, true);
        }
        match self.lane(lane) {
            Some(cache) => self.push_into(cache, address, block_lg2, false),
            None => self.push_first(lane, address, block_lg2),
        }
    }

    #[inline(always)]
    fn push_into(&self, cache: &LaneCache, address: usize, block_lg2: u32, hit: bool) -> bool {
        let len = &cache.lens[block_lg2 as usize];
        // Relaxed: the owner's own state (module comment); the budget is a bound, not a fence.
        let top = len.load(Relaxed);
        let bytes = cache.bytes.get() + (1 << block_lg2);
        // The tag is read only for a cached size (`top` below the capacity): 32 bytes at least.
        if top >= CLASS_CAPACITY
            || bytes > self.lane_budget.load(Relaxed)
            || hit && (bytes > cache.ceiling.get() || self.has_tag(address))
        {
            return false;
        }
        // SAFETY: the caller gave the block up; it is at least 32 bytes (its size is cached,
        // `NOT_CACHED`) and aligned to its size.
        unsafe {
            (address as *mut usize)
                .add(TAG_WORD)
                .write(address ^ self.tag_key)
        };
        // SAFETY: `top < CLASS_CAPACITY`, so the size is cached.
        unsafe { cache.entry(block_lg2, top) }.store(address, Relaxed);
        // Release: a double-free check that reads this `len` sees the entry (module comment).
        len.store(top + 1, Release);
        cache.bytes.set(bytes);
        true
    }

    /// `push` for a lane without caches yet: creates them when the caches are on.
    #[cold]
    #[inline(never)]
    fn push_first(&self, lane: Lane, address: usize, block_lg2: u32) -> bool {
        if !self.enabled {
            return false;
        }
        let cache = LaneCache::new_raw();
        // Release: the statistics read the new stacks through this pointer with Acquire.
        self.lanes[lane.index() & (LANES - 1)].store(cache, Release);
        // Relaxed: the budget is a bound; its order against other updates does not matter.
        let lanes = self.lanes_with_cache.fetch_add(1, Relaxed) + 1;
        self.lane_budget
            .fetch_min(self.total_budget / lanes, Relaxed);
        self.push(lane, address, block_lg2, false)
    }

    /// Brings the usage count of `lane` up to date (module comment, "Usage"): `record` adds the
    /// given net bytes (the lane's pops minus pushes since the last call, as bytes taken out of
    /// the cache) to the lane's usage count, flushing it as needed, and returns the count; then
    /// the limits of the lane's pops and pushes are set from it, for a count that flushes
    /// beyond `flush_beyond`. For a lane that is not exclusive or has no caches, `record(0)`.
    /// Only the lane's owner, or a thread holding it from the registry, may call this.
    #[inline(always)]
    pub(crate) fn record_usage(
        &self,
        lane: Lane,
        flush_beyond: usize,
        record: impl FnOnce(i64) -> u64,
    ) {
        let cache = if lane.is_exclusive() {
            self.lane(lane)
        } else {
            None
        };
        let Some(cache) = cache else {
            record(0);
            return;
        };
        let bytes = cache.bytes.get();
        let unrecorded = cache.recorded_bytes.get().wrapping_sub(bytes) as i64;
        let count = record(unrecorded) as usize + bytes;
        cache.recorded_bytes.set(bytes);
        cache.floor.set(count.saturating_sub(flush_beyond));
        cache.ceiling.set(count);
    }

    /// Whether the block at `address`, claimed in its bitset and being freed, sits in a thread
    /// cache: a double free (module comment). Call before the block is cached or released.
    #[inline(always)]
    pub(crate) fn is_cached(&self, address: usize, block_lg2: u32) -> bool {
        // A pool without caches never tags a block, and small blocks have no room for a tag.
        let class = block_lg2.wrapping_sub(MIN_CACHED_LG2) as usize;
        self.enabled && class < CLASSES && self.has_tag(address) && self.search(address, block_lg2)
    }

    /// Whether the block at `address`, being freed, carries a cache tag: it may sit in a cache.
    ///
    /// The block must be at least 32 bytes (a cached size) and given up by the caller.
    #[inline(always)]
    pub(crate) fn has_tag(&self, address: usize) -> bool {
        // SAFETY: by the caller's promise.
        let tag = unsafe { (address as *const usize).add(TAG_WORD).read() };
        tag == address ^ self.tag_key
    }

    /// Whether `address` is in a stack of blocks of `2^block_lg2` bytes (a cached size) of any
    /// lane.
    #[cold]
    #[inline(never)]
    fn search(&self, address: usize, block_lg2: u32) -> bool {
        self.all_lanes().any(|cache| {
            // Acquire: pairs with the Release store of `len` after the entry's store (module
            // comment); entries are read Relaxed after it.
            let len = cache.lens[block_lg2 as usize]
                .load(Acquire)
                .min(CLASS_CAPACITY);
            // SAFETY: `index < CLASS_CAPACITY`, and the caller passes a cached size.
            (0..len).any(|index| unsafe { cache.entry(block_lg2, index) }.load(Relaxed) == address)
        })
    }

    /// Takes every block out of `lane`'s cache and passes each, its tag cleared, to `release`
    /// with lg2 of its size; returns how many. Only the lane's owner, or a thread holding the
    /// lane from the registry, may call this, after `record_usage` (the usage count does not
    /// change: cached blocks are free blocks).
    pub(crate) fn flush(&self, lane: Lane, mut release: impl FnMut(usize, u32)) -> u64 {
        let Some(cache) = self.lane(lane) else {
            return 0;
        };
        let mut flushed = 0;
        for (block_lg2, len) in cache.classes() {
            // Relaxed, Release: as in `pop`.
            let n = len.load(Relaxed);
            len.store(0, Release);
            for index in 0..n {
                // SAFETY: `index < n <= CLASS_CAPACITY`, and `block_lg2` is a cached size.
                let address = unsafe { cache.entry(block_lg2, index) }.load(Relaxed);
                // SAFETY: as in `pop`: the block is cached, so claimed and unused.
                unsafe { (address as *mut usize).add(TAG_WORD).write(0) };
                release(address, block_lg2);
            }
            flushed += n as u64;
        }
        // The usage count saw every pop and push (the caller's `record_usage`): the limits
        // move with `bytes` and `recorded_bytes`, which stay equal.
        let bytes = cache.bytes.replace(0);
        debug_assert_eq!(cache.recorded_bytes.get(), bytes);
        cache.recorded_bytes.set(0);
        cache.floor.set(cache.floor.get().saturating_sub(bytes));
        cache.ceiling.set(cache.ceiling.get() - bytes);
        flushed
    }

    /// Blocks and bytes in all caches; exact when no thread allocates or frees meanwhile.
    pub(crate) fn cached(&self) -> Cached {
        let mut cached = Cached::default();
        for cache in self.all_lanes() {
            for (block_lg2, len) in cache.classes() {
                // Relaxed: a statistic, exact once the owner is synchronized with the caller.
                let len = len.load(Relaxed) as u64;
                cached.blocks += len;
                cached.bytes += len << block_lg2;
            }
        }
        cached
    }
}

impl Drop for ThreadCaches {
    fn drop(&mut self) {
        for lane in &mut self.lanes {
            let cache = *lane.get_mut();
            if cache != self.none {
                // SAFETY: made by `LaneCache::new_raw` in `push_first`, freed only here.
                drop(unsafe { Box::from_raw(cache) });
            }
        }
        // SAFETY: made by `LaneCache::new_raw` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.none) });
    }
}
