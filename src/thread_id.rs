//! A cheap id of the calling thread, for the tables that stand in for thread-locals on hot paths
//! (the pool's lane cache, the task scheduler's worker tables): in a shared library every
//! thread-local access is a call to `__tls_get_addr`, where reading the thread pointer is one
//! load.

/// An id of the calling thread, unique among live threads and never 0: its thread pointer, which
/// the x86-64 TLS ABI keeps at %fs:0 (one load, where `pthread_self` is a call into libc). A
/// thread's control block, and so its id, may be reused once the thread has ended.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
pub(crate) fn current() -> usize {
    let id: usize;
    // SAFETY: reads the thread pointer's self-reference; no side effects.
    unsafe {
        std::arch::asm!(
            "mov {}, qword ptr fs:[0]",
            out(reg) id,
            options(nostack, readonly, preserves_flags, pure)
        );
    }
    id
}

/// An id of the calling thread, unique among live threads and never 0 (its `pthread_t`).
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[inline]
pub(crate) fn current() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// `id` hashed for a table index: thread pointers are far apart and aligned, so their low bits
/// say little; a multiplicative (Fibonacci) hash moves their variety into the high bits, which
/// callers take with a shift.
#[inline(always)]
pub(crate) fn spread(id: usize) -> usize {
    id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}
