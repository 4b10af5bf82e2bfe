//! A model that errors or panics gives `error` for the checks it breaks, normal findings for the
//! rest, and never stops `run_checks`.

use candle_core::{Device, Module, Result, Tensor};
use candle_nn::{Linear, VarBuilder};
use mldebug_diagnostics::rng::SeededRng;
use mldebug_diagnostics::{run_checks, Batch, CheckId, DebugModel, Options, Report, Status};

/// How the test model breaks.
trait Breakage: 'static {
    fn forward(layer: &Linear, input: &Tensor) -> Result<Tensor>;
    fn batch_panics() -> bool {
        false
    }
    fn loss(output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        mldebug_diagnostics::checks::loss::masked_cross_entropy(output, targets)
    }
}

struct Net<B: Breakage> {
    layer: Linear,
    _b: std::marker::PhantomData<B>,
}

impl<B: Breakage> DebugModel for Net<B> {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(Net {
            layer: candle_nn::linear(4, 3, vb.pp("layer"))?,
            _b: std::marker::PhantomData,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        assert!(!B::batch_panics(), "the data loader fell over");
        let mut rng = SeededRng::derive(seed, "test");
        Ok(Batch {
            input: rng.normal_tensor((6, 4), 0.0, 1.0, candle_core::DType::F32, device)?,
            targets: Tensor::new(&[0i64, 1, 2, 0, 1, 2], device)?,
        })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        B::forward(&self.layer, input)
    }
    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        B::loss(output, targets)
    }
}

struct ForwardErrors;
impl Breakage for ForwardErrors {
    fn forward(_: &Linear, _: &Tensor) -> Result<Tensor> {
        candle_core::bail!("forward failed on purpose")
    }
}

struct ForwardPanics;
impl Breakage for ForwardPanics {
    fn forward(_: &Linear, _: &Tensor) -> Result<Tensor> {
        let v: Vec<usize> = Vec::new();
        panic!("forward panicked on purpose ({} layers)", v.len())
    }
}

struct BatchPanics;
impl Breakage for BatchPanics {
    fn forward(layer: &Linear, input: &Tensor) -> Result<Tensor> {
        layer.forward(input)
    }
    fn batch_panics() -> bool {
        true
    }
}

/// Checks that never call `forward`.
const NO_FORWARD: [CheckId; 1] = [CheckId::ClassBalance];

fn run<M: DebugModel>() -> Report {
    run_checks::<M>(&CheckId::ALL, &Options::default())
}

fn assert_breaks_forward(report: &Report, message: &str) {
    assert_eq!(
        report.checks.len(),
        CheckId::ALL.len(),
        "every check reported"
    );
    for f in &report.checks {
        if NO_FORWARD.contains(&f.check) {
            assert_eq!(f.status, Status::Pass, "{}: {}", f.check, f.summary);
        } else {
            assert_eq!(f.status, Status::Error, "{}: {}", f.check, f.summary);
            assert!(f.summary.contains(message), "{}: {}", f.check, f.summary);
            assert_eq!(f.entry, f.check.entry());
            assert!(f.next.starts_with("mldebug check "), "{}", f.next);
        }
    }
    assert_eq!(report.exit_status(), 4);
}

#[test]
fn a_forward_error_is_an_error_finding_and_the_rest_still_run() {
    let report = run::<Net<ForwardErrors>>();
    assert_breaks_forward(
        &report,
        "the model returned an error: forward failed on purpose",
    );
}

#[test]
fn a_forward_panic_is_an_error_finding_with_its_message_and_place() {
    let report = run::<Net<ForwardPanics>>();
    assert_breaks_forward(
        &report,
        "the model panicked: forward panicked on purpose (0 layers)",
    );
    let f = report.finding(CheckId::Overfit).unwrap();
    assert!(f.summary.contains("check_errors.rs:"), "{}", f.summary);
}

#[test]
fn a_panicking_data_loader_breaks_every_check() {
    let report = run::<Net<BatchPanics>>();
    for f in &report.checks {
        assert_eq!(f.status, Status::Error, "{}: {}", f.check, f.summary);
        assert!(
            f.summary.contains("the data loader fell over"),
            "{}",
            f.summary
        );
    }
}

struct PerSampleLoss;
impl Breakage for PerSampleLoss {
    fn forward(layer: &Linear, input: &Tensor) -> Result<Tensor> {
        layer.forward(input)
    }
    fn loss(output: &Tensor, _targets: &Tensor) -> Result<Tensor> {
        // Forgot the reduction: one loss per sample.
        output.sqr()?.sum(1)
    }
}

#[test]
fn a_loss_that_is_not_one_number_is_named_as_such() {
    let report = run::<Net<PerSampleLoss>>();
    for id in [CheckId::InitLoss, CheckId::Overfit, CheckId::LabelMask] {
        let f = report.finding(id).unwrap();
        assert_eq!(f.status, Status::Error, "{id}: {}", f.summary);
        assert!(
            f.summary.contains(
                "the loss must be one number (reduce it with a mean), got a tensor of shape [6]"
            ),
            "{id}: {}",
            f.summary
        );
    }
    assert_eq!(
        report.finding(CheckId::BatchLeak).unwrap().status,
        Status::Pass
    );
}
