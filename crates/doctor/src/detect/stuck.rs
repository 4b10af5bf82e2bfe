//! `loss-stuck`: the training loss never falls meaningfully below where it started, often at
//! ln C for C classes (chance: the model predicts the label frequencies and nothing more).

use super::Context;
use crate::finding::{Finding, Severity, Symptom};
use mldebug_text::number::num;

/// A trend that never gets this share below its starting level has not learned: a working run
/// drops by tens of percent within its first epochs, while noise and a bias fitted to the label
/// frequencies move it by a few.
const STUCK_MAX_DROP: f64 = 0.03;

/// The starting level is the median of this share of the first points (at least
/// [`HEAD_MIN`]).
const HEAD_SHARE: f64 = 0.1;
const HEAD_MIN: usize = 3;

/// `e^loss` within this share of an integer C ≥ 2 reads as ln C (chance level for C classes).
const CHANCE_TOLERANCE: f64 = 0.02;

/// Largest class count named as chance: the ±2% windows around successive integers leave gaps
/// up to about 25 classes and cover every number beyond, where the match would mean nothing.
const MAX_CHANCE_CLASSES: f64 = 20.0;

/// A run stuck only for a while is reported if the flat stretch covers this share of it.
const FLAT_PREFIX_SHARE: f64 = 0.5;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some((s, t)) = cx.train_trend() else {
        return;
    };
    let start = t.head(HEAD_SHARE, HEAD_MIN);
    if !(start.is_finite() && start.abs() > 0.0) {
        return;
    }
    let floor = start - STUCK_MAX_DROP * start.abs();
    let first_below = t.level.iter().position(|v| *v < floor);
    let min = t.level[t.argmin()];
    let chance = chance_classes(start);
    let chance_text = chance.map_or(String::new(), |c| {
        format!(" ≈ ln {c} (chance for {c} classes)", c = c as u64)
    });
    let drop = (start - min) / start.abs();
    match first_below {
        None => {
            let text = format!(
                "{} stays at its starting level {}{chance_text} for all {} logged points \
                 (lowest {}, {}% below)",
                s.name,
                num(start),
                t.points.len(),
                num(min),
                num(100.0 * drop.max(0.0)),
            );
            out.push(
                Finding::new(Symptom::LossStuck, Severity::Fail, &s.name, t.points[0].0)
                    .summary(text)
                    .number("start", start)
                    .number("lowest", min)
                    .number("drop_share", drop)
                    .number("chance_classes", chance.unwrap_or(f64::NAN)),
            );
        }
        Some(i) if i as f64 >= FLAT_PREFIX_SHARE * t.len() as f64 => {
            let text = format!(
                "{} stays at its starting level {}{chance_text} until step {} ({}% of the run) \
                 before it falls",
                s.name,
                num(start),
                num(t.steps[i]),
                num((100.0 * i as f64 / t.len() as f64).round()),
            );
            out.push(
                Finding::new(Symptom::LossStuck, Severity::Warn, &s.name, t.points[0].0)
                    .summary(text)
                    .number("start", start)
                    .number("falls_from_step", t.steps[i])
                    .number("chance_classes", chance.unwrap_or(f64::NAN)),
            );
        }
        Some(_) => {}
    }
}

/// C when `loss` is within tolerance of ln C for an integer C ≥ 2.
fn chance_classes(loss: f64) -> Option<f64> {
    let c = loss.exp();
    let rounded = c.round();
    let near = (c - rounded).abs() <= CHANCE_TOLERANCE * rounded;
    ((2.0..=MAX_CHANCE_CLASSES).contains(&rounded) && near).then_some(rounded)
}

#[cfg(test)]
mod tests {
    use super::chance_classes;

    #[test]
    fn ln_c_is_recognised() {
        assert_eq!(chance_classes(10f64.ln()), Some(10.0));
        assert_eq!(chance_classes(2f64.ln() + 0.005), Some(2.0));
        assert_eq!(chance_classes(0.3), None);
    }
}
