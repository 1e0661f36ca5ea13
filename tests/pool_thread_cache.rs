//! Thread caches of the memory pool (`src/pool/thread_cache.rs`): reuse, bounds, double frees of
//! cached blocks, exhaustion with blocks in caches, statistics, flushing, and many threads passing
//! blocks between them.

use std::ptr::NonNull;
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex, MutexGuard};
use taskdag::pool::{AllocFailure, MemoryPool, PoolConfig};
use taskdag::ErrorKind;

#[path = "../src/pool/test_blocks.rs"]
mod test_blocks;
use test_blocks::{alloc, fill, free};

/// The tests run one at a time: some let a thread exit with blocks in its cache, and a thread of a
/// test running alongside could take the exited thread's lane, and with it the cache, before the
/// test drains it (the caches of owned lanes are their owners' alone). Every test takes this
/// lock before its first allocation, so no other test thread takes a lane meanwhile.
static LANES_ALONE: Mutex<()> = Mutex::new(());

fn lanes_alone() -> MutexGuard<'static, ()> {
    LANES_ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

fn pool(total: usize, thread_cache: bool) -> MemoryPool {
    MemoryPool::new(&PoolConfig {
        min_total_alloc_size: total,
        thread_cache,
        ..PoolConfig::default()
    })
    .unwrap()
}

/// Blocks and bytes of the statistics add up: every block of an assigned superblock is consumed
/// or reserved, and cached blocks are among the reserved ones.
fn assert_consistent(pool: &MemoryPool) {
    let s = pool.usage_statistics();
    assert_eq!(
        s.consumed_bytes + s.reserved_bytes,
        s.consumed_superblocks * s.superblock_bytes,
        "{s:?}"
    );
    assert!(s.cached_blocks <= s.reserved_blocks, "{s:?}");
    assert!(s.cached_bytes <= s.reserved_bytes, "{s:?}");
}

#[test]
fn a_freed_block_is_reused_from_the_thread_cache() {
    let _alone = lanes_alone();
    let p = pool(1 << 20, true);
    let a = alloc(&p, 100);
    free(&p, a, 100);
    let s = p.usage_statistics();
    assert_eq!((s.cached_blocks, s.cached_bytes), (1, 128), "{s:?}");
    assert_eq!((s.consumed_blocks, s.consumed_bytes), (0, 0), "{s:?}");
    assert_consistent(&p);
    // Last in, first out, and a request of another size in the same block size hits it too.
    assert_eq!(alloc(&p, 120), a);
    let s = p.usage_statistics();
    assert_eq!((s.cached_blocks, s.consumed_blocks), (0, 1), "{s:?}");
    free(&p, a, 120);
}

#[test]
fn a_cache_holds_at_most_64_blocks_of_a_size_and_a_sixteenth_of_the_pool() {
    let _alone = lanes_alone();
    let p = pool(1 << 20, true);
    let blocks: Vec<_> = (0..100).map(|_| alloc(&p, 64)).collect();
    for &b in &blocks {
        free(&p, b, 64);
    }
    let s = p.usage_statistics();
    assert_eq!(s.cached_blocks, 64, "{s:?}");
    // 1 MiB / 16 = 64 KiB: sixteen 4 KiB blocks.
    let big: Vec<_> = (0..40).map(|_| alloc(&p, 4096)).collect();
    for &b in &big {
        free(&p, b, 4096);
    }
    let s = p.usage_statistics();
    assert!(s.cached_bytes <= p.capacity() as u64 / 16, "{s:?}");
    assert_eq!(s.consumed_blocks, 0, "{s:?}");
    assert_consistent(&p);
}

#[test]
fn double_free_of_a_cached_block_is_rejected_and_changes_nothing() {
    let _alone = lanes_alone();
    let p = pool(1 << 20, true);
    let a = alloc(&p, 64);
    let b = alloc(&p, 64);
    free(&p, a, 64);
    let before = p.usage_statistics();
    // SAFETY: a double free on purpose; the pool must detect it without touching its state.
    let e = unsafe { p.deallocate(a.as_ptr(), 64) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("not allocated"), "{}", e.message());
    assert_eq!(p.usage_statistics(), before);
    // The block is handed out once, not twice.
    assert_eq!(alloc(&p, 64), a);
    let c = alloc(&p, 64);
    assert!(c != a && c != b);
    for x in [a, b, c] {
        free(&p, x, 64);
    }
}

#[test]
fn double_free_of_a_block_cached_by_another_thread_is_rejected() {
    let _alone = lanes_alone();
    let p = Arc::new(pool(1 << 20, true));
    let a = alloc(&p, 256).as_ptr() as usize;
    let (freed_tx, freed_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let owner = {
        let p = Arc::clone(&p);
        std::thread::spawn(move || {
            free(&p, NonNull::new(a as *mut u8).unwrap(), 256);
            freed_tx.send(()).unwrap();
            // Stay alive, so the block stays in this thread's cache.
            done_rx.recv().unwrap();
        })
    };
    freed_rx.recv().unwrap();
    assert_eq!(p.usage_statistics().cached_blocks, 1);
    // SAFETY: a double free on purpose.
    let e = unsafe { p.deallocate(a as *mut u8, 256) }.unwrap_err();
    assert!(e.message().contains("not allocated"), "{}", e.message());
    assert_eq!(p.usage_statistics().cached_blocks, 1);
    done_tx.send(()).unwrap();
    owner.join().unwrap();
}

#[test]
fn the_fast_paths_leave_double_frees_and_misses_to_the_full_paths() {
    let _alone = lanes_alone();
    let p = pool(1 << 20, true);
    // Nothing cached yet: no block from the fast path.
    assert_eq!(p.allocate_cached(64), None);
    let a = alloc(&p, 64);
    // The fast path does not make the thread's cache: the full path's first free does.
    // SAFETY: `a` is held; `false` leaves it held.
    assert!(!unsafe { p.deallocate_cached(a.as_ptr(), 64) });
    let b = alloc(&p, 64);
    free(&p, b, 64);
    assert_eq!(p.allocate_cached(64), Some(b));
    // SAFETY: `a` is held; the first call caches it, the second is a double free.
    assert!(unsafe { p.deallocate_cached(a.as_ptr(), 64) });
    let before = p.usage_statistics();
    assert_eq!(before.cached_blocks, 1);
    // SAFETY: a double free on purpose: refused by the fast path, reported by the full one.
    assert!(!unsafe { p.deallocate_cached(a.as_ptr(), 64) });
    assert!(unsafe { p.deallocate(a.as_ptr(), 64) }.is_err());
    // SAFETY: a pointer inside the block, and a size too large for it: refused, not cached.
    assert!(!unsafe { p.deallocate_cached(a.as_ptr().add(8), 8) });
    assert!(!unsafe { p.deallocate_cached(a.as_ptr(), 65) });
    assert_eq!(p.usage_statistics(), before);
    assert_eq!(p.allocate_cached(64), Some(a));
    free(&p, a, 64);
    free(&p, b, 64);
}

#[test]
fn user_data_equal_to_a_cache_tag_is_not_rejected() {
    let _alone = lanes_alone();
    let p = pool(1 << 20, true);
    let a = alloc(&p, 64);
    free(&p, a, 64);
    // The tag the cache wrote into the free block (words 2 and 3).
    // SAFETY: the block is still pool memory; reading it changes nothing.
    let tag: [u64; 4] = unsafe { a.cast::<[u64; 4]>().as_ptr().read() };
    assert_eq!(alloc(&p, 64), a);
    // The user stores exactly the tag, then frees the block: it is not in any cache.
    // SAFETY: the block is held and 64 bytes long.
    unsafe { a.cast::<[u64; 4]>().as_ptr().write(tag) };
    free(&p, a, 64);
    assert_eq!(p.usage_statistics().cached_blocks, 1);
    assert_eq!(alloc(&p, 64), a);
    free(&p, a, 64);
}

#[test]
fn exhaustion_takes_back_blocks_cached_by_a_thread_that_exited() {
    let _alone = lanes_alone();
    let p = Arc::new(pool(64 << 10, true));
    // Free everything: part of it lands in the cache of a thread that then exits.
    let addresses: Vec<usize> = fill(&p, 1024).iter().map(|b| b.as_ptr() as usize).collect();
    let all = addresses.len();
    assert_eq!(all, 64);
    {
        let p = Arc::clone(&p);
        std::thread::spawn(move || {
            for &a in &addresses {
                free(&p, NonNull::new(a as *mut u8).unwrap(), 1024);
            }
            assert!(p.usage_statistics().cached_blocks > 0);
        })
        .join()
        .unwrap();
    }
    // An allocation that finds no free block drains the exited thread's cache and retries.
    let again = fill(&p, 1024);
    assert_eq!(again.len(), all);
    // Each `fill` ends with one failed allocation.
    let s = p.usage_statistics();
    assert_eq!((s.cached_blocks, s.failed_allocations), (0, 2), "{s:?}");
}

#[test]
fn exhaustion_reports_blocks_cached_by_a_live_thread() {
    let _alone = lanes_alone();
    let p = Arc::new(pool(64 << 10, true));
    let addresses: Vec<usize> = fill(&p, 1024).iter().map(|b| b.as_ptr() as usize).collect();
    let (freed_tx, freed_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let holder = {
        let p = Arc::clone(&p);
        let mine = addresses[..4].to_vec();
        std::thread::spawn(move || {
            for &a in &mine {
                free(&p, NonNull::new(a as *mut u8).unwrap(), 1024);
            }
            freed_tx.send(()).unwrap();
            done_rx.recv().unwrap();
        })
    };
    freed_rx.recv().unwrap();
    match p.allocate(1024, 1) {
        Err(failure @ AllocFailure::Exhausted { cached_bytes, .. }) => {
            assert_eq!(cached_bytes, 4 * 1024);
            let message = failure.into_error().unwrap().message().to_string();
            assert!(
                message.contains("4096 free bytes sit in other threads' caches"),
                "{message}"
            );
        }
        other => panic!("expected exhaustion, got {other:?}"),
    }
    done_tx.send(()).unwrap();
    holder.join().unwrap();
    // The holder has exited: its blocks come back.
    assert!(p.allocate(1024, 1).is_ok());
}

#[test]
fn flushing_returns_cached_blocks_and_frees_their_superblocks_for_other_sizes() {
    let _alone = lanes_alone();
    // Two superblocks of 4 KiB: 128 blocks of 64 B, or two of 4 KiB.
    let p = pool(8 << 10, true);
    let small = fill(&p, 64);
    assert_eq!(small.len(), 128);
    for &b in &small {
        free(&p, b, 64);
    }
    let cached = p.usage_statistics().cached_blocks;
    assert!(cached > 0);
    assert_eq!(p.flush_thread_cache(), cached);
    let s = p.usage_statistics();
    assert_eq!((s.cached_blocks, s.reserved_blocks), (0, 128), "{s:?}");
    // Both superblocks are empty again and can be reassigned to 4 KiB blocks.
    let large = fill(&p, 4096);
    assert_eq!(large.len(), 2);
    for &b in &large {
        free(&p, b, 4096);
    }
}

#[test]
fn exhaustion_flushes_the_own_cache_so_empty_superblocks_are_reassigned() {
    let _alone = lanes_alone();
    let p = pool(8 << 10, true);
    for b in fill(&p, 64) {
        free(&p, b, 64);
    }
    assert!(p.usage_statistics().cached_blocks > 0);
    // No flush by the caller: the first search fails, the cache goes back, the retry succeeds.
    // (Each `fill` ends with one failed allocation.)
    let large = fill(&p, 4096);
    assert_eq!(large.len(), 2);
    assert_eq!(p.usage_statistics().failed_allocations, 2);
}

#[test]
fn without_thread_caches_every_free_returns_the_block_at_once() {
    let _alone = lanes_alone();
    let p = pool(1 << 20, false);
    let a = alloc(&p, 64);
    free(&p, a, 64);
    let s = p.usage_statistics();
    assert_eq!((s.cached_blocks, s.consumed_blocks), (0, 0), "{s:?}");
    // SAFETY: a double free on purpose; the bitset catches it.
    let e = unsafe { p.deallocate(a.as_ptr(), 64) }.unwrap_err();
    assert!(e.message().contains("not allocated"), "{}", e.message());
    assert_eq!(p.flush_thread_cache(), 0);
    // Nothing stays claimed: the superblock is reassigned at once.
    let p = pool(4 << 10, false);
    let a = alloc(&p, 64);
    free(&p, a, 64);
    let b = alloc(&p, 4096);
    assert_eq!(p.usage_statistics().failed_allocations, 0);
    free(&p, b, 4096);
}

/// Threads allocate blocks of random sizes, fill them with their own pattern, pass half of them
/// to the next thread, which checks and frees them (a free into another thread's cache than the
/// allocating one's), and free the rest themselves (also the blocks for a next thread whose inbox
/// is full, which bounds the blocks in flight). Then every byte of the pool is allocatable
/// again from one thread.
#[test]
fn threads_passing_blocks_between_their_caches_never_share_a_block() {
    let _alone = lanes_alone();
    const THREADS: usize = 4;
    const ROUNDS: usize = 20_000;
    // Inboxes hold at most INBOX blocks; the pool has room for all of them at the largest size.
    const INBOX: usize = 256;
    let p = Arc::new(pool(16 << 20, true));
    let barrier = Arc::new(Barrier::new(THREADS));
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS)
        .map(|_| mpsc::sync_channel::<(usize, usize, u8)>(INBOX))
        .unzip();
    let handles: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(t, inbox)| {
            let p = Arc::clone(&p);
            let barrier = Arc::clone(&barrier);
            let next = senders[(t + 1) % THREADS].clone();
            std::thread::spawn(move || {
                let check_and_free = |(address, size, mark): (usize, usize, u8)| {
                    // SAFETY: the block is held (received or allocated) and `size` bytes long.
                    let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, size) };
                    assert!(
                        bytes.iter().all(|&b| b == mark),
                        "block {address:#x} ({size} B) was overwritten while held"
                    );
                    // SAFETY: as above; `false` leaves the block held, for `free`.
                    if !unsafe { p.deallocate_cached(address as *mut u8, size) } {
                        free(&p, NonNull::new(address as *mut u8).unwrap(), size);
                    }
                };
                let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ t as u64;
                barrier.wait();
                for round in 0..ROUNDS {
                    let mut mine = Vec::new();
                    for i in 0..8 {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let size = 16 << (seed % 9);
                        let mark = (t * 31 + round * 7 + i) as u8;
                        // The C API's fast path on odd rounds, the full one on even rounds.
                        let block = if round % 2 == 1 {
                            p.allocate_cached(size).unwrap_or_else(|| alloc(&p, size))
                        } else {
                            alloc(&p, size)
                        };
                        // SAFETY: the block is held and `size` bytes long.
                        unsafe { block.as_ptr().write_bytes(mark, size) };
                        mine.push((block.as_ptr() as usize, size, mark));
                    }
                    for (i, block) in mine.into_iter().enumerate() {
                        if i % 2 == 0 {
                            // Blocking on a full inbox could deadlock the ring of threads.
                            if let Err(mpsc::TrySendError::Full(block)) = next.try_send(block) {
                                check_and_free(block);
                            }
                        } else {
                            check_and_free(block);
                        }
                    }
                    while let Ok(block) = inbox.try_recv() {
                        check_and_free(block);
                    }
                }
                barrier.wait();
                while let Ok(block) = inbox.try_recv() {
                    check_and_free(block);
                }
            })
        })
        .collect();
    drop(senders);
    for h in handles {
        h.join().unwrap();
    }
    let s = p.usage_statistics();
    assert_eq!(s.consumed_blocks, 0, "{s:?}");
    assert_consistent(&p);
    // The workers exited with blocks in their caches: one thread still gets the whole pool.
    let all = fill(&p, 4096);
    assert_eq!(all.len() * 4096, p.capacity());
}

#[test]
fn the_high_water_mark_counts_blocks_taken_from_a_cache() {
    let _alone = lanes_alone();
    // 1 MiB of 4 KiB blocks: a flush threshold of one block (capacity / 256) and a cache budget
    // of 16 blocks (capacity / 16).
    let p = Arc::new(pool(1 << 20, true));
    let blocks = 16;
    let allocate_elsewhere = || {
        let p = Arc::clone(&p);
        std::thread::spawn(move || {
            (0..blocks)
                .map(|_| alloc(&p, 4096).as_ptr() as usize)
                .collect::<Vec<_>>()
        })
        .join()
        .unwrap()
    };
    let to_block = |address: usize| NonNull::new(address as *mut u8).unwrap();
    // Blocks another thread allocated fill this thread's cache; a second batch stays allocated.
    for address in allocate_elsewhere() {
        free(&p, to_block(address), 4096);
    }
    let held = allocate_elsewhere();
    assert_eq!(p.usage_statistics().cached_blocks, blocks as u64);
    // The peak, 32 blocks, is reached with blocks taken from the cache alone, through the fast
    // paths as the C API takes them (the full paths bring the usage count up to date each time).
    let popped: Vec<_> = (0..blocks)
        .map(|_| p.allocate_cached(4096).unwrap_or_else(|| alloc(&p, 4096)))
        .collect();
    assert_eq!(p.usage_statistics().cached_blocks, 0);
    for block in popped {
        // SAFETY: the block is allocated from `p` and not used again.
        if !unsafe { p.deallocate_cached(block.as_ptr(), 4096) } {
            free(&p, block, 4096);
        }
    }
    for address in held {
        free(&p, to_block(address), 4096);
    }
    let s = p.usage_statistics();
    assert_eq!(s.consumed_bytes, 0, "{s:?}");
    // Within a flush threshold (one block) per lane that allocated or freed (three) of the peak.
    let peak = 2 * blocks as u64 * 4096;
    assert!(
        s.high_water_bytes + 3 * 4096 >= peak && s.high_water_bytes <= s.capacity_bytes,
        "high-water mark {} for a peak of {peak}: {s:?}",
        s.high_water_bytes
    );
}
