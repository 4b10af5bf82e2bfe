//! From the text of one or more trace files to processes: each `start` line opens a process,
//! the records after it belong to it. Lines are bounded, a line that is not a record is an
//! error naming its line number, and records of kinds this reader does not know are skipped.

use super::records::{self, Record, TRACE_VERSION};
use std::fmt;

/// The longest trace line read (a `grads` record of a large model is well under).
pub const MAX_LINE: usize = 4 << 20;

/// The records of one process, by kind, in the order written.
#[derive(Debug, Clone, Default)]
pub struct Process {
    /// Its `start` record.
    pub start: records::Start,
    /// Root modules.
    pub models: Vec<records::Model>,
    /// Optimizers.
    pub optimizers: Vec<records::Optimizer>,
    /// Optimizer steps.
    pub steps: Vec<records::Step>,
    /// Which light steps were measured; `None` when every step was (or the process ended
    /// before the decision).
    pub cadence: Option<records::Cadence>,
    /// Gradient statistics on heavy steps.
    pub grads: Vec<records::Grads>,
    /// peft configs built and the models' adapter modules.
    pub adapters: Vec<records::Adapters>,
    /// Loss function calls on early steps.
    pub loss_calls: Vec<records::LossCall>,
    /// Labels against inputs on early steps.
    pub labels: Vec<records::Labels>,
    /// Ids or targets out of range.
    pub out_of_range: Vec<records::OutOfRange>,
    /// Mode events.
    pub modes: Vec<records::Mode>,
    /// Non-finite values.
    pub nonfinite: Vec<records::Nonfinite>,
    /// Walks of a loss's graph for ops at their limit.
    pub saturation: Vec<records::Saturation>,
    /// DataLoaders.
    pub loaders: Vec<records::Loader>,
    /// Passes over the loaders.
    pub epochs: Vec<records::Epoch>,
    /// Rows shared between loaders.
    pub overlaps: Vec<records::Overlap>,
    /// BatchNorm running statistics on heavy steps (distributed runs).
    pub batchnorms: Vec<records::Batchnorm>,
    /// Weights loads (`load_state_dict`, `from_pretrained`).
    pub loads: Vec<records::Load>,
    /// Optimizers about to step over parameters a load left at init.
    pub loads_trained: Vec<records::LoadTrained>,
    /// Its `end` record; `None` when it was killed before writing one.
    pub end: Option<records::End>,
}

impl Process {
    /// `rank 1` under a launcher, else `pid 1234`.
    pub fn label(&self) -> String {
        match self.start.rank {
            Some(r) => format!("rank {r}"),
            None => format!("pid {}", self.start.pid),
        }
    }

    /// Whether it trained or built a model: launchers, helpers and loader workers write a
    /// `start` only.
    pub fn is_trainer(&self) -> bool {
        !self.steps.is_empty() || !self.models.is_empty() || !self.optimizers.is_empty()
    }

    /// Its rank, 0 for a process outside a launcher.
    pub fn rank(&self) -> u32 {
        self.start.rank.unwrap_or(0)
    }

    /// Its peak memory over the watched steps, bytes: the allocator's peak on CUDA
    /// (`max_memory_allocated`), else the resident set's (its peak where a stage measured it).
    pub fn peak_memory(&self) -> Option<f64> {
        let device = self
            .steps
            .iter()
            .filter_map(|s| s.memory.as_ref()?.max_allocated)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        device.or_else(|| {
            self.steps
                .iter()
                .filter_map(|s| s.memory.as_ref())
                .flat_map(|m| [m.rss, m.rss_peak])
                .flatten()
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        })
    }

    /// The share of its step time (after the first step) spent waiting in a DataLoader.
    pub fn data_wait_share(&self) -> Option<f64> {
        let (wait, total) = self
            .steps
            .iter()
            .skip(1)
            .filter_map(|s| Some((s.data_wait_s?, s.step_s?)))
            .fold((0.0, 0.0), |(w, t), (a, b)| (w + a, t + b));
        (total > 0.0).then(|| (wait / total).clamp(0.0, 1.0))
    }
}

/// A line that is not a trace record.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceError {
    /// 1-based line number in the text read.
    pub line: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Whether `first_line` opens a run trace (a `start` record with a `trace` version).
pub fn is_trace(first_line: &str) -> bool {
    let t = first_line.trim_start();
    t.starts_with('{')
        && t.contains("\"kind\"")
        && t.contains("\"start\"")
        && t.contains("\"trace\"")
}

/// Every process in `text`, in the order their `start` lines appear.
pub fn parse(text: &str) -> Result<Vec<Process>, TraceError> {
    let mut out: Vec<Process> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE {
            return Err(TraceError {
                line: n,
                message: format!("longer than {MAX_LINE} bytes"),
            });
        }
        let record = serde_json::from_str(line)
            .map(without_nulls)
            .and_then(serde_json::from_value::<Record>)
            .map_err(|e| TraceError {
                line: n,
                message: format!("not a trace record: {e}"),
            })?;
        if let Record::Start(s) = record {
            if s.trace == 0 {
                return Err(TraceError {
                    line: n,
                    message: "a start record without its trace version".into(),
                });
            }
            if s.trace != TRACE_VERSION {
                return Err(TraceError {
                    line: n,
                    message: format!(
                        "trace version {} (this mldebug reads version {TRACE_VERSION})",
                        s.trace
                    ),
                });
            }
            out.push(Process {
                start: s,
                ..Process::default()
            });
            continue;
        }
        let Some(p) = out.last_mut() else {
            return Err(TraceError {
                line: n,
                message: "a record before the first `start` line".into(),
            });
        };
        add(p, record);
    }
    Ok(out)
}

/// `null` means absent in the contract: fields set to it are dropped, so every field's default
/// (none, zero, empty) stands for it.
pub fn without_nulls(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .into_iter()
            .filter(|(_, x)| !x.is_null())
            .map(|(k, x)| (k, without_nulls(x)))
            .collect(),
        serde_json::Value::Array(a) => a.into_iter().map(without_nulls).collect(),
        x => x,
    }
}

fn add(p: &mut Process, record: Record) {
    match record {
        Record::Start(_) | Record::Unknown => {}
        // A launcher that sets no RANK (torch.multiprocessing.spawn): torch.distributed knows.
        Record::Dist(d) => {
            p.start.rank = p.start.rank.or(d.rank);
            p.start.world_size = p.start.world_size.or(d.world_size);
        }
        Record::Model(m) => p.models.push(m),
        Record::Optimizer(o) => p.optimizers.push(o),
        Record::Step(s) => p.steps.push(*s),
        Record::Cadence(c) => p.cadence = Some(c),
        Record::Grads(g) => p.grads.push(g),
        Record::Adapters(a) => p.adapters.push(a),
        Record::LossCall(l) => p.loss_calls.push(l),
        Record::Labels(l) => p.labels.push(l),
        Record::OutOfRange(r) => p.out_of_range.push(r),
        Record::Mode(m) => p.modes.push(m),
        Record::Nonfinite(x) => p.nonfinite.push(x),
        Record::Saturation(x) => p.saturation.push(x),
        Record::Loader(l) => p.loaders.push(l),
        Record::Epoch(e) => p.epochs.push(e),
        Record::Overlap(o) => p.overlaps.push(o),
        Record::Batchnorm(b) => p.batchnorms.push(b),
        Record::Load(l) => p.loads.push(l),
        Record::LoadTrained(l) => p.loads_trained.push(l),
        Record::End(e) => p.end = Some(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_go_to_the_process_whose_start_precedes_them() {
        let text = r#"{"kind":"start","trace":1,"pid":1,"rank":0}
{"kind":"step","step":1,"loss":"NaN"}
{"kind":"future_kind","x":1}
{"kind":"start","trace":1,"pid":2,"rank":1}
{"kind":"step","step":1,"loss":2.5,"new_field":true,"forwards":null}
{"kind":"end","reason":"steps","steps":1}
"#;
        let ps = parse(text).unwrap();
        assert_eq!(ps.len(), 2);
        assert!(ps[0].steps[0].loss.unwrap().is_nan());
        assert!(ps[0].end.is_none());
        assert_eq!(ps[1].steps[0].loss, Some(2.5));
        assert_eq!(ps[1].end.as_ref().unwrap().reason, "steps");
        assert_eq!(ps[1].label(), "rank 1");
    }

    #[test]
    fn peak_memory_prefers_the_allocator_and_data_wait_skips_the_first_step() {
        let cpu = parse(
            r#"{"kind":"start","trace":1,"pid":1}
{"kind":"step","step":1,"step_s":5.0,"data_wait_s":5.0,"memory":{"rss":300}}
{"kind":"step","step":2,"step_s":1.0,"data_wait_s":0.25,"memory":{"rss":200,"rss_peak":400}}
{"kind":"step","step":3,"step_s":1.0,"data_wait_s":0.25,"memory":{"rss":250}}
"#,
        )
        .unwrap();
        assert_eq!(cpu[0].peak_memory(), Some(400.0));
        assert_eq!(cpu[0].data_wait_share(), Some(0.25));
        let cuda = parse(
            r#"{"kind":"start","trace":1,"pid":1}
{"kind":"step","step":1,"memory":{"rss":900,"max_allocated":50}}
{"kind":"step","step":2,"memory":{"rss":900,"max_allocated":70}}
"#,
        )
        .unwrap();
        assert_eq!(cuda[0].peak_memory(), Some(70.0));
        assert_eq!(cuda[0].data_wait_share(), None);
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let e = parse("{\"kind\":\"start\",\"trace\":1}\nnot json\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("{\"kind\":\"step\",\"step\":1}\n").unwrap_err();
        assert!(e.message.contains("before the first"), "{e}");
        let e = parse("{\"kind\":\"start\",\"trace\":9}\n").unwrap_err();
        assert!(e.message.contains("version 9"), "{e}");
    }

    #[test]
    fn a_trace_is_told_from_other_jsonl() {
        assert!(is_trace(r#"{"kind": "start", "trace": 1, "pid": 3}"#));
        assert!(!is_trace(r#"{"step": 1, "loss": 2.0}"#));
    }
}
