//! Behaviour of `MemoryPool` on one thread: sizes, placement, exhaustion, reassignment, fallback,
//! statistics and rejected deallocations. Concurrency is covered by `tests/pool_stress.rs` and
//! the loom models in `tests/loom_pool.rs`.

use super::test_blocks::{alloc, fill, free};
use super::*;
use crate::error::ErrorKind;

fn pool(total: usize, min_block: usize, max_block: usize, superblock: usize) -> MemoryPool {
    MemoryPool::new(&PoolConfig {
        min_total_alloc_size: total,
        min_block_alloc_size: min_block,
        max_block_alloc_size: max_block,
        min_superblock_size: superblock,
        thread_cache: true,
    })
    .unwrap()
}

/// The first byte of the pool's span, found by probing `contains` below one of its blocks.
fn span_start(pool: &MemoryPool) -> *mut u8 {
    let block = alloc(pool, 1);
    let superblock = pool.superblock_size();
    let mut start = block
        .as_ptr()
        .wrapping_sub(block.as_ptr() as usize % superblock);
    while pool.contains(start.wrapping_sub(superblock)) {
        start = start.wrapping_sub(superblock);
    }
    free(pool, block, 1);
    start
}

fn rejected_deallocation(pool: &MemoryPool, ptr: *mut u8, size: usize) -> String {
    let before = pool.usage_statistics();
    // SAFETY: the calls under test are rejected before touching any block.
    let error = unsafe { pool.deallocate(ptr, size) }.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        pool.usage_statistics(),
        before,
        "a rejected deallocate changed the pool"
    );
    error.message().to_owned()
}

#[test]
fn allocate_block_size_rounds_up_to_a_power_of_two_of_at_least_the_minimum() {
    let p = pool(1 << 16, 64, 4096, 0);
    for (size, block) in [
        (0, 64),
        (1, 64),
        (64, 64),
        (65, 128),
        (100, 128),
        (129, 256),
        (1000, 1024),
        (2049, 4096),
        (4096, 4096),
        (4097, 0),
        (usize::MAX, 0),
    ] {
        assert_eq!(p.allocate_block_size(size), block, "size {size}");
    }
}

#[test]
fn accessors_report_the_rounded_geometry() {
    let p = pool(100_000, 48, 3000, 5000);
    assert_eq!(p.min_block_size(), 64);
    assert_eq!(p.max_block_size(), 4096);
    assert_eq!(p.superblock_size(), 8192);
    assert_eq!(p.superblock_count(), 13);
    assert_eq!(p.capacity(), 13 * 8192);
    assert_eq!(p.layout().superblock_count, 13);
}

#[test]
fn blocks_are_inside_the_span_and_aligned_to_their_size() {
    let p = pool(1 << 18, 0, 0, 0);
    let sizes = [1, 64, 65, 128, 200, 512, 1000, 2048, 4000, 4096];
    let blocks: Vec<_> = sizes
        .iter()
        .cycle()
        .take(100)
        .map(|&s| (alloc(&p, s), s))
        .collect();
    for &(ptr, size) in &blocks {
        let block = p.allocate_block_size(size);
        assert!(p.contains(ptr.as_ptr()), "{ptr:?} outside the span");
        assert_eq!(
            ptr.as_ptr() as usize % block,
            0,
            "{ptr:?} not aligned to {block}"
        );
        assert_eq!(p.block_size_at(ptr.as_ptr()), Some(block));
    }
    for (ptr, size) in blocks {
        free(&p, ptr, size);
    }
    assert_eq!(p.usage_statistics().consumed_bytes, 0);
}

#[test]
fn blocks_do_not_overlap() {
    let p = pool(1 << 16, 0, 0, 0);
    let mut ranges: Vec<_> = [64, 100, 300, 4096, 64, 2000, 70]
        .iter()
        .cycle()
        .take(40)
        .map(|&s| {
            let start = alloc(&p, s).as_ptr() as usize;
            (start, start + p.allocate_block_size(s))
        })
        .collect();
    ranges.sort();
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "blocks {pair:?} overlap");
    }
}

#[test]
fn zero_size_fails_without_an_error_and_is_not_counted() {
    let p = pool(1 << 16, 0, 0, 0);
    let failure = p.allocate(0, 1).unwrap_err();
    assert_eq!(failure, AllocFailure::ZeroSize);
    assert_eq!(failure.into_error(), None);
    assert_eq!(p.usage_statistics().failed_allocations, 0);
}

#[test]
fn a_size_above_the_largest_block_is_an_error_naming_both() {
    let p = pool(1 << 16, 0, 0, 0);
    let failure = p.allocate(4097, 1).unwrap_err();
    assert_eq!(
        failure,
        AllocFailure::TooLarge {
            size: 4097,
            max_block_size: 4096
        }
    );
    let error = failure.into_error().unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument);
    assert!(error.message().contains("4097") && error.message().contains("4096"));
    assert!(p.allocate(usize::MAX, 1).is_err());
    assert_eq!(p.usage_statistics().failed_allocations, 0);
}

#[test]
fn exhaustion_fails_counts_the_failure_and_recovers_after_a_free() {
    let p = pool(4 * 4096, 64, 4096, 4096);
    let blocks = fill(&p, 64);
    assert_eq!(
        blocks.len(),
        4 * 64,
        "every 64-byte block should be handed out"
    );

    let failure = p.allocate(64, 3).unwrap_err();
    assert_eq!(
        failure,
        AllocFailure::Exhausted {
            size: 64,
            block_size: 64,
            attempt_limit: 3,
            capacity: 4 * 4096,
            consumed_bytes: 4 * 4096,
            cached_bytes: 0,
        }
    );
    assert_eq!(
        failure.into_error().unwrap().kind(),
        ErrorKind::PoolExhausted
    );
    // `fill` ended on one failure, and the explicit call made a second.
    assert_eq!(p.usage_statistics().failed_allocations, 2);

    free(&p, blocks[77], 64);
    let again = alloc(&p, 64);
    assert_eq!(again, blocks[77], "the only free block must be handed out");
}

#[test]
fn attempt_limit_zero_searches_once() {
    let p = pool(4096, 64, 4096, 4096);
    assert!(p.allocate(64, 0).is_ok());
    let _rest = fill(&p, 64);
    assert!(matches!(
        p.allocate(64, 0),
        Err(AllocFailure::Exhausted {
            attempt_limit: 1,
            ..
        })
    ));
}

#[test]
fn an_emptied_superblock_is_reassigned_to_another_block_size() {
    let p = pool(4 * 4096, 64, 4096, 4096);
    let blocks = fill(&p, 64);
    assert_eq!(blocks.len(), 4 * 64);
    assert!(p.allocate(4096, 2).is_err(), "no superblock is empty yet");

    // Free every block of the superblock holding the first block.
    let superblock = blocks[0].as_ptr() as usize / 4096;
    let (emptied, kept): (Vec<_>, Vec<_>) = blocks
        .into_iter()
        .partition(|b| b.as_ptr() as usize / 4096 == superblock);
    assert_eq!(emptied.len(), 64);
    for b in emptied {
        free(&p, b, 64);
    }
    let big = alloc(&p, 4096);
    assert_eq!(big.as_ptr() as usize / 4096, superblock);
    assert_eq!(p.block_size_at(big.as_ptr()), Some(4096));
    let stats = p.usage_statistics();
    assert_eq!(stats.consumed_bytes, 4 * 4096);
    assert_eq!(stats.consumed_blocks, kept.len() as u64 + 1);
}

#[test]
fn batches_reuse_the_superblocks_the_last_batch_emptied() {
    // A thread that allocates a batch and frees it, again and again, must come back to the
    // superblocks it emptied (cache and TLB locality) rather than walk through the pool; the hint
    // returns home when its superblock fills (`search.rs`).
    for (size, per_superblock) in [(4096, 1), (1024, 4), (64, 64)] {
        let p = pool(16 << 20, 64, 4096, 4096);
        let batch: usize = 32;
        let mut used = std::collections::HashSet::new();
        for _ in 0..50 {
            let blocks: Vec<_> = (0..batch).map(|_| alloc(&p, size)).collect();
            for &b in &blocks {
                used.insert(b.as_ptr() as usize / 4096);
                free(&p, b, size);
            }
        }
        let batch_superblocks = batch.div_ceil(per_superblock);
        assert!(
            used.len() <= batch_superblocks + 1,
            "{size}-byte batches of {batch} used {} superblocks over 50 rounds; one batch needs \
             {batch_superblocks}",
            used.len()
        );
    }
}

#[test]
fn a_lane_filling_the_pool_with_whole_superblock_blocks_gets_every_superblock() {
    let p = pool(64 * 4096, 64, 4096, 4096);
    let blocks = fill(&p, 4096);
    assert_eq!(blocks.len(), 64);
    let distinct: std::collections::HashSet<_> = blocks.iter().map(|b| b.as_ptr()).collect();
    assert_eq!(distinct.len(), 64);
    assert_eq!(p.usage_statistics().failed_allocations, 1);
}

#[test]
fn a_small_request_falls_back_to_a_superblock_of_larger_blocks() {
    // Two superblocks of 4 KiB; blocks of 64 B to 1 KiB.
    let p = pool(2 * 4096, 64, 1024, 4096);
    let large = alloc(&p, 1024);
    let small = fill(&p, 64);
    // The 64-byte superblock filled up, and further 64-byte requests took the three free
    // 1 KiB blocks: no empty superblock nor free 64-byte block was left.
    assert_eq!(small.len(), 64 + 3);
    let fallbacks: Vec<_> = small
        .iter()
        .filter(|b| p.block_size_at(b.as_ptr()) == Some(1024))
        .collect();
    assert_eq!(fallbacks.len(), 3);
    for b in &fallbacks {
        assert_eq!(b.as_ptr() as usize / 4096, large.as_ptr() as usize / 4096);
    }
    let stats = p.usage_statistics();
    assert_eq!(stats.consumed_bytes, 64 * 64 + 4 * 1024);
    assert_eq!(stats.reserved_bytes, 0);

    // A fallback block is released with the size that was asked for.
    free(&p, *fallbacks[0], 64);
    assert_eq!(p.usage_statistics().consumed_bytes, 64 * 64 + 3 * 1024);
}

#[test]
fn statistics_add_up_exactly_at_a_quiescent_point() {
    let p = pool(1 << 18, 0, 0, 0);
    let sizes = [
        1, 64, 65, 100, 128, 300, 513, 1024, 1500, 4096, 2048, 64, 64,
    ];
    let mut live = Vec::new();
    for round in 0..6 {
        for &s in sizes.iter().cycle().skip(round).take(40) {
            live.push((alloc(&p, s), s));
        }
        // Free every third block so superblocks are partially full.
        let mut i = 0;
        live.retain(|&(ptr, size)| {
            i += 1;
            if i % 3 == 0 {
                free(&p, ptr, size);
            }
            i % 3 != 0
        });
        let expected_bytes: usize = live.iter().map(|&(_, s)| p.allocate_block_size(s)).sum();
        let s = p.usage_statistics();
        assert_eq!(s.consumed_blocks, live.len() as u64);
        assert_eq!(s.consumed_bytes, expected_bytes as u64);
        assert_eq!(
            s.consumed_bytes + s.reserved_bytes,
            s.consumed_superblocks * s.superblock_bytes
        );
        assert!(s.consumed_superblocks <= s.capacity_superblocks);
        let blocks_in_superblocks: u64 = s.consumed_blocks + s.reserved_blocks;
        assert!(blocks_in_superblocks >= s.consumed_superblocks);
    }
    let s = p.usage_statistics();
    assert_eq!(
        (
            s.capacity_bytes,
            s.superblock_bytes,
            s.min_block_bytes,
            s.max_block_bytes
        ),
        (1 << 18, 4096, 64, 4096)
    );
    assert_eq!(s.capacity_superblocks, 64);
    for (ptr, size) in live.drain(..) {
        free(&p, ptr, size);
    }
    let s = p.usage_statistics();
    assert_eq!((s.consumed_blocks, s.consumed_bytes), (0, 0));
    assert_eq!(
        s.reserved_bytes,
        s.consumed_superblocks * s.superblock_bytes
    );
    assert_eq!(s.failed_allocations, 0);
}

/// One thread moves through one lane, whose unflushed count is at most the flush threshold: the
/// mark trails the peak by at most that and, with one lane, never exceeds it.
#[test]
fn high_water_mark_is_within_one_flush_threshold_of_the_peak() {
    // 1 MiB: the threshold is capacity/256 (one 4 KiB block); 64 MiB: FLUSH_BLOCKS largest
    // blocks (128 KiB). The targets scale with the pool so that each phase crosses thresholds.
    for (total, threshold) in [(1 << 20, 4096), (64 << 20, 32 * 4096)] {
        let p = pool(total, 0, 0, 0);
        assert_eq!(flush_threshold(4096, p.capacity() as u64), threshold);
        let scale = total as u64 >> 20;
        let mut live = Vec::new();
        let mut bytes = 0u64;
        let mut peak = 0u64;
        // Grow to about 300 KB, shrink to 100 KB, grow to about 200 KB (times the scale), free
        // everything.
        for (target, grow) in [
            (300_000 * scale, true),
            (100_000 * scale, false),
            (200_000 * scale, true),
            (0, false),
        ] {
            while (grow && bytes < target) || (!grow && bytes > target) {
                if grow {
                    let size = 64 << (live.len() % 7);
                    live.push((alloc(&p, size), size));
                    bytes += size as u64;
                    peak = peak.max(bytes);
                } else {
                    let (ptr, size) = live.pop().unwrap();
                    free(&p, ptr, size);
                    bytes -= size as u64;
                }
            }
        }
        let mark = p.usage_statistics().high_water_bytes;
        assert!(
            mark <= peak,
            "{total} B pool: mark {mark} above the peak {peak}"
        );
        assert!(
            mark + threshold >= peak,
            "{total} B pool: mark {mark} more than {threshold} B below {peak}"
        );
    }
}

#[test]
fn deallocate_outside_the_span_is_rejected() {
    let p = pool(1 << 16, 0, 0, 0);
    let start = span_start(&p);
    let block = alloc(&p, 64);
    for ptr in [
        std::ptr::null_mut(),
        start.wrapping_sub(64),
        start.wrapping_add(p.capacity()),
        block.as_ptr().wrapping_add(1 << 30),
    ] {
        let message = rejected_deallocation(&p, ptr, 64);
        assert!(message.contains("outside the pool's span"), "{message}");
        assert!(
            message.contains(&format!("{:#x}", ptr as usize)),
            "{message}"
        );
        assert!(
            message.contains(&format!("[{:#x}, ", start as usize)),
            "{message}"
        );
    }
    free(&p, block, 64);
}

#[test]
fn deallocate_inside_a_block_is_rejected() {
    let p = pool(1 << 16, 0, 0, 0);
    let block = alloc(&p, 128);
    for into in [1, 64, 127] {
        let message = rejected_deallocation(&p, block.as_ptr().wrapping_add(into), 128);
        assert!(
            message.contains(&format!("{into} bytes into a block")),
            "{message}"
        );
    }
    free(&p, block, 128);
}

#[test]
fn double_free_is_rejected_and_the_block_stays_usable() {
    let p = pool(4096, 64, 4096, 4096);
    let block = alloc(&p, 64);
    free(&p, block, 64);
    let message = rejected_deallocation(&p, block.as_ptr(), 64);
    assert!(message.contains("not allocated"), "{message}");
    assert!(message.contains("double free"), "{message}");
    assert_eq!(alloc(&p, 64), block);
    free(&p, block, 64);
}

#[test]
fn deallocate_with_a_size_needing_a_larger_block_is_rejected() {
    let p = pool(1 << 16, 0, 0, 0);
    let block = alloc(&p, 64);
    let message = rejected_deallocation(&p, block.as_ptr(), 100);
    assert!(message.contains("size 100 (a 128-byte block)"), "{message}");
    assert!(message.contains("the block there is 64 bytes"), "{message}");
    let message = rejected_deallocation(&p, block.as_ptr(), 0);
    assert!(message.contains("size 0"), "{message}");
    let message = rejected_deallocation(&p, block.as_ptr(), 5000);
    assert!(
        message.contains("larger than the largest block (4096 bytes)"),
        "{message}"
    );
    // The block is still allocated and is released with the right size.
    assert_eq!(p.usage_statistics().consumed_blocks, 1);
    free(&p, block, 64);
    assert_eq!(p.usage_statistics().consumed_blocks, 0);
}

#[test]
fn deallocate_in_a_never_assigned_superblock_is_rejected() {
    let p = pool(2 * 4096, 64, 4096, 4096);
    let start = span_start(&p);
    let block = alloc(&p, 64);
    let used = (block.as_ptr() as usize - start as usize) / 4096;
    let other = start.wrapping_add((1 - used) * 4096);
    let message = rejected_deallocation(&p, other, 64);
    assert!(message.contains("never allocated"), "{message}");
    assert!(
        message.contains(&format!("superblock {}", 1 - used)),
        "{message}"
    );
    free(&p, block, 64);
}

#[test]
fn contains_is_exactly_the_span() {
    let p = pool(2 * 4096, 64, 4096, 4096);
    let start = span_start(&p);
    assert_eq!(
        start as usize % 4096,
        0,
        "the span is aligned to the superblock size"
    );
    assert!(p.contains(start));
    assert!(p.contains(start.wrapping_add(2 * 4096 - 1)));
    assert!(!p.contains(start.wrapping_sub(1)));
    assert!(!p.contains(start.wrapping_add(2 * 4096)));
    assert!(!p.contains(std::ptr::null()));
    assert_eq!(p.block_size_at(start.wrapping_add(2 * 4096)), None);
}
