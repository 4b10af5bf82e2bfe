//! Claims in the Markdown that are arithmetic or easy to get backwards, checked against the text:
//! the TinyLlama memory anchor's numbers recomputed from the model's shape, what a low initial
//! loss means, which half-precision format overflows, and elision marks that stand for words.

use mldebug::catalog::embedded;
use std::path::Path;

fn doc(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The doc text with line breaks and doubled spaces folded, so a number split across lines
/// is still found.
fn flat(rel: &str) -> String {
    doc(rel).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn has(text: &str, rel: &str, claim: &str) {
    assert!(text.contains(claim), "{rel} should say `{claim}`");
}

/// Thousands separators, as the docs write counts.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

const GB: f64 = 1e9;
const MB: f64 = 1e6;

#[test]
fn the_tinyllama_anchor_is_arithmetic_on_the_models_shape() {
    let rel = "refs/memory.md";
    let text = flat(rel);
    // TinyLlama-1.1B: 22 layers, hidden 2048, MLP 5632, 32 query heads and 4 kv heads of 64.
    let (layers, h, mlp, heads, kv, vocab, ctx) = (
        22u64,
        2048u64,
        5632u64,
        32u64,
        4 * 64u64,
        32_000u64,
        1200u64,
    );
    let linear_per_layer = 2 * h * h + 2 * h * kv + 3 * h * mlp;
    let norms = layers * 2 * h + h;
    let embeddings = 2 * vocab * h;
    let params = embeddings + layers * linear_per_layer + norms;
    assert_eq!(params, 1_100_048_384);
    has(&text, rel, &grouped(params));
    let quantised = layers * linear_per_layer;
    has(&text, rel, &grouped(quantised));
    has(&text, rel, &grouped(embeddings));

    // The base: non-quantised parameters in f32, 4-bit codes, one f32 absmax per 64 weights.
    let emb_bytes = embeddings as f64 * 4.0;
    let codes = quantised as f64 * 0.5;
    let constants = quantised as f64 / 64.0 * 4.0;
    let base = emb_bytes + norms as f64 * 4.0 + codes + constants;
    has(&text, rel, &format!("take {:.2} GB", emb_bytes / GB));
    has(
        &text,
        rel,
        &format!(
            "{:.2} GB of 4-bit codes plus {:.2} GB of f32 block constants",
            codes / GB,
            constants / GB
        ),
    );
    has(
        &text,
        rel,
        &format!("{:.2} GB in all", (codes + constants) / GB),
    );
    has(
        &text,
        rel,
        &format!("about {:.2} GB, not well under 1 GB", base / GB),
    );
    // Quantisation constants: 32 bits per 64 weights, or 8 bits per 64 plus 32 per 256 blocks.
    let plain = 32.0 / 64.0;
    let double = 8.0 / 64.0 + 32.0 / (64.0 * 256.0);
    assert_eq!(plain, 0.5);
    let table = flat("refs/memory.md");
    has(
        &table,
        rel,
        &format!("adds {plain} bit per weight ({:.1}%)", plain / 4.0 * 100.0),
    );
    has(
        &table,
        rel,
        &format!("about {double:.3} bit (about {:.0}%)", double / 4.0 * 100.0),
    );

    // Saved activations per layer (SDPA): both norms' input and output, q k v, rotary q and k,
    // the attention output, and the MLP's gate, up, activation and product.
    let per_layer = ctx * (4 * h + (h + 2 * kv) + (h + kv) + h + 4 * mlp);
    has(&text, rel, &grouped(per_layer));
    let (bf16, f32) = (per_layer as f64 * 2.0, per_layer as f64 * 4.0);
    has(
        &text,
        rel,
        &format!(
            "{:.0} MB in bf16 or {:.0} MB if kept in f32",
            bf16 / MB,
            f32 / MB
        ),
    );
    let (lo, hi) = (bf16 * layers as f64, f32 * layers as f64);
    has(
        &text,
        rel,
        &format!("{:.1} to {:.1} GB for 22 layers", lo / GB, hi / GB),
    );
    let logits = (ctx * vocab * 4) as f64;
    has(&text, rel, &format!("f32 logits are {:.1} MB", logits / MB));
    let top = 2.0 * logits;
    has(
        &text,
        rel,
        &format!(
            "comes to {:.1} to {:.1} GB",
            (base + lo + top) / GB,
            (base + hi + top) / GB
        ),
    );
    // Eager attention: probabilities in f32 (softmax backward) and bf16 (product with v).
    let probs = (heads * ctx * ctx) as f64 * (4.0 + 2.0);
    has(
        &text,
        rel,
        &format!(
            "{:.0} MB per layer, {:.1} GB for 22 layers",
            probs / MB,
            probs * layers as f64 / GB
        ),
    );
    let eager = base + lo + top + probs * layers as f64;
    has(&text, rel, &format!("at least {:.1} GB", eager / GB));
    assert!(
        eager / GB > 6.42,
        "the eager estimate must exceed the measured peak"
    );
    // Measuring one layer and multiplying is gone; differencing is there.
    assert!(!text.contains("Multiply by the number of layers"));
    has(&text, rel, "a one-layer and a two-layer run");
}

#[test]
fn a_low_initial_loss_is_never_read_as_leakage() {
    let low_at_init = |s: &str| {
        [
            "below ln C",
            "below chance",
            "far below",
            "Far below",
            "≪ ln C",
            "low or negative",
            "suspiciously low",
        ]
        .iter()
        .any(|w| s.contains(w))
    };
    let reads_as_leak = |s: &str| {
        (s.contains("leak") || s.contains("future token") || s.contains("test rows"))
            && !s.contains("not leakage")
            && !s.contains("not mean leakage")
            && !s.contains("cannot exploit")
    };
    for rel in ["SKILL.md", "PLAYBOOK.md", "refs/diagnostics.md"] {
        let text = doc(rel);
        // A table row is one claim (its symptom cell and its hypotheses); prose goes by sentence.
        let rows = text
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(str::to_string);
        let prose: String = text
            .lines()
            .filter(|l| !l.starts_with('|'))
            .collect::<Vec<_>>()
            .join(" ");
        let sentences = prose.split(['.', ';']).map(str::to_string);
        for claim in rows.chain(sentences) {
            assert!(
                !(low_at_init(&claim) && reads_as_leak(&claim)),
                "{rel}: a low loss at initialisation read as leakage: `{claim}`"
            );
        }
    }
}

#[test]
fn overflow_is_fp16s_problem_not_bf16s() {
    let text = flat("PLAYBOOK.md");
    assert!(!text.contains("fp16/bf16 near"), "bf16 has f32's range");
    assert!(!text.contains("overflow in fp16/bf16"));
    let t = flat("refs/transformers.md");
    assert!(t.contains("sharded optimizer (ZeRO, FSDP)") && t.contains("Plain DDP does not"));
    let s = flat("refs/static_analysis.md");
    assert!(s.contains("`optimizer.zero_grad()` between `backward()` and `step()`"));
}

/// An elision mark in a quote stands for words: the text it replaces in the evidence holds a
/// letter or a digit, not only a list dash or a comment marker.
#[test]
fn every_elision_stands_for_words() {
    let c = embedded();
    for q in c.quotes.iter().filter(|q| q.text.contains("[...]")) {
        let Some(id) = &q.excerpt else { continue };
        let Some(x) = c
            .sources
            .iter()
            .flat_map(|s| &s.excerpts)
            .find(|x| &x.id == id)
        else {
            continue;
        };
        if x.text.contains("[...]") {
            continue; // the record's own elision, explained in its note
        }
        let pieces: Vec<&str> = q
            .text
            .split("[...]")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let source = words(&x.text);
        let mut pos = 0;
        for (i, p) in pieces.iter().enumerate() {
            let p = words(p);
            let Some(at) = source[pos..].find(&p) else {
                break;
            };
            if i > 0 || q.text.trim_start().starts_with("[...]") {
                let gap = &source[pos..pos + at];
                assert!(
                    gap.chars().any(char::is_alphanumeric),
                    "{}: `[...]` stands for `{gap}`, not for words",
                    q.location
                );
            }
            pos += at + p.len();
        }
    }
}
