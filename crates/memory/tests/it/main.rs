//! The memory crate's integration tests, one binary: the anchor run's estimate and the published
//! configs' parameter counts.

mod anchor;
mod configs;
