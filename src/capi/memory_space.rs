//! Memory-space arguments: a C integer checked against the spaces this build knows.

use super::boundary::enum_arg;
use super::error::CResult;
use crate::memory_space::MemorySpace;

/// A memory space, one of the TD_SPACE_* values.
pub type td_memory_space = i32;

/// Host memory.
pub const TD_SPACE_HOST: td_memory_space = 0;

pub(crate) fn memory_space_arg(value: td_memory_space, name: &str) -> CResult<MemorySpace> {
    enum_arg(
        value,
        name,
        &[(TD_SPACE_HOST, MemorySpace::Host, "TD_SPACE_HOST")],
    )
}
