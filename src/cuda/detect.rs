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

impl CudaStatus {
    /// Whether at least one device can be used.
    pub fn available(&self) -> bool {
        matches!(self, CudaStatus::Devices(d) if !d.is_empty())
    }

    /// Why no device can be used, or the device count; for messages and skip lines.
    pub fn reason(&self) -> String {
        match self {
            CudaStatus::NotBuilt => "library built without the `cuda` feature".into(),
            CudaStatus::NoDriver => "no NVIDIA driver (libcuda.so.1 not found)".into(),
            CudaStatus::DriverError(e) => format!("the CUDA driver failed: {e}"),
            CudaStatus::Devices(d) if d.is_empty() => "the driver reports no CUDA device".into(),
            CudaStatus::Devices(d) => format!("{} device(s)", d.len()),
        }
    }
}

/// One visible GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaDevice {
    pub ordinal: i32,
    pub name: String,
    pub total_memory_bytes: usize,
    /// Compute capability (major, minor), e.g. (9, 0) for an H100.
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
}

/// Probes the driver and lists the devices. Safe to call any number of times.
pub fn detect() -> CudaStatus {
    imp::detect()
}

#[cfg(feature = "cuda")]
mod imp {
    use super::{CudaDevice, CudaStatus};
    use cudarc::driver::{result, sys::CUdevice_attribute as Attribute};

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
                let attribute = |a| unsafe { result::device::get_attribute(dev, a) };
                // SAFETY: as above.
                let total_memory_bytes = unsafe { result::device::total_mem(dev)? };
                Ok(CudaDevice {
                    ordinal,
                    name: result::device::get_name(dev)?,
                    total_memory_bytes,
                    compute_capability: (
                        attribute(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                        attribute(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
                    ),
                    multiprocessors: attribute(
                        Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                    )?,
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
