//! `debug_model!`: the one-line `DebugModel` for a plain classifier, and the batch it draws.

use crate::model::Batch;
use crate::rng::SeededRng;
use candle_core::{Device, Tensor};

/// A deterministic classification batch: `input` drawn from N(0, 1) with `shape`, and one class
/// id in `0..classes` per row (`shape[0]` rows, every class as often as the batch allows, in a
/// seeded order). The same seed gives the same batch.
///
/// This is what [`debug_model!`](crate::debug_model) generates `DebugModel::batch` from.
pub fn classification_batch(
    shape: &[usize],
    classes: usize,
    device: &Device,
    seed: u64,
) -> candle_core::Result<Batch> {
    if shape.is_empty() || classes == 0 {
        candle_core::bail!(
            "debug_model!: `input` needs a batch dimension and `classes` must be > 0"
        );
    }
    let mut rng = SeededRng::derive(seed, "batch");
    let n: usize = shape.iter().product();
    let input: Vec<f32> = (0..n).map(|_| rng.normal() as f32).collect();
    // Balanced, then shuffled: random labels on a small batch can leave a class empty, which
    // is a data problem the model does not have.
    let mut targets: Vec<i64> = (0..shape[0]).map(|i| (i % classes) as i64).collect();
    for i in (1..targets.len()).rev() {
        targets.swap(i, rng.below(i as u64 + 1) as usize);
    }
    Ok(Batch {
        input: Tensor::from_vec(input, shape, device)?,
        targets: Tensor::from_vec(targets, shape[0], device)?,
    })
}

/// Implement [`DebugModel`](crate::DebugModel) for a plain classifier in one line.
///
/// ```
/// use candle_core::{Result, Tensor};
/// use candle_nn::{linear, Linear, Module, VarBuilder};
///
/// pub struct Net { fc: Linear }
///
/// impl Net {
///     pub fn new(vb: VarBuilder) -> Result<Net> {
///         Ok(Net { fc: linear(784, 10, vb.pp("fc"))? })
///     }
/// }
///
/// impl Module for Net {
///     fn forward(&self, xs: &Tensor) -> Result<Tensor> {
///         self.fc.forward(xs)
///     }
/// }
///
/// mldebug_diagnostics::debug_model!(Net, new = Net::new, input = [32, 784], classes = 10);
/// ```
///
/// - `new`: a function `fn(VarBuilder) -> candle_core::Result<Net>` that takes every trainable
///   parameter from the `VarBuilder` (as candle's `linear(.., vb.pp("fc1"))` does);
/// - `input`: the shape of one batch (the first dimension is the batch size); inputs are drawn
///   from N(0, 1) with the check's seed;
/// - `classes`: the number of classes; targets are balanced class ids shuffled with the same
///   seed, and the loss is the default mean cross-entropy.
///
/// The forward pass is the model's `candle_nn::Module` impl. A model whose forward is an
/// inherent method `fn forward(&self, &Tensor) -> candle_core::Result<Tensor>` (or any other
/// name) says so after `classes`: `forward = Net::forward`. A model that behaves differently in
/// training and evaluation (batch norm, dropout) names a forward that takes the flag:
/// `forward_t = Net::forward_t`, a `fn(&Net, &Tensor, bool) -> candle_core::Result<Tensor>`
/// (`<Net as candle_nn::ModuleT>::forward_t` too); without it the checks cannot ask for
/// evaluation mode.
///
/// A causal language model (token ids in, `[N, T, V]` logits out) names its batch shape and
/// vocabulary instead: `debug_model!(TinyLm, new = TinyLm::new, tokens = [16, 32], vocab = 48)`
/// (optionally `pad = 4`, and `forward = TinyLm::forward`); the batch is
/// [`causal_lm_batch`](crate::harness::causal_lm_batch) (learnable sequences, labels shifted by
/// one) and the task `CausalLm`. Anything else (masks, a custom loss): implement [`DebugModel`](crate::DebugModel)
/// by hand, or let `mldebug check --model crate::Net --new .. --input ..` generate it.
#[macro_export]
macro_rules! debug_model {
    ($ty:ty, new = $new:expr, input = [$($dim:expr),+ $(,)?], classes = $classes:expr $(,)?) => {
        $crate::debug_model!(@impl $ty, $new, [$($dim),+], $classes, |m: &$ty, x, _train| {
            <$ty as $crate::candle_nn::Module>::forward(m, x)
        });
    };
    ($ty:ty, new = $new:expr, input = [$($dim:expr),+ $(,)?], classes = $classes:expr,
     forward = $forward:expr $(,)?) => {
        $crate::debug_model!(@impl $ty, $new, [$($dim),+], $classes, |m: &$ty, x, _train| {
            ($forward)(m, x)
        });
    };
    ($ty:ty, new = $new:expr, input = [$($dim:expr),+ $(,)?], classes = $classes:expr,
     forward_t = $forward:expr $(,)?) => {
        $crate::debug_model!(@impl $ty, $new, [$($dim),+], $classes, |m: &$ty, x, train| {
            ($forward)(m, x, train)
        });
    };
    ($ty:ty, new = $new:expr, tokens = [$rows:expr, $len:expr $(,)?], vocab = $vocab:expr
     $(, pad = $pad:expr)? $(, forward = $forward:expr)? $(,)?) => {
        impl $crate::DebugModel for $ty {
            fn build(vb: $crate::candle_nn::VarBuilder) -> $crate::candle_core::Result<Self> {
                ($new)(vb)
            }
            fn batch(
                device: &$crate::candle_core::Device,
                seed: u64,
            ) -> $crate::candle_core::Result<$crate::Batch> {
                #[allow(unused_mut, unused_assignments)]
                let mut pad = 0usize;
                $(pad = $pad;)?
                $crate::harness::causal_lm_batch($rows, $len, $vocab, pad, device, seed)
            }
            fn forward(
                &self,
                input: &$crate::candle_core::Tensor,
                _train: bool,
            ) -> $crate::candle_core::Result<$crate::candle_core::Tensor> {
                $crate::debug_model!(@forward self, input $(, $forward)?)
            }
            fn task() -> $crate::Task {
                $crate::Task::CausalLm
            }
        }
    };
    (@forward $m:expr, $x:expr) => {
        $crate::candle_nn::Module::forward($m, $x)
    };
    (@forward $m:expr, $x:expr, $forward:expr) => {
        ($forward)($m, $x)
    };
    (@impl $ty:ty, $new:expr, [$($dim:expr),+], $classes:expr, $fwd:expr) => {
        impl $crate::DebugModel for $ty {
            fn build(vb: $crate::candle_nn::VarBuilder) -> $crate::candle_core::Result<Self> {
                ($new)(vb)
            }
            fn batch(
                device: &$crate::candle_core::Device,
                seed: u64,
            ) -> $crate::candle_core::Result<$crate::Batch> {
                $crate::harness::classification_batch(&[$($dim),+], $classes, device, seed)
            }
            fn forward(
                &self,
                input: &$crate::candle_core::Tensor,
                train: bool,
            ) -> $crate::candle_core::Result<$crate::candle_core::Tensor> {
                let forward: fn(
                    &$ty,
                    &$crate::candle_core::Tensor,
                    bool,
                ) -> $crate::candle_core::Result<$crate::candle_core::Tensor> = $fwd;
                forward(self, input, train)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DebugModel;
    use candle_core::{DType, Module};
    use candle_nn::{linear, Linear, VarBuilder, VarMap};

    /// A model whose forward is only `Module::forward`.
    struct ByModule(Linear);
    impl ByModule {
        fn new(vb: VarBuilder) -> candle_core::Result<Self> {
            Ok(ByModule(linear(4, 3, vb.pp("fc"))?))
        }
    }
    impl Module for ByModule {
        fn forward(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
            self.0.forward(xs)
        }
    }
    crate::debug_model!(ByModule, new = ByModule::new, input = [8, 4], classes = 3);

    /// A model whose forward is an inherent method.
    struct ByMethod(Linear);
    impl ByMethod {
        fn new(vb: VarBuilder) -> candle_core::Result<Self> {
            Ok(ByMethod(linear(4, 3, vb.pp("fc"))?))
        }
        fn forward(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
            self.0.forward(xs)?.affine(2.0, 0.0)
        }
    }
    crate::debug_model!(
        ByMethod,
        new = ByMethod::new,
        input = [8, 4],
        classes = 3,
        forward = ByMethod::forward,
    );

    /// A model naming its own forward.
    struct Named(Linear);
    impl Named {
        fn logits(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
            self.0.forward(xs)
        }
    }
    crate::debug_model!(
        Named,
        new = |vb: VarBuilder| Ok(Named(linear(4, 3, vb.pp("fc"))?)),
        input = [8, 4],
        classes = 3,
        forward = Named::logits,
    );

    /// A causal LM: embedding then a head, through the macro's causal-LM form.
    struct TinyLm {
        embed: candle_nn::Embedding,
        head: Linear,
    }
    impl TinyLm {
        fn new(vb: VarBuilder) -> candle_core::Result<Self> {
            Ok(TinyLm {
                embed: candle_nn::embedding(12, 8, vb.pp("embed"))?,
                head: linear(8, 12, vb.pp("head"))?,
            })
        }
        fn logits(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
            self.head.forward(&self.embed.forward(xs)?)
        }
    }
    crate::debug_model!(
        TinyLm,
        new = TinyLm::new,
        tokens = [4, 6],
        vocab = 12,
        pad = 2,
        forward = TinyLm::logits,
    );

    #[test]
    fn the_causal_lm_form_draws_a_padded_lm_batch() {
        let (m, b) = build::<TinyLm>();
        assert_eq!(TinyLm::task(), crate::Task::CausalLm);
        assert_eq!(b.input.dims(), &[4, 6]);
        let out = DebugModel::forward(&m, &b.input, true).unwrap();
        assert_eq!(out.dims(), &[4, 6, 12]);
        let ignored = b.targets.to_vec2::<i64>().unwrap()[1]
            .iter()
            .filter(|&&t| t == crate::model::IGNORE_INDEX)
            .count();
        assert_eq!(ignored, 2);
    }

    fn build<M: DebugModel>() -> (M, Batch) {
        let vm = VarMap::new();
        let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
        (M::build(vb).unwrap(), M::batch(&Device::Cpu, 7).unwrap())
    }

    #[test]
    fn macro_covers_module_and_named_forwards() {
        let (m, b) = build::<ByModule>();
        assert_eq!(
            DebugModel::forward(&m, &b.input, true).unwrap().dims(),
            &[8, 3]
        );
        let (m, b) = build::<ByMethod>();
        let doubled = DebugModel::forward(&m, &b.input, true).unwrap();
        let plain = m.0.forward(&b.input).unwrap();
        let diff = (doubled - plain.affine(2.0, 0.0).unwrap())
            .unwrap()
            .abs()
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert_eq!(
            diff, 0.0,
            "`forward = ByMethod::forward` must be the one called"
        );
        let (m, b) = build::<Named>();
        assert_eq!(m.forward(&b.input, false).unwrap().dims(), &[8, 3]);
    }

    #[test]
    fn batches_are_deterministic_per_seed_and_in_range() {
        let a = ByModule::batch(&Device::Cpu, 3).unwrap();
        let b = ByModule::batch(&Device::Cpu, 3).unwrap();
        let c = ByModule::batch(&Device::Cpu, 4).unwrap();
        let v = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(v(&a.input), v(&b.input));
        assert_ne!(v(&a.input), v(&c.input));
        let ids = a.targets.to_vec1::<i64>().unwrap();
        assert_eq!(ids.len(), 8);
        let mut counts = [0; 3];
        ids.iter().for_each(|&i| counts[i as usize] += 1);
        assert_eq!(counts.iter().sum::<usize>(), 8);
        assert!(
            counts.iter().all(|&c| c == 2 || c == 3),
            "balanced: {counts:?}"
        );
        let mean = v(&a.input).iter().sum::<f32>() / 32.0;
        assert!(mean.abs() < 1.0, "N(0,1) inputs, mean {mean}");
    }
}
