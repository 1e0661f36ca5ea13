//! Execution spaces and their instances (003): `Serial`, or a disjoint part of a thread pool
//! with exactly one control thread, which alone may dispatch to it.

use super::current;
use super::idle;
use super::instance_request::{partition, InstanceRequest};
use super::recruit::Recruit;
use super::slot::{Latecomers, Slot};
use super::thread_pool::{PoolOptions, ThreadPool};
use crate::error::{Error, ErrorKind, Result};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;

/// The kind of an execution space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceKind {
    /// Everything runs on the calling thread.
    Serial,
    /// A partition of a pinned thread pool.
    Threads,
}

/// What a dispatched closure learns about where it runs.
#[derive(Debug, Clone, Copy)]
pub struct Worker {
    /// Rank within the instance (0 is the control thread).
    pub rank: usize,
    /// Threads taking part in this dispatch.
    pub size: usize,
}

/// A handle to an execution space instance; clones refer to the same instance.
#[derive(Clone)]
pub struct Space {
    inner: Arc<Inner>,
}

struct Inner {
    kind: SpaceKind,
    threads: Option<ThreadsInstance>,
}

struct ThreadsInstance {
    pool: Arc<ThreadPool>,
    /// Pool ranks of the members; `members[0]` is the control thread's.
    members: Arc<[usize]>,
    /// Members a dispatch uses (a mask, 003): the first `active` of `members`.
    active: usize,
    control: ThreadId,
    /// Set while a dispatch or a partition runs; shared by masked views of one instance.
    busy: Arc<AtomicBool>,
    /// Set when the partition that made this sub-instance has ended: its threads are back in
    /// the parent, so a handle kept past the control function must not dispatch to them.
    retired: Arc<AtomicBool>,
    /// The job slot of block dispatches, served by the members while they are idle; shared by
    /// masked views of one instance.
    slot: Arc<Slot>,
}

impl Space {
    /// The serial space: dispatch runs on the calling thread, from any thread.
    pub fn serial() -> Space {
        Space {
            inner: Arc::new(Inner {
                kind: SpaceKind::Serial,
                threads: None,
            }),
        }
    }

    /// A new thread pool whose control thread is the caller. Unpinned unless `opts.cpus` says
    /// where each rank goes. The pool's threads stop when the last handle is dropped.
    pub fn threads(opts: &PoolOptions) -> Result<Space> {
        let pool = Arc::new(ThreadPool::new(opts)?);
        let members: Arc<[usize]> = (0..pool.size()).collect();
        let slot = Arc::clone(&pool.shared().root_slot);
        Ok(Space::instance(
            pool,
            members,
            std::thread::current().id(),
            slot,
        ))
    }

    fn instance(
        pool: Arc<ThreadPool>,
        members: Arc<[usize]>,
        control: ThreadId,
        slot: Arc<Slot>,
    ) -> Space {
        let active = members.len();
        Space {
            inner: Arc::new(Inner {
                kind: SpaceKind::Threads,
                threads: Some(ThreadsInstance {
                    pool,
                    members,
                    active,
                    control,
                    busy: Arc::new(AtomicBool::new(false)),
                    retired: Arc::new(AtomicBool::new(false)),
                    slot,
                }),
            }),
        }
    }

    pub fn kind(&self) -> SpaceKind {
        self.inner.kind
    }

    /// Threads a dispatch on this space runs on.
    pub fn concurrency(&self) -> usize {
        self.inner.threads.as_ref().map_or(1, |t| t.active)
    }

    /// Whether every thread a dispatch uses has a CPU of its own: the workers pinned to theirs,
    /// the control thread with its reserved one (docs/dispatch.md, "Pinning"). False for the
    /// Serial space and for pools with more threads than CPUs.
    pub fn is_pinned(&self) -> bool {
        self.inner.threads.as_ref().is_some_and(|t| {
            let cpus = &t.pool.shared().cpus;
            t.members[..t.active].iter().all(|&r| cpus[r].is_some())
        })
    }

    /// Pool ranks of the threads a dispatch uses, in instance-rank order.
    pub fn pool_ranks(&self) -> Vec<usize> {
        self.inner
            .threads
            .as_ref()
            .map_or_else(|| vec![0], |t| t.members[..t.active].to_vec())
    }

    /// Hardware thread each dispatch rank is pinned to (`None` where unpinned).
    pub fn hardware_threads(&self) -> Vec<Option<usize>> {
        match &self.inner.threads {
            None => vec![None],
            Some(t) => t.members[..t.active]
                .iter()
                .map(|&r| t.pool.shared().cpus[r])
                .collect(),
        }
    }

    /// True while a dispatch or partition runs on this instance.
    pub fn is_busy(&self) -> bool {
        self.inner
            .threads
            .as_ref()
            .is_some_and(|t| t.busy.load(Ordering::Acquire))
    }

    /// How long an idle worker of this space may spin before it gives its core away: the pool's
    /// idle spin (`td_init_args.idle_spin_us`), zero when the pool has more threads than the
    /// process has CPUs (a spinning worker would then hold a CPU another thread of the pool
    /// needs) and for the Serial space.
    pub fn idle_spin(&self) -> std::time::Duration {
        match &self.inner.threads {
            Some(t) if !super::idle::oversubscribed(t.pool.size()) => t.pool.idle_spin(),
            _ => std::time::Duration::ZERO,
        }
    }

    /// One line for the configuration report: threads and where they are pinned.
    pub fn describe(&self) -> String {
        match &self.inner.threads {
            None => "serial".to_string(),
            Some(t) => {
                let cpus = self.hardware_threads();
                let placement = if cpus.iter().all(Option::is_some) {
                    let list: Vec<String> = cpus.iter().flatten().map(|c| c.to_string()).collect();
                    format!("pinned to CPUs [{}]", list.join(", "))
                } else {
                    "not pinned".to_string()
                };
                format!(
                    "{} thread(s), {placement}, idle workers spin {} us before they sleep",
                    t.active,
                    t.pool.idle_spin().as_micros()
                )
            }
        }
    }

    /// True when the calling thread may dispatch to this space.
    pub fn is_control_thread(&self) -> bool {
        self.inner
            .threads
            .as_ref()
            .map_or(true, |t| t.control == current::thread_id())
    }

    /// The same instance restricted to the first ⌈fraction × threads⌉ of the threads this
    /// space dispatches on (003 masks). The fraction applies to `concurrency()`, so masking a
    /// masked space narrows it further and a fraction of 1 keeps it as it is.
    pub fn masked(&self, fraction: f64) -> Result<Space> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(Error::invalid_argument(format!(
                "mask fraction {fraction} is outside (0, 1]; pass 1.0 for all threads"
            )));
        }
        let Some(t) = &self.inner.threads else {
            return Ok(self.clone());
        };
        if fraction == 1.0 {
            // Every dispatch with the default policy comes here; sharing the handle costs one
            // reference count instead of a new instance.
            return Ok(self.clone());
        }
        let active = ((t.active as f64 * fraction).ceil() as usize).clamp(1, t.active);
        Ok(Space {
            inner: Arc::new(Inner {
                kind: SpaceKind::Threads,
                threads: Some(ThreadsInstance {
                    pool: Arc::clone(&t.pool),
                    members: Arc::clone(&t.members),
                    active,
                    control: t.control,
                    busy: Arc::clone(&t.busy),
                    retired: Arc::clone(&t.retired),
                    slot: Arc::clone(&t.slot),
                }),
            }),
        })
    }

    /// Runs `work` once on each of this space's threads and returns when all have returned.
    /// The control thread runs rank 0. Fails with `WrongThread` from any other thread and with
    /// `Busy` when called from inside a dispatch or partition of the same instance.
    pub fn run_on_all(&self, work: &(dyn Fn(Worker) + Sync)) -> Result<()> {
        let Some(t) = &self.inner.threads else {
            current::in_parallel(|| work(Worker { rank: 0, size: 1 }));
            return Ok(());
        };
        let _busy = t.enter("dispatch")?;
        let size = t.active;
        let per_rank = |rank: usize| current::in_parallel(|| work(Worker { rank, size }));
        t.pool.dispatch(&t.members[..size], &per_rank);
        Ok(())
    }

    /// Like `run_blocks`, but only the control thread starts, running `lead` as rank 0; the
    /// other threads' blocks open once `lead` calls `Recruit::all` (or those `Recruit::only`
    /// names), and a thread runs `work` for its own block if it claims it (slot.rs). When `lead`
    /// returns, a block no thread has claimed yet runs on the control thread or not at all
    /// (`latecomers`), and this returns when every block that runs has returned. For work that
    /// needs the other threads only sometimes, so that it does not pay for starting and joining
    /// them when it does not (the task DAG's wait, whose latecomers are skipped). Errors as
    /// `run_on_all`.
    ///
    /// `home` is the rank whose CPU the control thread runs on: 0 for its own (where a
    /// dispatch moves it back when the OS put it on a worker's CPU, `home_cpu.rs`), or a rank
    /// the caller leaves out (`Recruit::only`) whose CPU it takes for this run, when the
    /// control thread is the pool's creating thread and that rank is pinned.
    pub fn run_on_all_lazily(
        &self,
        home: usize,
        latecomers: Latecomers,
        work: &(dyn Fn(Worker) + Sync),
        lead: &dyn Fn(&Recruit<'_>),
    ) -> Result<()> {
        let Some(t) = &self.inner.threads else {
            current::in_parallel(|| lead(&Recruit::none()));
            return Ok(());
        };
        let _busy = t.enter("dispatch")?;
        let size = t.active;
        let per_rank = |rank: usize| current::in_parallel(|| work(Worker { rank, size }));
        let lead = |recruit: &Recruit<'_>| current::in_parallel(|| lead(recruit));
        // SAFETY: as in `run_blocks`.
        unsafe {
            t.pool.dispatch_lazily(
                &t.slot,
                &t.members,
                size,
                home.min(size - 1),
                latecomers,
                &per_rank,
                &lead,
            )
        };
        Ok(())
    }

    /// Runs `work` once for each block rank `0..concurrency()` and returns when all have
    /// returned. Unlike `run_on_all`, a block is not tied to a thread: the control thread runs
    /// block 0 and then every block no other thread has claimed yet, and member r runs block r
    /// only if it claims it first (caller-first dispatch, slot.rs). So `Worker::rank` is the
    /// block, blocks may run one after another on one thread, and a block must never wait for
    /// another block (no barriers: use `run_on_all` for those). Errors as `run_on_all`.
    pub fn run_blocks(&self, work: &(dyn Fn(Worker) + Sync)) -> Result<()> {
        let Some(t) = &self.inner.threads else {
            current::in_parallel(|| work(Worker { rank: 0, size: 1 }));
            return Ok(());
        };
        let _busy = t.enter("dispatch")?;
        let size = t.active;
        let per_block = |rank: usize| current::in_parallel(|| work(Worker { rank, size }));
        // SAFETY: `enter` checked that this is the control thread and that no other dispatch or
        // partition runs on the instance (masked views share the busy flag and the slot).
        unsafe {
            t.pool
                .dispatch_blocks(&t.slot, &t.members, size, &per_block)
        };
        Ok(())
    }

    /// Tests: while `on`, no thread but the control thread runs a block of this instance's
    /// block dispatches, as if the others had not started (`Slot::hold_members_off`).
    #[cfg(test)]
    pub(crate) fn hold_members_off(&self, on: bool) {
        if let Some(t) = &self.inner.threads {
            t.slot.hold_members_off(on);
        }
    }

    /// Partitions this instance into disjoint sub-instances, one per request, and runs each
    /// request's control function on its sub-instance's control thread (003 `run_instances`).
    /// Blocks until every control function returns. Requests that cannot all be satisfied are
    /// rejected before anything runs. The first sub-instance is controlled by the caller.
    pub fn run_instances(
        &self,
        requests: &[InstanceRequest],
        control: &(dyn Fn(usize, &Space) + Sync),
    ) -> Result<()> {
        let Some(t) = &self.inner.threads else {
            return Err(Error::new(
                ErrorKind::Unavailable,
                "the Serial space has one thread and cannot be partitioned into instances; \
                 partition a Threads space",
            ));
        };
        let _busy = t.enter("run_instances")?;
        let pool = &t.pool;
        // A masked space partitions the threads it dispatches on, as its concurrency says.
        let members = &t.members[..t.active];
        let parts = partition(requests, members, &pool.shared().numa)?;
        // Slot 0 of the dispatch is the caller; it controls the part it leads, if any (parts
        // keep the members' order, so the caller leads any part it belongs to). Every other
        // part is controlled by its first member.
        let caller = members[0];
        let caller_part = parts.iter().position(|p| p[0] == caller);
        let mut slots: Vec<(usize, Option<usize>)> = vec![(caller, caller_part)];
        slots.extend(
            (0..parts.len())
                .filter(|&i| Some(i) != caller_part)
                .map(|i| (parts[i][0], Some(i))),
        );
        let ranks: Vec<usize> = slots.iter().map(|s| s.0).collect();
        let part_slots: Vec<Arc<Slot>> =
            parts.iter().map(|p| Arc::new(Slot::new(p.len()))).collect();
        // Idle members serve their instance's slot (idle.rs): move each member of a part to the
        // part's slot before the control functions run, and everyone back afterwards, also when
        // a control function panicked.
        let to_parts = |i: usize| {
            let rank = members[i];
            for (part, slot) in parts.iter().zip(&part_slots) {
                if let Some(index) = part.iter().position(|&r| r == rank) {
                    idle::set_route(slot, index);
                }
            }
        };
        pool.dispatch(members, &to_parts);
        let run = |slot: usize| {
            if let Some(i) = slots[slot].1 {
                let members: Arc<[usize]> = parts[i].clone().into();
                let sub = Space::instance(
                    Arc::clone(pool),
                    members,
                    std::thread::current().id(),
                    Arc::clone(&part_slots[i]),
                );
                let _retire = RetireOnExit(&sub);
                control(i, &sub);
            }
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| pool.dispatch(&ranks, &run)));
        pool.dispatch(members, &|i| idle::set_route(&t.slot, i));
        if let Err(p) = outcome {
            resume_unwind(p);
        }
        Ok(())
    }
}

impl std::fmt::Debug for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Space")
            .field("kind", &self.kind())
            .field("pool_ranks", &self.pool_ranks())
            .finish()
    }
}

/// Marks a sub-instance retired when its control function returns, also by panic.
struct RetireOnExit<'a>(&'a Space);

impl Drop for RetireOnExit<'_> {
    fn drop(&mut self) {
        if let Some(t) = &self.0.inner.threads {
            t.retired.store(true, Ordering::Release);
        }
    }
}

/// Clears an instance's busy flag when a dispatch or partition ends, also by panic.
struct BusyGuard<'a>(&'a AtomicBool);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl ThreadsInstance {
    fn enter(&self, what: &str) -> Result<BusyGuard<'_>> {
        if self.control != current::thread_id() {
            return Err(Error::new(
                ErrorKind::WrongThread,
                format!(
                    "{what}: the calling thread is not this instance's control thread; only the \
                     thread that created the instance (or received it from run_instances) may \
                     dispatch to it"
                ),
            ));
        }
        if self.retired.load(Ordering::Acquire) {
            return Err(Error::invalid_argument(format!(
                "{what}: this sub-instance ended when its run_instances control function \
                 returned; its threads are back in the parent instance"
            )));
        }
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(Error::new(
                ErrorKind::Busy,
                format!(
                    "{what}: this instance is already running a dispatch or a partition; nested \
                     dispatch to the same instance is not supported (use team-level parallelism \
                     inside a team policy instead)"
                ),
            ));
        }
        Ok(BusyGuard(&self.busy))
    }
}
