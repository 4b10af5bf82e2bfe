//! The zoo: every model builds and trains a step, every twin differs from its clean model only
//! by its bug, and the registry is consistent.

use candle_core::{DType, Device, Result};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use mldebug_diagnostics::init::seeded_var_builder;
use mldebug_diagnostics::model::{Batch, DebugModel, IGNORE_INDEX};

use mldebug_diagnostics::zoo::{self, cnn, mlp, mlp_twins, tiny_gpt, tiny_gpt_twins};

type Mlp<V> = mlp::Mlp<V>;
type Cnn<V> = cnn::Cnn<V>;
type Gpt<V> = tiny_gpt::TinyGpt<V>;

/// Parameter names and shapes, sorted by name.
fn params<M: DebugModel>(seed: u64) -> Result<Vec<(String, Vec<usize>)>> {
    let (store, vb) = seeded_var_builder(seed, DType::F32, &Device::Cpu);
    M::build(vb)?;
    Ok(store
        .named()
        .into_iter()
        .map(|(n, v)| (n, v.dims().to_vec()))
        .collect())
}

/// One forward + backward on the model's own batch: output shape, loss, how many params got a
/// gradient, how many there are.
fn step<M: DebugModel>(seed: u64) -> Result<(Vec<usize>, f32, usize, usize)> {
    let (store, vb) = seeded_var_builder(seed, DType::F32, &Device::Cpu);
    let model = M::build(vb)?;
    let batch = M::batch(&Device::Cpu, seed)?;
    let out = model.forward(&batch.input, true)?;
    let loss = model.loss(&out, &batch.targets)?;
    let grads = loss.backward()?;
    let named = store.named();
    let with_grad = named.iter().filter(|(_, v)| grads.get(v).is_some()).count();
    Ok((
        out.dims().to_vec(),
        loss.to_scalar::<f32>()?,
        with_grad,
        named.len(),
    ))
}

fn batch_vecs(b: &Batch) -> Result<(Vec<f32>, Vec<i64>)> {
    Ok((
        b.input.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?,
        b.targets.flatten_all()?.to_vec1()?,
    ))
}

#[test]
fn every_model_runs_a_forward_and_backward() -> Result<()> {
    let all_params = |r: (Vec<usize>, f32, usize, usize)| {
        assert!(r.1.is_finite(), "loss {}", r.1);
        assert_eq!(r.2, r.3, "every parameter gets a gradient");
        r.0
    };
    let classes = vec![mlp::EXAMPLES, mlp::CLASSES];
    assert_eq!(all_params(step::<Mlp<mlp::Clean>>(0)?), classes);
    assert_eq!(all_params(step::<Mlp<mlp_twins::LossSign>>(0)?), classes);
    assert_eq!(
        all_params(step::<Mlp<mlp_twins::SoftmaxBeforeCe>>(0)?),
        classes
    );
    assert_eq!(
        all_params(step::<Mlp<mlp_twins::SoftmaxBatchAxis>>(0)?),
        classes
    );
    assert_eq!(
        all_params(step::<Mlp<mlp_twins::SumReduction>>(0)?),
        classes
    );
    assert_eq!(all_params(step::<Mlp<mlp_twins::ZeroInit>>(0)?), classes);
    assert_eq!(all_params(step::<Mlp<mlp_twins::DeepSigmoid>>(0)?), classes);
    let imbalanced = step::<Mlp<mlp_twins::Imbalanced>>(0)?;
    assert_eq!(imbalanced.0[1], mlp::CLASSES);
    all_params(imbalanced);
    let img = vec![cnn::EXAMPLES, cnn::CLASSES];
    assert_eq!(all_params(step::<Cnn<cnn::Clean>>(0)?), img);
    assert_eq!(all_params(step::<Cnn<cnn::Unnormalised>>(0)?), img);
    let lm = vec![tiny_gpt::ROWS, tiny_gpt::SEQ, tiny_gpt::VOCAB];
    assert_eq!(all_params(step::<Gpt<tiny_gpt::Clean>>(0)?), lm);
    assert_eq!(
        all_params(step::<Gpt<tiny_gpt_twins::NoCausalMask>>(0)?),
        lm
    );
    assert_eq!(
        all_params(step::<Gpt<tiny_gpt_twins::PadLabelledZero>>(0)?),
        lm
    );
    assert_eq!(all_params(step::<Gpt<tiny_gpt_twins::LrX100>>(0)?), lm);

    // The twins whose bug is about gradients: fewer parameters reached, or a NaN loss.
    let (_, _, got, of) = step::<Mlp<mlp_twins::Detached>>(0)?;
    assert_eq!((got, of), (5, 6), "hidden.0.weight is detached");
    let (_, _, got, of) = step::<Gpt<tiny_gpt_twins::FusedNorm>>(0)?;
    assert_eq!(
        (got, of),
        (1, 21),
        "only lm_head is after the last fused norm"
    );
    let (shape, loss, _, _) = step::<Gpt<tiny_gpt_twins::AllMaskedZeroOverZero>>(0)?;
    assert_eq!(shape, lm);
    assert!(loss.is_nan(), "0/0: {loss}");
    let (shape, loss, _, _) = step::<Gpt<tiny_gpt_twins::MaskTimesInf>>(0)?;
    assert_eq!(shape, lm);
    assert!(loss.is_nan(), "0 x -inf: {loss}");
    Ok(())
}

#[test]
fn twins_have_the_clean_models_parameters() -> Result<()> {
    let m = params::<Mlp<mlp::Clean>>(0)?;
    assert_eq!(params::<Mlp<mlp_twins::LossSign>>(0)?, m);
    assert_eq!(params::<Mlp<mlp_twins::SoftmaxBeforeCe>>(0)?, m);
    assert_eq!(params::<Mlp<mlp_twins::SoftmaxBatchAxis>>(0)?, m);
    assert_eq!(params::<Mlp<mlp_twins::SumReduction>>(0)?, m);
    assert_eq!(params::<Mlp<mlp_twins::ZeroInit>>(0)?, m);
    assert_eq!(params::<Mlp<mlp_twins::Detached>>(0)?, m);
    assert_eq!(params::<Mlp<mlp_twins::Imbalanced>>(0)?, m);
    // Deep sigmoid: the same layers, more of them.
    let deep = params::<Mlp<mlp_twins::DeepSigmoid>>(0)?;
    assert!(m.iter().all(|p| deep.contains(p)));
    assert_eq!(deep.len(), m.len() + 2 * 8);
    assert_eq!(
        params::<Cnn<cnn::Unnormalised>>(0)?,
        params::<Cnn<cnn::Clean>>(0)?
    );
    let g = params::<Gpt<tiny_gpt::Clean>>(0)?;
    assert_eq!(params::<Gpt<tiny_gpt_twins::FusedNorm>>(0)?, g);
    assert_eq!(params::<Gpt<tiny_gpt_twins::NoCausalMask>>(0)?, g);
    assert_eq!(params::<Gpt<tiny_gpt_twins::PadLabelledZero>>(0)?, g);
    assert_eq!(params::<Gpt<tiny_gpt_twins::AllMaskedZeroOverZero>>(0)?, g);
    assert_eq!(params::<Gpt<tiny_gpt_twins::LrX100>>(0)?, g);
    assert_eq!(params::<Gpt<tiny_gpt_twins::MaskTimesInf>>(0)?, g);
    Ok(())
}

#[test]
fn twins_have_the_clean_models_batch_unless_the_bug_is_in_the_data() -> Result<()> {
    let d = Device::Cpu;
    for seed in 0..3 {
        let clean = batch_vecs(&Mlp::<mlp::Clean>::batch(&d, seed)?)?;
        for twin in [
            Mlp::<mlp_twins::LossSign>::batch(&d, seed)?,
            Mlp::<mlp_twins::ZeroInit>::batch(&d, seed)?,
            Mlp::<mlp_twins::Detached>::batch(&d, seed)?,
            Mlp::<mlp_twins::DeepSigmoid>::batch(&d, seed)?,
        ] {
            assert_eq!(batch_vecs(&twin)?, clean);
        }
        // Unnormalised: the same images, before standardisation.
        let c = Cnn::<cnn::Clean>::batch(&d, seed)?;
        let raw = Cnn::<cnn::Unnormalised>::batch(&d, seed)?;
        assert_eq!(batch_vecs(&raw)?.1, batch_vecs(&c)?.1);
        let standardised = mldebug_diagnostics::zoo::data::standardise(&raw.input)?;
        assert_eq!(
            batch_vecs(&Batch {
                input: standardised,
                targets: c.targets.clone()
            })?,
            batch_vecs(&c)?
        );
        let px = batch_vecs(&raw)?.0;
        assert!(px
            .iter()
            .all(|&p| (0.0..=255.0).contains(&p) && p.fract() == 0.0));
        assert!(px.iter().any(|&p| p > 200.0));

        // Pad labelled 0: the same batch except the padding targets.
        let (gi, gt) = batch_vecs(&Gpt::<tiny_gpt::Clean>::batch(&d, seed)?)?;
        let (pi, pt) = batch_vecs(&Gpt::<tiny_gpt_twins::PadLabelledZero>::batch(&d, seed)?)?;
        assert_eq!(pi, gi);
        let mut padded = 0;
        for (a, b) in gt.iter().zip(&pt) {
            if *a == IGNORE_INDEX {
                assert_eq!(*b, 0);
                padded += 1;
            } else {
                assert_eq!(a, b);
            }
        }
        assert!(padded > 0);
        // All masked: the same inputs, every target -100.
        let (ai, at) = batch_vecs(&Gpt::<tiny_gpt_twins::AllMaskedZeroOverZero>::batch(
            &d, seed,
        )?)?;
        assert_eq!(ai, gi);
        assert!(at.iter().all(|&t| t == IGNORE_INDEX));
        // Imbalanced: class 0 is 101 times as common as each other class.
        let (_, it) = batch_vecs(&Mlp::<mlp_twins::Imbalanced>::batch(&d, seed)?)?;
        let count = |c: i64| it.iter().filter(|&&t| t == c).count();
        assert_eq!(count(0), mlp_twins::IMBALANCE * count(1));
        assert!(count(1) > 0 && count(1) == count(2) && count(2) == count(3));
    }
    Ok(())
}

/// A few AdamW steps on the model's own batch: (first loss, last loss).
fn train<M: DebugModel>(seed: u64, steps: usize) -> Result<(f32, f32)> {
    let (store, vb) = seeded_var_builder(seed, DType::F32, &Device::Cpu);
    let model = M::build(vb)?;
    let batch = M::batch(&Device::Cpu, seed)?;
    let mut opt = AdamW::new(
        store.vars(),
        ParamsAdamW {
            lr: 3e-3,
            weight_decay: 0.0,
            ..Default::default()
        },
    )?;
    let mut losses = Vec::new();
    for _ in 0..steps {
        let loss = model.loss(&model.forward(&batch.input, true)?, &batch.targets)?;
        losses.push(loss.to_scalar::<f32>()?);
        opt.backward_step(&loss)?;
    }
    Ok((losses[0], *losses.last().unwrap()))
}

#[test]
fn clean_models_learn() -> Result<()> {
    for seed in 0..2 {
        let (a, b) = train::<Mlp<mlp::Clean>>(seed, 30)?;
        assert!(b < 0.7 * a, "mlp {a} -> {b}");
        let (a, b) = train::<Cnn<cnn::Clean>>(seed, 30)?;
        assert!(b < 0.9 * a, "cnn {a} -> {b}");
        let (a, b) = train::<Gpt<tiny_gpt::Clean>>(seed, 30)?;
        assert!(b < 0.7 * a, "tiny-gpt {a} -> {b}");
    }
    // The sign twin moves the other way from the same start.
    let (a, b) = train::<Mlp<mlp_twins::LossSign>>(0, 30)?;
    let (c, _) = train::<Mlp<mlp::Clean>>(0, 1)?;
    assert_eq!(a, -c);
    assert!(b < a, "the negated loss falls: the cross-entropy rises");
    Ok(())
}

#[test]
fn the_registry_is_consistent() {
    let all = zoo::all();
    let mut names: Vec<&str> = all.iter().map(|m| m.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len(), "names are unique");
    for m in all {
        assert!(
            m.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{} is kebab-case",
            m.name
        );
        assert_eq!(zoo::find(m.name).map(|f| f.name), Some(m.name));
        if m.clean {
            assert!(m.fails.is_empty() && m.breaks.is_empty() && m.twin_of.is_none());
        } else {
            assert!(!m.fails.is_empty(), "{} fails something", m.name);
            assert!(!m.breaks.is_empty() && !m.breaks.contains('\n'));
            let of = zoo::find(m.twin_of.expect("twin_of")).expect("clean model exists");
            assert!(of.clean);
        }
    }
    assert!(zoo::find("nope").is_none());
    assert!(all.iter().filter(|m| m.clean).count() >= 3);
}

// Every check on every zoo model, clean ones passing and twins failing where their clean model
// passes, is the root crate's `tests/it/zoo_matrix.rs`: over five seeds, and at seed 0 without
// even a warning on a clean model (where these tests were before).

#[cfg(feature = "llama")]
#[test]
fn candle_llama_gives_a_gradient_to_1_of_21_parameters() -> Result<()> {
    use mldebug_diagnostics::zoo::llama_candle::{LlamaCandle, ROWS, VOCAB};
    let (shape, loss, with_grad, of) = step::<LlamaCandle>(0)?;
    assert_eq!(shape, vec![ROWS, VOCAB], "last position only");
    assert!(loss.is_finite());
    assert_eq!((with_grad, of), (1, 21));
    let (store, vb) = seeded_var_builder(0, DType::F32, &Device::Cpu);
    let model = LlamaCandle::build(vb)?;
    let batch = LlamaCandle::batch(&Device::Cpu, 0)?;
    let grads = model
        .loss(&model.forward(&batch.input, true)?, &batch.targets)?
        .backward()?;
    let got: Vec<String> = store
        .named()
        .into_iter()
        .filter(|(_, v)| grads.get(v).is_some())
        .map(|(n, _)| n)
        .collect();
    assert_eq!(got, vec!["lm_head.weight"]);
    Ok(())
}
