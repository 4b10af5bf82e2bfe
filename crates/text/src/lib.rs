//! Small pieces shared by every mldebug crate, with no dependency of their own.
//!
//! - [`yaml_depth`]: refuses YAML nested too deep before a YAML parser sees it.
//! - [`hash`]: FNV-1a, the one stable hash.
//! - [`suggest`]: the edit distance behind every "did you mean".

pub mod hash;
pub mod suggest;
pub mod yaml_depth;
