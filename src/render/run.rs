//! `mldebug run` as terminal text: one line on what was watched and how it ended, the findings
//! table (with where in the user's code, and the ranks of a distributed run), each finding's
//! detail lines, the PLAYBOOK row of each symptom found, and how to judge the trace again.
//! The command line, paths, summaries and details are data: escaped where they are placed.

use super::doctor::{playbook_block, status};
use super::style::Style;
use super::terminal::escape;
use crate::run::report::Report;
use comfy_table::Cell;
use mldebug_text::number::{human_bytes, num};

/// The whole report as text.
pub fn render(r: &Report, style: Style) -> String {
    let mut out = header(r);
    let findings = &r.run.findings;
    if findings.is_empty() {
        out.push_str("\nno findings: nothing in the watched steps looks wrong\n");
    } else {
        let ranks = findings.iter().any(|f| !f.finding.ranks.is_empty());
        let mut t = style.table();
        let mut head = vec!["severity", "finding", "step", "where"];
        if ranks {
            head.push("ranks");
        }
        head.push("what");
        t.set_header(head);
        for f in findings {
            let x = &f.finding;
            let mut row = vec![
                style.status_cell(status(x.severity), x.severity.label()),
                Cell::new(x.symptom.id()),
                Cell::new(num(x.step)),
                style.cell(x.location.as_deref().unwrap_or("")),
            ];
            if ranks {
                let r: Vec<String> = x.ranks.iter().map(u32::to_string).collect();
                row.push(Cell::new(r.join(",")));
            }
            row.push(style.cell(&x.summary));
            t.add_row(row);
        }
        out.push('\n');
        out.push_str(&super::table::to_string(&t));
        for f in findings.iter().filter(|f| !f.finding.details.is_empty()) {
            out.push_str(&format!("\n{}:\n", f.finding.symptom.id()));
            for d in &f.finding.details {
                out.push_str(&format!("  {}\n", escape(d)));
            }
        }
        let mut shown: Vec<&str> = Vec::new();
        for f in findings {
            let Some(p) = &f.playbook else { continue };
            if !shown.contains(&p.row.as_str()) {
                shown.push(&p.row);
                out.push_str(&playbook_block(p));
            }
        }
    }
    out.push_str(&format!(
        "\n{} fail, {} warn, {} info",
        r.counts.fail, r.counts.warn, r.counts.info
    ));
    match (&r.trace, &r.outcome.trace_error) {
        (_, Some(e)) => out.push_str(&format!("; the trace was not kept: {}\n", escape(e))),
        (Some(t), None) => out.push_str(&format!("; trace kept: mldebug doctor {}\n", escape(t))),
        (None, None) => out.push_str("; keep the trace with --trace FILE\n"),
    }
    out
}

fn header(r: &Report) -> String {
    let steps: Vec<usize> = r.processes.iter().map(|p| p.steps).collect();
    let procs = match r.processes.len() {
        0 => "no process trained".to_string(),
        1 => format!("1 process, {} optimizer steps", steps[0]),
        n => format!(
            "{n} processes ({}), {}–{} optimizer steps each",
            r.processes
                .iter()
                .map(|p| p.label.clone())
                .collect::<Vec<_>>()
                .join(", "),
            steps.iter().min().unwrap_or(&0),
            steps.iter().max().unwrap_or(&0)
        ),
    };
    let how = match r.outcome.how {
        "stopped" => "stopped by mldebug at the end of its window".to_string(),
        "exited" => "the program finished".to_string(),
        "failed" => match (r.outcome.exit_code, &r.outcome.signal) {
            (Some(c), _) => format!("the program failed (exit code {c})"),
            (None, Some(s)) => format!("the program was killed by {}", escape(s)),
            (None, None) => "the program failed".to_string(),
        },
        "timed_out" => "ended at the time limit; the steps traced so far are judged".to_string(),
        _ => format!(
            "interrupted{}; the steps traced so far are judged",
            r.outcome
                .signal
                .as_ref()
                .map(|s| format!(" by {}", escape(s)))
                .unwrap_or_default()
        ),
    };
    format!(
        "mldebug run: {}\n  watched {procs} in {:.1} s; {how}\n{}{}{}",
        escape(&r.argv.join(" ")),
        r.outcome.seconds,
        window_line(r),
        cadence_line(r),
        per_rank(r)
    )
}

/// Which light steps were measured, when not every one was (the first such process: ranks
/// agree on one cadence).
fn cadence_line(r: &Report) -> String {
    let Some(p) = r.processes.iter().find(|p| p.measured_every.is_some()) else {
        return String::new();
    };
    let (k, from) = (p.measured_every.unwrap_or(1), p.measured_from.unwrap_or(0));
    let cost = match (p.measure_s, p.step_s) {
        (Some(m), Some(s)) => format!(
            " (a measurement took {:.2} ms on a {:.2} ms step)",
            m * 1e3,
            s * 1e3
        ),
        _ => String::new(),
    };
    format!(
        "  measured: every step to step {}, then one step in {k}{cost}; the steps between had \
         their loss and times only\n",
        from.saturating_sub(1)
    )
}

/// The window's rule and why it ended, said of the first process mldebug stopped (ranks stop
/// together); a window that ended before any evaluation was seen says so.
fn window_line(r: &Report) -> String {
    let w = &r.window;
    let rule = match w.rule {
        "cycle" => format!(
            "one cycle (the first evaluation and the start of the second epoch; at most {} \
             steps and {} s)",
            w.cap_steps.unwrap_or(0),
            w.cap_seconds.unwrap_or(0)
        ),
        "steps" => format!("{} steps (--steps)", w.cap_steps.unwrap_or(0)),
        _ => "the whole run (--steps 0)".to_string(),
    };
    let stopped = r.processes.iter().find(|p| p.window_end.is_some());
    let Some(p) = stopped else {
        let seen = r.processes.iter().any(|p| p.first_evaluation.is_some());
        let ended = match r.outcome.how {
            "exited" => "; the program ended before the window did",
            _ => "",
        };
        let eval = if r.processes.is_empty() || seen {
            ""
        } else {
            "; no evaluation was seen"
        };
        return format!("  window: {rule}{ended}{eval}\n");
    };
    let evaluated = p.first_evaluation.map(|e| match e {
        0 | 1 => "first evaluation before step 1".to_string(),
        e => format!("first evaluation after step {}", e - 1),
    });
    let epoch = p
        .second_epoch
        .map(|e| format!("second epoch from step {e}"));
    let seen: Vec<String> = evaluated.iter().chain(epoch.iter()).cloned().collect();
    let seen = if seen.is_empty() {
        String::new()
    } else {
        format!(" ({})", seen.join(", "))
    };
    let why = match p.window_end.as_deref().unwrap_or("") {
        "cycle" => format!("ended after step {}: the cycle is complete{seen}", p.steps),
        "cap_steps" => format!("ended at its cap of {} steps{seen}", p.steps),
        "cap_seconds" => format!(
            "ended at its cap of {} s after the first step, at step {}{seen}",
            w.cap_seconds.unwrap_or(0),
            p.steps
        ),
        "verdict" => format!(
            "ended at step {}: the first steps already hold a fail (fix it, then run again to \
             watch the whole cycle)",
            p.steps
        ),
        _ => format!("ended after step {}{seen}", p.steps),
    };
    let unseen = if p.first_evaluation.is_none() && p.window_end.as_deref() != Some("verdict") {
        "; it ended before any evaluation was seen, so what only an evaluation shows is not \
         judged (--steps 0 watches the whole run)"
    } else {
        ""
    };
    format!("  window: {rule}; {why}{unseen}\n")
}

/// With several processes, each one's peak memory and data-loader wait, side by side.
fn per_rank(r: &Report) -> String {
    if r.processes.len() < 2 {
        return String::new();
    }
    let each: Vec<String> = r
        .processes
        .iter()
        .map(|p| {
            let peak = p.peak_memory_bytes.map_or("?".into(), human_bytes);
            let wait = p
                .data_wait_share
                .map_or("?".into(), |w| format!("{:.0}%", 100.0 * w));
            format!("{} peak {peak}, data wait {wait}", p.label)
        })
        .collect();
    format!("  per process: {}\n", each.join("; "))
}
