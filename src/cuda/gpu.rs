//! The GPU this process uses: its primary context, bound to each calling thread, and the embedded
//! kernel modules, loaded on first use. Every device operation starts from `Gpu::get`, which
//! turns "no driver", "no device" and driver failures into `Unavailable` errors that say why.

use super::detect::{self, CudaStatus};
use super::kernels;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime;
use cudarc::driver::{result, safe::CudaContext, sys, DriverError};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

/// The device and its context; shared by every buffer and pool made on it.
pub struct Gpu {
    context: Arc<CudaContext>,
    ordinal: usize,
    /// Loaded modules by name; never unloaded, so their functions stay valid.
    modules: Mutex<HashMap<&'static str, Module>>,
}

struct Module(sys::CUmodule);
// SAFETY: a CUmodule handle may be used from any thread once loaded (CUDA driver API).
unsafe impl Send for Module {}

/// A kernel of a loaded module.
#[derive(Clone, Copy)]
pub(crate) struct Kernel(sys::CUfunction);
// SAFETY: CUfunction handles are thread-safe to launch (CUDA driver API).
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

static GPU: OnceLock<std::result::Result<Arc<Gpu>, Error>> = OnceLock::new();

impl Gpu {
    /// The process' GPU (the runtime's `device_id`, else device 0), its context bound to the
    /// calling thread. The device is chosen at the first call; later calls return the same one.
    ///
    /// Errors: `Unavailable` without driver or device (the message says which).
    pub fn get() -> Result<Arc<Gpu>> {
        let gpu = GPU.get_or_init(|| Gpu::open().map(Arc::new)).clone()?;
        gpu.bind()?;
        Ok(gpu)
    }

    fn open() -> Result<Gpu> {
        let ordinal = runtime::cuda_device_ordinal().unwrap_or(0) as usize;
        let devices = match detect::detect() {
            CudaStatus::Devices(devices) => devices,
            status => return Err(unavailable(&format!("no usable GPU: {}", status.reason()))),
        };
        if ordinal >= devices.len() {
            return Err(unavailable(&format!(
                "no usable GPU: device_id {ordinal} was asked for, but the driver reports {} \
                 device(s); pass a smaller device_id to td_initialize",
                devices.len()
            )));
        }
        let context = CudaContext::new(ordinal).map_err(|e| driver_error("opening the GPU", e))?;
        Ok(Gpu {
            context,
            ordinal,
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// Makes this GPU's context current on the calling thread (driver calls act on it).
    pub(crate) fn bind(&self) -> Result<()> {
        self.context
            .bind_to_thread()
            .map_err(|e| driver_error("binding the GPU context to this thread", e))
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Waits for all work on the GPU; reports errors of earlier kernels.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current on this thread.
        unsafe { sys::cuCtxSynchronize() }
            .result()
            .map_err(|e| driver_error("waiting for the GPU", e))
    }

    /// Kernel `name` of the embedded module `module` (a `cuda/*.cu` file stem).
    /// Errors: `Unavailable` when the library was built without nvcc.
    pub(crate) fn kernel(&self, module: &'static str, name: &str) -> Result<Kernel> {
        self.kernel_from(kernels::FATBINS, module, name)
    }

    pub(crate) fn kernel_from(
        &self,
        images: &'static [(&'static str, &'static [u8])],
        module: &'static str,
        name: &str,
    ) -> Result<Kernel> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        let loaded = match modules.get(module) {
            Some(m) => m.0,
            None => {
                let image = kernels::image(images, module)?;
                // SAFETY: `image` is a complete fatbin, 8-byte aligned, alive during the call.
                let m = unsafe { result::module::load_data(image.as_ptr().cast()) }
                    .map_err(|e| driver_error(&format!("loading the {module} kernels"), e))?;
                modules.insert(module, Module(m));
                m
            }
        };
        let cname = CString::new(name).expect("kernel names have no NUL");
        // SAFETY: `loaded` is a module that is never unloaded.
        unsafe { result::module::get_function(loaded, cname) }
            .map(Kernel)
            .map_err(|e| driver_error(&format!("finding kernel {name} in {module}"), e))
    }

    /// Launches `kernel` on the default stream and waits for it.
    ///
    /// # Safety
    /// `params` must point to values whose types and order match the kernel's parameters, and
    /// every address they hold must be valid for what the kernel does with it.
    pub(crate) unsafe fn launch(
        &self,
        kernel: Kernel,
        grid: u32,
        block: u32,
        params: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        self.launch_2d(kernel, grid, (block, 1), params)
    }

    /// `launch` with a two-dimensional block of `block.0 x block.1` threads.
    ///
    /// # Safety
    /// As `launch`.
    pub(crate) unsafe fn launch_2d(
        &self,
        kernel: Kernel,
        grid: u32,
        block: (u32, u32),
        params: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        result::launch_kernel(
            kernel.0,
            (grid, 1, 1),
            (block.0, block.1, 1),
            0,
            result::stream::null(),
            params,
        )
        .map_err(|e| driver_error("launching a kernel", e))?;
        self.synchronize()
    }

    /// Number of streaming multiprocessors, to size grids.
    pub(crate) fn multiprocessors(&self) -> u32 {
        self.context
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_or(1, |n| n.max(1) as u32)
    }

    /// (free, total) bytes of device memory.
    pub(crate) fn memory_info(&self) -> Option<(usize, usize)> {
        self.context.mem_get_info().ok()
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ordinal)
            .finish()
    }
}

/// Why GPU operations cannot run, with what to do about it.
pub(crate) fn unavailable(reason: &str) -> Error {
    Error::new(ErrorKind::Unavailable, format!("cuda: {reason}"))
}

/// A failed driver call: out-of-memory becomes `OutOfMemory`, anything else `Internal`, with the
/// driver's name and text of the error.
pub(crate) fn driver_error(what: &str, e: DriverError) -> Error {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        ErrorKind::OutOfMemory
    } else {
        ErrorKind::Internal
    };
    Error::new(kind, format!("cuda: {what} failed: {name} ({text})"))
}
