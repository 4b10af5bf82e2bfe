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
    /// These flags as typed, one word each: the report's suggested commands repeat them, so
    /// they run as printed.
    pub fn words(&self) -> Vec<String> {
        let mut w = Vec::new();
        let mut push = |flag: &str, value: Option<String>| {
            if let Some(v) = value {
                w.push(flag.to_string());
                w.push(v);
            }
        };
        push("--new", self.new.clone());
        push("--forward", self.forward.clone());
        push("--input", self.input.clone());
        push("--vocab", self.vocab.map(|n| n.to_string()));
        push("--classes", self.classes.map(|n| n.to_string()));
        push("--pad", self.pad.map(|n| n.to_string()));
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
        push("--batch", path(&self.batch));
        push("--config", path(&self.config));
        w
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        own: OwnModelArgs,
    }

    #[test]
    fn every_flag_given_comes_back_as_typed_and_parses_again() {
        let argv = [
            "x",
            "--new",
            "TinyLm::new(&cfg, vb)",
            "--forward",
            "TinyLm::forward(&input, 0)",
            "--input",
            "tokens:16x32",
            "--vocab",
            "48",
            "--classes",
            "3",
            "--pad",
            "2",
            "--config",
            "my dir/cfg.json",
        ];
        let own = Cli::parse_from(argv).own;
        assert_eq!(own.words(), argv[1..]);
        let again = Cli::parse_from(std::iter::once("x".to_string()).chain(own.words())).own;
        assert_eq!(again.settings(), own.settings());
        let batch = Cli::parse_from(["x", "--batch", "b.safetensors"]).own;
        assert_eq!(batch.words(), ["--batch", "b.safetensors"]);
        assert!(OwnModelArgs::default().words().is_empty());
    }
}
