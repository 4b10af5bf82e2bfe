//! The settings for checking a model whose crate has no `DebugModel` impl (and need not depend
//! on mldebug at all): from the command line's flags (`mldebug check --new .. --input ..`) and
//! from `mldebug.toml` beside the crate's Cargo.toml, which holds the same settings.
//!
//! Flags win over the file. The result is an [`OwnModel`], or `None` when nothing asks for one
//! (the crate implements `DebugModel` itself).

use super::batch_file;
use super::own_model::{parse_input_spec, Call, Input, OwnModel, Role};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The settings file read beside the crate's Cargo.toml.
pub const CONFIG_FILE: &str = "mldebug.toml";

/// How to build, feed and run the model, as the flags or `mldebug.toml` give it (the file's
/// paths are relative to the file, the flags' to the current directory).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnModelSettings {
    /// The constructor (`--new`): `TinyLm::new`, or a call such as `TinyLm::new(&cfg, vb)`.
    pub new: Option<String>,
    /// The forward (`--forward`): the `Module` impl when absent.
    pub forward: Option<String>,
    /// The batch to draw (`--input`): `tokens:ROWSxLEN` or `f32:BATCHxFEATURES`.
    pub input: Option<String>,
    /// The vocabulary size, for token inputs.
    pub vocab: Option<usize>,
    /// The number of classes, for `f32` inputs.
    pub classes: Option<usize>,
    /// Padded positions at the end of every other token row.
    pub pad: Option<usize>,
    /// A safetensors file holding the real `input` and `targets`.
    pub batch: Option<PathBuf>,
    /// A JSON file the constructor's `cfg` is read from.
    pub config: Option<PathBuf>,
}

impl OwnModelSettings {
    /// Whether any flag asks for a model without a `DebugModel` impl.
    pub fn any(&self) -> bool {
        self.new.is_some()
            || self.forward.is_some()
            || self.input.is_some()
            || self.batch.is_some()
            || self.vocab.is_some()
            || self.classes.is_some()
            || self.pad.is_some()
            || self.config.is_some()
    }

    /// These settings (the flags) over `file` (read from the folder given with it), relative
    /// paths made absolute.
    pub fn merged(&self, file: Option<(&OwnModelSettings, &Path)>, cwd: &Path) -> OwnModelSettings {
        let (f, dir) = match file {
            Some((f, dir)) => (f.clone(), dir.to_path_buf()),
            None => (OwnModelSettings::default(), cwd.to_path_buf()),
        };
        let abs = |p: &PathBuf, base: &Path| {
            if p.is_absolute() {
                p.clone()
            } else {
                base.join(p)
            }
        };
        OwnModelSettings {
            new: self.new.clone().or(f.new),
            forward: self.forward.clone().or(f.forward),
            input: self.input.clone().or(f.input),
            vocab: self.vocab.or(f.vocab),
            classes: self.classes.or(f.classes),
            pad: self.pad.or(f.pad),
            batch: self
                .batch
                .as_ref()
                .map(|p| abs(p, cwd))
                .or_else(|| f.batch.as_ref().map(|p| abs(p, &dir))),
            config: self
                .config
                .as_ref()
                .map(|p| abs(p, cwd))
                .or_else(|| f.config.as_ref().map(|p| abs(p, &dir))),
        }
    }

    /// The model settings these flags describe; a usage error says what is missing.
    pub fn resolve(&self) -> Result<OwnModel> {
        let new = Call::parse(
            "--new",
            self.new.as_deref().unwrap_or("new"),
            Role::Constructor,
        )?;
        let forward = self
            .forward
            .as_deref()
            .map(|f| Call::parse("--forward", f, Role::Forward))
            .transpose()?;
        let input = self.input_kind()?;
        if new.wants_config() && self.config.is_none() {
            return Err(Error::usage(
                "--new passes `cfg`: give --config FILE.json to read it from",
            ));
        }
        Ok(OwnModel {
            new,
            forward,
            input,
            config: self.config.clone(),
        })
    }

    fn input_kind(&self) -> Result<Input> {
        if let Some(path) = &self.batch {
            return Ok(Input::File {
                task: batch_file::validate(
                    path,
                    batch_file::Bounds {
                        vocab: self.vocab,
                        classes: self.classes,
                    },
                )?,
                path: path.clone(),
            });
        }
        let spec = self.input.as_deref().ok_or_else(|| {
            Error::usage(
                "this crate has no `DebugModel` impl, so say what to feed the model: \
                 --input tokens:16x32 --vocab 48 (a causal LM), --input f32:32x784 --classes 10 \
                 (a classifier), or --batch FILE.safetensors (your own batch: `input`, `targets`)",
            )
        })?;
        let (kind, dims) = parse_input_spec(spec)?;
        if kind == "tokens" {
            let vocab = self.vocab.ok_or_else(|| {
                Error::usage(format!(
                    "--input {spec}: give the vocabulary size with --vocab N"
                ))
            })?;
            let pad = self.pad.unwrap_or(0);
            if vocab < 3 || pad >= dims[1] {
                return Err(Error::usage(format!(
                    "--input {spec}: needs --vocab of at least 3 and --pad below {} (got {vocab}, {pad})",
                    dims[1]
                )));
            }
            Ok(Input::Tokens {
                rows: dims[0],
                len: dims[1],
                vocab,
                pad,
            })
        } else {
            let classes = self.classes.filter(|&c| c > 0).ok_or_else(|| {
                Error::usage(format!(
                    "--input {spec}: give the number of classes with --classes N"
                ))
            })?;
            Ok(Input::Features {
                shape: dims,
                classes,
            })
        }
    }
}

/// `mldebug.toml` in `dir`, if there is one.
pub fn read_file_settings(dir: &Path) -> Result<Option<OwnModelSettings>> {
    let path = dir.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path.display(), &e)),
    };
    toml::from_str(&text).map(Some).map_err(|e| {
        let place = e
            .span()
            .map(|s| format!("line {}", text[..s.start].matches('\n').count() + 1))
            .unwrap_or_else(|| "TOML".to_string());
        Error::input(&path, place, e.message())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_paths_resolve_against_their_origin() {
        let file = OwnModelSettings {
            input: Some("tokens:4x8".into()),
            vocab: Some(10),
            batch: None,
            config: Some("cfg.json".into()),
            ..Default::default()
        };
        let flags = OwnModelSettings {
            vocab: Some(20),
            ..Default::default()
        };
        let m = flags.merged(Some((&file, Path::new("/crate"))), Path::new("/cwd"));
        assert_eq!(m.vocab, Some(20));
        assert_eq!(m.config.as_deref(), Some(Path::new("/crate/cfg.json")));
        let own = m.resolve().unwrap();
        assert_eq!(
            own.input,
            Input::Tokens {
                rows: 4,
                len: 8,
                vocab: 20,
                pad: 0
            }
        );
    }

    #[test]
    fn missing_pieces_are_usage_errors_that_name_the_flag() {
        let e = OwnModelSettings::default().resolve().unwrap_err();
        assert!(
            e.message.contains("--input tokens:16x32 --vocab 48"),
            "{}",
            e.message
        );
        let no_vocab = OwnModelSettings {
            input: Some("tokens:4x8".into()),
            ..Default::default()
        };
        assert!(no_vocab
            .resolve()
            .unwrap_err()
            .message
            .contains("--vocab N"));
        let cfg = OwnModelSettings {
            input: Some("f32:4x8".into()),
            classes: Some(3),
            new: Some("Net::new(&cfg, vb)".into()),
            ..Default::default()
        };
        assert!(cfg.resolve().unwrap_err().message.contains("--config"));
    }

    #[test]
    fn the_file_is_strict_and_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_file_settings(dir.path()).unwrap().is_none());
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "input = \"tokens:4x8\"\nvocabb = 3\n",
        )
        .unwrap();
        let e = read_file_settings(dir.path()).unwrap_err();
        assert!(e.message.contains("mldebug.toml: line 2"), "{}", e.message);
    }
}
