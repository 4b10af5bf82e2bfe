//! The diagnostics crate's integration tests, one binary (modules inside): the zoo's models, the
//! checks on small models, buffers, errors, the memory measurement and the frame recorder.
//!
//! The memory check measures with the counting allocator, as the mldebug binary does; it counts
//! per thread, so tests beside one another do not disturb it.

mod buffers;
mod check_errors;
mod checks_small;
mod memory_estimate;
mod trace_recorder;
mod zoo_models;

#[global_allocator]
static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
    mldebug_diagnostics::memory::CountingAllocator;
