//! What a user sees when `mldebug check --model ...` cannot run their model: each message is a
//! snapshot (temporary paths redacted), and each ends in the exit code the contract gives it.

use crate::harness_support;

use harness_support::{mldebug, plant, redacted_stderr, show, user_crate_copy};
use std::path::Path;

fn snapshot(name: &str, out: &std::process::Output, dir: &Path) {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"user-crate-[0-9a-f]{8}", "user-crate-[HASH]");
    settings.add_filter(r"mldebug-user-crate-\w+", "[CRATE]");
    settings.add_filter(r"/\S*/registry/src/[^/]+/", "[REGISTRY]/");
    settings.bind(|| insta::assert_snapshot!(name, redacted_stderr(out, dir)));
}

#[test]
fn no_cargo_toml_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = mldebug(dir.path(), &["check", "overfit", "--model", "crate::Net"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    snapshot("no_cargo_toml", &out, dir.path());
}

#[test]
fn a_crate_without_a_library_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"bin-only\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let out = mldebug(dir.path(), &["check", "overfit", "--model", "crate::Net"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    snapshot("no_library_target", &out, dir.path());
}

#[test]
fn a_model_path_that_is_not_a_type_path_is_refused_before_building() {
    let dir = tempfile::tempdir().unwrap();
    let out = mldebug(
        dir.path(),
        &["check", "overfit", "--model", "crate::Net; fn x()"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    snapshot("model_not_a_path", &out, dir.path());
}

/// One copy of the example serves both: a path that names nothing, and a type without the trait.
#[test]
fn unknown_types_and_types_without_the_trait_get_advice() {
    let copy = user_crate_copy(|lib| lib + "\n/// Not a model.\npub struct Plain;\n");
    let out = mldebug(
        copy.path(),
        &["check", "overfit", "--model", "crate::Nett", "--debug"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    snapshot("type_not_found", &out, copy.path());

    let out = mldebug(
        copy.path(),
        &["check", "overfit", "--model", "crate::Plain", "--debug"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("debug_model!(Plain, new = Plain::new"),
        "{}",
        show(&out)
    );
    snapshot("type_without_trait", &out, copy.path());
}

#[test]
fn a_compile_error_in_the_users_crate_is_shown_as_rustc_shows_it() {
    let copy =
        user_crate_copy(|lib| plant(lib, "self.fc2.forward(&hidden)", "self.fc2.forward(hidden)"));
    let out = mldebug(
        copy.path(),
        &["check", "overfit", "--model", "crate::Net", "--debug"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error[E0308]: mismatched types"),
        "{}",
        show(&out)
    );
    snapshot("user_crate_does_not_compile", &out, copy.path());
}

#[test]
fn a_model_that_panics_is_an_error_finding_with_exit_4() {
    let copy = user_crate_copy(|lib| {
        plant(
            lib,
            "let hidden = self.fc1.forward(xs)?.relu()?;",
            "let hidden = self.fc1.forward(xs)?.relu()?;\n        \
             assert!(hidden.dims()[0] == 0, \"the model blew up on purpose\");",
        )
    });
    let out = mldebug(
        copy.path(),
        &[
            "check",
            "overfit",
            "--model",
            "crate::Net",
            "--debug",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", show(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", show(&out)));
    let finding = &report["checks"][0];
    assert_eq!(finding["status"], "error", "{}", show(&out));
    let text = format!("{} {}", finding["summary"], finding["details"]);
    assert!(
        text.contains("the model blew up on purpose"),
        "{}",
        show(&out)
    );
    let summary = finding["summary"].as_str().unwrap();
    let summary = summary.replace(copy.path().to_str().unwrap(), "[CRATE]");
    insta::assert_snapshot!("model_panics", summary);
}
