//! `doctor --watch`: poll logs that are still being written and print each finding once, as it
//! appears. What is read at each poll, and how a rewritten log is told from a growing one, is
//! [`super::follow`]'s; series are capped (see `mldebug_doctor::watch`), so memory stays bounded
//! however long the run goes on.
//!
//! The watch ends at the first finding as bad as `--fail-on` (exit 1), or once the logs have not
//! changed for `--idle-timeout` seconds: exit 1 if a finding reached the level, 2 if a log is
//! unreadable then (malformed, or no line of it recognised), else 0.

use super::follow::Follow;
use super::Args;
use crate::context::Context;
use crate::doctor::read::Run;
use crate::doctor::report::link;
use crate::render::output::{emit, emit_json, note};
use crate::render::{doctor as render, style::Style};
use crate::{Exit, Result};
use mldebug_doctor::watch::Reported;
use mldebug_doctor::{diagnose, Finding, Options, Severity};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How often the logs are polled: often enough that a finding shows within a second of being
/// logged, rarely enough that watching costs nothing next to training.
const POLL: Duration = Duration::from_millis(500);

/// The findings printed so far, per run (by its source and name), so each is printed once.
#[derive(Default)]
pub struct Judged {
    reported: BTreeMap<(PathBuf, String), Reported>,
}

impl Judged {
    /// The findings of `runs` not printed before, with their run's name; a run whose source
    /// was rewritten (in `rewritten`) starts over.
    pub fn fresh(
        &mut self,
        runs: &[Run],
        rewritten: &[PathBuf],
        opts: &Options,
    ) -> Vec<(String, Finding)> {
        self.reported
            .retain(|(source, _), _| !rewritten.iter().any(|r| source.starts_with(r)));
        let mut out = Vec::new();
        for run in runs {
            let d = diagnose(&run.history, opts);
            let key = (run.source.clone(), run.name.clone());
            let seen = self.reported.entry(key).or_default();
            for f in seen.fresh(&d.findings) {
                out.push((run.name.clone(), f.clone()));
            }
        }
        out
    }
}

pub fn run(args: &Args, g: &Context) -> Result<Exit> {
    let mut follow = Follow::new(&args.paths)?;
    let catalog = crate::catalog::open(g)?;
    let style = Style::from(g.stdout);
    let opts = Options {
        metrics: args.metrics.clone(),
    };
    let fail_at = args.fail_on.map(|f| f.severity());
    let mut judged = Judged::default();
    let mut worst: Option<Severity> = None;
    let mut last_change = Instant::now();
    loop {
        let polled = follow.poll()?;
        for e in &polled.errors {
            note(&format!("error: {e}"));
        }
        for p in &polled.rewritten {
            note(&format!(
                "doctor: {} was rewritten; reading it again from the start",
                p.display()
            ));
        }
        if polled.changed {
            last_change = Instant::now();
            for (name, f) in judged.fresh(&follow.runs(), &polled.rewritten, &opts) {
                let playbook = link(&catalog, f.symptom.id());
                if g.json() {
                    emit_json(&render::watch_json(&name, &f, playbook.as_ref())?)?;
                } else {
                    let line = render::watch_line(&name, &f, playbook.as_ref(), style);
                    emit(&line, style.colour)?;
                }
                worst = worst.max(Some(f.severity));
                if fail_at.is_some_and(|level| f.severity >= level) {
                    return Ok(Exit::Failed);
                }
            }
        }
        if let Some(t) = args.idle_timeout {
            if last_change.elapsed().as_secs_f64() >= t {
                note(&format!("doctor: no change for {t} s; stopped watching"));
                let level = fail_at.unwrap_or(Severity::Fail);
                if worst.is_some_and(|w| w >= level) {
                    return Ok(Exit::Failed);
                }
                return match follow.unreadable() {
                    Some(e) => Err(e),
                    None => Ok(Exit::Ok),
                };
            }
        }
        std::thread::sleep(POLL);
    }
}
