//! The scheduler and worker the calling thread serves during a wait, and the context of the task
//! function it runs now, in a thread-local that is cheap to read from a shared library.
//!
//! A Rust `thread_local!` in a shared library uses the general-dynamic TLS model: every access
//! is a call to `__tls_get_addr`. Every call that takes a task context reads this
//! (`TaskContext::running`), about three times per Fibonacci node. On x86-64 Linux the three words
//! are therefore declared in assembly with the initial-exec model: the loader gives them a
//! fixed offset from the thread pointer when it maps the library, and a read is two loads (the
//! offset from the GOT, then `%fs:offset`). That offset comes from the static TLS block, of
//! which glibc keeps a surplus for libraries loaded with `dlopen`; 24 bytes fit in it.
//! Elsewhere a plain `thread_local!` serves.
//!
//! On the benchmark machine's Xeon the one-worker time follows the instruction count (a
//! stripped single-thread task DAG of 326 instructions per node took half the time of this
//! library's 736, docs/PERFORMANCE.md, session 40); this read replaced a hashed probe of a
//! process-wide table of thread pointers (callgrind, F(22): one worker 736 -> 718 instructions
//! per node; two workers, where `Shared::current_worker` reads it too, 833 -> 793).
//!
//! The running context is a word of its own, not a field of the worker, and is never null: a
//! thread that runs no task function holds `not_running()`, the address of a hidden static of
//! this library that no context ever has. A context check is then one load and one compare
//! with the caller's pointer, which NULL fails too: no load of the worker and no tests of it
//! and of the pointer for null. Callgrind, F(22), instructions per node: one worker
//! 543.4 -> 534.9 (td_task_result 14 -> 10, td_task_spawn 182.5 -> 178.5,
//! td_task_respawn_when_all_private 54 -> 52; `run_ready_tasks`, which sets the word around
//! each run, 139.9 -> 141.4), two workers alike (`run_ahead_for` 127 -> 129). The loops load
//! the words' offset once (`offset`): with a load at each access, 144.4 and 132.
//!
//! Only the thread itself reads or writes its words, so plain loads and stores suffice.
use super::scheduler::Shared;
use super::worker::Worker;

/// What the calling thread serves: (scheduler, worker), or nulls outside a wait's loop.
pub(crate) type Serving = (*const Shared, *const Worker);

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod imp {
    use super::Serving;

    // Three words of thread-local data, aligned for plain 8-byte accesses: the scheduler and
    // the worker (null), then the running context (`not_running()`, which the loader
    // relocates in the initial image). Global (so that every codegen unit's `asm!` links to
    // it) but hidden (not exported from the library).
    std::arch::global_asm!(
        ".pushsection .tdata,\"awT\",@progbits",
        ".p2align 4",
        ".globl taskdag_serving",
        ".hidden taskdag_serving",
        ".type taskdag_serving,@object",
        ".size taskdag_serving,24",
        "taskdag_serving:",
        ".zero 16",
        ".quad {not_running}",
        ".popsection",
        not_running = sym super::NOT_RUNNING,
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

    /// The words' offset from the thread pointer, the same on every thread and for the whole
    /// life of the process (the loader writes it into the GOT, read-only after relocation):
    /// `pure` and `nomem`, so that the compiler loads it once for several accesses, as in a
    /// loop that sets the running context at each task it runs.
    #[inline(always)]
    fn offset() -> usize {
        let offset: usize;
        // SAFETY: reads the GOT entry that the loader filled and never changes.
        unsafe {
            std::arch::asm!(
                "mov {o}, qword ptr [rip + taskdag_serving@GOTTPOFF]",
                o = out(reg) offset,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        offset
    }

    /// The running context. `pure`: a load whose value goes unused (the context that
    /// `worker::replace_running_context` returns, dropped by a caller) is left out, and two
    /// with no store or call between are one (callgrind, F(22), two workers: `run_ahead_for`
    /// 129 -> 128 instructions per node). `set_context` is not `readonly`, so the compiler
    /// orders it with these loads, as it does every call.
    #[inline(always)]
    pub(super) fn context() -> *const () {
        let context: usize;
        // SAFETY: reads the calling thread's own word; no side effects.
        unsafe {
            std::arch::asm!(
                "mov {c}, qword ptr fs:[{o} + 16]",
                o = in(reg) offset(),
                c = out(reg) context,
                options(pure, readonly, nostack, preserves_flags)
            );
        }
        context as *const ()
    }

    #[inline(always)]
    pub(super) fn set_context(context: *const ()) {
        // SAFETY: writes the calling thread's own word, which nothing borrows.
        unsafe {
            std::arch::asm!(
                "mov qword ptr fs:[{o} + 16], {c}",
                o = in(reg) offset(),
                c = in(reg) context as usize,
                options(nostack, preserves_flags)
            );
        }
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
        static CONTEXT: Cell<*const ()> = Cell::new(super::not_running());
    }

    #[inline]
    pub(super) fn get() -> Serving {
        SERVING.with(Cell::get)
    }

    #[inline]
    pub(super) fn context() -> *const () {
        CONTEXT.with(Cell::get)
    }

    #[inline]
    pub(super) fn set_context(context: *const ()) {
        CONTEXT.with(|c| c.set(context));
    }

    pub(super) fn set(serving: Serving) {
        SERVING.with(|s| s.set(serving));
    }
}

/// What the running context word holds while the thread runs no task function: its address,
/// which is no context's (the byte is not one).
static NOT_RUNNING: u8 = 0;

/// The running context of a thread that runs no task function.
#[inline(always)]
pub(crate) fn not_running() -> *const () {
    std::ptr::addr_of!(NOT_RUNNING).cast()
}

/// The calling thread's scheduler and worker (nulls outside a wait's loop).
#[inline(always)]
pub(crate) fn get() -> Serving {
    imp::get()
}

/// The context of the task function the calling thread runs now, the innermost one;
/// `not_running()` when it runs none.
#[inline(always)]
pub(crate) fn context() -> *const () {
    imp::context()
}

/// Makes `context` the calling thread's running context (`context`).
#[inline(always)]
pub(crate) fn set_context(context: *const ()) {
    imp::set_context(context)
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

    #[test]
    fn the_running_context_is_not_running_until_set_on_each_thread() {
        assert!(!not_running().is_null());
        assert_eq!(context(), not_running());
        let c = 40 as *const ();
        set_context(c);
        assert_eq!(context(), c);
        assert_eq!(get(), (std::ptr::null(), std::ptr::null()));
        std::thread::spawn(|| assert_eq!(context(), not_running()))
            .join()
            .unwrap();
        set_context(not_running());
        assert_eq!(context(), not_running());
    }
}
