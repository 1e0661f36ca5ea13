//! CUDA back-end. The driver is loaded at run time (cudarc with dynamic loading), so one library
//! binary serves machines with and without a GPU (DESIGN.md §5).

mod detect;

pub use detect::{detect, CudaDevice, CudaStatus};
