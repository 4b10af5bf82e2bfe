//! Text from data files never reaches the terminal raw: run names, group labels, config keys
//! and values, file names and catalog text holding `ESC ]0;…` (retitle), `ESC [2J` (clear),
//! BEL, `\r` or the C1 CSI are escaped in every human output, in errors, and in the SVG plot,
//! which stays valid XML. With `--color always` the only escape sequences left are colours.

mod sweep_support;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use sweep_support::bin;

const NASTY: &str = "\x1b]0;pwned\x07\x1b[2J\r\u{9b}2J\x7f";

/// Control characters that must not be in `text`: all but newline and tab, and, when `colour`,
/// any escape that does not start an SGR colour sequence.
fn raw_controls(text: &str, colour: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let mut len = c.len_utf8();
        if colour && c == '\x1b' {
            let body = &rest[1..];
            let params = body.strip_prefix('[').map(|b| {
                b.bytes()
                    .take_while(|x| x.is_ascii_digit() || *x == b';')
                    .count()
            });
            match params {
                Some(n) if body.as_bytes().get(1 + n) == Some(&b'm') => len = 2 + n + 1,
                _ => found.push(format!("{:?}", &rest[..rest.len().min(12)])),
            }
        } else if c.is_control() && c != '\n' && c != '\t' {
            found.push(format!("{:?}", &rest[..rest.len().min(12)]));
        }
        rest = &rest[len..];
    }
    found
}

fn write_nasty_runs(dir: &Path) {
    let (a, b) = (format!("new{NASTY}"), format!("base{NASTY}"));
    for (i, (group, v)) in [(&a, 0.9), (&b, 0.8)]
        .iter()
        .flat_map(|(g, v)| (0..4).map(move |s| (*g, v + 0.01 * s as f64)))
        .enumerate()
    {
        let run = json!({
            "name": format!("run{i}{NASTY}"),
            "group": group,
            "seed": i % 4,
            "metrics": { format!("acc{NASTY}"): v },
            "config": { format!("lr{NASTY}"): format!("3e-4{NASTY}"), "i": i },
        });
        std::fs::write(dir.join(format!("r{i}.json")), run.to_string()).unwrap();
    }
}

fn mldebug(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin()).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn sweep_compare_escapes_names_labels_and_config_everywhere() {
    let t = tempfile::tempdir().unwrap();
    write_nasty_runs(t.path());
    let d = t.path().to_str().unwrap();
    let plot = t.path().join("plot.svg");
    for (colour, format) in [
        ("never", "table"),
        ("always", "table"),
        ("always", "markdown"),
    ] {
        let (code, out, err) = mldebug(&[
            "--color",
            colour,
            "sweep-compare",
            d,
            "--format",
            format,
            "--plot",
            plot.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("VERDICT"), "{out}");
        assert!(out.contains("\\u{1b}]0;pwned\\u{7}"), "{out}");
        let bad = raw_controls(&out, colour == "always");
        assert!(
            bad.is_empty(),
            "{colour} {format}: raw control characters {bad:?}"
        );
        assert!(raw_controls(&err, false).is_empty(), "{err:?}");
    }
    let svg = std::fs::read_to_string(&plot).unwrap();
    let bad = raw_controls(&svg, false);
    assert!(bad.is_empty(), "the SVG is not valid XML: {bad:?}");
    // JSON keeps the data as it is (JSON escapes control characters itself).
    let (_, json, _) = mldebug(&["--json", "sweep-compare", d]);
    assert!(raw_controls(&json, false).is_empty());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v.to_string().contains("pwned"));
}

#[test]
fn errors_escape_file_names_and_file_text() {
    let t = tempfile::tempdir().unwrap();
    let name = format!("bad{}.json", NASTY.replace('\x7f', ""));
    let p = t.path().join(&name);
    std::fs::write(&p, format!("{{\"name\": \"x{NASTY}\", ")).unwrap();
    let (code, out, err) = mldebug(&["sweep-compare", p.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("bad\\u{1b}]0;pwned"), "{err}");
    assert!(raw_controls(&err, false).is_empty(), "{err:?}");
}

#[test]
fn catalog_text_is_escaped_in_every_knowledge_command() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog");
    let t = tempfile::tempdir().unwrap();
    for e in walk(&src) {
        let dest = t.path().join(e.strip_prefix(&src).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        let text = std::fs::read_to_string(&e).unwrap();
        // Every heading and table cell of the catalog gains the sequence.
        let text = if e.extension().is_some_and(|x| x == "md") {
            text.lines()
                .map(|l| {
                    if l.starts_with('#') || l.starts_with('|') && !l.starts_with("|-") {
                        format!("{l} zz{NASTY}")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            text
        };
        std::fs::write(dest, text).unwrap();
    }
    let c = t.path().to_str().unwrap();
    for args in [
        &["list", "entries"][..],
        &["list", "symptoms"],
        &["search", "zz"],
        &["triage", "loss zz"],
        &["catalog", "verify"],
        &["quote", "karpathy"],
    ] {
        for colour in ["never", "always"] {
            let (_, out, err) = mldebug(&[&["--color", colour, "--catalog", c], args].concat());
            let bad = raw_controls(&out, colour == "always");
            assert!(bad.is_empty(), "{args:?} {colour}: {bad:?} in {out}");
            assert!(raw_controls(&err, false).is_empty(), "{args:?}: {err:?}");
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
