//! The verdict of `check memory`, from a [`Measurement`] alone (and, when there is one, the
//! estimate of each stage): thresholds, status and words, no I/O and no framework.
//!
//! - **fail, leak**: what stays alive across steps keeps growing after step 2, at every step
//!   ([`LEAK_MIN_BYTES`]): something holds tensors from one step into the next (a cache, a list
//!   of losses kept with their graphs).
//! - **fail, avoidable intermediate**: forward made one allocation [`INTERMEDIATE_RATIO`] times
//!   the largest output of any traced layer: a tensor materialised between layers that a matmul
//!   or a fused op would not need.
//! - **warn, second-batch spike**: step 2 peaks above step 1, in forward or backward, by more than
//!   the optimizer state allocated in between plus [`SPIKE_SHARE`] of step 1's peak.
//! - otherwise **pass**. The ratio measured ÷ estimated of every stage is reported either way.

use crate::measured::{Measurement, StageEstimate};
use mldebug_report::Status;
use mldebug_text::number::human_bytes;

/// Growth per step, after step 2, counted as a leak: 1 KiB. A clean candle step ends with
/// exactly the bytes it started with (the zoo: 0 over steps 2 to 4, every seed); the zoo's
/// caching twin leaks its activations, tens of KiB a step.
pub const LEAK_MIN_BYTES: f64 = 1024.0;
/// One forward allocation this many times the largest traced layer output fails. The zoo's
/// clean models stay at 2 or below (the largest allocation is a layer output or the loss's
/// log-softmax); a linear layer computed by broadcasting and summing materialises in-features
/// times its output (32 in the zoo's twin).
pub const INTERMEDIATE_RATIO: f64 = 8.0;
/// Step 2 above step 1 by more than the optimizer state plus this share of step 1's peak warns.
pub const SPIKE_SHARE: f64 = 0.10;

/// The outcome: a status, one line, details and the numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The verdict.
    pub status: Status,
    /// One line a person reads.
    pub summary: String,
    /// Further lines: the stage table, the largest layers.
    pub details: Vec<String>,
    /// The numbers behind the verdict, by name.
    pub metrics: Vec<(String, f64)>,
}

/// Judges `m`, beside `estimate` when there is one.
pub fn judge(m: &Measurement, estimate: Option<&StageEstimate>) -> Verdict {
    let mut metrics = vec![
        ("load_bytes".to_string(), m.load),
        ("optimizer_state_bytes".to_string(), m.optimizer_state),
    ];
    let peak = m
        .steps
        .iter()
        .flat_map(|s| [s.forward, s.backward, s.optimizer_step])
        .fold(m.load, f64::max);
    metrics.push(("peak_bytes".into(), peak));
    let mut details = stage_lines(m, estimate, &mut metrics);
    details.extend(module_lines(m));
    let growth = leak(m);
    metrics.push(("growth_per_step_bytes".into(), growth.unwrap_or(0.0)));
    let intermediate = intermediate(m);
    if let Some((ratio, _)) = intermediate {
        metrics.push(("largest_allocation_ratio".into(), ratio));
    }
    let spike = spike(m);
    metrics.push(("second_batch_excess_bytes".into(), spike.unwrap_or(0.0)));
    let (status, summary) = if let Some(g) = growth {
        (
            Status::Fail,
            format!(
                "memory keeps growing after step 2: +{} a step; something keeps tensors alive \
                 from one step into the next",
                human_bytes(g)
            ),
        )
    } else if let Some((_, line)) = intermediate.filter(|(r, _)| *r >= INTERMEDIATE_RATIO) {
        (Status::Fail, line)
    } else if let Some(excess) = spike {
        (
            Status::Warn,
            format!(
                "step 2 peaks {} above step 1 beyond the optimizer state: a second-batch spike",
                human_bytes(excess)
            ),
        )
    } else {
        (
            Status::Pass,
            format!(
                "peak {} over {} steps; nothing grows after step 2",
                human_bytes(peak),
                m.steps.len()
            ),
        )
    };
    Verdict {
        status,
        summary,
        details,
        metrics,
    }
}

/// Growth per step after step 2, when every step from 2 on grows by at least [`LEAK_MIN_BYTES`].
fn leak(m: &Measurement) -> Option<f64> {
    let ends: Vec<f64> = m.steps.iter().skip(1).map(|s| s.end).collect();
    if ends.len() < 3 {
        return None;
    }
    let growths: Vec<f64> = ends.windows(2).map(|w| w[1] - w[0]).collect();
    let all_grow = growths.iter().all(|&g| g >= LEAK_MIN_BYTES);
    all_grow.then(|| growths.iter().sum::<f64>() / growths.len() as f64)
}

/// The largest forward allocation over the largest traced module output, with the words for it.
fn intermediate(m: &Measurement) -> Option<(f64, String)> {
    let module = m.largest_module().filter(|x| x.bytes > 0.0)?;
    let largest = m
        .steps
        .iter()
        .map(|s| s.forward_largest)
        .fold(0.0, f64::max);
    if largest <= 0.0 {
        // Not measured (a GPU memory pool counts bytes in use, not single allocations).
        return None;
    }
    let ratio = largest / module.bytes;
    let line = format!(
        "forward allocated one {} tensor, {ratio:.0}× the largest layer output ({}, {}): an \
         intermediate materialised between layers that a matmul or a fused op would avoid",
        human_bytes(largest),
        module.module,
        human_bytes(module.bytes)
    );
    Some((ratio, line))
}

/// How far step 2's forward or backward peak exceeds step 1's beyond the optimizer state, when
/// it exceeds [`SPIKE_SHARE`] of step 1's peak.
fn spike(m: &Measurement) -> Option<f64> {
    let (one, two) = (m.steps.first()?, m.steps.get(1)?);
    let excess = (two.forward - one.forward).max(two.backward - one.backward) - m.optimizer_state;
    let allowed = SPIKE_SHARE * one.forward.max(one.backward);
    (excess > allowed).then_some(excess)
}

const STAGES: [&str; 4] = ["load", "forward", "backward", "optimizer step"];

/// One line per step, and one per stage with the estimate and the ratio.
fn stage_lines(
    m: &Measurement,
    estimate: Option<&StageEstimate>,
    metrics: &mut Vec<(String, f64)>,
) -> Vec<String> {
    let mut lines = vec![format!(
        "{:<6}{:>12}{:>12}{:>12}{:>12}{:>12}",
        "step", "forward", "backward", "opt. step", "after", "+ vs prev."
    )];
    let mut previous = None;
    for (i, s) in m.steps.iter().enumerate() {
        let change = previous.map_or("—".to_string(), |p: f64| human_bytes(s.end - p));
        lines.push(format!(
            "{:<6}{:>12}{:>12}{:>12}{:>12}{:>12}",
            i + 1,
            human_bytes(s.forward),
            human_bytes(s.backward),
            human_bytes(s.optimizer_step),
            human_bytes(s.end),
            change
        ));
        previous = Some(s.end);
    }
    let (Some(e), Some(last)) = (estimate, m.stages(m.steps.len().saturating_sub(1))) else {
        return lines;
    };
    lines.push(format!(
        "{:<16}{:>12}{:>12}{:>8}",
        "stage", "measured", "estimated", "ratio"
    ));
    for ((name, measured), estimated) in STAGES.iter().zip(last).zip(e.as_array()) {
        let ratio = measured / estimated;
        let key = name.replace(' ', "_");
        metrics.push((format!("{key}_bytes"), measured));
        metrics.push((format!("{key}_estimate_bytes"), estimated));
        metrics.push((format!("{key}_ratio"), ratio));
        lines.push(format!(
            "{name:<16}{:>12}{:>12}{ratio:>8.2}",
            human_bytes(measured),
            human_bytes(estimated)
        ));
    }
    lines
}

/// Modules shown, largest output first.
pub const TOP_MODULES: usize = 5;

fn module_lines(m: &Measurement) -> Vec<String> {
    let mut modules: Vec<_> = m.modules.iter().collect();
    modules.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
    let mut lines = Vec::new();
    if !modules.is_empty() {
        lines.push("largest layer outputs (one forward pass):".to_string());
    }
    for x in modules.into_iter().take(TOP_MODULES) {
        lines.push(format!(
            "  {:>10}  {} ({})",
            human_bytes(x.bytes),
            x.module,
            x.kind
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measured::{ModuleActivation, StepMemory};

    fn run(ends: [f64; 4], largest: f64) -> Measurement {
        let steps = ends
            .iter()
            .map(|&end| StepMemory {
                forward: end + 5000.0,
                forward_end: end + 4000.0,
                after_backward: end + 3000.0,
                backward: end + 6000.0,
                optimizer_step: end + 1000.0,
                end,
                forward_largest: largest,
            })
            .collect();
        Measurement {
            source: "test".into(),
            load: 1000.0,
            data: 100.0,
            optimizer_state: 2000.0,
            steps,
            modules: vec![ModuleActivation {
                module: "mlp.up".into(),
                kind: "linear".into(),
                bytes: 1000.0,
            }],
        }
    }

    #[test]
    fn steady_memory_passes() {
        let v = judge(&run([3000.0, 3000.0, 3000.0, 3000.0], 1000.0), None);
        assert_eq!(v.status, Status::Pass, "{}", v.summary);
    }

    #[test]
    fn growth_at_every_step_after_the_second_is_a_leak() {
        let v = judge(&run([3000.0, 3000.0, 8000.0, 13000.0], 1000.0), None);
        assert_eq!(v.status, Status::Fail);
        assert!(v.summary.contains("+5.0 KB a step"), "{}", v.summary);
        // One step of growth is not a leak.
        let v = judge(&run([3000.0, 3000.0, 8000.0, 8000.0], 1000.0), None);
        assert_ne!(v.status, Status::Fail, "{}", v.summary);
    }

    #[test]
    fn an_allocation_far_larger_than_any_layer_output_fails() {
        let v = judge(&run([3000.0; 4], 32_000.0), None);
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.summary.contains("32× the largest layer output (mlp.up"),
            "{}",
            v.summary
        );
        let v = judge(&run([3000.0; 4], 4_500.0), None);
        assert_eq!(v.status, Status::Pass);
    }

    #[test]
    fn an_unmeasured_largest_allocation_neither_fails_nor_reports_a_ratio() {
        // A GPU pool counts bytes in use, not single allocations: 0 means not measured.
        let v = judge(&run([3000.0; 4], 0.0), None);
        assert_eq!(v.status, Status::Pass, "{}", v.summary);
        assert!(!v
            .metrics
            .iter()
            .any(|(k, _)| k == "largest_allocation_ratio"));
    }

    #[test]
    fn a_second_batch_peak_beyond_the_optimizer_state_warns() {
        let mut m = run([3000.0; 4], 1000.0);
        // Step 2 holds the optimizer state (2000) and 3000 bytes more.
        m.steps[1].forward += 5000.0;
        let v = judge(&m, None);
        assert_eq!(v.status, Status::Warn, "{}", v.summary);
        assert!(v.summary.contains("3.0 KB above step 1"), "{}", v.summary);
        let mut m = run([3000.0; 4], 1000.0);
        m.steps[1].forward += 2000.0;
        assert_eq!(judge(&m, None).status, Status::Pass);
    }

    #[test]
    fn stages_are_set_beside_the_estimate() {
        let e = StageEstimate {
            load: 1000.0,
            forward: 8000.0,
            backward: 9000.0,
            optimizer_step: 4000.0,
        };
        let v = judge(&run([3000.0; 4], 1000.0), Some(&e));
        let ratio = v
            .metrics
            .iter()
            .find(|(k, _)| k == "forward_ratio")
            .unwrap()
            .1;
        assert_eq!(ratio, 1.0);
        assert!(v.details.iter().any(|l| l.starts_with("forward")));
    }
}
