//! Atomics used by the lock-free structures, switched to loom's checked versions under `--cfg loom`
//! so the same code is model-checked.

#[cfg(loom)]
pub(crate) use loom::sync::atomic;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic;
