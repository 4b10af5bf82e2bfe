//! The knowledge commands end to end, on the fixture catalog (tests/fixtures/catalog): human and
//! JSON output as insta snapshots, exit codes, and the error messages for bad input.

use std::process::{Command, Output};

const FIXTURE: &str = "tests/fixtures/catalog";

fn mldebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--color", "never", "--catalog", FIXTURE])
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run mldebug")
}

/// stdout of a run that must succeed.
fn ok(args: &[&str]) -> String {
    let out = mldebug(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// stdout parsed as JSON, with the schema version checked.
fn ok_json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let v: serde_json::Value = serde_json::from_str(&ok(&all)).expect("valid JSON");
    assert_eq!(v["schema_version"], mldebug_report::SCHEMA_VERSION);
    assert_eq!(v["command"], all[0]);
    v
}

/// (exit code, stderr) of a run that must fail.
fn fails(args: &[&str]) -> (i32, String) {
    let out = mldebug(args);
    assert!(out.stdout.is_empty(), "nothing on stdout when failing");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn quote_rahtz() {
    let text = ok(&["quote", "rahtz"]);
    assert!(text.contains("http://amid.fish/reproducing-deep-rl"));
    assert!(text.contains("UNVERIFIED"), "the unverified quote says so");
    insta::assert_snapshot!(text);
    let v = ok_json(&["quote", "RAHTZ"]);
    assert_eq!(v["quotes"].as_array().unwrap().len(), 2);
    assert_eq!(v["quotes"][0]["status"], "unverified");
    insta::assert_json_snapshot!(v);
}

#[test]
fn quote_by_source_id_and_topic() {
    let v = ok_json(&["quote", "karpathy-recipe"]);
    assert_eq!(v["quotes"].as_array().unwrap().len(), 2);
    let v = ok_json(&["quote", "karpathy", "--topic", "init"]);
    let ids: Vec<&str> = v["quotes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["karpathy-verify-loss-at-init"]);
    insta::assert_snapshot!(ok(&["quote", "bekman", "--topic", "nan"]));
}

#[test]
fn quote_random_is_seedable() {
    let a = ok_json(&["quote", "karpathy", "--random", "--seed", "7"]);
    let b = ok_json(&["quote", "karpathy", "--random", "--seed", "7"]);
    assert_eq!(a, b);
    assert_eq!(a["quotes"].as_array().unwrap().len(), 1);
    let picked: std::collections::BTreeSet<String> = (0..20)
        .map(|s| {
            ok_json(&["quote", "karpathy", "--random", "--seed", &s.to_string()])["quotes"][0]["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(picked.len(), 2, "different seeds pick different quotes");
}

#[test]
fn quote_unknown_suggests_close_names() {
    let (code, err) = fails(&["quote", "rahts"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean: rahtz"), "{err}");
    insta::assert_snapshot!(err);
    let (code, err) = fails(&["quote", "nobody-at-all"]);
    assert_eq!(code, 2);
    assert!(err.contains("mldebug list sources"), "{err}");
    let (code, err) = fails(&["quote", "rahtz", "--topic", "fp16"]);
    assert_eq!(code, 2);
    assert!(err.contains("mindset"), "lists the topics there are: {err}");
}

#[test]
fn list_every_kind() {
    for kind in ["entries", "sources", "checks", "symptoms"] {
        let text = ok(&["list", kind]);
        insta::assert_snapshot!(format!("list_{kind}"), text);
        let v = ok_json(&["list", kind]);
        insta::assert_json_snapshot!(format!("list_{kind}_json"), v);
    }
    assert_eq!(ok(&["list"]), ok(&["list", "entries"]));
}

#[test]
fn show_entry_source_check_and_quote() {
    let text = ok(&["show", "overfit-one-batch"]);
    assert!(text.contains("mldebug check overfit --model crate::Net"));
    assert!(text.contains("https://karpathy.github.io/2019/04/25/recipe/"));
    insta::assert_snapshot!("show_entry", text);
    insta::assert_json_snapshot!("show_entry_json", ok_json(&["show", "overfit-one-batch"]));
    insta::assert_snapshot!("show_source", ok(&["show", "rahtz-reproducing-rl"]));
    insta::assert_json_snapshot!(
        "show_source_json",
        ok_json(&["show", "rahtz-reproducing-rl"])
    );
    let check = ok(&["show", "nan-trace"]);
    assert!(
        check.contains("frames-before-nan"),
        "names the entries that link it: {check}"
    );
    insta::assert_snapshot!("show_check", check);
    insta::assert_json_snapshot!("show_check_json", ok_json(&["show", "nan-trace"]));
    insta::assert_snapshot!("show_quote", ok(&["show", "bekman-previous-frames"]));
    let (code, err) = fails(&["show", "overfit-one-btch"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean: overfit-one-batch"), "{err}");
}

#[test]
fn search_ranks_title_words_first() {
    let v = ok_json(&["search", "overfit", "batch"]);
    assert_eq!(v["results"][0]["id"], "overfit-one-batch");
    insta::assert_json_snapshot!("search_json", v);
    insta::assert_snapshot!("search", ok(&["search", "nan"]));
    let v = ok_json(&["search", "fp16"]);
    assert_eq!(
        v["results"][0]["id"], "frames-before-nan",
        "quotes are searched"
    );
    let (code, _) = fails(&["search", "zebra"]);
    assert_eq!(code, 2);
}

#[test]
fn triage_finds_rows_with_synonyms() {
    let v = ok_json(&["triage", "loss is exactly 0"]);
    assert_eq!(
        v["matches"][0]["symptom"],
        "Loss is exactly 0 from the first step"
    );
    insta::assert_json_snapshot!("triage_zero_json", v);
    let text = ok(&["triage", "training diverges to infinity"]);
    assert!(text.starts_with("1. Loss is NaN or inf"), "{text}");
    insta::assert_snapshot!("triage_diverge", text);
    let v = ok_json(&["triage", "my loss went nan"]);
    assert_eq!(v["matches"][0]["hypotheses"][0], "learning rate too high");
    assert_eq!(
        v["matches"][0]["commands"][0],
        "mldebug check nan-trace --model crate::Net"
    );
    let (code, err) = fails(&["triage", "zebra"]);
    assert_eq!(code, 2);
    assert!(err.contains("mldebug list symptoms"), "{err}");
}

#[test]
fn catalog_verify_passes_on_the_fixture() {
    let text = ok(&["catalog", "verify"]);
    insta::assert_snapshot!("verify_ok", text);
    let v = ok_json(&["catalog", "verify"]);
    assert_eq!(v["ok"], true);
    insta::assert_json_snapshot!("verify_ok_json", v);
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let text = ok(&["completions", shell]);
        assert!(text.contains("quote") && text.contains("triage"), "{shell}");
    }
    let bash = ok(&["completions", "bash"]);
    assert!(bash.contains("_mldebug()"));
    let (code, _) = fails(&["completions", "tcsh"]);
    assert_eq!(code, 2);
}

#[test]
fn color_is_off_when_piped_and_on_when_asked() {
    let piped = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--catalog", FIXTURE, "quote", "rahtz"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&piped.stdout).contains('\x1b'));
    let forced = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--color", "always", "--catalog", FIXTURE, "quote", "rahtz"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&forced.stdout).contains("\x1b[33mUNVERIFIED"));
}

#[test]
fn catalog_verify_failure_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("catalog");
    copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE),
        &dir,
    );
    let skill = dir.join("SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    let text = text
        .replace("only a few examples", "only a handful of examples")
        .replace("check overfit --model", "check overfitting --model");
    std::fs::write(&skill, text).unwrap();
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mldebug"));
        cmd.args(["--color", "never", "--catalog"])
            .arg(&dir)
            .args(["catalog", "verify"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8(out.stdout)
            .unwrap()
            .replace(&dir.display().to_string(), "[CATALOG]")
    };
    insta::assert_snapshot!("verify_failed", run(false));
    insta::assert_snapshot!("verify_failed_json", run(true));
}

#[test]
fn skill_install_output() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mldebug"));
        cmd.current_dir(tmp.path())
            .args(["--color", "never", "--catalog"])
            .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE))
            .args(["skill", "install"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    insta::assert_snapshot!("skill_install", run(false));
    insta::assert_snapshot!("skill_install_again_json", run(true));
}

#[test]
fn completions_fish_snapshot() {
    let fish = ok(&["completions", "fish"]);
    assert!(fish.contains("complete -c mldebug"));
    // Only the `quote` lines: the other subcommands' flags belong to their own tests.
    let quote: Vec<&str> = fish
        .lines()
        .filter(|l| l.contains("__fish_mldebug_using_subcommand quote\""))
        .collect();
    assert!(quote.iter().any(|l| l.contains("-l topic")), "{fish}");
    insta::assert_snapshot!("completions_fish_quote", quote.join("\n"));
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}
