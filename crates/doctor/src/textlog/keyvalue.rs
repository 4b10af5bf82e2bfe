//! Lines a training script prints itself: `step 100 | loss 2.31 | lr 3e-4`,
//! `Step [100/1000], loss: 2.31`, `iter=100 loss=2.31 grad_norm=0.9`, `[step 100] train loss: 2.31`.
//! A line counts only when it names a step (`step`, `iter`, `iteration`, `global_step`) with a
//! whole number and a loss with a number; every other `name number` pair on it is kept too.

use super::pydict::number;
use crate::names::{self, Role};

/// Words that give the step.
const STEP_WORDS: [&str; 5] = ["step", "global_step", "iter", "iteration", "it"];

/// Words that qualify the next word: `val loss` is `val_loss`.
const QUALIFIERS: [&str; 9] = [
    "train",
    "training",
    "val",
    "valid",
    "validation",
    "eval",
    "test",
    "avg",
    "mean",
];

/// Names that are never metrics.
const NOT_METRICS: [&str; 2] = ["v_num", "rank"];

/// A parsed step line: its step and its (name, value) pairs.
pub struct StepLine {
    pub step: f64,
    pub values: Vec<(String, f64)>,
}

/// The step line in `text`, or `None` when the line is not one.
pub fn parse(text: &str) -> Option<StepLine> {
    let pairs = pairs(text);
    let step = pairs
        .iter()
        .find(|(k, v, _)| STEP_WORDS.contains(&k.as_str()) && v.fract() == 0.0 && *v >= 0.0)
        .map(|p| p.1)?;
    let values: Vec<(String, f64)> = pairs
        .into_iter()
        .filter(|(k, _, _)| !STEP_WORDS.contains(&k.as_str()) && !NOT_METRICS.contains(&k.as_str()))
        .map(|(k, v, _)| (k, v))
        .collect();
    let has_loss = values
        .iter()
        .any(|(k, _)| matches!(names::role(k), Role::TrainLoss | Role::EvalLoss));
    has_loss.then_some(StepLine { step, values })
}

/// Every `name [:=]? number` pair in the text, in order, with the byte offset of the name.
/// `step [100/1000]` reads as step 100.
pub fn pairs(text: &str) -> Vec<(String, f64, usize)> {
    let b = text.as_bytes();
    let mut out: Vec<(String, f64, usize)> = Vec::new();
    let mut prev_word: Option<(String, usize)> = None;
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b"_/.-".contains(&b[i])) {
            i += 1;
        }
        let word = text[start..i]
            .trim_end_matches(['.', '-', '/'])
            .to_ascii_lowercase();
        let mut j = i;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if j < b.len() && (b[j] == b':' || b[j] == b'=') {
            j += 1;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
        }
        if j < b.len() && b[j] == b'[' {
            j += 1;
        }
        let num_start = j;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b"+-.".contains(&b[j])) {
            j += 1;
        }
        match number(&text[num_start..j]) {
            Some(v) if j > num_start => {
                let name = match &prev_word {
                    Some((q, end)) if QUALIFIERS.contains(&q.as_str()) && *end + 1 == start => {
                        format!("{q}_{word}")
                    }
                    _ => word,
                };
                out.push((name, v, start));
                prev_word = None;
                i = j;
            }
            _ => prev_word = Some((word, i)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_step_lines_parse() {
        let l = parse("step 100 | loss 2.31 | lr 3e-4 | grad_norm 0.9").unwrap();
        assert_eq!(l.step, 100.0);
        assert_eq!(l.values[0], ("loss".into(), 2.31));
        assert_eq!(l.values[1], ("lr".into(), 3e-4));
        let l = parse("Epoch 1 Step [100/1000], Loss: 2.31, Val Loss: 2.5").unwrap();
        assert_eq!(l.step, 100.0);
        assert!(l.values.contains(&("val_loss".into(), 2.5)));
        assert!(l.values.contains(&("epoch".into(), 1.0)));
        let l = parse("iter=7 loss=nan").unwrap();
        assert!(l.values[0].1.is_nan());
    }

    #[test]
    fn lines_without_a_step_or_a_loss_are_not_read() {
        assert!(parse("Step 100: saving checkpoint to /ckpt/step-100").is_none());
        assert!(parse("loss 2.3 at the end").is_none());
        assert!(parse("step 1.5 loss 2").is_none());
        assert!(parse("").is_none());
    }
}
