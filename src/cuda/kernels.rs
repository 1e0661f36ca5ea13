//! The fatbins that build.rs compiled from `cuda/*.cu` (and, in test builds, `cuda/tests/*.cu`),
//! embedded in the library.

use super::gpu::unavailable;
use crate::error::Result;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// Whether the library carries its GPU kernels (it was built with nvcc).
pub fn built() -> bool {
    NVCC_VERSION.is_some()
}

/// The nvcc version that compiled the kernels, if any.
pub fn nvcc_version() -> Option<&'static str> {
    NVCC_VERSION
}

/// The image of module `name`, copied into 8-byte-aligned memory as the driver expects
/// (`include_bytes!` data is only byte-aligned).
pub(crate) fn image(images: &[(&str, &[u8])], name: &str) -> Result<Vec<u64>> {
    let Some((_, bytes)) = images.iter().find(|(stem, _)| *stem == name) else {
        return Err(unavailable(if built() {
            "this library has no kernels of that name (a build problem; please report it)"
        } else {
            "library built without nvcc, so it has no GPU kernels; install nvcc \
             (scripts/ensure-nvcc.sh) and rebuild"
        }));
    };
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    for (word, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        *word = u64::from_ne_bytes(b);
    }
    Ok(words)
}
