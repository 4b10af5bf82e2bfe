//! Small pieces shared by every mldebug crate, with no dependency of their own.
//!
//! - [`yaml_depth`]: refuses YAML nested too deep before a YAML parser sees it.
//! - [`input_error`]: the error of the crates that read the user's files.
//! - [`hash`]: FNV-1a, the one stable hash.
//! - [`number`]: how numbers are written for people (the one formatting policy).
//! - [`suggest`]: the edit distance behind every "did you mean".
//! - [`parallel`]: the one worker pool (a slice mapped on a few threads, results in order).
//! - [`rng`]: the one seeded random number generator.
//! - [`bounded`]: the one bounded whole number (a flag's or a request's count in a range).

#![warn(missing_docs)]

pub mod bounded;
pub mod hash;
pub mod input_error;
pub mod number;
pub mod parallel;
pub mod rng;
pub mod suggest;
pub mod yaml_depth;
