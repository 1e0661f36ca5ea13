//! Finding the CUDA driver and its devices without ever failing: cudarc panics on first use when
//! `libcuda` is missing, so the library is probed before any driver call.

/// What the runtime found of CUDA on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaStatus {
    /// The library was built without the `cuda` feature.
    NotBuilt,
    /// No loadable `libcuda` (no NVIDIA driver on this machine).
    NoDriver,
    /// The driver loaded but refused to initialize or enumerate; the text says why.
    DriverError(String),
    /// The driver works; zero devices is possible.
    Devices(Vec<CudaDevice>),
}

/// One visible GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaDevice {
    pub ordinal: i32,
    pub name: String,
    pub total_memory_bytes: usize,
}

/// Probes the driver and lists the devices. Safe to call any number of times.
pub fn detect() -> CudaStatus {
    imp::detect()
}

#[cfg(feature = "cuda")]
mod imp {
    use super::{CudaDevice, CudaStatus};
    use cudarc::driver::result;

    pub fn detect() -> CudaStatus {
        // SAFETY: only tries to dlopen the driver library; no driver function is called.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return CudaStatus::NoDriver;
        }
        match enumerate() {
            Ok(devices) => CudaStatus::Devices(devices),
            Err(e) => CudaStatus::DriverError(e.to_string()),
        }
    }

    fn enumerate() -> Result<Vec<CudaDevice>, result::DriverError> {
        result::init()?;
        let count = result::device::get_count()?;
        (0..count)
            .map(|ordinal| {
                let dev = result::device::get(ordinal)?;
                // SAFETY: `dev` was returned by cuDeviceGet for a valid ordinal.
                let total_memory_bytes = unsafe { result::device::total_mem(dev)? };
                let name = result::device::get_name(dev)?;
                Ok(CudaDevice {
                    ordinal,
                    name,
                    total_memory_bytes,
                })
            })
            .collect()
    }
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use super::CudaStatus;

    pub fn detect() -> CudaStatus {
        CudaStatus::NotBuilt
    }
}
