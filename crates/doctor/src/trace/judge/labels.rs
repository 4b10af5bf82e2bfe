//! Labels and the loss: every target ignored, padding labelled, labels shifted twice or not at
//! all, probabilities given to a cross-entropy, and a first loss far above chance.

use super::pct;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

/// A loss whose targets are this share ignored learns from (nearly) nothing.
const ALL_IGNORED: f64 = 0.99;
/// Padded positions labelled at this share or more: the pad tokens are trained on.
const PAD_LABELLED: f64 = 0.5;
/// Padding is judged only where it is this share of the positions or more: a pad id that also
/// occurs as an ordinary token (no attention mask to tell them apart) makes a few scattered
/// "pad" positions in any batch.
const MIN_PAD_SHARE: f64 = 0.05;
/// Labels that match the inputs at one offset this often are aligned at that offset; natural
/// text repeats a token at a given offset far less often.
const ALIGNED: f64 = 0.9;
/// A first loss above `ln C × INIT_FACTOR + INIT_MARGIN` is far above chance (inputs not
/// normalised, a sum where a mean was meant, an output scale too large). Below chance is not
/// judged: a pretrained model starts there.
const INIT_FACTOR: f64 = 1.5;
const INIT_MARGIN: f64 = 1.0;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    all_ignored(p, out);
    padding(p, out);
    alignment(p, out);
    softmax(p, out);
    init_loss(p, out);
}

fn all_ignored(p: &Process, out: &mut Vec<Finding>) {
    let calls: Vec<_> = p
        .loss_calls
        .iter()
        .filter(|c| c.targets > 0 && c.ignore_index.is_some())
        .collect();
    let targets: u64 = calls.iter().map(|c| c.targets).sum();
    let ignored: u64 = calls.iter().map(|c| c.ignored).sum();
    if targets == 0 || (ignored as f64) < ALL_IGNORED * targets as f64 {
        return;
    }
    let c = calls[0];
    out.push(
        Finding::new(
            Symptom::LabelsAllIgnored,
            Severity::Fail,
            "labels",
            c.step as f64,
        )
        .summary(format!(
            "{} of the {targets} targets given to {} in the first steps are the ignore index \
                 {}: the loss learns from (nearly) nothing",
            ignored,
            c.function,
            c.ignore_index.unwrap_or(-100)
        ))
        .number("targets", targets as f64)
        .number("ignored", ignored as f64)
        .at(c.location.clone()),
    );
}

fn padding(p: &Process, out: &mut Vec<Finding>) {
    let pads: u64 = p.labels.iter().map(|l| l.pad_positions).sum();
    let labelled: u64 = p.labels.iter().map(|l| l.pad_labelled).sum();
    let positions: u64 = p
        .labels
        .iter()
        .map(|l| l.positions.max(l.pad_positions))
        .sum();
    if pads == 0
        || (pads as f64) < MIN_PAD_SHARE * positions as f64
        || (labelled as f64) < PAD_LABELLED * pads as f64
    {
        return;
    }
    let step = p.labels[0].step;
    out.push(
        Finding::new(
            Symptom::PaddingLabelled,
            Severity::Warn,
            "labels",
            step as f64,
        )
        .summary(format!(
            "{labelled} of {pads} padded positions carry a label the loss reads ({}): the model \
                 is trained to predict padding (set their labels to -100)",
            pct(labelled as f64 / pads as f64)
        ))
        .number("pad_positions", pads as f64)
        .number("pad_labelled", labelled as f64),
    );
}

fn alignment(p: &Process, out: &mut Vec<Finding>) {
    let Some(l) = p.labels.iter().find(|l| l.positions > 0) else {
        return;
    };
    let equal = l.equal_inputs.unwrap_or(0.0);
    let next = l.next_inputs.unwrap_or(0.0);
    let model = p
        .models
        .iter()
        .find(|m| m.model == l.model)
        .map(|m| m.class.clone())
        .unwrap_or_else(|| "the model".into());
    let site = p
        .models
        .iter()
        .find(|m| m.model == l.model)
        .and_then(|m| m.location.clone());
    let finding = if l.shifts_labels && next >= ALIGNED && next > equal {
        Finding::new(
            Symptom::LabelsShiftedTwice,
            Severity::Fail,
            "labels",
            l.step as f64,
        )
        .summary(format!(
            "{model} shifts its labels itself, but the labels it gets are already the next \
                 tokens ({} of positions): every position learns the token two ahead (pass \
                 labels = input_ids)",
            pct(next)
        ))
    } else if !l.shifts_labels && equal >= ALIGNED && l.source.as_deref() == Some("loss") {
        Finding::new(
            Symptom::LabelsNotShifted,
            Severity::Fail,
            "labels",
            l.step as f64,
        )
        .summary(format!(
            "the targets equal {model}'s inputs at {} of positions, and it does not shift \
                 them: it learns to copy its input (targets should be the inputs shifted by one)",
            pct(equal)
        ))
    } else {
        return;
    };
    out.push(
        finding
            .number("positions", l.positions as f64)
            .number("labels_equal_inputs", equal)
            .number("labels_equal_next_inputs", next)
            .at(site),
    );
}

fn softmax(p: &Process, out: &mut Vec<Finding>) {
    let Some(c) = p
        .loss_calls
        .iter()
        .find(|c| c.probabilities && c.function == "cross_entropy")
    else {
        return;
    };
    out.push(
        Finding::new(
            Symptom::SoftmaxBeforeLoss,
            Severity::Fail,
            "loss",
            c.step as f64,
        )
        .summary(format!(
            "{} receives probabilities (every row in [0, 1], summing to 1): it applies its own \
                 log-softmax, so the softmax is applied twice and the gradients flatten (pass the \
                 logits)",
            c.function
        ))
        .number("classes", c.classes.unwrap_or(0) as f64)
        .at(c.location.clone()),
    );
}

fn init_loss(p: &Process, out: &mut Vec<Finding>) {
    let Some(c) = p
        .loss_calls
        .iter()
        .filter(|c| c.function == "cross_entropy" && !c.probabilities)
        .min_by_key(|c| c.step)
    else {
        return;
    };
    // The loss per target: a summed loss (transformers' Trainer sums, then divides) is not
    // chance-sized.
    let per_target = c
        .per_target
        .or(c.value.filter(|_| c.reduction.as_deref() != Some("sum")));
    let (Some(classes), Some(value)) = (c.classes, per_target) else {
        return;
    };
    if classes < 2 || !value.is_finite() {
        return;
    }
    let chance = (classes as f64).ln();
    if value <= chance * INIT_FACTOR + INIT_MARGIN {
        return;
    }
    out.push(
        Finding::new(Symptom::InitLossOff, Severity::Warn, "loss", c.step as f64)
            .summary(format!(
                "the first loss is {value:.3}, far above chance ln {classes} = {chance:.3}: the \
                 model starts confidently wrong (inputs not normalised, an output layer \
                 initialised too large)"
            ))
            .number("loss", value)
            .number("chance", chance)
            .number("classes", classes as f64)
            .at(c.location.clone()),
    );
}
