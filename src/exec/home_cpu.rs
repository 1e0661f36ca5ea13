//! Keeping a pinned pool's rank 0 off its workers' CPUs.
//!
//! Rank 0 of a pool is the thread that created it, and it is left unpinned (see
//! `PoolOptions::cpus`): threads it creates later inherit its affinity, and a program's own
//! threads must not all end up on one core. Its CPU is reserved instead: no worker is pinned to
//! it. But the OS may move an unpinned thread anywhere, and when it lands on a CPU a worker is
//! pinned to, the two share that core for as long as the OS leaves it there, which can be the
//! whole of a run: every worker then waits at each step for the one that gets half a core.
//! Measured on the 16-core GPU machine (a VM), work graph fib(30) on 16 workers, 8 processes
//! each, ns per item: as before 0.288 2.365 0.442 0.327 2.068 0.396 1.889 0.315; with rank 0
//! pinned to its reserved CPU 0.280 0.283 0.407 0.438 0.303 0.297 0.302 0.334; with nothing
//! pinned 0.281 0.329 0.419 0.330 0.306 0.294 0.307 0.324
//! (bench/results/16-core-gpu-machine-session7-probes-and-stealing.md).
//!
//! So before rank 0 starts a dispatch, it asks which CPU it runs on (`sched_getcpu`, a vDSO
//! read), and when that is a worker's CPU, it moves to its reserved one: it narrows its
//! affinity to that CPU, which migrates it there before the call returns, and restores its
//! former affinity at once, which leaves it where it is. Threads it creates later still
//! inherit its own affinity. A thread whose own affinity leaves out its reserved CPU was put
//! where it is by its program and stays there.

/// Moves the calling thread to `home` if it runs on one of `workers` now. For a pool's rank 0,
/// before a dispatch.
#[inline]
pub(crate) fn return_if_on_a_worker(home: Option<usize>, workers: &[Option<usize>]) {
    let Some(home) = home else {
        return;
    };
    // SAFETY: sched_getcpu has no preconditions.
    let now = unsafe { libc::sched_getcpu() };
    match usize::try_from(now) {
        Ok(now) if now != home && workers.contains(&Some(now)) => move_to(home),
        _ => {}
    }
}

/// Moves the calling thread to `cpu` unless it runs there now. For a pool's rank 0 that takes
/// the CPU of a worker left out of a dispatch (`Space::run_on_all_lazily`); the next dispatch
/// that does not moves it back home.
pub(crate) fn go_to(cpu: Option<usize>) {
    let Some(cpu) = cpu else {
        return;
    };
    // SAFETY: sched_getcpu has no preconditions.
    if usize::try_from(unsafe { libc::sched_getcpu() }) != Ok(cpu) {
        move_to(cpu);
    }
}

#[cold]
fn move_to(cpu: usize) {
    if cpu >= libc::CPU_SETSIZE as usize {
        return;
    }
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: cpu_set_t is plain data; the calls get its size; `cpu` is below CPU_SETSIZE.
    unsafe {
        let mut saved: libc::cpu_set_t = std::mem::zeroed();
        // A thread whose own affinity excludes its reserved CPU was placed by its program:
        // leave it where it is.
        if libc::sched_getaffinity(0, size, &mut saved) != 0 || !libc::CPU_ISSET(cpu, &saved) {
            return;
        }
        let mut only: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut only);
        if libc::sched_setaffinity(0, size, &only) == 0 {
            libc::sched_setaffinity(0, size, &saved);
        }
    }
}
