//! The sweep crate's integration tests, one binary (links once): readers on real formats and
//! broken files, scale, the comparison's logic and its extreme values. None builds an ML
//! framework; the command-line tests live with the binary.

mod compare_logic;
mod extreme_values;
mod readers;
mod readers_errors;
mod readers_scale;
