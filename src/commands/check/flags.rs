//! Which `check` flag applies to which model: one table, [`FLAGS`]. A flag given for a model it
//! does not apply to is refused (exit 2, naming the flag and why) instead of silently ignored:
//! `--batch FILE` with `--model zoo::mlp` once ran and passed without reading FILE.
//!
//! Not for: whether a flag's value is valid (clap and the code that reads it say that).

use super::Args;
use crate::{Error, Result};

/// What a `check` runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// `--model zoo::<name>`: a built-in model, run in this process.
    Zoo,
    /// `--model crate::Net`: a model in the user's crate, built into a harness.
    Crate,
    /// `--torch FILE.py:NAME | hf:DIR`: a PyTorch model, run by the user's Python.
    Torch,
}

impl Subject {
    /// The subject `args` name.
    pub fn of(args: &Args) -> Subject {
        match (&args.model, &args.torch.torch) {
            (_, Some(_)) => Subject::Torch,
            (Some(m), None) if m.starts_with("zoo::") => Subject::Zoo,
            _ => Subject::Crate,
        }
    }

    /// How an error names it.
    fn describe(self) -> &'static str {
        match self {
            Subject::Zoo => "a zoo model (--model zoo::...)",
            Subject::Crate => "a model in your crate (--model crate::...)",
            Subject::Torch => "a PyTorch model (--torch)",
        }
    }
}

/// One flag of `check`: where it applies, whether it was given, and what it is for.
pub struct Flag {
    /// As typed (the long form).
    pub name: &'static str,
    /// The subjects it applies to.
    pub applies: &'static [Subject],
    /// Whether `args` carry it (never, for a flag that applies to every subject).
    pub given: fn(&Args) -> bool,
    /// What it is for, in the words of the refusal.
    pub what: &'static str,
}

const ALL: &[Subject] = &[Subject::Zoo, Subject::Crate, Subject::Torch];
const CRATE: &[Subject] = &[Subject::Crate];
const TORCH: &[Subject] = &[Subject::Torch];
/// The refusal's reason for the flags that feed a model in the user's crate.
const OWN: &str = "it says how to build or feed a model in your crate";
/// ... for the flags that build the user's crate.
const BUILD: &str = "it says how to build your crate";

fn never(_: &Args) -> bool {
    false
}

/// Every flag of `check` (a test keeps it complete) and the subjects it applies to.
pub const FLAGS: &[Flag] = &[
    Flag {
        name: "--model",
        applies: &[Subject::Zoo, Subject::Crate],
        given: never,
        what: "",
    },
    Flag {
        name: "--torch",
        applies: TORCH,
        given: never,
        what: "",
    },
    Flag {
        name: "--device",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--seed",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--seeds",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--steps",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--timeout",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--plot",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--series",
        applies: ALL,
        given: never,
        what: "",
    },
    Flag {
        name: "--python",
        applies: TORCH,
        given: |a| a.torch.python.is_some(),
        what: "it picks the Python that runs a PyTorch model",
    },
    Flag {
        name: "--lora",
        applies: TORCH,
        given: |a| a.torch.lora.is_some(),
        what: "it wraps a PyTorch model in peft's LoRA adapters",
    },
    Flag {
        name: "--new",
        applies: CRATE,
        given: |a| a.own.new.is_some(),
        what: OWN,
    },
    Flag {
        name: "--forward",
        applies: CRATE,
        given: |a| a.own.forward.is_some(),
        what: OWN,
    },
    Flag {
        name: "--input",
        applies: CRATE,
        given: |a| a.own.input.is_some(),
        what: OWN,
    },
    Flag {
        name: "--vocab",
        applies: CRATE,
        given: |a| a.own.vocab.is_some(),
        what: OWN,
    },
    Flag {
        name: "--classes",
        applies: CRATE,
        given: |a| a.own.classes.is_some(),
        what: OWN,
    },
    Flag {
        name: "--pad",
        applies: CRATE,
        given: |a| a.own.pad.is_some(),
        what: OWN,
    },
    Flag {
        name: "--batch",
        applies: CRATE,
        given: |a| a.own.batch.is_some(),
        what: OWN,
    },
    Flag {
        name: "--config",
        applies: CRATE,
        given: |a| a.own.config.is_some(),
        what: OWN,
    },
    Flag {
        name: "--features",
        applies: CRATE,
        given: |a| !a.build.features.is_empty(),
        what: BUILD,
    },
    Flag {
        name: "--release",
        applies: CRATE,
        given: |a| a.build.release,
        what: BUILD,
    },
    Flag {
        name: "--debug",
        applies: CRATE,
        given: |a| a.build.debug,
        what: BUILD,
    },
    Flag {
        name: "--offline",
        applies: CRATE,
        given: |a| a.build.offline,
        what: BUILD,
    },
    Flag {
        name: "--manifest-path",
        applies: CRATE,
        given: |a| a.build.manifest_path.is_some(),
        what: BUILD,
    },
    Flag {
        name: "--package",
        applies: CRATE,
        given: |a| a.build.package.is_some(),
        what: BUILD,
    },
];

/// Refuses the first flag given for a model it does not apply to (exit 2).
pub fn refuse_inapplicable(args: &Args) -> Result<()> {
    let subject = Subject::of(args);
    match FLAGS
        .iter()
        .find(|f| !f.applies.contains(&subject) && (f.given)(args))
    {
        Some(f) => Err(Error::usage(format!(
            "{}{} does not apply to {}: {}; remove it",
            f.name,
            if f.name == "--package" { " (-p)" } else { "" },
            subject.describe(),
            f.what
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args as _, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(extra: &[&str], subject: &[&str]) -> Args {
        let mut argv = vec!["mldebug", "all"];
        argv.extend_from_slice(subject);
        argv.extend_from_slice(extra);
        Cli::try_parse_from(&argv)
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
            .args
    }

    /// Every flag `check` has, as clap knows it: (long name, takes a value).
    fn every_flag() -> Vec<(String, bool)> {
        let command = Args::augment_args(clap::Command::new("check"));
        command
            .get_arguments()
            .filter_map(|a| {
                let long = a.get_long()?;
                Some((format!("--{long}"), a.get_action().takes_values()))
            })
            .filter(|(name, _)| name != "--help")
            .collect()
    }

    #[test]
    fn every_flag_of_check_has_one_row_in_the_table() {
        let flags = every_flag();
        assert!(flags.len() > 20, "{flags:?}");
        for (name, _) in &flags {
            let rows = FLAGS.iter().filter(|f| f.name == name).count();
            assert_eq!(rows, 1, "{name} must have one row in FLAGS");
        }
        for (i, f) in FLAGS.iter().enumerate() {
            assert!(
                FLAGS[..i].iter().all(|g| g.name != f.name),
                "{} has two rows",
                f.name
            );
        }
    }

    #[test]
    fn every_flag_is_refused_where_it_does_not_apply_and_kept_where_it_does() {
        let subjects: [(Subject, &[&str]); 3] = [
            (Subject::Zoo, &["--model", "zoo::mlp"]),
            (Subject::Crate, &["--model", "crate::Net"]),
            (Subject::Torch, &["--torch", "m.py:Net"]),
        ];
        for (name, takes_value) in every_flag() {
            let row = FLAGS.iter().find(|f| f.name == name).unwrap();
            if row.applies == ALL || name == "--model" || name == "--torch" {
                continue; // applies everywhere, or names the subject itself
            }
            let value = if name == "--input" { "f32:2x3" } else { "3" };
            let extra: Vec<&str> = if takes_value {
                vec![&name, value]
            } else {
                vec![&name]
            };
            for (subject, words) in &subjects {
                let args = parse(&extra, words);
                assert_eq!(Subject::of(&args), *subject);
                assert!((row.given)(&args), "{name}: not seen as given");
                let got = refuse_inapplicable(&args);
                if row.applies.contains(subject) {
                    assert!(got.is_ok(), "{name} with {subject:?} refused");
                } else {
                    let e = got.unwrap_err();
                    assert_eq!(e.exit(), crate::Exit::Usage, "{name}");
                    assert!(
                        e.message.starts_with(&name) && e.message.contains("does not apply"),
                        "{name}: {}",
                        e.message
                    );
                }
            }
        }
    }

    #[test]
    fn the_short_form_of_package_is_refused_too() {
        let args = parse(&["-p", "mine"], &["--torch", "m.py:Net"]);
        let e = refuse_inapplicable(&args).unwrap_err();
        assert!(e.message.contains("--package (-p)"), "{}", e.message);
    }
}
