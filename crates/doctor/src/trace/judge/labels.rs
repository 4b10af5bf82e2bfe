//! Labels and the loss: every target ignored, padding labelled, labels shifted twice or not at
//! all (batch-major or time-major), a token id ignored wherever it occurs, rows with nothing
//! supervised, probabilities given to a cross-entropy, and a first loss far above chance.

use std::collections::BTreeMap;

use super::pct;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Labels;

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
/// A token is judged never supervised from this many attended target positions, all ignored,
/// over the early steps: a collator that masks one id does so every time, and a token of a few
/// occurrences could be ignored for a reason of its own (the one answer token cut away).
const MIN_TOKEN_POSITIONS: u64 = 8;
/// ...listed as never supervised by this share of the early batches that hold supervised
/// targets (a rule of the collator repeats in every batch; a coincidence does not)...
const TOKEN_BATCHES: f64 = 0.5;
/// ...and this share of its ignored positions isolated (every attended neighbour supervised):
/// "every occurrence of one id, anywhere". A prompt-masking collator ignores spans, so the
/// tokens only its prompts hold have ignored neighbours and stay below this.
const TOKEN_ISOLATED: f64 = 0.5;
/// Rows (samples) with no supervised position, at this share of the early batches' rows or
/// more. Such a row costs its forward and backward and adds nothing to the gradient. A sound
/// pipeline loses whole rows only to its length outliers (a prompt longer than the truncation
/// length sized for the data: its tail, a few percent of rows). A quarter is no tail: the cut
/// (or the masking) removes the answer systematically, the effective batch is three quarters of
/// the batch, and the rows that survive are the short ones, so what the model learns is biased,
/// not only slower. Over the early steps (24 rows or more) a binomial share of 25% lies several
/// standard errors above a 5% tail.
const ROWS_UNSUPERVISED: f64 = 0.25;
/// ...judged from this many rows or more.
const MIN_ROWS: u64 = 8;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    all_ignored(p, out);
    padding(p, out);
    alignment(p, out);
    never_supervised(p, out);
    rows_unsupervised(p, out);
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
    let two = l.two_inputs.unwrap_or(0.0);
    let layout = if l.layout.as_deref() == Some("time_major") {
        " along the time axis of its time-major (T, B) batches"
    } else {
        ""
    };
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
    } else if !l.shifts_labels
        && two >= ALIGNED
        && two > next
        && two > equal
        && l.source.as_deref() == Some("loss")
    {
        Finding::new(
            Symptom::LabelsShiftedTwice,
            Severity::Fail,
            "labels",
            l.step as f64,
        )
        .summary(format!(
            "the targets given to the loss are {model}'s inputs two positions ahead{layout} ({} \
                 of positions): every position learns the token two ahead (targets should be \
                 the inputs shifted by one)",
            pct(two)
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
            .number("labels_equal_inputs_two_ahead", two)
            .at(site),
    );
}

/// The early batches with gradients on whose labels hold supervised targets.
fn supervised_batches(p: &Process) -> Vec<&Labels> {
    p.labels
        .iter()
        .filter(|l| l.grad_enabled != Some(false) && l.supervised_targets.unwrap_or(0) > 0)
        .collect()
}

fn never_supervised(p: &Process, out: &mut Vec<Finding>) {
    let batches = supervised_batches(p);
    if batches.is_empty() {
        return;
    }
    // token -> (batches listing it, positions, isolated positions, a batch listing it)
    let mut tokens: BTreeMap<i64, (usize, u64, u64, &Labels)> = BTreeMap::new();
    for l in &batches {
        for t in l.never_supervised.iter().flatten() {
            let e = tokens.entry(t.token).or_insert((0, 0, 0, l));
            e.0 += 1;
            e.1 += t.positions;
            e.2 += t.isolated;
        }
    }
    let attended: u64 = batches.iter().filter_map(|l| l.attended_targets).sum();
    let Some((&token, &(_, positions, isolated, l))) = tokens
        .iter()
        .filter(|(_, (n, positions, isolated, _))| {
            *n as f64 >= TOKEN_BATCHES * batches.len() as f64
                && *positions >= MIN_TOKEN_POSITIONS
                && *isolated as f64 >= TOKEN_ISOLATED * *positions as f64
        })
        .max_by_key(|(_, (_, positions, _, _))| *positions)
    else {
        return;
    };
    let share = positions as f64 / attended.max(1) as f64;
    let is_pad = l.pad_token_id == Some(token);
    let is_eos = l.eos_token_id == Some(token);
    let what = match (is_pad, is_eos) {
        (true, true) => " (the pad id, which is also the eos id: the model never learns to stop)",
        (true, false) => " (the pad id, which is also a real token of the text)",
        (false, true) => " (the eos id: the model never learns to stop)",
        (false, false) => "",
    };
    out.push(
        Finding::new(
            Symptom::TokenNeverSupervised,
            Severity::Warn,
            "labels",
            l.step as f64,
        )
        .summary(format!(
            "token id {token}{what} is the target at {positions} attended positions ({} of \
                 the attended targets) and its label is ignored at every one, while the tokens \
                 around it are supervised: a collator masks that id wherever it occurs (a pad id \
                 shared with a real token); mask padding by the attention mask, not by the id",
            pct(share)
        ))
        .number("token", token as f64)
        .number("positions", positions as f64)
        .number("share_of_attended", share)
        .number("isolated", isolated as f64)
        .number("is_pad_token", f64::from(u8::from(is_pad)))
        .number("is_eos_token", f64::from(u8::from(is_eos))),
    );
}

fn rows_unsupervised(p: &Process, out: &mut Vec<Finding>) {
    // Only labels that are the inputs at some offset: masked-LM labels (the input is [MASK]
    // where a label is kept) leave short rows with no masked position by chance, 0.85^n of the
    // rows of n tokens at a 15% rate, and that is the objective, not a cut.
    let aligned = |l: &Labels| {
        [l.equal_inputs, l.next_inputs, l.two_inputs]
            .into_iter()
            .flatten()
            .any(|s| s >= ALIGNED)
    };
    let batches: Vec<_> = p
        .labels
        .iter()
        .filter(|l| l.grad_enabled != Some(false) && l.rows > 0 && aligned(l))
        .collect();
    let rows: u64 = batches.iter().map(|l| l.rows).sum();
    let empty: u64 = batches.iter().map(|l| l.rows_unsupervised).sum();
    // Every row empty is every target ignored: labels-all-ignored's.
    if rows < MIN_ROWS || empty == rows || (empty as f64) < ROWS_UNSUPERVISED * rows as f64 {
        return;
    }
    let step = batches
        .iter()
        .find(|l| l.rows_unsupervised > 0)
        .map_or(0, |l| l.step);
    out.push(
        Finding::new(
            Symptom::RowsUnsupervised,
            Severity::Warn,
            "labels",
            step as f64,
        )
        .summary(format!(
            "{empty} of the {rows} rows of the first batches have no supervised position ({}): \
                 every label of those samples is ignored, so they cost compute and teach nothing \
                 (truncation cut the answer away, or a mask covers the whole sample)",
            pct(empty as f64 / rows as f64)
        ))
        .number("rows", rows as f64)
        .number("rows_unsupervised", empty as f64),
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
