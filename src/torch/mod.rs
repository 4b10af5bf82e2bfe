//! Run the checks on a PyTorch model: `mldebug check all --torch model.py:Net` (or
//! `--torch hf:DIR [--lora ...]`).
//!
//! The binary embeds the driver (the package `torch/driver/mldebug_driver/` and its bootstrap
//! `torch/driver/bootstrap.py`) and runs it from memory with the user's own interpreter
//! (`--python`, else `$MLDEBUG_PYTHON`, else the active virtualenv's, else `python3`): nothing
//! to install beside the torch the user already has. The driver **measures** and writes JSON
//! lines (`torch/CONTRACT.md`); this module reads them and hands every measurement to the same
//! judgement the candle checks use (`mldebug-judge`), so a verdict means the same whichever
//! framework measured it.
//!
//! - [`target`]: `--torch` and `--lora`, parsed strictly;
//! - [`events`]: the driver's output lines;
//! - [`driver`]: starting the interpreter with the driver (its sources on stdin ahead of the
//!   request) and reading its lines, under the time limit.

pub mod driver;
pub mod events;
pub mod replay;
pub mod target;
pub mod zoo;

use crate::Result;
use events::{CheckEvent, Hello};
use mldebug_diagnostics::plan::Plan;
use mldebug_judge::label_mask::Labels;
use mldebug_judge::{error_finding, judge_json, skipped, Ctx};
use mldebug_report::{CheckId, Finding, Report, Subject, Task};
use std::path::PathBuf;
use target::{Lora, Target};

/// Everything a torch run needs.
#[derive(Debug, Clone)]
pub struct TorchSettings {
    /// `--torch` as typed (the report's model and the next commands repeat it).
    pub spec: String,
    pub target: Target,
    pub lora: Option<Lora>,
    /// `--lora` as typed.
    pub lora_spec: Option<String>,
    pub python: Option<PathBuf>,
    /// The checks, the seeds (`--seed`: one; `--seeds`: several, all in one driver process),
    /// steps, device (`cpu`, `cuda:0`) and each seed's time limit.
    pub plan: Plan,
    pub learning_rate: f64,
    /// Draw progress on stderr.
    pub progress: bool,
    /// Threads torch may use (`OMP_NUM_THREADS`); `None` leaves torch's default.
    pub threads: Option<usize>,
}

impl TorchSettings {
    /// How the next command names this model: `--torch` and, when given, `--lora`.
    /// Each word quoted for a shell where it needs it (a path with a space, a `$`).
    pub fn subject(&self) -> Subject {
        let mut flags = Vec::new();
        if let Some(l) = &self.lora_spec {
            flags.extend(["--lora".to_string(), l.clone()]);
        }
        if let Some(p) = &self.python {
            flags.extend(["--python".to_string(), p.display().to_string()]);
        }
        Subject::torch(&self.spec, &flags)
    }
}

/// What a torch run gives back: one report per seed (in the order of `seeds`), and the
/// driver's hello (versions, parameters, start-up seconds) when it got that far.
pub struct Judged {
    pub reports: Vec<Report>,
    pub hello: Option<Hello>,
}

impl Judged {
    /// The one report of a run with a single seed (the first seed's otherwise).
    pub fn into_report(self) -> Report {
        self.reports
            .into_iter()
            .next()
            .expect("a run has at least one seed")
    }
}

/// Runs the driver and judges what it measured: per seed, one finding per requested check, in
/// order. A check the driver never reported for a seed (it crashed, or the time limit ended it
/// first) is an error finding saying how the run ended.
pub fn run_check(settings: &TorchSettings) -> Result<Judged> {
    let run = driver::run(settings)?;
    let hello = run.hello.as_ref();
    let ctx = Ctx {
        subject: settings.subject(),
        task: hello.map_or(Task::Classification, |h| h.task),
        steps: settings.plan.steps,
        learning_rate: settings.learning_rate,
    };
    let labels = hello.map_or(Labels::Shifted, |h| h.labels);
    let plan = &settings.plan;
    let first = plan.seeds.first().copied().unwrap_or_default();
    let reports = plan
        .seeds
        .iter()
        .map(|&seed| {
            let checks = plan
                .checks
                .iter()
                .map(|&id| {
                    let event = run
                        .checks
                        .iter()
                        .find(|c| c.check == id && c.seed.unwrap_or(first) == seed);
                    match event {
                        Some(event) => judge_event(event, labels, &ctx),
                        None => missing(id, &run, &ctx),
                    }
                })
                .collect();
            Report {
                model: settings.spec.clone(),
                device: hello.map_or_else(|| plan.device.clone(), |h| h.device.clone()),
                seed,
                checks,
            }
        })
        .collect();
    Ok(Judged {
        reports,
        hello: run.hello,
    })
}

fn judge_event(event: &CheckEvent, labels: Labels, ctx: &Ctx) -> Finding {
    let id = event.check;
    if let Some(err) = &event.error {
        let mut message = format!("the model raised: {}", err.message);
        for line in &err.traceback {
            message.push('\n');
            message.push_str(line);
        }
        return error_finding(id, &message, ctx);
    }
    if let Some(reason) = &event.skipped {
        return skipped(id, reason.clone());
    }
    match &event.measurement {
        Some(value) => judge_json(id, value.clone(), labels, ctx).unwrap_or_else(|e| {
            error_finding(
                id,
                &format!("{e} (the embedded driver and this mldebug disagree: a bug in mldebug)"),
                ctx,
            )
        }),
        None => error_finding(
            id,
            "the driver wrote neither a measurement, a reason nor an error",
            ctx,
        ),
    }
}

/// A check the driver never reported: it crashed or timed out before.
fn missing(id: CheckId, run: &driver::Run, ctx: &Ctx) -> Finding {
    let mut message = run.ended.clone();
    for line in &run.tail {
        message.push('\n');
        message.push_str(line);
    }
    error_finding(id, &message, ctx)
}

/// The hello line, for a note on stderr: versions and the driver's start-up cost.
pub fn describe(hello: &Hello) -> String {
    let mut s = format!("python {}, torch {}", hello.python, hello.torch);
    if let Some(t) = &hello.transformers {
        s.push_str(&format!(", transformers {t}"));
    }
    if let Some(p) = &hello.peft {
        s.push_str(&format!(", peft {p}"));
    }
    if let Some(n) = hello.parameters {
        s.push_str(&format!("; {n} parameters"));
    }
    if let Some(t) = hello.startup_s {
        s.push_str(&format!("; started in {t:.1}s"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn settings(spec: &str, lora: Option<&str>, python: Option<&str>) -> TorchSettings {
        TorchSettings {
            spec: spec.to_string(),
            target: Target::File {
                path: PathBuf::from(spec.split(':').next().unwrap()),
                name: "Net".into(),
            },
            lora: None,
            lora_spec: lora.map(String::from),
            python: python.map(PathBuf::from),
            plan: Plan {
                checks: vec![CheckId::GradFlow],
                seeds: vec![0],
                steps: 10,
                device: "cpu".into(),
                timeout: Duration::from_secs(60),
            },
            learning_rate: 1e-3,
            progress: false,
            threads: None,
        }
    }

    #[test]
    fn the_next_command_quotes_every_word_a_shell_would_split() {
        let s = settings(
            "my models/net.py:Net",
            Some("r=8,targets=q_proj"),
            Some("/opt/py 3/bin/python"),
        );
        assert_eq!(
            s.subject().command("grad-flow"),
            "mldebug check grad-flow --torch 'my models/net.py:Net' --lora r=8,targets=q_proj \
             --python '/opt/py 3/bin/python'"
        );
        // A plain path stays as typed.
        let plain = settings("model.py:Net", None, None);
        assert_eq!(
            plain.subject().command("overfit"),
            "mldebug check overfit --torch model.py:Net"
        );
    }
}
