//! Small pieces shared by every mldebug crate, with no dependency of their own.
//!
//! - [`yaml_depth`]: refuses YAML nested too deep before a YAML parser sees it.
//! - [`input_error`]: the error of the crates that read the user's files.
//! - [`hash`]: FNV-1a, the one stable hash.
//! - [`suggest`]: the edit distance behind every "did you mean".

pub mod hash;
pub mod input_error;
pub mod suggest;
pub mod yaml_depth;
