//! Floor probe: the smallest single-worker task DAG behind the same C entry points the fib
//! benchmark calls (spawn, respawn_when_all_private, result, get, release), with the cheap
//! checks a C API needs (nulls, struct sizes, running context, future identity, readiness,
//! sizes). One thread, one waiter per task, fixed 128-byte blocks. Not the product: an
//! experiment of session 40 (bench/results/16-core-gpu-machine-session40-hot-path.md).
//!
//! Built as the `src/lib.rs` of a crate named `taskdag` with `crate-type = ["cdylib"]` and
//! `panic = "abort"` (release, codegen-units 1), its `libtaskdag.so` replaces the library beside
//! `bench_fib_taskdag` (`bin/` and `lib/`: the program's RPATH is `$ORIGIN/../lib`), which then
//! runs unchanged with `--threads 1`.
#![allow(non_camel_case_types, clippy::missing_safety_doc)]
use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;

type TaskFn = unsafe extern "C" fn(*mut Ctx, *mut c_void);
type DestroyFn = unsafe extern "C" fn(*mut c_void);

#[repr(C)]
pub struct Policy { struct_size: usize, scheduler: *mut c_void, dependence: *mut Task, priority: i32, team: c_int }
#[repr(C)]
pub struct Closure { struct_size: usize, function: Option<TaskFn>, state: *const u8, state_size: usize, result_size: usize, destroy: Option<DestroyFn>, init: *const c_void }

const LIVE: u32 = 0x7464_5400;
const COMPLETE: u32 = 1;
const BLOCK: usize = 128;
const HEADER: usize = 64;

#[repr(C, align(128))]
pub struct Task {
    ident: u32, refs: u32, pending: u32, flags: u32,
    prio: u32, result_size: u32,
    func: Option<TaskFn>, destroy: Option<DestroyFn>,
    next: *mut Task, waiter: *mut Task,
    _pad: [u8; 8],
    result: [u8; 16],
    state: [u8; BLOCK - HEADER - 16],
}
const _: () = assert!(std::mem::size_of::<Task>() == BLOCK);

pub struct Ctx { task: *mut Task, respawn: bool, prio: u32 }

struct W { queues: [*mut Task; 3], nonempty: u32, free: *mut Task, running: *const Ctx, spawned: u64 }
static mut S: W = W { queues: [null_mut(); 3], nonempty: 0, free: null_mut(), running: std::ptr::null(), spawned: 0 };

#[inline(always)] unsafe fn w() -> &'static mut W { &mut *std::ptr::addr_of_mut!(S) }

#[inline(always)] unsafe fn push(t: *mut Task, p: u32) {
    let s = w();
    (*t).next = s.queues[p as usize];
    s.queues[p as usize] = t;
    s.nonempty |= 1 << p;
}
#[inline(always)] unsafe fn pop() -> *mut Task {
    let s = w();
    if s.nonempty == 0 { return null_mut(); }
    let p = s.nonempty.trailing_zeros() as usize;
    let t = s.queues[p];
    let n = (*t).next;
    s.queues[p] = n;
    if n.is_null() { s.nonempty &= !(1 << p); }
    t
}
#[cold] #[inline(never)] unsafe fn refill() -> *mut Task {
    let chunk = std::alloc::alloc(std::alloc::Layout::from_size_align(BLOCK * 4096, BLOCK).unwrap()) as *mut Task;
    for i in 1..4096 { free_block(chunk.add(i)); }
    chunk
}
#[inline(always)] unsafe fn alloc() -> *mut Task {
    let s = w();
    let t = s.free;
    if t.is_null() { return refill(); }
    s.free = (*t).next;
    t
}
#[inline(always)] unsafe fn free_block(t: *mut Task) { let s = w(); (*t).ident = 0; (*t).next = s.free; s.free = t; }

#[inline(always)] unsafe fn drop_ref(t: *mut Task) { (*t).refs -= 1; if (*t).refs == 0 { free_block(t); } }

#[inline(never)] unsafe fn run_ready() { loop { let t = pop(); if t.is_null() { break; } execute(t); } }

#[inline(always)] unsafe fn execute(t: *mut Task) {
    let ctx = Ctx { task: t, respawn: false, prio: 0 };
    let s = w();
    let outer = std::mem::replace(&mut s.running, &ctx);
    ((*t).func.unwrap_unchecked())(&ctx as *const Ctx as *mut Ctx, (*t).state.as_mut_ptr().cast());
    let s = w();
    s.running = outer;
    let ctx = std::ptr::read_volatile(&ctx);
    if ctx.respawn {
        (*t).prio = ctx.prio;
        if (*t).pending == 0 { push(t, ctx.prio); }
        return;
    }
    (*t).flags |= COMPLETE;
    if let Some(d) = (*t).destroy { d((*t).state.as_mut_ptr().cast()); }
    let wt = (*t).waiter;
    if !wt.is_null() { (*wt).pending -= 1; if (*wt).pending == 0 { push(wt, (*wt).prio); } }
    drop_ref(t);
}

#[inline(always)] unsafe fn check_ctx(ctx: *mut Ctx) -> Option<*mut Task> {
    if ctx.is_null() || w().running != ctx as *const Ctx { return None; }
    Some((*ctx).task)
}
#[inline(always)] unsafe fn check_future(f: *mut Task) -> Option<*mut Task> {
    if f.is_null() || (f as usize) % BLOCK != 0 || (*f).ident != LIVE { return None; }
    Some(f)
}

#[inline(always)] unsafe fn spawn_inner(p: *const Policy, c: *const Closure) -> *mut Task {
    if p.is_null() || c.is_null() || (*p).struct_size != std::mem::size_of::<Policy>() || (*c).struct_size != std::mem::size_of::<Closure>() { return null_mut(); }
    let c = &*c;
    let prio = (*p).priority;
    if !(0..3).contains(&prio) || c.function.is_none() || (c.state.is_null() && c.state_size > 0) || c.state_size > BLOCK - HEADER - 16 || c.result_size > 16 { return null_mut(); }
    if w().nonempty != 0 { run_ready(); }
    let t = alloc();
    (*t).ident = LIVE; (*t).refs = 2; (*t).pending = 0; (*t).flags = 0;
    (*t).prio = prio as u32; (*t).result_size = c.result_size as u32;
    (*t).func = c.function; (*t).destroy = c.destroy; (*t).waiter = null_mut();
    (*t).result = [0; 16];
    std::ptr::copy_nonoverlapping(c.state, (*t).state.as_mut_ptr(), c.state_size);
    w().spawned += 1;
    push(t, prio as u32);
    t
}

#[no_mangle] pub unsafe extern "C" fn td_task_spawn(ctx: *mut Ctx, p: *const Policy, c: *const Closure) -> *mut Task {
    if check_ctx(ctx).is_none() { return null_mut(); }
    spawn_inner(p, c)
}
#[no_mangle] pub unsafe extern "C" fn td_host_spawn(p: *const Policy, c: *const Closure) -> *mut Task { spawn_inner(p, c) }
#[no_mangle] pub unsafe extern "C" fn td_task_respawn_when_all_private(ctx: *mut Ctx, f: *const *mut Task, n: c_int, prio: i32) -> c_int {
    let Some(me) = check_ctx(ctx) else { return 2 };
    if n < 0 || (n > 0 && f.is_null()) || !(0..3).contains(&prio) || (*ctx).respawn { return 2; }
    for i in 0..n as usize {
        let d = *f.add(i);
        if d.is_null() { continue; }
        let Some(d) = check_future(d) else { return 3 };
        if d == me { return 2; }
        if (*d).flags & COMPLETE == 0 {
            if !(*d).waiter.is_null() { return 2; } // prototype: one waiter per task
            (*d).waiter = me;
            (*me).pending += 1;
        }
    }
    (*ctx).respawn = true; (*ctx).prio = prio as u32;
    0
}
#[no_mangle] pub unsafe extern "C" fn td_task_result(ctx: *mut Ctx) -> *mut c_void {
    match check_ctx(ctx) { Some(t) if (*t).result_size > 0 => (*t).result.as_mut_ptr().cast(), _ => null_mut() }
}
#[no_mangle] pub unsafe extern "C" fn td_future_get(f: *mut Task, out: *mut c_void, size: usize) -> c_int {
    let Some(t) = check_future(f) else { return 3 };
    if (*t).flags & COMPLETE == 0 { return 15; }
    if size != (*t).result_size as usize || (size > 0 && out.is_null()) { return 2; }
    std::ptr::copy_nonoverlapping((*t).result.as_ptr(), out.cast::<u8>(), size);
    0
}
#[no_mangle] pub unsafe extern "C" fn td_future_release(f: *mut Task) -> c_int {
    if f.is_null() { return 0; }
    let Some(t) = check_future(f) else { return 3 };
    drop_ref(t);
    0
}
#[no_mangle] pub unsafe extern "C" fn td_wait(_s: *mut c_void) -> c_int { run_ready(); 0 }

static mut DUMMY: [u64; 8] = [0; 8];
unsafe fn dummy() -> *mut c_void { std::ptr::addr_of_mut!(DUMMY).cast() }
#[no_mangle] pub unsafe extern "C" fn td_initialize(_a: *const c_void) -> c_int { 0 }
#[no_mangle] pub unsafe extern "C" fn td_finalize() -> c_int { 0 }
#[no_mangle] pub unsafe extern "C" fn td_pool_create(_a: *const c_void, out: *mut *mut c_void) -> c_int { *out = dummy(); 0 }
#[no_mangle] pub unsafe extern "C" fn td_pool_release(_p: *mut c_void) -> c_int { 0 }
#[no_mangle] pub unsafe extern "C" fn td_scheduler_create(_a: *const c_void, out: *mut *mut c_void) -> c_int { *out = dummy(); 0 }
#[no_mangle] pub unsafe extern "C" fn td_scheduler_release(_p: *mut c_void) -> c_int { 0 }
#[no_mangle] pub unsafe extern "C" fn td_scheduler_statistics(_s: *mut c_void, out: *mut u64) -> c_int {
    let size = *(out as *const usize);
    std::ptr::write_bytes(out.add(1) as *mut u8, 0, size - 8);
    *out.add(1) = w().spawned; 0
}
#[no_mangle] pub unsafe extern "C" fn td_space_threads(out: *mut *mut c_void) -> c_int { *out = dummy(); 0 }
#[no_mangle] pub unsafe extern "C" fn td_space_mask(_s: *mut c_void, _f: f64, out: *mut *mut c_void) -> c_int { *out = dummy(); 0 }
#[no_mangle] pub unsafe extern "C" fn td_space_release(_s: *mut c_void) -> c_int { 0 }
#[no_mangle] pub extern "C" fn td_last_error_message() -> *const c_char { c"floor probe".as_ptr() }
#[no_mangle] pub extern "C" fn td_status_string(_s: c_int) -> *const c_char { c"status".as_ptr() }
#[no_mangle] pub extern "C" fn td_version_string() -> *const c_char { c"floor-probe".as_ptr() }
