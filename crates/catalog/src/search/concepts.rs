//! Concepts: the ideas practitioners name in many ways ("NaN", "inf", "non-finite"; "val loss
//! going up", "validation loss increasing"). Documents and queries are both annotated with the
//! same concept terms (`@name`), so a row and a question meet on the idea, not on the word.
//!
//! Three mechanisms, each linear in the number of words:
//! - a **form** (one word or a phrase of up to [`MAX_PHRASE`] words, written naturally and
//!   normalised like any text) marks its concept; the longest form at a position wins, so the
//!   concepts of the single words inside a phrase are not marked ("overfit one batch" is not
//!   overfitting); an idiom's phrase also replaces its words ("memory leak" is memory growth,
//!   and its `leak` is not a data leak; "not decreasing" is not "decreasing"); the word
//!   `anynumber` in a form matches any number;
//! - a **near rule** marks a concept where two others occur within a few words of each other
//!   ("GPU memory keeps increasing": memory near a rise is memory growth);
//! - **also** words are added to a query, at a lower weight, when it names the concept.

use super::text;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The longest phrase, in normalised words.
pub const MAX_PHRASE: usize = 5;
/// The prefix of a concept term; the tokenizer never produces it.
pub const PREFIX: char = '@';
/// In a form, stands for any number.
const ANY_NUMBER: &str = "anynumber";

struct Concept {
    name: &'static str,
    forms: &'static [&'static str],
    also: &'static [&'static str],
    /// An idiom: its phrases replace their words, which mean something else alone.
    idiom: bool,
}

const fn c(
    name: &'static str,
    forms: &'static [&'static str],
    also: &'static [&'static str],
) -> Concept {
    Concept {
        name,
        forms,
        also,
        idiom: false,
    }
}

const fn idiom(
    name: &'static str,
    forms: &'static [&'static str],
    also: &'static [&'static str],
) -> Concept {
    Concept {
        name,
        forms,
        also,
        idiom: true,
    }
}

#[rustfmt::skip]
const CONCEPTS: &[Concept] = &[
    c("nonfinite", &["nan", "inf", "infinity", "infinite", "nonfinite", "non-finite", "not a number"], &[]),
    c("explode", &["explode", "explosion", "diverge", "divergence", "blow up", "shoot up", "skyrocket", "go haywire", "unstable", "instability"], &[]),
    c("spike", &["spike", "spiky", "jump", "sudden jump", "bump", "blip"], &[]),
    c("flat", &["flat", "plateau", "stuck", "stall", "stagnate", "constant", "flatten", "level off", "not decrease", "not go down", "not fall", "not drop", "not improve", "not learn", "not move", "not budge", "not change", "not converge", "stay same", "same value", "no progress", "stop improving", "stop decreasing", "stop go down", "stop falling", "stop learning", "horizontal line", "flat line", "straight line", "horizontal"], &[]),
    c("nochange", &["not change", "no effect", "no difference", "unchanged", "identical", "same as before", "same as base", "exactly like", "not affect", "not apply", "not applied"], &[]),
    idiom("nearzero", &["near zero", "close to zero", "almost zero", "nearly zero", "approach zero", "approximately zero"], &[]),
    c("rise", &["rise", "increase", "go up", "go back up", "come back up", "climb", "grow", "creep up"], &[]),
    c("fall", &["fall", "decrease", "go down", "drop", "decline", "come down"], &[]),
    c("lr", &["learning rate", "lr"], &[]),
    c("val", &["validation", "val", "eval", "evaluation", "held out", "holdout", "dev set", "test", "unseen data"], &[]),
    c("overfitting", &["overfit", "overfitting", "generalize", "generalization", "memorize training data", "peak", "early stopping"], &[]),
    c("batchfit", &["overfit one batch", "overfit single batch", "overfit small batch", "overfit one small batch", "overfit batch", "overfit anynumber example", "overfit anynumber sample", "overfit anynumber batch", "overfit few example", "overfit tiny", "overfit handful", "memorize one batch", "memorize single batch", "memorize small batch", "memorize one small batch", "memorize batch", "memorize anynumber example", "memorize few example"], &["overfit", "batch"]),
    c("fewdata", &["subset", "few samples", "few examples", "handful", "single batch", "one batch", "small batch", "tiny batch", "few batches"], &[]),
    c("memory", &["memory", "ram", "vram", "mem"], &[]),
    c("oom", &["oom", "out of memory", "outofmemory", "tried to allocate", "allocation failed", "memory budget"], &["memory"]),
    idiom("memgrow", &["memory leak", "leak memory", "leaking memory", "memory leakage"], &["memory"]),
    c("leak", &["leak", "leakage", "cheat", "peek", "future token", "see future", "look ahead"], &[]),
    c("mask", &["mask", "padding", "pad", "ignore", "ignore_index"], &[]),
    c("imbalance", &["imbalance", "imbalanced", "unbalanced", "majority", "minority", "skew", "class weight", "rare class", "long tail"], &[]),
    c("oneclass", &["same class", "one class", "single class", "same label", "one label", "majority class", "always predict", "only predict", "predict only", "always output", "constant prediction", "predict same", "one column", "single column", "predict everything as"], &[]),
    c("grad", &["gradient", "grad", "backward", "backprop", "backpropagation"], &[]),
    c("nograd", &["no gradient", "no grad", "grad none", "gradient none", "zero gradient", "zero grad", "detach", "detached", "cut gradient", "gradient cut"], &["gradient"]),
    c("vanish", &["vanish", "diminish", "vanishing gradient"], &[]),
    c("lasthead", &["last layer", "output layer", "final layer", "head", "lm_head", "classifier head", "output head"], &[]),
    c("init", &["init", "initialization", "initial", "initially", "start", "beginning", "step zero", "epoch zero", "iteration zero", "before training", "before any training", "before any update", "before update", "before any step", "before any optimizer step", "before optimizer step", "before first step", "untrained", "first loss", "starting loss"], &[]),
    c("chance", &["chance", "random guess", "random guessing", "uniform prediction", "coin flip", "better than random", "1/num_classes", "1/n_classes", "1/number of classes", "one over the number of classes", "random level"], &[]),
    c("big", &["high", "higher", "above", "greater", "large", "big", "huge", "enormous", "massive"], &[]),
    c("small", &["low", "lower", "below", "small", "tiny"], &[]),
    c("suspicious", &["too good", "too good to be true", "suspicious", "suspiciously", "unrealistic", "too early", "too fast", "too quickly", "seems impossible", "impossibly", "within minutes", "right away", "fishy", "sketchy", "hard to believe", "surprisingly good", "too high to be real"], &[]),
    c("throughput", &["slow", "slower", "slowdown", "slow down", "speed", "throughput", "util", "utilization", "utilize", "tokens per second", "samples per second", "token sec", "step time", "time per step", "too long", "forever", "idle", "faster", "sluggish", "wall clock", "epoch take", "take anynumber hour", "take anynumber minute", "take anynumber day", "hour per epoch", "minute per epoch", "per iteration", "time spent", "profiler"], &[]),
    c("dataloader", &["dataloader", "data loader", "data loading", "load data", "loading batches", "data pipeline", "input pipeline", "num_workers", "worker", "prefetch", "collate", "wait data", "waiting for data", "data wait", "pin_memory"], &[]),
    c("bottleneck", &["bottleneck", "cpu bound", "io bound", "starved"], &[]),
    c("lora", &["lora", "qlora", "peft", "adapter", "low rank", "low-rank", "target_modules", "lora_alpha"], &[]),
    c("trainable", &["trainable", "requires_grad", "frozen", "freeze", "not trainable", "trainable params"], &[]),
    c("deploy", &["deploy", "deployment", "inference", "gguf", "llama.cpp", "llama cpp", "vllm", "ollama", "export", "serving", "convert", "conversion", "production", "prod", "triton", "torchscript", "onnx", "fastapi"], &[]),
    c("gibberish", &["gibberish", "garbage", "nonsense", "junk", "word salad", "incoherent", "repetitive", "repeat itself", "poor"], &[]),
    c("eos", &["eos", "bos", "end of sequence", "stop token", "not stop", "chat template", "template", "special token"], &[]),
    c("causal", &["causal mask", "attention mask", "future token", "look ahead", "see future"], &["mask"]),
    c("underfit", &["underfit", "underfitting", "capacity", "too high", "stay high", "well above", "high value"], &[]),
    c("seed", &["seed", "random seed", "luck", "lucky", "run to run", "variance", "between runs", "reproducible", "reproducibility", "nondeterministic"], &[]),
    c("compare", &["compare", "comparison", "baseline", "better than", "beat", "outperform", "ablation", "significant", "significance", "margin", "noise"], &[]),
    c("metric", &["accuracy", "acc", "bleu", "rouge", "f1", "metric", "auc", "wer", "exact match"], &[]),
    c("fp16", &["fp16", "bf16", "f16", "bfloat16", "float16", "mixed precision", "amp", "half precision", "autocast", "grad scaler", "loss scale"], &[]),
    c("batchdep", &["another sample", "other sample", "rest of batch", "else in batch", "depend on batch", "depends on batch", "batch composition", "batch size 1", "different batch size", "across batch", "batch dim", "batch dimension", "other row", "another row", "different row"], &["batch"]),
    c("decay", &["weight decay", "weight_decay", "wd", "l2 regularization", "l2 penalty", "decoupled"], &[]),
    idiom("finetune", &["fine tune", "finetune", "finetuning", "fine tuning", "sft", "instruction tuning"], &[]),
    c("lm", &["language model", "lm", "llm", "causal lm", "gpt", "llama", "next token", "perplexity"], &[]),
];

/// A concept marked where two others occur within `window` words: (a, b, window, concept).
/// `a` and `b` are concept names or normalised words.
#[rustfmt::skip]
const NEAR: &[(&str, &str, usize, &str)] = &[
    ("@memory", "@rise", 3, "memgrow"),
    ("@val", "@rise", 3, "valrise"),
    ("gap", "@rise", 4, "valrise"),
    ("@grad", "@explode", 3, "gradexplode"),
    ("@grad", "@rise", 3, "gradexplode"),
    ("@grad", "not", 2, "nograd"),
    ("@grad", "none", 2, "nograd"),
    ("memoriz", "@fewdata", 5, "batchfit"),
    ("overfit", "@fewdata", 5, "batchfit"),
    ("@fall", "@flat", 4, "fallstall"),
    ("loss", "zero", 3, "losszero"),
    ("loss", "improv", 2, "fall"),
    ("loss", "sam", 2, "flat"),
    ("usag", "@rise", 3, "memgrow"),
    ("@grad", "@small", 3, "vanish"),
    ("loss", "@rise", 3, "lossrise"),
    ("@init", "@small", 2, "initlow"),
    ("@init", "@big", 2, "inithigh"),
];

/// The annotated words: a slot holds one word, or a phrase's words, and the concepts marked
/// there (an idiom's slot holds only its concepts).
pub type Slot = Vec<String>;

struct Form {
    words: Vec<String>,
    concepts: Vec<String>,
    idiom: bool,
}

struct Table {
    /// Forms by their first word (or [`ANY_NUMBER`]), longest first.
    by_first: HashMap<String, Vec<Form>>,
    also: HashMap<String, Vec<String>>,
    vocabulary: Vec<String>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut forms: HashMap<Vec<String>, (Vec<String>, bool)> = HashMap::new();
        let mut also = HashMap::new();
        let mut vocabulary = Vec::new();
        for concept in CONCEPTS {
            let term = format!("{PREFIX}{}", concept.name);
            for f in concept.forms {
                let words = text::words(f);
                if words.is_empty() || words.len() > MAX_PHRASE {
                    continue;
                }
                vocabulary.extend(words.iter().filter(|w| *w != ANY_NUMBER).cloned());
                let negated = words.len() > 1 && words[0] == "not";
                let entry = forms.entry(words).or_default();
                if !entry.0.contains(&term) {
                    entry.0.push(term.clone());
                }
                // A negated phrase is always an idiom: its words alone say the opposite.
                entry.1 |= concept.idiom || negated;
            }
            let words: Vec<String> = concept.also.iter().flat_map(|w| text::words(w)).collect();
            also.insert(term, words);
        }
        let mut by_first: HashMap<String, Vec<Form>> = HashMap::new();
        for (words, (concepts, idiom)) in forms {
            by_first.entry(words[0].clone()).or_default().push(Form {
                words,
                concepts,
                idiom,
            });
        }
        for list in by_first.values_mut() {
            list.sort_by(|a, b| {
                b.words
                    .len()
                    .cmp(&a.words.len())
                    .then(a.words.cmp(&b.words))
            });
        }
        vocabulary.sort();
        vocabulary.dedup();
        Table {
            by_first,
            also,
            vocabulary,
        }
    })
}

/// Every word that appears in a concept's form (for typo correction).
pub fn vocabulary() -> &'static [String] {
    &table().vocabulary
}

/// The words added to a query that names `concept` (a term with [`PREFIX`]).
pub fn also(concept: &str) -> &'static [String] {
    table().also.get(concept).map_or(&[], |v| v.as_slice())
}

fn is_number(w: &str) -> bool {
    w == "zero" || w.starts_with(|c: char| c.is_ascii_digit())
}

/// Words → slots: forms matched (longest first); a phrase's words share one slot with its
/// concepts (an idiom's concepts replace its words); then the near rules' slots.
pub fn annotate(words: &[String]) -> Vec<Slot> {
    let t = table();
    let mut slots: Vec<Slot> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let matches = |f: &&Form| {
            f.words.len() <= words.len() - i
                && f.words
                    .iter()
                    .zip(&words[i..])
                    .all(|(fw, w)| fw == w || (fw == ANY_NUMBER && is_number(w)))
        };
        let candidates = t.by_first.get(&words[i]).into_iter().flatten();
        let numeric = if is_number(&words[i]) {
            t.by_first.get(ANY_NUMBER)
        } else {
            None
        };
        let best = candidates
            .chain(numeric.into_iter().flatten())
            .filter(matches)
            .max_by_key(|f| f.words.len());
        match best {
            Some(f) if f.idiom && f.words.len() > 1 => slots.push(f.concepts.clone()),
            Some(f) => {
                let mut slot = words[i..i + f.words.len()].to_vec();
                slot.extend(f.concepts.iter().cloned());
                slots.push(slot);
            }
            None => slots.push(vec![words[i].clone()]),
        }
        i += best.map_or(1, |f| f.words.len());
    }
    near(&mut slots);
    numbers(&mut slots);
    slots
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
fn numbers(slots: &mut Vec<Slot>) {
    let single = |slot: &Slot| -> Option<(f64, usize)> {
        let [w] = slot.as_slice() else { return None };
        let decimals = w.split_once('.').map(|(_, d)| d.len())?;
        w.parse::<f64>().ok().map(|x| (x, decimals))
    };
    let plain = |slot: &Slot| -> Option<f64> {
        let [w] = slot.as_slice() else { return None };
        w.parse::<f64>().ok()
    };
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
        let Some(x) = plain(&slots[i]) else { continue };
        let ahead = (i + 1..slots.len().min(i + 7)).find_map(|j| plain(&slots[j]).map(|y| (j, y)));
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
    let word =
        |i: usize| -> Option<&str> { slots.get(i).and_then(|s| s.first()).map(|w| w.as_str()) };
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
    let word = |i: usize| -> Option<&str> {
        match slots.get(i)?.as_slice() {
            [w] => Some(w.as_str()),
            _ => None,
        }
    };
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

/// Apply the near rules, reading only the slots marked before this pass. Each concept found
/// becomes a slot of its own, after the others: it is a reading of two places at once, so it
/// adds to what each word says instead of competing with it.
fn near(slots: &mut Vec<Slot>) {
    let n = slots.len();
    // A phrase is read as its concepts only: "step 0" is a moment, not a zero.
    let heads: Vec<&[String]> = slots
        .iter()
        .map(|slot| {
            let words = slot.iter().filter(|t| !t.starts_with(PREFIX)).count();
            if words > 1 {
                &slot[words..]
            } else {
                &slot[..]
            }
        })
        .collect();
    // A rule's plain words are normalised as any text is ("none" is stemmed to "non"), so they
    // meet the words they are compared with.
    let norm = |w: &str| -> String {
        if w.starts_with(PREFIX) {
            w.to_string()
        } else {
            text::words(w)
                .into_iter()
                .next()
                .unwrap_or_else(|| w.to_string())
        }
    };
    let mut added: Vec<Slot> = Vec::new();
    for (a, b, window, concept) in NEAR {
        let (a, b) = (norm(a), norm(b));
        for i in 0..n {
            if !heads[i].contains(&a) {
                continue;
            }
            let lo = i.saturating_sub(*window);
            let hi = (i + window).min(n - 1);
            if (lo..=hi).any(|j| j != i && heads[j].contains(&b)) {
                added.push(vec![format!("{PREFIX}{concept}")]);
            }
        }
    }
    slots.extend(added);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        annotate(&text::words(s)).into_iter().flatten().collect()
    }

    #[test]
    fn every_form_normalises_to_words() {
        for concept in CONCEPTS {
            for f in concept.forms {
                let w = text::words(f);
                assert!(
                    !w.is_empty() && w.len() <= MAX_PHRASE,
                    "{}: form `{f}` normalises to {w:?}",
                    concept.name
                );
            }
        }
    }

    #[test]
    fn a_phrase_replaces_its_words() {
        let t = terms("memory leak");
        assert!(t.contains(&"@memgrow".to_string()), "{t:?}");
        assert!(
            !t.contains(&"@leak".to_string()) && !t.contains(&"leak".to_string()),
            "{t:?}"
        );
        let t = terms("test rows leak into training");
        assert!(t.contains(&"@leak".to_string()), "{t:?}");
    }

    #[test]
    fn near_rules_join_concepts_a_few_words_apart() {
        for q in ["GPU memory keeps increasing", "RAM usage grows every step"] {
            assert!(terms(q).contains(&"@memgrow".to_string()), "{q}");
        }
        assert!(terms("val loss increasing").contains(&"@valrise".to_string()));
        assert!(terms("loss same as epoch 0").contains(&"@flat".to_string()));
        assert!(terms("accuracy sits at 1/num_classes").contains(&"@chance".to_string()));
        assert!(terms("loss went to 0").contains(&"@losszero".to_string()));
        assert!(!terms("loss stuck from step 0").contains(&"@losszero".to_string()));
        let far = "memory use is fine; the validation metric looks right and the lr goes up";
        assert!(!terms(far).contains(&"@memgrow".to_string()), "{far}");
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
    fn everyday_wordings_of_known_ideas() {
        let has = |q: &str, c: &str| terms(q).contains(&c.to_string());
        assert!(has("training loss is a perfectly horizontal line", "@flat"));
        assert!(has("loss drops to near zero in 50 steps", "@nearzero"));
        assert!(!has("loss drops to near zero in 50 steps", "@losszero"));
        assert!(has("logits leak across the batch dim", "@batchdep"));
        assert!(has("confusion matrix has one column filled", "@oneclass"));
        assert!(has("one epoch takes 3 hours on an A100", "@throughput"));
        assert!(has("gpu usage creeping up every batch", "@memgrow"));
        assert!(has("loss at init suspiciously low", "@initlow"));
        assert!(!has(
            "eval loss much higher than train loss right from the start",
            "@inithigh"
        ));
        // a near rule's plain word meets its stemmed form ("none" is "non")
        assert!(has("backbone params grad is None", "@nograd"));
        assert!(has("grad norms tiny in early layers", "@vanish"));
        assert!(has("wd applied to layernorm and bias", "@decay"));
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
