//! Copies and clears of the few bytes a spawn moves (a state blob, a result, a when_all's
//! dependences), without a call to `memcpy`: most are 8 to 64 bytes, where the call costs more
//! than the copy. Sizes up to 64 bytes are copied as possibly overlapping unaligned words that
//! stay inside the source and destination.

use std::ptr;

/// Copies `n` bytes from `src` to `dst`.
///
/// # Safety
/// As for `ptr::copy_nonoverlapping`.
#[inline(always)]
pub(crate) unsafe fn copy(dst: *mut u8, src: *const u8, n: usize) {
    #[inline(always)]
    unsafe fn chunk<T: Copy>(dst: *mut u8, src: *const u8, at: usize) {
        dst.add(at)
            .cast::<T>()
            .write_unaligned(src.add(at).cast::<T>().read_unaligned());
    }
    // Words of 8 bytes, not 16: a state is usually written just before its spawn, by the
    // caller's 8-byte stores (or 16-byte ones at 8-byte offsets), and a load that spans two
    // stores still in the store buffer waits until both reach the cache. With 16-byte loads the
    // Fibonacci benchmark's 24-byte state cost one such wait per spawn: F(30) on one worker
    // took 38.6 ns per node against 36.9 with 8-byte words on the developer machine, and 57.5
    // against 54.3 on a fast vCPU of the 16-core machine (docs/PERFORMANCE.md, session 19).
    // Nested tests rather than a `match` on ranges, which compiled to a chain of compares from
    // 0 up: a common size (8 to 32 bytes) takes two.
    if n > 16 {
        if n <= 32 {
            chunk::<u64>(dst, src, 0);
            chunk::<u64>(dst, src, 8);
            chunk::<u64>(dst, src, n - 16);
            chunk::<u64>(dst, src, n - 8);
        } else if n <= 64 {
            let mut at = 0;
            while at < n - 8 {
                chunk::<u64>(dst, src, at);
                at += 8;
            }
            chunk::<u64>(dst, src, n - 8);
        } else {
            ptr::copy_nonoverlapping(src, dst, n);
        }
    } else if n >= 8 {
        chunk::<u64>(dst, src, 0);
        chunk::<u64>(dst, src, n - 8);
    } else if n > 0 {
        ptr::copy_nonoverlapping(src, dst, n);
    }
}

/// Sets `n` bytes at `dst` to zero.
///
/// # Safety
/// As for `ptr::write_bytes`.
#[inline(always)]
pub(crate) unsafe fn zero(dst: *mut u8, n: usize) {
    match n {
        0 => {}
        8 => dst.cast::<u64>().write_unaligned(0),
        16 => dst.cast::<u128>().write_unaligned(0),
        _ => ptr::write_bytes(dst, 0, n),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn every_small_size_copies_exactly_its_bytes() {
        for n in 0..=80 {
            let src: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(7) | 1).collect();
            let mut dst = vec![0u8; n + 2];
            unsafe { super::copy(dst.as_mut_ptr().add(1), src.as_ptr(), n) };
            assert_eq!(&dst[1..=n], &src[..], "size {n}");
            assert_eq!((dst[0], dst[n + 1]), (0, 0), "size {n} wrote outside");
            unsafe { super::zero(dst.as_mut_ptr().add(1), n) };
            assert!(dst.iter().all(|&b| b == 0), "size {n}");
        }
    }
}
