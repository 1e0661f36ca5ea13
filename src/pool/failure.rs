//! Failures of allocation and deallocation. The messages are built here, in cold functions, so
//! that formatting code stays out of the fast paths.

use super::layout::PoolLayout;
use crate::error::{Error, ErrorKind};

/// Why `allocate` returned no block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocFailure {
    /// A request for zero bytes. Not an error: 000 §3.1 allocates only when `alloc_size > 0`,
    /// and the C API returns NULL without setting an error.
    ZeroSize,
    /// The request exceeds the largest block.
    TooLarge { size: usize, max_block_size: usize },
    /// No block was found in `attempt_limit` search rounds.
    Exhausted {
        size: usize,
        block_size: usize,
        attempt_limit: u32,
        capacity: usize,
        consumed_bytes: u64,
        /// Free bytes held in the caches of other live threads (`thread_cache.rs`).
        cached_bytes: u64,
    },
}

impl AllocFailure {
    /// The error to report, or `None` for a zero-size request.
    #[cold]
    pub fn into_error(self) -> Option<Error> {
        match self {
            AllocFailure::ZeroSize => None,
            AllocFailure::TooLarge {
                size,
                max_block_size,
            } => Some(Error::invalid_argument(format!(
                "memory pool: cannot allocate {size} bytes: the largest block is {max_block_size} \
                 bytes; create the pool with a larger max_block_alloc_size"
            ))),
            AllocFailure::Exhausted {
                size,
                block_size,
                attempt_limit,
                capacity,
                consumed_bytes,
                cached_bytes,
            } => {
                let cached = if cached_bytes == 0 {
                    String::new()
                } else {
                    format!(
                        "; {cached_bytes} free bytes sit in other threads' caches (flush them \
                         with td_pool_flush_thread_cache in those threads, or create the pool \
                         with thread_cache = 0)"
                    )
                };
                Some(Error::new(
                    ErrorKind::PoolExhausted,
                    format!(
                        "memory pool: no free block of {block_size} bytes for a request of \
                         {size} bytes after {attempt_limit} search round(s); {consumed_bytes} of \
                         {capacity} bytes are allocated{cached}; free blocks, retry with a \
                         larger attempt_limit, or create a larger pool"
                    ),
                ))
            }
        }
    }
}

#[cold]
#[inline(never)]
pub(crate) fn outside_span(address: usize, base: usize, capacity: usize) -> Error {
    let end = base + capacity;
    Error::invalid_argument(format!(
        "memory pool: deallocate of pointer {address:#x}, which is outside the pool's span \
         [{base:#x}, {end:#x}); pass a pointer returned by this pool's allocate"
    ))
}

#[cold]
#[inline(never)]
pub(crate) fn never_assigned(address: usize, superblock: usize) -> Error {
    Error::invalid_argument(format!(
        "memory pool: deallocate of pointer {address:#x}, which was never allocated (its \
         superblock {superblock} has never held blocks); pass a pointer returned by allocate"
    ))
}

#[cold]
#[inline(never)]
pub(crate) fn size_mismatch(
    address: usize,
    size: usize,
    block_lg2: u32,
    layout: &PoolLayout,
) -> Error {
    let block = 1usize << block_lg2;
    let max = layout.max_block_size();
    let message = if size == 0 {
        format!(
            "memory pool: deallocate of pointer {address:#x} with size 0; no allocation has size \
             0: pass the size given to allocate"
        )
    } else if size > max {
        format!(
            "memory pool: deallocate of pointer {address:#x} with size {size}, larger than the \
             largest block ({max} bytes); pass the size given to allocate"
        )
    } else {
        let wanted = 1usize << layout.block_lg2_for(size);
        format!(
            "memory pool: deallocate of pointer {address:#x} with size {size} (a {wanted}-byte \
             block), but the block there is {block} bytes; pass the size given to allocate"
        )
    };
    Error::invalid_argument(message)
}

#[cold]
#[inline(never)]
pub(crate) fn misaligned(
    address: usize,
    superblock: usize,
    block_lg2: u32,
    into_block: usize,
) -> Error {
    let block = 1usize << block_lg2;
    Error::invalid_argument(format!(
        "memory pool: deallocate of pointer {address:#x}, which is {into_block} bytes into a \
         block (superblock {superblock} holds {block}-byte blocks); pass the pointer allocate \
         returned, not one inside the block"
    ))
}

#[cold]
#[inline(never)]
pub(crate) fn not_allocated(address: usize, block_lg2: u32) -> Error {
    let block = 1usize << block_lg2;
    Error::invalid_argument(format!(
        "memory pool: deallocate of pointer {address:#x} ({block}-byte block), which is not \
         allocated: a double free, or a pointer allocate never returned"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_size_is_not_an_error() {
        assert_eq!(AllocFailure::ZeroSize.into_error(), None);
    }

    #[test]
    fn too_large_names_the_size_and_the_largest_block() {
        let e = AllocFailure::TooLarge {
            size: 5000,
            max_block_size: 4096,
        }
        .into_error()
        .unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(
            e.message().contains("cannot allocate 5000 bytes"),
            "{}",
            e.message()
        );
        assert!(
            e.message().contains("largest block is 4096 bytes"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn exhaustion_names_request_block_capacity_and_use() {
        let e = AllocFailure::Exhausted {
            size: 100,
            block_size: 128,
            attempt_limit: 3,
            capacity: 8192,
            consumed_bytes: 8064,
            cached_bytes: 0,
        }
        .into_error()
        .unwrap();
        assert_eq!(e.kind(), ErrorKind::PoolExhausted);
        for part in [
            "block of 128 bytes",
            "request of 100 bytes",
            "3 search round(s)",
            "8064 of 8192",
        ] {
            assert!(
                e.message().contains(part),
                "{part:?} not in {}",
                e.message()
            );
        }
    }
}
