//! Progress on stderr, only when stderr is a terminal: a bar for the overfit run of `check`
//! (fed by the checks' [`Progress`] callback) and a bar over the models of `demo`. Pipes, files
//! and tests see nothing.

use indicatif::{ProgressBar, ProgressStyle};
use mldebug_diagnostics::options::{Progress, ProgressEvent};
use mldebug_diagnostics::CheckId;
use std::io::IsTerminal;
use std::sync::Arc;

fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// The bar of one `check` run: a spinner naming the running check, a bar with the loss while
/// overfit trains.
pub struct CheckProgress {
    bar: ProgressBar,
}

impl CheckProgress {
    /// A bar on stderr, or `None` when stderr is not a terminal.
    pub fn on_terminal() -> Option<CheckProgress> {
        stderr_is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:13} {wide_bar} {pos}/{len} {msg}")
                    .expect("the template is valid"),
            );
            CheckProgress { bar }
        })
    }

    /// The callback to put in `Options::progress`.
    pub fn callback(&self) -> Progress {
        let bar = self.bar.clone();
        Progress(Arc::new(move |event: ProgressEvent| show(&bar, event)))
    }

    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

fn show(bar: &ProgressBar, event: ProgressEvent) {
    bar.set_prefix(event.check.as_str());
    // Length and position together, so a new check never shows as "3/2" for a frame.
    bar.update(|state| {
        state.set_len(event.total as u64);
        state.set_pos(event.step as u64);
    });
    match (event.check, event.loss) {
        (CheckId::Overfit, Some(loss)) => {
            bar.set_message(format!("loss {}", mldebug_text::number::sig(loss)))
        }
        _ => bar.set_message(""),
    }
}

/// The bar of `demo`: one tick per zoo model finished.
pub struct ModelsProgress {
    bar: Option<ProgressBar>,
}

impl ModelsProgress {
    /// A bar over `models` models on stderr when it is a terminal; silent otherwise.
    pub fn new(models: usize) -> ModelsProgress {
        let bar = stderr_is_terminal().then(|| {
            let bar = ProgressBar::new(models as u64);
            bar.set_style(
                ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} models  {msg}")
                    .expect("the template is valid"),
            );
            bar.set_prefix("demo");
            bar
        });
        ModelsProgress { bar }
    }

    /// One model done.
    pub fn done(&self, name: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(name.to_string());
            bar.inc(1);
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A spinner over the checks a child process runs (a user crate's harness, the torch driver):
/// `[2/8] overfit  step 40/200  loss 0.1234`. The caller decides whether stderr is a terminal.
pub fn child_bar(checks: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(checks as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Shows where a child's check is on a [`child_bar`].
pub fn child_step(
    bar: &indicatif::ProgressBar,
    check: &str,
    step: usize,
    total: usize,
    loss: Option<f64>,
) {
    let loss = loss.map(|l| format!("  loss {l:.4}")).unwrap_or_default();
    bar.set_message(format!("{check}  step {step}/{total}{loss}"));
}
