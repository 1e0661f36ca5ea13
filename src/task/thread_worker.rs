//! The scheduler and worker the calling thread serves during a wait, in a thread-local that is
//! cheap to read from a shared library.
//!
//! A Rust `thread_local!` in a shared library uses the general-dynamic TLS model: every access
//! is a call to `__tls_get_addr`. Every call that takes a task context reads this
//! (`TaskContext::check`), about three times per Fibonacci node. On x86-64 Linux the two words
//! are therefore declared in assembly with the initial-exec model: the loader gives them a
//! fixed offset from the thread pointer when it maps the library, and a read is two loads (the
//! offset from the GOT, then `%fs:offset`). That offset comes from the static TLS block, of
//! which glibc keeps a surplus for libraries loaded with `dlopen`; 16 bytes fit in it.
//! Elsewhere a plain `thread_local!` serves.
//!
//! On the benchmark machine's Xeon the one-worker time follows the instruction count (a
//! stripped single-thread task DAG of 326 instructions per node took half the time of this
//! library's 736, docs/PERFORMANCE.md, session 40); this read replaced a hashed probe of a
//! process-wide table of thread pointers (callgrind, F(22): one worker 736 -> 718 instructions
//! per node; two workers, where `Shared::current_worker` reads it too, 833 -> 793).
//!
//! Only the thread itself reads or writes its words, so plain loads and stores suffice.

use super::scheduler::Shared;
use super::worker::Worker;

/// What the calling thread serves: (scheduler, worker), or nulls outside a wait's loop.
pub(crate) type Serving = (*const Shared, *const Worker);

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod imp {
    use super::Serving;

    // Two words in the thread-local BSS, aligned for plain 8-byte accesses. Global (so that
    // every codegen unit's `asm!` links to it) but hidden (not exported from the library).
    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 4",
        ".globl taskdag_serving",
        ".hidden taskdag_serving",
        ".type taskdag_serving,@object",
        ".size taskdag_serving,16",
        "taskdag_serving:",
        ".zero 16",
        ".popsection",
    );

    #[inline(always)]
    pub(super) fn get() -> Serving {
        let (shared, worker): (usize, usize);
        // SAFETY: reads the calling thread's own two words; no side effects.
        unsafe {
            std::arch::asm!(
                "mov {w}, qword ptr [rip + taskdag_serving@GOTTPOFF]",
                "mov {s}, qword ptr fs:[{w}]",
                "mov {w}, qword ptr fs:[{w} + 8]",
                s = out(reg) shared,
                w = out(reg) worker,
                options(nostack, readonly, preserves_flags)
            );
        }
        (shared as *const _, worker as *const _)
    }

    /// The worker only: one load fewer.
    #[inline(always)]
    pub(super) fn worker() -> *const super::Worker {
        let worker: usize;
        // SAFETY: as in `get`.
        unsafe {
            std::arch::asm!(
                "mov {w}, qword ptr [rip + taskdag_serving@GOTTPOFF]",
                "mov {w}, qword ptr fs:[{w} + 8]",
                w = out(reg) worker,
                options(nostack, readonly, preserves_flags)
            );
        }
        worker as *const _
    }

    pub(super) fn set((shared, worker): Serving) {
        // SAFETY: writes the calling thread's own two words, which nothing borrows.
        unsafe {
            std::arch::asm!(
                "mov {o}, qword ptr [rip + taskdag_serving@GOTTPOFF]",
                "mov qword ptr fs:[{o}], {s}",
                "mov qword ptr fs:[{o} + 8], {w}",
                o = out(reg) _,
                s = in(reg) shared as usize,
                w = in(reg) worker as usize,
                options(nostack, preserves_flags)
            );
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod imp {
    use super::Serving;
    use std::cell::Cell;

    thread_local! {
        static SERVING: Cell<Serving> = const { Cell::new((std::ptr::null(), std::ptr::null())) };
    }

    #[inline]
    pub(super) fn get() -> Serving {
        SERVING.with(Cell::get)
    }

    #[inline]
    pub(super) fn worker() -> *const super::Worker {
        get().1
    }

    pub(super) fn set(serving: Serving) {
        SERVING.with(|s| s.set(serving));
    }
}

/// The calling thread's scheduler and worker (nulls outside a wait's loop).
#[inline(always)]
pub(crate) fn get() -> Serving {
    imp::get()
}

/// The calling thread's worker (null outside a wait's loop).
#[inline(always)]
pub(crate) fn worker() -> *const Worker {
    imp::worker()
}

/// Records what the calling thread serves; returns what it served before (an outer wait's).
pub(crate) fn replace(serving: Serving) -> Serving {
    let previous = imp::get();
    imp::set(serving);
    previous
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn each_thread_has_its_own_words_and_replace_returns_the_previous() {
        let a = (8 as *const Shared, 16 as *const Worker);
        let none = (std::ptr::null(), std::ptr::null());
        assert_eq!(get(), none);
        assert_eq!(replace(a), none);
        assert_eq!(get(), a);
        assert_eq!(worker(), a.1);
        std::thread::spawn(|| {
            let b = (24 as *const Shared, 32 as *const Worker);
            let none = (std::ptr::null(), std::ptr::null());
            assert_eq!(get(), none);
            assert_eq!(replace(b), none);
            assert_eq!(get(), b);
        })
        .join()
        .unwrap();
        assert_eq!(get(), a);
        assert_eq!(replace(none), a);
        assert_eq!(get(), none);
    }
}
