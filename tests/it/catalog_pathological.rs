//! No catalog input breaks `mldebug catalog verify`: long lines of Markdown punctuation, deep
//! nesting, a 1 MB line, 100,000 footnotes, thousands of commands, rows, keys, excerpts and
//! quotes. Each must finish in a few seconds (in a debug build) with output of bounded size:
//! at most 50 problems per file, each message of bounded length.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far above what these inputs take once linear (at most 3 s in a debug build on a loaded
/// machine, most well under 1 s), far below what the quadratic paths took on them (from 20 s to
/// never finishing).
const TIME_LIMIT: Duration = Duration::from_secs(15);
/// 50 problems for each of a few files, each message at most ~1000 characters.
const OUTPUT_LIMIT: u64 = 256 * 1024;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog")
}

fn copy_dir(from: &Path, to: &Path) {
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

/// The fixture catalog with `text` appended to `file` (created if missing).
fn catalog_with(file: &str, text: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let path = tmp.path().join(file);
    let mut old = std::fs::read_to_string(&path).unwrap_or_default();
    old.push('\n');
    old.push_str(text);
    old.push('\n');
    std::fs::write(&path, old).unwrap();
    tmp
}

/// Run `catalog verify` on `dir` with a deadline; (exit code, stdout, time taken).
fn verify_bounded(dir: &Path, json: bool) -> (i32, String, Duration) {
    let args: &[&str] = if json {
        &["--json", "catalog", "verify"]
    } else {
        &["catalog", "verify"]
    };
    run_bounded(dir, args, OUTPUT_LIMIT)
}

/// Run `mldebug --catalog dir <args>` with a deadline and an output bound.
fn run_bounded(dir: &Path, args: &[&str], output_limit: u64) -> (i32, String, Duration) {
    let out_path = dir.join("stdout.txt");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mldebug"));
    cmd.args(["--color", "never", "--catalog"]).arg(dir);
    let start = Instant::now();
    let mut child = cmd
        .args(args)
        .stdout(Stdio::from(out))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("catalog verify ran past {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    let size = std::fs::metadata(&out_path).unwrap().len();
    assert!(size <= output_limit, "{size} bytes of output");
    let text = std::fs::read_to_string(&out_path).unwrap();
    (status.code().unwrap(), text, took)
}

/// Append `text` to `file` of the fixture and verify: it must end in time with bounded output,
/// exit 0 or 1 (never a crash), and list at most 51 lines per file.
fn survives(file: &str, text: &str) -> String {
    let tmp = catalog_with(file, text);
    let (code, out, took) = verify_bounded(tmp.path(), false);
    assert!(code == 0 || code == 1, "exit {code}: {out}");
    let prefix = format!("{}/{file}:", tmp.path().display());
    let lines = out.lines().filter(|l| l.starts_with(&prefix)).count();
    assert!(lines <= 51, "{lines} lines for {file}");
    assert!(
        out.lines().all(|l| l.len() <= 1200),
        "a line over 1200 bytes"
    );
    eprintln!("{file}: {took:?}, {} bytes", out.len());
    let (_, json, _) = verify_bounded(tmp.path(), true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["problems"].as_array().unwrap().len() <= 51 * 4);
    out
}

#[test]
fn a_line_of_footnote_openers_16000_and_32000() {
    for n in [16_000, 32_000] {
        survives("SKILL.md", &"[^".repeat(n));
    }
    // Each a real undefined reference: one problem per paragraph, not one per reference.
    let out = survives("SKILL.md", &"[^x]".repeat(32_000));
    assert!(out.contains("footnote [^x] has no definition"), "{out}");
}

#[test]
fn long_lines_of_punctuation() {
    for c in ["[", "*", "|", "`", "_", "<", "![", "](", "\\", "{#", "> "] {
        survives("SKILL.md", &c.repeat(200_000));
    }
    let ticks: String = (1..700).map(|i| format!("{}a", "`".repeat(i))).collect();
    survives("SKILL.md", &ticks);
}

#[test]
fn deep_nesting() {
    survives("SKILL.md", &format!("{}x", "- ".repeat(50_000)));
    survives("SKILL.md", &format!("{}x", ">".repeat(100_000)));
    let indented: String = (0..1000)
        .map(|i| format!("{}- x\n", "  ".repeat(i)))
        .collect();
    survives("SKILL.md", &indented);
    let quotes: String = (0..1000)
        .map(|i| format!("{} x[^a]\n", ">".repeat(i)))
        .collect();
    survives("SKILL.md", &quotes);
}

#[test]
fn a_one_megabyte_line() {
    let mut line = String::new();
    while line.len() < 1 << 20 {
        line.push_str("word [x] *y* `z` [^a] mldebug check nope ");
    }
    survives("SKILL.md", &line);
    survives("refs/diagnostics.md", &"a".repeat(1 << 20));
    // Evidence: a 1 MB flow list, a 1 MB unterminated string, a terminal escape in a value.
    survives(
        "evidence/big.yaml",
        &format!("id: [{}", "a,".repeat(1 << 19)),
    );
    survives(
        "evidence/big.yaml",
        &format!("id: \"{}", "x".repeat(1 << 20)),
    );
    let out = survives("evidence/big.yaml", "id: \u{1b}[2J\nauthor: [\u{1b}]");
    assert!(!out.contains('\u{1b}'), "{out:?}");
    // One huge heading, section title of every entry below it.
    let entries: String = (0..2000)
        .map(|i| format!("### E {{#e{i}}}\n\nx\n\n"))
        .collect();
    survives(
        "SKILL.md",
        &format!("## {}\n\n{entries}", "t".repeat(1 << 20)),
    );
}

#[test]
fn a_hundred_thousand_footnotes() {
    let defs: String = (0..100_000).map(|i| format!("[^l{i}]: x\n\n")).collect();
    let out = survives("SKILL.md", &defs);
    assert!(out.contains("more problem(s) in this file"), "{out}");
    let refs: String = (0..100_000).map(|i| format!("t[^r{i}]\n")).collect();
    survives("SKILL.md", &refs);
}

#[test]
fn thousands_of_commands_rows_and_links() {
    let cmds: String = (0..100_000).map(|i| format!("mldebug run{i}\n")).collect();
    survives("SKILL.md", &format!("### E {{#eee}}\n\n```\n{cmds}```\n"));
    let rows: String = (0..30_000)
        .map(|i| format!("| s | h | `mldebug check x{i} --model m`\n"))
        .collect();
    survives("PLAYBOOK.md", &rows);
    let tables: String = "|a|\n|-|\n|b|\n\n".repeat(30_000);
    survives("PLAYBOOK.md", &tables);
    let links: String = (0..50_000).map(|i| format!("[a](refs/n{i}.md) ")).collect();
    survives("SKILL.md", &links);
}

#[test]
fn many_front_matter_keys() {
    let keys: String = (0..30_000).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "k{i}: v");
        s
    });
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let skill = tmp.path().join("SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    std::fs::write(
        &skill,
        text.replacen("---\nname:", &format!("---\n{keys}name:"), 1),
    )
    .unwrap();
    let (code, out, _) = verify_bounded(tmp.path(), false);
    assert_eq!(code, 1);
    assert!(out.contains("`k0` is not in the agent-skill spec"), "{out}");
}

#[test]
fn many_excerpts_and_elided_quotes() {
    let n = 20_000;
    let mut yaml = String::from(
        "id: big\nauthor: A\ntitle: T\nurl: https://x\ndate: '2020'\nstatus: verified-exact\nexcerpts:\n",
    );
    for i in 0..n {
        let _ = writeln!(
            yaml,
            "- id: big-{i}\n  text: Words number {i} here.\n  status: verified-exact"
        );
    }
    let mut md = String::from("### Big {#big-entry}\n\n");
    for i in 0..n {
        let _ = write!(md, "> Words [...] {i} nowhere.[^big]\n\n");
    }
    md.push_str("[^big]: A, \"T\", <https://x>\n");
    let tmp = catalog_with("evidence/big.yaml", &yaml);
    let skill = tmp.path().join("SKILL.md");
    let mut text = std::fs::read_to_string(&skill).unwrap();
    text.push_str(&md);
    std::fs::write(&skill, text).unwrap();
    let (code, out, took) = verify_bounded(tmp.path(), false);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("does not match"), "{out}");
    eprintln!("excerpts: {took:?}");
    // Listing every quote of the source looks up the entries quoting each: one lookup each.
    let (code, out, took) = run_bounded(tmp.path(), &["quote", "big"], 64 << 20);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.matches("Words number").count(),
        n,
        "every excerpt is listed"
    );
    eprintln!("quote: {took:?}");
}

/// YAML nested 200,000 levels deep in the SKILL.md front matter or an evidence file is refused
/// at the 65th level, naming the file and line, before the YAML parser (a minute on it) runs.
#[test]
fn deeply_nested_yaml_is_refused_at_once() {
    let deep = "[".repeat(200_000);
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let skill = tmp.path().join("SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    std::fs::write(
        &skill,
        text.replacen("---\nname:", &format!("---\nx: {deep}\nname:"), 1),
    )
    .unwrap();
    let (code, out, took) = verify_bounded(tmp.path(), false);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{}:2: front matter is not valid YAML: nested more than 64 levels deep",
            skill.display()
        )),
        "{out}"
    );
    eprintln!("front matter: {took:?}");

    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let evidence = tmp.path().join("evidence/deep.yaml");
    std::fs::write(&evidence, format!("id: deep\nauthor: {deep}\n")).unwrap();
    let (code, out, took) = verify_bounded(tmp.path(), false);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{}:2: not a valid evidence file: nested more than 64 levels deep",
            evidence.display()
        )),
        "{out}"
    );
    eprintln!("evidence: {took:?}");
}
