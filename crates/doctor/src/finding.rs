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
}

impl Symptom {
    /// Every symptom, in the order findings are listed.
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
        }
    }

    /// The symptom with this id.
    pub fn from_id(id: &str) -> Option<Symptom> {
        Symptom::ALL.into_iter().find(|s| s.id() == id)
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
        }
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
        for s in Symptom::ALL {
            assert_eq!(Symptom::from_id(s.id()), Some(s));
        }
        assert_eq!(Symptom::from_id("nope"), None);
    }
}
