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
    c("flat", &["flat", "plateau", "stuck", "stall", "stagnate", "constant", "flatten", "level off", "not decrease", "not go down", "not fall", "not drop", "not improve", "not learn", "not move", "not budge", "not change", "not converge", "stay same", "same value", "no progress", "stop improving", "stop decreasing", "stop go down", "stop falling", "stop learning"], &[]),
    c("nochange", &["not change", "no effect", "no difference", "unchanged", "identical", "same as before", "same as base", "exactly like", "not affect", "not apply", "not applied"], &[]),
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
    c("oneclass", &["same class", "one class", "single class", "same label", "one label", "majority class", "always predict", "only predict", "predict only", "always output", "constant prediction", "predict same"], &[]),
    c("grad", &["gradient", "grad", "backward", "backprop", "backpropagation"], &[]),
    c("nograd", &["no gradient", "no grad", "grad none", "gradient none", "zero gradient", "zero grad", "detach", "detached", "cut gradient", "gradient cut"], &["gradient"]),
    c("vanish", &["vanish", "diminish", "vanishing gradient"], &[]),
    c("lasthead", &["last layer", "output layer", "final layer", "head", "lm_head", "classifier head", "output head"], &[]),
    c("init", &["init", "initialization", "initial", "initially", "start", "beginning", "step zero", "epoch zero", "iteration zero", "before training", "before any training", "first loss", "starting loss"], &[]),
    c("chance", &["chance", "random guess", "random guessing", "uniform prediction", "coin flip", "better than random", "1/num_classes", "1/n_classes", "1/number of classes", "one over the number of classes", "random level"], &[]),
    c("big", &["high", "higher", "above", "greater", "large", "big", "huge", "enormous", "massive"], &[]),
    c("small", &["low", "lower", "below", "small", "tiny"], &[]),
    c("suspicious", &["too good", "too good to be true", "suspicious", "suspiciously", "unrealistic", "too early", "too fast", "too quickly", "seems impossible", "impossibly", "within minutes", "right away"], &[]),
    c("throughput", &["slow", "slower", "slowdown", "slow down", "speed", "throughput", "util", "utilization", "utilize", "tokens per second", "samples per second", "token sec", "step time", "time per step", "too long", "forever", "idle", "faster", "sluggish", "wall clock"], &[]),
    c("dataloader", &["dataloader", "data loader", "data loading", "load data", "loading batches", "data pipeline", "input pipeline", "num_workers", "worker", "prefetch", "collate", "wait data", "waiting for data", "data wait", "pin_memory"], &[]),
    c("bottleneck", &["bottleneck", "cpu bound", "io bound", "starved"], &[]),
    c("lora", &["lora", "qlora", "peft", "adapter", "low rank", "low-rank", "target_modules", "lora_alpha"], &[]),
    c("trainable", &["trainable", "requires_grad", "frozen", "freeze", "not trainable", "trainable params"], &[]),
    c("deploy", &["deploy", "deployment", "inference", "gguf", "llama.cpp", "llama cpp", "vllm", "ollama", "export", "serving", "convert", "conversion"], &[]),
    c("gibberish", &["gibberish", "garbage", "nonsense", "junk", "word salad", "incoherent", "repetitive", "repeat itself", "poor"], &[]),
    c("eos", &["eos", "bos", "end of sequence", "stop token", "not stop", "chat template", "template", "special token"], &[]),
    c("causal", &["causal mask", "attention mask", "future token", "look ahead", "see future"], &["mask"]),
    c("underfit", &["underfit", "underfitting", "capacity", "too high", "stay high", "well above", "high value"], &[]),
    c("seed", &["seed", "random seed", "luck", "lucky", "run to run", "variance", "between runs", "reproducible", "reproducibility", "nondeterministic"], &[]),
    c("compare", &["compare", "comparison", "baseline", "better than", "beat", "outperform", "ablation", "significant", "significance", "margin", "noise"], &[]),
    c("metric", &["accuracy", "acc", "bleu", "rouge", "f1", "metric", "auc", "wer", "exact match"], &[]),
    c("fp16", &["fp16", "bf16", "f16", "bfloat16", "float16", "mixed precision", "amp", "half precision", "autocast", "grad scaler", "loss scale"], &[]),
    c("batchdep", &["another sample", "other sample", "rest of batch", "else in batch", "depend on batch", "depends on batch", "batch composition", "batch size 1", "different batch size"], &["batch"]),
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
    let mut added: Vec<Slot> = Vec::new();
    for slot in slots.iter() {
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
    // Normalised as any text is ("reference" is stemmed; "instead" and "should" are stop words
    // and never reach here), so they meet the query's words.
    const BETWEEN: &[&str] = &["reference", "expected", "paper", "baseline"];
    let between: Vec<String> = BETWEEN.iter().flat_map(|w| text::words(w)).collect();
    let words = |slot: &Slot| -> bool { slot.iter().any(|w| between.contains(w)) };
    for i in 0..slots.len() {
        let Some(x) = plain(&slots[i]) else { continue };
        let ahead = (i + 1..slots.len().min(i + 7)).find_map(|j| plain(&slots[j]).map(|y| (j, y)));
        let Some((j, y)) = ahead else { continue };
        if x != y && slots[i + 1..j].iter().any(words) {
            let side = if x > y { "big" } else { "small" };
            added.push(vec![format!("{PREFIX}{side}")]);
        }
    }
    slots.extend(added);
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
    let mut added: Vec<Slot> = Vec::new();
    for (a, b, window, concept) in NEAR {
        for i in 0..n {
            if !heads[i].iter().any(|t| t == a) {
                continue;
            }
            let lo = i.saturating_sub(*window);
            let hi = (i + window).min(n - 1);
            if (lo..=hi).any(|j| j != i && heads[j].iter().any(|t| t == b)) {
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
    fn numbers_fill_number_slots() {
        let t = terms("overfitting 10 examples fails");
        assert!(t.contains(&"@batchfit".to_string()), "{t:?}");
        assert!(!t.contains(&"@overfitting".to_string()), "{t:?}");
        assert!(t.contains(&"overfit".to_string()), "the words stay: {t:?}");
        assert!(terms("my model is overfitting").contains(&"@overfitting".to_string()));
    }
}
