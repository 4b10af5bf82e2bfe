use clap::Parser;
use mldebug::{cli::Cli, commands, Exit};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match commands::run(cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprintln!("error: {e}");
            e.exit.into()
        }
    }
}

#[allow(dead_code)]
fn _exit_is_used(_: Exit) {}
