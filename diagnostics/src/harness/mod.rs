//! The entry point of a generated harness, the [`debug_model!`](crate::debug_model) macro, and `assert_pass`.
//!
//! `mldebug check <id> --model crate::Net` generates a tiny binary crate whose `main` is one line:
//! `mldebug_diagnostics::harness::main::<your_crate::Net>()`. [`main`] reads the [`Request`] from
//! the environment ([`REQUEST_ENV`]), runs the checks in this process, writes the [`Report`] as
//! JSON to the file named by [`REPORT_ENV`], and prints progress lines (prefixed with
//! [`PROGRESS_PREFIX`]) on stderr for the CLI to draw. The CLI and the harness speak JSON, never
//! Rust types, so an installed `mldebug` works with the library version a user's lockfile pins;
//! [`PROTOCOL`] names the version of that conversation.
//!
//! [`debug_model!`](crate::debug_model) and the batch it draws live in `one_line`.
//!
//! Not for: locating, generating or building the harness crate (that is the CLI's job).

use crate::model::DebugModel;
use crate::options::{Deadline, Options, Progress, ProgressEvent};
use crate::plan::{Plan, DEFAULT_STEPS, MAX_TIMEOUT_S};
use crate::report::{CheckId, Report};
use candle_core::Device;
use mldebug_memory::measured::ModelEstimate;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The version of the request/report conversation between the CLI and a harness.
pub const PROTOCOL: u32 = 1;
/// Environment variable holding the [`Request`] as JSON.
pub const REQUEST_ENV: &str = "MLDEBUG_REQUEST";
/// Environment variable naming the file the [`Report`] is written to.
pub const REPORT_ENV: &str = "MLDEBUG_REPORT";
/// Prefix of a progress line on the harness's stderr; the rest of the line is a [`ProgressLine`].
pub const PROGRESS_PREFIX: &str = "mldebug:progress ";
/// Prefix of the line a harness prints before exiting 2 on a request it cannot serve.
pub const REFUSAL_PREFIX: &str = "mldebug:refused ";
/// Exit status of a harness that refused its request (bad device, other protocol, ...).
pub const REFUSAL_EXIT: i32 = 2;
/// Prefix of the first line a generated harness prints, before it serves the request: the
/// hash of its generated sources and the model type it was generated for. The generated `main`
/// prints it (not this library, so a harness linking an older version announces itself too);
/// the CLI refuses a report from a harness that announces another model than it generated.
pub const IDENTITY_PREFIX: &str = "mldebug:harness ";

/// Writes one line of the conversation with the CLI on stderr: `prefix` (one of the `*_PREFIX`
/// constants) and its text. The CLI parses these lines by prefix and renders what it shows
/// itself; this is the harness's only output besides the report file.
fn protocol_line(prefix: &str, text: &str) {
    eprintln!("{prefix}{text}");
}

/// What the CLI asks a harness to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// [`PROTOCOL`] of the CLI that wrote it; a harness refuses any other.
    pub protocol: u32,
    /// The `--model` path as the user typed it; it names the model in the report.
    pub model: String,
    /// The checks to run, in order.
    pub checks: Vec<CheckId>,
    /// `cpu`, `cuda`, `cuda:N`, `metal` or `metal:N`.
    pub device: String,
    /// Seeds the parameter init and the batch.
    pub seed: u64,
    /// Optimizer steps for the checks that train; `None` keeps the library default.
    pub steps: Option<usize>,
    /// Seconds the checks may take ([`Options::deadline`]); `None` = no limit. Added without a
    /// protocol change: a harness that does not know it ignores it (the CLI still kills it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Run no check: write the model's memory estimate (`mldebug memory --model crate::Net`,
    /// a [`ModelEstimate`] in the envelope as `"command": "memory"`) where the report would
    /// go. Added without a protocol change: an older harness ignores it and writes a report,
    /// which the CLI then refuses to read as an estimate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimate_memory: bool,
    /// The other flags the run was invoked with that the suggested commands must repeat to run
    /// as printed (`--forward`, `--input`, `--features`, ...), one word each, unquoted
    /// ([`Options::model_flags`]). Added without a protocol change: an older harness ignores
    /// it and suggests bare `--model` commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

impl Request {
    /// The request for `seed`, one of `plan`'s seeds, on the model typed as `model`; `flags` as
    /// in [`Request::flags`].
    pub fn new(model: &str, plan: &Plan, seed: u64, flags: Vec<String>) -> Request {
        Request {
            protocol: PROTOCOL,
            model: model.to_string(),
            checks: plan.checks.clone(),
            device: plan.device.clone(),
            seed,
            steps: Some(plan.steps),
            timeout_s: Some(plan.timeout.as_secs()),
            estimate_memory: false,
            flags,
        }
    }

    /// The plan this request asks for (its one seed), refused when a number is outside the
    /// plan's limits ([`Plan::check`]). No `steps`: the library's default; no `timeout_s` (a
    /// CLI older than the field): the longest limit here, and [`options_for`] sets no deadline.
    pub fn plan(&self) -> Result<Plan, String> {
        let plan = Plan {
            checks: self.checks.clone(),
            seeds: vec![self.seed],
            steps: self.steps.unwrap_or(DEFAULT_STEPS),
            device: self.device.clone(),
            timeout: Duration::from_secs(self.timeout_s.unwrap_or(MAX_TIMEOUT_S)),
        };
        plan.check()?;
        Ok(plan)
    }
}

/// One progress line: where a harness is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressLine {
    /// The check running.
    pub check: CheckId,
    /// 0-based position of `check` in the request, so the CLI can say "2/7".
    pub index: usize,
    /// Its step.
    pub step: usize,
    /// Of this many.
    pub total: usize,
    /// A NaN or infinite loss is written as in the report ([`crate::report::non_finite`]).
    #[serde(with = "crate::report::non_finite::option")]
    pub loss: Option<f64>,
}

/// The `main` of a generated harness: serve the request in the environment, then exit.
///
/// Exits 0 once the report is written, whatever the findings say (the CLI reads the verdict
/// from the report); exits [`REFUSAL_EXIT`] with a [`REFUSAL_PREFIX`] line when the request
/// cannot be served. A crash (a panic outside the checks, a signal) leaves no report.
pub fn main<M: DebugModel>() {
    exit_when_orphaned();
    let code = match serve::<M>() {
        Ok(()) => 0,
        Err(reason) => {
            protocol_line(REFUSAL_PREFIX, &reason);
            REFUSAL_EXIT
        }
    };
    std::process::exit(code);
}

/// The CLI runs a harness in its own process group (so a timeout can kill all of it), which
/// also keeps a terminal's Ctrl-C from reaching it; stop when the CLI is gone instead.
fn exit_when_orphaned() {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        std::thread::spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_millis(ORPHAN_POLL_MS));
            if std::os::unix::process::parent_id() != parent {
                std::process::exit(ORPHANED_EXIT);
            }
        });
    }
}

/// Exit status of a harness whose model failed while its memory was estimated (no document
/// is written; the reason is its [`MODEL_ERROR_PREFIX`] line on stderr).
const MODEL_ERROR_EXIT: i32 = 1;
/// Starts the stderr line that says why the model failed while its memory was estimated.
pub const MODEL_ERROR_PREFIX: &str = "mldebug:model-error ";

/// How often a harness looks for its parent: quick enough that Ctrl-C feels immediate.
const ORPHAN_POLL_MS: u64 = 250;
/// Exit status of a harness whose CLI went away (128 + SIGINT, as if interrupted).
const ORPHANED_EXIT: i32 = 130;

fn serve<M: DebugModel>() -> Result<(), String> {
    let raw = std::env::var(REQUEST_ENV).map_err(|_| {
        format!("{REQUEST_ENV} is not set; this program is run by `mldebug check`, not by hand")
    })?;
    let request: Request =
        serde_json::from_str(&raw).map_err(|e| format!("{REQUEST_ENV}: not a request: {e}"))?;
    if request.protocol != PROTOCOL {
        return Err(format!(
            "this harness speaks protocol {PROTOCOL}, the CLI asked for {}; \
             use an `mldebug` built with the same mldebug-diagnostics version as your crate",
            request.protocol
        ));
    }
    let report_path = std::env::var_os(REPORT_ENV)
        .ok_or_else(|| format!("{REPORT_ENV} is not set; nowhere to write the report"))?;
    let opts = options_for(&request)?;
    let json = if request.estimate_memory {
        match estimate_to_json::<M>(&opts) {
            Ok(json) => json,
            // Not a refusal (that is the request's fault, exit 2): the model's own failure,
            // which the CLI reports from these last lines with no document written.
            Err(model_error) => {
                protocol_line(MODEL_ERROR_PREFIX, &model_error);
                std::process::exit(MODEL_ERROR_EXIT);
            }
        }
    } else {
        report_to_json(&crate::checks::run_checks::<M>(&request.checks, &opts))?
    };
    write_atomically(Path::new(&report_path), &json)
}

/// The memory estimate of the model on its own batch, as the document `mldebug memory` reads.
/// The model's own error (it cannot be built, its forward or loss fails) is the message.
fn estimate_to_json<M: DebugModel>(opts: &Options) -> Result<String, String> {
    let estimate = crate::checks::guard::catch(|| {
        crate::memory::measure::estimate_only::<M>(opts, Default::default())
    });
    let estimate = match estimate {
        Ok(Ok(estimate)) => estimate,
        // candle's errors can carry a backtrace after their first line: the line is enough.
        Ok(Err(e)) => return Err(format!("the model returned an error: {}", first_line(&e))),
        Err(panic) => return Err(format!("the model panicked: {}", first_line(&panic))),
    };
    estimate_json(&estimate)
}

fn first_line(e: &impl std::fmt::Display) -> String {
    e.to_string()
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// `estimate` in the envelope (`"command": "memory"`).
pub fn estimate_json(estimate: &ModelEstimate) -> Result<String, String> {
    crate::report::envelope::to_json("memory", estimate).map_err(|e| format!("estimate: {e}"))
}

/// Read what [`estimate_json`] wrote.
pub fn estimate_from_json(text: &str) -> Result<ModelEstimate, String> {
    crate::report::envelope::from_json("memory", text)
}

/// The library options a request asks for.
pub fn options_for(request: &Request) -> Result<Options, String> {
    let plan = request.plan()?;
    let checks = plan.checks.clone();
    let progress = move |ev: ProgressEvent| {
        print_progress(&ProgressLine {
            check: ev.check,
            index: checks.iter().position(|&c| c == ev.check).unwrap_or(0),
            step: ev.step,
            total: ev.total,
            loss: ev.loss,
        })
    };
    Ok(Options {
        device: parse_device(&plan.device)?,
        seed: request.seed,
        steps: plan.steps,
        model_label: request.model.clone(),
        model_flags: request.flags.clone(),
        progress: Some(Progress(Arc::new(progress))),
        deadline: request.timeout_s.map(|_| Deadline::after(plan.timeout)),
        ..Options::default()
    })
}

/// `cpu`, `cuda`, `cuda:N`, `metal`, `metal:N` → a candle device (which must be available).
pub fn parse_device(s: &str) -> Result<Device, String> {
    let (kind, ordinal) = match s.split_once(':') {
        Some((k, n)) => {
            let n: usize = n
                .parse()
                .map_err(|_| format!("device `{s}`: `{n}` is not a device number"))?;
            (k, n)
        }
        None => (s, 0),
    };
    let unavailable = |e: candle_core::Error| {
        format!("device `{s}` is not available: {e} (is candle built with the `{kind}` feature?)")
    };
    match kind {
        "cpu" => Ok(Device::Cpu),
        "cuda" => Device::new_cuda(ordinal).map_err(unavailable),
        "metal" => Device::new_metal(ordinal).map_err(unavailable),
        _ => Err(format!(
            "device `{s}`: expected cpu, cuda, cuda:N, metal or metal:N"
        )),
    }
}

/// The report as the harness writes it (and `check --json` prints it): pretty JSON in the
/// [`crate::report::envelope`] (`"command": "check"`), non-finite numbers as `"NaN"`, `"inf"`,
/// `"-inf"` ([`crate::report::non_finite`]).
pub fn report_to_json(report: &Report) -> Result<String, String> {
    crate::report::envelope::to_json("check", report).map_err(|e| format!("report: {e}"))
}

/// A report as the CLI reads it back from a harness.
pub fn report_from_json(text: &str) -> Result<Report, String> {
    crate::report::envelope::from_json("check", text)
}

/// Write `json` to `path` through a temporary file, so a reader never sees half a document.
fn write_atomically(path: &Path, json: &str) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, json).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Print one progress line for the CLI (stderr; the CLI draws it only on a terminal).
pub fn print_progress(p: &ProgressLine) {
    if let Ok(line) = serde_json::to_string(p) {
        protocol_line(PROGRESS_PREFIX, &line);
    }
}

pub use mldebug_report::assert::describe;

mod lm_batch;
mod one_line;
mod wrap;
pub use lm_batch::{batch_from_safetensors, causal_lm_batch, PAD_TOKEN};
pub use one_line::classification_batch;
pub use wrap::{config_from_json, model_result};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_flag_is_left_out_unless_set_and_defaults_to_off() {
        let mut request = Request {
            protocol: PROTOCOL,
            model: "crate::Net".into(),
            checks: vec![],
            device: "cpu".into(),
            seed: 0,
            steps: None,
            timeout_s: None,
            estimate_memory: false,
            flags: vec![],
        };
        let text = serde_json::to_string(&request).unwrap();
        assert!(!text.contains("estimate_memory"), "{text}");
        assert!(!text.contains("flags"), "{text}");
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), request);
        request.estimate_memory = true;
        let text = serde_json::to_string(&request).unwrap();
        assert!(
            serde_json::from_str::<Request>(&text)
                .unwrap()
                .estimate_memory
        );
    }

    #[test]
    fn requests_out_of_range_are_refused_and_a_timeout_becomes_a_deadline() {
        let request = |steps, timeout_s| Request {
            protocol: PROTOCOL,
            model: "crate::Net".into(),
            checks: vec![CheckId::Overfit],
            device: "cpu".into(),
            seed: 0,
            steps,
            timeout_s,
            estimate_memory: false,
            flags: vec!["--input".into(), "tokens:4x8".into()],
        };
        let e = options_for(&request(Some(usize::MAX), None)).unwrap_err();
        assert_eq!(
            e,
            "steps: `18446744073709551615` is out of range (expected a step count from 1 to \
             100000)"
        );
        let e = options_for(&request(None, Some(0))).unwrap_err();
        assert_eq!(
            e,
            "timeout_s: `0` is out of range (expected a number of seconds from 1 to 86400)"
        );
        assert!(options_for(&request(None, None))
            .unwrap()
            .deadline
            .is_none());
        let opts = options_for(&request(Some(7), Some(60))).unwrap();
        assert_eq!(opts.steps, 7);
        assert_eq!(opts.deadline.unwrap().limit().as_secs(), 60);
        // The next commands repeat the flags the run was invoked with.
        assert_eq!(
            opts.check_command(CheckId::GradFlow),
            "mldebug check grad-flow --model crate::Net --input tokens:4x8"
        );
        // A request from a CLI that does not send a timeout still reads.
        let old = r#"{"protocol":1,"model":"m","checks":[],"device":"cpu","seed":0,"steps":null}"#;
        assert_eq!(
            serde_json::from_str::<Request>(old).unwrap().timeout_s,
            None
        );
    }

    #[test]
    fn a_request_carries_one_seed_of_its_plan_and_reads_back_into_it() {
        let plan = Plan {
            checks: vec![CheckId::InitLoss, CheckId::Overfit],
            seeds: vec![4, 9],
            steps: 50,
            device: "cpu".into(),
            timeout: Duration::from_secs(30),
        };
        let request = Request::new("crate::Net", &plan, 9, vec!["--release".into()]);
        let text = serde_json::to_string(&request).unwrap();
        let back: Request = serde_json::from_str(&text).unwrap();
        assert_eq!(back, request);
        assert_eq!(
            back.plan().unwrap(),
            Plan {
                seeds: vec![9],
                ..plan
            }
        );
    }

    #[test]
    fn a_nan_loss_in_a_progress_line_reads_back() {
        let line = ProgressLine {
            check: CheckId::Overfit,
            index: 0,
            step: 3,
            total: 9,
            loss: Some(f64::NAN),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.contains(r#""loss":"NaN""#), "{text}");
        let back: ProgressLine = serde_json::from_str(&text).unwrap();
        assert!(back.loss.unwrap().is_nan());
    }

    #[test]
    fn devices_parse_and_bad_ones_are_named() {
        assert!(matches!(parse_device("cpu"), Ok(Device::Cpu)));
        let e = parse_device("tpu").unwrap_err();
        assert!(e.contains("device `tpu`"), "{e}");
        let e = parse_device("cuda:x").unwrap_err();
        assert!(e.contains("`x` is not a device number"), "{e}");
    }
}
