//! The detectors on synthetic histories, over several noise seeds: a healthy run (a falling
//! loss with per-batch noise, a cosine schedule with warmup, steady throughput and memory) gets
//! no warn or fail, and each planted problem is found at its step. The real runs these are
//! calibrated on are in the root crate's `doctor_corpus` test.

use mldebug_doctor::{diagnose, Finding, Options, RunHistory, Severity, Symptom};
use std::collections::BTreeMap;

const STEPS: usize = 1000;
const SEEDS: u64 = 5;

/// A fixed pseudo-random sequence in [-0.5, 0.5).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// A healthy run; `plant` may change any point: (series, step, value) → value.
fn run(seed: u64, plant: impl Fn(&str, usize, f64) -> f64) -> RunHistory {
    let mut n = Noise(seed + 1);
    let mut h: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut push = |k: &str, i: usize, v: f64| {
        h.entry(k.into())
            .or_default()
            .push((i as f64, plant(k, i, v)))
    };
    for i in 1..=STEPS {
        let p = i as f64 / STEPS as f64;
        let level = 0.6 + 1.7 * (-6.0 * p).exp();
        push("loss", i, level * (1.0 + 0.3 * n.next()));
        let warm = (i as f64 / 50.0).min(1.0);
        push(
            "learning_rate",
            i,
            1e-3 * warm * 0.5 * (1.0 + (std::f64::consts::PI * p).cos()),
        );
        push("grad_norm", i, 1.0 + 0.4 * n.next());
        push("samples_per_second", i, 5000.0 * (1.0 + 0.2 * n.next()));
        push("memory_mb", i, 900.0 + 3.0 * n.next());
        if i % 50 == 0 {
            push("eval_loss", i, level * 1.08 + 0.01 * n.next());
        }
    }
    RunHistory::new(h, BTreeMap::new())
}

fn findings(h: &RunHistory) -> Vec<Finding> {
    diagnose(h, &Options::default()).findings
}

/// The finding of `symptom` at warn or worse, which must start within `tol` steps of `at`.
fn found_near(h: &RunHistory, symptom: Symptom, at: f64, tol: f64) {
    let f = findings(h);
    let hit = f
        .iter()
        .find(|x| x.symptom == symptom && x.severity >= Severity::Warn)
        .unwrap_or_else(|| panic!("{symptom} not found: {f:#?}"));
    assert!(
        (hit.step - at).abs() <= tol,
        "{symptom} at {}, planted at {at}",
        hit.step
    );
}

#[test]
fn healthy_runs_get_no_warn_or_fail() {
    for seed in 0..SEEDS {
        let f = findings(&run(seed, |_, _, v| v));
        let alarms: Vec<&Finding> = f.iter().filter(|x| x.severity >= Severity::Warn).collect();
        assert!(alarms.is_empty(), "seed {seed}: {alarms:#?}");
    }
}

#[test]
fn a_nan_is_found_at_its_step() {
    for seed in 0..SEEDS {
        let h = run(
            seed,
            |k, i, v| if k == "loss" && i >= 600 { f64::NAN } else { v },
        );
        found_near(&h, Symptom::LossNonfinite, 600.0, 0.0);
    }
}

#[test]
fn a_loss_that_rises_for_good_is_diverging() {
    for seed in 0..SEEDS {
        let h = run(seed, |k, i, v| {
            if k == "loss" && i > 500 {
                v + 0.01 * (i - 500) as f64
            } else {
                v
            }
        });
        found_near(&h, Symptom::LossDiverging, 500.0, 40.0);
    }
}

#[test]
fn a_loss_below_zero_that_returns_to_zero_is_not_diverging_and_one_that_blows_up_is() {
    for seed in 0..SEEDS {
        // A policy-gradient surrogate: it falls below zero, then returns to 0 as the policy
        // settles (the returns keep rising meanwhile).
        let settles = run(seed, |k, i, v| {
            if k == "loss" {
                let p = i as f64 / STEPS as f64;
                -1.2 * (p * 12.0).min(1.0) * (-4.0 * p).exp() + 0.02 * (v - 0.6)
            } else {
                v
            }
        });
        let f = findings(&settles);
        assert!(
            !f.iter().any(|x| x.symptom == Symptom::LossDiverging),
            "seed {seed}: {f:#?}"
        );
        // The same loss blowing up far past zero is still found.
        let blows_up = run(seed, |k, i, v| {
            if k == "loss" {
                let p = i as f64 / STEPS as f64;
                let base = -1.2 * (p * 12.0).min(1.0) * (-4.0 * p).exp() + 0.02 * (v - 0.6);
                if i > 600 {
                    base + 0.05 * (i - 600) as f64
                } else {
                    base
                }
            } else {
                v
            }
        });
        let f = findings(&blows_up);
        assert!(
            f.iter()
                .any(|x| x.symptom == Symptom::LossDiverging && x.severity >= Severity::Warn),
            "seed {seed}: {f:#?}"
        );
    }
}

/// A run of `steps` steps like SGD on separable data: the loss falls from 2.2 by orders of
/// magnitude to about 3e-5 (times a per-batch factor within 20% while it falls, of 0.5 to 2
/// once it has converged: what is left is the few hardest samples), its gradient norm with it
/// from 2.8; at `blips` one harder batch lifts the loss to 0.006 and the norm to 0.17; at
/// `jumps` the norm alone jumps to 30.
fn converged(seed: u64, steps: usize, blips: &[usize], jumps: &[usize]) -> RunHistory {
    let mut n = Noise(seed + 1);
    let mut loss = Vec::new();
    let mut grad = Vec::new();
    for i in 1..=steps {
        let level = (2.2 * (-0.55 * (i - 1) as f64).exp()).max(3e-5);
        let batch = (if level > 3e-5 { 0.4 } else { 1.5 } * n.next()).exp();
        let (l, g) = if blips.contains(&i) {
            (0.006, 0.17)
        } else {
            (level * batch, 2.8 * (level * batch / 2.2).powf(0.8))
        };
        loss.push((i as f64, l));
        grad.push((i as f64, if jumps.contains(&i) { 30.0 } else { g }));
    }
    let h: BTreeMap<String, Vec<(f64, f64)>> =
        [("loss".to_string(), loss), ("grad_norm".to_string(), grad)].into();
    RunHistory::new(h, BTreeMap::new())
}

#[test]
fn a_loss_converged_near_zero_with_tiny_blips_is_no_spike_jump_or_zero_loss() {
    for seed in 0..SEEDS {
        let blips = [16, 24, 36, 44, 54, 61, 77];
        let h = converged(seed, 100, &blips, &[]);
        let f = findings(&h);
        // Each blip is 200 times the collapsed trend, a rise of 0.3% of the starting loss; each
        // norm 0.17 is 100 times its trend, yet far below the 2.8 of the first steps. (A point
        // of the first steps' fast fall may still be noted as a spike: information.)
        for symptom in [Symptom::LossSpikes, Symptom::GradNormExplosion] {
            let hit = f.iter().find(|x| x.symptom == symptom);
            assert!(
                hit.is_none_or(|x| x.severity == Severity::Info
                    && !x
                        .marks
                        .iter()
                        .chain([&x.step])
                        .any(|m| blips.contains(&(*m as usize)))),
                "seed {seed}: {f:#?}"
            );
        }
        // Converged below the zero line after a fall over many steps: a note at most.
        assert!(
            f.iter()
                .all(|x| x.symptom != Symptom::LossZero || x.severity == Severity::Info),
            "seed {seed}: {f:#?}"
        );
    }
}

#[test]
fn a_norm_that_collapsed_and_jumps_above_its_early_level_is_an_explosion() {
    for seed in 0..SEEDS {
        // Ten times the first steps' norm, at two steps.
        let h = converged(seed, 100, &[], &[50, 75]);
        found_near(&h, Symptom::GradNormExplosion, 50.0, 0.0);
    }
}

#[test]
fn a_spike_from_a_stable_loss_is_found() {
    for seed in 0..SEEDS {
        let h = run(seed, |k, i, v| match k {
            "loss" if i == 700 => 2.0,
            "loss" => 0.5 + 0.05 * (v - v.floor() - 0.5),
            _ => v,
        });
        found_near(&h, Symptom::LossSpikes, 700.0, 0.0);
    }
}

#[test]
fn a_flat_loss_is_stuck_and_a_zero_loss_is_zero() {
    for seed in 0..SEEDS {
        let h = run(seed, |k, _, v| {
            if k == "loss" {
                std::f64::consts::LN_10 + 0.01 * (v - v.floor() - 0.5)
            } else {
                v
            }
        });
        found_near(&h, Symptom::LossStuck, 1.0, 0.0);
        let h = run(seed, |k, _, v| if k == "loss" { 0.0 } else { v });
        found_near(&h, Symptom::LossZero, 1.0, 0.0);
        let f = finding(&h, Symptom::LossZero).unwrap();
        assert_eq!(f.severity, Severity::Fail, "{}", f.summary);
    }
}

#[test]
fn periodic_spikes_are_found_and_named_periodic() {
    for seed in 0..SEEDS {
        let h = run(seed, |k, i, v| {
            if k == "loss" && i % 100 == 37 {
                v * 4.0
            } else {
                v
            }
        });
        found_near(&h, Symptom::LossSpikes, 37.0, 0.0);
        let f = findings(&h);
        let s = f.iter().find(|x| x.symptom == Symptom::LossSpikes).unwrap();
        assert_eq!(s.get("period_steps"), Some(100.0), "{}", s.summary);
    }
}

#[test]
fn a_rising_validation_loss_under_a_falling_training_loss_is_overfitting() {
    for seed in 0..SEEDS {
        let h = run(seed, |k, i, v| {
            if k == "eval_loss" && i > 400 {
                v + 0.002 * (i - 400) as f64
            } else {
                v
            }
        });
        found_near(&h, Symptom::Overfitting, 400.0, 100.0);
    }
}

/// The finding of `symptom`, at any severity.
fn finding(h: &RunHistory, symptom: Symptom) -> Option<Finding> {
    findings(h).into_iter().find(|x| x.symptom == symptom)
}

#[test]
fn grad_norm_jumps_lr_zero_throughput_drops_and_memory_growth() {
    for seed in 0..SEEDS {
        // Two jumps far above every level the norm had.
        let h = run(seed, |k, i, v| {
            if k == "grad_norm" && (i == 300 || i == 650) {
                v * 50.0
            } else {
                v
            }
        });
        found_near(&h, Symptom::GradNormExplosion, 300.0, 0.0);
        // One jump the loss spikes after.
        let h = run(seed, |k, i, v| match k {
            "grad_norm" if i == 300 => v * 50.0,
            "loss" if i == 301 => v * 5.0,
            _ => v,
        });
        found_near(&h, Symptom::GradNormExplosion, 300.0, 0.0);
        let f = finding(&h, Symptom::GradNormExplosion).unwrap();
        assert_eq!(f.get("jumps_followed_by_loss_trouble"), Some(1.0));
        // One jump alone, the loss unmoved: information.
        let h = run(seed, |k, i, v| {
            if k == "grad_norm" && i == 300 {
                v * 50.0
            } else {
                v
            }
        });
        let f = finding(&h, Symptom::GradNormExplosion).unwrap();
        assert_eq!(f.severity, Severity::Info, "seed {seed}: {}", f.summary);
        assert!(f.summary.contains("isolated"), "{}", f.summary);
        let h = run(seed, |k, i, v| {
            if k == "learning_rate" && i >= 300 {
                0.0
            } else {
                v
            }
        });
        let f = findings(&h);
        let lr = f.iter().find(|x| x.symptom == Symptom::LrSchedule).unwrap();
        assert_eq!(
            (lr.severity, lr.step),
            (Severity::Fail, 300.0),
            "{}",
            lr.summary
        );
        let h = run(seed, |k, i, v| {
            if k == "samples_per_second" && i >= 700 {
                v / 4.0
            } else {
                v
            }
        });
        found_near(&h, Symptom::ThroughputDrop, 700.0, 20.0);
        let h = run(seed, |k, i, v| {
            if k == "memory_mb" && i >= 400 {
                v + 0.5 * (i - 400) as f64
            } else {
                v
            }
        });
        found_near(&h, Symptom::MemoryGrowth, 400.0, 20.0);
    }
}
