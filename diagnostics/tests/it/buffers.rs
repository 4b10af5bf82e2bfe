//! Variables that are not parameters: candle's BatchNorm running statistics, frozen weights.
//!
//! The models here are written as a user writes them, with plain `candle_nn` layers (no traced
//! wrappers, no zoo helpers).

use candle_core::{DType, Device, Module, ModuleT, Result, Tensor};
use candle_nn::{
    batch_norm, conv2d, linear, BatchNorm, BatchNormConfig, Conv2d, Conv2dConfig, Embedding, Init,
    Linear, VarBuilder, VarMap,
};
use mldebug_diagnostics::checks::{buffers, grad_flow, overfit, Fresh};
use mldebug_diagnostics::harness::classification_batch;
use mldebug_diagnostics::zoo::data;
use mldebug_diagnostics::{
    run_checks, Batch, CheckId, DebugModel, Options, ParamStore, Progress, Status,
};
use std::sync::{Arc, Mutex};

/// The classifier from the report: linear → BatchNorm(64) → ReLU → linear.
struct BnNet {
    fc1: Linear,
    bn: BatchNorm,
    fc2: Linear,
}

impl DebugModel for BnNet {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(BnNet {
            fc1: linear(20, 64, vb.pp("fc1"))?,
            bn: batch_norm(64, BatchNormConfig::default(), vb.pp("bn"))?,
            fc2: linear(64, 4, vb.pp("fc2"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        classification_batch(&[32, 20], 4, device, seed)
    }
    fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {
        let h = self.fc1.forward(input)?;
        let h = self.bn.forward_t(&h, train)?.relu()?;
        self.fc2.forward(&h)
    }
}

#[test]
fn a_users_batchnorm_mlp_passes_every_check_and_lists_its_buffers() {
    for seed in 0..3 {
        let opts = Options {
            seed,
            ..Options::default()
        };
        let report = run_checks::<BnNet>(&CheckId::ALL, &opts);
        for f in &report.checks {
            assert!(
                matches!(f.status, Status::Pass | Status::Warn),
                "seed {seed} {}: {}: {}\n{:?}",
                f.check,
                f.status,
                f.summary,
                f.details
            );
        }
        let flow = report.finding(CheckId::GradFlow).unwrap();
        assert_eq!(flow.metrics["params"], 6.0, "{}", flow.summary);
        assert_eq!(flow.metrics["buffers"], 2.0);
        assert!(
            flow.summary
                .ends_with("; 2 buffers not trained: bn.running_mean, bn.running_var"),
            "{}",
            flow.summary
        );
        for b in ["bn.running_mean [64]", "bn.running_var [64]"] {
            let row = flow.details.iter().find(|d| d.starts_with(b)).expect(b);
            assert!(
                row.ends_with("buffer: written by the forward pass, not trained"),
                "{row}"
            );
        }
        // Buffers are not drawn as parameters without a gradient.
        assert!(flow.series[0].labels.iter().all(|l| !l.contains("running")));
    }
}

#[test]
fn the_split_finds_the_running_statistics_and_puts_them_back() -> Result<()> {
    let fresh = Fresh::<BnNet>::new(&Options::default(), 0)?;
    let before = fresh.params.snapshot()?;
    let split = buffers::split(&fresh.model, &fresh.params, &fresh.batch)?;
    assert_eq!(split.buffer_names(), ["bn.running_mean", "bn.running_var"]);
    let params: Vec<&str> = split.params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        params,
        [
            "bn.bias",
            "bn.weight",
            "fc1.bias",
            "fc1.weight",
            "fc2.bias",
            "fc2.weight"
        ]
    );
    // The probing forward wrote the statistics; they are back at their initial values.
    for (name, var) in fresh.params.named() {
        let was = before
            .value(&name)
            .unwrap()
            .flatten_all()?
            .to_vec1::<f32>()?;
        assert_eq!(var.flatten_all()?.to_vec1::<f32>()?, was, "{name}");
    }
    Ok(())
}

/// A var the forward never uses is still a parameter without a gradient: a real finding.
struct BnWithUnused {
    net: BnNet,
    _unused: Linear,
}

impl DebugModel for BnWithUnused {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(BnWithUnused {
            net: BnNet::build(vb.clone())?,
            _unused: linear(64, 8, vb.pp("unused"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        BnNet::batch(device, seed)
    }
    fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {
        self.net.forward(input, train)
    }
}

#[test]
fn an_unused_layer_beside_batchnorm_still_fails_grad_flow() -> Result<()> {
    let f = grad_flow::grad_flow::<BnWithUnused>(&Options::default())?;
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary
            .starts_with("2 of 8 parameters get no gradient: none reaches `unused`"),
        "{}",
        f.summary
    );
    assert_eq!(f.metrics["buffers"], 2.0);
    Ok(())
}

/// A frozen pretrained embedding: registered in the VarBuilder, read through `detach`.
struct Frozen<const DECLARED: bool> {
    embed: Embedding,
    head: Linear,
}

impl<const DECLARED: bool> DebugModel for Frozen<DECLARED> {
    fn build(vb: VarBuilder) -> Result<Self> {
        let table = vb.get_with_hints(
            (10, 16),
            "embed.weight",
            Init::Randn {
                mean: 0.0,
                stdev: 1.0,
            },
        )?;
        Ok(Frozen {
            embed: Embedding::new(table.detach(), 16),
            head: linear(16, 10, vb.pp("head"))?,
        })
    }
    fn batch(device: &Device, _seed: u64) -> Result<Batch> {
        let ids: Vec<u32> = (0..20).map(|i| i % 10).collect();
        let targets: Vec<i64> = (0..20).map(|i| (i % 10) as i64).collect();
        Ok(Batch {
            input: Tensor::new(ids.as_slice(), device)?,
            targets: Tensor::new(targets.as_slice(), device)?,
        })
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.head.forward(&self.embed.forward(input)?)
    }
    fn buffers() -> Vec<String> {
        if DECLARED {
            vec!["embed.".to_string()]
        } else {
            Vec::new()
        }
    }
}

#[test]
fn a_frozen_embedding_fails_unless_the_model_declares_it() -> Result<()> {
    let undeclared = grad_flow::grad_flow::<Frozen<false>>(&Options::default())?;
    assert_eq!(undeclared.status, Status::Fail, "{}", undeclared.summary);
    assert!(
        undeclared.summary.contains("no gradient") && undeclared.summary.contains("`embed`"),
        "{}",
        undeclared.summary
    );

    let declared = grad_flow::grad_flow::<Frozen<true>>(&Options::default())?;
    assert_eq!(declared.status, Status::Pass, "{}", declared.summary);
    assert!(declared.details.iter().any(|d| {
        d
        == "embed.weight [10, 16]: buffer: declared by the model (DebugModel::buffers), not trained"
    }));
    Ok(())
}

/// A frozen layer used in the graph (it gets a gradient) but declared: never stepped.
struct FrozenInGraph {
    frozen: Linear,
    head: Linear,
}

impl DebugModel for FrozenInGraph {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(FrozenInGraph {
            frozen: linear(20, 32, vb.pp("frozen"))?,
            head: linear(32, 4, vb.pp("head"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        classification_batch(&[32, 20], 4, device, seed)
    }
    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.head.forward(&self.frozen.forward(input)?.relu()?)
    }
    fn buffers() -> Vec<String> {
        vec![
            "frozen.weight".into(),
            "frozen.bias".into(),
            "typo.weight".into(),
        ]
    }
}

#[test]
fn the_optimizer_steps_parameters_only_and_overfit_on_restores_buffers() -> Result<()> {
    // A user's VarMap, as in a training script.
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    let model = FrozenInGraph::build(vb)?;
    let store = ParamStore::from_varmap(&varmap);
    let batch = FrozenInGraph::batch(&Device::Cpu, 0)?;
    let var = |n: &str| store.named().into_iter().find(|(k, _)| k == n).unwrap().1;
    let (frozen, head) = (var("frozen.weight"), var("head.weight"));
    let frozen0 = frozen.flatten_all()?.to_vec1::<f32>()?;
    let head0 = head.flatten_all()?.to_vec1::<f32>()?;
    // During training (seen from the progress callback): the head moves, the frozen layer never.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (f2, h2, f0, h0) = (frozen.clone(), head.clone(), frozen0.clone(), head0.clone());
    let opts = Options {
        steps: 5,
        progress: Some(Progress(Arc::new(move |ev| {
            let f = f2.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let h = h2.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            log.lock().unwrap().push((ev.step, f == f0, h == h0));
        }))),
        ..Options::default()
    };
    overfit::overfit_on(&model, &store, &batch, &opts)?;
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(
        seen.iter().all(|&(_, frozen_same, _)| frozen_same),
        "{seen:?}"
    );
    assert!(
        seen.iter().skip(1).all(|&(_, _, head_same)| !head_same),
        "{seen:?}"
    );
    // And everything is back afterwards.
    assert_eq!(head.flatten_all()?.to_vec1::<f32>()?, head0);

    let flow = grad_flow::grad_flow_on(&model, &store, &batch, &Options::default())?;
    assert!(flow
        .details
        .iter()
        .any(|d| d
            == "DebugModel::buffers names `typo.weight`, which matches no variable of the model"));
    Ok(())
}

#[test]
fn overfit_on_puts_the_running_statistics_back() -> Result<()> {
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    let model = BnNet::build(vb)?;
    let store = ParamStore::from_varmap(&varmap);
    let batch = BnNet::batch(&Device::Cpu, 1)?;
    let mean0 = model.bn.running_mean().to_vec1::<f32>()?;
    let f = overfit::overfit_on(&model, &store, &batch, &Options::default())?;
    assert!(
        matches!(f.status, Status::Pass | Status::Warn),
        "{}",
        f.summary
    );
    assert_eq!(model.bn.running_mean().to_vec1::<f32>()?, mean0);
    // A training forward on its own does move them (so the restore above did something).
    model.forward(&batch.input, true)?;
    assert_ne!(model.bn.running_mean().to_vec1::<f32>()?, mean0);
    Ok(())
}

/// A batch-norm CNN fed raw 0-255 pixels: the batch norm after the first convolution makes
/// training see normalised activations, so the loss at init is near ln C; in evaluation mode
/// the running statistics (not estimated yet) would leave the activations in the hundreds.
struct RawPixelsBnCnn {
    conv: Conv2d,
    bn: BatchNorm,
    fc: Linear,
}

impl DebugModel for RawPixelsBnCnn {
    fn build(vb: VarBuilder) -> Result<Self> {
        let cfg = Conv2dConfig {
            padding: 1,
            ..Default::default()
        };
        Ok(RawPixelsBnCnn {
            conv: conv2d(1, 8, 3, cfg, vb.pp("conv"))?,
            bn: batch_norm(8, BatchNormConfig::default(), vb.pp("bn"))?,
            fc: linear(8 * 8 * 8, 4, vb.pp("fc"))?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        Ok(Batch {
            input: data::pixels(seed, &[32, 1, 8, 8], device)?,
            targets: data::balanced_labels(seed, 32, 4, device)?,
        })
    }
    fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {
        let h = self
            .bn
            .forward_t(&self.conv.forward(input)?, train)?
            .relu()?;
        self.fc.forward(&h.flatten_from(1)?)
    }
}

#[test]
fn init_loss_measures_the_loss_training_sees_not_unestimated_running_statistics() {
    for seed in 0..3 {
        let opts = Options {
            seed,
            ..Options::default()
        };
        let report = run_checks::<RawPixelsBnCnn>(&CheckId::ALL, &opts);
        for f in &report.checks {
            assert!(
                matches!(f.status, Status::Pass | Status::Warn),
                "seed {seed} {}: {}: {}",
                f.check,
                f.status,
                f.summary
            );
        }
    }
}

/// An integer variable (a step counter kept in the VarBuilder) is a buffer, not a parameter
/// without a gradient.
struct WithCounter {
    net: BnNet,
    _steps: Tensor,
}

impl DebugModel for WithCounter {
    fn build(vb: VarBuilder) -> Result<Self> {
        Ok(WithCounter {
            net: BnNet::build(vb.clone())?,
            _steps: vb.get_with_hints_dtype(1, "steps", Init::Const(0.0), DType::U32)?,
        })
    }
    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        BnNet::batch(device, seed)
    }
    fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {
        self.net.forward(input, train)
    }
}

#[test]
fn an_integer_variable_is_a_buffer() -> Result<()> {
    let f = grad_flow::grad_flow::<WithCounter>(&Options::default())?;
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert_eq!(f.metrics["buffers"], 3.0);
    assert!(f
        .details
        .iter()
        .any(|d| d == "steps [1]: buffer: integer values, cannot be trained"));
    Ok(())
}

#[test]
fn batch_norm_on_4d_input_without_affine_passes_every_check() {
    use mldebug_diagnostics::zoo::batch_norm::BnCnn;
    // Three seeds: the zoo's BatchNorm CNN (affine) runs over five in the zoo matrix.
    for seed in 0..3 {
        let opts = Options {
            seed,
            ..Options::default()
        };
        let report = run_checks::<BnCnn<false>>(&CheckId::ALL, &opts);
        for f in &report.checks {
            assert!(
                matches!(f.status, Status::Pass | Status::Warn),
                "seed {seed} {}: {}: {}",
                f.check,
                f.status,
                f.summary
            );
        }
        let flow = report.finding(CheckId::GradFlow).unwrap();
        assert_eq!(flow.metrics["buffers"], 4.0, "{}", flow.summary);
    }
}

/// The same network through `debug_model!`, its train/eval forward named with `forward_t`.
struct MacroBnNet(BnNet);

impl MacroBnNet {
    fn new(vb: VarBuilder) -> Result<Self> {
        Ok(MacroBnNet(BnNet::build(vb)?))
    }
    fn forward_t(&self, xs: &Tensor, train: bool) -> Result<Tensor> {
        self.0.forward(xs, train)
    }
}

mldebug_diagnostics::debug_model!(
    MacroBnNet,
    new = MacroBnNet::new,
    input = [32, 20],
    classes = 4,
    forward_t = MacroBnNet::forward_t,
);

#[test]
fn debug_model_passes_the_training_flag_with_forward_t() -> Result<()> {
    let fresh = Fresh::<MacroBnNet>::new(&Options::default(), 0)?;
    let mean0 = fresh.model.0.bn.running_mean().to_vec1::<f32>()?;
    DebugModel::forward(&fresh.model, &fresh.batch.input, false)?;
    assert_eq!(
        fresh.model.0.bn.running_mean().to_vec1::<f32>()?,
        mean0,
        "eval"
    );
    DebugModel::forward(&fresh.model, &fresh.batch.input, true)?;
    assert_ne!(
        fresh.model.0.bn.running_mean().to_vec1::<f32>()?,
        mean0,
        "train"
    );
    let report = run_checks::<MacroBnNet>(&CheckId::ALL, &Options::default());
    assert!(report
        .checks
        .iter()
        .all(|f| f.status != Status::Fail && f.status != Status::Error));
    Ok(())
}
