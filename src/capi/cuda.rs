//! CUDA queries: whether a GPU can be used, and how many there are. No GPU or no driver is a
//! normal state: these functions never fail because of it.

use super::boundary::{call, Out};
use super::status::td_status;
use crate::cuda::{self, CudaStatus};
use std::ffi::c_int;

/// Returns 1 if TD_SPACE_CUDA can be used: the library was built with CUDA support, an NVIDIA
/// driver is installed and it reports at least one device; 0 otherwise (td_configuration_string
/// says which part is missing). Whether the kernels of the library itself were built is a
/// separate matter: operations that need them report TD_ERROR_UNAVAILABLE.
///
/// Thread safety: any thread, any time, also before td_initialize.
#[no_mangle]
pub extern "C" fn td_cuda_available() -> c_int {
    super::boundary::call_or("td_cuda_available", || Ok(cuda::detect().available()))
        .map_or(0, c_int::from)
}

/// Writes to `*out` the number of CUDA devices the driver reports: 0 without a driver or device.
///
/// Thread safety: any thread, any time, also before td_initialize.
/// Returns TD_OK; TD_ERROR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn td_cuda_device_count(out: *mut c_int) -> td_status {
    call("td_cuda_device_count", || {
        let out = Out::new(out, "out")?;
        let count = match cuda::detect() {
            CudaStatus::Devices(devices) => devices.len(),
            _ => 0,
        };
        out.write(c_int::try_from(count).unwrap_or(c_int::MAX));
        Ok(())
    })
}
