//! `mldebug doctor` as terminal text: per run, what was read, a sparkline of each series judged,
//! the findings table, and for each symptom found its PLAYBOOK row (hypotheses, most likely
//! first, and the commands to run next); then the symptoms that differ between seeds. Also the
//! one-line form `--watch` prints as each finding appears. Run names, file names, metric names
//! and catalog text are data: each is escaped ([`super::terminal::escape`]) where it is placed.

use super::sparkline::sparkline;
use super::style::Style;
use super::terminal::escape;
use crate::doctor::report::{PlaybookLink, Report, RunReport};
use crate::{Error, Result};
use comfy_table::Cell;
use mldebug_diagnostics::Status;
use mldebug_doctor::textlog::{ReadReport, StepSource};
use mldebug_doctor::{Finding, Severity};
use mldebug_text::number::num;
use serde::Serialize;

/// Sparkline width: the house width of a curve in a table row.
const CURVE_WIDTH: usize = super::sparkline::ROW_WIDTH;

/// The status whose colour a severity takes.
pub(crate) fn status(s: Severity) -> Status {
    match s {
        Severity::Fail => Status::Fail,
        Severity::Warn => Status::Warn,
        Severity::Info => Status::Skipped,
    }
}

/// The whole report as text.
pub fn render(r: &Report, style: Style) -> String {
    let mut out = String::new();
    for (i, run) in r.runs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_run(run, style, &mut out);
    }
    if !r.seed_differences.is_empty() {
        out.push_str("\nDiffers between seeds of one configuration:\n");
        for d in &r.seed_differences {
            out.push_str(&format!(
                "  {}: in {}, not in {}\n",
                escape(&d.symptom.to_string()),
                escape(&d.present.join(", ")),
                escape(&d.absent.join(", "))
            ));
        }
    }
    out.push_str(&format!(
        "\n{} run{}: {} fail, {} warn, {} info\n",
        r.runs.len(),
        if r.runs.len() == 1 { "" } else { "s" },
        r.counts.fail,
        r.counts.warn,
        r.counts.info
    ));
    out
}

fn render_run(run: &RunReport, style: Style, out: &mut String) {
    out.push_str(&escape(&run.source));
    if !run.place.is_empty() {
        out.push_str(&format!(" ({})", escape(&run.place)));
    }
    out.push('\n');
    if let Some(read) = &run.read {
        out.push_str(&format!("  {}\n", read_line(read)));
    }
    if run.series.is_empty() {
        out.push_str("  no loss, learning rate, grad norm, throughput or memory series recognised; name the loss with --metric\n");
        return;
    }
    let mut t = style.table();
    t.set_header(["series", "role", "points", "steps", "first → last", "curve"]);
    for s in &run.series {
        let values: Vec<f64> = s.data.iter().map(|p| p.1).collect();
        t.add_row([
            escape(&s.metric).into_owned(),
            s.role.label().to_string(),
            s.points.to_string(),
            format!("{}–{}", num(s.first_step), num(s.last_step)),
            format!("{} → {}", value(s.first), value(s.last)),
            sparkline(&values, CURVE_WIDTH),
        ]);
    }
    out.push_str(&indent(&super::table::to_string(&t)));
    if run.findings.is_empty() {
        out.push_str("  no findings: nothing in these curves looks wrong\n");
        return;
    }
    let mut t = style.table();
    t.set_header(["severity", "symptom", "step", "series", "finding"]);
    for f in &run.findings {
        let x = &f.finding;
        t.add_row([
            style.status_cell(status(x.severity), x.severity.label()),
            Cell::new(x.symptom.id()),
            Cell::new(num(x.step)),
            style.cell(&x.metric),
            style.cell(&x.summary),
        ]);
    }
    out.push('\n');
    out.push_str(&indent(&super::table::to_string(&t)));
    let mut shown: Vec<&str> = Vec::new();
    for f in &run.findings {
        let Some(p) = &f.playbook else { continue };
        if shown.contains(&p.row.as_str()) {
            continue;
        }
        shown.push(&p.row);
        out.push_str(&playbook_block(p));
    }
}

pub(crate) fn playbook_block(p: &PlaybookLink) -> String {
    let mut s = format!("\n  {} → {}\n", escape(&p.row), escape(&p.link));
    for (i, h) in p.hypotheses.iter().enumerate() {
        s.push_str(&format!("    {}. {}\n", i + 1, escape(h)));
    }
    for c in &p.next {
        s.push_str(&format!("    next: {}\n", escape(c)));
    }
    s
}

/// "read 1,210 of 1,212 lines (tqdm: 600, lines 1–1200; hf-dict: 80, lines 3–1198); steps …"
fn read_line(r: &ReadReport) -> String {
    let shapes: Vec<String> = r
        .shapes
        .iter()
        .map(|s| {
            format!(
                "{}: {} lines, {}–{}",
                s.shape, s.lines, s.first_line, s.last_line
            )
        })
        .collect();
    let steps = match r.step_source {
        StepSource::Logged => "steps as logged",
        StepSource::ProgressBar => "dict steps from the progress bar drawn with them",
        StepSource::LineOrder => "no step numbers in the log: dicts numbered in order",
    };
    format!(
        "read {} of {} lines ({}); {steps}",
        r.read,
        r.lines,
        shapes.join("; ")
    )
}

fn value(x: f64) -> String {
    num(x).replace('—', "NaN")
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

/// One finding as `--watch` prints it.
pub fn watch_line(run: &str, f: &Finding, playbook: Option<&PlaybookLink>, style: Style) -> String {
    format!(
        "{}: {} {} at step {} ({}): {}{}\n",
        escape(run),
        style.paint(status(f.severity), f.severity.label()),
        f.symptom,
        num(f.step),
        escape(&f.metric),
        escape(&f.summary),
        playbook.map_or(String::new(), |p| format!(" — {}", escape(&p.link))),
    )
}

#[derive(Serialize)]
struct WatchEvent<'a> {
    run: &'a str,
    #[serde(flatten)]
    finding: &'a Finding,
    playbook: Option<&'a PlaybookLink>,
}

/// One finding as `--watch --json` prints it: a JSON object on one line.
pub fn watch_json(run: &str, f: &Finding, playbook: Option<&PlaybookLink>) -> Result<String> {
    let body = WatchEvent {
        run,
        finding: f,
        playbook,
    };
    mldebug_report::envelope::to_json_line("doctor", &body)
        .map_err(|e| Error::internal(format!("writing JSON: {e}")))
}
