//! The model zoo: clean reference models and their buggy twins.
//!
//! Each clean model passes every check; each twin is its clean model with one mistake that real
//! training code makes, and `fails` lists the checks a correct mldebug must fail on it (other
//! checks may pass, warn or fail). The zoo is the checks' test bed (`tests/it/zoo_matrix.rs`) and
//! a demo: `mldebug check all --model zoo::<name>`.
//!
//! Every model uses the traced layers of [`crate::nn`], so nan-trace and grad-flow can name
//! modules. Batches come from [`crate::rng::SeededRng`]: the same seed gives the same batch.

pub mod batch_norm;
pub mod cnn;
pub mod data;
pub mod entry;
pub mod layers;
#[cfg(feature = "llama")]
pub mod llama_candle;
pub mod mlp;
pub mod mlp_twins;
pub mod tiny_gpt;
pub mod tiny_gpt_twins;

use crate::checks::run_checks;
use crate::memory::measure::{estimate_only, BatchLayout};
use crate::model::DebugModel;
use crate::options::Options;
use crate::report::{CheckId, Report};
use batch_norm::{BnCnn, BnMlp};
use cnn::Cnn;
use mldebug_memory::measured::ModelEstimate;
use mlp::Mlp;
use tiny_gpt::TinyGpt;

/// One zoo entry.
#[derive(Debug, Clone, Copy)]
pub struct ZooModel {
    /// Kebab-case, as in `--model zoo::<name>`.
    pub name: &'static str,
    /// A clean model (no planted bug).
    pub clean: bool,
    /// The clean model a twin differs from.
    pub twin_of: Option<&'static str>,
    /// What the bug is, in one line; "" for a clean model.
    pub breaks: &'static str,
    /// The checks a correct mldebug must fail on this model; empty for a clean model.
    pub fails: &'static [CheckId],
    /// Runs checks on fresh parameters of the model.
    pub run: fn(&[CheckId], &Options) -> Report,
    /// The memory estimate of fresh parameters on the model's batch, without measuring
    /// (`mldebug memory --model zoo::<name>`).
    pub estimate: Estimator,
}

impl ZooModel {
    /// The model as the demo matrix sees it.
    pub fn matrix_model(&self) -> mldebug_judge::matrix::MatrixModel {
        mldebug_judge::matrix::MatrixModel {
            name: self.name.to_string(),
            clean: self.clean,
            twin_of: self.twin_of.map(str::to_string),
            breaks: self.breaks.to_string(),
            fails: self.fails.to_vec(),
        }
    }
}

/// [`ZooModel::estimate`]'s type.
pub type Estimator = fn(&Options, BatchLayout) -> candle_core::Result<ModelEstimate>;

use CheckId::*;

const fn clean<M: DebugModel>(name: &'static str) -> ZooModel {
    ZooModel {
        name,
        clean: true,
        twin_of: None,
        breaks: "",
        fails: &[],
        run: run_checks::<M>,
        estimate: estimate_only::<M>,
    }
}

const fn twin<M: DebugModel>(
    name: &'static str,
    of: &'static str,
    breaks: &'static str,
    fails: &'static [CheckId],
) -> ZooModel {
    ZooModel {
        name,
        clean: false,
        twin_of: Some(of),
        breaks,
        fails,
        run: run_checks::<M>,
        estimate: estimate_only::<M>,
    }
}

static ZOO: &[ZooModel] = &[
    clean::<Mlp<mlp::Clean>>("mlp"),
    clean::<Cnn<cnn::Clean>>("cnn"),
    clean::<TinyGpt<tiny_gpt::Clean>>("tiny-gpt"),
    clean::<BnMlp<true>>("mlp-batchnorm"),
    clean::<BnMlp<false>>("mlp-batchnorm-no-affine"),
    clean::<BnCnn<true>>("cnn-batchnorm"),
    twin::<Cnn<cnn::Unnormalised>>(
        "cnn-unnormalised",
        "cnn",
        "images go in as raw 0-255 pixel values instead of standardised ones",
        &[InitLoss],
    ),
    twin::<Mlp<mlp_twins::LossSign>>(
        "mlp-loss-sign",
        "mlp",
        "the loss is negated, so training pushes the right answers' probability down",
        &[InitLoss, Overfit],
    ),
    twin::<Mlp<mlp_twins::SoftmaxBeforeCe>>(
        "mlp-softmax-ce",
        "mlp",
        "forward returns softmax probabilities and the cross-entropy applies its own softmax on top",
        &[Overfit],
    ),
    twin::<Mlp<mlp_twins::SoftmaxBatchAxis>>(
        "mlp-softmax-batch-axis",
        "mlp",
        "the output log-softmax runs over the batch axis, mixing examples",
        &[BatchLeak],
    ),
    twin::<Mlp<mlp_twins::SumReduction>>(
        "mlp-sum-reduction",
        "mlp",
        "the loss sums the per-example cross-entropies instead of averaging them",
        &[InitLoss],
    ),
    twin::<Mlp<mlp_twins::ZeroInit>>(
        "mlp-zero-init",
        "mlp",
        "every hidden weight and bias starts at zero",
        &[GradFlow, Overfit],
    ),
    twin::<Mlp<mlp_twins::DeepSigmoid>>(
        "mlp-deep-sigmoid",
        "mlp",
        "ten sigmoid layers: the first layers' gradients vanish",
        &[GradFlow, Overfit],
    ),
    twin::<Mlp<mlp_twins::Detached>>(
        "mlp-detached",
        "mlp",
        "the first layer's weight is used through a detached copy, so it never learns",
        &[GradFlow],
    ),
    twin::<Mlp<mlp_twins::Imbalanced>>(
        "mlp-imbalanced",
        "mlp",
        "class 0 outnumbers every other class 101:1",
        &[ClassBalance],
    ),
    twin::<TinyGpt<tiny_gpt_twins::FusedNorm>>(
        "tiny-gpt-fused-norm",
        "tiny-gpt",
        "RmsNorm runs candle's fused kernel, which has no backward",
        &[GradFlow, Overfit],
    ),
    twin::<TinyGpt<tiny_gpt_twins::NoCausalMask>>(
        "tiny-gpt-no-causal-mask",
        "tiny-gpt",
        "attention has no causal mask: each position sees the tokens after it",
        &[BatchLeak],
    ),
    twin::<TinyGpt<tiny_gpt_twins::MaskTimesInf>>(
        "tiny-gpt-mask-times-inf",
        "tiny-gpt",
        "the causal mask is built as (1 above the diagonal) x -inf, and 0 x -inf is NaN",
        &[InitLoss, GradFlow, NanTrace, Overfit],
    ),
    twin::<TinyGpt<tiny_gpt_twins::LrX100>>(
        "tiny-gpt-lr-x100",
        "tiny-gpt",
        "projection weights stored 100x smaller and scaled back up in forward: every AdamW step is 100x too large (learning rate x100)",
        &[Overfit],
    ),
    twin::<TinyGpt<tiny_gpt_twins::PadLabelledZero>>(
        "tiny-gpt-pad-zero",
        "tiny-gpt",
        "padding positions are labelled 0 (the pad token) instead of -100",
        &[LabelMask],
    ),
    twin::<TinyGpt<tiny_gpt_twins::AllMaskedZeroOverZero>>(
        "tiny-gpt-all-masked",
        "tiny-gpt",
        "every target is -100 and the loss divides by the count of kept targets: 0/0",
        &[InitLoss, LabelMask, GradFlow, NanTrace, Overfit],
    ),
    twin::<TinyGpt<tiny_gpt_twins::ActivationCache>>(
        "tiny-gpt-activation-cache",
        "tiny-gpt",
        "forward keeps its last hidden states in a list on the model, each still attached to its graph: memory rises every step",
        &[Memory],
    ),
    twin::<TinyGpt<tiny_gpt_twins::BroadcastLinear>>(
        "tiny-gpt-broadcast-linear",
        "tiny-gpt",
        "the MLP's up projection broadcasts and sums instead of a matmul: a [N, T, MLP, DIM] intermediate 32x its output",
        &[Memory],
    ),
    #[cfg(feature = "llama")]
    twin::<llama_candle::LlamaCandle>(
        "llama-candle",
        "tiny-gpt",
        "candle-transformers' Llama: fused RmsNorm, softmax and rope leave 20 of 21 parameters without a gradient",
        &[GradFlow],
    ),
];

/// Every zoo model: the clean ones first, then the twins.
pub fn all() -> &'static [ZooModel] {
    ZOO
}

/// The zoo model called `name` (without the `zoo::` prefix).
pub fn find(name: &str) -> Option<&'static ZooModel> {
    ZOO.iter().find(|m| m.name == name)
}
