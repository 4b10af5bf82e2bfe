//! Run the checks on a model type in the user's own crate: `mldebug check overfit --model crate::Net`.
//!
//! The pipeline, one module per step:
//! 1. [`model_path`]: parse `--model` strictly (it is pasted into generated code);
//! 2. [`locate`]: find the package (`cargo metadata`) whose library holds the model;
//! 3. [`generate`]: take the harness folder's lock ([`workdir`]) and write a one-line harness
//!    crate under `<target>/mldebug/harness/`;
//! 4. [`compile`]: build it into the user's own target dir, and [`classify`] what failed;
//! 5. [`child`]: run it as a child process with a timeout and read its JSON report back, after
//!    checking that the binary announced this run's model ([`identity`]).
//!
//! The lock is held from step 3 until the report is read: a second run on the same crate waits.
//!
//! The result is a [`Report`], rendered by `mldebug check` exactly like a zoo model's.

pub mod batch_file;
pub mod child;
pub mod classify;
pub mod compile;
pub mod generate;
pub mod identity;
pub mod locate;
pub mod model_path;
pub mod own_model;
pub mod own_settings;
pub mod profile;
pub mod source_scan;
pub mod workdir;

use crate::context::Context;
use crate::{Error, Result};
use mldebug_diagnostics::harness::Request;
use mldebug_diagnostics::plan::{Plan, DEFAULT_STEPS};
use mldebug_diagnostics::Report;
use mldebug_memory::measured::ModelEstimate;
use own_settings::OwnModelSettings;
use std::path::PathBuf;
use std::time::Duration;

/// How long past `--timeout` a harness gets to stop on its own (its checks look at the deadline
/// between steps and write a report naming the one that was stopped) before it is killed.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(5);

/// How to build the user's crate (from `mldebug check`'s "Your crate" flags).
#[derive(Debug, Clone, Default)]
pub struct BuildSettings {
    /// Features of the user's package to turn on, as typed (comma- or space-separated).
    pub features: Vec<String>,
    /// Build with the dev profile.
    pub debug: bool,
    /// Build with the release profile (neither: the profile the crate was last built with).
    pub release: bool,
    /// Pass `--offline` to cargo.
    pub offline: bool,
    /// The Cargo.toml of the user's crate or workspace (else the nearest above the current directory).
    pub manifest_path: Option<PathBuf>,
    /// The workspace member that holds the model.
    pub package: Option<String>,
}

/// What to run, as `mldebug check` parsed it.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The `--model` argument as typed.
    pub model: String,
    /// The checks, seeds, steps, device and time limit; the limit is each seed's, the build
    /// not counted.
    pub plan: Plan,
    /// The other flags that find, build and feed the model (`--forward ..`, `--features ..`),
    /// one word each: the report's suggested commands repeat them.
    pub flags: Vec<String>,
}

/// Locate the user's crate, generate and build the harness, run it once per seed of the plan,
/// and return its reports in the plan's order.
pub fn run_check(
    run: &RunSettings,
    build: &BuildSettings,
    own: &OwnModelSettings,
    g: &Context,
) -> Result<Vec<Report>> {
    let built = build_harness(&run.model, build, own, g)?;
    let mut reports = Vec::with_capacity(run.plan.seeds.len());
    for &seed in &run.plan.seeds {
        let request = Request::new(&run.model, &run.plan, seed, run.flags.clone());
        let mut report = child::run(&built.run_plan(&request, run.plan.timeout, g))?;
        if let Some(dir) = built.user.manifest_path.parent() {
            source_scan::annotate(&mut report, dir);
        }
        reports.push(report);
    }
    Ok(reports)
}

/// `mldebug memory --model crate::Net`: build the harness as `check` does and have it estimate
/// the model's memory on its own batch (seed 0, CPU, f32) without training it.
pub fn estimate_memory(
    model: &str,
    build: &BuildSettings,
    own: &OwnModelSettings,
    timeout: Duration,
    g: &Context,
) -> Result<ModelEstimate> {
    let built = build_harness(model, build, own, g)?;
    let plan = Plan {
        checks: Vec::new(),
        seeds: vec![0],
        steps: DEFAULT_STEPS,
        device: "cpu".into(),
        timeout,
    };
    let request = Request {
        // Nothing trains: no step count is asked for.
        steps: None,
        estimate_memory: true,
        ..Request::new(model, &plan, 0, Vec::new())
    };
    child::run_estimate(&built.run_plan(&request, timeout, g))
}

/// A built harness, locked for this run (its lock is released when this is dropped, after
/// the report is read).
struct Built {
    exe: PathBuf,
    harness: generate::Harness,
    user: locate::UserCrate,
}

impl Built {
    fn run_plan<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
        g: &Context,
    ) -> child::RunPlan<'a> {
        child::RunPlan {
            exe: &self.exe,
            request,
            report_path: workdir::report_path(&self.harness.dir),
            identity: &self.harness.identity,
            cwd: &self.user.workspace_root,
            timeout,
            progress: g.stderr.terminal && !g.json() && !request.estimate_memory,
        }
    }
}

/// Steps 1 to 4: find the model's crate, write the harness and build it.
fn build_harness(
    typed: &str,
    build: &BuildSettings,
    own: &OwnModelSettings,
    g: &Context,
) -> Result<Built> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::internal(format!("no current directory: {e}")))?;
    let model = model_path::ModelPath::parse(typed)?;
    let manifest = locate::find_manifest(build.manifest_path.as_deref(), &cwd)?;
    let meta = locate::metadata(&manifest, build.offline)?;
    let user = locate::select(&meta, &manifest, &model, build.package.as_deref())?;

    let own = own_model_for(&user, own, &cwd)?;

    let model_type = model.in_crate(&user.lib);
    let features = split_features(&build.features);
    let harness = generate::generate(&generate::Spec {
        user: &user,
        model_type: &model_type,
        features: &features,
        own: own.as_ref(),
    })?;

    let plan = compile::BuildPlan {
        release: profile::release(build.debug, build.release, &user),
        offline: build.offline,
        echo: g.stderr.terminal && !g.json(),
        color: g.stderr.colour,
    };
    let exe = compile::build(&harness, &user, typed, &plan)?;
    Ok(Built { exe, harness, user })
}

/// How to wrap the model when its crate has no `DebugModel` impl: asked for by a flag, by
/// `mldebug.toml` beside the crate's Cargo.toml, or because the crate does not depend on
/// `mldebug-diagnostics` at all. `None`: the crate implements the trait itself.
fn own_model_for(
    user: &locate::UserCrate,
    flags: &OwnModelSettings,
    cwd: &std::path::Path,
) -> Result<Option<own_model::OwnModel>> {
    let dir = user.manifest_path.parent().unwrap_or(cwd);
    let file = own_settings::read_file_settings(dir)?;
    if !flags.any() && file.is_none() && user.has_diagnostics {
        return Ok(None);
    }
    let merged = flags.merged(file.as_ref().map(|f| (f, dir)), cwd);
    merged.resolve().map(Some)
}

/// `--features "a b" --features c,d` → `[a, b, c, d]`.
fn split_features(raw: &[String]) -> Vec<String> {
    raw.iter()
        .flat_map(|s| s.split([',', ' ']))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_split_like_cargo() {
        let raw = vec!["a b".to_string(), "c,d".to_string(), ",".to_string()];
        assert_eq!(split_features(&raw), ["a", "b", "c", "d"]);
    }
}
