//! Where memory lives. Host memory today; the CUDA spaces join this enum in the GPU back-end
//! without changing any API that takes a space.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemorySpace {
    /// Ordinary host memory.
    #[default]
    Host,
}

impl fmt::Display for MemorySpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemorySpace::Host => "host",
        })
    }
}
