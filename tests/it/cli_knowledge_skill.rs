//! `mldebug skill install`: where the files go, that an edited copy is never overwritten
//! without --force, and that an unmodified copy is updated.

use std::path::Path;
use std::process::{Command, Output};

fn fixture() -> String {
    format!("{}/tests/fixtures/catalog", env!("CARGO_MANIFEST_DIR"))
}

fn install(cwd: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .current_dir(cwd)
        .args([
            "--color",
            "never",
            "--catalog",
            &fixture(),
            "skill",
            "install",
        ])
        .args(extra)
        .env("HOME", cwd.join("home"))
        .output()
        .expect("run mldebug")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

#[test]
fn installs_into_claude_skills_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let out = install(tmp.path(), &[]);
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    let dir = tmp.path().join(".claude/skills/mldebug");
    for f in [
        "SKILL.md",
        "PLAYBOOK.md",
        "refs/diagnostics.md",
        "evidence/karpathy-recipe.yaml",
        ".mldebug-skill.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("SKILL.md")).unwrap(),
        std::fs::read_to_string(Path::new(&fixture()).join("SKILL.md")).unwrap()
    );
    let leftovers: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let again = install(tmp.path(), &["--json"]);
    assert_eq!(code(&again), 0);
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        v["written"].as_array().unwrap().len(),
        0,
        "an up-to-date copy is left alone"
    );
}

#[test]
fn agents_global_and_dir_locations() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(code(&install(tmp.path(), &["--agents"])), 0);
    assert!(tmp.path().join(".agents/skills/mldebug/SKILL.md").is_file());
    assert_eq!(code(&install(tmp.path(), &["--global"])), 0);
    assert!(tmp
        .path()
        .join("home/.claude/skills/mldebug/SKILL.md")
        .is_file());
    assert_eq!(code(&install(tmp.path(), &["--dir", "somewhere/else"])), 0);
    assert!(tmp
        .path()
        .join("somewhere/else/refs/diagnostics.md")
        .is_file());
}

#[test]
fn an_edited_copy_needs_force() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(code(&install(tmp.path(), &[])), 0);
    let skill = tmp.path().join(".claude/skills/mldebug/SKILL.md");
    let playbook = tmp.path().join(".claude/skills/mldebug/PLAYBOOK.md");
    std::fs::write(&skill, "my notes\n").unwrap();
    // Make another file out of date, to see that nothing at all is written on refusal.
    std::fs::write(&playbook, "").unwrap();
    let manifest = tmp
        .path()
        .join(".claude/skills/mldebug/.mldebug-skill.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["files"]["PLAYBOOK.md"] = serde_json::json!("cbf29ce484222325"); // the hash of ""
    std::fs::write(&manifest, m.to_string()).unwrap();

    let refused = install(tmp.path(), &[]);
    assert_eq!(code(&refused), 2);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("SKILL.md") && err.contains("--force"), "{err}");
    assert!(
        !err.contains("PLAYBOOK.md"),
        "an unmodified copy is not the user's: {err}"
    );
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), "my notes\n");
    assert_eq!(
        std::fs::read_to_string(&playbook).unwrap(),
        "",
        "nothing written on refusal"
    );

    assert_eq!(code(&install(tmp.path(), &["--force"])), 0);
    assert!(std::fs::read_to_string(&skill)
        .unwrap()
        .starts_with("---\nname: mldebug"));
    assert!(!std::fs::read_to_string(&playbook).unwrap().is_empty());
}

#[test]
fn a_skill_not_installed_by_mldebug_is_not_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".claude/skills/mldebug");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), "someone else's skill\n").unwrap();
    let out = install(tmp.path(), &[]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not installed by mldebug"));
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}
