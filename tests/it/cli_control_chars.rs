//! Text from data files never reaches the terminal raw: run names, group labels, metric names,
//! CSV headers, config keys and values, file names and catalog text holding `ESC ]0;…`
//! (retitle), `ESC [2J` (clear), `ESC [8m` (conceal the rest), a colour of its own, BEL, `\r` or
//! the C1 CSI are escaped in every human output, in errors, and in the SVG plot, which stays
//! valid XML. With `--color always` the only escape sequences left are mldebug's own colours:
//! data is escaped before it is coloured, so no data byte produces a sequence.

use crate::sweep_support;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use sweep_support::bin;

const NASTY: &str = "\x1b]0;pwned\x07\x1b[2J\r\u{9b}2J\x7f\x1b[8mhidden\x1b[31mred";

/// The data's own colour sequences, as they would reach a terminal unescaped.
const DATA_SGR: [&str; 2] = ["\x1b[8mhidden", "\x1b[31mred"];

/// Control characters that must not be in `text`: all but newline and tab, and, when `colour`,
/// any escape that does not start one of mldebug's own colour sequences; and the data's own
/// colour sequences, whatever the colour.
fn raw_controls(text: &str, colour: bool) -> Vec<String> {
    let mut found: Vec<String> = DATA_SGR
        .iter()
        .filter(|s| text.contains(*s))
        .map(|s| format!("{s:?}"))
        .collect();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let mut len = c.len_utf8();
        if colour && c == '\x1b' {
            let ours = rest[1..].strip_prefix('[').and_then(|b| {
                let end = b.find('m')?;
                mldebug::render::terminal::OURS
                    .contains(&&b[..end])
                    .then_some(end)
            });
            match ours {
                Some(n) => len = 2 + n + 1,
                None => found.push(format!("{:?}", &rest[..rest.len().min(12)])),
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
    let mut child = Command::new(bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "mldebug {args:?} still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
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
        // Every heading's title and every table cell of the catalog gains the sequence, where
        // the catalog still reads them (before a heading's `{#id}`, at a cell's start).
        let text = if e.extension().is_some_and(|x| x == "md") {
            let lines: Vec<&str> = text.lines().collect();
            let header = |i: usize| lines.get(i + 1).is_some_and(|n| n.starts_with("|-"));
            lines
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    if l.starts_with('#') {
                        match l.split_once(" {#") {
                            Some((title, rest)) => format!("{title} zz{NASTY} {{#{rest}"),
                            None => format!("{l} zz{NASTY}"),
                        }
                    } else if l.starts_with('|') && !l.starts_with("|-") && !header(i) {
                        l.split('|')
                            .map(|cell| {
                                if cell.trim().is_empty() {
                                    cell.to_string()
                                } else {
                                    format!(" zz{NASTY}{cell}")
                                }
                            })
                            .collect::<Vec<_>>()
                            .join("|")
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
        &["list", "sources"],
        &["list", "checks"],
        &["search", "zz"],
        &["triage", "loss zz"],
        &["catalog", "verify"],
        &["quote", "karpathy"],
        &["show", "overfit-one-batch"],
        &["show", "karpathy-recipe"],
        &["show", "check-overfit"],
    ] {
        for colour in ["never", "always"] {
            let (_, out, err) = mldebug(&[&["--color", colour, "--catalog", c], args].concat());
            // Sources and quotes come from evidence/*.yaml and blockquotes, left as they are.
            let shows_text = !["catalog", "sources", "quote", "karpathy-recipe"]
                .iter()
                .any(|a| args.contains(a));
            if shows_text {
                assert!(
                    out.contains("\\u{1b}[8mhidden"),
                    "{args:?}: the catalog's text is not shown: {out}{err}"
                );
            }
            let bad = raw_controls(&out, colour == "always");
            assert!(bad.is_empty(), "{args:?} {colour}: {bad:?} in {out}");
            assert!(raw_controls(&err, false).is_empty(), "{args:?}: {err:?}");
        }
    }
}

/// A file name holding the nasty text (no `/`, no NUL).
fn nasty_name(stem: &str, ext: &str) -> String {
    format!("{stem}{NASTY}.{ext}")
}

#[test]
fn doctor_escapes_run_metric_csv_header_and_file_names_everywhere() {
    let t = tempfile::tempdir().unwrap();
    let metric = format!("loss{NASTY}");
    let json_metric = serde_json::to_string(&metric).unwrap();
    let run = t.path().join(nasty_name("run", "json"));
    let history: Vec<String> = (0..30)
        .map(|s| {
            let v = if s == 20 {
                "NaN".into()
            } else {
                format!("{}", 2.0 - 0.01 * s as f64)
            };
            format!("[{s}, {v}]")
        })
        .collect();
    std::fs::write(
        &run,
        format!(
            "{{\"name\": {}, \"history\": {{{json_metric}: [{}]}}}}",
            serde_json::to_string(&format!("run{NASTY}")).unwrap(),
            history.join(", ")
        ),
    )
    .unwrap();
    let csv = t.path().join(nasty_name("metrics", "csv"));
    let mut text = format!("step,epoch,\"{}\"\n", metric.replace('"', "\"\""));
    for s in 0..30 {
        let v = if s == 20 {
            "nan".into()
        } else {
            format!("{}", 2.0 - 0.01 * s as f64)
        };
        text.push_str(&format!("{s},0,{v}\n"));
    }
    std::fs::write(&csv, text).unwrap();
    let log = t.path().join(nasty_name("train", "log"));
    std::fs::write(&log, "step 1 | loss 2.0\nstep 2 | loss nan\n").unwrap();
    let plot = t.path().join("doctor.svg");
    for path in [&run, &csv, &log] {
        let p = path.to_str().unwrap();
        let metric_args: &[&str] = if path == &log {
            &[]
        } else {
            &["--metric", &metric]
        };
        for colour in ["never", "always"] {
            let args = [
                &[
                    "--color",
                    colour,
                    "doctor",
                    p,
                    "--plot",
                    plot.to_str().unwrap(),
                ][..],
                metric_args,
            ]
            .concat();
            let (code, out, err) = mldebug(&args);
            assert_eq!(code, 1, "{p:?} {colour}: {out}{err}");
            assert!(out.contains("loss-nonfinite"), "{out}");
            assert!(
                out.contains("\\u{1b}[8mhidden"),
                "{p:?}: the data is shown escaped: {out}"
            );
            let bad = raw_controls(&out, colour == "always");
            assert!(
                bad.is_empty(),
                "{p:?} {colour}: raw control characters {bad:?}"
            );
            assert!(raw_controls(&err, false).is_empty(), "{err:?}");
            let svg = std::fs::read_to_string(&plot).unwrap();
            assert!(
                raw_controls(&svg, false).is_empty(),
                "{p:?}: the SVG is not valid XML"
            );
        }
        // The line --watch prints as each finding appears.
        let args = [
            &[
                "--color",
                "always",
                "doctor",
                "--watch",
                "--idle-timeout",
                "1",
                p,
            ][..],
            metric_args,
        ]
        .concat();
        let (code, out, err) = mldebug(&args);
        assert_eq!(code, 1, "{p:?} --watch: {out}{err}");
        assert!(out.contains("loss-nonfinite"), "{out}");
        let bad = raw_controls(&out, true);
        assert!(
            bad.is_empty(),
            "{p:?} --watch: raw control characters {bad:?}"
        );
    }
}

#[test]
fn sweep_compare_escapes_csv_headers_and_file_names() {
    let t = tempfile::tempdir().unwrap();
    let metric = format!("acc{NASTY}");
    let mut text = format!(
        "\"Name\",\"State\",\"Group\",\"seed\",\"{}\"\n",
        metric.replace('"', "\"\"")
    );
    for (i, (g, v)) in [("a", 0.9), ("b", 0.8)]
        .iter()
        .flat_map(|(g, v)| (0..4).map(move |s| (*g, v + 0.01 * s as f64)))
        .enumerate()
    {
        text.push_str(&format!(
            "\"r{i}{NASTY}\",\"finished\",\"{g}{NASTY}\",\"{}\",\"{v}\"\n",
            i % 4
        ));
    }
    let csv = t.path().join(nasty_name("export", "csv"));
    std::fs::write(&csv, text).unwrap();
    for colour in ["never", "always"] {
        let (code, out, err) = mldebug(&[
            "--color",
            colour,
            "sweep-compare",
            csv.to_str().unwrap(),
            "--metric",
            &metric,
            "--group-by",
            "group",
        ]);
        assert_eq!(code, 0, "{colour}: {out}{err}");
        assert!(out.contains("VERDICT"), "{out}");
        assert!(
            out.contains("\\u{1b}[8mhidden"),
            "the data is shown escaped: {out}"
        );
        let bad = raw_controls(&out, colour == "always");
        assert!(bad.is_empty(), "{colour}: raw control characters {bad:?}");
        assert!(raw_controls(&err, false).is_empty(), "{err:?}");
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
