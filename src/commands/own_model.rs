//! `mldebug check <id> --model crate::TinyLm --input tokens:16x32 --vocab 48`: the flags that
//! check a model whose crate has no `DebugModel` impl (and need not depend on mldebug at all),
//! and `mldebug.toml` beside the crate's Cargo.toml, which holds the same settings.
//!
//! The flags become [`OwnModelSettings`]; the harness merges them over the file (flags win) and
//! resolves them (`crate::harness::own_settings`).

use crate::harness::own_settings::OwnModelSettings;
use std::path::PathBuf;

/// Check a model without editing its crate (or put these in mldebug.toml beside Cargo.toml).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OwnModelArgs {
    /// The constructor: `TinyLm::new` (takes a candle `VarBuilder`), or a call such as
    /// `'TinyLm::new(&cfg, vb)'` (`cfg` is read from --config).
    #[arg(
        long,
        value_name = "FN|'FN(ARGS)'",
        help_heading = "Your model, unedited"
    )]
    pub new: Option<String>,
    /// The forward: the type's `candle_nn::Module` impl by default, or `TinyLm::forward`, or a
    /// call with extra arguments `'TinyLm::forward(&input, 0)'` (`&mut self` is fine).
    #[arg(
        long,
        value_name = "FN|'FN(ARGS)'",
        help_heading = "Your model, unedited"
    )]
    pub forward: Option<String>,
    /// The batch to draw: `tokens:ROWSxLEN` (a causal LM, with --vocab) or
    /// `f32:BATCHxFEATURES` (a classifier, with --classes).
    #[arg(long, value_name = "KIND:DIMS", help_heading = "Your model, unedited")]
    pub input: Option<String>,
    /// The vocabulary size, for `--input tokens:...`.
    #[arg(long, value_name = "N", help_heading = "Your model, unedited")]
    pub vocab: Option<usize>,
    /// The number of classes, for `--input f32:...`.
    #[arg(long, value_name = "N", help_heading = "Your model, unedited")]
    pub classes: Option<usize>,
    /// Padded positions at the end of every other token row (labels -100).
    #[arg(long, value_name = "N", help_heading = "Your model, unedited")]
    pub pad: Option<usize>,
    /// Your real batch instead: a safetensors file holding `input` and `targets`.
    #[arg(
        long,
        value_name = "FILE.safetensors",
        conflicts_with = "input",
        help_heading = "Your model, unedited"
    )]
    pub batch: Option<PathBuf>,
    /// A JSON file the constructor's `cfg` argument is read from (its type must implement
    /// `serde::Deserialize`).
    #[arg(long, value_name = "FILE.json", help_heading = "Your model, unedited")]
    pub config: Option<PathBuf>,
}

impl OwnModelArgs {
    /// The settings these flags give.
    pub fn settings(&self) -> OwnModelSettings {
        OwnModelSettings {
            new: self.new.clone(),
            forward: self.forward.clone(),
            input: self.input.clone(),
            vocab: self.vocab,
            classes: self.classes,
            pad: self.pad,
            batch: self.batch.clone(),
            config: self.config.clone(),
        }
    }
}
