//! The `error` case of `mldebug check`: a model that fails at run time (here: a forward pass
//! that returns a shape error, and one that panics) gives `error` findings, the report says so,
//! and the exit code is 4. The zoo has no broken model, so this drives the same code the CLI
//! runs (`run_checks`, the report renderer, the exit mapping) on models defined here.

use mldebug::commands::check::exit_for;
use mldebug::render::{report, style::Style};
use mldebug::Exit;
use mldebug_diagnostics::candle_core::{DType, Device, Result, Tensor};
use mldebug_diagnostics::candle_nn::{self, Module, VarBuilder};
use mldebug_diagnostics::{run_checks, Batch, CheckId, DebugModel, Options, Status};

/// A linear layer whose forward asks for a shape the input does not have.
struct WrongShape {
    layer: candle_nn::Linear,
}

impl DebugModel for WrongShape {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(WrongShape {
            layer: candle_nn::linear(8, 4, vb.pp("fc"))?,
        })
    }
    fn batch(device: &Device, _seed: u64) -> Result<Batch> {
        Ok(Batch {
            input: Tensor::ones((16, 8), DType::F32, device)?,
            targets: Tensor::zeros(16, DType::I64, device)?,
        })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.layer
            .forward(&input.reshape((16, 2, 4))?.transpose(1, 2)?)?
            .reshape((16, 3))
    }
}

/// A model whose forward panics.
struct Panics;

impl DebugModel for Panics {
    fn build(_vb: VarBuilder) -> Result<Self> {
        Ok(Panics)
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        WrongShape::batch(device, seed)
    }
    fn forward(&self, _input: &Tensor, _train: bool) -> Result<Tensor> {
        panic!("index out of range in the embedding")
    }
}

fn opts() -> Options {
    // candle attaches a backtrace to its errors when RUST_BACKTRACE is set; the snapshot is of
    // the report, not of this machine's stack. (Read once, before the first error is built.)
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    Options {
        model_label: "crate::Broken".into(),
        ..Options::default()
    }
}

#[test]
fn a_model_error_is_an_error_finding_and_exit_4() {
    let r = run_checks::<WrongShape>(&[CheckId::InitLoss, CheckId::ClassBalance], &opts());
    assert_eq!(r.checks[0].status, Status::Error);
    assert_eq!(exit_for(&r), Exit::ModelError);
    let text = report::render(&r, &Style::plain());
    assert!(text.contains("error init-loss:"), "{text}");
    insta::assert_snapshot!("check_error_wrong_shape", text);
}

#[test]
fn a_panic_is_an_error_finding_and_the_other_checks_still_run() {
    let r = run_checks::<Panics>(&[CheckId::InitLoss, CheckId::ClassBalance], &opts());
    assert_eq!(r.checks.len(), 2);
    assert_eq!(r.checks[0].status, Status::Error);
    assert!(
        r.checks[0].summary.contains("index out of range"),
        "{:?}",
        r.checks[0]
    );
    assert_ne!(
        r.checks[1].status,
        Status::Error,
        "class-balance needs no forward pass"
    );
    assert_eq!(exit_for(&r), Exit::ModelError);
    let text = report::render(&r, &Style::plain());
    insta::assert_snapshot!("check_error_panic", text);
}

#[test]
fn error_outranks_fail_and_warn_or_skipped_exit_0() {
    use mldebug_diagnostics::{Finding, Report};
    let with = |statuses: &[Status]| Report {
        model: "zoo::mlp".into(),
        device: "cpu".into(),
        seed: 0,
        checks: statuses
            .iter()
            .map(|&s| Finding::new(CheckId::InitLoss, s, ""))
            .collect(),
    };
    assert_eq!(
        exit_for(&with(&[Status::Pass, Status::Warn, Status::Skipped])),
        Exit::Ok
    );
    assert_eq!(exit_for(&with(&[Status::Pass, Status::Fail])), Exit::Failed);
    assert_eq!(
        exit_for(&with(&[Status::Fail, Status::Error])),
        Exit::ModelError
    );
    assert_eq!(exit_for(&with(&[])), Exit::Ok);
}
