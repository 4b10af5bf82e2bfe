//! `mldebug check <id|all> --model <path>`: zoo models (`zoo::<name>`) run in this process; any
//! other path (`crate::Net`, `mycrate::models::Net`) goes through the harness that builds the
//! user's crate (see `run_crate_model`).

mod flags;

use super::zoo;
use crate::context::Context;
use crate::render::output::{emit, emit_json, note};
use crate::render::plot_target::PlotTarget;
use crate::render::{plot, progress, report as render_report, style::Style};
use crate::{Error, Exit, Result};
use mldebug_diagnostics::options::Deadline;
use mldebug_diagnostics::plan::{self, Plan, Seeds, DEFAULT_STEPS, DEFAULT_TIMEOUT_S};
use mldebug_diagnostics::{candle_core::Device, CheckId, Options, Report, Status};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// A check id (init-loss, overfit, grad-flow, nan-trace, label-mask, batch-leak,
    /// class-balance, memory) or `all`.
    pub check: CheckSelection,
    /// `zoo::<name>` for a built-in model (`mldebug zoo` lists them), or a type path in your
    /// crate (`crate::Net`).
    #[arg(long, required_unless_present = "torch", conflicts_with = "torch")]
    pub model: Option<String>,
    #[command(flatten)]
    pub torch: TorchArgs,
    #[command(flatten)]
    pub own: super::own_model::OwnModelArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Stop the checks after this many seconds, 1 to 86400 (for a model in your crate the
    /// build is not counted). A check stopped this way is an `error` (exit 4).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_S, value_parser = plan::parse_timeout_s)]
    pub timeout: u64,
    #[command(flatten)]
    pub build: BuildArgs,
    /// Also draw SVG plots of the curves behind the verdicts (overfit loss, per-parameter
    /// gradient norms, the memory timeline and layer outputs): into a folder, or beside FILE.svg
    /// under each plot's name.
    #[arg(long, value_name = "DIR|FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Keep the curves behind the verdicts (every point the plots draw) in the --json report;
    /// without it they are left out, so the report stays short enough to read whole.
    #[arg(long)]
    pub series: bool,
    /// Run every check once per seed: `0-4`, `1,5,9` or both (`0-2,7`), at most 100 seeds.
    /// Each seed's report, then per check the seeds that passed, warned or failed: a verdict
    /// that holds on one seed only is luck. A PyTorch model is started once for all of them;
    /// --timeout applies to each seed.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["seed", "plot"], value_parser = plan::parse_seeds)]
    pub seeds: Option<Seeds>,
}

impl Args {
    /// What the flags ask for: the checks, `--seeds` (else `--seed`), `--steps`, `--device`
    /// and `--timeout`.
    pub fn plan(&self) -> Plan {
        let seeds = match &self.seeds {
            Some(seeds) => seeds.0.clone(),
            None => vec![self.run.seed],
        };
        self.run.plan(
            self.check.0.clone(),
            seeds,
            Duration::from_secs(self.timeout),
        )
    }
}

/// Where and how the checks run; shared by `check` and `demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// `cpu`, or `cuda` / `cuda:N` (needs mldebug built with `--features cuda`).
    #[arg(long, default_value = "cpu", value_name = "cpu|cuda[:N]")]
    pub device: DeviceSpec,
    /// Seeds the parameter init and the batch: the same seed gives the same verdicts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Optimizer steps for the checks that train (overfit), 1 to 100000.
    #[arg(long, default_value_t = DEFAULT_STEPS, value_parser = plan::parse_steps)]
    pub steps: usize,
}

impl RunArgs {
    /// The check options for a model shown as `model_label` in the report and `next` commands.
    pub fn options(&self, model_label: &str) -> Result<Options> {
        Ok(Options {
            device: self.device.device()?,
            seed: self.seed,
            steps: self.steps,
            model_label: model_label.to_string(),
            ..Options::default()
        })
    }

    /// The plan of `checks` on `seeds` with these flags' steps and device, each seed stopped
    /// after `timeout`.
    pub fn plan(&self, checks: Vec<CheckId>, seeds: Vec<u64>, timeout: Duration) -> Plan {
        Plan {
            checks,
            seeds,
            steps: self.steps,
            device: self.device.name(),
            timeout,
        }
    }
}

/// The checks to run: one id, or every check for `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSelection(pub Vec<CheckId>);

impl FromStr for CheckSelection {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "all" {
            Ok(CheckSelection(CheckId::ALL.to_vec()))
        } else {
            Ok(CheckSelection(vec![s.parse()?]))
        }
    }
}

/// `--device`: where the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    Cpu,
    Cuda(usize),
}

impl FromStr for DeviceSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(DeviceSpec::Cpu),
            "cuda" => Ok(DeviceSpec::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceSpec::Cuda)
                .ok_or_else(|| format!("unknown device `{s}`; use cpu, cuda or cuda:N")),
        }
    }
}

impl DeviceSpec {
    /// `cpu`, `cuda:0`: how the report and the torch driver name it.
    pub fn name(self) -> String {
        match self {
            DeviceSpec::Cpu => "cpu".to_string(),
            DeviceSpec::Cuda(n) => format!("cuda:{n}"),
        }
    }

    /// Open the device. Asking for CUDA from a build without it is a usage error (exit 2).
    pub fn device(self) -> Result<Device> {
        match self {
            DeviceSpec::Cpu => Ok(Device::Cpu),
            DeviceSpec::Cuda(n) if cfg!(feature = "cuda") => Device::new_cuda(n)
                .map_err(|e| Error::usage(format!("--device cuda:{n}: cannot open it: {e}"))),
            DeviceSpec::Cuda(n) => Err(Error::usage(format!(
                "--device cuda:{n}: this mldebug was built without CUDA; rebuild it with \
                 `--features cuda` (needs the CUDA toolkit), or use --device cpu"
            ))),
        }
    }
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    flags::refuse_inapplicable(&args)?;
    let plan = args.plan();
    let reports = measure(&args, &plan, g)?;
    if args.seeds.is_some() {
        return show_seeds(reports, &args, g);
    }
    let report = reports
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("a run of one seed gave no report"))?;
    show_one(report, &args, g)
}

/// Runs `plan` on the model the flags name: one report per seed, in the plan's order.
fn measure(args: &Args, plan: &Plan, g: &Context) -> Result<Vec<Report>> {
    match (&args.model, &args.torch.torch) {
        (_, Some(spec)) => Ok(run_torch_model(spec, plan, &args.torch, g)?.reports),
        (Some(model), None) => match model.strip_prefix("zoo::") {
            Some(name) => plan
                .seeds
                .iter()
                .map(|&seed| run_zoo_model(name, model, plan, seed, args.run.device))
                .collect(),
            None => run_crate_model(model, plan, args, g),
        },
        (None, None) => Err(Error::usage("give --model or --torch")),
    }
}

/// `check` without `--seeds`: the one report, and its plots with `--plot`.
fn show_one(mut report: Report, args: &Args, g: &Context) -> Result<Exit> {
    let plots = match &args.plot {
        Some(path) => plot::write_plots(&report, &PlotTarget::new(path))?,
        None => Vec::new(),
    };
    if args.plot.is_some() && plots.is_empty() {
        note(
            "note: nothing to plot; the curves come from the overfit, grad-flow and memory checks",
        );
    }
    if g.json() {
        if !args.series {
            drop_series(&mut report);
        }
        // The same JSON as a harness writes (non-finite numbers as "NaN", "inf", "-inf").
        let text = mldebug_diagnostics::harness::report_to_json(&report)
            .map_err(|e| Error::internal(format!("writing the report as JSON: {e}")))?;
        emit_json(&text)?;
        for p in &plots {
            note(&format!("wrote {}", p.display()));
        }
    } else {
        let style = Style::from(g.stdout);
        let mut text = render_report::render(&report, &style);
        for p in &plots {
            text.push_str(&format!("plot: {}\n", p.display()));
        }
        emit(&text, style.colour)?;
    }
    Ok(exit_for(&report))
}

/// `check --seeds`: each seed's report, then how each check came out over the seeds. The exit
/// code is that of every finding together.
fn show_seeds(reports: Vec<Report>, args: &Args, g: &Context) -> Result<Exit> {
    let mut doc = mldebug_report::SeedsReport::new(reports);
    if g.json() {
        if !args.series {
            doc.reports.iter_mut().for_each(drop_series);
        }
        let text = mldebug_report::envelope::to_json("check", &doc)
            .map_err(|e| Error::internal(format!("writing the report as JSON: {e}")))?;
        emit_json(&text)?;
    } else {
        let style = Style::from(g.stdout);
        emit(
            &crate::render::seeds::render_seeds(&doc, &style),
            style.colour,
        )?;
    }
    Ok(exit_for_findings(doc.findings()))
}

/// The curves behind the verdicts left out of a `--json` report (kept with `--series`).
fn drop_series(report: &mut Report) {
    report.checks.iter_mut().for_each(|f| f.series.clear());
}

/// 4 when a check could not run (the model errored), else 1 when one failed, else 0.
pub fn exit_for(report: &Report) -> Exit {
    exit_for_findings(report.checks.iter())
}

/// [`exit_for`] over any findings.
fn exit_for_findings<'a>(findings: impl Iterator<Item = &'a mldebug_report::Finding>) -> Exit {
    let (mut error, mut fail) = (false, false);
    for f in findings {
        error |= f.status == Status::Error;
        fail |= f.status == Status::Fail;
    }
    if error {
        Exit::ModelError
    } else if fail {
        Exit::Failed
    } else {
        Exit::Ok
    }
}

/// A zoo model, in this process, on one seed of `plan`.
fn run_zoo_model(
    name: &str,
    label: &str,
    plan: &Plan,
    seed: u64,
    device: DeviceSpec,
) -> Result<Report> {
    let model = zoo::lookup(name)?;
    let device = device.device()?;
    let bar = progress::CheckProgress::on_terminal();
    let opts = Options {
        device,
        seed,
        steps: plan.steps,
        model_label: label.to_string(),
        // The checks look at the deadline between steps: a run past it ends as an `error` finding.
        deadline: Some(Deadline::after(plan.timeout)),
        progress: bar.as_ref().map(|b| b.callback()),
        ..Options::default()
    };
    let report = (model.run)(&plan.checks, &opts);
    if let Some(b) = bar {
        b.finish();
    }
    Ok(report)
}

/// A model in the user's crate: generate, build and run the harness once per seed (see
/// `crate::harness`).
fn run_crate_model(model: &str, plan: &Plan, args: &Args, g: &Context) -> Result<Vec<Report>> {
    let settings = crate::harness::RunSettings {
        model: model.to_string(),
        plan: plan.clone(),
        flags: [args.own.words(), args.build.words()].concat(),
    };
    crate::harness::run_check(&settings, &args.build.settings(), &args.own.settings(), g)
}

/// A PyTorch model: the embedded driver measures, the one judgement decides (see `crate::torch`).
/// One driver process for every seed; a report per seed.
fn run_torch_model(
    spec: &str,
    plan: &Plan,
    torch: &TorchArgs,
    g: &Context,
) -> Result<crate::torch::Judged> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("the current directory", &e))?;
    let settings = crate::torch::TorchSettings {
        spec: spec.to_string(),
        target: crate::torch::target::Target::parse(spec, &cwd)?,
        lora: torch
            .lora
            .as_deref()
            .map(crate::torch::target::Lora::parse)
            .transpose()?,
        lora_spec: torch.lora.clone(),
        python: torch.python.clone(),
        plan: plan.clone(),
        learning_rate: mldebug_diagnostics::options::DEFAULT_LEARNING_RATE,
        progress: g.stderr.terminal && !g.json(),
        threads: None,
    };
    let judged = crate::torch::run_check(&settings)?;
    if let Some(hello) = &judged.hello {
        note(&format!("torch: {}", crate::torch::describe(hello)));
    }
    Ok(judged)
}

/// `--torch` and its companions: run the checks on a PyTorch model with your own Python.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TorchArgs {
    /// A PyTorch model: `FILE.py:NAME` (an object with `build()` and `batch(seed, device)`,
    /// see torch/mldebug_model.py), or `hf:DIR_OR_CONFIG_JSON` (a Hugging Face causal LM built
    /// from its config with random weights, offline).
    #[arg(long, value_name = "FILE.py:NAME|hf:DIR", help_heading = "PyTorch")]
    pub torch: Option<String>,
    /// The Python interpreter to run it with (default: $MLDEBUG_PYTHON, the active
    /// virtualenv's, or python3).
    #[arg(
        long,
        value_name = "PATH",
        requires = "torch",
        help_heading = "PyTorch"
    )]
    pub python: Option<PathBuf>,
    /// Wrap the model in LoRA adapters with peft: `r=16,alpha=32,targets=q_proj,v_proj`.
    #[arg(
        long,
        value_name = "SPEC",
        requires = "torch",
        help_heading = "PyTorch"
    )]
    pub lora: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_selects_every_check_in_order() {
        assert_eq!("all".parse::<CheckSelection>().unwrap().0, CheckId::ALL);
        assert_eq!(
            "overfit".parse::<CheckSelection>().unwrap().0,
            vec![CheckId::Overfit]
        );
        let err = "overfitt".parse::<CheckSelection>().unwrap_err();
        assert!(err.contains("unknown check `overfitt`"), "{err}");
    }

    #[test]
    fn devices_parse() {
        assert_eq!("cpu".parse(), Ok(DeviceSpec::Cpu));
        assert_eq!("cuda".parse(), Ok(DeviceSpec::Cuda(0)));
        assert_eq!("cuda:1".parse(), Ok(DeviceSpec::Cuda(1)));
        assert!("gpu".parse::<DeviceSpec>().is_err());
        assert!("cuda:x".parse::<DeviceSpec>().is_err());
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_without_the_feature_is_a_usage_error() {
        let err = DeviceSpec::Cuda(0).device().unwrap_err();
        assert_eq!(err.exit(), Exit::Usage);
        assert!(err.message.contains("--features cuda"), "{}", err.message);
    }
}

/// How to build and run a model from the user's crate (ignored for `zoo::` models).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BuildArgs {
    /// Features of your package to turn on (comma- or space-separated), as for cargo.
    #[arg(long, value_name = "FEATURES", help_heading = "Your crate")]
    pub features: Vec<String>,
    /// Build with the release profile. Default: the profile your crate was last built with
    /// (reusing that build), else release (candle is very slow unoptimised).
    #[arg(long, overrides_with = "debug", help_heading = "Your crate")]
    pub release: bool,
    /// Build with the dev profile instead: quicker to compile, slower to run.
    #[arg(long, overrides_with = "release", help_heading = "Your crate")]
    pub debug: bool,
    /// Do not touch the network (passed to cargo).
    #[arg(long, help_heading = "Your crate")]
    pub offline: bool,
    /// The Cargo.toml of your crate or workspace (default: the nearest one above the current
    /// directory).
    #[arg(long, value_name = "PATH", help_heading = "Your crate")]
    pub manifest_path: Option<PathBuf>,
    /// The workspace member that holds the model (default: the one you are in).
    #[arg(short = 'p', long, value_name = "NAME", help_heading = "Your crate")]
    pub package: Option<String>,
}

impl BuildArgs {
    /// These flags as typed, one word each: the report's suggested commands repeat them, so
    /// they find and build the same crate.
    pub(crate) fn words(&self) -> Vec<String> {
        let mut w = Vec::new();
        for f in &self.features {
            w.extend(["--features".to_string(), f.clone()]);
        }
        let switches = [
            (self.release, "--release"),
            (self.debug, "--debug"),
            (self.offline, "--offline"),
        ];
        w.extend(switches.iter().filter(|s| s.0).map(|s| s.1.to_string()));
        if let Some(p) = &self.manifest_path {
            w.extend(["--manifest-path".into(), p.to_string_lossy().into_owned()]);
        }
        if let Some(p) = &self.package {
            w.extend(["--package".to_string(), p.clone()]);
        }
        w
    }

    /// The settings the harness builds with.
    pub(crate) fn settings(&self) -> crate::harness::BuildSettings {
        crate::harness::BuildSettings {
            features: self.features.clone(),
            debug: self.debug,
            release: self.release,
            offline: self.offline,
            manifest_path: self.manifest_path.clone(),
            package: self.package.clone(),
        }
    }
}
