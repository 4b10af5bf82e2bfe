//! What the driver writes on stdout: one JSON object per line (`torch/CONTRACT.md`).

use mldebug_judge::label_mask::Labels;
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Task};
use serde::Deserialize;

/// The contract version this mldebug speaks; a driver writing another one is refused.
pub const CONTRACT: u32 = 1;

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Hello(Hello),
    Progress(Progress),
    Check(CheckEvent),
    Done,
}

/// The first line: versions, the model, its task and label convention.
#[derive(Debug, Clone, Deserialize)]
pub struct Hello {
    pub contract: u32,
    pub python: String,
    pub torch: String,
    #[serde(default)]
    pub transformers: Option<String>,
    #[serde(default)]
    pub peft: Option<String>,
    pub device: String,
    pub task: Task,
    #[serde(default)]
    pub labels: Labels,
    #[serde(default)]
    pub parameters: Option<u64>,
    /// Seconds from the driver's start to the model built (Python, `import torch`, build).
    #[serde(default, with = "non_finite::option")]
    pub startup_s: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Progress {
    pub check: CheckId,
    pub done: usize,
    pub total: usize,
    #[serde(default, with = "non_finite::option")]
    pub loss: Option<f64>,
}

/// One check's result: a measurement to judge, a reason it cannot judge this model, or the
/// error the user's code raised.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckEvent {
    pub check: CheckId,
    #[serde(default)]
    pub measurement: Option<serde_json::Value>,
    #[serde(default)]
    pub skipped: Option<String>,
    #[serde(default)]
    pub error: Option<UserError>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct UserError {
    pub message: String,
    #[serde(default)]
    pub traceback: Vec<String>,
}

/// Reads one stdout line; `None` for a line that is not an event (the user's code printed to
/// stdout behind the driver's back): it is shown with the stderr tail, not trusted.
pub fn parse(line: &str) -> Option<std::result::Result<Event, String>> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    Some(serde_json::from_str(line).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read() {
        let hello = r#"{"event":"hello","contract":1,"python":"3.11.7","torch":"2.15.0","transformers":null,"peft":null,"device":"cpu","model":"m.py:Net","task":"causal_lm","labels":"in_model","parameters":1200,"startup_s":1.5}"#;
        let Some(Ok(Event::Hello(h))) = parse(hello) else {
            panic!("hello")
        };
        assert_eq!((h.task, h.labels), (Task::CausalLm, Labels::InModel));
        let check = r#"{"event":"check","check":"grad-flow","error":{"message":"boom","traceback":["a","b"]}}"#;
        let Some(Ok(Event::Check(c))) = parse(check) else {
            panic!("check")
        };
        assert_eq!(c.check, CheckId::GradFlow);
        assert_eq!(c.error.unwrap().traceback.len(), 2);
        assert!(matches!(
            parse(r#"{"event":"done"}"#),
            Some(Ok(Event::Done))
        ));
        assert!(parse("hello from the user's print").is_none());
        assert!(matches!(parse(r#"{"event":"nope"}"#), Some(Err(_))));
    }
}
