//! Text handling shared by every mldebug crate, with no dependency of its own.
//!
//! - [`yaml_depth`]: refuses YAML nested too deep before a YAML parser sees it.
//! - [`suggest`]: the edit distance behind every "did you mean".

pub mod suggest;
pub mod yaml_depth;
