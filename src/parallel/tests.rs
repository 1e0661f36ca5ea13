use super::*;
use crate::exec::{PoolOptions, Space};
use crate::ErrorKind;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

fn spaces() -> Vec<Space> {
    let mut v = vec![Space::serial()];
    for threads in [2, 3, 4] {
        v.push(
            Space::threads(&PoolOptions {
                threads,
                ..PoolOptions::default()
            })
            .unwrap(),
        );
    }
    v
}

fn sum_i64() -> Reducer<'static> {
    Reducer {
        value_size: 8,
        init: &|v| v.copy_from_slice(&0i64.to_ne_bytes()),
        join: &|d, s| {
            let x = i64::from_ne_bytes(d.try_into().unwrap())
                + i64::from_ne_bytes(s.try_into().unwrap());
            d.copy_from_slice(&x.to_ne_bytes());
        },
    }
}

fn add_into(v: &mut [u8], x: i64) {
    let cur = i64::from_ne_bytes((&*v).try_into().unwrap());
    v.copy_from_slice(&(cur + x).to_ne_bytes());
}

#[test]
fn parallel_for_visits_each_index_once_with_and_without_chunks() {
    for space in spaces() {
        for chunk in [0, 1, 7, 1000] {
            for (b, e) in [(0i64, 0i64), (-5, 3), (10, 1013)] {
                let hits: Vec<AtomicUsize> = (b..e).map(|_| AtomicUsize::new(0)).collect();
                let policy = RangePolicy {
                    chunk,
                    ..RangePolicy::new(b, e)
                };
                parallel_for(&space, &policy, &|lo, hi| {
                    for i in lo..hi {
                        hits[(i - b) as usize].fetch_add(1, Ordering::Relaxed);
                    }
                })
                .unwrap();
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            }
        }
    }
}

#[test]
fn a_reversed_range_and_a_bad_mask_are_rejected() {
    let space = Space::serial();
    let e = parallel_for(&space, &RangePolicy::new(5, 4), &|_, _| {}).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("[5, 4)"), "{}", e.message());
    let policy = RangePolicy {
        mask: 0.0,
        ..RangePolicy::new(0, 4)
    };
    assert!(parallel_for(&space, &policy, &|_, _| {}).is_err());
}

#[test]
fn reduce_sums_match_the_formula() {
    let n: i64 = 10_000_000;
    for space in spaces() {
        let mut out = [0u8; 8];
        parallel_reduce(
            &space,
            &RangePolicy::new(0, n),
            &sum_i64(),
            &|b, e, v| {
                add_into(v, (b..e).sum());
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(i64::from_ne_bytes(out), n * (n - 1) / 2);
    }
}

#[test]
fn floating_point_reductions_repeat_exactly() {
    let reducer = Reducer {
        value_size: 8,
        init: &|v| ScalarType::F64.identity(ReduceOp::Sum, v),
        join: &|d, s| ScalarType::F64.join(ReduceOp::Sum, d, s),
    };
    for space in spaces() {
        for chunk in [0, 333] {
            let policy = RangePolicy {
                chunk,
                ..RangePolicy::new(0, 100_000)
            };
            let run = || {
                let mut out = [0u8; 8];
                parallel_reduce(
                    &space,
                    &policy,
                    &reducer,
                    &|b, e, v| {
                        let mut x = f64::from_ne_bytes((&*v).try_into().unwrap());
                        for i in b..e {
                            x += 1.0 / (1.0 + i as f64).sqrt();
                        }
                        v.copy_from_slice(&x.to_ne_bytes());
                    },
                    &mut out,
                )
                .unwrap();
                out
            };
            let first = run();
            for _ in 0..20 {
                assert_eq!(run(), first);
            }
        }
    }
}

#[test]
fn scans_match_a_serial_scan() {
    let values: Vec<i64> = (0..10_007).map(|i| (i * 7919) % 101 - 50).collect();
    let mut inclusive = values.clone();
    for i in 1..inclusive.len() {
        inclusive[i] += inclusive[i - 1];
    }
    for space in spaces() {
        for chunk in [0, 64] {
            let out: Vec<AtomicU64> = values.iter().map(|_| AtomicU64::new(0)).collect();
            let out_excl: Vec<AtomicU64> = values.iter().map(|_| AtomicU64::new(0)).collect();
            let policy = RangePolicy {
                chunk,
                ..RangePolicy::new(0, values.len() as i64)
            };
            let mut total = [0u8; 8];
            parallel_scan(
                &space,
                &policy,
                &sum_i64(),
                &|b, e, update, final_pass| {
                    for i in b..e {
                        if final_pass {
                            let before = i64::from_ne_bytes((&*update).try_into().unwrap());
                            out_excl[i as usize].store(before as u64, Ordering::Relaxed);
                        }
                        add_into(update, values[i as usize]);
                        if final_pass {
                            let after = i64::from_ne_bytes((&*update).try_into().unwrap());
                            out[i as usize].store(after as u64, Ordering::Relaxed);
                        }
                    }
                },
                &mut total,
            )
            .unwrap();
            for (i, expect) in inclusive.iter().enumerate() {
                assert_eq!(
                    out[i].load(Ordering::Relaxed) as i64,
                    *expect,
                    "inclusive at {i}"
                );
                let excl = if i == 0 { 0 } else { inclusive[i - 1] };
                assert_eq!(
                    out_excl[i].load(Ordering::Relaxed) as i64,
                    excl,
                    "exclusive at {i}"
                );
            }
            assert_eq!(i64::from_ne_bytes(total), *inclusive.last().unwrap());
        }
    }
}

#[test]
fn every_league_entry_runs_on_a_whole_team() {
    let space = Space::threads(&PoolOptions {
        threads: 4,
        ..PoolOptions::default()
    })
    .unwrap();
    for team_size in [1, 2, 3, 4] {
        let runs = Mutex::new(vec![0usize; 10]);
        let bad = AtomicUsize::new(0);
        let policy = TeamPolicy {
            league_size: 10,
            team_size,
            scratch_bytes: 8 * team_size,
            mask: 1.0,
        };
        parallel_team(&space, &policy, &|m| {
            assert_eq!(m.size(), team_size);
            assert_eq!(m.league_size(), 10);
            let (scratch, _) = m.scratch();
            unsafe { *(scratch as *mut u64).add(m.rank()) = m.league_rank() as u64 };
            m.barrier();
            for r in 0..m.size() {
                if unsafe { *(scratch as *const u64).add(r) } != m.league_rank() as u64 {
                    bad.fetch_add(1, Ordering::Relaxed);
                }
            }
            m.barrier();
            runs.lock().unwrap()[m.league_rank()] += 1;
        })
        .unwrap();
        assert_eq!(bad.load(Ordering::Relaxed), 0);
        assert!(runs.into_inner().unwrap().iter().all(|&n| n == team_size));
    }
    let policy = TeamPolicy {
        league_size: 1,
        team_size: 5,
        scratch_bytes: 0,
        mask: 1.0,
    };
    let e = parallel_team(&space, &policy, &|_| {}).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn a_team_finishes_a_league_entry_before_any_member_starts_the_next() {
    let space = Space::threads(&PoolOptions {
        threads: 2,
        ..PoolOptions::default()
    })
    .unwrap();
    let policy = TeamPolicy {
        league_size: 50,
        team_size: 2,
        scratch_bytes: 16,
        mask: 1.0,
    };
    let bad = AtomicUsize::new(0);
    // No barrier at the end of the body: the policy must keep rank 0 from writing the next
    // entry's value while rank 1 still reads this one's.
    parallel_team(&space, &policy, &|m| {
        let (scratch, _) = m.scratch();
        let scratch = scratch as *mut u64;
        unsafe { *scratch.add(m.rank()) = m.league_rank() as u64 };
        m.barrier();
        if m.rank() == 1 {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        for r in 0..m.size() {
            if unsafe { std::ptr::read_volatile(scratch.add(r)) } != m.league_rank() as u64 {
                bad.fetch_add(1, Ordering::Relaxed);
            }
        }
    })
    .unwrap();
    assert_eq!(bad.load(Ordering::Relaxed), 0);
}
