//! The scheduler's hot loop: what each worker of a run does (000 §2.4.1, with the priorities of
//! §2.4.2).
//!
//! A worker repeats: take a ready item, call F on it, release the items that execute after it.
//! Where the next item comes from, in order:
//! 1. its continuation: the first item that its last release made ready (kept in a register;
//!    in a chain or a tree reduction most items are found here, without touching any queue);
//! 2. its private chunk of roots (items with no predecessor), claimed from the shared root
//!    array in chunks that shrink as the array empties (guided self-scheduling);
//! 3. its own ready stack, where releases beyond the first are pushed;
//! 4. a new chunk of roots;
//! 5. with nothing of its own left, the other workers' ready stacks (work stealing).
//!
//! Priorities: with several levels, 1–4 are searched level by level, highest first, so a worker
//! never takes a lower-level item of its own while it has a higher one (a higher-level item that
//! is ready waits at most until its readier finishes the item it is running, unless an idle
//! worker steals it first), and an idle worker searches every worker's stacks level by level.
//! With a single worker this is strict: among ready items, higher levels always run first.
//!
//! Waiting counts (W of 000 §2.4.1). Releasing item j after F(i) returned:
//! - a load of W(j) that sees 1 means every other predecessor has already decremented (W only
//!   decreases and counts the predecessors that have not), so j is ready and no atomic
//!   read-modify-write is needed: the Acquire load reads the last value of a chain of
//!   read-modify-writes, which is in the release sequence of every earlier Release decrement, so
//!   F(j) will see every predecessor's writes;
//! - otherwise `fetch_sub` (AcqRel: Release publishes F(i)'s writes to whoever readies j,
//!   Acquire lets the last decrementer see the others'); the decrement from 1 readies j;
//! - the worker that readies j stores the in-degree back into W(j): no other predecessor touches
//!   W(j) again in this run, and the next run starts after this one ended.
//!
//! Termination: each worker counts the items it ran and adds the count to `done` when it runs out
//! of local work; workers that find nothing to steal return once `done` reaches N. With a single
//! worker, running out of local work means the graph is done.

use super::item_state::NO_ITEM;
use super::plan::{WorkGraph, LEVELS};
use crate::sync::atomic::{AtomicBool, Ordering};
use std::ops::Range;

/// Largest chunk of roots a worker claims at once: large enough that claims are rare, small
/// enough that the roots left over at the end are spread over the workers.
const MAX_ROOT_CHUNK: usize = 256;
/// A claim takes at most 1/(this × workers) of the roots left, as in guided scheduling.
const ROOT_CHUNK_DIVISOR: usize = 4;
/// Idle rounds spent spinning before an idle worker starts yielding its core.
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 64;

/// A worker's private state during one run.
struct Local {
    /// The item to run next, or NO_ITEM.
    continuation: u32,
    /// Claimed roots not yet run (indices into `roots`), per level.
    chunks: [Range<usize>; LEVELS],
    /// Items run and not yet added to `done`.
    completed: usize,
    /// This worker's ready-stack slot.
    slot: usize,
}

impl WorkGraph {
    /// Runs as worker `rank` of `size` until the run is complete. `SHARED` is false only when
    /// `size` is 1: then nothing is contended and plain loads and stores replace atomic
    /// read-modify-writes.
    pub(super) fn worker<const SHARED: bool, F: Fn(usize) + ?Sized>(
        &self,
        rank: usize,
        size: usize,
        work: &F,
    ) {
        let _abort = AbortOnUnwind(&self.abort);
        let mut local = Local {
            continuation: NO_ITEM,
            chunks: Default::default(),
            completed: 0,
            slot: rank % self.stacks.len(),
        };
        // The graph's arrays, read for every item, held here rather than reloaded through the
        // plan's `Arc` each time.
        let row_map = self.graph.row_map();
        let entries = self.graph.entries();
        loop {
            let item = match self.next_local::<SHARED>(&mut local, size) {
                Some(item) => item,
                None if !SHARED => return,
                None => match self.steal_or_finish(&mut local, size) {
                    Some(item) => item,
                    None => return,
                },
            };
            work(item as usize);
            local.completed += 1;
            let successors = row_map[item as usize] as usize..row_map[item as usize + 1] as usize;
            for &next in &entries[successors] {
                if self.release::<SHARED>(next) {
                    self.make_ready::<SHARED>(next, &mut local);
                }
            }
        }
    }

    /// The next item from the worker's own sources (1–4 of the module comment).
    #[inline]
    fn next_local<const SHARED: bool>(&self, local: &mut Local, size: usize) -> Option<u32> {
        let continuation = local.continuation;
        if self.levels == 1 {
            if continuation != NO_ITEM {
                local.continuation = NO_ITEM;
                return Some(continuation);
            }
            return self.take_at_level::<SHARED>(0, local, size);
        }
        for level in 0..self.levels {
            if continuation != NO_ITEM && self.level_of(continuation) == level {
                local.continuation = NO_ITEM;
                return Some(continuation);
            }
            if let Some(item) = self.take_at_level::<SHARED>(level, local, size) {
                if continuation != NO_ITEM {
                    // A higher level came first; let others see the continuation meanwhile.
                    self.push::<SHARED>(continuation, local);
                    local.continuation = NO_ITEM;
                }
                return Some(item);
            }
        }
        None
    }

    /// An item of `level` from the private chunk, the own stack, or a new chunk of roots.
    #[inline]
    fn take_at_level<const SHARED: bool>(
        &self,
        level: usize,
        local: &mut Local,
        size: usize,
    ) -> Option<u32> {
        if let Some(k) = local.chunks[level].next() {
            return Some(self.roots[k]);
        }
        if let Some(item) = self.stacks[local.slot][level].pop::<SHARED>(&self.links) {
            return Some(item);
        }
        self.claim_roots::<SHARED>(level, local, size)
    }

    /// Claims a chunk of the roots of `level` and returns its first item.
    fn claim_roots<const SHARED: bool>(
        &self,
        level: usize,
        local: &mut Local,
        size: usize,
    ) -> Option<u32> {
        let end = self.root_ranges[level].end;
        let cursor = &self.cursors[level];
        // Relaxed throughout: the roots array is not written during a run, and fetch_add alone
        // guarantees that each root is claimed once.
        let seen = cursor.load(Ordering::Relaxed);
        if seen >= end {
            return None;
        }
        let (start, chunk) = if SHARED {
            let chunk = ((end - seen) / (ROOT_CHUNK_DIVISOR * size)).clamp(1, MAX_ROOT_CHUNK);
            (cursor.fetch_add(chunk, Ordering::Relaxed), chunk)
        } else {
            cursor.store(end, Ordering::Relaxed);
            (seen, end - seen)
        };
        if start >= end {
            return None;
        }
        local.chunks[level] = start + 1..(start + chunk).min(end);
        Some(self.roots[start])
    }

    /// Counts one completed predecessor of `item`; true when that was the last one, which
    /// makes `item` ready (module comment).
    #[inline]
    fn release<const SHARED: bool>(&self, item: u32) -> bool {
        let state = &self.items[item as usize];
        if !SHARED {
            let pending = state.pending.load(Ordering::Relaxed);
            let left = if pending == 1 {
                state.indegree
            } else {
                pending - 1
            };
            state.pending.store(left, Ordering::Relaxed);
            return pending == 1;
        }
        // Acquire: a 1 seen here makes the earlier decrements' Release visible.
        let ready = state.pending.load(Ordering::Acquire) == 1
            // AcqRel: publish F(item's predecessor); see the others' writes if this is the last.
            || state.pending.fetch_sub(1, Ordering::AcqRel) == 1;
        if ready {
            // Relaxed: nobody touches W(item) again in this run.
            state.pending.store(state.indegree, Ordering::Relaxed);
        }
        ready
    }

    #[inline]
    fn make_ready<const SHARED: bool>(&self, item: u32, local: &mut Local) {
        let continuation = local.continuation;
        if continuation == NO_ITEM {
            local.continuation = item;
        } else if self.levels > 1 && self.level_of(item) < self.level_of(continuation) {
            local.continuation = item;
            self.push::<SHARED>(continuation, local);
        } else {
            self.push::<SHARED>(item, local);
        }
    }

    #[inline]
    fn push<const SHARED: bool>(&self, item: u32, local: &Local) {
        self.stacks[local.slot][self.level_of(item)].push::<SHARED>(item, &self.links);
    }

    /// The dense priority level of `item` (0 when the graph has one level).
    #[inline]
    fn level_of(&self, item: u32) -> usize {
        self.item_levels
            .get(item as usize)
            .map_or(0, |&l| l as usize)
    }

    /// With no local work left: reports the items run so far, then searches every stack level
    /// by level until it finds an item, or the run is complete (`None`).
    #[cold]
    fn steal_or_finish(&self, local: &mut Local, size: usize) -> Option<u32> {
        // Release: the run's completion is observed with Acquire below by every worker.
        self.done.fetch_add(local.completed, Ordering::Release);
        local.completed = 0;
        let slots = size.min(self.stacks.len());
        let mut rounds = 0u32;
        loop {
            for level in 0..self.levels {
                // Own sources first (another worker may share this slot), then the others'.
                if let Some(item) = self.take_at_level::<true>(level, local, size) {
                    return Some(item);
                }
                for offset in 1..slots {
                    let victim = (local.slot + offset) % slots;
                    if let Some(item) = self.stacks[victim][level].pop::<true>(&self.links) {
                        return Some(item);
                    }
                }
            }
            if self.done.load(Ordering::Acquire) == self.items.len()
                || self.abort.load(Ordering::Relaxed)
            {
                return None;
            }
            pause(&mut rounds);
        }
    }
}

/// Waits a little before an idle worker looks for work again: spins at first, then yields the
/// core so that a machine with fewer cores than workers keeps making progress.
#[cfg(not(loom))]
fn pause(rounds: &mut u32) {
    if *rounds < SPIN_ROUNDS {
        *rounds += 1;
        for _ in 0..1u32 << (*rounds).min(6) {
            std::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}

/// Under loom, a spinning thread must yield so the model explores the others.
#[cfg(loom)]
fn pause(_rounds: &mut u32) {
    loom::thread::yield_now();
}

/// Tells the other workers to stop waiting when this one unwinds from a panicking F.
struct AbortOnUnwind<'a>(&'a AtomicBool);

impl Drop for AbortOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
