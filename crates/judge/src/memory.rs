//! `memory`: does memory keep growing from step to step, and does each stage cost what the
//! napkin math says?
//!
//! The judgement itself lives with the napkin math in `mldebug-memory` (`judge`); this module
//! turns its verdict into a finding with the timeline and per-layer series for plots.

use crate::common::Ctx;
use mldebug_memory::judge::judge as judge_memory;
use mldebug_memory::measured::{Measurement as Run, StageEstimate};
use mldebug_report::{CheckId, Finding, Series};
use serde::{Deserialize, Serialize};

const ID: CheckId = CheckId::Memory;

/// A measured run, the estimate of its stages when one was made, and the bytes the autograd
/// graph holds (candle).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measurement {
    /// The measured stages and steps.
    #[serde(flatten)]
    pub run: Run,
    /// The estimate of each stage, when the framework makes one (candle does).
    #[serde(default)]
    pub estimate: Option<StageEstimate>,
    /// Bytes the autograd graph keeps after a forward pass (candle).
    #[serde(default)]
    pub graph_bytes: Option<f64>,
}

/// The verdict: growth after step 2, a second-batch spike, an avoidable intermediate.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    let v = judge_memory(&m.run, m.estimate.as_ref());
    let mut f = Finding::new(ID, v.status, v.summary).next(ctx.next_for(ID, v.status));
    for (k, x) in v.metrics {
        f = f.metric(&k, x);
    }
    if let Some(g) = m.graph_bytes {
        f = f.metric("graph_bytes", g);
    }
    f.details = v.details;
    f.series = series(&m.run);
    f
}

fn series(m: &Run) -> Vec<Series> {
    let mut timeline = vec![[0.0, m.load]];
    for (i, s) in m.steps.iter().enumerate() {
        let x = (i + 1) as f64;
        timeline.extend([
            [x, s.forward],
            [x + 0.25, s.backward],
            [x + 0.5, s.optimizer_step],
            [x + 0.75, s.end],
        ]);
    }
    let mut out = vec![Series {
        name: "timeline".into(),
        x_label: "step (+0 forward, +0.25 backward, +0.5 optimizer step, +0.75 after)".into(),
        y_label: "bytes".into(),
        points: timeline,
        labels: Vec::new(),
    }];
    if !m.modules.is_empty() {
        out.push(Series {
            name: "layer_outputs".into(),
            x_label: "layer".into(),
            y_label: "output bytes".into(),
            points: m
                .modules
                .iter()
                .enumerate()
                .map(|(i, x)| [i as f64, x.bytes])
                .collect(),
            labels: m.modules.iter().map(|x| x.module.clone()).collect(),
        });
    }
    out
}
