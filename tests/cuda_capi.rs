//! The C API of the CUDA back-end: availability queries, TD_SPACE_CUDA pools and the misuse of
//! pools across memory spaces. One test owns the process' runtime. Without a GPU it checks that
//! CUDA requests fail with TD_ERROR_UNAVAILABLE and a reason, and prints a skip line for the rest.

use std::ffi::{c_char, CStr};
use std::io::Write;
use std::ptr;
use taskdag::capi::*;
use taskdag::cuda::{detect, DevicePoolRef};

fn last_error() -> String {
    // SAFETY: td_last_error_message returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(td_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn pool_args(space: td_memory_space, total: usize) -> td_pool_args {
    td_pool_args {
        struct_size: std::mem::size_of::<td_pool_args>(),
        memory_space: space,
        min_total_alloc_size: total,
        min_block_alloc_size: 64,
        max_block_alloc_size: 1024,
        min_superblock_size: 0,
        thread_cache: 1,
    }
}

unsafe fn create(space: td_memory_space, total: usize) -> Result<*mut td_pool, td_status> {
    let mut pool = ptr::null_mut();
    match td_pool_create(&pool_args(space, total), &mut pool) {
        td_status::TD_OK => Ok(pool),
        status => Err(status),
    }
}

unsafe fn configuration() -> String {
    let mut text: *mut c_char = ptr::null_mut();
    assert_eq!(td_configuration_string(&mut text), td_status::TD_OK);
    let s = CStr::from_ptr(text).to_string_lossy().into_owned();
    td_string_free(text);
    s
}

#[test]
fn cuda_pools_work_with_a_gpu_and_report_why_not_without_one() {
    unsafe {
        assert_eq!(td_initialize(ptr::null()), td_status::TD_OK);
        let status = detect();
        assert_eq!(td_cuda_available() == 1, status.available());
        let mut count = -1;
        assert_eq!(td_cuda_device_count(&mut count), td_status::TD_OK);
        assert_eq!(count > 0, status.available());
        let text = configuration();
        assert!(text.contains("cuda kernels: "), "{text}");

        if !status.available() {
            let e = create(TD_SPACE_CUDA_HOST_PINNED, 1 << 20).unwrap_err();
            assert_eq!(e, td_status::TD_ERROR_UNAVAILABLE);
            let message = last_error();
            assert!(message.contains("TD_SPACE_CUDA_HOST_PINNED"), "{message}");
            assert!(message.contains(&status.reason()), "{message}");
            assert_eq!(
                create(TD_SPACE_CUDA, 1 << 20).unwrap_err(),
                td_status::TD_ERROR_UNAVAILABLE
            );
            let message = last_error();
            assert!(message.contains(&status.reason()), "{message}");
            assert!(text.contains(&status.reason()), "{text}");
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED cuda_pools_work_with_a_gpu (device part): {}",
                status.reason()
            );
            assert_eq!(td_finalize(), td_status::TD_OK);
            return;
        }
        assert!(text.contains("compute capability"), "{text}");

        let device_pool = create(TD_SPACE_CUDA, 4 << 20).unwrap();
        let host_pool = create(TD_SPACE_HOST, 1 << 20).unwrap();
        let mut dev: DevicePoolRef = std::mem::zeroed();
        assert_eq!(
            td_pool_device_handle(device_pool, &mut dev),
            td_status::TD_OK
        );
        assert!(!dev.span.is_null());
        assert_eq!(dev.layout.lanes, taskdag::cuda::DEVICE_LANES);
        let mut capacity = 0;
        assert_eq!(
            td_pool_capacity(device_pool, &mut capacity),
            td_status::TD_OK
        );
        assert_eq!(capacity, 4 << 20);

        // Misuse across memory spaces is reported, not trusted.
        assert_eq!(
            td_pool_device_handle(host_pool, &mut dev),
            td_status::TD_ERROR_INVALID_ARGUMENT
        );
        assert!(td_pool_allocate(device_pool, 64, 1).is_null());
        assert_eq!(td_last_error(), td_status::TD_ERROR_INVALID_ARGUMENT);
        assert!(
            last_error().contains("td_dev_pool_allocate"),
            "{}",
            last_error()
        );
        assert_eq!(
            td_pool_deallocate(host_pool, dev.span, 64),
            td_status::TD_ERROR_INVALID_ARGUMENT
        );
        assert!(last_error().contains("device memory"), "{}", last_error());
        assert_eq!(
            td_pool_reset(host_pool),
            td_status::TD_ERROR_INVALID_ARGUMENT
        );

        let mut stats = td_pool_stats {
            struct_size: std::mem::size_of::<td_pool_stats>(),
            ..Default::default()
        };
        assert_eq!(
            td_pool_usage_statistics(device_pool, &mut stats),
            td_status::TD_OK
        );
        assert_eq!(stats.capacity_bytes, 4 << 20);
        assert_eq!((stats.consumed_blocks, stats.failed_allocations), (0, 0));
        assert_eq!(td_pool_reset(device_pool), td_status::TD_OK);

        pinned_pools_are_host_pools_in_page_locked_memory();

        // Out of device memory is a status.
        let mut huge = pool_args(TD_SPACE_CUDA, 1 << 50);
        huge.min_superblock_size = 1 << 20;
        let mut pool = ptr::null_mut();
        assert_eq!(
            td_pool_create(&huge, &mut pool),
            td_status::TD_ERROR_OUT_OF_MEMORY
        );
        assert!(last_error().contains("MiB free"), "{}", last_error());

        assert_eq!(td_pool_release(device_pool), td_status::TD_OK);
        assert_eq!(td_pool_release(host_pool), td_status::TD_OK);
        assert_eq!(td_finalize(), td_status::TD_OK);
    }
}

/// A TD_SPACE_CUDA_HOST_PINNED pool: host threads allocate and free as from a host pool, the
/// blocks are page-locked memory the driver knows, and the device-only calls refuse it.
unsafe fn pinned_pools_are_host_pools_in_page_locked_memory() {
    use taskdag::cuda::{pointer_kind, PointerKind};
    let pool = create(TD_SPACE_CUDA_HOST_PINNED, 1 << 20).unwrap();
    let blocks: Vec<*mut u8> = (0..16)
        .map(|i| {
            let block = td_pool_allocate(pool, 256, 1) as *mut u8;
            assert!(!block.is_null(), "{}", last_error());
            block.write_bytes(i as u8, 256);
            block
        })
        .collect();
    for (i, &block) in blocks.iter().enumerate() {
        assert_eq!(pointer_kind(block as u64), PointerKind::PinnedHost);
        assert!(std::slice::from_raw_parts(block, 256)
            .iter()
            .all(|&b| b == i as u8));
    }
    let mut stats = td_pool_stats {
        struct_size: std::mem::size_of::<td_pool_stats>(),
        ..Default::default()
    };
    assert_eq!(td_pool_usage_statistics(pool, &mut stats), td_status::TD_OK);
    assert_eq!(stats.consumed_blocks, 16);
    let mut dev: DevicePoolRef = std::mem::zeroed();
    assert_eq!(
        td_pool_device_handle(pool, &mut dev),
        td_status::TD_ERROR_INVALID_ARGUMENT
    );
    assert!(
        last_error().contains("TD_SPACE_CUDA_HOST_PINNED"),
        "{}",
        last_error()
    );
    assert_eq!(td_pool_reset(pool), td_status::TD_ERROR_INVALID_ARGUMENT);
    for block in blocks {
        assert_eq!(
            td_pool_deallocate(pool, block.cast(), 256),
            td_status::TD_OK
        );
    }
    assert_eq!(td_pool_usage_statistics(pool, &mut stats), td_status::TD_OK);
    assert_eq!(stats.consumed_blocks, 0);
    assert_eq!(td_pool_release(pool), td_status::TD_OK);
}
