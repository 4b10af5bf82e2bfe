//! candle's thread count, found once instead of at every matrix product.
//!
//! candle 0.11 asks `utils::get_num_threads()` for its thread count on every CPU matrix product.
//! Unless `RAYON_NUM_THREADS` is set, that call works the count out anew each time, and on a
//! Linux machine whose kernel lists no preferred cores (most servers and VMs) it does so by
//! reading and parsing `/proc/cpuinfo`: on the two-core machines the test suite runs on, that
//! was a quarter of `mldebug demo`'s wall time, most of it in the kernel. So the binary asks
//! candle once, at start, and sets `RAYON_NUM_THREADS` to the answer: the same count candle
//! would have used, read once.
//!
//! The variable is ours, not the user's: a Python process the binary starts (the PyTorch
//! driver, the command `mldebug run` watches) gets the environment the user gave the binary,
//! without it ([`hide_from`]). The harness of a user's candle crate keeps it, for the same
//! reason the binary sets it.

use std::process::Command;
use std::sync::OnceLock;

/// The variable candle (through rayon's convention) reads its thread count from.
pub const VARIABLE: &str = "RAYON_NUM_THREADS";

/// Whether [`pin`] set the variable (it was not in the user's environment).
static SET_BY_US: OnceLock<bool> = OnceLock::new();

/// Sets [`VARIABLE`] to candle's own default thread count when the user has not set it.
///
/// Call it first thing in `main`, before any thread exists: changing the environment while
/// another thread may read it is not sound.
pub fn pin() {
    SET_BY_US.get_or_init(|| {
        // rayon and candle read an empty value as unset; so does this.
        if std::env::var_os(VARIABLE).is_some_and(|v| !v.is_empty()) {
            return false;
        }
        let threads = candle_core::utils::get_num_threads();
        std::env::set_var(VARIABLE, threads.to_string());
        true
    });
}

/// Leaves the user's own environment to `command`: the variable is removed when [`pin`] put it
/// there, and kept when the user set it.
pub fn hide_from(command: &mut Command) {
    if set_by_us() {
        command.env_remove(VARIABLE);
    }
}

/// Whether the variable in this process's environment is ours.
fn set_by_us() -> bool {
    SET_BY_US.get().copied().unwrap_or(false)
}
