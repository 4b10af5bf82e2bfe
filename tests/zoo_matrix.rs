//! Every check against every zoo model over several seeds.
//!
//! Clean models must never fail (nor error); each buggy twin must fail the checks it is meant to
//! fail (`ZooModel::fails`) in at least `MIN_FAILS` of `SEEDS` seeds, since some bugs show only
//! on some inits. The table of fail rates per model × check is printed (`--nocapture`).

use mldebug_diagnostics::zoo;
use mldebug_diagnostics::{CheckId, Options, Report, Status};
use std::collections::BTreeMap;
use std::time::Instant;

/// Seeds per model.
const SEEDS: u64 = 5;
/// A twin must fail its checks in at least this many of the seeds.
const MIN_FAILS: usize = 4;

fn letter(s: Status) -> char {
    match s {
        Status::Pass => 'P',
        Status::Warn => 'W',
        Status::Fail => 'F',
        Status::Skipped => 'S',
        Status::Error => 'E',
    }
}

#[test]
fn clean_models_pass_and_twins_fail_their_checks() {
    let started = Instant::now();
    let mut problems = Vec::new();
    let mut table = vec![format!(
        "{:<26} {}  (per check: statuses over seeds 0..{SEEDS}; F fail, W warn, P pass, S skipped, E error)",
        "model",
        CheckId::ALL.map(|c| format!("{:<14}", c.as_str())).join("")
    )];
    for model in zoo::all() {
        let t0 = Instant::now();
        let reports: Vec<Report> = (0..SEEDS)
            .map(|seed| {
                let opts = Options {
                    seed,
                    model_label: format!("zoo::{}", model.name),
                    ..Options::default()
                };
                (model.run)(&CheckId::ALL, &opts)
            })
            .collect();
        let mut cells = Vec::new();
        for check in CheckId::ALL {
            let statuses: Vec<Status> = reports
                .iter()
                .map(|r| r.finding(check).expect("every check reported").status)
                .collect();
            let fails = statuses.iter().filter(|&&s| s == Status::Fail).count();
            let marks: String = statuses.iter().map(|&s| letter(s)).collect();
            let must_fail = model.fails.contains(&check);
            cells.push(format!(
                "{:<14}",
                format!("{marks}{}", if must_fail { "*" } else { "" })
            ));
            for (seed, r) in reports.iter().enumerate() {
                let f = r.finding(check).unwrap();
                if f.status == Status::Error || (model.clean && f.status == Status::Fail) {
                    problems.push(format!(
                        "{} seed {seed} {check}: {} ({})",
                        model.name, f.status, f.summary
                    ));
                }
            }
            if must_fail && fails < MIN_FAILS {
                let sample = reports
                    .iter()
                    .map(|r| r.finding(check).unwrap())
                    .find(|f| f.status != Status::Fail)
                    .map(|f| f.summary.clone())
                    .unwrap_or_default();
                problems.push(format!(
                    "{} {check}: failed in {fails} of {SEEDS} seeds (need {MIN_FAILS}); e.g. {sample}",
                    model.name
                ));
            }
        }
        table.push(format!(
            "{:<26} {}  {:.1}s",
            model.name,
            cells.join(""),
            t0.elapsed().as_secs_f64()
        ));
    }
    println!("{}", table.join("\n"));
    println!(
        "* = must fail; total {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Print every finding of one model (for calibration): `MLDEBUG_ZOO=mlp cargo test --test zoo_matrix dump -- --nocapture --ignored`.
#[test]
#[ignore]
fn dump() {
    let name = std::env::var("MLDEBUG_ZOO").unwrap_or_else(|_| "mlp".to_string());
    let model = zoo::find(&name).expect("zoo model");
    for seed in 0..SEEDS {
        let opts = Options {
            seed,
            ..Options::default()
        };
        let r = (model.run)(&CheckId::ALL, &opts);
        for f in &r.checks {
            let m: BTreeMap<_, _> = f.metrics.iter().collect();
            println!(
                "seed {seed} {} {}: {}\n    {m:?}",
                f.check, f.status, f.summary
            );
            if std::env::var("MLDEBUG_DETAILS").is_ok() {
                for d in &f.details {
                    println!("      {d}");
                }
            }
        }
    }
}

/// The numbers behind the thresholds: for each model, the range over seeds of the metric each
/// check decides on. `cargo test --test zoo_matrix calibration -- --nocapture --ignored`.
#[test]
#[ignore]
fn calibration() {
    let keys: [(CheckId, &str); 11] = [
        (CheckId::InitLoss, "ratio"),
        (CheckId::Overfit, "ratio"),
        (CheckId::Overfit, "update_ratio_median"),
        (CheckId::Overfit, "update_ratio_max"),
        (CheckId::Overfit, "steps"),
        (CheckId::GradFlow, "first_last_ratio"),
        (CheckId::NanTrace, "max_abs"),
        (CheckId::LabelMask, "masked_share"),
        (CheckId::LabelMask, "masked_logit_effect"),
        (CheckId::BatchLeak, "cross_sample_change"),
        (CheckId::ClassBalance, "ratio"),
    ];
    println!(
        "{:<26} {}",
        "model",
        keys.map(|(c, k)| format!("{:<22}", format!("{c}.{k}")))
            .join("")
    );
    for model in zoo::all() {
        let reports: Vec<Report> = (0..SEEDS)
            .map(|seed| {
                let opts = Options {
                    seed,
                    ..Options::default()
                };
                (model.run)(&CheckId::ALL, &opts)
            })
            .collect();
        let cells: Vec<String> = keys
            .iter()
            .map(|&(check, key)| {
                let v: Vec<f64> = reports
                    .iter()
                    .filter_map(|r| r.finding(check)?.metrics.get(key).copied())
                    .collect();
                if v.is_empty() {
                    return format!("{:<22}", "-");
                }
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                format!("{:<22}", format!("{lo:.3e}..{hi:.3e}"))
            })
            .collect();
        println!("{:<26} {}", model.name, cells.join(""));
    }
}

/// Every finding's summary for seed 0, model by model (to read the wording).
#[test]
#[ignore]
fn summaries() {
    for model in zoo::all() {
        let opts = Options {
            model_label: format!("zoo::{}", model.name),
            ..Options::default()
        };
        println!("== {}", model.name);
        for f in (model.run)(&CheckId::ALL, &opts).checks {
            println!(
                "  {:<13} {:<7} {}\n  {:21} next: {}",
                f.check.as_str(),
                f.status.as_str(),
                f.summary,
                "",
                f.next
            );
        }
    }
}

#[test]
#[ignore]
fn curves() {
    for name in [
        "mlp",
        "cnn",
        "tiny-gpt",
        "mlp-lr-x100",
        "llama-candle",
        "mlp-imbalanced",
    ] {
        let model = zoo::find(name).unwrap();
        for seed in 0..3 {
            let opts = Options {
                seed,
                ..Options::default()
            };
            let r = (model.run)(&[CheckId::Overfit], &opts);
            let f = &r.checks[0];
            let pts: Vec<String> = f.series[0]
                .points
                .iter()
                .step_by(10)
                .map(|p| format!("{:.3}", p[1]))
                .collect();
            let max_after: f64 = f.series[0]
                .points
                .iter()
                .skip(100)
                .map(|p| p[1])
                .fold(0.0, f64::max);
            println!(
                "{name} s{seed}: {} | max after 100: {max_after:.3}",
                pts.join(" ")
            );
        }
    }
}

#[test]
fn candle_llama_fails_grad_flow_naming_the_parameters_without_gradients() {
    let model = zoo::find("llama-candle").expect("the root crate enables the llama feature");
    let report = (model.run)(&[CheckId::GradFlow], &Options::default());
    let f = &report.checks[0];
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert_eq!(f.metrics["params"], 21.0);
    assert_eq!(f.metrics["params_without_grad"], 20.0);
    assert!(
        f.summary
            .starts_with("20 of 21 parameters get no gradient: model.embed_tokens.weight"),
        "{}",
        f.summary
    );
    let no_grad: Vec<&String> = f.details.iter().filter(|d| d.contains("no grad")).collect();
    assert_eq!(no_grad.len(), 20);
    assert!(no_grad
        .iter()
        .any(|d| d.starts_with("model.layers.1.self_attn.q_proj.weight")));
    assert!(f
        .details
        .iter()
        .any(|d| d.starts_with("lm_head.weight") && d.contains("grad norm")));
    assert_eq!(f.series[0].labels, ["lm_head.weight"]);
}
