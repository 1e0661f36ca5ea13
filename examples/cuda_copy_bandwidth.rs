//! Bandwidth of taskdag's device copy layer (`DeviceBuffer` copies, the permuting
//! `copy_strided`) and of `deep_copy` between device views (layout permutes on the device,
//! host<->device between layouts) against the bare driver copy it is built on, for the same
//! bytes; `bench/cuda_pool/cuda_memcpy.cu` measures cudaMemcpy for the same cases.
//!
//!     cargo run --release --example cuda_copy_bandwidth -- [--mib 256] [--reps 7]
//!
//! Prints one JSON line per case (median of the repetitions after one warm-up) and exits 2,
//! after saying why, on a machine without a usable GPU.

use cudarc::driver::result;
use std::time::Instant;
use taskdag::cuda::{copy_strided, DeviceBuffer, Gpu, PinnedBuffer, StridedCopy};
use taskdag::memory_space::MemorySpace;
use taskdag::view::{deep_copy, ElementType, Layout, View, ViewSpec};

fn median_seconds(reps: usize, mut run: impl FnMut()) -> f64 {
    run();
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn report(implementation: &str, case: &str, mib: usize, bytes: usize, seconds: f64) {
    println!(
        "{{\"type\":\"measurement\",\"impl\":\"{implementation}\",\"case\":\"{case}\",\
         \"mib\":{mib},\"gb_per_s\":{:.2}}}",
        bytes as f64 / seconds / 1e9
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut mib, mut reps) = (256usize, 7usize);
    while let Some(option) = args.next() {
        let value: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            eprintln!("usage: cuda_copy_bandwidth [--mib N] [--reps N]");
            std::process::exit(2)
        });
        match option.as_str() {
            "--mib" => mib = value,
            "--reps" => reps = value.max(1),
            _ => {
                eprintln!("unknown option {option}");
                std::process::exit(2)
            }
        }
    }
    let gpu = Gpu::get().unwrap_or_else(|e| {
        eprintln!("skipped: {}", e.message());
        std::process::exit(2)
    });
    let bytes = mib << 20;
    let mut device = DeviceBuffer::new(bytes).expect("device buffer");
    let mut device2 = DeviceBuffer::new(bytes).expect("device buffer");
    let mut pageable = vec![1u8; bytes];
    let mut pinned = PinnedBuffer::new(bytes).expect("pinned buffer");
    for (case, host) in [
        ("pageable", &mut pageable[..]),
        ("pinned", pinned.as_mut_slice()),
    ] {
        let t = median_seconds(reps, || device.copy_from_host(0, host).unwrap());
        report("taskdag", &format!("h2d_{case}"), mib, bytes, t);
        // SAFETY: `device` holds `bytes` bytes and the context is current.
        let t = median_seconds(reps, || unsafe {
            result::memcpy_htod_sync(device.address(), &host[..]).unwrap()
        });
        report("driver", &format!("h2d_{case}"), mib, bytes, t);
        let t = median_seconds(reps, || device.copy_to_host(0, host).unwrap());
        report("taskdag", &format!("d2h_{case}"), mib, bytes, t);
        // SAFETY: as above.
        let t = median_seconds(reps, || unsafe {
            result::memcpy_dtoh_sync(&mut host[..], device.address()).unwrap()
        });
        report("driver", &format!("d2h_{case}"), mib, bytes, t);
    }
    let t = median_seconds(reps, || {
        device2.copy_from_device(0, &device, 0, bytes).unwrap()
    });
    report("taskdag", "d2d", mib, bytes, t);
    // A transpose of 4-byte elements: every element read and written once, like the D2D copy.
    let side = ((bytes / 4) as f64).sqrt() as usize;
    let shape = StridedCopy {
        elem_bytes: 4,
        extents: vec![side, side],
        src_strides: vec![side as isize, 1],
        dst_strides: vec![1, side as isize],
    };
    let t = median_seconds(reps, || {
        copy_strided(&mut device2, 0, &device, 0, &shape).unwrap()
    });
    report("taskdag", "d2d_transpose", mib, side * side * 4, t);
    drop((device, device2, pageable, pinned));
    view_copies(mib, reps);
    gpu.synchronize().unwrap();
    println!("{{\"type\":\"done\",\"valid\":true}}");
}

/// A view copy: name, element type, extents, (layout, space) of the source and destination.
type Case = (
    &'static str,
    ElementType,
    Vec<usize>,
    (Layout, MemorySpace),
    (Layout, MemorySpace),
);

/// deep_copy between views of `mib` MiB: Left -> Right on the device (2-D of 4- and 8-byte
/// elements, 3-D of 8-byte elements), and host (pinned) <-> device with and without a layout
/// change.
fn view_copies(mib: usize, reps: usize) {
    let view = |element: ElementType, extents: &[usize], layout, space| {
        View::allocate(
            &ViewSpec::new("bench", element, extents)
                .layout(layout)
                .space(space),
        )
        .expect("view")
    };
    let elements = |size: usize| (mib << 20) / size;
    let square = |size: usize| (elements(size) as f64).sqrt() as usize;
    let cube = |size: usize| (elements(size) as f64).cbrt() as usize;
    let (f, d) = (ElementType::F32, ElementType::F64);
    let (n4, n8, c8) = (square(4), square(8), cube(8));
    use Layout::{Left, Right};
    use MemorySpace::{Cuda, CudaHostPinned as Pinned};
    let cases: [Case; 7] = [
        (
            "view_d2d_same_f64",
            d,
            vec![n8, n8],
            (Right, Cuda),
            (Right, Cuda),
        ),
        (
            "view_d2d_l2r_2d_f32",
            f,
            vec![n4, n4],
            (Left, Cuda),
            (Right, Cuda),
        ),
        (
            "view_d2d_l2r_2d_f64",
            d,
            vec![n8, n8],
            (Left, Cuda),
            (Right, Cuda),
        ),
        (
            "view_d2d_l2r_3d_f64",
            d,
            vec![c8, c8, c8],
            (Left, Cuda),
            (Right, Cuda),
        ),
        (
            "view_h2d_same_f64",
            d,
            vec![n8, n8],
            (Right, Pinned),
            (Right, Cuda),
        ),
        (
            "view_h2d_l2r_2d_f64",
            d,
            vec![n8, n8],
            (Left, Pinned),
            (Right, Cuda),
        ),
        (
            "view_d2h_l2r_2d_f64",
            d,
            vec![n8, n8],
            (Left, Cuda),
            (Right, Pinned),
        ),
    ];
    for (case, element, extents, (src_layout, src_space), (dst_layout, dst_space)) in cases {
        let src = view(element, &extents, src_layout, src_space);
        let dst = view(element, &extents, dst_layout, dst_space);
        // SAFETY: this thread alone uses the views.
        let t = median_seconds(reps, || unsafe { deep_copy(&dst, &src).unwrap() });
        report("taskdag", case, mib, src.size() * element.size(), t);
    }
}
