//! The memory pool in device memory (000 §2.5 on the GPU): the host creates the span, the state
//! words, the hints and the usage counters on the device, kernels allocate and free through
//! `cuda/pool.cuh`, and the host reads the statistics back, resets and destroys the pool.

use super::gpu::Gpu;
use super::memory::DeviceBuffer;
use super::pool_ref::{DevicePoolRef, USAGE_FAILED_ALLOCATIONS, USAGE_HIGH_WATER, USAGE_WORDS};
use crate::error::Result;
use crate::pool::{self, PoolConfig, PoolLayout, UsageStatistics};
use std::sync::Arc;

/// Lanes of a device pool: more than the warps an H100 runs at once (132 SMs x 64), so that
/// every resident warp of a full grid has hints of its own (`cuda/pool.cuh`, "Lanes").
pub const DEVICE_LANES: u32 = 16384;

/// A pool whose span and state live in device memory. Kernels use it through `device_ref()`.
///
/// Ownership: owns its device memory and frees it on drop, which ends every block.
/// Thread safety: `Send + Sync`; `reset` must not run while a kernel uses the pool.
#[derive(Debug)]
pub struct DevicePool {
    layout: PoolLayout,
    /// Holds the span, aligned up to a superblock inside it.
    span_buffer: DeviceBuffer,
    span: u64,
    superblocks: DeviceBuffer,
    hints: DeviceBuffer,
    usage: DeviceBuffer,
    flush_threshold: u64,
}

impl DevicePool {
    /// A device pool for `config` (same parameters and checks as a host pool).
    ///
    /// Errors: `InvalidArgument` for bad parameters; `Unavailable` without a GPU;
    /// `OutOfMemory` when the device cannot hold the pool.
    pub fn new(config: &PoolConfig) -> Result<DevicePool> {
        let layout = config.layout_with_lanes(DEVICE_LANES)?;
        Gpu::get()?;
        // Blocks must be aligned to their size, so the span starts on a superblock boundary;
        // device allocations are only 256-byte aligned.
        let slack = layout.superblock_size().saturating_sub(256);
        let span_buffer = DeviceBuffer::new(layout.capacity() + slack)?;
        let span = span_buffer
            .address()
            .next_multiple_of(layout.superblock_size() as u64);
        let pool = DevicePool {
            layout,
            span_buffer,
            span,
            superblocks: DeviceBuffer::new(layout.state_words() * 8)?,
            hints: DeviceBuffer::new(layout.hint_count() * 4)?,
            usage: DeviceBuffer::new(USAGE_WORDS * 8)?,
            flush_threshold: pool::flush_threshold(
                layout.max_block_size() as u64,
                layout.capacity() as u64,
            ),
        };
        pool.initialize()?;
        Ok(pool)
    }

    /// Writes the state of an empty pool: no superblock assigned, hints at the lanes' windows,
    /// counters zero.
    fn initialize(&self) -> Result<()> {
        let layout = &self.layout;
        let mut hints = vec![0u32; layout.hint_count()];
        for lane in 0..layout.lanes as usize {
            for block_lg2 in layout.min_block_lg2..=layout.max_block_lg2 {
                hints[layout.hint_index(lane, block_lg2)] =
                    layout.lane_window_start(lane, block_lg2) as u32;
            }
        }
        let gpu = self.span_buffer.gpu();
        // SAFETY: each range is exactly its buffer.
        unsafe {
            super::fill::fill_raw(
                gpu,
                self.superblocks.address(),
                layout.state_words() * 8,
                &[0],
            )?;
            super::fill::fill_raw(gpu, self.usage.address(), USAGE_WORDS * 8, &[0])?;
            super::memory::copy_bytes(self.hints.address(), hints.as_ptr() as u64, hints.len() * 4)
        }
    }

    /// The pool as kernels take it.
    pub fn device_ref(&self) -> DevicePoolRef {
        DevicePoolRef {
            layout: self.layout,
            flush_threshold: self.flush_threshold,
            span: self.span as *mut _,
            superblocks: self.superblocks.address() as *mut u64,
            hints: self.hints.address() as *mut u32,
            usage: self.usage.address() as *mut u64,
        }
    }

    pub fn layout(&self) -> &PoolLayout {
        &self.layout
    }

    /// Device address of the span's first byte.
    pub fn span_address(&self) -> u64 {
        self.span
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        self.span_buffer.gpu()
    }

    /// The statistics, counted on the host from a copy of the device state after waiting for
    /// the GPU's work to finish, so they are exact once the kernels using the pool are done.
    pub fn usage_statistics(&self) -> Result<UsageStatistics> {
        self.gpu().synchronize()?;
        let mut words = vec![0u8; self.superblocks.len()];
        self.superblocks.copy_to_host(0, &mut words)?;
        let words: Vec<u64> = words
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let mut usage = vec![0u8; USAGE_WORDS * 8];
        self.usage.copy_to_host(0, &mut usage)?;
        let usage_word =
            |i: usize| u64::from_ne_bytes(usage[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let stride = self.layout.superblock_stride as usize;
        let census = pool::census_with(&self.layout, |superblock, index| {
            words[superblock * stride + index]
        });
        Ok(pool::statistics(
            &self.layout,
            census,
            usage_word(USAGE_HIGH_WATER),
            usage_word(USAGE_FAILED_ALLOCATIONS),
        ))
    }

    /// Returns the pool to its state after creation: every block free, statistics zero. Waits
    /// for the GPU first; no kernel may use the pool meanwhile.
    pub fn reset(&self) -> Result<()> {
        self.gpu().synchronize()?;
        self.initialize()
    }

    /// Whether `address` lies in the span.
    pub fn contains(&self, address: u64) -> bool {
        address.wrapping_sub(self.span) < self.layout.capacity() as u64
    }
}
