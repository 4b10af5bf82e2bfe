//! Weight decay per parameter kind, from the `optimizer` record's groups: information only.
//!
//! `decay-on-norms`: a group with `weight_decay` > 0 holds the weights of normalisation layers,
//! biases or embedding tables. Decaying everything is common and trains (AdamW over
//! `model.parameters()`), so this is a note: the usual recipe (nanoGPT, the Hugging Face
//! `Trainer`) keeps 1-D parameters in a group without decay. Embedding tables are counted in
//! the note, but decayed embeddings alone make none (both of those recipes decay them). Nor
//! does AdamW's own default (`weight_decay` 0.01, one group): that is torch's choice, not the
//! program's, and at 0.01 it pulls a weight by a hundredth of the learning rate a step.
//!
//! `adam-l2-decay`: `torch.optim.Adam` (not AdamW, not `decoupled_weight_decay=True`) with
//! `weight_decay` > 0, which adds the decay to the gradient (L2), where Adam's denominator then
//! scales it; AdamW applies it to the weights directly.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::{Group, Optimizer};

/// The kinds of parameters, as the `kinds` of a group name them, with their words.
const KINDS: [(&str, &str); 3] = [
    ("norm", "normalisation-layer weight(s) and bias(es)"),
    ("bias", "bias(es)"),
    ("embedding", "embedding table(s)"),
];

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    for o in p.optimizers.iter().filter(|o| !o.manual) {
        on_norms(o, out);
        adam_l2(o, out);
    }
}

fn decays(g: &Group) -> bool {
    g.weight_decay.is_some_and(|d| d > 0.0)
}

/// `torch.optim.AdamW`'s default `weight_decay`.
const ADAMW_DEFAULT_DECAY: f64 = 0.01;

/// AdamW built over one group with its default decay: no decay the program chose.
fn adamw_default(o: &Optimizer) -> bool {
    o.class == "AdamW"
        && o.groups.len() == 1
        && o.groups[0].weight_decay == Some(ADAMW_DEFAULT_DECAY)
}

/// `decay-on-norms`.
fn on_norms(o: &Optimizer, out: &mut Vec<Finding>) {
    if adamw_default(o) {
        return;
    }
    // Embedding tables alone are no note: nanoGPT and the Trainer decay them too.
    let decayed: Vec<&Group> = o
        .groups
        .iter()
        .filter(|g| decays(g) && (g.kinds.contains_key("norm") || g.kinds.contains_key("bias")))
        .collect();
    if decayed.is_empty() {
        return;
    }
    let mut parts = Vec::new();
    let (mut tensors, mut numel) = (0u64, 0u64);
    for (kind, words) in KINDS {
        let (t, n) = decayed
            .iter()
            .filter_map(|g| g.kinds.get(kind))
            .fold((0, 0), |(t, n), k| (t + k.tensors, n + k.numel));
        if t > 0 {
            parts.push(format!("{t} {words}"));
            tensors += t;
            numel += n;
        }
    }
    let decay = decayed
        .iter()
        .filter_map(|g| g.weight_decay)
        .fold(f64::NAN, f64::max);
    let separate = o.groups.iter().any(|g| !decays(g));
    out.push(
        Finding::new(Symptom::DecayOnNorms, Severity::Info, "optimizer", 1.0)
            .summary(format!(
                "the {} optimizer decays {} ({numel} elements) with weight_decay {decay}{}: \
                 decay pulls a norm layer's gain and a bias toward 0 and shrinks rare tokens' \
                 embedding rows; the usual recipe (nanoGPT, the Hugging Face Trainer) puts 1-D \
                 parameters in a group with weight_decay 0",
                o.class,
                parts.join(", "),
                if separate {
                    " (it has a group without decay, and these are not in it)"
                } else {
                    ""
                }
            ))
            .number("tensors", tensors as f64)
            .number("elements", numel as f64)
            .number("weight_decay", decay)
            .at(o.location.clone()),
    );
}

/// `adam-l2-decay`.
fn adam_l2(o: &Optimizer, out: &mut Vec<Finding>) {
    if o.class != "Adam" {
        return;
    }
    let coupled: Vec<&Group> = o
        .groups
        .iter()
        .filter(|g| decays(g) && g.decoupled_weight_decay != Some(true))
        .collect();
    let Some(decay) = coupled
        .iter()
        .filter_map(|g| g.weight_decay)
        .reduce(f64::max)
    else {
        return;
    };
    let numel: u64 = coupled.iter().map(|g| g.numel).sum();
    out.push(
        Finding::new(Symptom::AdamL2Decay, Severity::Info, "optimizer", 1.0)
            .summary(format!(
                "torch.optim.Adam with weight_decay {decay} (over {numel} elements) adds the decay \
                 to the gradient (L2 regularisation), where Adam's denominator scales it down for \
                 weights with large gradients; AdamW applies it to the weights directly \
                 (decoupled). If decoupled decay was meant, use AdamW: a value tuned for AdamW \
                 (0.01 to 0.1) means something else in Adam"
            ))
            .number("weight_decay", decay)
            .number("elements", numel as f64)
            .at(o.location.clone()),
    );
}
