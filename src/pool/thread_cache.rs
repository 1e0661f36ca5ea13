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
//! double-free check of another thread (below); neither writes them.
//!
//! Double frees. The bitset cannot tell a cached block from an allocated one (both are claimed),
//! so a push writes a tag into the block: word 2 holds the block's address xor a per-pool key,
//! word 3 the lane xor a second key (blocks under 32 B are not cached). A free that finds its
//! block tagged searches the named lane's stack for the address and rejects the call only when it
//! is there, so user data that happens to equal a tag is not rejected. A pop clears word 2, so a
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
//! The atomics are `std`'s even under `--cfg loom`, as in `lane.rs`: the registry's handover is
//! what orders the owners, and loom does not see it. The loom models run with the caches off.

use super::lane::{Lane, LANES};
use std::ptr;
use std::sync::atomic::{
    AtomicPtr, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};

/// lg2 of the smallest cached block: 32 bytes hold the tag in words 2 and 3.
const MIN_CACHED_LG2: u32 = 5;
/// Cached block sizes: 32 B to 64 KiB. Larger blocks are few per pool and go to the bitset.
const CLASSES: usize = 12;
/// Blocks per block size per lane.
pub(crate) const CLASS_CAPACITY: usize = 64;
/// Word indices of the tag in a cached block.
const TAG_WORD: usize = 2;
const LANE_WORD: usize = 3;

/// The cached blocks of one size in one lane: `blocks[..len]`, last in first out.
struct ClassStack {
    len: AtomicUsize,
    blocks: [AtomicUsize; CLASS_CAPACITY],
}

/// The caches of one lane, on cache lines of their own.
#[repr(align(64))]
struct LaneCache {
    /// Bytes in all of the lane's stacks, for the budget.
    bytes: AtomicUsize,
    classes: [ClassStack; CLASSES],
}

/// The thread caches of one pool.
pub(crate) struct ThreadCaches {
    /// Each lane's caches, created by its owner at its first cached free; null until then, and
    /// always when the caches are off. Freed with the pool.
    lanes: [AtomicPtr<LaneCache>; LANES],
    enabled: bool,
    /// Bytes a lane may hold: `total_budget / lanes with a cache`; only decreases.
    lane_budget: AtomicUsize,
    lanes_with_cache: AtomicUsize,
    total_budget: usize,
    /// Tag keys: any values that make a tag unlikely to occur in user data.
    tag_key: usize,
    lane_key: usize,
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
        ThreadCaches {
            lanes: [const { AtomicPtr::new(ptr::null_mut()) }; LANES],
            enabled,
            lane_budget: AtomicUsize::new(total_budget),
            lanes_with_cache: AtomicUsize::new(0),
            total_budget,
            tag_key: crate::thread_id::spread(base ^ 0x7464_5f63_6163_6865),
            lane_key: crate::thread_id::spread(base ^ 0x6c61_6e65_5f74_6167),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// The caches of `lane`, for its owner.
    #[inline(always)]
    fn lane(&self, lane: Lane) -> Option<&LaneCache> {
        // Relaxed: only owners write the pointer, and an owner reads its own write or, through
        // the registry's handover, its predecessor's (module comment). The mask drops the bounds
        // check (LANES is a power of two).
        let cache = self.lanes[lane.index() & (LANES - 1)].load(Relaxed);
        // SAFETY: non-null pointers come from `Box::into_raw` and live as long as `self`.
        unsafe { cache.as_ref() }
    }

    /// A cached block of `2^block_lg2` bytes from `lane`'s cache, its tag cleared. Only the
    /// lane's exclusive owner may call this.
    #[inline(always)]
    pub(crate) fn pop(&self, lane: Lane, block_lg2: u32) -> Option<usize> {
        let class = block_lg2.wrapping_sub(MIN_CACHED_LG2) as usize;
        if class >= CLASSES {
            return None;
        }
        let cache = self.lane(lane)?;
        let stack = &cache.classes[class];
        // Relaxed loads and stores of the owner's stack: module comment. `len` is stored with
        // Release for the double-free search of other threads.
        let len = stack.len.load(Relaxed).checked_sub(1)?;
        let address = stack.blocks[len & (CLASS_CAPACITY - 1)].load(Relaxed);
        stack.len.store(len, Release);
        cache
            .bytes
            .store(cache.bytes.load(Relaxed) - (1 << block_lg2), Relaxed);
        // SAFETY: a cached block is claimed and unused, at least 32 bytes and aligned to its
        // size; the pool hands it to the caller next.
        unsafe { (address as *mut usize).add(TAG_WORD).write(0) };
        Some(address)
    }

    /// Caches the block at `address` of `2^block_lg2` bytes in `lane`'s cache; `false` when it
    /// does not fit there (the caller releases it to the bitset). Only the lane's exclusive owner
    /// may call this, after `reject_if_cached`.
    #[inline(always)]
    pub(crate) fn push(&self, lane: Lane, address: usize, block_lg2: u32) -> bool {
        let class = block_lg2.wrapping_sub(MIN_CACHED_LG2) as usize;
        if class >= CLASSES {
            return false;
        }
        match self.lane(lane) {
            Some(cache) => self.push_into(cache, lane, address, class),
            None => self.push_first(lane, address, block_lg2),
        }
    }

    /// `push` into a lane that has its caches already; `false` also for one that has none yet.
    #[inline(always)]
    pub(crate) fn push_existing(&self, lane: Lane, address: usize, block_lg2: u32) -> bool {
        let class = block_lg2.wrapping_sub(MIN_CACHED_LG2) as usize;
        class < CLASSES
            && self
                .lane(lane)
                .is_some_and(|cache| self.push_into(cache, lane, address, class))
    }

    #[inline(always)]
    fn push_into(&self, cache: &LaneCache, lane: Lane, address: usize, class: usize) -> bool {
        let block_lg2 = class as u32 + MIN_CACHED_LG2;
        let stack = &cache.classes[class];
        // Relaxed: the owner's own state (module comment); the budget is a bound, not a fence.
        let len = stack.len.load(Relaxed);
        let bytes = cache.bytes.load(Relaxed) + (1 << block_lg2);
        if len >= CLASS_CAPACITY || bytes > self.lane_budget.load(Relaxed) {
            return false;
        }
        self.tag(address, lane);
        stack.blocks[len].store(address, Relaxed);
        // Release: a double-free check that reads this `len` sees the entry (module comment).
        stack.len.store(len + 1, Release);
        cache.bytes.store(bytes, Relaxed);
        true
    }

    /// `push` for a lane without caches yet: creates them when the caches are on.
    #[cold]
    #[inline(never)]
    fn push_first(&self, lane: Lane, address: usize, block_lg2: u32) -> bool {
        if !self.enabled {
            return false;
        }
        let cache = Box::into_raw(Box::new(LaneCache {
            bytes: AtomicUsize::new(0),
            classes: std::array::from_fn(|_| ClassStack {
                len: AtomicUsize::new(0),
                blocks: [const { AtomicUsize::new(0) }; CLASS_CAPACITY],
            }),
        }));
        // Release: the statistics read the new stacks through this pointer with Acquire.
        self.lanes[lane.index() & (LANES - 1)].store(cache, Release);
        // Relaxed: the budget is a bound; its order against other updates does not matter.
        let lanes = self.lanes_with_cache.fetch_add(1, Relaxed) + 1;
        self.lane_budget
            .fetch_min(self.total_budget / lanes, Relaxed);
        self.push(lane, address, block_lg2)
    }

    #[inline(always)]
    fn tag(&self, address: usize, lane: Lane) {
        let block = address as *mut usize;
        // SAFETY: the caller gave the block up; it is at least 32 bytes and aligned to its size.
        unsafe {
            block.add(TAG_WORD).write(address ^ self.tag_key);
            block.add(LANE_WORD).write(lane.index() ^ self.lane_key);
        }
    }

    /// Fails when the block at `address`, claimed in its bitset and being freed, sits in a thread
    /// cache: a double free (module comment). Call before the block is cached or released.
    #[inline(always)]
    pub(crate) fn is_cached(&self, address: usize, block_lg2: u32) -> bool {
        self.has_tag(address, block_lg2)
            && self.search(address, block_lg2.wrapping_sub(MIN_CACHED_LG2) as usize)
    }

    /// Whether the block at `address`, being freed, carries a cache tag: it may sit in a cache.
    #[inline(always)]
    pub(crate) fn has_tag(&self, address: usize, block_lg2: u32) -> bool {
        let class = block_lg2.wrapping_sub(MIN_CACHED_LG2) as usize;
        // A pool without caches never tags a block.
        if class >= CLASSES || !self.enabled {
            return false;
        }
        // SAFETY: the block is at least 32 bytes (class above) and the caller gives it up.
        let tag = unsafe { (address as *const usize).add(TAG_WORD).read() };
        tag == address ^ self.tag_key
    }

    /// Whether `address` is in the stack of class `class` of the lane its tag names.
    #[cold]
    #[inline(never)]
    fn search(&self, address: usize, class: usize) -> bool {
        // SAFETY: as in `is_cached`.
        let lane = unsafe { (address as *const usize).add(LANE_WORD).read() } ^ self.lane_key;
        if lane >= LANES {
            return false;
        }
        // Acquire: the lane's stacks were created before the pointer was published.
        let Some(cache) = (unsafe { self.lanes[lane].load(Acquire).as_ref() }) else {
            return false;
        };
        let stack = &cache.classes[class];
        // Acquire: pairs with the Release store of `len` after the entry's store (module
        // comment); entries are read Relaxed after it.
        let len = stack.len.load(Acquire).min(CLASS_CAPACITY);
        stack.blocks[..len]
            .iter()
            .any(|entry| entry.load(Relaxed) == address)
    }

    /// Takes every block out of `lane`'s cache and passes each, its tag cleared, to `release`
    /// with lg2 of its size; returns how many. Only the lane's owner, or a thread holding the
    /// lane from the registry, may call this.
    pub(crate) fn flush(&self, lane: Lane, mut release: impl FnMut(usize, u32)) -> u64 {
        let Some(cache) = self.lane(lane) else {
            return 0;
        };
        let mut flushed = 0;
        for (class, stack) in cache.classes.iter().enumerate() {
            let block_lg2 = class as u32 + MIN_CACHED_LG2;
            // Relaxed, Release: as in `pop`.
            let len = stack.len.load(Relaxed);
            stack.len.store(0, Release);
            for entry in &stack.blocks[..len] {
                let address = entry.load(Relaxed);
                // SAFETY: as in `pop`: the block is cached, so claimed and unused.
                unsafe { (address as *mut usize).add(TAG_WORD).write(0) };
                release(address, block_lg2);
            }
            flushed += len as u64;
        }
        cache.bytes.store(0, Relaxed);
        flushed
    }

    /// Blocks and bytes in all caches; exact when no thread allocates or frees meanwhile.
    pub(crate) fn cached(&self) -> Cached {
        let mut cached = Cached::default();
        for lane in &self.lanes {
            // Acquire: the stacks were created before the pointer was published.
            // SAFETY: as in `lane`.
            let Some(cache) = (unsafe { lane.load(Acquire).as_ref() }) else {
                continue;
            };
            for (class, stack) in cache.classes.iter().enumerate() {
                // Relaxed: a statistic, exact once the owner is synchronized with the caller.
                let len = stack.len.load(Relaxed) as u64;
                cached.blocks += len;
                cached.bytes += len << (class as u32 + MIN_CACHED_LG2);
            }
        }
        cached
    }
}

impl Drop for ThreadCaches {
    fn drop(&mut self) {
        for lane in &mut self.lanes {
            let cache = *lane.get_mut();
            if !cache.is_null() {
                // SAFETY: made by `Box::into_raw` in `push_first`, freed only here.
                drop(unsafe { Box::from_raw(cache) });
            }
        }
    }
}
