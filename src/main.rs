//! The `mldebug` binary: parse the command line, resolve the context once, run the command and
//! turn its outcome into the exit code (all of it in the library crate; see `lib.rs`).

use clap::Parser;
use mldebug::{cli, cli::Cli, render::terminal, Exit};

/// Counts this thread's allocations for `check memory` (zoo models run in this process).
#[global_allocator]
static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
    mldebug_diagnostics::memory::CountingAllocator;

fn main() -> std::process::ExitCode {
    // Before anything else: no other thread may exist while it sets a variable.
    mldebug::candle_threads::pin();
    // `mldebug run`'s guard (see `run::guard`), started by mldebug itself, never by a user.
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(mldebug::run::guard::ARG)) {
        let rest: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
        return std::process::ExitCode::from(mldebug::run::guard::main(&rest));
    }
    let cli = Cli::parse();
    match cli::run(cli) {
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
