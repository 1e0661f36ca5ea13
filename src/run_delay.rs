//! How long the calling thread has waited for a CPU: the time it was ready to run while another
//! thread ran on its CPU. A worker pinned to a CPU that another busy process shares loses whole
//! kernel time slices (3-4 ms on the 16-core GPU machine) in the middle of a wait, and the wait
//! loses them with it (docs/tasks.md, "Other busy processes"); this is how the worker learns
//! that it was the one (`task/laggards.rs`).
//!
//! Linux keeps the sum for every thread (the second field of `/proc/thread-self/schedstat`, in
//! nanoseconds). Involuntary context switches (`getrusage`) are no substitute: pinned workers
//! take them in most waits from short kernel work, and most of them cost microseconds.

use std::time::Duration;

/// Time the calling thread waited for a CPU since its previous call, or `None` at its first
/// call and where the system does not tell. Costs a read of a procfs file (a system
/// call, 0.3 us on the developer machine): for slow paths only.
pub(crate) fn since_last_look() -> Option<Duration> {
    imp::since_last_look()
}

/// The run delay in a schedstat line: "<time run> <time waited> <time slices>", nanoseconds.
fn parse_schedstat(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::RefCell;
    use std::fs::File;
    use std::os::unix::fs::FileExt;
    use std::time::Duration;

    enum Look {
        Unopened,
        Unsupported,
        Open { file: File, last: u64 },
    }

    thread_local! {
        // Per thread: the file names the thread that opened it.
        static LOOK: RefCell<Look> = const { RefCell::new(Look::Unopened) };
    }

    fn read(file: &File) -> Option<u64> {
        let mut buf = [0u8; 96];
        // A seq file reads from its start at offset 0 every time.
        let n = file.read_at(&mut buf, 0).ok()?;
        super::parse_schedstat(&buf[..n])
    }

    pub(super) fn since_last_look() -> Option<Duration> {
        LOOK.with(|look| {
            let mut look = look.borrow_mut();
            match &mut *look {
                Look::Unsupported => None,
                Look::Open { file, last } => {
                    let now = read(file)?;
                    let waited = now.saturating_sub(*last);
                    *last = now;
                    Some(Duration::from_nanos(waited))
                }
                Look::Unopened => {
                    *look = File::open("/proc/thread-self/schedstat")
                        .ok()
                        .and_then(|file| read(&file).map(|last| Look::Open { file, last }))
                        .unwrap_or(Look::Unsupported);
                    None
                }
            }
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn since_last_look() -> Option<std::time::Duration> {
        None
    }
}

/// For tests of what runs do beside another busy thread: three pool threads pinned to the
/// first CPUs, and a thread spinning on one of them.
#[cfg(test)]
pub(crate) mod busy_cpu {
    use crate::exec::{PoolOptions, Space};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A space of three threads pinned to the first CPUs (the last shares the second's where
    /// there are only two: at most half of the threads besides rank 0 sit out, so three let
    /// one do it), and their CPUs. `None` where the test cannot be made here: one CPU, or no
    /// run delay from the system.
    pub(crate) fn three_pinned_threads() -> Option<(Space, Vec<usize>)> {
        let cpus: Vec<usize> = core_affinity::get_core_ids()?
            .iter()
            .map(|c| c.id)
            .collect();
        if cpus.len() < 2 {
            return None;
        }
        super::since_last_look(); // The first look only starts the count.
        super::since_last_look()?;
        let pinned = vec![cpus[0], cpus[1], *cpus.get(2).unwrap_or(&cpus[1])];
        let space = Space::threads(&PoolOptions {
            threads: 3,
            cpus: pinned.clone(),
            ..PoolOptions::default()
        })
        .unwrap();
        Some((space, pinned))
    }

    /// Runs `body` while another thread spins on `cpu`; returns what `body` returns.
    pub(crate) fn beside_a_thread_spinning_on<T>(cpu: usize, body: impl FnOnce() -> T) -> T {
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
            let result = body();
            stop.store(true, Ordering::Relaxed);
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_delay_is_the_second_field() {
        assert_eq!(parse_schedstat(b"440444 1234 7\n"), Some(1234));
        assert_eq!(parse_schedstat(b"440444\n"), None);
        assert_eq!(parse_schedstat(b"1 x 2\n"), None);
    }

    /// Two threads pinned to one CPU, each spinning 60 ms of wall time: the CPU is theirs
    /// only by turns, so together they waited for it at least about 60 ms.
    #[cfg(target_os = "linux")]
    #[test]
    fn threads_sharing_a_cpu_wait_for_it() {
        let Some(cpu) = core_affinity::get_core_ids().and_then(|ids| ids.first().copied()) else {
            return;
        };
        let spin = || {
            core_affinity::set_for_current(cpu);
            since_last_look(); // The first look only starts the count.
            since_last_look()?;
            let t = std::time::Instant::now();
            while t.elapsed() < Duration::from_millis(60) {
                std::hint::spin_loop();
            }
            since_last_look()
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(spin);
            let b = s.spawn(spin);
            (a.join().unwrap(), b.join().unwrap())
        });
        let (Some(a), Some(b)) = (a, b) else {
            return; // No schedstat on this system.
        };
        assert!(
            a + b >= Duration::from_millis(30),
            "two spinning threads on one CPU waited only {a:?} and {b:?} for it"
        );
    }
}
