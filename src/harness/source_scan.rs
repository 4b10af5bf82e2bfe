//! When grad-flow finds parameters without a gradient in a model from the user's crate, look
//! through the crate's Rust source for candle calls that have no backward
//! ([`mldebug_judge::no_backward`]) and add each one, with file:line and the differentiable
//! replacement, to the finding: the line to change arrives with the verdict.
//!
//! Not for: deciding the verdict (the scan never changes a status).

use mldebug_diagnostics::{CheckId, Report};
use mldebug_judge::no_backward::{scan, Hit};
use std::path::{Path, PathBuf};

/// At most this many files are read (a crate's `src/`; generated code is not the model).
const MAX_FILES: usize = 2000;
/// Files larger than this are skipped (not hand-written model code).
const MAX_FILE_BYTES: u64 = 2 << 20;
/// At most this many calls are listed one per line (the report shows 20 detail lines, and the
/// live/dead groups behind them decide too); the count of all is in the summary.
const MAX_HITS: usize = 8;

/// Add the calls found under `crate_dir/src` to the grad-flow finding of `report`, when some of
/// its parameters got no gradient.
pub fn annotate(report: &mut Report, crate_dir: &Path) {
    let Some(f) = report
        .checks
        .iter_mut()
        .find(|f| f.check == CheckId::GradFlow)
    else {
        return;
    };
    if f.metrics.get("params_without_grad").copied().unwrap_or(0.0) == 0.0 {
        return;
    }
    let hits = scan_dir(&crate_dir.join("src"), crate_dir);
    if hits.is_empty() {
        return;
    }
    let first = &hits[0];
    f.summary.push_str(&format!(
        "; {} candle call{} without a backward in your source, first {}:{} `{}`",
        hits.len(),
        if hits.len() == 1 { "" } else { "s" },
        first.0,
        first.1.line,
        first.1.entry.call
    ));
    let lines = hits.iter().take(MAX_HITS).map(|(file, h)| line(file, h));
    let mut details: Vec<String> = lines.collect();
    if hits.len() > MAX_HITS {
        details.push(format!(
            "… and {} more such calls (the same replacements apply)",
            hits.len() - MAX_HITS
        ));
    }
    details.append(&mut f.details);
    f.details = details;
    f.metrics
        .insert("no_backward_calls".to_string(), hits.len() as f64);
}

/// `src/lib.rs:27:17: layer_norm( has no backward in candle 0.11 (...; candle #3011); use ...`.
fn line(file: &str, h: &Hit) -> String {
    let e = &h.entry;
    let issue = if e.issue == "-" {
        String::new()
    } else {
        format!("; huggingface/candle{}", e.issue)
    };
    format!(
        "{file}:{}:{}: `{}` has no backward in candle 0.11 ({}{issue}); differentiable: {}",
        h.line, h.column, e.call, e.source, e.replacement
    )
}

/// Every hit under `dir`, files in name order, paths shown relative to `base`.
fn scan_dir(dir: &Path, base: &Path) -> Vec<(String, Hit)> {
    let mut files = Vec::new();
    collect_rs(dir, &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files.iter().take(MAX_FILES) {
        let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_FILE_BYTES);
        let Some(text) = small.then(|| std::fs::read_to_string(path).ok()).flatten() else {
            continue;
        };
        let shown = path
            .strip_prefix(base)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        out.extend(scan(&text).into_iter().map(|h| (shown.clone(), h)));
    }
    out
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let path = e.path();
        if kind.is_dir() {
            collect_rs(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
        if out.len() >= MAX_FILES {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mldebug_diagnostics::{Finding, Status};

    #[test]
    fn the_calls_are_added_to_a_failing_grad_flow_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/model")).unwrap();
        std::fs::write(
            dir.path().join("src/model/norm.rs"),
            "fn a() {}\nlet ln = candle_nn::layer_norm(8, 1e-5, vb)?;\n",
        )
        .unwrap();
        let mut report = Report {
            model: "crate::Net".into(),
            device: "cpu".into(),
            seed: 0,
            checks: Vec::new(),
        };
        report.checks.push(
            Finding::new(
                CheckId::GradFlow,
                Status::Fail,
                "3 of 4 parameters get no gradient",
            )
            .metric("params_without_grad", 3.0),
        );
        let mut clean = report.clone();
        clean.checks[0]
            .metrics
            .insert("params_without_grad".into(), 0.0);
        annotate(&mut report, dir.path());
        let f = &report.checks[0];
        assert!(
            f.details[0].starts_with("src/model/norm.rs:2:21: `layer_norm(` has no backward"),
            "{:?}",
            f.details
        );
        assert!(f.details[0].contains("layer_norm_slow"), "{}", f.details[0]);
        assert!(
            f.summary
                .ends_with("first src/model/norm.rs:2 `layer_norm(`"),
            "{}",
            f.summary
        );
        annotate(&mut clean, dir.path());
        assert!(clean.checks[0].details.is_empty());
    }
}
