//! Model checks of the pool's claim, release and reassignment under every interleaving (up to a
//! preemption bound) and every weak-memory outcome loom explores.
//!
//! Run with:
//!     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_pool
//! The preemption bound defaults to 3; `LOOM_MAX_PREEMPTIONS` overrides it.
//!
//! Block contents are modelled by one loom `UnsafeCell` per 64 bytes of the span: a thread writes
//! the cells of each block it holds, so loom reports a data race if a block is handed to a second
//! holder without the first one's release happening-before (two holders at once included).

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::ptr::NonNull;
use taskdag::pool::{Lane, MemoryPool, PoolConfig};

const BLOCK: usize = 64;
const SUPERBLOCK: usize = 256;

/// Two superblocks of 256 bytes; blocks of 64, 128 and 256 bytes.
fn two_superblock_pool() -> MemoryPool {
    MemoryPool::new(&PoolConfig {
        min_total_alloc_size: 2 * SUPERBLOCK,
        min_block_alloc_size: BLOCK,
        max_block_alloc_size: SUPERBLOCK,
        min_superblock_size: SUPERBLOCK,
        thread_cache: false,
    })
    .unwrap()
}

fn check(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(model);
}

/// A block a model thread holds.
struct Held {
    ptr: NonNull<u8>,
    size: usize,
    block: usize,
}

/// The pool and one cell per 64 bytes of its span, whose first byte is `base`.
struct Model {
    pool: MemoryPool,
    base: usize,
    cells: Vec<UnsafeCell<usize>>,
}

impl Model {
    /// The span's base is the address of the first block of superblock 0; `setup` must leave
    /// superblock 0 with its first block as the lowest address it hands out.
    fn new(pool: MemoryPool, base: usize) -> Arc<Model> {
        let cells = (0..2 * SUPERBLOCK / BLOCK)
            .map(|_| UnsafeCell::new(0))
            .collect();
        Arc::new(Model { pool, base, cells })
    }

    /// Allocates and writes the block; `None` when the pool had no block.
    fn allocate(&self, lane: Lane, size: usize) -> Option<Held> {
        let ptr = self.pool.allocate_in_lane(lane, size, 1).ok()?;
        let block = self.pool.block_size_at(ptr.as_ptr()).unwrap();
        assert!(
            block >= size,
            "a {size}-byte request got a {block}-byte block"
        );
        self.write(ptr, block, size);
        Some(Held { ptr, size, block })
    }

    /// Writes the block again and frees it, checking that its superblock kept its block size.
    fn free(&self, lane: Lane, held: Held) {
        let block = self.pool.block_size_at(held.ptr.as_ptr()).unwrap();
        assert_eq!(
            block, held.block,
            "the superblock of a held block changed its block size"
        );
        self.write(held.ptr, block, held.size);
        // SAFETY: allocated from this pool for `size` bytes and not used again.
        unsafe {
            self.pool
                .deallocate_in_lane(lane, held.ptr.as_ptr(), held.size)
        }
        .unwrap();
    }

    /// Writes every cell of the block, as a holder may; loom flags unsynchronized writes.
    fn write(&self, ptr: NonNull<u8>, block: usize, value: usize) {
        let first = (ptr.as_ptr() as usize - self.base) / BLOCK;
        for cell in &self.cells[first..first + block / BLOCK] {
            // SAFETY: loom checks that no other access to the cell is concurrent with this one.
            cell.with_mut(|p| unsafe { *p = value });
        }
    }
}

/// (a) Two threads on one lane claim, release and claim again in the same superblock; every
/// block is held by one thread at a time and the statistics add up afterwards.
#[test]
fn concurrent_claims_and_releases_never_share_a_block() {
    check(|| {
        let pool = two_superblock_pool();
        let lane = Lane::explicit(0, false);
        // Assign superblock 0 to 64-byte blocks and learn the span's base from its first block.
        let first = pool.allocate_in_lane(lane, BLOCK, 1).unwrap();
        // SAFETY: allocated just above for BLOCK bytes.
        unsafe { pool.deallocate_in_lane(lane, first.as_ptr(), BLOCK) }.unwrap();
        let model = Model::new(pool, first.as_ptr() as usize);

        let threads: Vec<_> = (0..2)
            .map(|_| {
                let model = Arc::clone(&model);
                thread::spawn(move || {
                    let a = model.allocate(lane, BLOCK).unwrap();
                    model.free(lane, a);
                    let b = model.allocate(lane, BLOCK).unwrap();
                    assert_eq!(b.block, BLOCK);
                    b.ptr.as_ptr() as usize
                })
            })
            .collect();
        let held: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_ne!(held[0], held[1], "one block was handed to both threads");

        let stats = model.pool.usage_statistics();
        assert_eq!(stats.consumed_blocks, 2);
        assert_eq!(
            stats.consumed_bytes + stats.reserved_bytes,
            stats.consumed_superblocks * SUPERBLOCK as u64
        );
        for ptr in held {
            // SAFETY: each was allocated for BLOCK bytes and is released once.
            unsafe { model.pool.deallocate_in_lane(lane, ptr as *mut u8, BLOCK) }.unwrap();
        }
        assert_eq!(model.pool.usage_statistics().consumed_bytes, 0);
    });
}

/// (b) One thread reassigns the empty superblock 0 from 64- to 256-byte blocks while another
/// claims and frees a 64-byte block in it: no claim survives a change of its superblock's size,
/// and the two never hold overlapping memory.
#[test]
fn reassignment_never_changes_the_size_under_a_held_block() {
    check(|| {
        let pool = two_superblock_pool();
        let small_lane = Lane::explicit(0, true);
        let large_lane = Lane::explicit(1, true);
        // Superblock 0: 64-byte blocks, all free. Superblock 1: one 256-byte block, held, so the
        // large request can only be served by reassigning superblock 0.
        let first = pool.allocate_in_lane(small_lane, BLOCK, 1).unwrap();
        // SAFETY: allocated just above for BLOCK bytes.
        unsafe { pool.deallocate_in_lane(small_lane, first.as_ptr(), BLOCK) }.unwrap();
        let filler = pool.allocate_in_lane(small_lane, SUPERBLOCK, 1).unwrap();
        assert_eq!(
            filler.as_ptr() as usize,
            first.as_ptr() as usize + SUPERBLOCK
        );
        let model = Model::new(pool, first.as_ptr() as usize);

        let small = {
            let model = Arc::clone(&model);
            thread::spawn(move || {
                // Superblock 1 is full, so this block comes from superblock 0: a 64-byte block, or
                // the 256-byte one if the other thread reassigned it and freed it again.
                let got = model.allocate(small_lane, BLOCK);
                let served = got.is_some();
                if let Some(held) = got {
                    model.free(small_lane, held);
                }
                served
            })
        };
        let large = {
            let model = Arc::clone(&model);
            thread::spawn(move || {
                let got = model.allocate(large_lane, SUPERBLOCK);
                let served = got.is_some();
                if let Some(held) = got {
                    let at = held.ptr.as_ptr() as usize;
                    assert_eq!(at, model.base, "only superblock 0 can serve");
                    model.free(large_lane, held);
                }
                served
            })
        };
        // Both may fail: a claim that meets a reassignment undoes its bit, and the reassignment
        // may still have seen that bit; each gives up this round (a caller retries through
        // attempt_limit).
        let small_got = small.join().unwrap();
        let large_got = large.join().unwrap();

        let stats = model.pool.usage_statistics();
        assert_eq!(
            stats.consumed_blocks, 1,
            "only the filler block is still held"
        );
        assert_eq!(
            stats.failed_allocations,
            u64::from(!small_got) + u64::from(!large_got)
        );
        // A failed reassignment must restore superblock 0's header.
        assert!(model.pool.block_size_at(first.as_ptr()).is_some());
    });
}
