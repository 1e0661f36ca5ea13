//! Filling device memory with a repeated element: the driver's memset for 1, 2 and 4 bytes, the
//! `td_fill` kernel (`cuda/fill.cu`) for other element sizes.

use super::gpu::{driver_error, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;

/// Largest element `fill` repeats.
pub const MAX_FILL_ELEMENT: usize = 16;

/// Argument of `td_fill`; `#[repr(C)]` as `td_fill_desc` in `cuda/fill.cu`.
#[repr(C)]
struct FillDesc {
    dst: u64,
    count: u64,
    elem_bytes: u32,
    pattern: [u8; MAX_FILL_ELEMENT],
}

/// Writes `count` copies of `pattern` from device address `dst` on.
///
/// # Safety
/// `dst` must be device-accessible and writable for `count * pattern.len()` bytes.
pub(crate) unsafe fn fill_raw(gpu: &Gpu, dst: u64, count: usize, pattern: &[u8]) -> Result<()> {
    if pattern.is_empty() || pattern.len() > MAX_FILL_ELEMENT {
        return Err(Error::invalid_argument(format!(
            "cuda fill: the element is {} bytes; it must be 1 to {MAX_FILL_ELEMENT} bytes",
            pattern.len()
        )));
    }
    if count == 0 {
        return Ok(());
    }
    gpu.bind()?;
    let done = match pattern.len() {
        1 => sys::cuMemsetD8_v2(dst, pattern[0], count),
        2 if dst % 2 == 0 => {
            sys::cuMemsetD16_v2(dst, u16::from_ne_bytes([pattern[0], pattern[1]]), count)
        }
        4 if dst % 4 == 0 => sys::cuMemsetD32_v2(
            dst,
            u32::from_ne_bytes(pattern.try_into().expect("4 bytes")),
            count,
        ),
        _ => return fill_kernel(gpu, dst, count, pattern),
    };
    done.result()
        .map_err(|e| driver_error("filling device memory", e))?;
    gpu.synchronize()
}

unsafe fn fill_kernel(gpu: &Gpu, dst: u64, count: usize, pattern: &[u8]) -> Result<()> {
    let kernel = gpu.kernel("fill", "td_fill")?;
    let mut desc = FillDesc {
        dst,
        count: count as u64,
        elem_bytes: pattern.len() as u32,
        pattern: [0; MAX_FILL_ELEMENT],
    };
    desc.pattern[..pattern.len()].copy_from_slice(pattern);
    let block = 256u32;
    let grid = (count as u64)
        .div_ceil(u64::from(block))
        .min(u64::from(gpu.multiprocessors()) * 16) as u32;
    let mut params = [&mut desc as *mut FillDesc as *mut c_void];
    gpu.launch(kernel, grid.max(1), block, &mut params)
}
