//! Each check on small hand-made models, for the cases the zoo does not cover: the `_on`
//! variants restore parameters, cuts are named, `skipped` is used when a check cannot judge.

use candle_core::{DType, Device, Module, Result, Tensor, D};
use candle_nn::{Embedding, Linear, VarBuilder};
use mldebug_diagnostics::checks::{
    batch_leak, class_balance, grad_flow, init_loss, label_mask, nan_trace, overfit, Fresh,
};
use mldebug_diagnostics::nn::{self, Traced};
use mldebug_diagnostics::rng::SeededRng;
use mldebug_diagnostics::{Batch, CheckId, DebugModel, Options, Progress, Status, Task};
use std::sync::{Arc, Mutex};

fn opts() -> Options {
    Options::default()
}

fn normal(seed: u64, shape: (usize, usize), device: &Device) -> Result<Tensor> {
    SeededRng::derive(seed, "input").normal_tensor(shape, 0.0, 1.0, DType::F32, device)
}

/// A two-layer classifier with knobs for the cases below.
struct Small<const UNUSED: bool, const NORM: bool, const OVERFLOW: bool> {
    l1: Traced<Linear>,
    norm: Option<Traced<candle_nn::LayerNorm>>,
    l2: Traced<Linear>,
    // Built (so its parameters exist) and never used.
    _unused: Option<Traced<Linear>>,
}

impl<const UNUSED: bool, const NORM: bool, const OVERFLOW: bool> DebugModel
    for Small<UNUSED, NORM, OVERFLOW>
{
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(Small {
            l1: nn::linear(4, 32, vb.pp("l1"))?,
            norm: if NORM {
                Some(nn::layer_norm(32, 1e-5, vb.pp("norm"))?)
            } else {
                None
            },
            l2: nn::linear(32, 3, vb.pp("l2"))?,
            _unused: if UNUSED {
                Some(nn::linear(32, 8, vb.pp("unused"))?)
            } else {
                None
            },
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        Ok(Batch {
            input: normal(seed, (12, 4), device)?,
            targets: Tensor::new(&[0i64, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2], device)?,
        })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        let mut h = self.l1.forward(input)?.relu()?;
        if let Some(norm) = &self.norm {
            // candle's LayerNorm on a contiguous input takes the fused kernel: no backward.
            h = norm.forward(&h)?;
        }
        if OVERFLOW {
            // Beyond f32's range: inf (and NaN where h is 0), in an untraced op.
            h = (h * 1e39)?;
        }
        self.l2.forward(&h)
    }
}

type Plain = Small<false, false, false>;

#[test]
fn overfit_on_restores_the_callers_parameters_and_reports_progress() -> Result<()> {
    let fresh = Fresh::<Plain>::new(&opts(), 0)?;
    let before: Vec<Vec<f32>> = fresh
        .params
        .vars()
        .iter()
        .map(|v| v.flatten_all()?.to_vec1::<f32>())
        .collect::<Result<_>>()?;
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let o = Options {
        progress: Some(Progress(Arc::new(move |e| sink.lock().unwrap().push(e)))),
        ..opts()
    };
    let f = overfit::overfit_on(&fresh.model, &fresh.params, &fresh.batch, &o)?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    let after: Vec<Vec<f32>> = fresh
        .params
        .vars()
        .iter()
        .map(|v| v.flatten_all()?.to_vec1::<f32>())
        .collect::<Result<_>>()?;
    assert_eq!(before, after, "parameters restored");
    let events = events.lock().unwrap();
    assert!(events.len() > 5, "progress reported per step");
    assert!(events
        .iter()
        .all(|e| e.check == CheckId::Overfit && e.loss.is_some()));
    // The loss curve is a series.
    assert_eq!(f.series[0].name, "loss");
    assert_eq!(f.series[0].points.len(), events.len());
    Ok(())
}

#[test]
fn grad_flow_names_an_unused_parameter_as_not_in_the_graph() -> Result<()> {
    let f = grad_flow::grad_flow::<Small<true, false, false>>(&opts())?;
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary
            .starts_with("2 of 6 parameters get no gradient: none reaches `unused`"),
        "{}",
        f.summary
    );
    assert!(f
        .details
        .iter()
        .any(|d| d.trim_start().starts_with("unused.weight [8, 32]: no grad")));
    Ok(())
}

#[test]
fn grad_flow_names_the_module_that_cuts_the_graph() -> Result<()> {
    let f = grad_flow::grad_flow::<Small<false, true, false>>(&opts())?;
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary.contains("the graph is cut at norm"),
        "{}",
        f.summary
    );
    assert!(
        f.summary.contains("everything up to `norm`") && f.summary.contains("`l2` does"),
        "{}",
        f.summary
    );
    assert_eq!(f.metrics["graph_cuts"], 1.0);
    // The gradient-norm series lists every parameter; those behind the cut say they got none.
    assert_eq!(
        f.series[0].labels,
        // In the order the model creates its parameters, as the summary and rows list them.
        [
            "l1.weight (no gradient)",
            "l1.bias (no gradient)",
            "norm.weight (no gradient)",
            "norm.bias (no gradient)",
            "l2.weight",
            "l2.bias"
        ]
    );
    Ok(())
}

#[test]
fn nan_trace_names_the_first_overflowing_module_and_the_frames_before() -> Result<()> {
    let f = nan_trace::nan_trace::<Small<false, false, true>>(&opts())?;
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary.starts_with("step 0: first non-finite value"),
        "{}",
        f.summary
    );
    assert!(f.summary.contains("`l2` (linear) [12, 3]"), "{}", f.summary);
    let table = f.details.join("\n");
    assert!(table.contains(" input (batch) [12, 4]"), "{table}");
    assert!(table.contains(" l1 (linear) [12, 32]"), "{table}");
    assert!(
        table.trim_end().ends_with("<-- first non-finite"),
        "{table}"
    );
    Ok(())
}

#[test]
fn nan_trace_passes_a_clean_model() -> Result<()> {
    let f = nan_trace::nan_trace::<Plain>(&opts())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert_eq!(f.metrics["traced_modules"], 2.0);
    Ok(())
}

/// A bag-of-tokens language model: embedding, then a linear layer per position.
struct TinyLm<const LOSS: u8, const UNSHIFTED: bool> {
    embed: Embedding,
    out: Linear,
}

const DEFAULT_LOSS: u8 = 0;
/// candle's cross_entropy, which has no ignore index.
const CANDLE_CE: u8 = 1;
/// Sum over kept targets divided by their count, without guarding 0/0 (PyTorch's mean).
const NAIVE_MEAN: u8 = 2;
/// Every position counts, masked or not (targets clamped to 0).
const IGNORES_MASK: u8 = 3;

const VOCAB: usize = 11;

impl<const LOSS: u8, const UNSHIFTED: bool> DebugModel for TinyLm<LOSS, UNSHIFTED> {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(TinyLm {
            embed: candle_nn::embedding(VOCAB, 8, vb.pp("embed"))?,
            out: candle_nn::linear(8, VOCAB, vb.pp("out"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let mut rng = SeededRng::derive(seed, "tokens");
        let ids: Vec<i64> = (0..4 * 6)
            .map(|_| 1 + rng.below(VOCAB as u64 - 1) as i64)
            .collect();
        let targets: Vec<i64> = if UNSHIFTED {
            ids.clone()
        } else {
            ids.chunks(6)
                .flat_map(|r| r[1..].iter().copied().chain([-100]))
                .collect()
        };
        Ok(Batch {
            input: Tensor::from_vec(ids, (4, 6), device)?,
            targets: Tensor::from_vec(targets, (4, 6), device)?,
        })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.out.forward(&self.embed.forward(input)?)
    }
    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        let logits = output.flatten_to(1)?;
        let t = targets.flatten_all()?;
        match LOSS {
            CANDLE_CE => candle_nn::loss::cross_entropy(&logits, &t.to_dtype(DType::U32)?),
            NAIVE_MEAN => {
                let keep = t.ne(-100i64)?;
                let safe = keep
                    .where_cond(&t, &t.zeros_like()?)?
                    .to_dtype(DType::U32)?;
                let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
                let picked = logp.gather(&safe.unsqueeze(1)?, 1)?.squeeze(1)?;
                let keep = keep.to_dtype(DType::F32)?;
                (picked * &keep)?.sum_all()?.neg()? / keep.sum_all()?
            }
            IGNORES_MASK => {
                let safe = t.clamp(0i64, VOCAB as i64)?.to_dtype(DType::U32)?;
                candle_nn::loss::cross_entropy(&logits, &safe)
            }
            _ => mldebug_diagnostics::checks::loss::masked_cross_entropy(output, targets),
        }
    }
    fn task() -> Task {
        Task::CausalLm
    }
}

#[test]
fn label_mask_passes_a_correct_lm() -> Result<()> {
    let f = label_mask::label_mask::<TinyLm<DEFAULT_LOSS, false>>(&opts())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert_eq!(f.metrics["loss_all_masked"], 0.0);
    assert_eq!(f.metrics["masked_logit_effect"], 0.0);
    Ok(())
}

#[test]
fn label_mask_fails_unshifted_labels() -> Result<()> {
    let f = label_mask::label_mask::<TinyLm<DEFAULT_LOSS, true>>(&opts())?;
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.contains("the labels are not shifted by one"),
        "{}",
        f.summary
    );
    assert_eq!(f.metrics["targets_equal_inputs_share"], 1.0);
    Ok(())
}

#[test]
fn label_mask_fails_a_loss_that_cannot_take_minus_100() -> Result<()> {
    let f = label_mask::label_mask::<TinyLm<CANDLE_CE, false>>(&opts())?;
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary
            .starts_with("the loss fails when every target is -100"),
        "{}",
        f.summary
    );
    Ok(())
}

#[test]
fn label_mask_warns_on_nan_for_an_all_masked_batch() -> Result<()> {
    let f = label_mask::label_mask::<TinyLm<NAIVE_MEAN, false>>(&opts())?;
    assert_eq!(f.status, Status::Warn, "{}", f.summary);
    assert!(f.summary.contains("NaN (0/0)"), "{}", f.summary);
    Ok(())
}

#[test]
fn label_mask_fails_a_loss_that_reads_masked_positions() -> Result<()> {
    let f = label_mask::label_mask::<TinyLm<IGNORES_MASK, false>>(&opts())?;
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.starts_with("the loss ignores the mask"),
        "{}",
        f.summary
    );
    assert!(f
        .details
        .iter()
        .any(|d| d.contains("changing logits only at masked positions")));
    Ok(())
}

#[test]
fn batch_leak_passes_a_per_position_lm_and_init_loss_is_near_ln_v() -> Result<()> {
    let f = batch_leak::batch_leak::<TinyLm<DEFAULT_LOSS, false>>(&opts())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert_eq!(f.metrics["past_change"], 0.0);
    let f = init_loss::init_loss::<TinyLm<DEFAULT_LOSS, false>>(&opts())?;
    assert!((f.metrics["expected"] - (VOCAB as f64).ln()).abs() < 1e-12);
    Ok(())
}

/// Ignores its input: the output is a learned constant.
struct Constant {
    bias: Tensor,
}

impl DebugModel for Constant {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(Constant {
            bias: vb.get_with_hints(3, "bias", candle_nn::init::ZERO)?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        Ok(Batch {
            input: normal(seed, (5, 2), device)?,
            targets: Tensor::new(&[1f32, 2., 3., 4., 5.], device)?,
        })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.bias
            .unsqueeze(0)?
            .broadcast_as((input.dim(0)?, 3))?
            .narrow(1, 0, 1)?
            .squeeze(1)
    }
    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        candle_nn::loss::mse(output, targets)
    }
    fn task() -> Task {
        Task::Regression
    }
}

#[test]
fn checks_that_cannot_judge_say_skipped_with_the_reason() -> Result<()> {
    let o = opts();
    let leak = batch_leak::batch_leak::<Constant>(&o)?;
    assert_eq!(leak.status, Status::Skipped);
    assert!(
        leak.summary.contains("did not change its own output"),
        "{}",
        leak.summary
    );
    for f in [
        init_loss::init_loss::<Constant>(&o)?,
        label_mask::label_mask::<Constant>(&o)?,
        class_balance::class_balance::<Constant>(&o)?,
    ] {
        assert_eq!(f.status, Status::Skipped, "{}", f.check);
        assert!(f.summary.starts_with("regression model"), "{}", f.summary);
    }
    let one = Batch {
        input: normal(0, (1, 2), &Device::Cpu)?,
        targets: Tensor::new(&[1f32], &Device::Cpu)?,
    };
    let fresh = Fresh::<Constant>::new(&o, 0)?;
    let f = batch_leak::batch_leak_on(&fresh.model, &one, &o)?;
    assert_eq!(f.status, Status::Skipped);
    // A regression loss that cannot fit varied targets with a constant plateaus.
    let f = overfit::overfit::<Constant>(&o)?;
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(f.summary.starts_with("plateau"), "{}", f.summary);
    Ok(())
}

fn labels(ids: &[i64]) -> Result<Batch> {
    Ok(Batch {
        input: Tensor::zeros((ids.len(), 1), DType::F32, &Device::Cpu)?,
        targets: Tensor::new(ids, &Device::Cpu)?,
    })
}

#[test]
fn class_balance_bands() -> Result<()> {
    let o = opts();
    let mut ids = vec![0i64; 40];
    ids.extend([1, 1, 2, 2, -100]);
    let f = class_balance::class_balance_on(&labels(&ids)?, &o)?;
    assert_eq!(
        (f.status, f.metrics["ratio"]),
        (Status::Warn, 20.0),
        "{}",
        f.summary
    );
    assert_eq!(f.metrics["targets"], 44.0);
    let f = class_balance::class_balance_on(&labels(&[3, 3, 3])?, &o)?;
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("every one of the 3 targets is class 3"));
    let f = class_balance::class_balance_on(&labels(&[0, 1, 2, 1])?, &o)?;
    assert_eq!(f.status, Status::Pass);
    let f = class_balance::class_balance_on(&labels(&[-100, -100])?, &o)?;
    assert_eq!(f.status, Status::Skipped);
    Ok(())
}

#[test]
fn the_same_seed_gives_the_same_findings() {
    let a = mldebug_diagnostics::run_checks::<Plain>(&CheckId::ALL, &opts());
    let b = mldebug_diagnostics::run_checks::<Plain>(&CheckId::ALL, &opts());
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(json, serde_json::to_string(&b).unwrap());
    let back: mldebug_diagnostics::Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.checks.len(), a.checks.len());
    for (x, y) in back.checks.iter().zip(&a.checks) {
        assert_eq!(
            (x.check, x.status, &x.summary),
            (y.check, y.status, &y.summary)
        );
        for (k, v) in &y.metrics {
            let w = x.metrics[k];
            // serde_json parses floats to within one ulp; NaN comes back as NaN.
            assert!(
                v.is_nan() && w.is_nan() || (v - w).abs() <= 1e-12 * v.abs(),
                "{k}: {v} vs {w}"
            );
        }
    }
}

#[test]
fn half_precision_models_are_checked_without_errors() {
    for dtype in [DType::BF16, DType::F16] {
        let o = Options { dtype, ..opts() };
        for f in mldebug_diagnostics::run_checks::<Plain>(&CheckId::ALL, &o).checks {
            assert_ne!(
                f.status,
                Status::Error,
                "{dtype:?} {}: {}",
                f.check,
                f.summary
            );
        }
        for f in
            mldebug_diagnostics::run_checks::<TinyLm<DEFAULT_LOSS, false>>(&CheckId::ALL, &o).checks
        {
            assert_ne!(
                f.status,
                Status::Error,
                "{dtype:?} {}: {}",
                f.check,
                f.summary
            );
        }
    }
}

/// Linear regression on targets a line can fit exactly.
struct LineFit {
    layer: Linear,
}

impl DebugModel for LineFit {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(LineFit {
            layer: candle_nn::linear(3, 1, vb.pp("layer"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let input = normal(seed, (16, 3), device)?;
        let w = Tensor::new(&[[1.5f32], [-2.0], [0.5]], device)?;
        let targets = (input.matmul(&w)? + 0.3)?;
        Ok(Batch { input, targets })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.layer.forward(input)
    }
    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        candle_nn::loss::mse(output, targets)
    }
    fn task() -> Task {
        Task::Regression
    }
}

#[test]
fn regression_models_are_trained_and_traced_like_any_other() {
    let report = mldebug_diagnostics::run_checks::<LineFit>(&CheckId::ALL, &opts());
    let status = |c| report.finding(c).unwrap().status;
    // AdamW at 3e-3 moves each weight by at most ~0.6 in 200 steps; the line needs 2.
    let f = report.finding(CheckId::Overfit).unwrap();
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.starts_with("slow: "), "{}", f.summary);
    assert_eq!(
        f.next,
        "mldebug check overfit --model crate::Net --steps 1000"
    );
    let longer = Options {
        steps: 3000,
        ..opts()
    };
    let f = overfit::overfit::<LineFit>(&longer).unwrap();
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert_eq!(status(CheckId::GradFlow), Status::Pass);
    assert_eq!(status(CheckId::NanTrace), Status::Pass);
    assert_eq!(status(CheckId::BatchLeak), Status::Pass);
    for c in [CheckId::InitLoss, CheckId::LabelMask, CheckId::ClassBalance] {
        assert_eq!(status(c), Status::Skipped, "{c}");
    }
}

#[test]
fn nan_trace_on_and_grad_flow_on_leave_the_parameters_as_they_were() -> Result<()> {
    let fresh = Fresh::<Plain>::new(&opts(), 3)?;
    let values = |p: &mldebug_diagnostics::ParamStore| -> Result<Vec<Vec<f32>>> {
        p.vars()
            .iter()
            .map(|v| v.flatten_all()?.to_vec1::<f32>())
            .collect()
    };
    let before = values(&fresh.params)?;
    let f = nan_trace::nan_trace_on(&fresh.model, &fresh.params, &fresh.batch, &opts())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    let f = grad_flow::grad_flow_on(&fresh.model, &fresh.params, &fresh.batch, &opts())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert_eq!(before, values(&fresh.params)?);
    Ok(())
}

/// Outputs scaled by `SCALE`: near the top of the dtype's range, or not.
struct Loud<const F16: bool> {
    layer: Traced<Linear>,
}

impl<const F16: bool> DebugModel for Loud<F16> {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(Loud {
            layer: nn::linear(4, 3, vb.pp("layer"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        Plain::batch(device, seed)
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        // f32: 1e37 is within 100x of f32's 3.4e38; f16: 2000 is within 100x of 65504.
        self.layer.forward(input)? * if F16 { 2000.0 } else { 1e37 }
    }
}

#[test]
fn nan_trace_warns_when_values_come_near_the_dtypes_limit() -> Result<()> {
    let f = nan_trace::nan_trace::<Loud<false>>(&opts())?;
    assert_eq!(f.status, Status::Warn, "{}", f.summary);
    assert!(
        f.summary.contains("of the F32 limit 3.40e38"),
        "{}",
        f.summary
    );
    assert!(f.metrics["max_abs"] > 3.4e36);
    // The same outputs at 2000 are harmless in f32.
    let f = nan_trace::nan_trace::<Loud<true>>(&opts())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    Ok(())
}

#[test]
fn nan_trace_names_a_parameter_that_the_optimizer_step_made_non_finite() -> Result<()> {
    // A step beyond f32's range: the forward and the gradients are fine, the update is not.
    let reckless = Options {
        learning_rate: 1e39,
        ..opts()
    };
    let f = nan_trace::nan_trace::<Plain>(&reckless)?;
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary
            .starts_with("step 0: first non-finite value (32 of them) in `parameter of l1.bias` after the optimizer step"),
        "{}",
        f.summary
    );
    Ok(())
}

#[test]
fn half_precision_training_steps_through_f32_master_weights() -> Result<()> {
    // Stepping AdamW on f16 weights directly turns a bias element NaN at the first step (its
    // eps is 0 in f16); the checks' optimizer keeps f32 masters, so only the model is judged.
    let half = Options {
        dtype: DType::F16,
        ..opts()
    };
    let f = nan_trace::nan_trace::<Loud<true>>(&half)?;
    assert_eq!(f.status, Status::Warn, "{}", f.summary);
    assert!(
        f.summary.contains("of the F16 limit 6.55e4"),
        "{}",
        f.summary
    );
    let f = overfit::overfit::<Plain>(&half)?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    Ok(())
}
