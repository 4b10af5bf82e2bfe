//! The `mldebug` binary: parse the command line, resolve the context once, run the command and
//! turn its outcome into the exit code (all of it in the library crate; see `lib.rs`).

use clap::Parser;
use mldebug::{cli::Cli, commands, render::terminal, Exit};

/// Counts this thread's allocations for `check memory` (zoo models run in this process).
#[global_allocator]
static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
    mldebug_diagnostics::memory::CountingAllocator;

fn main() -> std::process::ExitCode {
    // Before anything else: no other thread may exist while it sets a variable.
    mldebug::candle_threads::pin();
    let cli = Cli::parse();
    match commands::run(cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            // A message may name a file or repeat its text: no control character reaches the terminal.
            eprintln!("error: {}", terminal::safe(&e.to_string(), false));
            e.exit().into()
        }
    }
}

#[allow(dead_code)]
fn _exit_is_used(_: Exit) {}
