//! The estimate against counts made here, independently, from the shape fields of real
//! config.json files (tests/fixtures/configs, sources in SOURCES.md): parameter counts, weights
//! = parameters × bytes, AdamW = 8 bytes per trainable parameter, LoRA = Σ r·(d_in + d_out).

use mldebug_memory::config;
use mldebug_memory::estimate::estimate;
use mldebug_memory::setup::{Method, Optimizer, Precision, Quant, Setup, Targets};
use mldebug_memory::Shape;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/configs")
        .join(name)
}

fn read(name: &str) -> (Shape, Value) {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let shape = config::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
    (shape, serde_json::from_str(&text).unwrap())
}

fn field(v: &Value, name: &str) -> u64 {
    v[name].as_u64().unwrap_or_else(|| panic!("{name}"))
}

/// A modern decoder counted by hand: embeddings, per layer q/k/v/o + gate/up/down + norms, a
/// final norm, an untied head. `extra_per_layer` adds biases or extra norms.
fn decoder_count(v: &Value, norms_per_layer: u64, extra_per_layer: u64, tied_default: bool) -> u64 {
    let h = field(v, "hidden_size");
    let l = field(v, "num_hidden_layers");
    let heads = field(v, "num_attention_heads");
    let kv = v["num_key_value_heads"].as_u64().unwrap_or(heads);
    let d = v["head_dim"].as_u64().unwrap_or(h / heads);
    let m = field(v, "intermediate_size");
    let vocab = field(v, "vocab_size");
    let tied = v["tie_word_embeddings"].as_bool().unwrap_or(tied_default);
    let attention = h * heads * d * 2 + h * kv * d * 2;
    let mlp = 3 * h * m;
    let per_layer = attention + mlp + norms_per_layer * h + extra_per_layer;
    let head = if tied { 0 } else { vocab * h };
    vocab * h + l * per_layer + h + head
}

#[test]
fn parameter_counts_equal_a_count_from_the_shape_and_the_published_one() {
    // (file, count from the shape here, the count the model is published with)
    let (_, tiny) = read("tinyllama-1.1b.json");
    let (_, nemo) = read("mistral-nemo-base-2407.json");
    let (_, qwen) = read("qwen2-0.5b.json");
    let (_, gemma) = read("gemma-2-9b-it.json");
    let qwen_bias = {
        let d = field(&qwen, "hidden_size") / field(&qwen, "num_attention_heads");
        field(&qwen, "hidden_size") + 2 * field(&qwen, "num_key_value_heads") * d
    };
    let cases = [
        (
            "tinyllama-1.1b.json",
            decoder_count(&tiny, 2, 0, false),
            1_100_048_384u64,
        ),
        (
            "mistral-nemo-base-2407.json",
            decoder_count(&nemo, 2, 0, false),
            12_247_782_400,
        ),
        (
            "qwen2-0.5b.json",
            decoder_count(&qwen, 2, qwen_bias, false),
            494_032_768,
        ),
        // Gemma 2: four norms per layer, embeddings tied by default.
        (
            "gemma-2-9b-it.json",
            decoder_count(&gemma, 4, 0, true),
            9_241_705_984,
        ),
    ];
    for (name, by_hand, published) in cases {
        let (shape, _) = read(name);
        let counted = shape.params().total;
        assert_eq!(counted, by_hand, "{name}: the shape count");
        assert_eq!(counted, published, "{name}: the published count");
    }
}

#[test]
fn fused_and_older_families_count_their_own_layouts() {
    // phi3: fused qkv (h × (H + 2K)·d) and gate_up (h × 2m).
    let (shape, v) = read("phi-3-mini-4k-instruct.json");
    let (h, l, m, vocab) = (
        field(&v, "hidden_size"),
        field(&v, "num_hidden_layers"),
        field(&v, "intermediate_size"),
        field(&v, "vocab_size"),
    );
    let per_layer = h * 3 * h + h * h + h * 2 * m + m * h + 2 * h;
    assert_eq!(shape.params().total, 2 * vocab * h + l * per_layer + h);
    assert_eq!(shape.params().total, 3_821_079_552);

    // gpt2: learned positions, LayerNorms with biases, biased Conv1D layers, tied head.
    let (shape, v) = read("gpt2.json");
    let (h, l, vocab, pos) = (
        field(&v, "n_embd"),
        field(&v, "n_layer"),
        field(&v, "vocab_size"),
        field(&v, "n_positions"),
    );
    let per_layer =
        (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 4 * h;
    assert_eq!(
        shape.params().total,
        (vocab + pos) * h + l * per_layer + 2 * h
    );
    assert_eq!(shape.params().total, 124_439_808);

    // gpt_neox (pythia): biased fused qkv, untied embed_out, LayerNorms.
    let (shape, v) = read("pythia-1b.json");
    let (h, l, m, vocab) = (
        field(&v, "hidden_size"),
        field(&v, "num_hidden_layers"),
        field(&v, "intermediate_size"),
        field(&v, "vocab_size"),
    );
    let per_layer = (h * 3 * h + 3 * h) + (h * h + h) + (h * m + m) + (m * h + h) + 4 * h;
    assert_eq!(shape.params().total, 2 * vocab * h + l * per_layer + 2 * h);
    assert_eq!(shape.params().total, 1_011_781_632);

    // bert (BertModel): word, position and token-type embeddings and their LayerNorm, biased
    // q/k/v/o and MLP, two LayerNorms a layer, the pooler.
    let (shape, v) = read("bert-base-uncased.json");
    let (h, l, m) = (
        field(&v, "hidden_size"),
        field(&v, "num_hidden_layers"),
        field(&v, "intermediate_size"),
    );
    let embeddings = (field(&v, "vocab_size")
        + field(&v, "max_position_embeddings")
        + field(&v, "type_vocab_size"))
        * h
        + 2 * h;
    let per_layer = 4 * (h * h + h) + (h * m + m) + (m * h + h) + 4 * h;
    assert_eq!(shape.params().total, embeddings + l * per_layer + h * h + h);
    assert_eq!(shape.params().total, 109_482_240);
}

fn tinyllama() -> Shape {
    read("tinyllama-1.1b.json").0
}

#[test]
fn weights_are_parameters_times_bytes_exactly() {
    let shape = tinyllama();
    let n = shape.params().total as f64;
    for (precision, bytes) in [
        (Precision::Fp32, 4.0),
        (Precision::Bf16, 2.0),
        (Precision::Fp16, 2.0),
    ] {
        let setup = Setup {
            precision,
            ..Setup::default()
        };
        let e = estimate(&shape, &setup).unwrap();
        let w = e.components.iter().find(|c| c.key == "weights").unwrap();
        assert_eq!(w.bytes, n * bytes, "{precision}");
        assert!(e.components.iter().all(|c| c.key != "weights.master"));
    }
    // Mixed precision: 16-bit weights plus an fp32 master copy.
    let e = estimate(&shape, &Setup::default()).unwrap();
    let get = |k: &str| e.components.iter().find(|c| c.key == k).unwrap().bytes;
    assert_eq!(get("weights"), n * 2.0);
    assert_eq!(get("weights.master"), n * 4.0);
    assert_eq!(get("gradients"), n * 2.0);
}

#[test]
fn adamw_keeps_eight_bytes_per_trainable_parameter() {
    let shape = tinyllama();
    for (method, precision) in [
        (Method::Full, Precision::Fp32),
        (Method::Full, Precision::MixedBf16),
        (Method::Lora, Precision::Bf16),
        (Method::Qlora, Precision::Bf16),
    ] {
        let setup = Setup {
            method,
            precision,
            quant: if method == Method::Qlora {
                Quant::Nf4
            } else {
                Quant::None
            },
            optimizer: Optimizer::AdamW,
            ..Setup::default()
        }
        .validate()
        .unwrap();
        let e = estimate(&shape, &setup).unwrap();
        let state = e.components.iter().find(|c| c.key == "optimizer").unwrap();
        assert_eq!(
            state.bytes,
            8.0 * e.trainable as f64,
            "{method} {precision}"
        );
    }
}

#[test]
fn lora_parameters_are_the_sum_of_rank_times_in_plus_out() {
    let (shape, v) = read("tinyllama-1.1b.json");
    let (h, l) = (field(&v, "hidden_size"), field(&v, "num_hidden_layers"));
    let kv = field(&v, "num_key_value_heads") * field(&v, "head_dim");
    let m = field(&v, "intermediate_size");
    let r = 16;
    let q_and_v = l * (r * (h + h) + r * (h + kv));
    let all = l * r * ((h + h) + 2 * (h + kv) + (h + h) + 2 * (h + m) + (m + h));
    for (targets, expected) in [
        (
            Targets::Names(vec!["q_proj".into(), "v_proj".into()]),
            q_and_v,
        ),
        (Targets::Default, q_and_v),
        (Targets::AllLinear, all),
    ] {
        let setup = Setup {
            method: Method::Lora,
            lora_rank: r,
            lora_targets: targets.clone(),
            ..Setup::default()
        };
        let e = estimate(&shape, &setup).unwrap();
        assert_eq!(e.trainable, expected, "{targets:?}");
        let adapters = e.components.iter().find(|c| c.key == "adapters").unwrap();
        assert_eq!(adapters.bytes, expected as f64 * 4.0);
    }
}

#[test]
fn qlora_base_is_codes_constants_and_fp32_for_the_rest() {
    let shape = tinyllama();
    let p = shape.params();
    let setup = Setup {
        method: Method::Qlora,
        quant: Quant::Nf4,
        ..Setup::default()
    };
    let e = estimate(&shape, &setup).unwrap();
    let get = |k: &str| e.components.iter().find(|c| c.key == k).unwrap().bytes;
    assert_eq!(get("weights.codes"), p.linear as f64 * 0.5);
    assert_eq!(get("weights.constants"), p.linear as f64 * 4.0 / 64.0);
    assert_eq!(
        get("weights.unquantized"),
        (p.total - p.linear) as f64 * 4.0
    );
    assert_eq!(p.linear, 968_884_224);
}

#[test]
fn every_fixture_reads_and_estimates_without_a_zero_or_a_nan() {
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let shape = config::parse(&path, &text).unwrap();
        let e = estimate(&shape, &Setup::default()).unwrap();
        assert!(e.peak.is_finite() && e.peak > 0.0, "{}", path.display());
        assert!(e.stages.iter().all(|s| s.bytes > 0.0 && s.bytes <= e.peak));
    }
}

fn parse_err(text: &str) -> String {
    config::parse(Path::new("models/x/config.json"), text)
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_configs_name_the_file_the_field_and_what_is_wrong() {
    let e = parse_err(r#"{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}"#);
    assert_eq!(
        e,
        "models/x/config.json: field `num_hidden_layers`: missing; a llama config needs it for the shape"
    );
    let e = parse_err(r#"{"model_type": "llama", "hidden_size": "64"}"#);
    assert!(
        e.contains("field `hidden_size`: expected a whole number"),
        "{e}"
    );
    let e = parse_err(r#"{"model_type": "mamba"}"#);
    assert!(e.contains("`mamba` is not a family mldebug reads"), "{e}");
    assert!(e.contains("--layers"), "{e}");
    let e = parse_err("{\"model_type\": \"gpt2\",\n \"n_embd\": }");
    assert!(e.starts_with("models/x/config.json: line 2, column"), "{e}");
    let e = parse_err("[1, 2]");
    assert!(e.contains("expected a JSON object"), "{e}");
    let e = parse_err(r#"{"hidden_size": 8}"#);
    assert!(e.contains("field `model_type`: missing"), "{e}");
    let huge = r#"{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 99999999999, "intermediate_size": 128, "vocab_size": 100}"#;
    assert!(parse_err(huge)
        .contains("field `num_hidden_layers`: expected a whole number from 1 to 100000"));
    let gqa = r#"{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 3, "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100}"#;
    assert!(parse_err(gqa).contains("do not divide 4 attention heads"));
}

#[test]
fn unknown_fields_and_nulls_are_ignored() {
    let text = r#"{"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 28,
        "intermediate_size": 3072, "vocab_size": 151936, "tie_word_embeddings": true,
        "rope_scaling": null, "sliding_window": null, "something_new": {"x": [1, 2]}}"#;
    let shape = config::parse(Path::new("c.json"), text).unwrap();
    // Qwen3-0.6B (fields from its model card): q/k norms of head_dim per layer, tied head.
    let (h, l, m, v, d) = (1024u64, 28u64, 3072u64, 151936u64, 128u64);
    let per_layer = h * 16 * d * 2 + h * 8 * d * 2 + 3 * h * m + 2 * h + 2 * d;
    assert_eq!(shape.params().total, v * h + l * per_layer + h);
}

/// One valid config per reader, each field it reads, and values outside that field's range:
/// every one is refused with the file, the field and the range named.
#[test]
fn every_field_read_refuses_values_outside_its_range() {
    let llama = r#"{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100}"#;
    let gemma2 = r#"{"model_type": "gemma2", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100}"#;
    let gpt2 = r#"{"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2,
        "n_positions": 128, "vocab_size": 100}"#;
    let neox = r#"{"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 100}"#;
    let bert = r#"{"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 100,
        "max_position_embeddings": 128, "architectures": ["BertForSequenceClassification"]}"#;
    let dims: &[&str] = &["0", "-1", "1.5", "\"64\"", "true", "[64]", "1e308"];
    let probability: &[&str] = &["-0.1", "1.5", "1e308", "-1e308", "\"0.1\"", "true"];
    let flag: &[&str] = &["\"true\"", "1", "0", "null_is_fine"];
    // (base config, field, the range the error names, bad values)
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            llama,
            "hidden_size",
            "a whole number from 1 to 1000000",
            dims,
        ),
        (llama, "num_attention_heads", "a whole number from 1", dims),
        (llama, "num_key_value_heads", "a whole number from 1", dims),
        (llama, "head_dim", "a whole number from 1", dims),
        (
            llama,
            "num_hidden_layers",
            "a whole number from 1 to 100000",
            dims,
        ),
        (llama, "intermediate_size", "a whole number from 1", dims),
        (
            llama,
            "vocab_size",
            "a whole number from 1 to 10000000",
            dims,
        ),
        (
            llama,
            "max_position_embeddings",
            "a whole number from 1",
            dims,
        ),
        (
            llama,
            "attention_dropout",
            "a probability from 0 to 1",
            probability,
        ),
        (llama, "tie_word_embeddings", "true or false", flag),
        (llama, "attention_bias", "true or false", flag),
        (llama, "mlp_bias", "true or false", flag),
        (
            gemma2,
            "final_logit_softcapping",
            "a finite number more than 0",
            &["0", "-30", "\"30\"", "true"],
        ),
        (gpt2, "n_embd", "a whole number from 1", dims),
        (gpt2, "n_head", "a whole number from 1", dims),
        (gpt2, "n_layer", "a whole number from 1 to 100000", dims),
        (gpt2, "n_positions", "a whole number from 1", dims),
        (gpt2, "n_inner", "a whole number from 1", dims),
        (gpt2, "attn_pdrop", "a probability from 0 to 1", probability),
        (
            gpt2,
            "resid_pdrop",
            "a probability from 0 to 1",
            probability,
        ),
        (
            neox,
            "attention_dropout",
            "a probability from 0 to 1",
            probability,
        ),
        (
            neox,
            "hidden_dropout",
            "a probability from 0 to 1",
            probability,
        ),
        (neox, "attention_bias", "true or false", flag),
        (bert, "type_vocab_size", "a whole number from 1", dims),
        (
            bert,
            "attention_probs_dropout_prob",
            "a probability from 0 to 1",
            probability,
        ),
        (
            bert,
            "hidden_dropout_prob",
            "a probability from 0 to 1",
            probability,
        ),
        (
            bert,
            "architectures",
            "a list of names",
            &["\"BertModel\"", "[1]", "{}"],
        ),
        (
            bert,
            "id2label",
            "an object of 1 to",
            &["{}", "[\"a\", \"b\"]", "\"x\"", "3"],
        ),
        (
            llama,
            "model_type",
            "a string",
            &["1", "true", "[\"llama\"]"],
        ),
    ];
    for (base, field, range, bad) in cases {
        let mut value: Value = serde_json::from_str(base).unwrap();
        config::parse(Path::new("c.json"), base).unwrap_or_else(|e| panic!("{base}: {e}"));
        for text in *bad {
            if *text == "null_is_fine" {
                // null is absent, as transformers reads it: not an error.
                value[*field] = Value::Null;
                let doc = value.to_string();
                assert!(config::parse(Path::new("c.json"), &doc).is_ok(), "{doc}");
                continue;
            }
            value[*field] = serde_json::from_str(text).unwrap();
            let doc = value.to_string();
            let e = parse_err(&doc);
            let place = format!("models/x/config.json: field `{field}`: expected {range}");
            assert!(e.starts_with(&place), "{field} = {text}: {e}");
        }
    }
}

/// The values at the ends of each range are accepted.
#[test]
fn the_ends_of_each_range_are_accepted() {
    for (field, value) in [
        ("attention_dropout", "0"),
        ("attention_dropout", "1"),
        ("attention_dropout", "0.5"),
        ("max_position_embeddings", "10000000"),
        ("num_hidden_layers", "100000"),
    ] {
        let text = format!(
            r#"{{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
            "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100, "{field}": {value}}}"#
        );
        config::parse(Path::new("c.json"), &text).unwrap_or_else(|e| panic!("{field}: {e}"));
    }
}
