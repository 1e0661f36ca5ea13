//! Where memory lives. Every API that takes a space accepts all of them; the CUDA spaces are
//! served by the CUDA back-end and report `Unavailable` where it is absent.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemorySpace {
    /// Ordinary host memory.
    #[default]
    Host,
    /// Device memory of the current CUDA device.
    Cuda,
    /// Page-locked host memory, addressable from the device.
    CudaHostPinned,
}

impl fmt::Display for MemorySpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemorySpace::Host => "host",
            MemorySpace::Cuda => "cuda",
            MemorySpace::CudaHostPinned => "cuda host-pinned",
        })
    }
}
