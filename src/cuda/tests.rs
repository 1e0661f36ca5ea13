//! GPU tests: copies, fills, strided copies and the device pool, run on the GPU. Without a GPU
//! (or without kernels) each prints a skip line naming the reason, written past the test
//! harness' capture so that it shows in the test output, and passes.

use super::gpu::Gpu;
use super::kernels::{self, TEST_FATBINS};
use super::memory::{DeviceBuffer, PinnedBuffer};
use super::pointer::{pointer_kind, PointerKind};
use super::pool::DevicePool;
use super::pool_ref::DevicePoolRef;
use super::strided_copy::{copy_strided, copy_strided_raw, StridedCopy};
use crate::error::ErrorKind;
use crate::pool::PoolConfig;
use std::ffi::c_void;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// One GPU test at a time: the pool tests fill the device and the stress test wants it alone.
static GPU_TESTS: Mutex<()> = Mutex::new(());

/// The GPU, or `None` after printing why this test is skipped.
fn gpu_or_skip(test: &str) -> Option<Arc<Gpu>> {
    let reason = match Gpu::get() {
        Ok(gpu) if kernels::built() => return Some(gpu),
        Ok(_) => "library built without nvcc".to_string(),
        Err(e) => e.message().to_string(),
    };
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
    None
}

/// xorshift64: reproducible random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn upload(bytes: &[u8]) -> DeviceBuffer {
    let mut buffer = DeviceBuffer::new(bytes.len()).unwrap();
    buffer.copy_from_host(0, bytes).unwrap();
    buffer
}

fn download(buffer: &DeviceBuffer) -> Vec<u8> {
    let mut bytes = vec![0u8; buffer.len()];
    buffer.copy_to_host(0, &mut bytes).unwrap();
    bytes
}

fn words_of(buffer: &DeviceBuffer) -> Vec<u64> {
    download(buffer)
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn ints_of(buffer: &DeviceBuffer) -> Vec<i32> {
    download(buffer)
        .chunks_exact(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn param<T>(value: &mut T) -> *mut c_void {
    value as *mut T as *mut c_void
}

/// Strides of a layout of `extents`: row-major (LayoutRight), column-major (LayoutLeft), or a
/// padded, permuted stride order (LayoutStride); returns the strides and the span in elements.
fn layout_strides(kind: u64, extents: &[usize], rng: &mut Rng) -> (Vec<isize>, usize) {
    let rank = extents.len();
    let mut order: Vec<usize> = (0..rank).collect();
    match kind {
        0 => order.reverse(), // last dimension fastest
        1 => {}               // first dimension fastest
        _ => {
            for i in (1..rank).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
    }
    let mut strides = vec![0isize; rank];
    let mut next = 1usize;
    for &d in &order {
        strides[d] = next as isize;
        let padding = if kind >= 2 { rng.below(3) as usize } else { 0 };
        next *= extents[d] + padding;
    }
    (strides, next)
}

/// The host reference of a strided copy: every index of `extents`, element by element.
fn reference_copy(shape: &StridedCopy, src: &[u8], dst: &mut [u8]) {
    let rank = shape.extents.len();
    let mut index = vec![0usize; rank];
    let e = shape.elem_bytes;
    for _ in 0..shape.count() {
        let offset = |strides: &[isize]| {
            index
                .iter()
                .zip(strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>() as usize
                * e
        };
        let (s, d) = (offset(&shape.src_strides), offset(&shape.dst_strides));
        dst[d..d + e].copy_from_slice(&src[s..s + e]);
        for k in (0..rank).rev() {
            index[k] += 1;
            if index[k] < shape.extents[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

#[test]
fn strided_copy_matches_the_host_reference_for_random_shapes_and_layout_pairs() {
    let Some(gpu) = gpu_or_skip("strided_copy_matches_the_host_reference") else {
        return;
    };
    let _serial = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    let mut rng = Rng(0x5eed_c0de);
    let mut cases = 0;
    for elem_bytes in [1usize, 2, 4, 8, 12, 16] {
        for _ in 0..12 {
            let max_rank = if rng.below(4) == 0 { 8 } else { 4 };
            let rank = 1 + rng.below(max_rank) as usize;
            let max_extent = if rank > 4 { 3 } else { 9 };
            let extents: Vec<usize> = (0..rank)
                .map(|_| 1 + rng.below(max_extent) as usize)
                .collect();
            for src_kind in 0..3 {
                for dst_kind in 0..3 {
                    let (src_strides, src_span) = layout_strides(src_kind, &extents, &mut rng);
                    let (dst_strides, dst_span) = layout_strides(dst_kind, &extents, &mut rng);
                    let shape = StridedCopy {
                        elem_bytes,
                        extents: extents.clone(),
                        src_strides,
                        dst_strides,
                    };
                    let src = rng.bytes(src_span * elem_bytes);
                    let before = rng.bytes(dst_span * elem_bytes);
                    let mut expected = before.clone();
                    reference_copy(&shape, &src, &mut expected);
                    let device_src = upload(&src);
                    let mut device_dst = upload(&before);
                    copy_strided(&mut device_dst, 0, &device_src, 0, &shape).unwrap();
                    assert_eq!(download(&device_dst), expected, "{shape:?}");
                    cases += 1;
                }
            }
        }
    }
    // A pinned host source, read by the kernel over the link.
    let shape = StridedCopy {
        elem_bytes: 4,
        extents: vec![33, 17],
        src_strides: vec![17, 1],
        dst_strides: vec![1, 33],
    };
    let mut pinned = PinnedBuffer::new(33 * 17 * 4).unwrap();
    pinned
        .as_mut_slice()
        .copy_from_slice(&rng.bytes(33 * 17 * 4));
    let mut expected = vec![0u8; 33 * 17 * 4];
    reference_copy(&shape, pinned.as_slice(), &mut expected);
    let dst = DeviceBuffer::new(expected.len()).unwrap();
    // SAFETY: both sides span exactly 33 * 17 elements of their buffers.
    unsafe { copy_strided_raw(&gpu, dst.address(), pinned.address(), &shape).unwrap() };
    assert_eq!(download(&dst), expected);
    assert!(cases >= 600, "{cases} cases");
}

#[test]
fn strided_copy_rejects_ranges_outside_the_buffers() {
    let Some(_gpu) = gpu_or_skip("strided_copy_rejects_ranges_outside_the_buffers") else {
        return;
    };
    let src = DeviceBuffer::new(64).unwrap();
    let mut dst = DeviceBuffer::new(64).unwrap();
    let shape = StridedCopy {
        elem_bytes: 8,
        extents: vec![4, 4],
        src_strides: vec![4, 1],
        dst_strides: vec![1, 4],
    };
    let e = copy_strided(&mut dst, 0, &src, 0, &shape).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("64-byte buffer"), "{}", e.message());
}

#[test]
fn host_device_round_trips_and_fills_preserve_every_byte() {
    let Some(_gpu) = gpu_or_skip("host_device_round_trips_and_fills_preserve_every_byte") else {
        return;
    };
    let _serial = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    let mut rng = Rng(42);
    for bytes in [0usize, 1, 7, 4096, (1 << 20) + 3] {
        let data = rng.bytes(bytes);
        let first = upload(&data);
        let mut second = DeviceBuffer::new(bytes).unwrap();
        second.copy_from_device(0, &first, 0, bytes).unwrap();
        assert_eq!(
            download(&second),
            data,
            "{bytes} bytes through two device buffers"
        );
        let mut pinned = PinnedBuffer::new(bytes).unwrap();
        second.copy_to_host(0, pinned.as_mut_slice()).unwrap();
        assert_eq!(
            pinned.as_slice(),
            &data[..],
            "{bytes} bytes into pinned memory"
        );
        let mut third = DeviceBuffer::new(bytes).unwrap();
        third.copy_from_host(0, pinned.as_slice()).unwrap();
        assert_eq!(download(&third), data, "{bytes} bytes from pinned memory");
    }
    for elem in [1usize, 2, 3, 4, 8, 12, 16] {
        let pattern = rng.bytes(elem);
        let count = 1001;
        let mut buffer = upload(&vec![0xee; count * elem + 2]);
        buffer.fill(1, count, &pattern).unwrap();
        let got = download(&buffer);
        assert_eq!(
            (got[0], got[count * elem + 1]),
            (0xee, 0xee),
            "fill of {elem}-byte elements overran"
        );
        for chunk in got[1..=count * elem].chunks_exact(elem) {
            assert_eq!(chunk, &pattern[..], "fill of {elem}-byte elements");
        }
    }
    let mut buffer = DeviceBuffer::new(16).unwrap();
    let e = buffer.copy_from_host(8, &[0; 9]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(buffer.fill(0, 1, &[0; 17]).is_err());
}

#[test]
fn device_out_of_memory_is_reported_not_aborted() {
    let Some(_gpu) = gpu_or_skip("device_out_of_memory_is_reported_not_aborted") else {
        return;
    };
    let e = DeviceBuffer::new(1 << 50).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert!(e.message().contains("MiB free"), "{}", e.message());
    let e = DevicePool::new(&PoolConfig {
        min_total_alloc_size: 1 << 50,
        min_superblock_size: 1 << 20,
        thread_cache: true,
        ..PoolConfig::default()
    })
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{}", e.message());
}

#[test]
fn pointer_attributes_tell_device_pinned_and_host_memory_apart() {
    let Some(_gpu) = gpu_or_skip("pointer_attributes_tell_memory_apart") else {
        return;
    };
    let device = DeviceBuffer::new(64).unwrap();
    let pinned = PinnedBuffer::new(64).unwrap();
    let host = [0u8; 64];
    assert_eq!(pointer_kind(device.address()), PointerKind::Device);
    assert_eq!(pointer_kind(pinned.address()), PointerKind::PinnedHost);
    assert_eq!(pointer_kind(host.as_ptr() as u64), PointerKind::Unknown);
}

const ALLOCATED: usize = 0;
const FAILED: usize = 1;
const CORRUPTED: usize = 2;
const BAD_FREES: usize = 3;
const MISALIGNED: usize = 4;

#[test]
fn device_pool_stress_with_132x32_warps_keeps_blocks_disjoint_and_statistics_exact() {
    let Some(gpu) = gpu_or_skip("device_pool_stress_with_132x32_warps") else {
        return;
    };
    let _serial = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    let pool = DevicePool::new(&PoolConfig {
        min_total_alloc_size: 128 << 20,
        min_block_alloc_size: 16,
        max_block_alloc_size: 512,
        min_superblock_size: 64 << 10,
        thread_cache: true,
    })
    .unwrap();
    let kernel = gpu
        .kernel_from(TEST_FATBINS, "pool_tests", "td_test_pool_stress")
        .unwrap();
    let (blocks, threads, mut rounds) = (132u32, 1024u32, 74u32);
    // 132 x 1024 threads x 74 rounds = 1.0e7 allocate + free pairs.
    let report = upload(&[0u8; 8 * 8]);
    let mut pool_ref: DevicePoolRef = pool.device_ref();
    let mut report_address = report.address();
    // SAFETY: the parameters match td_test_pool_stress; the report holds 8 counters.
    unsafe {
        gpu.launch(
            kernel,
            blocks,
            threads,
            &mut [
                param(&mut pool_ref),
                param(&mut rounds),
                param(&mut report_address),
            ],
        )
        .unwrap();
    }
    let report = words_of(&report);
    let pairs = u64::from(blocks * threads * rounds);
    assert_eq!(report[ALLOCATED] + report[FAILED], pairs);
    assert_eq!(
        report[FAILED], 0,
        "allocations failed in a pool 2x the peak use"
    );
    assert_eq!(
        report[CORRUPTED], 0,
        "blocks overlapped: another thread's pattern was found"
    );
    assert_eq!(report[BAD_FREES], 0);
    assert_eq!(report[MISALIGNED], 0);
    let stats = pool.usage_statistics().unwrap();
    assert_eq!(stats.consumed_blocks, 0, "{stats:?}");
    assert_eq!(stats.consumed_bytes, 0);
    assert_eq!(stats.failed_allocations, 0);
    assert_eq!(
        stats.reserved_bytes,
        stats.consumed_superblocks * stats.superblock_bytes
    );
    // At least one round's worth of the smallest blocks was live at once.
    assert!(stats.high_water_bytes > 0, "{stats:?}");
    assert!(stats.high_water_bytes <= stats.capacity_bytes);
}

/// Fills a fresh or reset pool of 1 KiB blocks from `n` threads, one block each; returns the
/// blocks (0 for NULL).
fn fill_pool(gpu: &Gpu, pool: &DevicePool, n: u32) -> Vec<u64> {
    let kernel = gpu
        .kernel_from(TEST_FATBINS, "pool_tests", "td_test_pool_fill")
        .unwrap();
    let blocks = upload(&vec![0xffu8; n as usize * 8]);
    let (mut pool_ref, mut size, mut address, mut count) =
        (pool.device_ref(), 1024usize, blocks.address(), n);
    // SAFETY: the parameters match td_test_pool_fill; `blocks` holds n pointers.
    unsafe {
        gpu.launch(
            kernel,
            n.div_ceil(256),
            256,
            &mut [
                param(&mut pool_ref),
                param(&mut size),
                param(&mut address),
                param(&mut count),
            ],
        )
        .unwrap();
    }
    words_of(&blocks)
}

/// Frees `blocks` (0 entries skipped) and returns the statuses (-1 for skipped).
fn free_blocks(gpu: &Gpu, pool: &DevicePool, blocks: &[u64]) -> Vec<i32> {
    let kernel = gpu
        .kernel_from(TEST_FATBINS, "pool_tests", "td_test_pool_free")
        .unwrap();
    let bytes: Vec<u8> = blocks.iter().flat_map(|b| b.to_ne_bytes()).collect();
    let device_blocks = upload(&bytes);
    let statuses = DeviceBuffer::new(blocks.len() * 4).unwrap();
    let (mut pool_ref, mut size, mut address, mut status_address, mut n) = (
        pool.device_ref(),
        1024usize,
        device_blocks.address(),
        statuses.address(),
        blocks.len() as u32,
    );
    // SAFETY: the parameters match td_test_pool_free; both arrays hold n entries.
    unsafe {
        gpu.launch(
            kernel,
            n.div_ceil(256),
            256,
            &mut [
                param(&mut pool_ref),
                param(&mut size),
                param(&mut address),
                param(&mut status_address),
                param(&mut n),
            ],
        )
        .unwrap();
    }
    ints_of(&statuses)
}

#[test]
fn device_pool_exhaustion_returns_null_counts_failures_and_reset_makes_it_reusable() {
    let Some(gpu) = gpu_or_skip("device_pool_exhaustion_and_reset") else {
        return;
    };
    let _serial = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    let pool = DevicePool::new(&PoolConfig {
        min_total_alloc_size: 1 << 20,
        min_block_alloc_size: 64,
        max_block_alloc_size: 1024,
        min_superblock_size: 16 << 10,
        thread_cache: true,
    })
    .unwrap();
    let capacity_blocks = (pool.layout().capacity() / 1024) as u64;
    let n = 3 * capacity_blocks as u32;
    for round in 0..2 {
        let blocks = fill_pool(&gpu, &pool, n);
        let mut granted: Vec<u64> = blocks.iter().copied().filter(|&b| b != 0).collect();
        let failed = u64::from(n) - granted.len() as u64;
        // Each failing warp searched the whole pool; under contention a search can miss a block
        // that another warp's reassignment freed up only afterwards, never more than a few.
        assert!(
            granted.len() as u64 + 32 >= capacity_blocks,
            "round {round}: {} of {capacity_blocks} blocks granted",
            granted.len()
        );
        for &b in &granted {
            assert!(
                pool.contains(b) && b % 1024 == 0,
                "round {round}: block {b:#x}"
            );
        }
        granted.sort_unstable();
        granted.dedup();
        assert_eq!(
            granted.len() as u64 + failed,
            u64::from(n),
            "round {round}: a block was handed out twice"
        );
        let stats = pool.usage_statistics().unwrap();
        assert_eq!(stats.consumed_blocks, granted.len() as u64, "round {round}");
        assert_eq!(stats.consumed_bytes, granted.len() as u64 * 1024);
        assert_eq!(
            stats.failed_allocations, failed,
            "round {round}: NULLs vs the count"
        );
        let statuses = free_blocks(&gpu, &pool, &blocks);
        assert!(
            statuses.iter().all(|&s| s == 0 || s == -1),
            "round {round}: frees failed: {statuses:?}"
        );
        let stats = pool.usage_statistics().unwrap();
        assert_eq!(
            (stats.consumed_blocks, stats.failed_allocations),
            (0, failed)
        );
        assert!(stats.high_water_bytes >= granted.len() as u64 * 1024 / 2);
        pool.reset().unwrap();
        let stats = pool.usage_statistics().unwrap();
        assert_eq!(
            (
                stats.consumed_superblocks,
                stats.failed_allocations,
                stats.high_water_bytes
            ),
            (0, 0, 0),
            "round {round}: reset left state behind"
        );
    }
}

#[test]
fn device_pool_rejects_misuse_with_a_status() {
    let Some(gpu) = gpu_or_skip("device_pool_rejects_misuse_with_a_status") else {
        return;
    };
    let _serial = GPU_TESTS.lock().unwrap_or_else(|p| p.into_inner());
    let pool = DevicePool::new(&PoolConfig {
        min_total_alloc_size: 4 << 20,
        min_block_alloc_size: 64,
        max_block_alloc_size: 1024,
        min_superblock_size: 4096,
        thread_cache: true,
    })
    .unwrap();
    let kernel = gpu
        .kernel_from(TEST_FATBINS, "pool_tests", "td_test_pool_misuse")
        .unwrap();
    let statuses = DeviceBuffer::new(9 * 4).unwrap();
    let (mut pool_ref, mut address) = (pool.device_ref(), statuses.address());
    // SAFETY: the parameters match td_test_pool_misuse; `statuses` holds 9 ints.
    unsafe {
        gpu.launch(
            kernel,
            1,
            1,
            &mut [param(&mut pool_ref), param(&mut address)],
        )
        .unwrap();
    }
    // OK, double free, misaligned, outside, size too large, never assigned, too-large and
    // zero-size allocations are NULL, OK.
    assert_eq!(ints_of(&statuses), vec![0, 5, 4, 1, 3, 2, 1, 1, 0]);
    let stats = pool.usage_statistics().unwrap();
    assert_eq!((stats.consumed_blocks, stats.failed_allocations), (0, 0));
}
