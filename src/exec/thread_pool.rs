//! The threads behind the Threads space: created once, optionally pinned one per core, idle in
//! their mailboxes between dispatches (003 "an instance is an organized thread pool").
//!
//! Pool rank 0 is the thread that created the pool (the root instance's control thread); ranks
//! 1.. are spawned here. Two kinds of dispatch: a whole-instance job, posted to each member's
//! mailbox and run by every member (teams, partitions), and a block dispatch through the
//! instance's job slot, whose blocks are claimed by whoever comes first, the caller included
//! (slot.rs; the work graph, parallel loops, and the task DAG's wait, which opens the blocks
//! only when it needs the other members, recruit.rs).

use super::current;
use super::home_cpu;
use super::idle::{self, Route};
use super::job::Job;
use super::mailbox::{Delivery, Mailbox};
use super::recruit::Recruit;
use super::slot::{BlockFn, Latecomers, Slot};
use crate::cache_line::CachePadded;
use crate::error::{Error, ErrorKind, Result};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How to build a pool.
#[derive(Debug, Clone, Default)]
pub struct PoolOptions {
    /// Threads including the creating thread; at least 1.
    pub threads: usize,
    /// Hardware thread (OS CPU id) for each rank, or empty for no pinning. Rank 0, the creating
    /// thread, is not pinned but has its CPU reserved (no other rank gets it): threads that the
    /// caller creates later inherit its affinity, and pinning it confined all of a program's own
    /// threads to one core (measured: a 16-thread pthread benchmark run after td_initialize ran
    /// at one thread's speed). Dispatches move it back there when the OS has put it on a
    /// worker's CPU (`home_cpu.rs`).
    pub cpus: Vec<usize>,
    /// NUMA domain of each rank; empty means all in domain 0.
    pub numa: Vec<usize>,
    /// How long an idle worker spins, looking for work, before it parks; `None` =
    /// `idle::DEFAULT_IDLE_SPIN`, or `idle::OVERSUBSCRIBED_IDLE_SPIN` when the pool has more
    /// threads than the process has CPUs (idle.rs says why).
    pub idle_spin: Option<Duration>,
}

pub(crate) struct ThreadPool {
    shared: Arc<Shared>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

pub(crate) struct Shared {
    pub(crate) id: u64,
    /// One per rank, each on its own cache lines: a worker polls its mailbox while the control
    /// thread posts to its neighbours'.
    pub(crate) mailboxes: Box<[CachePadded<Mailbox>]>,
    pub(crate) cpus: Box<[Option<usize>]>,
    pub(crate) numa: Box<[usize]>,
    /// The job slot of the root instance, which every worker serves from the start.
    pub(crate) root_slot: Arc<Slot>,
    idle_spin: Duration,
}

static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

impl ThreadPool {
    /// How long this pool's idle workers spin before they park.
    pub(crate) fn idle_spin(&self) -> Duration {
        self.shared.idle_spin
    }

    pub(crate) fn new(opts: &PoolOptions) -> Result<ThreadPool> {
        let n = opts.threads;
        if n == 0 {
            return Err(Error::invalid_argument(
                "a thread pool needs at least one thread (the calling thread)",
            ));
        }
        if !opts.cpus.is_empty() && opts.cpus.len() != n {
            return Err(Error::new(
                ErrorKind::Internal,
                format!("{} CPUs given for {n} pool threads", opts.cpus.len()),
            ));
        }
        let shared = Arc::new(Shared {
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            mailboxes: (0..n).map(|_| CachePadded(Mailbox::new())).collect(),
            cpus: (0..n).map(|r| opts.cpus.get(r).copied()).collect(),
            numa: (0..n)
                .map(|r| opts.numa.get(r).copied().unwrap_or(0))
                .collect(),
            root_slot: Arc::new(Slot::new(n)),
            idle_spin: opts.idle_spin.unwrap_or_else(|| idle::default_spin(n)),
        });
        current::enter_pool(shared.id, 0, shared.cpus[0]);
        let mut workers = Vec::with_capacity(n - 1);
        for rank in 1..n {
            let s = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("taskdag-{rank}"))
                .spawn(move || worker_main(&s, rank));
            match spawned {
                Ok(h) => workers.push(h),
                Err(e) => {
                    let pool = ThreadPool {
                        shared,
                        workers: Mutex::new(workers),
                    };
                    drop(pool);
                    return Err(Error::new(
                        ErrorKind::OutOfMemory,
                        format!("could not start pool thread {rank} of {n}: {e}"),
                    ));
                }
            }
        }
        Ok(ThreadPool {
            shared,
            workers: Mutex::new(workers),
        })
    }

    /// Before a dispatch whose control thread is `control`: rank 0, the one unpinned thread,
    /// goes back to its reserved CPU if the OS moved it onto a worker's (`home_cpu.rs`).
    #[inline]
    fn keep_rank0_home(&self, control: usize) {
        if control == 0 {
            home_cpu::return_if_on_a_worker(self.shared.cpus[0], &self.shared.cpus[1..]);
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn size(&self) -> usize {
        self.shared.mailboxes.len()
    }

    /// Runs `work(i)` for every `i` in `0..members.len()`: index 0 on the calling thread, index
    /// `i` on pool rank `members[i]`. Blocks until all return; rethrows a panic.
    pub(crate) fn dispatch(&self, members: &[usize], work: &(dyn Fn(usize) + Sync)) {
        if members.len() == 1 {
            // Nobody to hand work to: skip the job and its completion handshake.
            work(0);
            return;
        }
        self.keep_rank0_home(members[0]);
        let job = Job::new(work, members.len() - 1);
        let job_ref = job.as_ref();
        for (i, &rank) in members.iter().enumerate().skip(1) {
            self.shared.mailboxes[rank].post(job_ref, i);
        }
        job.run_rank(0);
        job.wait();
    }

    /// Only the calling thread starts: it runs `lead`, and member `b` of the instance whose job
    /// slot is `slot` and whose members (pool ranks, control thread first) are `members` runs
    /// `work(b)`, for `b` in `1..size`, once `lead` calls `Recruit::all` (or `Recruit::only`
    /// names it) and it claims its block (recruit.rs). When `lead` returns, blocks not claimed
    /// yet run on the calling thread or not at all (`latecomers`); then this waits for the
    /// claimed ones. Rethrows a panic. The control thread runs on the CPU of `members[home]`
    /// (`Space::run_on_all_lazily`).
    ///
    /// # Safety
    /// As for `dispatch_blocks`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn dispatch_lazily(
        &self,
        slot: &Slot,
        members: &[usize],
        size: usize,
        home: usize,
        latecomers: Latecomers,
        work: BlockFn<'_>,
        lead: &dyn Fn(&Recruit<'_>),
    ) {
        if size == 1 {
            lead(&Recruit::none());
            return;
        }
        if home == 0 {
            self.keep_rank0_home(members[0]);
        } else if members[0] == 0 {
            home_cpu::go_to(self.shared.cpus[members[home]]);
        }
        let mailboxes = &self.shared.mailboxes;
        let wake = |b: usize| mailboxes[members[b]].wake_if_sleeping();
        let recruit = Recruit::new(slot, size, size == members.len(), &work, &wake);
        let led = catch_unwind(AssertUnwindSafe(|| lead(&recruit)));
        let panic = recruit.finish(latecomers);
        if let Some(p) = led.err().or(panic) {
            resume_unwind(p);
        }
    }

    /// Runs `work(b)` for every block `b` in `0..size` through `slot`, the job slot of the
    /// instance whose members (pool ranks, control thread first) are `members`: block 0 on the
    /// calling thread, block b on member b if it claims it first, else on the caller. Blocks
    /// until all return; rethrows a panic.
    ///
    /// # Safety
    /// The caller must be the instance's control thread with no other dispatch on `slot`
    /// running, and `size` at most `members.len()`.
    pub(crate) unsafe fn dispatch_blocks(
        &self,
        slot: &Slot,
        members: &[usize],
        size: usize,
        work: BlockFn<'_>,
    ) {
        if size == 1 {
            work(0);
            return;
        }
        self.keep_rank0_home(members[0]);
        let mailboxes = &self.shared.mailboxes;
        let wake = || {
            for &rank in &members[1..size] {
                mailboxes[rank].wake_if_sleeping();
            }
        };
        slot.dispatch(size, size < members.len(), work, wake);
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        for m in self.shared.mailboxes.iter().skip(1) {
            m.post_shutdown();
        }
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()));
        let me = std::thread::current().id();
        for h in workers {
            // A pool dropped by one of its own threads cannot join itself; that thread exits
            // when its job returns, because its shutdown is already posted.
            if h.thread().id() != me {
                let _ = h.join();
            }
        }
        current::leave_pool(self.shared.id);
    }
}

fn worker_main(shared: &Shared, rank: usize) {
    let mailbox = &shared.mailboxes[rank];
    mailbox.register_owner();
    if let Some(cpu) = shared.cpus[rank] {
        core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
    }
    current::enter_pool(shared.id, rank, shared.cpus[rank]);
    // The root instance's members are the pool's ranks in order.
    idle::set_route(&shared.root_slot, rank);
    let mut route: Option<Route> = None;
    idle::refresh_route(&mut route);
    loop {
        match idle::wait(mailbox, &mut route, shared.idle_spin) {
            Delivery::Shutdown => return,
            Delivery::Job(job, index) => {
                // SAFETY: the control thread keeps the job alive until every posted worker has
                // run `execute` (job.rs), and each delivery is executed exactly once.
                unsafe { job.execute(index) };
                // The job may have moved this worker to another instance's slot.
                idle::refresh_route(&mut route);
            }
        }
    }
}
