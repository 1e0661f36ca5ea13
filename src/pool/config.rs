//! Construction parameters of a pool (000 §2.5.4, §3.1) and their validation into a layout.

use super::lane::LANES;
use super::layout::PoolLayout;
use crate::error::{Error, Result};
use std::fmt;

/// Default smallest block, 000 §2.5.4.
pub const DEFAULT_MIN_BLOCK_ALLOC_SIZE: usize = 64;
/// Default largest block, 000 §2.5.4.
pub const DEFAULT_MAX_BLOCK_ALLOC_SIZE: usize = 4096;

/// What a pool is asked to provide. Zero in a block or superblock field selects its default:
/// 64 B smallest block, 4 KiB largest block, superblock as large as the largest block.
/// Each size is rounded up to a power of two, and they must satisfy
/// `0 < min_block_alloc_size <= max_block_alloc_size <= min_superblock_size <= min_total_alloc_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Bytes the pool must be able to hand out; rounded up to whole superblocks.
    pub min_total_alloc_size: usize,
    /// Smallest block; smaller requests still take a whole block of this size.
    pub min_block_alloc_size: usize,
    /// Largest request the pool serves.
    pub max_block_alloc_size: usize,
    /// Smallest superblock; more superblocks serve more sizes at once, larger ones waste less.
    pub min_superblock_size: usize,
    /// Whether freed blocks go to a per-thread cache first (`thread_cache.rs`); on by default.
    /// Host pools only: device pools have no thread caches.
    pub thread_cache: bool,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            min_total_alloc_size: 0,
            min_block_alloc_size: 0,
            max_block_alloc_size: 0,
            min_superblock_size: 0,
            thread_cache: true,
        }
    }
}

impl PoolConfig {
    /// A pool of at least `min_total_alloc_size` bytes with default block and superblock sizes.
    pub fn with_total(min_total_alloc_size: usize) -> PoolConfig {
        PoolConfig {
            min_total_alloc_size,
            ..PoolConfig::default()
        }
    }

    /// Checks the parameters and computes the pool's geometry, for a host pool.
    pub fn layout(&self) -> Result<PoolLayout> {
        self.layout_with_lanes(LANES as u32)
    }

    /// `layout` with `lanes` sets of hints (a power of two): device pools serve thousands of
    /// warps at once and spread them over more lanes than a host pool has threads.
    pub fn layout_with_lanes(&self, lanes: u32) -> Result<PoolLayout> {
        debug_assert!(lanes.is_power_of_two());
        if self.min_total_alloc_size == 0 {
            return Err(Error::invalid_argument(
                "memory pool: min_total_alloc_size is 0; give the number of bytes the pool must \
                 be able to hand out",
            ));
        }
        let min_block = Param::or_default(
            "min_block_alloc_size",
            self.min_block_alloc_size,
            DEFAULT_MIN_BLOCK_ALLOC_SIZE,
        );
        let max_block = Param::or_default(
            "max_block_alloc_size",
            self.max_block_alloc_size,
            DEFAULT_MAX_BLOCK_ALLOC_SIZE,
        );
        let superblock = Param::or_default(
            "min_superblock_size",
            self.min_superblock_size,
            max_block.value,
        );
        let total = Param::given("min_total_alloc_size", self.min_total_alloc_size);
        check_order([min_block, max_block, superblock, total])?;

        let min_block = min_block.rounded()?;
        let max_block = max_block.rounded()?;
        let superblock = superblock.rounded()?;
        let capacity = total
            .value
            .checked_next_multiple_of(superblock.value)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "memory pool: {total} rounded up to whole superblocks of {} bytes overflows usize",
                    superblock.value
                ))
            })?;
        // The check again on what the pool will really use, stated for the rounded values.
        check_order([min_block, max_block, superblock, Param::capacity(capacity)])?;

        let superblock_lg2 = superblock.value.trailing_zeros();
        let count = capacity >> superblock_lg2;
        let count = u32::try_from(count).map_err(|_| {
            Error::invalid_argument(format!(
                "memory pool: {total} needs {count} superblocks of {} bytes, more than {}; raise \
                 min_superblock_size",
                superblock.value,
                u32::MAX
            ))
        })?;
        PoolLayout::new(
            min_block.value.trailing_zeros(),
            max_block.value.trailing_zeros(),
            superblock_lg2,
            count,
            lanes,
        )
    }
}

/// A size parameter with how it came about, for messages such as
/// "max_block_alloc_size (4096, the default)".
#[derive(Clone, Copy)]
struct Param {
    name: &'static str,
    value: usize,
    origin: Origin,
}

#[derive(Clone, Copy)]
enum Origin {
    Given,
    Default,
    Rounded,
    Capacity,
}

impl Param {
    fn given(name: &'static str, value: usize) -> Param {
        Param {
            name,
            value,
            origin: Origin::Given,
        }
    }

    fn or_default(name: &'static str, value: usize, default: usize) -> Param {
        match value {
            0 => Param {
                name,
                value: default,
                origin: Origin::Default,
            },
            _ => Param::given(name, value),
        }
    }

    fn capacity(value: usize) -> Param {
        Param {
            name: "min_total_alloc_size",
            value,
            origin: Origin::Capacity,
        }
    }

    /// Rounded up to a power of two, 000 §2.5.4.
    fn rounded(self) -> Result<Param> {
        let value = self.value.checked_next_power_of_two().ok_or_else(|| {
            Error::invalid_argument(format!(
                "memory pool: {self} has no power of two >= it in usize; give a smaller size"
            ))
        })?;
        Ok(Param {
            value,
            origin: Origin::Rounded,
            ..self
        })
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, value) = (self.name, self.value);
        match self.origin {
            Origin::Given => write!(f, "{name} ({value})"),
            Origin::Default => write!(f, "{name} ({value}, the default)"),
            Origin::Rounded => write!(f, "{name} ({value} after rounding up to a power of two)"),
            Origin::Capacity => {
                write!(f, "{name} ({value} after rounding up to whole superblocks)")
            }
        }
    }
}

/// `0 < min block <= max block <= superblock <= total`, 000 §2.5.4 and §3.1. A zero minimum
/// block cannot reach here (it selects the default), so the first inequality always holds.
fn check_order(params: [Param; 4]) -> Result<()> {
    for pair in params.windows(2) {
        if pair[0].value > pair[1].value {
            return Err(Error::invalid_argument(format!(
                "memory pool: {} must be <= {}",
                pair[0], pair[1]
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn config(total: usize, min_block: usize, max_block: usize, superblock: usize) -> PoolConfig {
        PoolConfig {
            min_total_alloc_size: total,
            min_block_alloc_size: min_block,
            max_block_alloc_size: max_block,
            min_superblock_size: superblock,
            thread_cache: true,
        }
    }

    fn rejection(c: PoolConfig) -> String {
        let e = c.layout().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        e.message().to_owned()
    }

    #[test]
    fn defaults_are_64_4096_and_a_superblock_of_the_largest_block() {
        let l = PoolConfig::with_total(1 << 20).layout().unwrap();
        assert_eq!((l.min_block_size(), l.max_block_size()), (64, 4096));
        assert_eq!(l.superblock_size(), 4096);
        assert_eq!(l.superblock_count, 256);
        assert_eq!(l.capacity(), 1 << 20);
    }

    #[test]
    fn sizes_round_up_to_powers_of_two_and_whole_superblocks() {
        let l = config(10_000, 48, 1000, 3000).layout().unwrap();
        assert_eq!(l.min_block_size(), 64);
        assert_eq!(l.max_block_size(), 1024);
        assert_eq!(l.superblock_size(), 4096);
        assert_eq!(l.capacity(), 12_288);
        assert_eq!(l.superblock_count, 3);
    }

    #[test]
    fn a_superblock_rounded_past_the_total_still_gives_one_superblock() {
        let l = config(3000, 64, 1024, 3000).layout().unwrap();
        assert_eq!((l.capacity(), l.superblock_count), (4096, 1));
    }

    #[test]
    fn single_block_size_tuning_gives_one_bitset() {
        // 000 §2.5.4: min block = max block and superblock = total.
        let l = config(1 << 16, 256, 256, 1 << 16).layout().unwrap();
        assert_eq!(
            (l.size_classes, l.superblock_count, l.bitset_words),
            (1, 1, 4)
        );
    }

    #[test]
    fn zero_total_is_rejected() {
        assert_eq!(
            rejection(PoolConfig::default()),
            "memory pool: min_total_alloc_size is 0; give the number of bytes the pool must be \
             able to hand out"
        );
    }

    #[test]
    fn min_block_above_max_block_is_rejected() {
        assert_eq!(
            rejection(config(1 << 20, 128, 64, 0)),
            "memory pool: min_block_alloc_size (128) must be <= max_block_alloc_size (64)"
        );
        assert_eq!(
            rejection(config(1 << 20, 8192, 0, 0)),
            "memory pool: min_block_alloc_size (8192) must be <= max_block_alloc_size (4096, the \
             default)"
        );
    }

    #[test]
    fn max_block_above_superblock_is_rejected() {
        assert_eq!(
            rejection(config(1 << 20, 0, 8192, 4096)),
            "memory pool: max_block_alloc_size (8192) must be <= min_superblock_size (4096)"
        );
    }

    #[test]
    fn superblock_above_total_is_rejected() {
        assert_eq!(
            rejection(config(4000, 0, 0, 0)),
            "memory pool: min_superblock_size (4096, the default) must be <= min_total_alloc_size \
             (4000)"
        );
        assert_eq!(
            rejection(config(1000, 0, 512, 2000)),
            "memory pool: min_superblock_size (2000) must be <= min_total_alloc_size (1000)"
        );
    }

    #[test]
    fn sizes_without_a_power_of_two_are_rejected() {
        let huge = usize::MAX / 2 + 2;
        let message = rejection(config(usize::MAX, 0, 0, huge));
        assert_eq!(
            message,
            format!(
                "memory pool: min_superblock_size ({huge}) has no power of two >= it in usize; give \
                 a smaller size"
            )
        );
    }

    #[test]
    fn total_that_overflows_when_rounded_to_superblocks_is_rejected() {
        let message = rejection(config(usize::MAX, 0, 0, 0));
        assert!(
            message.starts_with(&format!(
                "memory pool: min_total_alloc_size ({})",
                usize::MAX
            )),
            "{message}"
        );
        assert!(message.contains("overflows usize"), "{message}");
    }

    #[test]
    fn more_superblocks_than_u32_is_rejected() {
        let message = rejection(config(1 << 40, 64, 64, 64));
        assert!(message.contains("more than 4294967295"), "{message}");
        assert!(message.contains("raise min_superblock_size"), "{message}");
    }
}
