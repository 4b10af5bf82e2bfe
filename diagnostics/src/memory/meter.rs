//! Where a measured run reads its bytes: the counting allocator on CPU ([`super::alloc`]), the
//! CUDA memory pool candle allocates from on a GPU.
//!
//! On CUDA, candle (through cudarc) allocates every tensor with `cuMemAllocAsync` from the
//! device's current memory pool when the device supports pools, and frees it in stream order.
//! The pool counts the bytes in use by the program (`CU_MEMPOOL_ATTR_USED_MEM_CURRENT`) and
//! their high-water mark since it was last reset (`..._USED_MEM_HIGH`), which is what the CPU
//! allocator counts per thread. Two differences: the pool belongs to the device, not the
//! thread, so a measurement needs the device to itself (`mldebug demo` runs its models one at a
//! time on a GPU), and it says nothing of single allocations, so the largest forward allocation
//! (the avoidable-intermediate rule) is measured on the same forward pass on CPU instead
//! ([`super::measure`]). The CUDA context, cuBLAS's
//! workspace and the kernels' code are not in the pool, as PyTorch leaves them out of
//! `max_memory_allocated`. Every reading waits for the device first, so frees already queued
//! have happened.

use super::alloc;
use candle_core::{Device, Result};

/// A source of byte counts for one measured run.
pub enum Meter {
    /// The counting allocator, this thread (CPU).
    Host,
    /// A CUDA device's memory pool.
    #[cfg(feature = "cuda")]
    Cuda(cuda::Pool),
}

/// Why `device` cannot be measured, or the meter that measures it.
pub fn for_device(device: &Device) -> Result<std::result::Result<Meter, &'static str>> {
    match device {
        Device::Cpu if alloc::installed() => Ok(Ok(Meter::Host)),
        Device::Cpu => Ok(Err(
            "no counting allocator in this process: install mldebug_diagnostics::memory::CountingAllocator as the #[global_allocator] (the mldebug binary and its harnesses do)",
        )),
        #[cfg(feature = "cuda")]
        Device::Cuda(d) => Ok(cuda::Pool::new(d)?.map(Meter::Cuda).ok_or(
            "this CUDA device has no memory pool (cuMemAllocAsync): candle allocates with cuMemAlloc there, which counts nothing; rerun with --device cpu",
        )),
        _ => Ok(Err(
            "memory is measured on CPU and CUDA only; rerun with --device cpu",
        )),
    }
}

impl Meter {
    /// Bytes in use now.
    pub fn live(&self) -> Result<i64> {
        match self {
            Meter::Host => Ok(alloc::live()),
            #[cfg(feature = "cuda")]
            Meter::Cuda(p) => p.used(),
        }
    }

    /// The highest [`Meter::live`] since the last [`Meter::reset_peak`].
    pub fn peak(&self) -> Result<i64> {
        match self {
            Meter::Host => Ok(alloc::peak()),
            #[cfg(feature = "cuda")]
            Meter::Cuda(p) => p.high(),
        }
    }

    /// The largest single allocation since the last [`Meter::reset_peak`]; 0 where it is not
    /// known (a GPU pool).
    pub fn largest(&self) -> i64 {
        match self {
            Meter::Host => alloc::largest(),
            #[cfg(feature = "cuda")]
            Meter::Cuda(_) => 0,
        }
    }

    /// Starts a new high-water mark at what is in use now.
    pub fn reset_peak(&self) -> Result<()> {
        match self {
            Meter::Host => {
                alloc::reset_peak();
                Ok(())
            }
            #[cfg(feature = "cuda")]
            Meter::Cuda(p) => p.reset_high(),
        }
    }

    /// Whether [`Meter::largest`] is measured (the counting allocator sees every allocation;
    /// a GPU pool only the bytes in use).
    pub fn counts_allocations(&self) -> bool {
        match self {
            Meter::Host => true,
            #[cfg(feature = "cuda")]
            Meter::Cuda(_) => false,
        }
    }

    /// Bytes the meter counts for a tensor besides its elements: the host allocator sees the
    /// tensor's header, a GPU pool only its data.
    pub fn tensor_overhead(&self, host: f64) -> f64 {
        match self {
            Meter::Host => host,
            #[cfg(feature = "cuda")]
            Meter::Cuda(_) => 0.0,
        }
    }

    /// How the bytes were counted, for the report.
    pub fn source(&self) -> &'static str {
        match self {
            Meter::Host => "counting allocator, CPU, this thread",
            #[cfg(feature = "cuda")]
            Meter::Cuda(_) => "CUDA memory pool in use (cuMemPoolGetAttribute), the whole device",
        }
    }
}

#[cfg(feature = "cuda")]
pub mod cuda {
    //! The CUDA pool's two counters, read through the cudarc that candle re-exports.

    use candle_core::cuda::cudarc::driver::{result, sys, CudaStream, DriverError};
    use candle_core::{CudaDevice, Error, Result};
    use std::sync::Arc;

    /// The device's current memory pool and the stream candle works on.
    pub struct Pool {
        stream: Arc<CudaStream>,
        pool: sys::CUmemoryPool,
    }

    fn err(e: DriverError) -> Error {
        Error::Msg(format!("CUDA memory pool: {e}"))
    }

    impl Pool {
        /// The pool `device` allocates from, or `None` when it allocates without one.
        pub fn new(device: &CudaDevice) -> Result<Option<Pool>> {
            let stream = device.cuda_stream();
            let ctx = stream.context();
            if !ctx.has_async_alloc() {
                return Ok(None);
            }
            ctx.bind_to_thread().map_err(err)?;
            // SAFETY: the device handle comes from a live context.
            let pool = unsafe { result::device::get_mem_pool(ctx.cu_device()) }.map_err(err)?;
            Ok(Some(Pool { stream, pool }))
        }

        fn read(&self, attr: sys::CUmemPool_attribute) -> Result<i64> {
            self.stream.synchronize().map_err(err)?;
            let mut v: u64 = 0;
            // SAFETY: both attributes read are `cuuint64_t`; the pool outlives the device.
            unsafe {
                result::mem_pool::get_attribute(self.pool, attr, (&raw mut v).cast())
                    .map_err(err)?;
            }
            Ok(i64::try_from(v).unwrap_or(i64::MAX))
        }

        /// Bytes in use by the program.
        pub fn used(&self) -> Result<i64> {
            self.read(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
        }

        /// The high-water mark of [`Pool::used`] since the last reset.
        pub fn high(&self) -> Result<i64> {
            self.read(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH)
        }

        /// Resets the high-water mark to what is in use now (the only value it can be set to
        /// is 0, which the driver reads as "now").
        pub fn reset_high(&self) -> Result<()> {
            self.stream.synchronize().map_err(err)?;
            let mut zero: u64 = 0;
            // SAFETY: the attribute is a `cuuint64_t`, and 0 is its one settable value.
            unsafe {
                result::mem_pool::set_attribute(
                    self.pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                    (&raw mut zero).cast(),
                )
                .map_err(err)
            }
        }
    }
}
