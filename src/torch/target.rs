//! `--torch FILE.py:NAME | hf:DIR_OR_CONFIG_JSON` and `--lora r=16,alpha=32,targets=q_proj,v_proj`:
//! parsed strictly, paths checked before Python starts.

use crate::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The model the driver builds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// A protocol object `name` in the Python file `path`.
    File { path: PathBuf, name: String },
    /// A Hugging Face causal LM built from a config (a directory holding `config.json`, or the
    /// file itself), with random weights.
    Hf { path: PathBuf },
}

impl Target {
    /// Parses the `--torch` value; `cwd` resolves relative paths (the driver runs elsewhere).
    pub fn parse(spec: &str, cwd: &Path) -> Result<Target> {
        if let Some(path) = spec.strip_prefix("hf:") {
            let path = absolute(cwd, path);
            let config = if path.is_dir() {
                path.join("config.json")
            } else {
                path.clone()
            };
            if !config.is_file() {
                return Err(Error::usage(format!(
                    "--torch hf:{}: no config.json there (give a model directory or its config.json)",
                    path.display()
                )));
            }
            return Ok(Target::Hf { path });
        }
        let Some((file, name)) = spec.rsplit_once(':') else {
            return Err(Error::usage(format!(
                "--torch `{}`: expected FILE.py:NAME (a class or object in the file) or hf:DIR",
                spec.escape_debug()
            )));
        };
        let valid_name = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        if !valid_name {
            return Err(Error::usage(format!(
                "--torch {}: `{}` is not a Python name (expected FILE.py:NAME)",
                spec.escape_debug(),
                name.escape_debug()
            )));
        }
        let path = absolute(cwd, file);
        if path.is_dir() {
            return Err(Error::usage(format!(
                "--torch {}: {} is a folder; name the Python file (FILE.py:NAME)",
                spec.escape_debug(),
                path.display()
            )));
        }
        if !path.is_file() {
            return Err(Error::usage(format!(
                "--torch {}: no such file {}",
                spec.escape_debug(),
                path.display()
            )));
        }
        Ok(Target::File {
            path,
            name: name.to_string(),
        })
    }
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// `--lora`: wrap the model with peft's LoRA adapters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lora {
    pub r: u32,
    pub alpha: f64,
    pub targets: Vec<String>,
    pub dropout: f64,
}

impl Lora {
    /// `r=16,alpha=32,targets=q_proj,v_proj[,dropout=0.05]`: a bare word after `targets=` is one
    /// more target.
    pub fn parse(spec: &str) -> Result<Lora> {
        let bad = |why: String| {
            Error::usage(format!(
                "--lora `{}`: {why} (expected r=16,alpha=32,targets=q_proj,v_proj)",
                spec.escape_debug()
            ))
        };
        let mut lora = Lora {
            r: 8,
            alpha: 16.0,
            targets: Vec::new(),
            dropout: 0.0,
        };
        let mut in_targets = false;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                if in_targets && is_module_name(part) {
                    lora.targets.push(part.to_string());
                    continue;
                }
                return Err(bad(format!("`{}` is not key=value", part.escape_debug())));
            };
            in_targets = false;
            match key.trim() {
                "r" => {
                    lora.r = value
                        .parse()
                        .ok()
                        .filter(|&r| r > 0)
                        .ok_or_else(|| bad("r must be a positive integer".into()))?;
                }
                "alpha" => {
                    lora.alpha = value
                        .parse()
                        .ok()
                        .filter(|a: &f64| a.is_finite() && *a > 0.0)
                        .ok_or_else(|| bad("alpha must be a positive number".into()))?;
                }
                "dropout" => {
                    lora.dropout = value
                        .parse()
                        .ok()
                        .filter(|d| (0.0..1.0).contains(d))
                        .ok_or_else(|| bad("dropout must be in [0, 1)".into()))?;
                }
                "targets" | "target_modules" => {
                    if !is_module_name(value) {
                        return Err(bad(format!(
                            "`{}` is not a module name",
                            value.escape_debug()
                        )));
                    }
                    lora.targets.push(value.to_string());
                    in_targets = true;
                }
                other => return Err(bad(format!("unknown key `{}`", other.escape_debug()))),
            }
        }
        if lora.targets.is_empty() {
            return Err(bad("no targets".into()));
        }
        Ok(lora)
    }
}

fn is_module_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lora_specs() {
        let l = Lora::parse("r=16,alpha=32,targets=q_proj,v_proj").unwrap();
        assert_eq!((l.r, l.alpha), (16, 32.0));
        assert_eq!(l.targets, ["q_proj", "v_proj"]);
        let l = Lora::parse("targets=c_attn,r=4,dropout=0.1").unwrap();
        assert_eq!((l.r, l.targets.len(), l.dropout), (4, 1, 0.1));
        for bad in [
            "r=0,targets=q",
            "r=16",
            "targets=q;rm",
            "r=x,targets=q",
            "q_proj",
            "alpha=-1,targets=q",
            "bogus=1,targets=q",
        ] {
            let e = Lora::parse(bad).unwrap_err();
            assert_eq!(e.exit(), crate::Exit::Usage, "{bad}");
            assert!(e.message.starts_with("--lora"), "{}", e.message);
        }
    }

    #[test]
    fn targets() {
        let dir = std::env::temp_dir().join(format!("mldebug-target-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("hf")).unwrap();
        std::fs::write(dir.join("m.py"), "").unwrap();
        std::fs::write(dir.join("hf/config.json"), "{}").unwrap();
        assert_eq!(
            Target::parse("m.py:Net", &dir).unwrap(),
            Target::File {
                path: dir.join("m.py"),
                name: "Net".into()
            }
        );
        assert!(matches!(
            Target::parse("hf:hf", &dir).unwrap(),
            Target::Hf { .. }
        ));
        assert!(matches!(
            Target::parse("hf:hf/config.json", &dir).unwrap(),
            Target::Hf { .. }
        ));
        for bad in [
            "m.py",
            "m.py:",
            "m.py:1x",
            "m.py:a b",
            "nope.py:Net",
            "hf:nowhere",
        ] {
            let e = Target::parse(bad, &dir).unwrap_err();
            assert_eq!(e.exit(), crate::Exit::Usage, "{bad}: {}", e.message);
        }
        let e = Target::parse("hf:Net", &dir).unwrap_err();
        assert!(e.message.contains("no config.json"), "{}", e.message);
        let e = Target::parse(&format!("{}:Net", dir.display()), &dir).unwrap_err();
        assert!(e.message.contains("is a folder"), "{}", e.message);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
