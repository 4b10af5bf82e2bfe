//! This crate's errors: the shared input error of the crates that read what the user gives
//! (see `mldebug_text::input_error`). Every failure here is the user's input, never a bug.

pub use mldebug_text::input_error::{Error, Result};
