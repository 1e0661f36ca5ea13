//! The header word of a superblock (000 §2.5.2): which block size the superblock is assigned to,
//! and whether a reassignment is checking it for emptiness.
//!
//! The encoding is plain integers so host and device code read the same word:
//! bits 0..8 hold lg2 of the block size, bit 8 is set once the superblock has been assigned, and
//! bit 9 is set while a reassignment verifies that the superblock is empty. Zero means the
//! superblock was never assigned. During a reassignment the lg2 field keeps the current block size,
//! so a concurrent deallocation can still validate its size without waiting.

/// The header of a superblock that was never assigned a block size.
pub const HEADER_UNASSIGNED: u64 = 0;
/// Mask of the lg2 of the block size in an assigned header.
pub const HEADER_BLOCK_LG2_MASK: u64 = 0xff;
/// Set in every assigned header.
pub const HEADER_ASSIGNED: u64 = 1 << 8;
/// Set while a reassignment checks that the superblock is empty.
pub const HEADER_RECLAIMING: u64 = 1 << 9;

/// The header of a superblock assigned to blocks of `2^block_lg2` bytes and open for claims.
#[inline]
pub const fn assigned(block_lg2: u32) -> u64 {
    HEADER_ASSIGNED | block_lg2 as u64
}

/// lg2 of the block size the superblock holds, whether or not a reassignment is checking it.
#[inline]
pub const fn block_lg2(header: u64) -> Option<u32> {
    if header & HEADER_ASSIGNED != 0 {
        Some((header & HEADER_BLOCK_LG2_MASK) as u32)
    } else {
        None
    }
}

/// Whether a reassignment holds the superblock; nobody else may reassign it meanwhile.
#[inline]
pub const fn is_reclaiming(header: u64) -> bool {
    header & HEADER_RECLAIMING != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unassigned_header_has_no_block_size() {
        assert_eq!(block_lg2(HEADER_UNASSIGNED), None);
        assert!(!is_reclaiming(HEADER_UNASSIGNED));
    }

    #[test]
    fn reclaiming_header_keeps_its_block_size() {
        let header = assigned(12) | HEADER_RECLAIMING;
        assert_eq!(block_lg2(header), Some(12));
        assert!(is_reclaiming(header));
        assert_ne!(
            header,
            assigned(12),
            "a claim must not accept a reclaiming header"
        );
    }

    #[test]
    fn every_block_size_round_trips() {
        for lg2 in 0..64 {
            assert_eq!(block_lg2(assigned(lg2)), Some(lg2));
            assert!(!is_reclaiming(assigned(lg2)));
        }
    }
}
