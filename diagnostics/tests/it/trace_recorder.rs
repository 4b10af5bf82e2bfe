//! The frame recorder and the traced layers: ring size, names, NaN counting, one read-back per
//! step, gradient-cut detection.

use candle_core::{DType, Device, Module, Result, Tensor, Var, D};
use candle_nn::VarBuilder;
use mldebug_diagnostics::init::seeded_var_builder;
use mldebug_diagnostics::model::DebugModel;
use mldebug_diagnostics::nn;
use mldebug_diagnostics::trace::{is_recording, Recorder, DEFAULT_CAPACITY};
use mldebug_diagnostics::zoo::tiny_gpt::{self, TinyGpt};

fn vb(seed: u64) -> (mldebug_diagnostics::init::ParamStore, VarBuilder<'static>) {
    seeded_var_builder(seed, DType::F32, &Device::Cpu)
}

/// The tiny GPT's forward + loss + backward, as one training step would run them.
fn gpt_step(model: &TinyGpt<tiny_gpt::Clean>, seed: u64) -> Result<()> {
    let batch = TinyGpt::<tiny_gpt::Clean>::batch(&Device::Cpu, seed)?;
    let out = model.forward(&batch.input, true)?;
    model.loss(&out, &batch.targets)?.backward()?;
    Ok(())
}

#[test]
fn ring_keeps_the_last_21_frames() -> Result<()> {
    assert_eq!(DEFAULT_CAPACITY, 21);
    let layers: Vec<_> = (0..30)
        .map(|i| nn::traced(format!("layer{i}"), |x: &Tensor| x + 1.0))
        .collect();
    let rec = Recorder::start();
    let mut x = Tensor::zeros(4, DType::F32, &Device::Cpu)?;
    for l in &layers {
        x = l.forward(&x)?;
    }
    let s = rec.end_step()?;
    assert_eq!(s.frames_recorded, 30);
    let frames = rec.frames();
    assert_eq!(frames.len(), 21);
    assert_eq!(frames[0].module, "layer9");
    assert_eq!(frames[20].module, "layer29");
    assert_eq!(frames[20].abs_max, 30.0);
    Ok(())
}

#[test]
fn frames_are_named_from_the_var_builder_prefix() -> Result<()> {
    let (_, vb) = vb(0);
    let enc = vb.pp("encoder");
    let emb = nn::embedding(10, 8, enc.pp("tok"))?;
    let lin = nn::linear(8, 4, enc.pp("layers.0").pp("proj"))?;
    let norm = nn::rms_norm_diff(4, 1e-5, enc.pp("norm"))?;
    let rec = Recorder::start();
    let ids = Tensor::new(&[[1u32, 2, 3]], &Device::Cpu)?;
    norm.forward(&lin.forward(&emb.forward(&ids)?)?)?;
    rec.end_step()?;
    let names: Vec<(String, &str, Vec<usize>)> = rec
        .frames()
        .into_iter()
        .map(|f| (f.module, f.kind, f.shape))
        .collect();
    assert_eq!(
        names,
        vec![
            ("encoder.tok".to_string(), "embedding", vec![1, 3, 8]),
            ("encoder.layers.0.proj".to_string(), "linear", vec![1, 3, 4]),
            ("encoder.norm".to_string(), "rms-norm", vec![1, 3, 4]),
        ]
    );
    assert_eq!(lin.name(), "encoder.layers.0.proj");
    Ok(())
}

#[test]
fn nan_is_counted_even_where_max_all_hides_it() -> Result<()> {
    let x = Tensor::new(&[1f32, f32::NAN, -3.0, f32::NAN], &Device::Cpu)?;
    assert_eq!(x.abs()?.max_all()?.to_scalar::<f32>()?, 3.0, "the trap");
    let ok = nn::traced("fine", |x: &Tensor| x.ones_like());
    let id = nn::traced("passes-nan", |x: &Tensor| Ok(x.clone()));
    let rec = Recorder::start();
    ok.forward(&x)?;
    id.forward(&x)?;
    let s = rec.end_step()?;
    let bad = s.first_non_finite.as_ref().expect("a NaN frame");
    assert_eq!(bad.module, "passes-nan");
    assert_eq!(bad.non_finite, 2);
    assert_eq!(bad.abs_max, 3.0);
    assert_eq!(bad.abs_min, 1.0);
    assert_eq!(s.frames_before.len(), 1);
    assert_eq!(s.frames_before[0].module, "fine");
    assert_eq!(s.max_abs, 1.0, "max_abs only over finite frames");
    assert!(s
        .frame_table()
        .last()
        .unwrap()
        .ends_with("<-- first non-finite"));
    Ok(())
}

#[test]
fn one_read_back_per_step_and_stats_stay_pending_until_then() -> Result<()> {
    let (_, vb) = vb(1);
    let model = TinyGpt::<tiny_gpt::Clean>::build(vb)?;
    let rec = Recorder::start();
    for step in 0..3 {
        gpt_step(&model, 1)?;
        // embed + 2 × (2 norms, q, k, v, softmax, o, gate, up, down) + final norm + lm_head
        assert_eq!(rec.pending(), 23);
        assert_eq!(rec.read_backs(), step);
        let s = rec.end_step()?;
        assert_eq!(s.step, step);
        assert_eq!(s.frames_recorded, 23);
        assert!(s.first_non_finite.is_none());
        assert!(
            s.cuts.is_empty(),
            "the clean model cuts nothing: {:?}",
            s.cuts
        );
        assert_eq!(rec.pending(), 0);
    }
    assert_eq!(rec.read_backs(), 3);
    // A step with nothing recorded reads nothing back.
    rec.end_step()?;
    assert_eq!(rec.read_backs(), 3);
    Ok(())
}

#[test]
fn the_first_non_finite_module_and_the_20_frames_before_it() -> Result<()> {
    let (params, vb) = vb(2);
    let model = TinyGpt::<tiny_gpt::Clean>::build(vb)?;
    let rec = Recorder::start();
    gpt_step(&model, 2)?;
    assert!(!rec.end_step()?.has_non_finite());
    // One weight turns NaN (a bad optimizer step, a corrupt checkpoint).
    let up = params
        .named()
        .into_iter()
        .find(|(n, _)| n == "blocks.1.mlp.up.weight")
        .expect("param")
        .1;
    let mut w = up.as_tensor().flatten_all()?.to_vec1::<f32>()?;
    w[5] = f32::NAN;
    up.set(&Tensor::from_vec(w, up.shape(), &Device::Cpu)?)?;
    gpt_step(&model, 2)?;
    let s = rec.end_step()?;
    let bad = s.first_non_finite.clone().expect("non-finite");
    assert_eq!(bad.module, "blocks.1.mlp.up");
    assert_eq!(bad.kind, "linear");
    assert_eq!(s.frames_before.len(), 20);
    assert_eq!(s.frames_before[19].module, "blocks.1.mlp.gate");
    assert!(s.frames_before.iter().all(|f| f.non_finite == 0));
    if std::env::var_os("MLDEBUG_PRINT_FRAMES").is_some() {
        for line in s.frame_table() {
            eprintln!("{line}");
        }
    }
    Ok(())
}

/// Frames of `module` applied to a parameter-dependent input.
fn cuts_of(module: &dyn Module, x: &Tensor) -> Result<Vec<String>> {
    let rec = Recorder::start();
    module.forward(x)?;
    Ok(rec.end_step()?.cuts)
}

#[test]
fn fused_norms_and_softmax_are_reported_as_cuts_and_their_diff_versions_are_not() -> Result<()> {
    let (_, vb) = vb(3);
    let p = Var::from_tensor(&Tensor::new(&[[1f32, -2.0, 3.0, 0.5]], &Device::Cpu)?)?;
    let x = (p.as_tensor() * 2.0)?;
    assert!(x.track_op());

    let fused_rms = nn::rms_norm(4, 1e-5, vb.pp("rms"))?;
    let diff_rms = nn::rms_norm_diff(4, 1e-5, vb.pp("rms_diff"))?;
    let fused_ln = nn::layer_norm(4, 1e-5, vb.pp("ln"))?;
    let diff_ln = nn::layer_norm_diff(4, 1e-5, vb.pp("ln_diff"))?;
    let fused_sm = nn::traced("softmax_last_dim", candle_nn::ops::softmax_last_dim);
    let diff_sm = nn::traced("softmax", |x: &Tensor| {
        candle_nn::ops::softmax(x, D::Minus1)
    });

    assert_eq!(cuts_of(&fused_rms, &x)?, vec!["rms"]);
    assert_eq!(cuts_of(&fused_ln, &x)?, vec!["ln"]);
    assert_eq!(cuts_of(&fused_sm, &x)?, vec!["softmax_last_dim"]);
    assert!(cuts_of(&diff_rms, &x)?.is_empty());
    assert!(cuts_of(&diff_ln, &x)?.is_empty());
    assert!(cuts_of(&diff_sm, &x)?.is_empty());

    // The cut is real: the upstream parameter gets no gradient through the fused path.
    let g = fused_rms.forward(&x)?.sum_all()?.backward()?;
    assert!(g.get(p.as_tensor()).is_none());
    let g = diff_rms.forward(&x)?.sqr()?.sum_all()?.backward()?;
    assert!(g.get(p.as_tensor()).is_some());

    // An untracked input (token ids, raw data) is never a cut.
    let data = Tensor::new(&[[1f32, 2.0, 3.0, 4.0]], &Device::Cpu)?;
    assert!(cuts_of(&fused_rms, &data)?.is_empty());
    Ok(())
}

#[test]
fn the_fused_norm_twin_names_every_norm_as_a_cut() -> Result<()> {
    use mldebug_diagnostics::zoo::tiny_gpt_twins::FusedNorm;
    let (_, vb) = vb(4);
    let model = TinyGpt::<FusedNorm>::build(vb)?;
    let batch = TinyGpt::<FusedNorm>::batch(&Device::Cpu, 4)?;
    let rec = Recorder::start();
    model.forward(&batch.input, true)?;
    let cuts = rec.end_step()?.cuts;
    assert_eq!(
        cuts,
        vec![
            "blocks.0.attn_norm",
            "blocks.0.mlp_norm",
            "blocks.1.attn_norm",
            "blocks.1.mlp_norm",
            "norm"
        ]
    );
    Ok(())
}

#[test]
fn recording_stops_with_the_guard_and_recorders_nest() -> Result<()> {
    let layer = nn::traced("l", |x: &Tensor| x.exp());
    let x = Tensor::ones(2, DType::F32, &Device::Cpu)?;
    assert!(!is_recording());
    layer.forward(&x)?; // no recorder: nothing happens
    let outer = Recorder::start();
    layer.forward(&x)?;
    {
        let inner = Recorder::with_capacity(2);
        layer.forward(&x)?;
        layer.forward(&x)?;
        layer.forward(&x)?;
        assert_eq!(inner.pending(), 3);
        assert_eq!(outer.pending(), 1);
        inner.end_step()?;
        assert_eq!(inner.frames().len(), 2);
    }
    layer.forward(&x)?;
    assert_eq!(outer.end_step()?.frames_recorded, 2);
    drop(outer);
    assert!(!is_recording());
    // Dropping the outer one first ends both; the inner one says so instead of panicking.
    let outer = Recorder::start();
    let inner = Recorder::start();
    drop(outer);
    assert!(!is_recording());
    assert!(inner.end_step().is_err());
    assert!(inner.frames().is_empty());
    Ok(())
}

#[test]
fn a_traced_layer_computes_exactly_what_candles_layer_computes() -> Result<()> {
    let (_, vb) = vb(5);
    let traced = nn::linear(3, 2, vb.pp("l"))?;
    let plain = traced.inner().clone();
    let x = Tensor::new(&[[0.5f32, -1.0, 2.0]], &Device::Cpu)?;
    let _rec = Recorder::start();
    assert_eq!(
        traced.forward(&x)?.to_vec2::<f32>()?,
        plain.forward(&x)?.to_vec2::<f32>()?
    );
    Ok(())
}
