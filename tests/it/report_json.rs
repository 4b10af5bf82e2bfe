//! A report survives the trip from a harness to the CLI: written with `report_to_json` (what a
//! harness child writes and `--json` prints), read with `report_from_json` (what the CLI reads
//! back), whatever its numbers are, NaN and infinities included.

use mldebug_diagnostics::candle_core::{Device, Result, Tensor};
use mldebug_diagnostics::candle_nn::{linear, Linear, Module, VarBuilder};
use mldebug_diagnostics::harness::{classification_batch, report_from_json, report_to_json};
use mldebug_diagnostics::{run_checks, zoo, Batch, CheckId, DebugModel, Options, Report, Status};
use std::process::Command;

/// Equal, NaN equal to NaN. serde_json's default float parser may land one unit in the last
/// place away from the written value, so finite numbers may differ by a few parts in 1e16.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-15 * a.abs().max(b.abs())
}

/// Every field equal, numbers compared with [`same`]; returns how many non-finite numbers
/// the report holds.
fn assert_same(a: &Report, b: &Report, what: &str) -> usize {
    assert_eq!(
        (&a.model, &a.device, a.seed),
        (&b.model, &b.device, b.seed),
        "{what}"
    );
    assert_eq!(a.checks.len(), b.checks.len(), "{what}");
    let mut non_finite = 0;
    for (x, y) in a.checks.iter().zip(&b.checks) {
        let at = format!("{what} {}", x.check);
        assert_eq!((x.check, x.status), (y.check, y.status), "{at}");
        assert_eq!((&x.summary, &x.details), (&y.summary, &y.details), "{at}");
        assert_eq!((&x.entry, &x.next), (&y.entry, &y.next), "{at}");
        assert_eq!(
            x.metrics.keys().collect::<Vec<_>>(),
            y.metrics.keys().collect::<Vec<_>>(),
            "{at}"
        );
        for (k, v) in &x.metrics {
            assert!(same(*v, y.metrics[k]), "{at} {k}: {v} != {}", y.metrics[k]);
            non_finite += usize::from(!v.is_finite());
        }
        assert_eq!(x.series.len(), y.series.len(), "{at}");
        for (s, t) in x.series.iter().zip(&y.series) {
            assert_eq!((&s.name, &s.labels), (&t.name, &t.labels), "{at}");
            assert_eq!(s.points.len(), t.points.len(), "{at}");
            for (p, q) in s.points.iter().zip(&t.points) {
                assert!(same(p[0], q[0]) && same(p[1], q[1]), "{at}: {p:?} != {q:?}");
                non_finite += p.iter().filter(|v| !v.is_finite()).count();
            }
        }
    }
    non_finite
}

/// Through the harness's JSON and back.
fn round_trip(report: &Report, what: &str) -> (Report, String) {
    let text = report_to_json(report).unwrap_or_else(|e| panic!("{what}: {e}"));
    let back = report_from_json(&text).unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
    (back, text)
}

#[test]
fn every_zoo_model_reads_back_exactly_as_the_harness_wrote_it() {
    let mut non_finite = 0;
    // Seed 0's reports, which the zoo matrix reads too (run once for both).
    for model in zoo::all() {
        let report = super::zoo_runs::report(model, 0);
        let (back, text) = round_trip(&report, model.name);
        assert!(!text.contains("null"), "{}: a null in\n{text}", model.name);
        non_finite += assert_same(&report, &back, model.name);
        // The statuses a harness reports are the ones the in-process run found.
        let statuses = |r: &Report| r.checks.iter().map(|f| f.status).collect::<Vec<_>>();
        assert_eq!(statuses(&report), statuses(&back), "{}", model.name);
    }
    assert!(
        non_finite > 0,
        "the zoo's NaN twins give non-finite numbers"
    );
}

/// A log-sum-exp written by hand without subtracting the max, on large logits: `exp`
/// overflows, the loss is +inf at init and its gradients NaN.
struct NaiveLogSumExp {
    fc: Linear,
}

impl DebugModel for NaiveLogSumExp {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(NaiveLogSumExp {
            fc: linear(8, 4, vb.pp("fc"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        classification_batch(&[16, 8], 4, device, seed)
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.fc.forward(&(input * 100.0)?)
    }
    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        let lse = output.exp()?.sum_keepdim(1)?.log()?;
        let picked = output.gather(&targets.unsqueeze(1)?, 1)?;
        (lse - picked)?.mean_all()
    }
}

#[test]
fn a_loss_that_overflows_keeps_its_nan_and_inf_through_the_json() {
    let report = run_checks::<NaiveLogSumExp>(&CheckId::ALL, &Options::default());
    let init = report.finding(CheckId::InitLoss).unwrap();
    assert_eq!(init.status, Status::Fail, "{}", init.summary);
    assert!(!init.metrics["loss"].is_finite(), "{:?}", init.metrics);
    let overfit = report.finding(CheckId::Overfit).unwrap();
    assert_eq!(overfit.status, Status::Fail, "{}", overfit.summary);
    assert!(
        overfit.summary.starts_with("numerics"),
        "{}",
        overfit.summary
    );
    assert!(
        overfit.series[0].points.iter().any(|p| !p[1].is_finite()),
        "{:?}",
        overfit.series[0].points
    );
    assert!(report.checks.iter().all(|f| f.status != Status::Error));

    let (back, text) = round_trip(&report, "naive log-sum-exp");
    assert!(
        text.contains("\"loss\": \"NaN\"") || text.contains("\"loss\": \"inf\""),
        "{text}"
    );
    assert!(!text.contains("null"), "{text}");
    assert!(assert_same(&report, &back, "naive log-sum-exp") >= 2);
}

#[test]
fn the_clis_json_is_the_harness_json() {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args([
            "--json",
            "check",
            "all",
            "--model",
            "zoo::tiny-gpt-mask-times-inf",
            // The curves too: without it they are left out of the document.
            "--series",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\"NaN\""), "{text}");
    let cli = report_from_json(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(text.contains("\"command\": \"check\""), "{text}");
    let model = zoo::find("tiny-gpt-mask-times-inf").unwrap();
    let opts = Options {
        model_label: "zoo::tiny-gpt-mask-times-inf".into(),
        ..Options::default()
    };
    let in_process = (model.run)(&CheckId::ALL, &opts);
    assert!(assert_same(&in_process, &cli, "--json") > 0);
}
