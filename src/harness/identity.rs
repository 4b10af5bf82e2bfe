//! Which model a harness binary was generated for, so that a run never reports another run's
//! model under its own name.
//!
//! The identity is a hash of the generated `Cargo.toml` and `main.rs` (the features, the model
//! type and every unedited-model flag are in them) and the model type. The generated `main`
//! prints it first thing ([`IDENTITY_PREFIX`]); the CLI reads it back and refuses (exit 70) a
//! report from a binary that announces another identity, or none.
//!
//! Not for: keeping two runs apart in the first place (the harness lock in `generate` does).

use crate::{Error, Result};
use mldebug_diagnostics::harness::IDENTITY_PREFIX;

/// What a harness was generated for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// FNV-1a of the generated manifest and main source, 16 hex digits.
    pub hash: String,
    /// The model type as the harness names it (`my_net::models::Net`).
    pub model: String,
}

impl Identity {
    /// The identity of a harness built from `manifest` and `main_body` for `model`.
    pub fn of(manifest: &str, main_body: &str, model: &str) -> Identity {
        let mut bytes = manifest.as_bytes().to_vec();
        bytes.push(0);
        bytes.extend_from_slice(main_body.as_bytes());
        Identity {
            hash: format!("{:016x}", mldebug_text::hash::fnv1a(&bytes)),
            model: model.to_string(),
        }
    }

    /// The text after [`IDENTITY_PREFIX`] on the harness's announcement line.
    pub fn text(&self) -> String {
        format!("{} {}", self.hash, self.model)
    }

    /// The function the generated `main` calls before anything else (appended to `main.rs`).
    pub fn announce_fn(&self) -> String {
        let line = format!("{IDENTITY_PREFIX}{}", self.text());
        format!(
            "\n/// Says which model this binary was generated for, so that mldebug never takes \
             its report\n/// for another model's.\n\
             fn {ANNOUNCE_FN}() {{\n    \
             eprintln!(\"{{}}\", {line:?});\n\
             }}\n"
        )
    }
}

/// The name of the announcing function in the generated `main.rs`.
pub const ANNOUNCE_FN: &str = "mldebug_announce";

/// The identity text of `line` if it is an announcement.
pub fn announced(line: &str) -> Option<&str> {
    line.strip_prefix(IDENTITY_PREFIX)
}

/// Refuse (exit 70) what a harness wrote when it announced another identity than `expected`,
/// or none although it wrote a document (`wrote`). A harness that wrote nothing and announced
/// nothing crashed before its `main`: that is the model's crash, not a mix-up.
pub fn verify(expected: &Identity, announced: Option<&str>, wrote: bool) -> Result<()> {
    let expected_text = expected.text();
    match announced {
        Some(text) if text == expected_text => Ok(()),
        Some(text) => {
            let (hash, model) = text.split_once(' ').unwrap_or((text, "?"));
            Err(Error::internal(format!(
                "the harness that ran was generated for `{model}` (sources {hash}), not for \
                 `{}` (sources {}): another mldebug run on the same crate rewrote it; its \
                 result is not this model's and is not shown. Run the command again",
                expected.model, expected.hash
            )))
        }
        None if wrote => Err(Error::internal(format!(
            "the harness wrote a result without saying which model it was built for (expected \
             `{}`, sources {}); it is not shown. Run the command again",
            expected.model, expected.hash
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_covers_the_manifest_and_the_source() {
        let a = Identity::of("m", "fn main() {}", "x::A");
        assert_eq!(a, Identity::of("m", "fn main() {}", "x::A"));
        assert_eq!(a.hash.len(), 16);
        assert_ne!(a.hash, Identity::of("m2", "fn main() {}", "x::A").hash);
        assert_ne!(a.hash, Identity::of("m", "fn main() { }", "x::A").hash);
        // The boundary between the two parts counts.
        assert_ne!(
            Identity::of("ab", "c", "x").hash,
            Identity::of("a", "bc", "x").hash
        );
    }

    #[test]
    fn a_report_from_another_model_is_refused_with_exit_70() {
        let mine = Identity::of("manifest", "main for TinyLm", "tinylm::TinyLm");
        let theirs = Identity::of("manifest", "main for TinyMlp", "tinylm::TinyMlp");
        assert!(verify(&mine, Some(&mine.text()), true).is_ok());
        let e = verify(&mine, Some(&theirs.text()), true).unwrap_err();
        assert_eq!(e.exit(), crate::Exit::Internal);
        assert!(
            e.message.contains("generated for `tinylm::TinyMlp`")
                && e.message.contains("not for `tinylm::TinyLm`"),
            "{}",
            e.message
        );
        // The same model type from other sources (other flags or features) is not this run's.
        let other_flags = Identity::of("manifest", "other forward", "tinylm::TinyLm");
        assert!(verify(&mine, Some(&other_flags.text()), true).is_err());
        // A crash report from another model's binary is refused too.
        assert!(verify(&mine, Some(&theirs.text()), false).is_err());
        let silent = verify(&mine, None, true).unwrap_err();
        assert_eq!(silent.exit(), crate::Exit::Internal);
        assert!(verify(&mine, None, false).is_ok(), "a crash before main");
    }

    #[test]
    fn the_announcement_is_a_rust_function_printing_the_line() {
        let id = Identity::of("m", "b", "my_net::Net<f32>");
        let f = id.announce_fn();
        assert!(f.contains(&format!("fn {ANNOUNCE_FN}()")), "{f}");
        let expected = format!("{IDENTITY_PREFIX}{}", id.text());
        assert!(f.contains(&format!("{expected:?}")), "{f}");
        assert_eq!(announced(&expected), Some(id.text().as_str()));
        assert_eq!(announced("mldebug:progress {}"), None);
    }
}
