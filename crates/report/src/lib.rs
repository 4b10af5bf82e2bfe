//! The report schema: what a check returns and what `--json` prints.
//!
//! Stable: tools outside this project read it. Change it only by adding fields, and bump
//! [`SCHEMA_VERSION`] for anything else. Every document is written in the one
//! [`envelope`] (`schema_version`, `command`, then these fields).
//!
//! Numbers: every number of a finding (its `metrics` and its `series` points) may be NaN or
//! infinite — a loss that blew up is a finding, not an accident. JSON has neither, so a finite
//! value is a JSON number and a non-finite one is the string `"NaN"`, `"inf"` or `"-inf"`
//! ([`non_finite`]). Readers also take `null` as NaN (what schema 1 wrote).
//!
//! Versions: 2 writes non-finite numbers as those strings everywhere (schema 1 wrote `null` in
//! series points, which no reader could take back as a number); 3 is the envelope.

#![warn(missing_docs)]

pub mod assert;
pub mod envelope;
pub mod finite_json;
pub mod non_finite;
pub mod seeds;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

pub use envelope::SCHEMA_VERSION;
pub use seeds::{SeedVerdict, SeedsReport};

/// The one spelling of the command that runs checks on a candle model: `which` is a check id or
/// `all`.
pub fn check_command(which: &str, model: &str) -> String {
    Subject::candle(model, &[]).command(which)
}

/// The one spelling of the command that shows a catalog entry, source, check or quote.
pub fn show_command(id: &str) -> String {
    format!("mldebug show {id}")
}

/// `word` as a POSIX shell reads it back as one word: unchanged when it holds only characters
/// no shell splits or expands (`crate::Net`, `tokens:16x32`, `r=16,alpha=32`), else in single
/// quotes (`'TinyLm::forward(&input, 0)'`, `'crate::Net<f32>'`, `'my dir/cfg.json'`).
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.,:/=+@%".contains(c);
    // zsh expands a word that starts with `=` (`=cmd` is the command's path).
    if !word.is_empty() && !word.starts_with('=') && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The model a report is about, as the command line names it: the two ways to run the checks.
/// Each holds the words after `--model` / `--torch` exactly as a shell must read them (quoted
/// where needed): the model, then every other flag it needs to be found, built and fed, so that
/// a suggested command runs as printed. Build them with [`Subject::candle`] and
/// [`Subject::torch`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A candle model: `zoo::mlp`, or `crate::TinyLm --forward TinyLm::forward --input
    /// tokens:16x32 --vocab 48`.
    Candle(String),
    /// A PyTorch model: `model.py:Net` or `hf:DIR`, with its other flags (`--lora ...`).
    Torch(String),
}

impl Subject {
    /// A candle model and the flags it is checked with (each flag and each value one word of
    /// `flags`, unquoted).
    pub fn candle(model: &str, flags: &[String]) -> Subject {
        Subject::Candle(words(model, flags))
    }

    /// A PyTorch model and its other flags, as [`Subject::candle`].
    pub fn torch(spec: &str, flags: &[String]) -> Subject {
        Subject::Torch(words(spec, flags))
    }

    /// `mldebug check <which> --model <m> [flags]` / `mldebug check <which> --torch <t> [flags]`.
    pub fn command(&self, which: &str) -> String {
        match self {
            Subject::Candle(m) => format!("mldebug check {which} --model {m}"),
            Subject::Torch(t) => format!("mldebug check {which} --torch {t}"),
        }
    }

    /// The words after `--model` / `--torch` (`zoo::mlp`, `model.py:Net --lora r=8`).
    pub fn label(&self) -> &str {
        match self {
            Subject::Candle(m) | Subject::Torch(m) => m,
        }
    }
}

/// `first` and `rest`, each quoted for a shell, joined by spaces.
fn words(first: &str, rest: &[String]) -> String {
    std::iter::once(first)
        .chain(rest.iter().map(String::as_str))
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a model's output means, so checks know what to expect of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// Logits `[N, C]`; targets are class ids `[N]`, `-100` = ignore.
    Classification,
    /// Logits `[N, T, V]`; targets are token ids `[N, T]`, `-100` = ignore.
    #[serde(alias = "causal_lm")]
    CausalLm,
    /// Any output shape; targets are floats of the same shape.
    Regression,
}

/// The target value that means "no loss here" (the PyTorch convention).
pub const IGNORE_INDEX: i64 = -100;

/// A check's stable id, as typed on the command line (`mldebug check <id>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckId {
    /// The loss at initialisation against what chance predicts (ln of the class count).
    InitLoss,
    /// Can the model memorise one batch.
    Overfit,
    /// Does every parameter get a gradient, and do gradients shrink through the layers.
    GradFlow,
    /// The first layer whose output becomes NaN or infinite.
    NanTrace,
    /// Ignored targets (-100) are really ignored, and language-model labels are shifted once.
    LabelMask,
    /// Does one example's output depend on another example or on a later token.
    BatchLeak,
    /// How skewed the class counts of the batch are.
    ClassBalance,
    /// Measured memory per stage and step: leaks, avoidable intermediates, second-batch spikes.
    Memory,
}

impl CheckId {
    /// Every check, in the order `all` runs them (cheapest and most basic first).
    pub const ALL: [CheckId; 8] = [
        CheckId::InitLoss,
        CheckId::ClassBalance,
        CheckId::LabelMask,
        CheckId::GradFlow,
        CheckId::NanTrace,
        CheckId::BatchLeak,
        CheckId::Overfit,
        CheckId::Memory,
    ];

    /// The catalog section that explains this check (`refs/diagnostics.md`), `check-<id>`.
    pub fn entry(self) -> &'static str {
        match self {
            CheckId::InitLoss => "check-init-loss",
            CheckId::Overfit => "check-overfit",
            CheckId::GradFlow => "check-grad-flow",
            CheckId::NanTrace => "check-nan-trace",
            CheckId::LabelMask => "check-label-mask",
            CheckId::BatchLeak => "check-batch-leak",
            CheckId::ClassBalance => "check-class-balance",
            CheckId::Memory => "check-memory",
        }
    }

    /// The command that runs this check: `mldebug check <id> --model <model>`.
    pub fn command(self, model: &str) -> String {
        check_command(self.as_str(), model)
    }

    /// The id as typed: `init-loss`, `grad-flow`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::InitLoss => "init-loss",
            CheckId::Overfit => "overfit",
            CheckId::GradFlow => "grad-flow",
            CheckId::NanTrace => "nan-trace",
            CheckId::LabelMask => "label-mask",
            CheckId::BatchLeak => "batch-leak",
            CheckId::ClassBalance => "class-balance",
            CheckId::Memory => "memory",
        }
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CheckId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CheckId::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = CheckId::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown check `{s}`; the checks are: {}, all",
                    ids.join(", ")
                )
            })
    }
}

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Nothing wrong was found.
    Pass,
    /// Something worth a look, not certainly a bug.
    Warn,
    /// A bug, or a setup that cannot train as meant.
    Fail,
    /// The check cannot judge this model (the reason is in the summary); never a pass.
    Skipped,
    /// The check could not run: the model errored or panicked.
    Error,
}

impl Status {
    /// The status as written in reports: `pass`, `warn`, `fail`, `skipped`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skipped => "skipped",
            Status::Error => "error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The check that found it.
    pub check: CheckId,
    /// Its verdict.
    pub status: Status,
    /// One line a person reads.
    pub summary: String,
    /// The numbers behind the verdict. Non-finite values are written as the strings
    /// `"NaN"`, `"inf"` and `"-inf"` (JSON has no such numbers).
    #[serde(with = "non_finite::map")]
    pub metrics: BTreeMap<String, f64>,
    /// Further lines: per-parameter rows, the frames before a NaN, ...
    pub details: Vec<String>,
    /// The catalog entry that explains this finding (`mldebug show <entry>`).
    pub entry: String,
    /// The command to run next.
    pub next: String,
    /// Curves behind the verdict (overfit: the loss per step; grad-flow: the gradient norm per
    /// parameter), for plots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
}

/// One curve of a finding: `points` are `[x, y]` (either may be NaN or infinite, written as in
/// [`non_finite`]); `labels`, when present, name each point (grad-flow: the parameter names, in
/// the same order as the points).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// What the curve is (`loss`, `gradient norm`): the plot's title.
    pub name: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' label.
    pub y_label: String,
    /// `[x, y]` pairs, in order.
    #[serde(with = "non_finite::points")]
    pub points: Vec<[f64; 2]>,
    /// One name per point, or none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

/// The result of `run_checks`: the `--json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The model as the command line named it (`zoo::mlp`, `crate::Net`, `model.py:Net`).
    pub model: String,
    /// Where the checks ran: `cpu`, `cuda:0`, ...
    pub device: String,
    /// The `--seed` the checks ran with.
    pub seed: u64,
    /// One finding per check run, in the order they ran.
    pub checks: Vec<Finding>,
}

impl Finding {
    /// A finding for `check` with the catalog entry filled in (`check-<id>`) and no numbers yet.
    pub fn new(check: CheckId, status: Status, summary: impl Into<String>) -> Finding {
        Finding {
            check,
            status,
            summary: summary.into(),
            metrics: BTreeMap::new(),
            details: Vec::new(),
            entry: check.entry().to_string(),
            next: String::new(),
            series: Vec::new(),
        }
    }

    /// Adds one metric (builder style).
    pub fn metric(mut self, name: &str, value: f64) -> Finding {
        self.metrics.insert(name.to_string(), value);
        self
    }

    /// Sets the next command (builder style).
    pub fn next(mut self, command: impl Into<String>) -> Finding {
        self.next = command.into();
        self
    }
}

impl Report {
    /// What the process should report: 4 when a check could not run (the model errored),
    /// else 1 when a check failed, else 0 (see "Exit codes" in the README).
    pub fn exit_status(&self) -> i32 {
        if self.checks.iter().any(|f| f.status == Status::Error) {
            4
        } else if self.checks.iter().any(|f| f.status == Status::Fail) {
            1
        } else {
            0
        }
    }

    /// The finding of `check`, if it ran.
    pub fn finding(&self, check: CheckId) -> Option<&Finding> {
        self.checks.iter().find(|f| f.check == check)
    }

    /// The worst status over all checks (`Pass` when there are none).
    pub fn worst(&self) -> Status {
        let rank = |s: Status| match s {
            Status::Pass => 0,
            Status::Skipped => 1,
            Status::Warn => 2,
            Status::Fail => 3,
            Status::Error => 4,
        };
        self.checks
            .iter()
            .map(|f| f.status)
            .max_by_key(|s| rank(*s))
            .unwrap_or(Status::Pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_a_shell_would_split_or_expand_are_quoted() {
        for plain in [
            "crate::Net",
            "zoo::mlp",
            "tokens:16x32",
            "--vocab",
            "r=16,alpha=32",
        ] {
            assert_eq!(shell_word(plain), plain);
        }
        assert_eq!(
            shell_word("TinyLm::forward(&input, 0)"),
            "'TinyLm::forward(&input, 0)'"
        );
        assert_eq!(shell_word("crate::Net<f32>"), "'crate::Net<f32>'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
    }

    #[test]
    fn a_subject_repeats_its_flags_in_every_command() {
        let flags: Vec<String> = ["--forward", "TinyLm::forward(&input)", "--vocab", "48"]
            .map(String::from)
            .to_vec();
        let s = Subject::candle("crate::TinyLm", &flags);
        assert_eq!(
            s.command("overfit"),
            "mldebug check overfit --model crate::TinyLm --forward 'TinyLm::forward(&input)' \
             --vocab 48"
        );
        assert_eq!(
            check_command("all", "zoo::mlp"),
            "mldebug check all --model zoo::mlp"
        );
        let t = Subject::torch("my model.py:Net", &["--lora".into(), "r=8".into()]);
        assert_eq!(
            t.command("grad-flow"),
            "mldebug check grad-flow --torch 'my model.py:Net' --lora r=8"
        );
    }
}
