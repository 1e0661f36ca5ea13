//! Block helpers shared by the pool's unit tests (`tests.rs`) and the thread-cache integration
//! tests (`tests/pool_thread_cache.rs`, which include this file by path): only the public API,
//! reached through the including module's `MemoryPool`.

use super::MemoryPool;
use std::ptr::NonNull;

pub(crate) fn alloc(pool: &MemoryPool, size: usize) -> NonNull<u8> {
    pool.allocate(size, 1)
        .unwrap_or_else(|f| panic!("allocate({size}) failed: {f:?}"))
}

pub(crate) fn free(pool: &MemoryPool, ptr: NonNull<u8>, size: usize) {
    // SAFETY: the tests free blocks they allocated from this pool and do not touch them again.
    unsafe { pool.deallocate(ptr.as_ptr(), size) }.unwrap();
}

/// Allocates `size`-byte blocks until the pool has none left.
pub(crate) fn fill(pool: &MemoryPool, size: usize) -> Vec<NonNull<u8>> {
    std::iter::from_fn(|| pool.allocate(size, 1).ok()).collect()
}
