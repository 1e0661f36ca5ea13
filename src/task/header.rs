//! The header at the start of every task and when_all block in pool memory (000 §2.3.1,
//! 002 §3.3.1): identity, reference counts, the queue links, and what the executor calls.
//!
//! Layout (`#[repr(C)]`, `HEADER_BYTES` = 80 bytes, plain integers and C function pointers only,
//! so that device code can share it):
//!
//! | offset | field | |
//! |---|---|---|
//! | 0 | `ident` | kind (24 bits) and generation (8 bits); `IDENT_FREED` once released |
//! | 4 | `flags` | priority, team, dependence kind; bits 8-15: the block's size (lg2) |
//! | 8 | `refs` | user references (low 32 bits), internal holds (high 32 bits) |
//! | 16 | `next` | link in the one ready or wait queue the entity is in |
//! | 24 | `wait` | head of the entity's wait queue (bit 0: nobody holds it); `CLOSED` once done |
//! | 32 | `scheduler` | the scheduler that owns the block |
//! | 40 | `function` | task function (tasks) |
//! | 48 | `destroy` | destroy callback (tasks) |
//! | 56 | `dependence` | a task's held dependence from its last respawn (a when_all: null) |
//! | 64 | `size` | result bytes (tasks) or dependences (when_alls) |
//! | 68 | `alloc_size` | bytes asked of the pool |
//! | 72 | `scan` | when_all: dependences not examined yet (last first); task: its state's offset |
//! | 76 | `retained` | when_all: it holds references to dependences `0..retained` (a task: 0) |
//!
//! A task block is `header | result (rounded up to 16 bytes) | state`; a when_all block is
//! `header | dependence pointers`. Blocks are aligned to their size (at least 128 bytes), so the
//! low `TAG_BITS` bits of a header address are free: a future is the address with the
//! generation of the entity in them (see `future.rs`).
//!
//! References (000 §2.3.1): user references are those futures hold (spawn and when_all return
//! one; retain adds one). Internal holds are the scheduler's: one per task that respawned with
//! the entity as dependence until that task's next run ends, and one per dependence a when_all
//! still has to examine. Keeping the halves apart lets a release of a future that has no user
//! reference left be reported instead of taking a reference the scheduler still needs. Being
//! incomplete holds an entity too, but not in `refs`: its open wait queue is that hold, so that a
//! completion costs one atomic read-modify-write (the close) and not a second one for a count
//! (`wait_queue.rs`, "Who frees an entity"). The block returns to the pool once the entity is
//! complete and `refs` is zero.

use super::scheduler::Shared;
use crate::priority::Priority;
use crate::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::ptr::NonNull;

/// The function a task runs: `function(ctx, state)` with `ctx` a `*const TaskContext` and
/// `state` the task's blob. The C calling convention, because the header is shared with C, C++,
/// Fortran and device code, whose functions are called through it directly.
pub type TaskFunction = unsafe extern "C" fn(ctx: *mut c_void, state: *mut c_void);

/// Called once with the task's state when the task completes (002 §2.2.5).
pub type DestroyFunction = unsafe extern "C" fn(state: *mut c_void);

/// Builds the state in the blob from `source`, instead of a byte copy (C++ copy construction).
pub type InitFunction = unsafe extern "C" fn(blob: *mut c_void, source: *const c_void);

/// Bytes of the header; the result follows, then the state at a multiple of `STATE_ALIGN`.
pub const HEADER_BYTES: usize = 80;
/// Alignment of a task's state (and of its result) in the block.
pub const STATE_ALIGN: usize = 16;
/// Low bits of a future that carry the generation of the entity it refers to.
pub const TAG_BITS: u32 = 6;
/// Mask of the generation bits of a future.
pub const TAG_MASK: usize = (1 << TAG_BITS) - 1;

/// `ident` of a live task: this value plus its generation.
pub const IDENT_TASK: u32 = 0x7464_5400; // "tdT"
/// `ident` of a live when_all: this value plus its generation.
pub const IDENT_WHEN_ALL: u32 = 0x7464_5700; // "tdW"
/// `ident` of a released block: this value plus the generation it had.
pub const IDENT_FREED: u32 = 0x7464_4600; // "tdF"
/// Mask of the kind part of `ident`.
pub const IDENT_KIND_MASK: u32 = 0xffff_ff00;

/// One user reference in `refs` (a future).
pub const USER_REF: u64 = 1;
/// One internal hold in `refs`: a when_all's on a dependence it has yet to examine, or the
/// executor's on a task's respawn dependence. An entity's hold on itself while it is incomplete
/// is not counted: its open wait queue is that hold (`wait_queue.rs`, "Who frees an entity").
pub const INTERNAL_REF: u64 = 0x1_0000_0000;
const USER_MASK: u64 = INTERNAL_REF - 1;

const FLAG_TEAM: u32 = 1 << 2;
/// The held dependence is a user reference taken over from the task (else an internal hold).
const FLAG_DEPENDENCE_USER: u32 = 1 << 3;
const FLAG_PRIORITY_MASK: u32 = 0b11;
/// Flags bits 8-15: the lg2 of the pool block's size, so that a free needs neither the size of
/// the request nor the pool's smallest block (`Place::block_lg2`).
const FLAG_BLOCK_LG2_SHIFT: u32 = 8;

/// Whether entity operations may use plain loads and stores (only one thread touches the
/// scheduler's entities: a wait with one worker) or need read-modify-writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Other threads may touch the same entities: atomic read-modify-writes.
    Shared,
    /// The calling thread is the only one that can touch them: plain loads and stores.
    Exclusive,
}

/// The kind of an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Task,
    WhenAll,
}

#[repr(C)]
pub struct TaskHeader {
    ident: AtomicU32,
    flags: UnsafeCell<u32>,
    refs: AtomicU64,
    pub(crate) next: AtomicPtr<TaskHeader>,
    pub(crate) wait: AtomicPtr<TaskHeader>,
    scheduler: *const Shared,
    function: Option<TaskFunction>,
    destroy: Option<DestroyFunction>,
    dependence: UnsafeCell<*mut TaskHeader>,
    size: u32,
    alloc_size: u32,
    scan: UnsafeCell<u32>,
    retained: UnsafeCell<u32>,
}

// SAFETY: the plain fields are written before the entity is published and then only by the one
// thread that holds it (its executor, or the completer that runs a when_all's scan); every
// hand-over between threads goes through a queue or `wait` with Release/Acquire.
unsafe impl Sync for TaskHeader {}
unsafe impl Send for TaskHeader {}

const _: () = assert!(std::mem::size_of::<TaskHeader>() == HEADER_BYTES || cfg!(loom));

/// What a new entity's header holds.
pub(crate) struct HeaderInit {
    pub kind: Kind,
    pub generation: u32,
    pub priority: Priority,
    pub team: bool,
    pub scheduler: *const Shared,
    pub function: Option<TaskFunction>,
    pub destroy: Option<DestroyFunction>,
    pub size: u32,
    pub alloc_size: u32,
    /// lg2 of the pool block's size (`Place::block_lg2`).
    pub block_lg2: u32,
    pub refs: u64,
}

/// The Acquire side of the last release of `refs` (the pattern of `Arc::drop`): the thread that
/// frees the block sees every earlier holder's accesses, which they published with their Release
/// decrements. A fence, except in ThreadSanitizer builds (`--cfg taskdag_sanitizer_thread`,
/// CMakeLists.txt): ThreadSanitizer does not model fences and reported the reuse of a freed
/// block as a race with the holder's decrement, so there an Acquire load of the same word, which
/// reads the last decrement and so synchronizes with the whole release sequence, as the standard
/// library's `Arc` does.
#[inline(always)]
fn acquire_after_last_release(refs: &AtomicU64) {
    if cfg!(taskdag_sanitizer_thread) {
        refs.load(Ordering::Acquire);
    } else {
        crate::sync::atomic::fence(Ordering::Acquire);
    }
}

impl TaskHeader {
    /// Writes a fresh header at `block`.
    ///
    /// # Safety
    /// `block` is a block of at least `HEADER_BYTES` bytes, aligned to 128, that the caller owns
    /// and nobody else references. Always inlined: with the spawn's copies for a single task
    /// and for the general case, the compiler called it from the single task's (callgrind,
    /// F(22): td_task_spawn 175 + 37 in `init` -> 172 instructions per node with one worker).
    #[inline(always)]
    pub(crate) unsafe fn init(block: NonNull<u8>, init: &HeaderInit) -> NonNull<TaskHeader> {
        let h = block.cast::<TaskHeader>();
        let base = match init.kind {
            Kind::Task => IDENT_TASK,
            Kind::WhenAll => IDENT_WHEN_ALL,
        };
        // A task's state offset, kept where a when_all keeps its scan: `state_ptr` then adds
        // it to the header's address instead of rounding the result size up each time.
        let scan = match init.kind {
            Kind::Task => state_offset(init.size),
            Kind::WhenAll => 0,
        };
        h.as_ptr().write(TaskHeader {
            ident: AtomicU32::new(base | (init.generation & TAG_MASK as u32)),
            flags: UnsafeCell::new(
                init.priority.index() as u32
                    | if init.team { FLAG_TEAM } else { 0 }
                    | init.block_lg2 << FLAG_BLOCK_LG2_SHIFT,
            ),
            refs: AtomicU64::new(init.refs),
            next: AtomicPtr::new(std::ptr::null_mut()),
            wait: AtomicPtr::new(std::ptr::null_mut()),
            scheduler: init.scheduler,
            function: init.function,
            destroy: init.destroy,
            dependence: UnsafeCell::new(std::ptr::null_mut()),
            size: init.size,
            alloc_size: init.alloc_size,
            scan: UnsafeCell::new(scan),
            retained: UnsafeCell::new(0),
        });
        h
    }

    /// A header on the heap, for model checks of the queues.
    #[doc(hidden)]
    pub fn for_model() -> Box<TaskHeader> {
        Box::new(TaskHeader {
            ident: AtomicU32::new(IDENT_TASK),
            flags: UnsafeCell::new(Priority::Regular.index() as u32),
            refs: AtomicU64::new(0),
            next: AtomicPtr::new(std::ptr::null_mut()),
            wait: AtomicPtr::new(std::ptr::null_mut()),
            scheduler: std::ptr::null(),
            function: None,
            destroy: None,
            dependence: UnsafeCell::new(std::ptr::null_mut()),
            size: 0,
            alloc_size: 0,
            scan: UnsafeCell::new(0),
            retained: UnsafeCell::new(0),
        })
    }

    /// Model checks: the entity gets `user` references and `internal` holds.
    #[doc(hidden)]
    pub fn model_set_refs(&self, user: u64, internal: u64) {
        self.refs
            .store(user * USER_REF + internal * INTERNAL_REF, Ordering::Relaxed);
    }

    /// Model checks: `release_user` or `release_internal` under shared access; whether the
    /// caller must free the entity.
    #[doc(hidden)]
    pub fn model_release(&self, user: bool) -> bool {
        if user {
            self.release_user(Access::Shared) == Ok(true)
        } else {
            self.release_internal(Access::Shared)
        }
    }

    /// The head of the entity's wait queue, for model checks.
    #[doc(hidden)]
    pub fn wait_head(&self) -> &AtomicPtr<TaskHeader> {
        &self.wait
    }

    /// The identity word: kind and generation, or `IDENT_FREED` plus the generation.
    #[inline]
    pub(crate) fn ident(&self) -> u32 {
        // Acquire: a validator that sees a live ident sees the header written before it was
        // published.
        self.ident.load(Ordering::Acquire)
    }

    /// Marks the block released; stale futures then read `IDENT_FREED`.
    #[inline]
    pub(crate) fn mark_freed(&self) {
        self.mark_freed_as(self.generation());
    }

    /// `mark_freed` for a caller that knows the entity's `generation`, so that `ident` is not
    /// read again (an atomic load is never merged with an earlier one).
    #[inline]
    pub(crate) fn mark_freed_as(&self, generation: u32) {
        // Relaxed: the block's owner is the only writer; stale readers need no ordering.
        self.ident
            .store(IDENT_FREED | generation, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.ident.load(Ordering::Relaxed) & TAG_MASK as u32
    }

    #[inline]
    pub(crate) fn kind(&self) -> Kind {
        if self.ident.load(Ordering::Relaxed) & IDENT_KIND_MASK == IDENT_WHEN_ALL {
            Kind::WhenAll
        } else {
            Kind::Task
        }
    }

    #[inline]
    pub(crate) fn scheduler(&self) -> *const Shared {
        self.scheduler
    }

    #[inline]
    pub(crate) fn function(&self) -> Option<TaskFunction> {
        self.function
    }

    #[inline]
    pub(crate) fn destroy_function(&self) -> Option<DestroyFunction> {
        self.destroy
    }

    /// Result bytes of a task; dependences of a when_all.
    #[inline]
    pub(crate) fn size(&self) -> usize {
        self.size as usize
    }

    #[inline]
    pub(crate) fn alloc_size(&self) -> usize {
        self.alloc_size as usize
    }

    /// lg2 of the pool block's size, as `init` recorded it.
    #[inline]
    pub(crate) fn block_lg2(&self) -> u32 {
        // The byte of `flags` that holds it, loaded alone (where the word took a load, a shift
        // and a mask), and its bound told to the compiler (below): callgrind, F(22):
        // td_future_release 53 -> 51 instructions per node with one worker (run_ready_tasks
        // 147.9 -> 145.9), 59 -> 57 with two.
        const _: () = assert!(FLAG_BLOCK_LG2_SHIFT == 8);
        const BYTE: usize = if cfg!(target_endian = "little") { 1 } else { 2 };
        // SAFETY: a byte inside `flags`. These bits are written once, before the entity is
        // published; respawns and dependence changes keep them (and write the word only from
        // the thread that holds the task, as every reader of this byte does).
        let lg2 = u32::from(unsafe { *self.flags.get().cast::<u8>().add(BYTE) });
        if lg2 >= usize::BITS {
            // SAFETY: the lg2 of a block the pool handed out: at most its superblock's, which
            // is the number of trailing zeros of a `usize` (`PoolConfig`), so below
            // `usize::BITS`. Told so, the compiler drops the block cache's reduction of it to a
            // list's index (`BlockCache::keep_lg2`).
            unsafe { std::hint::unreachable_unchecked() }
        }
        lg2
    }

    /// The index of the task's priority (`Priority::index`): the flags hold a valid one, which
    /// the compiler is told is below 3 (the queues' bounds), where a `min(2)` took three
    /// instructions more (callgrind, F(22): run_ready_tasks 149.4 -> 147.9 instructions per node).
    #[inline]
    pub(crate) fn priority_index(&self) -> usize {
        // SAFETY: flags change only on respawn, by the executing thread, which holds the task.
        let p = (unsafe { *self.flags.get() } & FLAG_PRIORITY_MASK) as usize;
        if p >= 3 {
            // SAFETY: only the headers' initialisations and `set_priority` write these bits,
            // all from `Priority::index`, which is below 3.
            unsafe { std::hint::unreachable_unchecked() }
        }
        p
    }

    /// # Safety
    /// Only the thread that holds the task (its executor) may call this.
    #[inline]
    pub(crate) unsafe fn set_priority(&self, priority: Priority) {
        let flags = self.flags.get();
        *flags = (*flags & !FLAG_PRIORITY_MASK) | priority.index() as u32;
    }

    #[inline]
    pub(crate) fn is_team(&self) -> bool {
        // SAFETY: the team flag is written once, before the task is published.
        unsafe { *self.flags.get() & FLAG_TEAM != 0 }
    }

    /// The dependence a task holds from its last respawn (null if none).
    ///
    /// # Safety
    /// Only the thread that holds the task may call this.
    #[inline]
    pub(crate) unsafe fn dependence(&self) -> *mut TaskHeader {
        *self.dependence.get()
    }

    /// Records the dependence the task holds; `user` when the hold is a user reference.
    ///
    /// # Safety
    /// Only the thread that holds the task may call this.
    #[inline]
    pub(crate) unsafe fn set_dependence(&self, dependence: *mut TaskHeader, user: bool) {
        *self.dependence.get() = dependence;
        let flags = self.flags.get();
        *flags = (*flags & !FLAG_DEPENDENCE_USER) | if user { FLAG_DEPENDENCE_USER } else { 0 };
    }

    /// Whether the held dependence is a user reference.
    ///
    /// # Safety
    /// Only the thread that holds the task may call this.
    #[inline]
    pub(crate) unsafe fn dependence_is_user(&self) -> bool {
        *self.flags.get() & FLAG_DEPENDENCE_USER != 0
    }

    /// # Safety
    /// Only the thread that runs the when_all's scan may call this.
    #[inline]
    pub(crate) unsafe fn scan(&self) -> u32 {
        *self.scan.get()
    }

    /// # Safety
    /// As for `scan`.
    #[inline]
    pub(crate) unsafe fn set_scan(&self, index: u32) {
        *self.scan.get() = index;
    }

    /// # Safety
    /// As for `scan`, or the thread that releases the when_all's last reference.
    #[inline]
    pub(crate) unsafe fn retained(&self) -> u32 {
        *self.retained.get()
    }

    /// # Safety
    /// Only the creator of the when_all, before it is published.
    #[inline]
    pub(crate) unsafe fn set_retained(&self, count: u32) {
        *self.retained.get() = count;
    }

    /// Whether the entity is complete: its wait queue is closed (002 Fig. 3.6).
    #[inline]
    pub(crate) fn is_complete(&self) -> bool {
        super::wait_queue::is_closed(&self.wait)
    }

    /// Whether the references and holds are exactly `refs` (`USER_REF`s plus `INTERNAL_REF`s).
    /// Acquire: when the caller then frees the block on the strength of the answer, it sees the
    /// accesses of every holder that released before (they released with Release).
    #[inline]
    pub(crate) fn refs_are(&self, refs: u64) -> bool {
        self.refs.load(Ordering::Acquire) == refs
    }

    /// Closes the wait queue with a plain store when the caller's user reference is the
    /// entity's only reference or hold and no waiter is queued; `false`, changing nothing,
    /// otherwise. Only for a caller whose reference nobody else uses meanwhile
    /// (`Place::complete_task_run_ahead`): then nobody can push any more. `refs` is read first,
    /// with Acquire: a holder that pushed a waiter and then released its reference released
    /// with Release, so the look at the queue that follows sees the waiter (a when_all holds
    /// nothing on the dependence it waits on). The store is Release, so that a task that reads
    /// the result later through the caller's reference (from shared memory, once the caller's
    /// call has returned) sees it.
    #[inline]
    pub fn close_if_sole_holder(&self) -> bool {
        let alone = self.refs_are(USER_REF) && !super::wait_queue::has_waiters(&self.wait);
        if alone {
            super::wait_queue::close_unreachable(&self.wait);
        }
        alone
    }

    /// The number of user references.
    #[inline]
    pub(crate) fn user_refs(&self) -> u32 {
        (self.refs.load(Ordering::Relaxed) & USER_MASK) as u32
    }

    /// Adds `amount` (`USER_REF` or `INTERNAL_REF`). The caller holds a reference of either kind,
    /// so the entity cannot be freed meanwhile.
    #[inline]
    pub(crate) fn add_ref(&self, amount: u64, access: Access) {
        match access {
            Access::Exclusive => {
                let v = self.refs.load(Ordering::Relaxed);
                self.refs.store(v + amount, Ordering::Relaxed);
            }
            // Relaxed: a new reference is made from one the caller holds, like Arc::clone.
            Access::Shared => {
                self.refs.fetch_add(amount, Ordering::Relaxed);
            }
        }
    }

    /// Drops one user reference. `Ok(true)` when the caller must free the block: it was the last
    /// reference or hold and the entity is complete (otherwise the completer frees it,
    /// `wait_queue::orphan`); `Err(())` when no user reference was left (nothing changes).
    #[inline]
    pub(crate) fn release_user(&self, access: Access) -> Result<bool, ()> {
        match access {
            Access::Exclusive => {
                let v = self.refs.load(Ordering::Relaxed);
                if v & USER_MASK == 0 {
                    return Err(());
                }
                self.refs.store(v - USER_REF, Ordering::Relaxed);
                Ok(v == USER_REF && super::wait_queue::orphan(&self.wait, access))
            }
            Access::Shared => {
                // Acquire: when this is the sole reference, the caller frees the block and must
                // see every earlier holder's accesses (they released with Release below).
                let mut v = self.refs.load(Ordering::Acquire);
                loop {
                    if v & USER_MASK == 0 {
                        return Err(());
                    }
                    if v == USER_REF && self.is_complete() {
                        // The only reference of a complete entity: nobody else can reach it, and
                        // its completer is done with it (the Acquire load of the closed queue).
                        return Ok(true);
                    }
                    // Release: this holder's accesses happen-before the free by the last one.
                    match self.refs.compare_exchange_weak(
                        v,
                        v - USER_REF,
                        Ordering::Release,
                        Ordering::Acquire,
                    ) {
                        Ok(_) if v == USER_REF => {
                            acquire_after_last_release(&self.refs);
                            return Ok(super::wait_queue::orphan(&self.wait, access));
                        }
                        Ok(_) => return Ok(false),
                        Err(now) => v = now,
                    }
                }
            }
        }
    }

    /// Drops one internal hold; `true` when the caller must free the block (as for
    /// `release_user`).
    #[inline]
    pub(crate) fn release_internal(&self, access: Access) -> bool {
        match access {
            Access::Exclusive => {
                let v = self.refs.load(Ordering::Relaxed);
                debug_assert!(v >= INTERNAL_REF, "internal hold released twice");
                self.refs.store(v - INTERNAL_REF, Ordering::Relaxed);
                v == INTERNAL_REF && super::wait_queue::orphan(&self.wait, access)
            }
            Access::Shared => {
                // Acquire on the fast path, and the fence after the last decrement: the freeing
                // thread sees every holder's accesses (the pattern of Arc::drop).
                if self.refs.load(Ordering::Acquire) == INTERNAL_REF && self.is_complete() {
                    return true;
                }
                if self.refs.fetch_sub(INTERNAL_REF, Ordering::Release) == INTERNAL_REF {
                    acquire_after_last_release(&self.refs);
                    return super::wait_queue::orphan(&self.wait, access);
                }
                false
            }
        }
    }

    /// Pointer to the result bytes of a task.
    #[inline]
    pub(crate) fn result_ptr(this: NonNull<TaskHeader>) -> *mut u8 {
        // SAFETY: the result lies inside the block, right after the header.
        unsafe { this.cast::<u8>().as_ptr().add(HEADER_BYTES) }
    }

    /// Pointer to the state of a task.
    #[inline]
    pub(crate) fn state_ptr(this: NonNull<TaskHeader>) -> *mut u8 {
        // The offset `init` wrote: a load and an add, where computing it from the result size
        // took an add and a mask more, for each run and each destroy; `init` computes it once
        // (callgrind, F(22): run_ready_tasks 145.9 -> 141.9, td_task_spawn 196.5 -> 197.5
        // instructions per node with one worker; run_ahead_for 214.3 -> 210.3, td_task_spawn
        // 202 -> 204 with two).
        // SAFETY: the state lies inside the block, at the offset written before the task was
        // published, which nothing changes afterwards (only when_alls' scans write `scan`).
        unsafe {
            let offset = *this.as_ref().scan.get();
            this.cast::<u8>().as_ptr().add(offset as usize)
        }
    }

    /// Pointer to the dependence array of a when_all.
    #[inline]
    pub(crate) fn dependences_ptr(this: NonNull<TaskHeader>) -> *mut *mut TaskHeader {
        // SAFETY: the array lies inside the block, right after the header.
        unsafe { this.cast::<u8>().as_ptr().add(HEADER_BYTES).cast() }
    }
}

/// The offset of a task's state in its block: after the header and the result of `size` bytes,
/// at a multiple of `STATE_ALIGN`. `HEADER_BYTES` is a multiple of `STATE_ALIGN`, so it goes
/// inside the rounding: an add and a mask. In 32 bits, which cannot wrap: the offset is at most
/// the block's bytes, which the header stores as a `u32` (`alloc_size`); the mask then needs
/// no 64-bit constant (callgrind, F(22): run_ready_tasks 151.4 -> 149.4, td_task_spawn
/// 200.5 -> 199.5 instructions per node).
#[inline(always)]
fn state_offset(size: u32) -> u32 {
    const _: () = assert!(HEADER_BYTES % STATE_ALIGN == 0);
    const ROUND: u32 = (HEADER_BYTES + STATE_ALIGN - 1) as u32;
    size.wrapping_add(ROUND) & !(STATE_ALIGN as u32 - 1)
}

/// Bytes of a task block with `result_size` result bytes and `state_size` state bytes.
pub(crate) fn task_bytes(result_size: usize, state_size: usize) -> Option<usize> {
    HEADER_BYTES
        .checked_add(result_size.checked_next_multiple_of(STATE_ALIGN)?)?
        .checked_add(state_size)
}

/// Bytes of a when_all block with `count` dependences.
pub(crate) fn when_all_bytes(count: usize) -> Option<usize> {
    HEADER_BYTES.checked_add(count.checked_mul(std::mem::size_of::<*mut TaskHeader>())?)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn header_layout_matches_the_documented_offsets() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(TaskHeader, ident), 0);
        assert_eq!(offset_of!(TaskHeader, flags), 4);
        assert_eq!(offset_of!(TaskHeader, refs), 8);
        assert_eq!(offset_of!(TaskHeader, next), 16);
        assert_eq!(offset_of!(TaskHeader, wait), 24);
        assert_eq!(offset_of!(TaskHeader, scheduler), 32);
        assert_eq!(offset_of!(TaskHeader, function), 40);
        assert_eq!(offset_of!(TaskHeader, destroy), 48);
        assert_eq!(offset_of!(TaskHeader, dependence), 56);
        assert_eq!(offset_of!(TaskHeader, size), 64);
        assert_eq!(offset_of!(TaskHeader, alloc_size), 68);
        assert_eq!(offset_of!(TaskHeader, scan), 72);
        assert_eq!(offset_of!(TaskHeader, retained), 76);
        assert_eq!(std::mem::size_of::<TaskHeader>(), HEADER_BYTES);
    }

    #[test]
    fn a_fibonacci_task_fits_a_128_byte_block() {
        // result: one i64; state: n and two futures.
        assert_eq!(task_bytes(8, 24), Some(120));
        assert_eq!(when_all_bytes(2), Some(96));
    }

    #[test]
    fn user_and_internal_references_are_counted_apart() {
        for access in [Access::Shared, Access::Exclusive] {
            // A complete entity: the last release of either kind frees it.
            let h = TaskHeader::for_model();
            h.wait
                .store(super::super::wait_queue::closed(), Ordering::Relaxed);
            h.refs.store(USER_REF + INTERNAL_REF, Ordering::Relaxed);
            assert_eq!(h.release_user(access), Ok(false));
            assert_eq!(h.release_user(access), Err(()), "no user reference is left");
            assert!(h.release_internal(access));
            h.refs.store(INTERNAL_REF, Ordering::Relaxed);
            h.add_ref(USER_REF, access);
            assert_eq!(h.user_refs(), 1);
            assert!(!h.release_internal(access));
            assert_eq!(h.release_user(access), Ok(true));
        }
    }

    #[test]
    fn the_last_release_of_an_incomplete_entity_leaves_the_free_to_its_completer() {
        use super::super::wait_queue;
        for access in [Access::Shared, Access::Exclusive] {
            for user in [true, false] {
                let h = TaskHeader::for_model();
                h.refs.store(
                    if user { USER_REF } else { INTERNAL_REF },
                    Ordering::Relaxed,
                );
                let free = if user {
                    h.release_user(access).unwrap()
                } else {
                    h.release_internal(access)
                };
                assert!(!free, "an incomplete entity was freed by its last holder");
                let closed = wait_queue::close(&h.wait, access).unwrap();
                assert!(closed.waiters.is_null());
                assert!(
                    closed.orphaned,
                    "the completer was not told to free the entity"
                );
            }
            // A completion that finds holders left does not free.
            let h = TaskHeader::for_model();
            h.refs.store(USER_REF, Ordering::Relaxed);
            assert!(!wait_queue::close(&h.wait, access).unwrap().orphaned);
            assert_eq!(h.release_user(access), Ok(true));
        }
    }
}
