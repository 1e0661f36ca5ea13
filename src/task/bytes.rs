//! Copies and clears of the few bytes a spawn moves (a state blob, a result, a when_all's
//! dependences), without a call to `memcpy`: most are 8 to 64 bytes, where the call costs more
//! than the copy. Sizes up to 64 bytes are done as two (or four) possibly overlapping unaligned
//! copies that stay inside the source and destination.

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
    // Nested tests rather than a `match` on ranges, which compiled to a chain of compares from
    // 0 up: a common size (8 to 32 bytes) takes two.
    if n > 16 {
        if n <= 32 {
            chunk::<u128>(dst, src, 0);
            chunk::<u128>(dst, src, n - 16);
        } else if n <= 64 {
            chunk::<u128>(dst, src, 0);
            chunk::<u128>(dst, src, 16);
            chunk::<u128>(dst, src, n - 32);
            chunk::<u128>(dst, src, n - 16);
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
