//! `mldebug catalog verify`: passes on the real, embedded catalog; on temporary copies with one
//! thing broken, exits 1 naming the file and the line.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copy a catalog (SKILL.md, PLAYBOOK.md, refs/, evidence/) from `from` into a temp dir.
fn copy_catalog(from: &Path) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for f in ["SKILL.md", "PLAYBOOK.md"] {
        if from.join(f).is_file() {
            std::fs::copy(from.join(f), tmp.path().join(f)).unwrap();
        }
    }
    for d in ["refs", "evidence"] {
        let Ok(rd) = std::fs::read_dir(from.join(d)) else {
            continue;
        };
        std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        for e in rd {
            let p = e.unwrap().path();
            if p.is_file() {
                std::fs::copy(&p, tmp.path().join(d).join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    tmp
}

fn verify_dir(dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never", "--catalog"])
        .arg(dir)
        .args(["catalog", "verify"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

fn fixture_copy() -> tempfile::TempDir {
    copy_catalog(&root().join("tests/fixtures/catalog"))
}

/// Verify a broken fixture copy: exit 1 and a line `<dir>/<file>:<line>: ...<needle>...`.
fn assert_fails_at(dir: &Path, file: &str, line: usize, needle: &str) {
    let (code, out) = verify_dir(dir);
    assert_eq!(code, 1, "{out}");
    let prefix = format!("{}/{file}:{line}: ", dir.display());
    assert!(
        out.lines()
            .any(|l| l.starts_with(&prefix) && l.contains(needle)),
        "expected `{prefix}...{needle}...` in:\n{out}"
    );
}

#[test]
fn the_embedded_catalog_verifies() {
    let c = mldebug::catalog::embedded();
    let problems = mldebug::catalog::verify::verify(c);
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(
        text.is_empty(),
        "{} problems:\n{}",
        text.len(),
        text.join("\n")
    );
    assert!(c.entries.len() >= 10 && c.quotes.len() >= 10 && c.symptoms.len() >= 5);
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["catalog", "verify"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn one_word_changed_in_a_skill_quote_fails_with_file_and_line() {
    let tmp = copy_catalog(&root());
    let skill = tmp.path().join("SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("> ") && l.contains("[^") && l.split_whitespace().count() > 8)
        .expect("SKILL.md has a quote");
    // Change the third word of the quote.
    let mut words: Vec<String> = line.split(' ').map(String::from).collect();
    words[3] = format!("{}x", words[3]);
    let altered = words.join(" ");
    let new_text = text.replacen(line, &altered, 1);
    std::fs::write(&skill, new_text).unwrap();
    let (code, out) = verify_dir(tmp.path());
    assert_eq!(code, 1, "{out}");
    let prefix = format!("{}/SKILL.md:{}: ", tmp.path().display(), n + 1);
    assert!(
        out.lines()
            .any(|l| l.starts_with(&prefix) && l.contains("does not match")),
        "expected `{prefix}quote does not match...` in:\n{out}"
    );
}

#[test]
fn fixture_passes_before_it_is_broken() {
    let tmp = fixture_copy();
    let (code, out) = verify_dir(tmp.path());
    assert_eq!(code, 0, "{out}");
}

#[test]
fn quote_mismatch() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "only a few examples",
        "only a handful of examples",
    );
    assert_fails_at(
        tmp.path(),
        "SKILL.md",
        36,
        "differs at word 8: the quote has `handful`",
    );
}

#[test]
fn elided_pieces_out_of_order() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "> Overfit a single batch of only a few examples (e.g. as little as two). [...] If they do not, there is a bug somewhere and we cannot continue to the next stage.",
        "> If they do not, there is a bug somewhere and we cannot continue to the next stage. [...] Overfit a single batch of only a few examples (e.g. as little as two).",
    );
    assert_fails_at(tmp.path(), "SKILL.md", 36, "does not match");
}

#[test]
fn missing_evidence_for_a_footnote() {
    let tmp = fixture_copy();
    std::fs::remove_file(tmp.path().join("evidence/bekman-debug-utils.yaml")).unwrap();
    assert_fails_at(
        tmp.path(),
        "SKILL.md",
        46,
        "evidence/bekman-debug-utils.yaml",
    );
    assert_fails_at(tmp.path(), "SKILL.md", 55, "does not exist");
}

#[test]
fn missing_footnote_definition() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "[^whitaker-surface-area]: Johno Whitaker",
        "[^whitaker]: Johno Whitaker",
    );
    assert_fails_at(
        tmp.path(),
        "SKILL.md",
        20,
        "[^whitaker-surface-area] has no definition",
    );
}

#[test]
fn unverified_marker_must_match_the_evidence() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "[^rahtz-reproducing-rl] *(unverified)*",
        "[^rahtz-reproducing-rl]",
    );
    assert_fails_at(tmp.path(), "SKILL.md", 14, "lacks the marker");
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "probe the problem.[^whitaker-surface-area]",
        "probe the problem.[^whitaker-surface-area] *(unverified)*",
    );
    assert_fails_at(tmp.path(), "SKILL.md", 20, "remove the marker");
}

#[test]
fn unknown_check_id() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "mldebug check overfit --model",
        "mldebug check overfitting --model",
    );
    assert_fails_at(tmp.path(), "SKILL.md", 40, "unknown check `overfitting`");
}

#[test]
fn check_without_refs_section() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "refs/diagnostics.md",
        "{#check-batch-leak}",
        "{#batch-leak}",
    );
    assert_fails_at(
        tmp.path(),
        "refs/diagnostics.md",
        1,
        "check `batch-leak` has no section",
    );
}

#[test]
fn bad_front_matter() {
    let tmp = fixture_copy();
    edit(tmp.path(), "SKILL.md", "name: mldebug", "name: ML_Debug");
    assert_fails_at(tmp.path(), "SKILL.md", 2, "may hold only a-z");
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "one batch.\n---",
        "one batch <path>.\nauthor: me\n---",
    );
    assert_fails_at(tmp.path(), "SKILL.md", 3, "must not contain `<` or `>`");
    assert_fails_at(
        tmp.path(),
        "SKILL.md",
        4,
        "`author` is not in the agent-skill spec",
    );
}

#[test]
fn installed_folder_must_carry_the_skill_name() {
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    let src = fixture_copy();
    std::fs::rename(src.path(), skills.join("other-name")).unwrap();
    let (code, out) = verify_dir(&skills.join("other-name"));
    assert_eq!(code, 1);
    assert!(
        out.contains("must equal the skill's folder name `other-name`"),
        "{out}"
    );
}

#[test]
fn unterminated_symptoms_table() {
    let tmp = fixture_copy();
    edit(tmp.path(), "PLAYBOOK.md", "|---|---|---|\n", "");
    assert_fails_at(tmp.path(), "PLAYBOOK.md", 5, "not part of a table");
}

#[test]
fn evidence_status_must_be_the_weakest() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "evidence/rahtz-reproducing-rl.yaml",
        "status: unverified\nexcerpts",
        "status: verified-exact\nexcerpts",
    );
    assert_fails_at(
        tmp.path(),
        "evidence/rahtz-reproducing-rl.yaml",
        7,
        "must be the weakest",
    );
}

#[test]
fn malformed_evidence_yaml() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "evidence/whitaker-surface-area.yaml",
        "verified_against:",
        "verified_againts:",
    );
    let (code, out) = verify_dir(tmp.path());
    assert_eq!(code, 1);
    assert!(
        out.contains("evidence/whitaker-surface-area.yaml:") && out.contains("verified_againts"),
        "{out}"
    );
}

#[test]
fn json_lists_the_problems() {
    let tmp = fixture_copy();
    edit(
        tmp.path(),
        "SKILL.md",
        "mldebug check overfit --model",
        "mldebug check overfitting --model",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .arg("--catalog")
        .arg(tmp.path())
        .args(["catalog", "verify", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["problems"][0]["line"], 40);
}

#[test]
fn records_option_compares_excerpts_with_their_records() {
    let tmp = fixture_copy();
    let records = tmp.path().join("records.yaml");
    std::fs::write(
        &records,
        "- id: whitaker-minimal-example\n  quote: Something else.\n  status: verified-exact\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never", "--catalog"])
        .arg(tmp.path())
        .args(["catalog", "verify", "--records"])
        .arg(&records)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("evidence/whitaker-surface-area.yaml:9: excerpt `whitaker-minimal-example`: `text` differs"),
        "{text}"
    );
    assert!(
        text.contains("excerpt `karpathy-overfit-one-batch` has no record"),
        "{text}"
    );
}
