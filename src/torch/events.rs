//! What the driver writes on stdout: one JSON object per line (`torch/CONTRACT.md`), each
//! carrying the run's nonce. A line without it is not the driver's: the user's code can write
//! to the same descriptor or exit with any code, but cannot know the nonce by accident.

use mldebug_judge::label_mask::Labels;
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Task};
use serde::Deserialize;

/// The contract version this mldebug speaks; a driver writing another one is refused.
pub const CONTRACT: u32 = 2;

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The first line, before `import torch`: the interpreter is a Python running the driver.
    Started(Started),
    Hello(Hello),
    Progress(Progress),
    Check(CheckEvent),
    /// A start-up problem; the driver exits after it.
    Fatal(Fatal),
    Done,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Started {
    pub python: String,
}

/// What kind of start-up problem a `fatal` event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FatalKind {
    /// The request was malformed: a bug in mldebug.
    Request,
    /// `import torch` failed.
    NoTorch,
    /// The target cannot be loaded or does not follow the protocol.
    Target,
    /// The user's code raised (or called `sys.exit`) while loading or building the model.
    UserCode,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Fatal {
    pub kind: FatalKind,
    pub message: String,
    #[serde(default)]
    pub traceback: Vec<String>,
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
    /// The seed it ran with (every driver says; absent only in a kept run from before).
    #[serde(default)]
    pub seed: Option<u64>,
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

/// Reads one stdout line; `None` for a line that is not an event of this run (no JSON object,
/// or not carrying `nonce`): it is shown with the stderr tail, not trusted.
pub fn parse(line: &str, nonce: &str) -> Option<std::result::Result<Event, String>> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    if value.get("nonce").and_then(serde_json::Value::as_str) != Some(nonce) {
        return None;
    }
    Some(serde_json::from_value(value).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read() {
        let n = "n0";
        let hello = r#"{"event":"hello","nonce":"n0","contract":2,"python":"3.11.7","torch":"2.15.0","transformers":null,"peft":null,"device":"cpu","model":"m.py:Net","task":"causal_lm","labels":"in_model","parameters":1200,"startup_s":1.5}"#;
        let Some(Ok(Event::Hello(h))) = parse(hello, n) else {
            panic!("hello")
        };
        assert_eq!((h.task, h.labels), (Task::CausalLm, Labels::InModel));
        let check = r#"{"event":"check","nonce":"n0","check":"grad-flow","error":{"message":"boom","traceback":["a","b"]}}"#;
        let Some(Ok(Event::Check(c))) = parse(check, n) else {
            panic!("check")
        };
        assert_eq!(c.check, CheckId::GradFlow);
        assert_eq!(c.error.unwrap().traceback.len(), 2);
        assert!(matches!(
            parse(r#"{"event":"done","nonce":"n0"}"#, n),
            Some(Ok(Event::Done))
        ));
        let fatal = r#"{"event":"fatal","nonce":"n0","kind":"user_code","message":"m.py:Net: build() called sys.exit(4)","traceback":[]}"#;
        let Some(Ok(Event::Fatal(f))) = parse(fatal, n) else {
            panic!("fatal")
        };
        assert_eq!(f.kind, FatalKind::UserCode);
        assert!(parse("hello from the user's print", n).is_none());
        assert!(matches!(
            parse(r#"{"event":"nope","nonce":"n0"}"#, n),
            Some(Err(_))
        ));
    }

    #[test]
    fn a_line_without_this_runs_nonce_is_not_an_event() {
        for line in [
            r#"{"event":"done"}"#,
            r#"{"event":"done","nonce":"other"}"#,
            r#"{"event":"fatal","nonce":null,"kind":"no_torch","message":"x"}"#,
            r#"{"event":"done","nonce":"n0""#,
        ] {
            assert!(parse(line, "n0").is_none(), "{line}");
        }
    }
}
