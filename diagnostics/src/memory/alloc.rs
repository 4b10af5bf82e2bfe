//! A counting global allocator: the CPU side of `check memory`.
//!
//! Install it in a binary (the `mldebug` binary and every generated harness do):
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
//!     mldebug_diagnostics::memory::CountingAllocator;
//! ```
//!
//! It forwards to the system allocator and counts, per thread, the bytes live and their
//! high-water mark, and the largest single allocation. Per thread, because checks run beside
//! each other (`mldebug demo` runs models on worker threads, `cargo test` runs tests in
//! parallel): a measurement reads only the thread it runs on, where candle allocates every
//! tensor it creates. The per-thread state is two `const`-initialised `Cell`s, which need no
//! allocation and no destructor, so the allocator never re-enters itself.
//!
//! What is not counted: memory other threads allocate (rayon workers' scratch space, such as the
//! matmul kernels' packing buffers, which they keep and reuse), and memory freed on another
//! thread than the one that allocated it shows as still live on the first.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// The allocator; see the module docs for how to install it.
pub struct CountingAllocator;

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Bytes allocated minus bytes freed on this thread since it started.
    static LIVE: Cell<i64> = const { Cell::new(0) };
    /// The highest `LIVE` since the last [`reset_peak`].
    static PEAK: Cell<i64> = const { Cell::new(0) };
    /// The largest single allocation since the last [`reset_peak`].
    static LARGEST: Cell<i64> = const { Cell::new(0) };
}

fn grew(bytes: i64) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes;
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
        let _ = LARGEST.try_with(|l| l.set(l.get().max(bytes)));
    });
}

fn shrank(bytes: i64) {
    let _ = LIVE.try_with(|live| live.set(live.get() - bytes));
}

// SAFETY: every call forwards to `System` with the same arguments; the counting touches only
// atomics and const thread-locals, which neither allocate nor unwind.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            INSTALLED.store(true, Ordering::Relaxed);
            grew(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            INSTALLED.store(true, Ordering::Relaxed);
            grew(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size() as i64);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrank(layout.size() as i64);
            grew(new_size as i64);
        }
        p
    }
}

/// Whether a [`CountingAllocator`] is this process's global allocator (it has served an
/// allocation).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Bytes live on this thread (allocated here and not yet freed), relative to when it started.
pub fn live() -> i64 {
    LIVE.with(Cell::get)
}

/// The highest [`live`] since the last [`reset_peak`].
pub fn peak() -> i64 {
    PEAK.with(Cell::get)
}

/// The largest single allocation on this thread since the last [`reset_peak`].
pub fn largest() -> i64 {
    LARGEST.with(Cell::get)
}

/// Starts a new high-water mark at what is live now, and forgets the largest allocation.
pub fn reset_peak() {
    let now = live();
    PEAK.with(|p| p.set(now));
    LARGEST.with(|l| l.set(0));
}
