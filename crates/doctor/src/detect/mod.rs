//! The detectors, one file per symptom, and [`diagnose`], which runs them over one run.
//!
//! Each detector reads the series of its role (see [`crate::names`]) and the findings of the
//! detectors before it (the learning-rate detector asks whether the loss misbehaved early; the
//! grad-norm detector whether a loss spike followed a jump), and pushes findings. Thresholds are
//! named constants in the detector's file, each with its reason.

mod diverging;
mod grad_norm;
mod lr_schedule;
mod memory;
mod nonfinite;
mod overfitting;
mod spikes;
mod stuck;
mod throughput;
mod zero;

use crate::finding::{Finding, Severity};
use crate::history::{RunHistory, Series};
use crate::names::Role;
use crate::robust::Trend;
use serde::Serialize;

/// A curve needs at least this many finite points to be judged by its shape (stuck, diverging,
/// spikes, drops, growth): a start, a middle and an end of at least two points each, and a
/// few to spare for the running median. Non-finite and zero losses are judged from one point.
pub const MIN_POINTS: usize = 8;

/// What to diagnose.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Judge these series as the losses instead of the ones recognised by name.
    pub metrics: Vec<String>,
}

/// One run's diagnosis: its findings, worst first, and the series each role was read from.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    /// What was found, worst first.
    pub findings: Vec<Finding>,
    /// The series judged, with their roles.
    pub judged: Vec<Judged>,
}

/// A series and the role it was judged in.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// The series' name, as logged.
    pub metric: String,
    /// What it measures.
    pub role: Role,
    /// How many points it has.
    pub points: usize,
}

/// What every detector reads.
pub(crate) struct Context<'a> {
    pub run: &'a RunHistory,
    /// The training loss judged, and its trend (when it has [`MIN_POINTS`] finite points).
    pub train: Option<(&'a Series, Option<Trend>)>,
    pub evals: Vec<&'a Series>,
    pub lr: Option<&'a Series>,
    pub grad: Option<&'a Series>,
    pub epoch: Option<&'a Series>,
}

impl<'a> Context<'a> {
    fn new(run: &'a RunHistory) -> Context<'a> {
        let train = run
            .primary_train_loss()
            .map(|s| (s, Trend::of(&s.points, MIN_POINTS)));
        Context {
            run,
            train,
            evals: run
                .of_role(Role::EvalLoss)
                .filter(|s| s.points.iter().any(|p| p.1.is_finite()))
                .collect(),
            lr: run.main_of_role(Role::LearningRate),
            grad: run.main_of_role(Role::GradNorm),
            epoch: run.main_of_role(Role::Epoch),
        }
    }

    /// The training loss judged and its trend, when it has one.
    pub fn train_trend(&self) -> Option<(&'a Series, &Trend)> {
        match &self.train {
            Some((s, Some(t))) => Some((s, t)),
            _ => None,
        }
    }

    /// Every loss: the training loss judged, then the validation losses.
    pub fn losses(&self) -> impl Iterator<Item = &'a Series> + '_ {
        self.train
            .iter()
            .map(|(s, _)| *s)
            .chain(self.evals.iter().copied())
    }

    /// Steps per epoch, from a logged `epoch` series (HF, Lightning): the step count over the
    /// epochs it spans.
    pub fn steps_per_epoch(&self) -> Option<f64> {
        let e = self.epoch?;
        let fin: Vec<&(f64, f64)> = e.points.iter().filter(|p| p.1.is_finite()).collect();
        let (first, last) = (fin.first()?, fin.last()?);
        let (ds, de) = (last.0 - first.0, last.1 - first.1);
        (de > 0.0 && ds > 0.0).then(|| ds / de)
    }
}

/// The last finite point strictly before `step`.
pub(crate) fn before(points: &[(f64, f64)], step: f64) -> Option<(f64, f64)> {
    let end = points.partition_point(|p| p.0 < step);
    points[..end]
        .iter()
        .rev()
        .find(|p| p.1.is_finite())
        .copied()
}

/// Runs every detector over one run.
pub fn diagnose(run: &RunHistory, opts: &Options) -> Diagnosis {
    let forced;
    let run = if opts.metrics.is_empty() {
        run
    } else {
        forced = run.clone().with_losses(&opts.metrics);
        &forced
    };
    let cx = Context::new(run);
    let mut out = Vec::new();
    nonfinite::detect(&cx, &mut out);
    zero::detect(&cx, &mut out);
    stuck::detect(&cx, &mut out);
    diverging::detect(&cx, &mut out);
    spikes::detect(&cx, &mut out);
    overfitting::detect(&cx, &mut out);
    grad_norm::detect(&cx, &mut out);
    lr_schedule::detect(&cx, &mut out);
    throughput::detect(&cx, &mut out);
    memory::detect(&cx, &mut out);
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.step.total_cmp(&b.step))
            .then(a.symptom.cmp(&b.symptom))
    });
    Diagnosis {
        findings: out,
        judged: judged(&cx),
    }
}

fn judged(cx: &Context) -> Vec<Judged> {
    let mut out: Vec<Judged> = Vec::new();
    let mut add = |s: &Series, role: Role| {
        if !out.iter().any(|j| j.metric == s.name) {
            out.push(Judged {
                metric: s.name.clone(),
                role,
                points: s.points.len(),
            });
        }
    };
    if let Some((s, _)) = &cx.train {
        add(s, Role::TrainLoss);
    }
    for s in &cx.evals {
        add(s, Role::EvalLoss);
    }
    for (s, role) in [(cx.lr, Role::LearningRate), (cx.grad, Role::GradNorm)] {
        if let Some(s) = s {
            add(s, role);
        }
    }
    for role in [Role::Throughput, Role::StepTime, Role::Memory] {
        // A run's one summary number (the HF Trainer's final train_samples_per_second) is
        // not a series to judge.
        for s in cx
            .run
            .of_role(role)
            .filter(|s| s.points.len() >= MIN_POINTS)
        {
            add(s, role);
        }
    }
    out
}

/// The worst severity among findings, if any.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
