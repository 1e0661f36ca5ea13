//! Atomics used by the lock-free structures, switched to loom's checked versions under `--cfg loom`
//! so the same code is model-checked.

#[cfg(loom)]
pub(crate) use loom::sync::atomic;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

/// Parking, thread handles and the spin hint of the sleep/wake handshakes (exec/mailbox.rs),
/// loom's under `--cfg loom` so that a lost wake-up shows up as a deadlock in the model.
#[cfg(loom)]
pub(crate) use loom::{
    hint::spin_loop,
    thread::{current as current_thread, park, Thread},
};

#[cfg(not(loom))]
pub(crate) use std::{
    hint::spin_loop,
    thread::{current as current_thread, park, Thread},
};
