//! Measuring training memory on candle: a counting allocator ([`alloc`]) on CPU and the memory
//! pool on CUDA, behind one [`meter`], the bytes candle's
//! autograd graph keeps ([`graph`]), the layers one traced forward pass shows ([`layers`]), what its backward keeps and needs ([`backward`]), and the
//! measured run of a few training steps ([`measure`]) that `check memory` judges with
//! `mldebug_memory::judge`.

pub mod alloc;
pub mod backward;
pub mod graph;
pub(crate) mod layers;
pub mod measure;
pub mod meter;

pub use alloc::CountingAllocator;
