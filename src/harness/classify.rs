//! Turn the harness build's compile errors into something a person can act on.
//!
//! An error in the user's own crate is theirs: it is shown exactly as rustc renders it, and the
//! run ends with exit 3. An error in the generated `main.rs` means `--model` named something the
//! harness cannot use (no such type, private, no `DebugModel`): it becomes advice, exit 2.

use super::generate::Harness;
use super::locate::UserCrate;
use crate::Error;
use cargo_metadata::diagnostic::Diagnostic;
use std::io::Write;
use std::path::Path;

/// Where a compile error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The generated `main.rs`: the `--model` path or the trait impl.
    Harness,
    /// The user's workspace (their crate or another member it depends on).
    User,
    /// A third-party dependency (a build script, a missing system library).
    Dependency,
}

/// Which crate a compile error belongs to, by the source file of the target being built.
pub fn origin(src_path: &Path, harness: &Harness, user: &UserCrate) -> Origin {
    if src_path.starts_with(&harness.dir) {
        Origin::Harness
    } else if src_path.starts_with(&user.workspace_root)
        || user
            .manifest_path
            .parent()
            .is_some_and(|d| src_path.starts_with(d))
    {
        Origin::User
    } else {
        Origin::Dependency
    }
}

/// The error a failed build ends with. Errors in the user's or a third-party crate are printed
/// on stderr first, as rustc renders them.
pub fn explain(
    errors: &[(Origin, Diagnostic)],
    harness: &Harness,
    user: &UserCrate,
    model: &str,
) -> Error {
    let of = |o: Origin| errors.iter().filter(move |(x, _)| *x == o).map(|(_, d)| d);
    if of(Origin::User).next().is_some() {
        print_rendered(of(Origin::User));
        return Error::build(format!(
            "your crate `{}` does not compile; fix the errors above (this is not an mldebug \
                 problem: `cargo build` in {} shows the same)",
            user.name,
            user.workspace_root.display()
        ));
    }
    if let Some(first) = of(Origin::Harness).next() {
        return harness_advice(first, harness, user, model);
    }
    print_rendered(of(Origin::Dependency));
    Error::build(format!(
        "a dependency of `{}` failed to build (errors above); `cargo build` in {} should \
             show the same",
        user.name,
        user.workspace_root.display()
    ))
}

fn print_rendered<'a>(diags: impl Iterator<Item = &'a Diagnostic>) {
    let mut err = std::io::stderr().lock();
    for d in diags {
        let text = d.rendered.as_deref().unwrap_or(&d.message);
        let _ = write!(err, "{}", text);
        if !text.ends_with('\n') {
            let _ = writeln!(err);
        }
    }
}

/// rustc codes meaning "no such item at this path".
const NOT_FOUND: [&str; 8] = [
    "E0412", "E0433", "E0425", "E0422", "E0531", "E0576", "E0574", "E0423",
];

/// Advice for an error in the generated `main.rs`.
pub fn harness_advice(d: &Diagnostic, harness: &Harness, user: &UserCrate, model: &str) -> Error {
    let code = d.code.as_ref().map(|c| c.code.as_str()).unwrap_or("");
    // rustc's own hints, with the replacement it suggests (`a struct with a similar name
    // exists: `Net``).
    let helps: Vec<String> = d
        .children
        .iter()
        .filter(|c| !c.message.is_empty())
        .map(|c| {
            let fix = c
                .spans
                .iter()
                .find_map(|s| s.suggested_replacement.as_deref())
                .map(|r| format!(": `{r}`"))
                .unwrap_or_default();
            format!("{}{fix}", c.message)
        })
        .collect();
    let rustc = if helps.is_empty() || code == "E0277" {
        format!("rustc: {}", d.message)
    } else {
        format!("rustc: {} ({})", d.message, helps.join("; "))
    };
    let ty = model.rsplit("::").next().unwrap_or(model);
    let ty = ty.split('<').next().unwrap_or(ty);
    let msg = if NOT_FOUND.contains(&code) {
        format!(
            "--model {model}: there is no type at that path in crate `{lib}` ({manifest}).\n\
             Check the spelling, and that the type and every module on the way to it are public \
             and reachable from src/lib.rs (`pub mod models;` and `pub struct {ty}`).\n{rustc}",
            lib = user.lib,
            manifest = user.manifest_path.display(),
        )
    } else if code == "E0603" {
        format!(
            "--model {model}: it is private to crate `{lib}`; make the type `pub` and every module \
             on the way `pub mod`.\n{rustc}",
            lib = user.lib
        )
    } else if code == "E0107" {
        format!(
            "--model {model}: `{ty}` is generic; name its parameters, e.g. \
             --model '{model}<f32>'.\n{rustc}"
        )
    } else if code == "E0277" && d.message.contains("DebugModel") {
        let versions = if helps
            .iter()
            .any(|h| h.contains("multiple different versions"))
        {
            "\nNote: two versions of mldebug-diagnostics are in the build; the harness uses the \
             one in your Cargo.toml, so implement the trait from that one."
        } else {
            ""
        };
        format!(
            "--model {model}: `{ty}` does not implement `mldebug_diagnostics::DebugModel`, which \
             tells the checks how to build it, feed it and score it.\n\
             Edit nothing: say how to feed it and the harness wraps it itself, e.g. \
             `--input f32:32x784 --classes 10` (a classifier), `--input tokens:16x32 --vocab 48` \
             (a causal LM) or `--batch FILE.safetensors`, with `--new {ty}::new` and \
             `--forward {ty}::forward` when those are its names.\n\
             Or, for a classifier with `fn new(vb: VarBuilder) -> Result<{ty}>` and a `forward`, add \
             one line to your crate (set `input` to one batch's shape, `classes` to the class \
             count):\n\n    \
             mldebug_diagnostics::debug_model!({ty}, new = {ty}::new, input = [32, 784], classes = 10);\n\n\
             or implement the trait by hand:\n\n    \
             impl mldebug_diagnostics::DebugModel for {ty} {{\n        \
             fn build(vb: candle_nn::VarBuilder) -> candle_core::Result<Self> {{\n            \
             {ty}::new(vb) // every trainable parameter from `vb`\n        }}\n        \
             fn batch(device: &candle_core::Device, seed: u64) -> candle_core::Result<mldebug_diagnostics::Batch> {{\n            \
             // a small fixed batch: input and I64 class ids, the same for the same seed\n        }}\n        \
             fn forward(&self, input: &candle_core::Tensor, train: bool) -> candle_core::Result<candle_core::Tensor> {{\n            \
             // the logits, [N, classes]\n        }}\n    \
             }}\n{versions}\n{rustc}"
        )
    } else {
        let rendered = d.rendered.as_deref().unwrap_or(&d.message);
        return Error::build(format!(
            "--model {model}: the generated harness ({}) does not compile:\n{}",
            harness.main_rs.display(),
            rendered.trim_end()
        ));
    };
    Error::usage(msg)
}
