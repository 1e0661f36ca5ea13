//! Usage statistics (000 §3.1 `get_usage_statistics`): exact counts from the bitsets at query
//! time, and a high-water mark kept without a shared counter on the allocation path.
//!
//! High-water mark: each lane accumulates the net bytes it allocated in a counter on its own
//! cache lines. When the magnitude of a lane's count exceeds the flush threshold (capacity/256,
//! clamped to 1..=`FLUSH_BLOCKS` largest blocks), the lane moves it into a global total and
//! raises the global mark to that total. A lane owned by one thread updates its counter with a
//! plain load and store; threads sharing lanes use one extra, shared counter with `fetch_add`.
//! Thus an alloc/free pair touches no shared line, and a flush touches the total's line and
//! writes the mark's line only when it raises the mark.
//!
//! Flushes are the one place where threads of a host pool meet on a line, and with large blocks
//! they are frequent: a thread that allocates 64 blocks of 4 KiB and frees them crosses a
//! threshold of 16 such blocks about 8 times per round. Measured on the 16-core Xeon (bench/pool,
//! 64 MiB pool, 16 threads, ns per alloc+free pair, 4 KiB / mixed 64-4096 B): 174 / 138 with a
//! `fetch_max` on the mark at every flush and 16 blocks; 127 / 107 raising the mark only when
//! the total exceeds it; 93 / 86 with that and 32 blocks, which is no flush at all within the
//! noise (100 / 98; medians of 3 repetitions, one run each, and identical code varied by up to
//! 40% between runs). The rest is the machine: oneTBB took 94 / 111 in the same run.
//!
//! Accuracy: at any moment the true allocated bytes are the global total plus the lanes' counts,
//! and each lane's count is at most the threshold in magnitude (the shared counter: that much per
//! thread updating it at that moment). The stored mark is the largest total after a flush, so it
//! is within one threshold per active lane of the true peak: below it by the counts not yet
//! flushed, or above it when blocks allocated in one lane were freed in another whose negative
//! count is not flushed yet. With one lane the mark never exceeds the peak. The
//! reported mark is the larger of the stored one and the exact current use, capped at the
//! capacity.

use super::header;
use super::lane::{Lane, LANES};
use super::layout::PoolLayout;
use super::state::{HintWords, PoolState, StateWords};
use crate::cache_line::CachePadded;
use crate::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A snapshot of a pool's use, in bytes, blocks and superblocks. Block and superblock counts are
/// exact when no allocation or deallocation runs concurrently, and then
/// `consumed_bytes + reserved_bytes == consumed_superblocks * superblock_bytes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct UsageStatistics {
    /// Bytes the pool can hand out.
    pub capacity_bytes: u64,
    pub superblock_bytes: u64,
    pub min_block_bytes: u64,
    pub max_block_bytes: u64,
    pub capacity_superblocks: u64,
    /// Superblocks assigned to a block size.
    pub consumed_superblocks: u64,
    /// Blocks allocated.
    pub consumed_blocks: u64,
    /// Bytes in allocated blocks (whole blocks, not the sizes asked for).
    pub consumed_bytes: u64,
    /// Free blocks in assigned superblocks.
    pub reserved_blocks: u64,
    pub reserved_bytes: u64,
    /// Most bytes allocated at once, within 32 largest blocks per thread that allocated or
    /// freed (see the module comment).
    pub high_water_bytes: u64,
    /// Allocations that found no block (size zero and too-large requests are not counted).
    pub failed_allocations: u64,
    /// Free blocks held in thread caches (`thread_cache.rs`), counted in `reserved_blocks`.
    pub cached_blocks: u64,
    pub cached_bytes: u64,
}

/// Exact use of the assigned superblocks, counted from their bitsets.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Census {
    pub(crate) superblocks: u64,
    pub(crate) blocks: u64,
    pub(crate) bytes: u64,
    pub(crate) free_blocks: u64,
    pub(crate) free_bytes: u64,
}

impl<S: StateWords, H: HintWords> PoolState<S, H> {
    pub(crate) fn census(&self) -> Census {
        // Relaxed: statistics; exact once the threads that allocated and freed have been
        // joined or otherwise synchronized with the caller.
        census_with(&self.layout, |superblock, index| {
            if index == 0 {
                self.header(superblock).load(Relaxed)
            } else {
                self.bitset_word(superblock, index - 1).load(Relaxed)
            }
        })
    }
}

/// Exact use of the assigned superblocks, counted from their bitsets; `word(s, 0)` reads the
/// header of superblock `s`, `word(s, 1 + i)` its bitset word `i`. Shared by host pools and
/// device pools, whose state is copied to the host first.
pub(crate) fn census_with(layout: &PoolLayout, word: impl Fn(usize, usize) -> u64) -> Census {
    let mut census = Census::default();
    for superblock in 0..layout.superblock_count as usize {
        let Some(block_lg2) = header::block_lg2(word(superblock, 0)) else {
            continue;
        };
        let mask = layout.word_mask(block_lg2);
        let blocks: u64 = (0..layout.words_used(block_lg2))
            .map(|i| u64::from((word(superblock, 1 + i) & mask).count_ones()))
            .sum();
        let free = layout.blocks_per_superblock(block_lg2) - blocks;
        census.superblocks += 1;
        census.blocks += blocks;
        census.bytes += blocks << block_lg2;
        census.free_blocks += free;
        census.free_bytes += free << block_lg2;
    }
    census
}

/// The statistics of a pool with `layout`, from its census, its stored high-water mark and its
/// failure count.
pub(crate) fn statistics(
    layout: &PoolLayout,
    census: Census,
    high_water: u64,
    failed_allocations: u64,
) -> UsageStatistics {
    UsageStatistics {
        capacity_bytes: layout.capacity() as u64,
        superblock_bytes: layout.superblock_size() as u64,
        min_block_bytes: layout.min_block_size() as u64,
        max_block_bytes: layout.max_block_size() as u64,
        capacity_superblocks: u64::from(layout.superblock_count),
        consumed_superblocks: census.superblocks,
        consumed_blocks: census.blocks,
        consumed_bytes: census.bytes,
        reserved_blocks: census.free_blocks,
        reserved_bytes: census.free_bytes,
        // The stored mark may overshoot by a few blocks (see the module comment), never the span.
        high_water_bytes: high_water.max(census.bytes).min(layout.capacity() as u64),
        failed_allocations,
        cached_blocks: 0,
        cached_bytes: 0,
    }
}

/// A lane's count is flushed into the total beyond this many bytes (see the module comment).
pub(crate) fn flush_threshold(max_block_bytes: u64, capacity_bytes: u64) -> u64 {
    // Small pools flush sooner, so the mark stays within a few percent of their capacity.
    (capacity_bytes / FLUSH_FRACTION).clamp(max_block_bytes, FLUSH_BLOCKS * max_block_bytes)
}

/// The counters behind the high-water mark and the failure count; see the module comment.
pub(crate) struct UsageCounters {
    /// Net bytes per lane not yet moved to `total`, plus `flush_threshold` (so that the test
    /// for a flush is one comparison with `flush_beyond`), as two's complement; the last is
    /// shared.
    lanes: [CachePadded<AtomicU64>; LANES + 1],
    /// Net bytes moved from the lanes, as two's complement.
    total: CachePadded<AtomicU64>,
    high_water: CachePadded<AtomicU64>,
    failed_allocations: CachePadded<AtomicU64>,
    /// A lane flushes when its count's magnitude exceeds `flush_threshold`, i.e. when the count
    /// plus the threshold (what `lanes` hold), as unsigned, exceeds twice the threshold.
    flush_beyond: u64,
    flush_threshold: u64,
}

const SHARED_COUNTER: usize = LANES;

/// A lane holds up to this many largest blocks' worth of bytes before it flushes to the shared
/// total. Measured: flushing beyond one largest block cost 9% of a mixed-size alloc+free pair
/// at one thread (each 4 KiB block crossed the threshold); at 16 threads sixteen blocks still
/// left the total's line the bottleneck of 4 KiB and mixed sizes, and 32 removed it (module
/// comment). The price is accuracy: the high-water mark may trail the true peak by this many
/// largest blocks per active lane.
/// Smaller pools use a threshold of at most 1/FLUSH_FRACTION of their capacity (but at least one
/// largest block).
const FLUSH_BLOCKS: u64 = 32;
const FLUSH_FRACTION: u64 = 256;

impl UsageCounters {
    pub(crate) fn new(max_block_bytes: u64, capacity_bytes: u64) -> UsageCounters {
        let flush_threshold = flush_threshold(max_block_bytes, capacity_bytes);
        UsageCounters {
            lanes: std::array::from_fn(|_| CachePadded(AtomicU64::new(flush_threshold))),
            total: CachePadded(AtomicU64::new(0)),
            high_water: CachePadded(AtomicU64::new(0)),
            failed_allocations: CachePadded(AtomicU64::new(0)),
            flush_beyond: 2 * flush_threshold,
            flush_threshold,
        }
    }

    /// Adds `bytes` (negative for a release) to the lane's count; returns the count afterwards
    /// (net bytes not yet flushed, plus the threshold; meaningful for an exclusive lane).
    #[inline]
    pub(crate) fn record(&self, lane: Lane, bytes: i64) -> u64 {
        let (counter, count) = if lane.is_exclusive() {
            // The mask lets the compiler drop the bounds check (LANES is a power of two).
            let counter = &self.lanes[lane.index() & (LANES - 1)];
            // Relaxed load and store: only the lane's owner writes this counter; a new owner
            // acquired the lane from the registry after the old owner released it.
            let count = counter.load(Relaxed).wrapping_add(bytes as u64);
            counter.store(count, Relaxed);
            (counter, count)
        } else {
            let counter = &self.lanes[SHARED_COUNTER];
            // Relaxed: a statistic; the RMW alone keeps concurrent updates from being lost.
            (
                counter,
                counter
                    .fetch_add(bytes as u64, Relaxed)
                    .wrapping_add(bytes as u64),
            )
        };
        // `count` holds the net bytes plus the threshold (see `lanes`), so "the net bytes'
        // magnitude exceeds the threshold" is one unsigned comparison.
        if count > self.flush_beyond {
            self.flush(counter);
            return self.flush_threshold;
        }
        count
    }

    /// Where a lane's count flushes: beyond this, as `record` compares it.
    pub(crate) fn flush_beyond(&self) -> u64 {
        self.flush_beyond
    }

    #[cold]
    #[inline(never)]
    fn flush(&self, counter: &AtomicU64) {
        // Relaxed throughout: statistics, with no memory published through them; `swap` takes
        // exactly what the shared counter holds even while other threads add to it.
        let count = counter
            .swap(self.flush_threshold, Relaxed)
            .wrapping_sub(self.flush_threshold);
        let total = self.total.fetch_add(count, Relaxed).wrapping_add(count);
        let total = (total as i64).max(0) as u64;
        // Most flushes cannot raise the mark (every downward one, and upward ones below the
        // peak), and `fetch_max`, a compare-exchange loop on x86-64, takes the mark's line
        // exclusive even then; a load leaves it shared in every core. Exact: the mark only grows,
        // so the load returns at most the current mark, and `total` at most that changes nothing.
        if total > self.high_water.load(Relaxed) {
            self.high_water.fetch_max(total, Relaxed);
        }
    }

    /// Counts an allocation that found no block.
    pub(crate) fn record_failure(&self) {
        // Relaxed: a statistic on its own line, touched only on failure.
        self.failed_allocations.fetch_add(1, Relaxed);
    }

    /// The stored high-water mark and the failure count.
    pub(crate) fn high_water_and_failures(&self) -> (u64, u64) {
        // Relaxed: statistics.
        (
            self.high_water.load(Relaxed),
            self.failed_allocations.load(Relaxed),
        )
    }
}
