//! Many threads allocating and freeing blocks of random sizes from one pool at once, each holding
//! a changing window of live blocks. Every block is filled with a pattern unique to its owner and
//! allocation, and checked before it is freed, so two live blocks that overlap are caught.
//!
//! `TASKDAG_STRESS_OPS` sets the total operations (default 3000000) to run longer.
//! The timing tests are ignored by default; run them in release:
//!     cargo test --release --test pool_stress -- --ignored --nocapture

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;
use taskdag::pool::{AllocFailure, MemoryPool, PoolConfig};
use taskdag::ErrorKind;

/// xorshift64*: a small deterministic generator, so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A size from 1 to `max`, with every power-of-two class equally likely, so small classes
    /// are exercised as much as large ones.
    fn size(&mut self, max: usize) -> usize {
        let classes = max.trailing_zeros() as u64 + 1;
        let class = self.below(classes);
        let high = 1u64 << class;
        (high / 2 + 1 + self.below(high - high / 2)) as usize
    }
}

fn total_ops() -> u64 {
    std::env::var("TASKDAG_STRESS_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000_000)
}

/// A live block and the pattern written into it.
struct Live {
    ptr: NonNull<u8>,
    size: usize,
    tag: u64,
}

/// Fills a block: its tag in the first 8 bytes when they fit, then one tag-derived byte.
fn fill(live: &Live) {
    // SAFETY: the block is held by this thread and at least `size` bytes long.
    let bytes = unsafe { std::slice::from_raw_parts_mut(live.ptr.as_ptr(), live.size) };
    let head = live.size.min(8);
    bytes[..head].copy_from_slice(&live.tag.to_le_bytes()[..head]);
    bytes[head..].fill(live.tag as u8 ^ 0x5a);
}

fn verify(live: &Live, reference: &[u8]) {
    // SAFETY: as in `fill`.
    let bytes = unsafe { std::slice::from_raw_parts(live.ptr.as_ptr(), live.size) };
    let head = live.size.min(8);
    let expected_tail = &reference[..live.size - head];
    assert!(
        bytes[..head] == live.tag.to_le_bytes()[..head] && bytes[head..] == *expected_tail,
        "block {:?} ({} bytes, tag {:#x}) was overwritten: another holder shares it",
        live.ptr,
        live.size,
        live.tag
    );
}

struct Outcome {
    allocations: u64,
    exhausted: u64,
    /// The most bytes (in blocks of the requested sizes) one thread held at once.
    peak_bytes: u64,
}

/// One thread's work: `ops` allocations or frees, holding at most `max_live` blocks.
fn churn(pool: &MemoryPool, thread: u64, ops: u64, max_live: u64) -> Outcome {
    let mut rng = Rng::new(thread + 1);
    let mut live: Vec<Live> = Vec::new();
    let mut references: Vec<Vec<u8>> = Vec::new(); // one all-equal buffer per fill byte
    for byte in 0..=255u8 {
        references.push(vec![byte ^ 0x5a; pool.max_block_size()]);
    }
    let mut outcome = Outcome {
        allocations: 0,
        exhausted: 0,
        peak_bytes: 0,
    };
    let mut live_bytes = 0;
    let mut target = rng.below(max_live + 1);
    for seq in 0..ops {
        if seq % 256 == 0 {
            // Change the window now and then, so threads move between growing and shrinking.
            target = rng.below(max_live + 1);
        }
        let grow = (live.len() as u64) < target || live.is_empty();
        if grow {
            let size = rng.size(pool.max_block_size());
            match pool.allocate(size, 4) {
                Ok(ptr) => {
                    let block = pool.allocate_block_size(size);
                    assert!(pool.contains(ptr.as_ptr()), "{ptr:?} is outside the span");
                    assert_eq!(
                        ptr.as_ptr() as usize % block,
                        0,
                        "{ptr:?} not aligned to {block}"
                    );
                    let held = pool.block_size_at(ptr.as_ptr()).unwrap();
                    assert!(
                        held >= block,
                        "a {size}-byte request got a {held}-byte block"
                    );
                    let entry = Live {
                        ptr,
                        size,
                        tag: (thread << 48) | seq,
                    };
                    fill(&entry);
                    live.push(entry);
                    outcome.allocations += 1;
                    live_bytes += block as u64;
                    outcome.peak_bytes = outcome.peak_bytes.max(live_bytes);
                }
                Err(AllocFailure::Exhausted { .. }) => outcome.exhausted += 1,
                Err(other) => panic!("allocate({size}) failed: {other:?}"),
            }
        } else {
            let entry = live.swap_remove(rng.below(live.len() as u64) as usize);
            live_bytes -= pool.allocate_block_size(entry.size) as u64;
            verify(&entry, &references[(entry.tag as u8) as usize]);
            // SAFETY: allocated by this thread for `size` bytes and released once.
            unsafe { pool.deallocate(entry.ptr.as_ptr(), entry.size) }.unwrap();
        }
    }
    for entry in live {
        verify(&entry, &references[(entry.tag as u8) as usize]);
        // SAFETY: as above.
        unsafe { pool.deallocate(entry.ptr.as_ptr(), entry.size) }.unwrap();
    }
    outcome
}

fn run_threads(pool: &Arc<MemoryPool>, threads: u64, ops: u64, max_live: u64) -> Outcome {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let pool = Arc::clone(pool);
            std::thread::spawn(move || churn(&pool, t, ops / threads, max_live))
        })
        .collect();
    let mut total = Outcome {
        allocations: 0,
        exhausted: 0,
        peak_bytes: 0,
    };
    for h in handles {
        let o = h.join().unwrap();
        total.allocations += o.allocations;
        total.exhausted += o.exhausted;
        total.peak_bytes = total.peak_bytes.max(o.peak_bytes);
    }
    total
}

fn assert_drained(pool: &MemoryPool, threads: u64, outcome: &Outcome) {
    let s = pool.usage_statistics();
    assert_eq!(
        (s.consumed_blocks, s.consumed_bytes),
        (0, 0),
        "blocks leaked: {s:?}"
    );
    assert_eq!(
        s.reserved_bytes,
        s.consumed_superblocks * s.superblock_bytes
    );
    assert_eq!(
        s.failed_allocations, outcome.exhausted,
        "failures miscounted"
    );
    // The pool held at least what one thread held at its peak; the mark may miss up to a lane's
    // flush threshold per thread: capacity/256, at least one and at most 32 largest blocks (see
    // `UsageStatistics::high_water_bytes`).
    let threshold = (s.capacity_bytes / 256).clamp(s.max_block_bytes, 32 * s.max_block_bytes);
    assert!(
        s.high_water_bytes + threads * threshold >= outcome.peak_bytes,
        "high-water mark {} is too far below a thread's peak of {} bytes",
        s.high_water_bytes,
        outcome.peak_bytes
    );
    assert!(s.high_water_bytes <= s.capacity_bytes);
}

#[test]
fn eight_threads_with_overlapping_random_blocks_never_share_memory() {
    let pool = Arc::new(MemoryPool::new(&PoolConfig::with_total(4 << 20)).unwrap());
    let outcome = run_threads(&pool, 8, total_ops(), 48);
    assert!(outcome.allocations > 0);
    // Eight windows of at most 48 blocks of at most 4 KiB fit in 4 MiB with room to spare for
    // partly used superblocks, so failures would mean lost blocks.
    assert!(
        outcome.exhausted * 100 <= outcome.allocations,
        "{} of {} allocations failed",
        outcome.exhausted,
        outcome.allocations
    );
    assert_drained(&pool, 8, &outcome);
}

#[test]
fn a_pool_under_pressure_reassigns_and_falls_back_without_sharing_memory() {
    // 16 superblocks for 4 threads of up to 24 blocks: exhaustion, reassignment of emptied
    // superblocks and fallback to larger blocks happen all the time.
    let pool = Arc::new(MemoryPool::new(&PoolConfig::with_total(16 * 4096)).unwrap());
    let outcome = run_threads(&pool, 4, total_ops() / 3, 24);
    assert!(outcome.allocations > 0);
    assert!(
        outcome.exhausted > 0,
        "the pool was meant to run out now and then"
    );
    assert_drained(&pool, 4, &outcome);
}

#[test]
fn many_threads_sharing_lanes_stay_correct() {
    // More threads than lanes: some share lanes, hints and the shared usage counter.
    let pool = Arc::new(MemoryPool::new(&PoolConfig::with_total(8 << 20)).unwrap());
    let threads = taskdag::pool::LANES as u64 + 8;
    let barrier = Arc::new(Barrier::new(threads as usize));
    let failures = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (pool, barrier, failures) = (
                Arc::clone(&pool),
                Arc::clone(&barrier),
                Arc::clone(&failures),
            );
            std::thread::spawn(move || {
                barrier.wait(); // all alive at once, so the lanes run out
                let o = churn(&pool, t, (total_ops() / 10 / threads).max(100), 8);
                failures.fetch_add(o.exhausted, Ordering::Relaxed);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = pool.usage_statistics();
    assert_eq!((s.consumed_blocks, s.consumed_bytes), (0, 0));
    assert_eq!(s.failed_allocations, failures.load(Ordering::Relaxed));
}

#[test]
fn exhaustion_reports_pool_exhausted() {
    let pool = MemoryPool::new(&PoolConfig::with_total(4096)).unwrap();
    let blocks: Vec<_> = std::iter::from_fn(|| pool.allocate(4096, 1).ok()).collect();
    assert_eq!(blocks.len(), 1);
    let error = pool.allocate(64, 2).unwrap_err().into_error().unwrap();
    assert_eq!(error.kind(), ErrorKind::PoolExhausted);
    for b in blocks {
        // SAFETY: allocated above for 4096 bytes.
        unsafe { pool.deallocate(b.as_ptr(), 4096) }.unwrap();
    }
}

/// Prints nanoseconds per allocate + deallocate pair of `size_at(i)` bytes on this thread.
fn time_pairs(pool: &MemoryPool, name: &str, size_at: impl Fn(usize) -> usize) {
    const PAIRS: usize = 20_000_000;
    for _ in 0..2 {
        // The second run is the measurement; the first warms caches and assigns superblocks.
        let start = Instant::now();
        for i in 0..PAIRS {
            let size = size_at(i);
            let ptr = pool.allocate(size, 1).unwrap();
            std::hint::black_box(ptr);
            // SAFETY: allocated just above for `size` bytes.
            unsafe { pool.deallocate(ptr.as_ptr(), size) }.unwrap();
        }
        let ns = start.elapsed().as_nanos() as f64 / PAIRS as f64;
        println!("alloc+free {name:>18}: {ns:6.2} ns/pair");
    }
}

/// Nanoseconds per allocate + deallocate pair on one thread, for each size pattern.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn single_thread_alloc_free_timing() {
    let pool = MemoryPool::new(&PoolConfig::with_total(64 << 20)).unwrap();
    let mut rng = Rng::new(7);
    let mixed: Vec<usize> = (0..4096).map(|_| rng.size(4096)).collect();
    time_pairs(&pool, "64 B", |_| 64);
    time_pairs(&pool, "1 KiB", |_| 1024);
    time_pairs(&pool, "mixed 1 B..4 KiB", |i| mixed[i & 4095]);

    // With a window of live blocks, so the allocation is not always the block just freed.
    const PAIRS: usize = 20_000_000;
    let mut window: Vec<(NonNull<u8>, usize)> = Vec::with_capacity(64);
    let start = Instant::now();
    for i in 0..PAIRS {
        let size = mixed[i & 4095];
        window.push((pool.allocate(size, 1).unwrap(), size));
        if window.len() == 64 {
            let (ptr, size) = window.swap_remove(i % 64);
            // SAFETY: allocated above for `size` bytes.
            unsafe { pool.deallocate(ptr.as_ptr(), size) }.unwrap();
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / PAIRS as f64;
    println!("alloc+free mixed, 64 live blocks: {ns:6.2} ns/pair");

    // Filling a pool: every few allocations a superblock fills and the search runs.
    for size in [64, 1024, 4096] {
        let pool = MemoryPool::new(&PoolConfig::with_total(16 << 20)).unwrap();
        let count = (16 << 20) / size * 9 / 10;
        let start = Instant::now();
        let blocks: Vec<_> = (0..count)
            .map(|_| pool.allocate(size, 1).unwrap())
            .collect();
        let ns = start.elapsed().as_nanos() as f64 / count as f64;
        println!("fill a 16 MiB pool to 90% with {size:>4} B blocks: {ns:6.2} ns/alloc");
        for ptr in blocks {
            // SAFETY: allocated above for `size` bytes.
            unsafe { pool.deallocate(ptr.as_ptr(), size) }.unwrap();
        }
    }
}

/// Allocation throughput as threads are added, each allocating and freeing blocks of one size
/// with a window of 8 live blocks. Prints the total rate (from wall time, so the slowest thread
/// counts) and the mean of each thread's own time per pair. `TASKDAG_SCALING_THREADS` sets the
/// largest thread count.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn multi_thread_scaling_timing() {
    let max_threads: usize = std::env::var("TASKDAG_SCALING_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    const PAIRS: usize = 5_000_000;
    for size in [64usize, 1024] {
        let mut threads = 1;
        while threads <= max_threads {
            let pool = Arc::new(MemoryPool::new(&PoolConfig::with_total(64 << 20)).unwrap());
            let barrier = Arc::new(Barrier::new(threads));
            let start = Instant::now();
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (pool, barrier) = (Arc::clone(&pool), Arc::clone(&barrier));
                    std::thread::spawn(move || {
                        barrier.wait();
                        let own_start = Instant::now();
                        let mut window = [None; 8];
                        for i in 0..PAIRS {
                            if let Some(ptr) = window[i % 8].take() {
                                // SAFETY: allocated below for `size` bytes.
                                unsafe { pool.deallocate(ptr, size) }.unwrap();
                            }
                            window[i % 8] = Some(pool.allocate(size, 1).unwrap().as_ptr());
                        }
                        let own = own_start.elapsed().as_secs_f64();
                        for ptr in window.into_iter().flatten() {
                            // SAFETY: as above.
                            unsafe { pool.deallocate(ptr, size) }.unwrap();
                        }
                        own
                    })
                })
                .collect();
            let own: f64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
            let seconds = start.elapsed().as_secs_f64();
            let rate = (threads * PAIRS) as f64 / seconds / 1e6;
            let mean_ns = own / threads as f64 * 1e9 / PAIRS as f64;
            println!(
                "{size:>5} B, {threads:>2} threads: {rate:7.1} M pairs/s total, {mean_ns:6.2} ns/pair \
                 per thread"
            );
            threads *= 2;
        }
    }
}
