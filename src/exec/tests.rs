use super::*;
use crate::ErrorKind;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// How long the workers of these tests' pools spin before they park: shorter than the default,
/// so that tests of the park and wake paths need not sleep long, and so that pools with more
/// threads than the machine has cores do not spend their time slices spinning.
const TEST_IDLE_SPIN: std::time::Duration = std::time::Duration::from_micros(100);

/// A pause after which idle workers have parked.
fn past_idle_polling() -> std::time::Duration {
    TEST_IDLE_SPIN + std::time::Duration::from_millis(1)
}

fn pool_spinning(threads: usize, idle_spin: std::time::Duration) -> Space {
    Space::threads(&PoolOptions {
        threads,
        idle_spin: Some(idle_spin),
        ..PoolOptions::default()
    })
    .unwrap()
}

fn pool(threads: usize) -> Space {
    pool_spinning(threads, TEST_IDLE_SPIN)
}

#[test]
fn every_rank_runs_once_per_dispatch() {
    for threads in [1, 2, 5] {
        let space = pool(threads);
        for _ in 0..200 {
            let seen = Mutex::new(Vec::new());
            space
                .run_on_all(&|w: Worker| {
                    assert_eq!(w.size, threads);
                    assert!(is_in_parallel());
                    seen.lock().unwrap().push(w.rank);
                })
                .unwrap();
            let mut seen = seen.into_inner().unwrap();
            seen.sort_unstable();
            assert_eq!(seen, (0..threads).collect::<Vec<_>>());
        }
        assert!(!is_in_parallel());
    }
}

#[test]
fn a_late_joining_dispatch_runs_only_the_members_it_calls_in() {
    let space = pool(4);
    for round in 0..50 {
        let ran = Mutex::new(Vec::new());
        space
            .run_on_all_lazily(
                0,
                Latecomers::RunOnCaller,
                &|w| ran.lock().unwrap().push(w.rank),
                &|recruit| {
                    recruit.only(|rank| rank != 2);
                    recruit.all(); // a second call opens nothing
                },
            )
            .unwrap();
        let mut ran = ran.into_inner().unwrap();
        ran.sort_unstable();
        assert_eq!(ran, [1, 3], "round {round}");
    }
    // The member left out runs the next dispatch as usual.
    let ran = AtomicUsize::new(0);
    space
        .run_on_all(&|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(ran.into_inner(), 4);
}

/// With `Latecomers::Skip` a member's block runs only on that member, and only if it claimed
/// it before the control thread's part returned; the dispatch still waits for every block that
/// runs. The control thread here waits until member 1 has started, and never waits for member
/// 3: so block 1 must run, on its own thread, and have returned, and block 3 may or may not.
#[test]
fn a_late_joining_dispatch_skips_the_members_that_have_not_started() {
    let space = pool(4);
    let caller = std::thread::current().id();
    for round in 0..50 {
        let started = AtomicBool::new(false);
        let ran = Mutex::new(Vec::new());
        space
            .run_on_all_lazily(
                0,
                Latecomers::Skip,
                &|w| {
                    assert_ne!(
                        std::thread::current().id(),
                        caller,
                        "a block ran on the caller"
                    );
                    if w.rank == 1 {
                        started.store(true, Ordering::Release);
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    ran.lock().unwrap().push(w.rank);
                },
                &|recruit| {
                    recruit.only(|rank| rank != 2);
                    while !started.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                },
            )
            .unwrap();
        let mut ran = ran.into_inner().unwrap();
        ran.sort_unstable();
        assert!(ran == [1] || ran == [1, 3], "round {round}: {ran:?}");
    }
}

#[test]
fn workers_that_park_at_once_still_run_every_dispatch() {
    // idle_spin 0: every worker parks as soon as it finds nothing, so each dispatch below goes
    // through the wake path.
    let space = pool_spinning(4, std::time::Duration::ZERO);
    for round in 0..200 {
        let ranks = Mutex::new(HashSet::new());
        space
            .run_on_all(&|w| {
                ranks.lock().unwrap().insert(w.rank);
            })
            .unwrap();
        assert_eq!(ranks.into_inner().unwrap().len(), 4, "round {round}");
        let blocks = AtomicUsize::new(0);
        space
            .run_blocks(&|_| {
                blocks.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        assert_eq!(blocks.into_inner(), 4, "round {round}");
    }
}

#[test]
fn workers_wake_after_parking() {
    let space = pool(3);
    let count = AtomicUsize::new(0);
    for _ in 0..3 {
        // Longer than the workers poll, so they park between dispatches.
        std::thread::sleep(past_idle_polling());
        space
            .run_on_all(&|_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
    }
    assert_eq!(count.load(Ordering::Relaxed), 9);
}

#[test]
fn a_parked_control_thread_is_woken_by_the_last_worker() {
    let space = pool(3);
    let count = AtomicUsize::new(0);
    // Workers that take from well below to well above the control's spin budget, so the last
    // one finishes both before and after the control parks (and publishes its handle).
    for micros in [0u64, 20, 40, 60, 100, 1000, 5000] {
        space
            .run_on_all(&|w| {
                if w.rank != 0 {
                    std::thread::sleep(std::time::Duration::from_micros(micros * w.rank as u64));
                }
                count.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
    }
    assert_eq!(count.load(Ordering::Relaxed), 21);
}

/// Many dispatches with uneven, randomly delayed ranks (more threads than this machine may
/// have cores, so threads are also preempted), interleaved with partitions whose control
/// threads dispatch too: every rank runs exactly once per dispatch, and no wake-up is lost
/// (a lost one hangs the test).
#[test]
fn dispatch_stress_with_parking_preemption_and_partitions() {
    let space = pool(5);
    let runs: Vec<AtomicUsize> = (0..5).map(|_| AtomicUsize::new(0)).collect();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let rounds = 2000;
    for round in 0..rounds {
        let r = next();
        // Mostly back to back; sometimes a rank works past the control's spin budget, and
        // sometimes the pool idles past the workers' polling.
        let slow_rank = (r % 5) as usize;
        let delay = match r % 97 {
            0 => std::time::Duration::from_micros(300),
            1..=3 => std::time::Duration::from_micros(60),
            _ => std::time::Duration::ZERO,
        };
        if r % 211 == 0 {
            std::thread::sleep(past_idle_polling());
        }
        space
            .run_on_all(&|w| {
                if w.rank == slow_rank && !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                runs[w.rank].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        if round % 100 == 0 {
            let req = |threads| InstanceRequest {
                threads,
                numa_count: 0,
                cores_per_numa: 0,
            };
            let inner = AtomicUsize::new(0);
            space
                .run_instances(&[req(2), req(3)], &|_, sub| {
                    for _ in 0..20 {
                        sub.run_on_all(&|_| {
                            inner.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                    }
                })
                .unwrap();
            assert_eq!(inner.load(Ordering::Relaxed), 20 * 5);
        }
    }
    for (rank, n) in runs.iter().enumerate() {
        assert_eq!(n.load(Ordering::Relaxed), rounds, "rank {rank}");
    }
}

#[test]
fn dispatch_from_another_thread_is_rejected() {
    let space = pool(2);
    let s = space.clone();
    let e = std::thread::spawn(move || s.run_on_all(&|_| {}).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::WrongThread);
    space.run_on_all(&|_| {}).unwrap();
}

#[test]
fn nested_dispatch_is_rejected() {
    let space = pool(2);
    let inner = Mutex::new(None);
    space
        .run_on_all(&|w| {
            if w.rank == 0 {
                *inner.lock().unwrap() = Some(space.run_on_all(&|_| {}).unwrap_err().kind());
            }
        })
        .unwrap();
    assert_eq!(inner.into_inner().unwrap(), Some(ErrorKind::Busy));
    space.run_on_all(&|_| {}).unwrap();
}

#[test]
fn a_panic_in_a_worker_reaches_the_control_thread_and_the_pool_survives() {
    let space = pool(3);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        space
            .run_on_all(&|w| {
                if w.rank == 2 {
                    panic!("worker 2 fails");
                }
            })
            .unwrap()
    }));
    assert!(r.is_err());
    let count = AtomicUsize::new(0);
    space
        .run_on_all(&|_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 3);
}

#[test]
fn masks_take_the_ceiling_of_the_fraction() {
    let space = pool(5);
    assert_eq!(space.masked(0.5).unwrap().concurrency(), 3);
    assert_eq!(space.masked(0.01).unwrap().concurrency(), 1);
    assert_eq!(space.masked(1.0).unwrap().concurrency(), 5);
    for bad in [0.0, -1.0, 1.5, f64::NAN] {
        assert_eq!(
            space.masked(bad).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
    let count = AtomicUsize::new(0);
    space
        .masked(0.4)
        .unwrap()
        .run_on_all(&|_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 2);
}

#[test]
fn a_mask_applies_to_the_threads_the_space_dispatches_on() {
    let space = pool(5);
    let half = space.masked(0.5).unwrap();
    // A full mask keeps a masked space as it is (a policy's default mask comes here).
    assert_eq!(half.masked(1.0).unwrap().concurrency(), 3);
    assert_eq!(half.masked(0.5).unwrap().concurrency(), 2);
    let ranks = Mutex::new(Vec::new());
    half.masked(1.0)
        .unwrap()
        .run_on_all(&|w| ranks.lock().unwrap().push(w.rank))
        .unwrap();
    let mut ranks = ranks.into_inner().unwrap();
    ranks.sort_unstable();
    assert_eq!(ranks, vec![0, 1, 2]);
    // A masked space partitions only its own threads.
    let req = |threads| InstanceRequest {
        threads,
        numa_count: 0,
        cores_per_numa: 0,
    };
    let e = half
        .run_instances(&[req(2), req(2)], &|_, _| {})
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("has 3"), "{}", e.message());
    half.run_instances(&[req(1), req(2)], &|_, _| {}).unwrap();
}

#[test]
fn instances_are_disjoint_and_each_dispatches_on_its_own() {
    let space = pool(6);
    let requests = [
        InstanceRequest {
            threads: 2,
            numa_count: 0,
            cores_per_numa: 0,
        },
        InstanceRequest {
            threads: 3,
            numa_count: 0,
            cores_per_numa: 0,
        },
    ];
    let ranks: Mutex<Vec<(usize, Vec<usize>)>> = Mutex::new(Vec::new());
    space
        .run_instances(&requests, &|index, sub| {
            assert!(sub.is_control_thread());
            let seen = Mutex::new(Vec::new());
            for _ in 0..50 {
                sub.run_on_all(&|_| seen.lock().unwrap().push(pool_rank().unwrap()))
                    .unwrap();
            }
            let mut seen: Vec<usize> = seen.into_inner().unwrap();
            seen.sort_unstable();
            seen.dedup();
            ranks.lock().unwrap().push((index, seen));
        })
        .unwrap();
    let ranks = ranks.into_inner().unwrap();
    assert_eq!(ranks.len(), 2);
    let kept = Mutex::new(None);
    space
        .run_instances(&requests[..1], &|_, sub| {
            *kept.lock().unwrap() = Some(sub.clone());
        })
        .unwrap();
    let kept = kept.into_inner().unwrap().unwrap();
    assert_eq!(
        kept.run_on_all(&|_| {}).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let mut all = HashSet::new();
    for (index, seen) in &ranks {
        assert_eq!(seen.len(), requests[*index].threads);
        for r in seen {
            assert!(all.insert(*r), "pool rank {r} in two instances");
        }
    }
    let e = space
        .run_instances(
            &[InstanceRequest {
                threads: 7,
                numa_count: 0,
                cores_per_numa: 0,
            }],
            &|_, _| panic!("must not run"),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn team_collectives_agree_across_members() {
    let space = pool(4);
    let team = Team::new(4, 64).unwrap();
    let add = |d: &mut [u8], s: &[u8]| {
        let a = i64::from_ne_bytes(d.try_into().unwrap());
        let b = i64::from_ne_bytes(s.try_into().unwrap());
        d.copy_from_slice(&(a + b).to_ne_bytes());
    };
    let failures = AtomicUsize::new(0);
    space
        .run_on_all(&|w| {
            let m = team.member(w.rank, 0, 1);
            let (scratch, bytes) = m.scratch();
            assert!(bytes >= 64);
            for iter in 0..1000i64 {
                // Shared-memory check: each member writes its slot, the barrier publishes it.
                unsafe { *(scratch as *mut i64).add(m.rank()) = iter * 10 + m.rank() as i64 };
                m.barrier();
                for r in 0..4 {
                    let v = unsafe { *(scratch as *const i64).add(r) };
                    if v != iter * 10 + r as i64 {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
                m.barrier();
                let mut v = (m.rank() as i64 + iter).to_ne_bytes();
                m.reduce(&mut v, &add).unwrap();
                if i64::from_ne_bytes(v) != 6 + 4 * iter {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
                let mut s = (m.rank() as i64 + 1).to_ne_bytes();
                let mut total = [0u8; 8];
                m.scan(&mut s, &0i64.to_ne_bytes(), &add, false, Some(&mut total))
                    .unwrap();
                let r = m.rank() as i64;
                if i64::from_ne_bytes(s) != r * (r + 1) / 2 || i64::from_ne_bytes(total) != 10 {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
                let mut b = if m.rank() == 3 {
                    iter.to_ne_bytes()
                } else {
                    [0; 8]
                };
                m.broadcast(&mut b, 3).unwrap();
                if i64::from_ne_bytes(b) != iter {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
        .unwrap();
    assert_eq!(failures.load(Ordering::Relaxed), 0);
}

#[test]
fn team_ranges_cover_the_range_once() {
    let team = Team::new(3, 0).unwrap();
    let mut covered = Vec::new();
    for r in 0..3 {
        covered.extend(team.member(r, 0, 1).team_range(-5, 12));
    }
    assert_eq!(covered, (-5..12).collect::<Vec<_>>());
    assert!(team.member(1, 0, 1).team_range(4, 2).is_empty());
}

#[test]
fn many_dispatches_on_many_threads_lose_no_worker() {
    // More threads than this machine has cores, so workers are preempted mid-handshake.
    let space = pool(8);
    let count = AtomicUsize::new(0);
    for i in 0..3000 {
        if i % 500 == 0 {
            // Let the workers park, so wake-ups are exercised as well as polling.
            std::thread::sleep(past_idle_polling());
        }
        space
            .run_on_all(&|_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
    }
    assert_eq!(count.load(Ordering::Relaxed), 8 * 3000);
}

/// Runs a block dispatch whose block 0 returns only once every other block has run, so no
/// block can be left to the caller: each must be claimed by its own member, which must therefore
/// be awake and serve the right slot. Returns the pool rank that ran each block. A lost wake-up
/// or a wrong route fails the deadline instead of hanging.
fn blocks_run_by_members(space: &Space) -> Vec<usize> {
    let size = space.concurrency();
    let ran: Vec<AtomicUsize> = (0..size).map(|_| AtomicUsize::new(usize::MAX)).collect();
    let done = AtomicUsize::new(0);
    space
        .run_blocks(&|w| {
            assert_eq!(w.size, size);
            assert!(is_in_parallel());
            ran[w.rank].store(pool_rank().unwrap(), Ordering::Relaxed);
            if w.rank == 0 {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while done.load(Ordering::Acquire) != size - 1 {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "a member never claimed its block"
                    );
                    std::thread::yield_now();
                }
            } else {
                done.fetch_add(1, Ordering::Release);
            }
        })
        .unwrap();
    ran.iter().map(|r| r.load(Ordering::Relaxed)).collect()
}

#[test]
fn idle_members_claim_their_own_blocks_also_after_parking_and_partitions() {
    let space = pool(4);
    assert_eq!(blocks_run_by_members(&space), vec![0, 1, 2, 3]);
    // Longer than the members poll: they park and must be woken by the dispatch.
    std::thread::sleep(past_idle_polling());
    assert_eq!(blocks_run_by_members(&space), vec![0, 1, 2, 3]);
    let req = |threads| InstanceRequest {
        threads,
        numa_count: 0,
        cores_per_numa: 0,
    };
    let parts = Mutex::new(Vec::new());
    space
        .run_instances(&[req(2), req(2)], &|i, sub| {
            // The members of each part serve the part's slot, with the part's ranks.
            let first = blocks_run_by_members(sub);
            std::thread::sleep(past_idle_polling());
            assert_eq!(blocks_run_by_members(sub), first);
            parts.lock().unwrap().push((i, first));
        })
        .unwrap();
    let mut parts = parts.into_inner().unwrap();
    parts.sort_unstable();
    assert_eq!(parts, vec![(0, vec![0, 1]), (1, vec![2, 3])]);
    // Back in the root instance after the partition.
    assert_eq!(blocks_run_by_members(&space), vec![0, 1, 2, 3]);
    assert_eq!(
        blocks_run_by_members(&space.masked(0.5).unwrap()),
        vec![0, 1]
    );
}

/// Many block dispatches with random masks, uneven blocks, idle periods past the workers' polling and
/// partitions in between, on more threads than this machine may have cores (so members are
/// preempted mid-claim): every block runs exactly once per dispatch, on a thread of the
/// instance, and never on a thread outside the mask.
#[test]
fn block_dispatch_stress_with_masks_parking_and_partitions() {
    let threads = 6;
    let space = pool(threads);
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..3000 {
        let r = next();
        let fraction = [1.0, 1.0, 0.5, 0.34, 0.9][(r % 5) as usize];
        let masked = space.masked(fraction).unwrap();
        let size = masked.concurrency();
        let allowed = masked.pool_ranks();
        let delay = match r % 89 {
            0 => std::time::Duration::from_micros(200),
            1..=4 => std::time::Duration::from_micros(30),
            _ => std::time::Duration::ZERO,
        };
        if r % 197 == 0 {
            std::thread::sleep(past_idle_polling());
        }
        let runs: Vec<AtomicUsize> = (0..size).map(|_| AtomicUsize::new(0)).collect();
        let outside = AtomicUsize::new(0);
        masked
            .run_blocks(&|w| {
                if w.rank == (r as usize / 5) % size && !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                if !allowed.contains(&pool_rank().unwrap()) {
                    outside.fetch_add(1, Ordering::Relaxed);
                }
                runs[w.rank].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        assert!(
            runs.iter().all(|n| n.load(Ordering::Relaxed) == 1),
            "round {round}"
        );
        assert_eq!(outside.load(Ordering::Relaxed), 0, "round {round}");
        if round % 150 == 0 {
            let req = |threads| InstanceRequest {
                threads,
                numa_count: 0,
                cores_per_numa: 0,
            };
            let total = AtomicUsize::new(0);
            space
                .run_instances(&[req(2), req(4)], &|_, sub| {
                    let members = sub.pool_ranks();
                    for _ in 0..30 {
                        sub.run_blocks(&|_| {
                            assert!(members.contains(&pool_rank().unwrap()));
                            total.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                    }
                })
                .unwrap();
            assert_eq!(total.load(Ordering::Relaxed), 30 * threads);
        }
    }
}

#[test]
fn block_dispatch_errors_and_panics_match_whole_instance_dispatch() {
    let space = pool(3);
    let s = space.clone();
    let e = std::thread::spawn(move || s.run_blocks(&|_| {}).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::WrongThread);
    let inner = Mutex::new(None);
    space
        .run_blocks(&|w| {
            if w.rank == 0 {
                *inner.lock().unwrap() = Some(space.run_blocks(&|_| {}).unwrap_err().kind());
            }
        })
        .unwrap();
    assert_eq!(inner.into_inner().unwrap(), Some(ErrorKind::Busy));
    for failing in 0..3 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            space
                .run_blocks(&|w| {
                    if w.rank == failing {
                        panic!("block {failing} fails");
                    }
                })
                .unwrap()
        }));
        assert!(r.is_err());
        assert_eq!(blocks_run_by_members(&space), vec![0, 1, 2]);
    }
}

/// Restricts the calling thread to `cpus` (which moves it onto one of them at once).
fn set_affinity(cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain data; the CPU ids come from the OS and are below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
}

/// The CPU rank 0 runs on inside a dispatch of `space`.
fn cpu_of_rank_0(space: &Space) -> usize {
    let seen = AtomicUsize::new(usize::MAX);
    space
        .run_on_all(&|w: Worker| {
            if w.rank == 0 {
                // SAFETY: sched_getcpu has no preconditions.
                let cpu = unsafe { libc::sched_getcpu() };
                seen.store(usize::try_from(cpu).unwrap(), Ordering::Relaxed);
            }
        })
        .unwrap();
    seen.load(Ordering::Relaxed)
}

/// Rank 0 of a pinned pool is left unpinned; when the OS has put it on a worker's CPU, a
/// dispatch first moves it back to its reserved CPU (home_cpu.rs), and its affinity is what it
/// was.
#[test]
fn an_unpinned_rank_0_found_on_a_workers_cpu_returns_to_its_own() {
    let cpus = crate::topology::available_cpus();
    if cpus.len() < 2 {
        return;
    }
    let space = Space::threads(&PoolOptions {
        threads: cpus.len(),
        cpus: cpus.to_vec(),
        idle_spin: Some(TEST_IDLE_SPIN),
        ..PoolOptions::default()
    })
    .unwrap();
    let (home, worker) = (cpus[0], cpus[1]);
    let mut returned = 0;
    for _ in 0..5 {
        // Onto the worker's CPU, then the former affinity back: the thread stays where it is
        // until the OS moves it.
        set_affinity(&[worker]);
        set_affinity(cpus);
        returned += usize::from(cpu_of_rank_0(&space) == home);
    }
    assert!(
        returned > 0,
        "rank 0 stayed on worker CPU {worker} in 5 dispatches"
    );
    // SAFETY: as above.
    let allowed = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        cpus.iter().filter(|&&c| libc::CPU_ISSET(c, &set)).count()
    };
    assert_eq!(allowed, cpus.len(), "rank 0's affinity was not restored");

    // A thread its program confined to the worker's CPU stays there, with its affinity.
    set_affinity(&[worker]);
    let seen = cpu_of_rank_0(&space);
    set_affinity(cpus);
    assert_eq!(seen, worker);
}

/// A lazy dispatch may run its control thread, the pool's rank 0, on the CPU of a member it
/// leaves out (`Space::run_on_all_lazily`'s `home`); the next ordinary dispatch takes it home.
#[test]
fn a_lazy_dispatch_runs_rank_0_on_the_cpu_of_the_member_it_leaves_out() {
    let cpus = crate::topology::available_cpus();
    if cpus.len() < 2 {
        return;
    }
    let space = Space::threads(&PoolOptions {
        threads: 2,
        cpus: cpus[..2].to_vec(),
        idle_spin: Some(TEST_IDLE_SPIN),
        ..PoolOptions::default()
    })
    .unwrap();
    for _ in 0..5 {
        let seen = AtomicUsize::new(usize::MAX);
        space
            .run_on_all_lazily(
                1,
                Latecomers::Skip,
                &|_| panic!("the member left out ran"),
                &|recruit| {
                    recruit.only(|rank| rank != 1);
                    // SAFETY: sched_getcpu has no preconditions.
                    let cpu = unsafe { libc::sched_getcpu() };
                    seen.store(usize::try_from(cpu).unwrap(), Ordering::Relaxed);
                },
            )
            .unwrap();
        assert_eq!(
            seen.into_inner(),
            cpus[1],
            "rank 0 did not run on member 1's CPU"
        );
        assert_eq!(cpu_of_rank_0(&space), cpus[0], "rank 0 did not return home");
    }
}
