//! A whole-instance dispatch whose members join late: the control thread starts alone, and the
//! other members run the job only once it calls `Recruit::all` (the task DAG's wait, which
//! needs them only when a second task is ready: a wait of one task or of a chain of tasks then
//! costs what it costs with one thread, docs/tasks.md "Threads").
//!
//! The job protocol is job.rs's: the job starts with no worker counted, and `all` adds the
//! members to the count before it posts to their mailboxes, on the control thread, which alone
//! posts; the control thread waits for the count only after its own part returned, so every
//! member called in has run the job before the dispatch returns.

use super::job::Job;
use super::mailbox::Mailbox;
use crate::cache_line::CachePadded;
use std::cell::Cell;

/// The handle through which the control thread of a late-joining dispatch calls in the other
/// members. Not `Sync`: the control thread's alone.
pub struct Recruit<'a> {
    posting: Option<Posting<'a>>,
    posted: Cell<bool>,
}

struct Posting<'a> {
    mailboxes: &'a [CachePadded<Mailbox>],
    /// Pool ranks of the instance's members, the control thread's first.
    members: &'a [usize],
    job: &'a Job<'a>,
}

impl<'a> Recruit<'a> {
    /// For a dispatch with nobody to call in (one thread).
    pub(crate) fn none() -> Recruit<'static> {
        Recruit {
            posting: None,
            posted: Cell::new(false),
        }
    }

    pub(crate) fn new(
        mailboxes: &'a [CachePadded<Mailbox>],
        members: &'a [usize],
        job: &'a Job<'a>,
    ) -> Self {
        Recruit {
            posting: Some(Posting {
                mailboxes,
                members,
                job,
            }),
            posted: Cell::new(false),
        }
    }

    /// Posts the job to every other member, once; later calls do nothing.
    pub fn all(&self) {
        self.only(|_| true);
    }

    /// Posts the job to the other members `i` (by index in the instance, the control thread
    /// being 0) for which `take(i)`, once; later calls, of either kind, do nothing. The others
    /// never run the job.
    pub fn only(&self, take: impl Fn(usize) -> bool) {
        let Some(p) = &self.posting else { return };
        if self.posted.replace(true) {
            return;
        }
        let called = |&(i, _): &(usize, &usize)| take(i);
        p.job
            .add_workers(p.members.iter().enumerate().skip(1).filter(called).count());
        let job = p.job.as_ref();
        for (i, &rank) in p.members.iter().enumerate().skip(1).filter(called) {
            p.mailboxes[rank].post(job, i);
        }
    }
}
