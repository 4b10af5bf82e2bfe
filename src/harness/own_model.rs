//! A model checked without touching its crate: the harness wraps the user's type in a newtype
//! that implements `DebugModel` (the orphan rule forbids implementing it on the user's type from
//! the harness), built from `--new`, run through `--forward`, fed by `--input` or `--batch`.
//!
//! Everything here is pasted into generated Rust, so every piece is parsed strictly first: paths
//! are identifiers joined by `::`, and call arguments come from a short list of tokens.
//!
//! Not for: reading the flags or `mldebug.toml` (`own_settings`), building (`compile`).

use crate::{Error, Result};
use mldebug_diagnostics::Task;
use std::path::PathBuf;

/// How the harness builds, feeds and runs the user's model.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnModel {
    pub new: Call,
    /// `None`: the type's `candle_nn::Module` impl.
    pub forward: Option<Call>,
    pub input: Input,
    /// A JSON file the constructor's `cfg` argument is read from.
    pub config: Option<PathBuf>,
}

/// Where the batch comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A causal-LM batch: `rows` sequences of `len` tokens in `0..vocab`, `pad` padded positions
    /// in every other row.
    Tokens {
        rows: usize,
        len: usize,
        vocab: usize,
        pad: usize,
    },
    /// N(0, 1) inputs of `shape` and balanced class ids.
    Features { shape: Vec<usize>, classes: usize },
    /// The user's own batch (`input`, `targets`) from a safetensors file, with the task its
    /// targets imply.
    File { path: PathBuf, task: Task },
}

impl Input {
    pub fn task(&self) -> Task {
        match self {
            Input::Tokens { .. } => Task::CausalLm,
            Input::Features { .. } => Task::Classification,
            Input::File { task, .. } => *task,
        }
    }
}

/// A function path and, optionally, the arguments it is called with (the receiver of a
/// forward is implied).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub path: Vec<String>,
    /// `None`: the default arguments (`vb` for a constructor, `input` for a forward).
    pub args: Option<Vec<String>>,
}

/// Which tokens an argument may be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    Constructor,
    Forward,
}

impl Call {
    /// Parse `TinyLm::new`, `TinyLm::new(&cfg, vb)`, `TinyLm::forward(&input, 0)`.
    pub fn parse(flag: &str, s: &str, role: Role) -> Result<Call> {
        let allowed = match role {
            Role::Constructor => {
                "`vb`, `&vb`, `cfg`, `&cfg`, a number, `true`, `false`, or \
                                  `Type::function()`"
            }
            Role::Forward => {
                "`input`, `&input`, `train`, `!train`, a number, `true`, `false`, \
                              `None` or `Type::function()`"
            }
        };
        let bad = |why: String| {
            Error::usage(format!(
                "{flag} `{}`: {why}; expected a function path such as `TinyLm::new`, optionally \
                 called with arguments from {allowed}",
                s.escape_debug()
            ))
        };
        let s = s.trim();
        let (path, args) = match s.find('(') {
            Some(i) if s.ends_with(')') => (&s[..i], Some(&s[i + 1..s.len() - 1])),
            Some(_) => return Err(bad("an unclosed argument list".into())),
            None => (s, None),
        };
        let path = parse_path(path).ok_or_else(|| bad("not a path of identifiers".into()))?;
        let args = match args {
            None => None,
            Some(a) => Some(
                split_args(a)
                    .iter()
                    .map(|arg| {
                        check_arg(arg, role)
                            .then(|| arg.to_string())
                            .ok_or_else(|| bad(format!("argument `{arg}` is not one of these")))
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        Ok(Call { path, args })
    }

    /// Whether the arguments read the config (`cfg`).
    pub fn wants_config(&self) -> bool {
        self.args
            .iter()
            .flatten()
            .any(|a| a.trim_start_matches('&') == "cfg")
    }
}

/// `a::b::C` → `["a", "b", "C"]`; `crate::` is dropped.
fn parse_path(s: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = s.split("::").map(|p| p.trim().to_string()).collect();
    if parts.first().map(String::as_str) == Some("crate") {
        parts.remove(0);
    }
    (!parts.is_empty() && parts.iter().all(|p| is_ident(p))).then_some(parts)
}

fn split_args(a: &str) -> Vec<&str> {
    if a.trim().is_empty() {
        return Vec::new();
    }
    a.split(',').map(str::trim).collect()
}

fn check_arg(arg: &str, role: Role) -> bool {
    let named: &[&str] = match role {
        Role::Constructor => &["vb", "&vb", "cfg", "&cfg"],
        Role::Forward => &["input", "&input", "train", "!train", "None"],
    };
    if named.contains(&arg) || arg == "true" || arg == "false" {
        return true;
    }
    if is_number(arg) {
        return true;
    }
    // `Config::tiny()` or `&Config::tiny()`: a path called with nothing.
    arg.trim_start_matches('&')
        .strip_suffix("()")
        .and_then(parse_path)
        .is_some()
}

/// A numeric literal (`0`, `1e-5`, `0.5f32`, `-1`): digits, letters, `.`, `_`, `-` after a
/// leading digit: nothing that could end an expression.
fn is_number(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    body.chars().next().is_some_and(|c| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && s != "_"
}

/// A path as the harness names it: a bare function (`new`) or `Type::f` where `Type` is the
/// model's own name resolve against the model type; anything else is a path in the user's crate.
fn resolve(path: &[String], model_type: &str, lib: &str) -> String {
    let model_name = model_type
        .rsplit("::")
        .next()
        .unwrap_or(model_type)
        .split('<')
        .next()
        .unwrap_or("");
    match path {
        [f] => format!("<::{model_type}>::{f}"),
        [ty, f] if ty == model_name => format!("<::{model_type}>::{f}"),
        _ => format!("::{lib}::{}", path.join("::")),
    }
}

/// Arguments as written into the harness: `Type::f()` paths resolve like functions.
fn render_args(args: &[String], model_type: &str, lib: &str) -> Vec<String> {
    args.iter()
        .map(|a| match a.trim_start_matches('&').strip_suffix("()") {
            Some(path) if !a.starts_with('!') => {
                let amp = if a.starts_with('&') { "&" } else { "" };
                let parts = parse_path(path).unwrap_or_default();
                let resolved = if parts.len() == 1 {
                    format!("::{lib}::{}", parts[0])
                } else {
                    resolve(&parts, model_type, lib)
                };
                format!("{amp}{resolved}()")
            }
            _ => a.clone(),
        })
        .collect()
}

/// The generated `main.rs` for `own`: `model_type` as seen from the harness (`tinylm::TinyLm`),
/// `lib` the user's library name, `diag` the diagnostics crate's name in Rust.
pub fn main_source(own: &OwnModel, pkg: &str, model_type: &str, lib: &str, diag: &str) -> String {
    let new_path = resolve(&own.new.path, model_type, lib);
    let new_args = match &own.new.args {
        Some(a) => render_args(a, model_type, lib).join(", "),
        None => "vb".to_string(),
    };
    let config = match (&own.config, own.new.wants_config()) {
        (Some(path), true) => format!(
            "        let cfg = mld::harness::config_from_json({:?})?;\n",
            path.to_string_lossy()
        ),
        _ => String::new(),
    };
    let forward = match &own.forward {
        None => "mld::candle_nn::Module::forward(&*model, input)".to_string(),
        Some(call) => {
            let args = match &call.args {
                Some(a) => render_args(a, model_type, lib).join(", "),
                None => "input".to_string(),
            };
            let sep = if args.is_empty() { "" } else { ", " };
            format!(
                "{}(&mut *model{sep}{})",
                resolve(&call.path, model_type, lib),
                args.replace("&input", "input")
            )
        }
    };
    let batch = match &own.input {
        Input::Tokens {
            rows,
            len,
            vocab,
            pad,
        } => format!("mld::harness::causal_lm_batch({rows}, {len}, {vocab}, {pad}, device, seed)"),
        Input::Features { shape, classes } => {
            format!("mld::harness::classification_batch(&{shape:?}, {classes}, device, seed)")
        }
        Input::File { path, .. } => format!(
            "{{\n        let _ = seed;\n        \
             mld::harness::batch_from_safetensors(std::path::Path::new({:?}), device)\n    }}",
            path.to_string_lossy()
        ),
    };
    let task = match own.input.task() {
        Task::Classification => "Classification",
        Task::CausalLm => "CausalLm",
        Task::Regression => "Regression",
    };
    format!(
        "// Generated by `mldebug check` for package `{pkg}`; rewritten when needed.\n\
         // Your crate is not edited: the flags (or mldebug.toml) say what goes here.\n\
         use ::{diag} as mld;\n\
         use mld::candle_core::{{Device, Result, Tensor}};\n\
         \n\
         /// The model, wrapped so that this crate may implement `DebugModel` for it; the cell\n\
         /// lets a forward that takes `&mut self` run.\n\
         struct Checked(std::cell::RefCell<::{model_type}>);\n\
         \n\
         impl mld::DebugModel for Checked {{\n    \
         fn build(vb: mld::candle_nn::VarBuilder) -> Result<Self> {{\n{config}        \
         let model = mld::harness::model_result({new_path}({new_args}))?;\n        \
         Ok(Checked(std::cell::RefCell::new(model)))\n    \
         }}\n    \
         fn batch(device: &Device, seed: u64) -> Result<mld::Batch> {{\n        \
         {batch}\n    \
         }}\n    \
         #[allow(unused_variables)]\n    \
         fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {{\n        \
         #[allow(unused_mut)]\n        \
         let mut model = self.0.borrow_mut();\n        \
         mld::harness::model_result({forward})\n    \
         }}\n    \
         fn task() -> mld::Task {{\n        \
         mld::Task::{task}\n    \
         }}\n\
         }}\n\
         \n\
         fn main() {{\n    \
         {announce}();\n    \
         mld::harness::main::<Checked>();\n\
         }}\n\
         \n\
         #[global_allocator]\n\
         static ALLOC: mld::memory::CountingAllocator = mld::memory::CountingAllocator;\n",
        announce = super::identity::ANNOUNCE_FN,
    )
}

/// `tokens:16x32` or `f32:32x784` → the kind and the dimensions.
pub fn parse_input_spec(s: &str) -> Result<(String, Vec<usize>)> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--input `{}`: {why}; expected `tokens:ROWSxLEN` (with --vocab) or \
             `f32:BATCHxFEATURES...` (with --classes)",
            s.escape_debug()
        ))
    };
    let (kind, dims) = s.split_once(':').ok_or_else(|| bad("no `:`"))?;
    if kind != "tokens" && kind != "f32" {
        return Err(bad("the kind is neither `tokens` nor `f32`"));
    }
    let dims: Vec<usize> = dims
        .split('x')
        .map(|d| d.trim().parse::<usize>().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| bad("the dimensions are not positive integers joined by `x`"))?;
    if kind == "tokens" && dims.len() != 2 {
        return Err(bad("token input is two dimensions, ROWSxLEN"));
    }
    if dims.len() > MAX_DIMS || dims.iter().product::<usize>() > MAX_ELEMENTS {
        return Err(bad("the batch is too large for a check"));
    }
    Ok((kind.to_string(), dims))
}

/// At most this many dimensions in `--input`.
const MAX_DIMS: usize = 6;
/// A batch the checks can afford on a CPU many times over (64 Mi values).
const MAX_ELEMENTS: usize = 1 << 26;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_and_anything_else_is_refused() {
        let c = Call::parse("--new", "TinyLm::new", Role::Constructor).unwrap();
        assert_eq!((c.path.len(), c.args), (2, None));
        let c = Call::parse("--new", "TinyLm::new(&cfg, vb)", Role::Constructor).unwrap();
        assert!(c.wants_config());
        let c = Call::parse(
            "--forward",
            "TinyLm::forward(&input, 0, !train)",
            Role::Forward,
        )
        .unwrap();
        assert_eq!(c.args.unwrap(), ["&input", "0", "!train"]);
        for bad in [
            "TinyLm::new(vb); std::process::exit(0)",
            "TinyLm::new(vb",
            "Tiny-Lm::new",
            "TinyLm::new(input)",
            "TinyLm::new(\"x\")",
            "",
        ] {
            let e = Call::parse("--new", bad, Role::Constructor).unwrap_err();
            assert!(e.message.starts_with("--new `"), "{bad}: {}", e.message);
        }
        assert!(Call::parse("--forward", "f(vb)", Role::Forward).is_err());
    }

    #[test]
    fn input_specs_parse_and_bad_ones_name_the_form() {
        assert_eq!(
            parse_input_spec("tokens:16x32").unwrap(),
            ("tokens".into(), vec![16, 32])
        );
        assert_eq!(parse_input_spec("f32:32x784").unwrap().1, [32, 784]);
        for bad in [
            "tokens:16",
            "i8:3x3",
            "f32:0x3",
            "f32:3xa",
            "tokens16x32",
            "f32:99999x99999",
        ] {
            let e = parse_input_spec(bad).unwrap_err();
            assert!(e.message.contains("expected `tokens:ROWSxLEN`"), "{bad}");
        }
    }

    #[test]
    fn the_generated_main_wraps_the_type_and_resolves_paths() {
        let own = OwnModel {
            new: Call::parse("--new", "TinyLm::new(&cfg, vb)", Role::Constructor).unwrap(),
            forward: Some(
                Call::parse("--forward", "TinyLm::forward(&input, 0)", Role::Forward).unwrap(),
            ),
            input: Input::Tokens {
                rows: 16,
                len: 32,
                vocab: 48,
                pad: 0,
            },
            config: Some(PathBuf::from("/tmp/cfg.json")),
        };
        let src = main_source(
            &own,
            "tinylm",
            "tinylm::model::TinyLm",
            "tinylm",
            "mldebug_diagnostics",
        );
        assert!(
            src.contains("struct Checked(std::cell::RefCell<::tinylm::model::TinyLm>);"),
            "{src}"
        );
        assert!(src.contains("config_from_json(\"/tmp/cfg.json\")"), "{src}");
        assert!(
            src.contains("<::tinylm::model::TinyLm>::new(&cfg, vb)"),
            "{src}"
        );
        assert!(
            src.contains("<::tinylm::model::TinyLm>::forward(&mut *model, input, 0)"),
            "{src}"
        );
        assert!(
            src.contains("causal_lm_batch(16, 32, 48, 0, device, seed)"),
            "{src}"
        );
        assert!(src.contains("mld::Task::CausalLm"), "{src}");

        let plain = OwnModel {
            new: Call::parse("--new", "models::build", Role::Constructor).unwrap(),
            forward: None,
            input: Input::Features {
                shape: vec![8, 4],
                classes: 3,
            },
            config: None,
        };
        let src = main_source(&plain, "n", "n::Net", "n", "mldebug_diagnostics");
        assert!(src.contains("::n::models::build(vb)"), "{src}");
        assert!(src.contains("Module::forward(&*model, input)"), "{src}");
        assert!(
            src.contains("classification_batch(&[8, 4], 3, device, seed)"),
            "{src}"
        );
    }
}
