//! What numbers say in a question (see `concepts`, which annotates the words first): a loss at
//! ln k for a usual class count is chance; a number beside a reference is high or low; a first
//! loss far from ln C; the curves of a pasted log and their trends; a near-perfect metric in the
//! first epoch. Each adds concept slots after the words'.

use super::slot::{Slot, PREFIX};
use super::text;

/// A slot's one word, the concepts marked on it aside: `None` for a phrase's slot or one that
/// holds concepts only.
fn plain(slot: &Slot) -> Option<&str> {
    let mut words = slot.iter().filter(|w| !w.starts_with(PREFIX));
    match (words.next(), words.next()) {
        (Some(w), None) => Some(w.as_str()),
        _ => None,
    }
}

/// Class counts whose chance-level cross-entropy (ln k) people paste: few-way tasks, the usual
/// benchmark label counts and the vocabularies of common tokenizers.
const CLASS_COUNTS: &[f64] = &[
    2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 100.0, 1000.0, 32000.0, 32768.0, 50257.0, 50304.0, 128256.0,
    151936.0, 256000.0,
];

/// What numbers say on their own: a loss written with decimals that equals ln k for a usual
/// class count k, to the precision it is written with, is the loss of a uniform guess
/// (`2.30` for ten classes, `10.82` for GPT-2's vocabulary): chance. And "X while the
/// reference (paper, baseline) gets Y", or "X, expected Y", says X is high or low.
pub fn numbers(slots: &mut Vec<Slot>) {
    let single = |slot: &Slot| -> Option<(f64, usize)> {
        let w = plain(slot)?;
        let decimals = w.split_once('.').map(|(_, d)| d.len())?;
        w.parse::<f64>().ok().map(|x| (x, decimals))
    };
    let number = |slot: &Slot| -> Option<f64> { plain(slot)?.parse::<f64>().ok() };
    // Normalised as any text is ("reference" is stemmed; "instead" and "should" are stop words
    // and never reach here), so they meet the query's words.
    const BETWEEN: &[&str] = &[
        "reference",
        "expected",
        "paper",
        "baseline",
        "thought",
        "supposed",
    ];
    let between: Vec<String> = BETWEEN.iter().flat_map(|w| text::words(w)).collect();
    let words = |slot: &Slot| -> bool { slot.iter().any(|w| between.contains(w)) };
    let mut added: Vec<Slot> = Vec::new();
    for (i, slot) in slots.iter().enumerate() {
        // "expected 2.3": a number right after a reference word is the reference, not the
        // value seen
        if slots[i.saturating_sub(3)..i].iter().any(words) {
            continue;
        }
        if let Some((x, decimals)) = single(slot) {
            let half_unit = 0.5 * 10f64.powi(-(decimals as i32));
            if CLASS_COUNTS
                .iter()
                .any(|k| (x - k.ln()).abs() <= half_unit + 1e-3)
            {
                added.push(vec![format!("{PREFIX}chance")]);
            }
        }
    }
    for i in 0..slots.len() {
        let Some(x) = number(&slots[i]) else { continue };
        let ahead = (i + 1..slots.len().min(i + 7)).find_map(|j| number(&slots[j]).map(|y| (j, y)));
        let Some((j, y)) = ahead else { continue };
        if x != y && slots[i + 1..j].iter().any(words) {
            let side = if x > y { "big" } else { "small" };
            added.push(vec![format!("{PREFIX}{side}")]);
        }
    }
    added.extend(init_scale(slots));
    added.extend(series(slots));
    added.extend(near_perfect_early(slots));
    slots.extend(added);
}

/// A near-perfect metric (0.99 or more, or 99% and over) within the first epoch: what the
/// rows on results too good too early are about, however the user words their doubt.
fn near_perfect_early(slots: &[Slot]) -> Vec<Slot> {
    let metrics = norm_all(&["accuracy", "acc", "auc", "f1", "precision", "recall"]);
    let once = norm_all(&["first", "single", "one", "1"]);
    let epoch = norm_all(&["epoch"]);
    let word = |i: usize| slots.get(i).and_then(plain);
    // written as a metric is ("0.998", "1.0000", "99%"); a bare "1" is a count or an epoch
    let near_perfect = |w: &str| {
        w != "1"
            && w.parse::<f64>()
                .is_ok_and(|v| (0.99..=1.0).contains(&v) || (99.0..=100.0).contains(&v))
    };
    let metric_high = (0..slots.len()).any(|i| {
        word(i).is_some_and(|w| metrics.iter().any(|m| m == w))
            && (i.saturating_sub(3)..(i + 4).min(slots.len()))
                .any(|j| j != i && word(j).is_some_and(near_perfect))
    });
    let early = (0..slots.len()).any(|i| {
        word(i).is_some_and(|w| epoch.iter().any(|e| e == w))
            && [i.wrapping_sub(1), i + 1]
                .into_iter()
                .any(|j| word(j).is_some_and(|w| once.iter().any(|o| o == w)))
    });
    if metric_high && early {
        vec![
            vec![format!("{PREFIX}suspicious")],
            vec![format!("{PREFIX}suspicious")],
        ]
    } else {
        Vec::new()
    }
}

/// Class counts people name by their data set instead of a number.
const NAMED_COUNTS: &[(&str, f64)] = &[
    ("imagenet", 1000.0),
    ("mnist", 10.0),
    ("cifar10", 10.0),
    ("cifar100", 100.0),
];

/// A loss at initialisation against ln C: a classifier that has learned nothing predicts
/// nearly uniformly, so its first cross-entropy is about ln C whatever the model. A query that
/// names a class count (`10 classes`, `100-class`, `num_classes=100`, `vocab 32000`,
/// ImageNet), a loss value and the start of training reads as a first loss far above ln C
/// (more than twice: confident wrong logits, unnormalised inputs, a summed loss) or far below
/// it (under half: the loss or its targets are wrong).
fn init_scale(slots: &[Slot]) -> Vec<Slot> {
    let word = |i: usize| slots.get(i).and_then(plain);
    let value = |i: usize| word(i).and_then(|w| w.parse::<f64>().ok());
    let has = |t: &str| slots.iter().any(|s| s.iter().any(|w| w == t));
    if !has(&format!("{PREFIX}init")) {
        return Vec::new();
    }
    let counts = norm_all(&[
        "class",
        "classes",
        "label",
        "labels",
        "way",
        "category",
        "categories",
        "outputs",
    ]);
    let loss_words = norm_all(&["loss", "entropy", "nll", "ce"]);
    let step_words = norm_all(&["step", "epoch", "iter", "iteration"]);
    let counted = |w: &str| counts.iter().any(|k| k == w);
    let mut classes = None;
    let mut count_at = usize::MAX;
    for i in 0..slots.len() {
        if let Some((_, k)) = word(i).and_then(|w| NAMED_COUNTS.iter().find(|(n, _)| *n == w)) {
            classes = Some(*k);
        }
        if word(i).is_some_and(|w| w == "cifar") {
            classes = value(i + 1)
                .filter(|k| *k == 10.0 || *k == 100.0)
                .or(classes);
        }
        let Some(k) = value(i) else { continue };
        let after = word(i + 1).is_some_and(counted);
        // "num_classes=100", "vocab 32000": the count's name before it
        let before = i > 0 && word(i - 1).is_some_and(|w| counted(w) || w.starts_with("vocab"));
        if (after || before) && k >= 2.0 && k.fract() == 0.0 {
            classes = Some(k);
            count_at = i;
        }
    }
    let Some(c) = classes else { return Vec::new() };
    // The loss: a number within four words after "loss" (or "entropy", "nll"), not the class
    // count and not a step's number.
    let step_word = |j: usize| word(j).is_some_and(|w| step_words.iter().any(|s| s == w));
    let mut loss = None;
    for i in 0..slots.len() {
        if !slots[i].iter().any(|w| loss_words.contains(w)) {
            continue;
        }
        let found = (i + 1..(i + 5).min(slots.len()))
            .filter(|&j| j != count_at && !step_word(j - 1))
            .find_map(|j| value(j).map(|v| (j, v)));
        if let Some((j, v)) = found {
            // the loss at a later step ("loss at step 10 is 0.05") is not a first loss
            let later = (i + 1..j).any(|k| step_word(k) && value(k + 1).is_some());
            loss = (!later).then_some(v);
            break;
        }
    }
    let Some(l) = loss else { return Vec::new() };
    let chance = c.ln();
    let mark = |side: &str, at: &str| {
        vec![
            vec![format!("{PREFIX}{side}")],
            vec![format!("{PREFIX}init")],
            vec![format!("{PREFIX}{at}")],
        ]
    };
    if l > 2.0 * chance {
        mark("big", "inithigh")
    } else if l < 0.5 * chance {
        mark("small", "initlow")
    } else {
        Vec::new()
    }
}

/// One quantity's values in a pasted log, each with the step or epoch named before it.
struct Curve {
    /// `train`, `val`, `eval`... or empty.
    split: String,
    /// `loss`, `accuracy`...
    quantity: String,
    points: Vec<(Option<f64>, f64)>,
}

#[derive(PartialEq)]
enum Trend {
    Flat,
    Rising,
    Falling,
    Other,
}

fn norm_all(ws: &[&str]) -> Vec<String> {
    ws.iter().flat_map(|w| text::words(w)).collect()
}

/// The curves of a pasted log: the values that follow one quantity's name (`loss 2.31`,
/// `val_loss: 0.48`, `eval_accuracy 0.6231`), in the order written.
fn curves(slots: &[Slot], quantities: &[String]) -> Vec<Curve> {
    let steps = norm_all(&["step", "epoch", "iter", "iteration", "batch"]);
    let splits = norm_all(&[
        "train",
        "training",
        "val",
        "valid",
        "validation",
        "eval",
        "test",
        "dev",
    ]);
    let number = |w: &str| -> Option<f64> {
        if w == "zero" {
            Some(0.0)
        } else {
            w.parse::<f64>().ok().filter(|v| v.is_finite())
        }
    };
    let mut out: Vec<Curve> = Vec::new();
    let mut step: Option<f64> = None;
    let mut key: Vec<String> = Vec::new();
    for slot in slots {
        let words: Vec<&String> = slot.iter().filter(|w| !w.starts_with(PREFIX)).collect();
        match words.as_slice() {
            [] => {}
            [first, second, ..] => {
                if steps.contains(first) && second.as_str() == "zero" {
                    step = Some(0.0);
                    key.clear();
                } else {
                    key.extend(words.iter().map(|w| w.to_string()));
                }
            }
            [w] => match number(w) {
                Some(v) if key.last().is_some_and(|k| steps.contains(k)) => {
                    step = Some(v);
                    key.clear();
                }
                Some(v) => {
                    if let Some(q) = key.last().filter(|k| quantities.contains(k)) {
                        let split = key
                            .len()
                            .checked_sub(2)
                            .map(|i| key[i].clone())
                            .filter(|k| splits.contains(k))
                            .unwrap_or_default();
                        match out
                            .iter_mut()
                            .find(|c| c.split == split && c.quantity == *q)
                        {
                            Some(c) => c.points.push((step, v)),
                            None => out.push(Curve {
                                split,
                                quantity: q.clone(),
                                points: vec![(step, v)],
                            }),
                        }
                    }
                    key.clear();
                }
                None => key.push(w.to_string()),
            },
        }
    }
    out
}

/// A curve's trend: flat within 2% of its mean (the spread of a loss that learns nothing over
/// a few hundred steps), rising or falling with at most one step in four against it.
fn trend(c: &Curve) -> Trend {
    let v: Vec<f64> = c.points.iter().map(|x| x.1).collect();
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let ups = v.windows(2).filter(|w| w[1] > w[0]).count();
    let downs = v.windows(2).filter(|w| w[1] < w[0]).count();
    // one step against the trend in four is noise in a longer curve, none in a short one
    let against = (v.len() - 1) / 4;
    let last = v[v.len() - 1];
    if hi - lo <= 0.02 * mean.abs().max(1e-12) {
        Trend::Flat
    } else if downs <= against && ups + against >= v.len() - 1 && last > 1.1 * v[0] {
        Trend::Rising
    } else if ups <= against && downs + against >= v.len() - 1 && last < v[0] {
        Trend::Falling
    } else {
        Trend::Other
    }
}

/// A pasted log's curves (three values or more of one quantity), read as people read them:
/// the same value again and again is flat; a loss that only grows is rising (from the first
/// step, or diverging for good when it at least doubles late in training); a validation loss
/// that grows while the training loss falls is overfitting; a metric that does not move while
/// the loss falls is a stuck metric.
fn series(slots: &[Slot]) -> Vec<Slot> {
    let losses = norm_all(&["loss", "nll", "ppl", "perplexity", "mse"]);
    let metrics = norm_all(&[
        "accuracy",
        "acc",
        "f1",
        "auc",
        "bleu",
        "rouge",
        "wer",
        "precision",
        "recall",
    ]);
    let quantities: Vec<String> = losses.iter().chain(&metrics).cloned().collect();
    let read: Vec<(Curve, Trend)> = curves(slots, &quantities)
        .into_iter()
        .filter(|c| c.points.len() >= 3)
        .map(|c| {
            let t = trend(&c);
            (c, t)
        })
        .collect();
    let is_val = |split: &str| !split.is_empty() && !split.starts_with("train");
    let is_loss = |c: &Curve| losses.contains(&c.quantity);
    let train_falls = read
        .iter()
        .any(|(c, t)| is_loss(c) && !is_val(&c.split) && *t == Trend::Falling);
    let loss_falls = read.iter().any(|(c, t)| is_loss(c) && *t == Trend::Falling);
    let mark = |c: &str| vec![format!("{PREFIX}{c}")];
    let mut out: Vec<Slot> = Vec::new();
    for (c, t) in &read {
        let loss = is_loss(c);
        match t {
            Trend::Flat if loss => out.extend([mark("flat"), mark("flat")]),
            Trend::Flat if loss_falls => out.extend([mark("flat"), mark("metric")]),
            Trend::Flat => out.push(mark("flat")),
            Trend::Rising if loss && is_val(&c.split) && train_falls => {
                out.extend([mark("valrise"), mark("overfitting")])
            }
            Trend::Rising if loss => {
                let p = &c.points;
                let late = p[0].0.is_some_and(|s| s > 100.0);
                let doubled = p[p.len() - 1].1 >= 2.0 * p[0].1;
                let seen = if late && doubled { "explode" } else { "rise" };
                out.extend([mark(seen), mark(seen)]);
            }
            Trend::Falling if loss => out.push(mark("fall")),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::concepts::annotate;
    use super::super::text;

    fn terms(s: &str) -> Vec<String> {
        annotate(&text::words(s)).into_iter().flatten().collect()
    }

    #[test]
    fn a_loss_at_ln_of_a_class_count_is_chance() {
        for q in [
            "stuck at 2.30 for cifar10",
            "loss 0.693 forever",
            "loss sits at 10.82",
        ] {
            assert!(terms(q).contains(&"@chance".to_string()), "{q}");
        }
        for q in [
            "loss 2.5",
            "lr 2.3e-4 works",
            "loss 2.35 after a day",
            "trained 3 epochs",
        ] {
            assert!(!terms(q).contains(&"@chance".to_string()), "{q}");
        }
    }

    #[test]
    fn a_number_instead_of_another_is_high_or_low() {
        let t = terms("we get 1.9 while the paper reports 1.6");
        assert!(t.contains(&"@big".to_string()), "{t:?}");
        let t = terms("loss stops at 2.5 while the reference gets to 1.8");
        assert!(t.contains(&"@big".to_string()), "{t:?}");
        let t = terms("we get 0.9 and the baseline reaches 1.2");
        assert!(t.contains(&"@small".to_string()), "{t:?}");
        let t = terms("first loss 0.05, expected 4.6");
        assert!(t.contains(&"@small".to_string()), "{t:?}");
        assert!(!terms("batch 32 and 4 gpus")
            .iter()
            .any(|t| t == "@big" || t == "@small"));
    }

    #[test]
    fn a_first_loss_far_from_ln_c_is_high_or_low() {
        let t = |q: &str| terms(q);
        for q in [
            "initial loss is 45 with 10 classes",
            "1000-class imagenet model starts at loss ~30 before training",
            "cifar10: loss at step 0 is 9.8",
        ] {
            assert!(
                t(q).contains(&"@big".to_string()),
                "{q}: {:?}",
                annotate(&text::words(q))
            );
        }
        for q in [
            "loss at step 0 is 0.05 on a 100-class problem before any update",
            "initial loss 0.3 with a vocab of 32000",
        ] {
            assert!(t(q).contains(&"@small".to_string()), "{q}: {:?}", t(q));
        }
        // ln C itself, no start of training, or no class count: nothing said
        for q in [
            "initial loss is 2.4 with 10 classes",
            "loss is 45 with 10 classes at epoch 30",
            "initial loss is 45",
            "loss at step 10 is 0.05, 100 classes, from the start",
        ] {
            let got = t(q);
            assert!(
                !got.contains(&"@big".to_string()) && !got.contains(&"@small".to_string()),
                "{q}: {got:?}"
            );
        }
    }

    #[test]
    fn a_reference_number_is_not_the_value_seen() {
        assert!(
            !terms("loss is 45, I expected something like 2.3").contains(&"@chance".to_string())
        );
        assert!(terms("loss stuck at 2.30").contains(&"@chance".to_string()));
    }

    #[test]
    fn a_pasted_curve_reads_as_its_trend() {
        let has = |q: &str, c: &str| terms(q).contains(&c.to_string());
        let rising =
            "step 0 loss 2.31 | step 50 loss 2.58 | step 100 loss 2.97 | step 150 loss 3.40";
        assert!(has(rising, "@rise") && !has(rising, "@explode"));
        let late = "step 41800 loss 3.18 | step 42000 loss 3.95 | step 42200 loss 8.71 | step 42400 loss 11.9";
        assert!(has(late, "@explode"));
        assert!(has(
            "Epoch 1 loss 0.693147  Epoch 2 loss 0.693147  Epoch 3 loss 0.693147",
            "@flat"
        ));
        let gap =
            "epoch 6 train_loss 0.21 val_loss 0.48 | epoch 12 train_loss 0.05 val_loss 0.71 | \
                   epoch 20 train_loss 0.01 val_loss 1.02";
        assert!(has(gap, "@valrise") && has(gap, "@overfitting"));
        let stuck = "eval_loss 0.91 eval_accuracy 0.6231 | eval_loss 0.64 eval_accuracy 0.6231 | \
                     eval_loss 0.47 eval_accuracy 0.6231";
        assert!(has(stuck, "@flat") && has(stuck, "@metric"));
        // two values are not a curve; a noisy one has no trend
        assert!(!has("loss 2.31 then loss 2.58", "@rise"));
        assert!(!has("loss 2.3 loss 2.9 loss 2.1 loss 2.8", "@rise"));
        assert!(!has("loss 2.3 loss 2.9 loss 2.1 loss 2.8", "@flat"));
    }

    #[test]
    fn a_near_perfect_metric_in_the_first_epoch_is_suspicious() {
        let has = |q: &str| terms(q).contains(&"@suspicious".to_string());
        assert!(has("99% val accuracy after the first epoch"));
        assert!(has(
            "Epoch 1/30 - loss: 0.0031 - acc: 1.0000 - val_acc: 0.9996"
        ));
        assert!(has(
            "0.998 AUC on the validation split after a single epoch"
        ));
        assert!(!has("99% val accuracy after 40 epochs"));
        assert!(!has("epoch 1 acc 0.61"));
    }

    #[test]
    fn numbers_fill_number_slots() {
        let t = terms("overfitting 10 examples fails");
        assert!(t.contains(&"@batchfit".to_string()), "{t:?}");
        assert!(!t.contains(&"@overfitting".to_string()), "{t:?}");
        assert!(t.contains(&"overfit".to_string()), "the words stay: {t:?}");
        assert!(terms("my model is overfitting").contains(&"@overfitting".to_string()));
    }
}
