//! What a detector reports: a symptom with a stable id (the id of the PLAYBOOK symptom row that
//! explains it), a severity, the step where it starts, and the numbers behind it.

use serde::Serialize;
use std::fmt;

/// The symptoms `doctor` recognises. The ids are a contract: scripts, the JSON output and the
/// PLAYBOOK rows hold on to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Symptom {
    /// The loss became NaN or infinite.
    LossNonfinite,
    /// The loss is exactly zero.
    LossZero,
    /// The loss does not move.
    LossStuck,
    /// The loss keeps rising.
    LossDiverging,
    /// The loss jumps far above its trend and comes back.
    LossSpikes,
    /// The evaluation loss rises while the training loss falls.
    Overfitting,
    /// The gradient norm jumps far above its usual size.
    GradNormExplosion,
    /// The learning rate's schedule looks unintended (no warm-up, a jump, stuck at zero).
    LrSchedule,
    /// Steps take markedly longer than before.
    ThroughputDrop,
    /// Memory keeps growing step after step.
    MemoryGrowth,
    /// Gradients carried from one optimizer step into the next (no `zero_grad`).
    GradsAccumulate,
    /// An optimizer step that leaves its tensors unchanged.
    StepChangesNothing,
    /// An optimizer step that moves a module group's weights by a large share of their norm.
    UpdateTooLarge,
    /// A gradient clip compared with gradients still multiplied by a GradScaler's scale.
    ClipBeforeUnscale,
    /// A parameter group with weight decay holds norm weights, biases or embeddings.
    DecayOnNorms,
    /// torch.optim.Adam with weight_decay: an L2 term scaled by Adam's denominator.
    AdamL2Decay,
    /// The loss is a sum over the batch: the step grows with the batch (or batch x tokens).
    LossSummed,
    /// Earlier steps' losses still alive with their graph (kept in a list undetached).
    LossGraphKept,
    /// An op in the loss's graph at the limit of its domain (log of 0, a division by 0, sqrt
    /// at 0, acos at 1): its value or its gradient is not finite.
    OpAtLimit,
    /// Memory of the first steps, stage by stage (forward, backward, optimizer step).
    MemoryStages,
    /// The optimizer holds tensors that are not the trained model's parameters.
    OptimizerNotModel,
    /// A weights load left parameters of the model at their initial values.
    WeightsPartlyLoaded,
    /// Parameters get gradients but no optimizer holds them.
    ParamsNotOptimized,
    /// Only a small share of the model trains, or LoRA wrapped no layer.
    MostlyFrozen,
    /// A peft adapter config was built but the model trained holds no adapter.
    AdapterNotApplied,
    /// Parameters in the optimizer got no gradient, or an all-zero one.
    NoGradient,
    /// (Nearly) every target is the ignore index.
    LabelsAllIgnored,
    /// Padded positions carry labels that are not ignored.
    PaddingLabelled,
    /// Labels already shifted, given to a model that shifts them again.
    LabelsShiftedTwice,
    /// Targets equal to the inputs of a model that does not shift them.
    LabelsNotShifted,
    /// A token id of the attended text ignored as a target wherever it occurs (pad = eos).
    TokenNeverSupervised,
    /// A large share of the rows have no supervised position.
    RowsUnsupervised,
    /// A token id past an embedding's rows, or a class target outside [0, C).
    IdsOutOfRange,
    /// Probabilities passed to a cross-entropy that applies its own softmax.
    SoftmaxBeforeLoss,
    /// The first loss far from ln C.
    InitLossOff,
    /// The loss, an activation or a gradient became NaN or infinite.
    Nonfinite,
    /// Training steps taken with the model in eval mode.
    TrainInEvalMode,
    /// Evaluation forwards with the model in training mode.
    EvalInTrainMode,
    /// A functional dropout still active in eval mode.
    DropoutInEval,
    /// BatchNorm running statistics changed during evaluation.
    BatchnormUpdatedInEval,
    /// Rows of another loader's dataset are also training rows.
    TrainEvalOverlap,
    /// The training loader yields the same order every epoch.
    SameOrderEveryEpoch,
    /// The same batch or rows yielded twice within an epoch.
    DuplicateBatches,
    /// Float inputs far from normalised.
    InputsNotNormalised,
    /// The classes the loader yields are heavily skewed.
    ClassImbalance,
    /// A large share of each step spent waiting for the data loader.
    DataWait,
    /// The program waits for the GPU (a host-device synchronisation) within every step.
    HostSyncs,
    /// The program ended without an optimizer step: nothing was observed.
    NoOptimizerStep,
    /// The program raised or exited with an error.
    RunError,
    /// A probe of `mldebug run` could not measure: what it measures is missing.
    ProbeError,
    /// Ranks received the same batches.
    RanksSameData,
    /// Parameters differ across ranks after a step.
    RanksDiverged,
    /// Gradients differ across ranks: not averaged.
    GradsNotAveraged,
    /// The model is wrapped for data parallelism on some ranks only.
    RanksUnwrapped,
    /// One rank is much slower than the others.
    RankStraggler,
    /// Ranks read the same samples within an epoch, or samples no rank reads.
    RanksSamplesOverlap,
    /// BatchNorm running statistics differ across ranks (no SyncBatchNorm).
    BatchnormNotSynced,
}

impl Symptom {
    /// Every symptom a run log can show, in the order findings are listed.
    pub const ALL: [Symptom; 10] = [
        Symptom::LossNonfinite,
        Symptom::LossZero,
        Symptom::LossStuck,
        Symptom::LossDiverging,
        Symptom::LossSpikes,
        Symptom::Overfitting,
        Symptom::GradNormExplosion,
        Symptom::LrSchedule,
        Symptom::ThroughputDrop,
        Symptom::MemoryGrowth,
    ];

    /// The symptoms only a run trace shows (`mldebug run`), in the order findings are listed.
    pub const TRACE: [Symptom; 47] = [
        Symptom::GradsAccumulate,
        Symptom::StepChangesNothing,
        Symptom::UpdateTooLarge,
        Symptom::ClipBeforeUnscale,
        Symptom::DecayOnNorms,
        Symptom::AdamL2Decay,
        Symptom::LossSummed,
        Symptom::LossGraphKept,
        Symptom::OpAtLimit,
        Symptom::OptimizerNotModel,
        Symptom::WeightsPartlyLoaded,
        Symptom::ParamsNotOptimized,
        Symptom::MostlyFrozen,
        Symptom::AdapterNotApplied,
        Symptom::NoGradient,
        Symptom::LabelsAllIgnored,
        Symptom::PaddingLabelled,
        Symptom::LabelsShiftedTwice,
        Symptom::LabelsNotShifted,
        Symptom::TokenNeverSupervised,
        Symptom::RowsUnsupervised,
        Symptom::IdsOutOfRange,
        Symptom::SoftmaxBeforeLoss,
        Symptom::InitLossOff,
        Symptom::Nonfinite,
        Symptom::TrainInEvalMode,
        Symptom::EvalInTrainMode,
        Symptom::DropoutInEval,
        Symptom::BatchnormUpdatedInEval,
        Symptom::TrainEvalOverlap,
        Symptom::SameOrderEveryEpoch,
        Symptom::DuplicateBatches,
        Symptom::InputsNotNormalised,
        Symptom::ClassImbalance,
        Symptom::DataWait,
        Symptom::HostSyncs,
        Symptom::MemoryStages,
        Symptom::NoOptimizerStep,
        Symptom::RunError,
        Symptom::ProbeError,
        Symptom::RanksSameData,
        Symptom::RanksDiverged,
        Symptom::GradsNotAveraged,
        Symptom::RanksUnwrapped,
        Symptom::RankStraggler,
        Symptom::RanksSamplesOverlap,
        Symptom::BatchnormNotSynced,
    ];

    /// The stable id, also the PLAYBOOK symptom row's `{#id}`.
    pub fn id(self) -> &'static str {
        match self {
            Symptom::LossNonfinite => "loss-nonfinite",
            Symptom::LossZero => "loss-zero",
            Symptom::LossStuck => "loss-stuck",
            Symptom::LossDiverging => "loss-diverging",
            Symptom::LossSpikes => "loss-spikes",
            Symptom::Overfitting => "overfitting",
            Symptom::GradNormExplosion => "grad-norm-explosion",
            Symptom::LrSchedule => "lr-schedule",
            Symptom::ThroughputDrop => "throughput-drop",
            Symptom::MemoryGrowth => "memory-growth",
            Symptom::GradsAccumulate => "grads-accumulate",
            Symptom::StepChangesNothing => "step-changes-nothing",
            Symptom::UpdateTooLarge => "update-too-large",
            Symptom::ClipBeforeUnscale => "clip-before-unscale",
            Symptom::DecayOnNorms => "decay-on-norms",
            Symptom::AdamL2Decay => "adam-l2-decay",
            Symptom::LossSummed => "loss-summed",
            Symptom::LossGraphKept => "loss-graph-kept",
            Symptom::OpAtLimit => "op-at-limit",
            Symptom::MemoryStages => "memory-stages",
            Symptom::OptimizerNotModel => "optimizer-not-model",
            Symptom::ParamsNotOptimized => "params-not-optimized",
            Symptom::MostlyFrozen => "mostly-frozen",
            Symptom::AdapterNotApplied => "adapter-not-applied",
            Symptom::NoGradient => "no-gradient",
            Symptom::LabelsAllIgnored => "labels-all-ignored",
            Symptom::PaddingLabelled => "padding-labelled",
            Symptom::LabelsShiftedTwice => "labels-shifted-twice",
            Symptom::LabelsNotShifted => "labels-not-shifted",
            Symptom::TokenNeverSupervised => "token-never-supervised",
            Symptom::WeightsPartlyLoaded => "weights-partly-loaded",
            Symptom::RowsUnsupervised => "rows-unsupervised",
            Symptom::IdsOutOfRange => "ids-out-of-range",
            Symptom::SoftmaxBeforeLoss => "softmax-before-loss",
            Symptom::InitLossOff => "init-loss-off",
            Symptom::Nonfinite => "nonfinite",
            Symptom::TrainInEvalMode => "train-in-eval-mode",
            Symptom::EvalInTrainMode => "eval-in-train-mode",
            Symptom::DropoutInEval => "dropout-in-eval",
            Symptom::BatchnormUpdatedInEval => "batchnorm-updated-in-eval",
            Symptom::TrainEvalOverlap => "train-eval-overlap",
            Symptom::SameOrderEveryEpoch => "same-order-every-epoch",
            Symptom::DuplicateBatches => "duplicate-batches",
            Symptom::InputsNotNormalised => "inputs-not-normalised",
            Symptom::ClassImbalance => "class-imbalance",
            Symptom::DataWait => "data-wait",
            Symptom::HostSyncs => "host-syncs",
            Symptom::NoOptimizerStep => "no-optimizer-step",
            Symptom::RunError => "run-error",
            Symptom::ProbeError => "probe-error",
            Symptom::RanksSameData => "ranks-same-data",
            Symptom::RanksDiverged => "ranks-diverged",
            Symptom::GradsNotAveraged => "grads-not-averaged",
            Symptom::RanksUnwrapped => "ranks-unwrapped",
            Symptom::RankStraggler => "rank-straggler",
            Symptom::RanksSamplesOverlap => "ranks-samples-overlap",
            Symptom::BatchnormNotSynced => "batchnorm-not-synced",
        }
    }

    /// The symptom with this id.
    pub fn from_id(id: &str) -> Option<Symptom> {
        Symptom::ALL
            .into_iter()
            .chain(Symptom::TRACE)
            .find(|s| s.id() == id)
    }
}

impl fmt::Display for Symptom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Symptom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// How bad a finding is: `fail` (the run is broken), `warn` (likely a problem, look),
/// `info` (worth knowing, often intended).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing, often intended.
    Info,
    /// Likely a problem: look.
    Warn,
    /// The run is broken.
    Fail,
}

impl Severity {
    /// `info`, `warn` or `fail`.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Fail => "fail",
        }
    }
}

/// One thing found in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The symptom id.
    pub symptom: Symptom,
    /// How bad it is.
    pub severity: Severity,
    /// The series it was found in.
    pub metric: String,
    /// The step where it starts.
    pub step: f64,
    /// One line a person reads.
    pub summary: String,
    /// The numbers behind it, by name (NaN where a number does not exist, written as `null`).
    #[serde(serialize_with = "numbers_as_map")]
    pub numbers: Vec<(&'static str, f64)>,
    /// Further steps worth marking on a plot (each spike, each restart), at most
    /// [`MAX_MARKS`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<f64>,
    /// Where in the user's code (`path:line`), when a run trace knows it.
    #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The ranks involved, for a finding of a distributed run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<u32>,
    /// Further lines a person reads (names, frames), at most [`MAX_DETAILS`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// Hypotheses of the symptom's PLAYBOOK row that what was measured rules out, each named
    /// by a phrase of its text (`num_workers=0` for a loader that has workers): the report
    /// leaves them out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ruled_out: Vec<String>,
}

/// `[("a", 1.0)]` written as the JSON object `{"a": 1.0}`, in the detector's order.
fn numbers_as_map<S: serde::Serializer>(
    numbers: &[(&'static str, f64)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(numbers.len()))?;
    for (k, v) in numbers {
        m.serialize_entry(k, &v.is_finite().then_some(*v))?;
    }
    m.end()
}

/// The most extra steps a finding carries for a plot.
pub const MAX_MARKS: usize = 50;

/// The most detail lines a finding carries (names of parameters, frames).
pub const MAX_DETAILS: usize = 12;

impl Finding {
    /// A finding of `symptom` in `metric` from `step`, with no words or numbers yet.
    pub fn new(symptom: Symptom, severity: Severity, metric: &str, step: f64) -> Finding {
        Finding {
            symptom,
            severity,
            metric: metric.to_string(),
            step,
            summary: String::new(),
            numbers: Vec::new(),
            marks: Vec::new(),
            location: None,
            ranks: Vec::new(),
            details: Vec::new(),
            ruled_out: Vec::new(),
        }
    }

    /// Sets where in the user's code it happens.
    pub fn at(mut self, location: Option<String>) -> Finding {
        self.location = location;
        self
    }

    /// Sets the ranks involved.
    pub fn ranks(mut self, ranks: impl IntoIterator<Item = u32>) -> Finding {
        self.ranks = ranks.into_iter().collect();
        self.ranks.sort_unstable();
        self.ranks.dedup();
        self
    }

    /// Rules out the PLAYBOOK row's hypotheses whose text holds `phrase`.
    pub fn rules_out(mut self, phrase: &str) -> Finding {
        self.ruled_out.push(phrase.to_string());
        self
    }

    /// Adds lines a person reads below the summary (at most [`MAX_DETAILS`] in all).
    pub fn details(mut self, lines: impl IntoIterator<Item = String>) -> Finding {
        let room = MAX_DETAILS.saturating_sub(self.details.len());
        self.details.extend(lines.into_iter().take(room));
        self
    }

    /// Sets the line a person reads.
    pub fn summary(mut self, text: String) -> Finding {
        self.summary = text;
        self
    }

    /// Adds a number behind the finding.
    pub fn number(mut self, name: &'static str, value: f64) -> Finding {
        self.numbers.push((name, value));
        self
    }

    /// Sets the further steps to mark on a plot (at most [`MAX_MARKS`]).
    pub fn marks(mut self, steps: impl IntoIterator<Item = f64>) -> Finding {
        self.marks = steps.into_iter().take(MAX_MARKS).collect();
        self
    }

    /// A number by name.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.numbers.iter().find(|(n, _)| *n == name).map(|p| p.1)
    }

    /// What identifies a finding across polls of a growing run: its symptom and its series.
    pub fn key(&self) -> (Symptom, String) {
        (self.symptom, self.metric.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for s in Symptom::ALL.into_iter().chain(Symptom::TRACE) {
            assert_eq!(Symptom::from_id(s.id()), Some(s));
        }
        let ids: std::collections::BTreeSet<_> = Symptom::ALL
            .into_iter()
            .chain(Symptom::TRACE)
            .map(Symptom::id)
            .collect();
        assert_eq!(ids.len(), Symptom::ALL.len() + Symptom::TRACE.len());
        assert_eq!(Symptom::from_id("nope"), None);
    }
}
