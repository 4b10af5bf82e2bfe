//! Helpers for the sweep-compare tests: write run files in our JSON format into a temp dir and
//! run the command in-process (for snapshots) or as a process (for exit codes).

#![allow(dead_code)]

use mldebug::cli::{Cli, ColorChoice, Command};
use serde_json::json;
use std::path::{Path, PathBuf};

/// One run to write: arm (group), seed, task, final value of `metric`.
pub struct Spec<'a> {
    pub group: &'a str,
    pub seed: Option<i64>,
    pub task: Option<&'a str>,
    pub value: f64,
}

/// Write one JSON run file per spec into `dir`, named after group, task and seed.
pub fn write_runs(dir: &Path, metric: &str, specs: &[Spec]) {
    for (i, s) in specs.iter().enumerate() {
        let name = format!(
            "{}{}-{}",
            s.group,
            s.task.map(|t| format!("-{t}")).unwrap_or_default(),
            s.seed
                .map(|x| format!("s{x}"))
                .unwrap_or_else(|| format!("r{i}"))
        );
        let value = if s.value.is_finite() {
            json!(s.value)
        } else {
            json!("NaN")
        };
        let mut run = json!({
            "name": name,
            "group": s.group,
            "metrics": { metric: value },
            "config": { "lr": 0.0003 },
        });
        if let Some(seed) = s.seed {
            run["seed"] = json!(seed);
        }
        if let Some(t) = s.task {
            run["task"] = json!(t);
        }
        std::fs::write(
            dir.join(format!("{name}.json")),
            serde_json::to_vec(&run).unwrap(),
        )
        .unwrap();
    }
}

/// Paired specs: seed i gets a[i] in arm `ga` and b[i] in arm `gb`.
pub fn paired<'a>(
    ga: &'a str,
    a: &[f64],
    gb: &'a str,
    b: &[f64],
    task: Option<&'a str>,
) -> Vec<Spec<'a>> {
    let mut out = Vec::new();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        out.push(Spec {
            group: ga,
            seed: Some(i as i64),
            task,
            value: *x,
        });
        out.push(Spec {
            group: gb,
            seed: Some(i as i64),
            task,
            value: *y,
        });
    }
    out
}

/// Run `mldebug sweep-compare <args>` in-process; returns the text (no colour) and the verdict.
pub fn report(args: &[&str]) -> mldebug::Result<(String, mldebug::sweep::verdict::VerdictKind)> {
    let mut argv = vec!["mldebug", "--color", "never", "sweep-compare"];
    argv.extend_from_slice(args);
    let cli = <Cli as clap::Parser>::try_parse_from(argv).expect("valid command line");
    assert_eq!(cli.global.color, ColorChoice::Never);
    match cli.command {
        Command::SweepCompare(a) => {
            mldebug::commands::sweep_compare::report(&a, &cli.global.context())
        }
        _ => unreachable!(),
    }
}

/// Replace the temp dir in `text` with `<dir>` so snapshots are stable.
pub fn scrub(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "<dir>")
}

/// The built binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mldebug"))
}
