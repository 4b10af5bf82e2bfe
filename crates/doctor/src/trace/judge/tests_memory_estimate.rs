//! `memory-stages` with `mldebug memory`'s estimate beside it: the numbers are the memory
//! crate's own for the run's setup, a setup it does not model says why in one line, and a
//! trace without a config is judged as before. The estimate never changes a severity.

use super::judge;
use super::test_support::{clean, processes, with_stage_points, MIB, TWO_STEPS};
use crate::finding::{Finding, Severity, Symptom, MAX_DETAILS};
use mldebug_memory::estimate::{estimate, Estimate, Stage};
use mldebug_memory::setup::{Attention, Method, Optimizer, Precision, Setup, Targets};
use mldebug_memory::{config, Shape};
use serde_json::{json, Value};
use std::path::Path;

/// A tiny GPT-2's config as transformers' `to_dict()` writes it.
fn gpt2_config() -> Value {
    json!({"transformers_version": "5.24.0", "architectures": null, "return_dict": true,
           "dtype": null, "id2label": {"0": "LABEL_0", "1": "LABEL_1"},
           "label2id": {"LABEL_0": 0, "LABEL_1": 1}, "vocab_size": 64, "n_positions": 16,
           "n_embd": 32, "n_layer": 2, "n_head": 2, "n_inner": null,
           "activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1,
           "attn_pdrop": 0.1, "layer_norm_epsilon": 1e-05, "tie_word_embeddings": true,
           "model_type": "gpt2", "pad_token_id": 0})
}

fn shape(config: &Value) -> Shape {
    config::parse(Path::new("test"), &config.to_string()).expect("the test's config reads")
}

/// What `mldebug memory` estimates for the fixture's setup with `change` applied.
fn expected(config: &Value, change: impl FnOnce(&mut Setup)) -> Estimate {
    let mut s = Setup {
        method: Method::Full,
        precision: Precision::Fp32,
        optimizer: Optimizer::AdamW,
        batch: 8,
        seq: 16,
        grad_accum: 1,
        grad_checkpointing: false,
        attention: Attention::Sdpa,
        ..Setup::default()
    };
    change(&mut s);
    estimate(&shape(config), &s).expect("the test's setup estimates")
}

/// `clean(5)` as a transformers run: the model record with `config` (and the fields the
/// estimate reads), the heavy steps' input, stage points on steps 1 and 2.
fn hf_run(cuda: bool, config: Value) -> Vec<Value> {
    let params = shape(&gpt2_config()).params().total;
    let mut r = clean(5);
    for x in r.iter_mut() {
        match x["kind"].as_str() {
            Some("model") => {
                x["class"] = json!("GPT2LMHeadModel");
                x["parameters"] = json!(params);
                x["trainable"] = json!(params);
                x["dtype"] = json!("float32");
                x["config"] = config.clone();
                x["attn_implementation"] = json!("sdpa");
                x["gradient_checkpointing"] = json!(false);
            }
            Some("step") if x["step"].as_u64() <= Some(3) => {
                x["input"] = json!({"model": 0, "argument": "input_ids", "shape": [8, 16],
                                    "dtype": "int64", "autocast": null});
            }
            _ => {}
        }
    }
    with_points(r, cuda)
}

fn with_points(r: Vec<Value>, cuda: bool) -> Vec<Value> {
    with_stage_points(r, cuda, &TWO_STEPS)
}

fn stages_finding(records: &[Value]) -> Finding {
    judge(&processes(records))
        .findings
        .into_iter()
        .find(|f| f.symptom == Symptom::MemoryStages)
        .expect("a memory-stages finding")
}

fn set(records: &mut [Value], kind: &str, field: &str, value: Value) {
    for r in records.iter_mut().filter(|r| r["kind"] == kind) {
        r[field] = value.clone();
    }
}

/// The estimate's numbers of a finding are those of `e`, and each ratio is measured over them.
fn assert_numbers(f: &Finding, e: &Estimate) {
    let stage = |s: Stage| e.stages.iter().find(|x| x.stage == s).unwrap().bytes;
    for (key, bytes) in [
        ("load", stage(Stage::Load)),
        ("forward", stage(Stage::Forward)),
        ("backward", stage(Stage::Backward)),
        ("optimizer_step", stage(Stage::OptimizerStep)),
        ("peak", e.peak),
    ] {
        let got = f.get(&format!("estimate_{key}_bytes")).expect(key);
        assert_eq!(got, bytes, "{key}");
        let measured = f.get(&format!("measured_{key}_bytes")).unwrap();
        let ratio = f.get(&format!("ratio_{key}")).unwrap();
        assert!(
            (ratio - measured / bytes).abs() <= 1e-12 * ratio.abs(),
            "{key}"
        );
    }
}

fn not_estimated(f: &Finding) -> &String {
    assert!(f.get("estimate_peak_bytes").is_none(), "{:?}", f.numbers);
    let lines: Vec<&String> = f
        .details
        .iter()
        .filter(|d| d.contains("not estimated"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", f.details);
    lines[0]
}

#[test]
fn a_gpt2_run_gets_mldebug_memorys_own_estimate_beside_its_stages() {
    for cuda in [true, false] {
        let f = stages_finding(&hf_run(cuda, gpt2_config()));
        assert_eq!(f.severity, Severity::Info, "the estimate is context");
        assert_numbers(&f, &expected(&gpt2_config(), |_| {}));
        // Measured as the stages measured them: step 2's peaks, the load held before step 1.
        let mib = |k: &str| f.get(k).unwrap() / MIB;
        assert!((mib("measured_load_bytes") - 500.0).abs() < 1e-9);
        assert!((mib("measured_forward_bytes") - 860.0).abs() < 1e-9);
        assert!((mib("measured_peak_bytes") - 860.0).abs() < 1e-9);
        assert!(f.summary.contains("mldebug memory estimates its peak at"));
        let all = f.details.join("\n");
        assert!(all.contains("--batch 8 --seq 16 --precision fp32 --optimizer adamw"));
        assert!(all.contains("forward 860.0 / "), "{all}");
        // Step 2's backward stayed below an earlier peak: an upper bound, said so.
        assert!(all.contains("backward at most 860.0 / "), "{all}");
        assert!(all.contains("load 500.0 / "), "{all}");
        assert!(all.contains("(by the end of step 2)"), "{all}");
        assert_eq!(all.contains("rough"), !cuda, "{all}");
        // The measured numbers are those of the trace without a config.
        let plain = stages_finding(&with_points(clean(5), cuda));
        for (name, value) in &plain.numbers {
            assert_eq!(f.get(name), Some(*value), "{name}");
        }
    }
}

#[test]
fn a_spike_stays_a_warning_and_a_quiet_run_information() {
    let mut r = hf_run(true, gpt2_config());
    let spike = json!({"device": "cuda:0", "allocated": 780.0 * MIB,
                       "max_allocated": 3000.0 * MIB});
    for s in r
        .iter_mut()
        .filter(|x| x["kind"] == "step" && x["step"] == 2)
    {
        s["memory_stages"]["step_end"] = spike.clone();
    }
    let f = stages_finding(&r);
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.get("estimate_peak_bytes").is_some());
}

#[test]
fn the_runs_setup_reaches_the_estimate() {
    let cfg = gpt2_config();
    let params = shape(&cfg).params().total;
    // (what the trace says, the setup it means, a flag the line must show)
    type Edit = Box<dyn Fn(&mut Vec<Value>)>;
    type Change = Box<dyn Fn(&mut Setup)>;
    let cases: Vec<(Edit, Change, &str)> = vec![
        (
            Box::new(|r| {
                set(r, "optimizer", "class", json!("SGD"));
                set(r, "optimizer", "groups", json!([{"momentum": 0.9}]));
            }),
            Box::new(|s| s.optimizer = Optimizer::SgdMomentum),
            "--optimizer sgd-momentum",
        ),
        (
            Box::new(|r| {
                set(r, "optimizer", "class", json!("SGD"));
                set(r, "optimizer", "groups", json!([{"momentum": 0.0}]));
            }),
            Box::new(|s| s.optimizer = Optimizer::Sgd),
            "--optimizer sgd ",
        ),
        (
            Box::new(|r| set(r, "model", "dtype", json!("bfloat16"))),
            Box::new(|s| s.precision = Precision::Bf16),
            "--precision bf16",
        ),
        (
            Box::new(|r| set(r, "model", "attn_implementation", json!("eager"))),
            Box::new(|s| s.attention = Attention::Eager),
            "--attention eager",
        ),
        (
            Box::new(|r| set(r, "model", "gradient_checkpointing", json!(true))),
            Box::new(|s| s.grad_checkpointing = true),
            "--grad-checkpointing",
        ),
        (
            Box::new(|r| set(r, "step", "backwards", json!(3))),
            Box::new(|s| s.grad_accum = 3),
            "--grad-accum 3",
        ),
        (
            Box::new(move |r| {
                set(r, "model", "lora", json!(2));
                set(r, "model", "trainable", json!(1024));
                set(r, "model", "parameters", json!(params + 1024));
                set(r, "model", "lora_rank", json!(4));
                set(r, "model", "lora_targets", json!(["c_attn"]));
            }),
            Box::new(|s| {
                s.method = Method::Lora;
                s.lora_rank = 4;
                s.lora_targets = Targets::Names(vec!["c_attn".into()]);
            }),
            "--method lora --lora-r 4 --lora-targets c_attn",
        ),
    ];
    for (edit, change, flag) in cases {
        let mut r = hf_run(true, cfg.clone());
        edit(&mut r);
        let f = stages_finding(&r);
        assert_numbers(&f, &expected(&cfg, change));
        assert!(
            f.details.iter().any(|d| d.contains(flag)),
            "{flag}: {:?}",
            f.details
        );
        assert!(!f
            .details
            .iter()
            .any(|d| d.contains("parameters, the model holds")));
    }
}

#[test]
fn what_the_estimate_assumes_is_said() {
    let mut r = hf_run(true, gpt2_config());
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        if s.get("input").is_some() {
            s["input"]["autocast"] = json!("bfloat16");
        }
    }
    set(&mut r, "model", "attn_implementation", Value::Null);
    set(&mut r, "model", "parameters", json!(10_000_000));
    set(&mut r, "model", "trainable", json!(10_000_000));
    let f = stages_finding(&r);
    let all = f.details.join("\n");
    for words in [
        "autocast to bfloat16",
        "attention kernel unknown: estimated as sdpa",
        "the model holds 10,000,000",
    ] {
        assert!(all.contains(words), "{words}: {all}");
    }
    // With every assumption said, nothing is cut: the finding's lines are bounded.
    assert!(f.details.len() < MAX_DETAILS, "{all}");
    assert!(all.contains("(by the end of step 2)"), "{all}");
    assert_numbers(&f, &expected(&gpt2_config(), |_| {}));
}

#[test]
fn an_unsupported_family_or_setup_says_why_in_one_line() {
    let mut t5 = gpt2_config();
    t5["model_type"] = json!("t5");
    let mut missing = gpt2_config();
    missing.as_object_mut().unwrap().remove("n_embd");
    let mut wrong = gpt2_config();
    wrong["n_layer"] = json!("two");
    let configs = [
        (t5, "model_type `t5` is not a family mldebug memory reads"),
        (missing, "does not read its config"),
        (wrong, "n_layer"),
        (json!({"n_layer": 2}), "names no model_type"),
        (json!([1, 2]), "names no model_type"),
    ];
    for (config, words) in configs {
        let r = hf_run(false, config);
        let f = stages_finding(&r);
        assert_eq!(f.severity, Severity::Info);
        let line = not_estimated(&f);
        assert!(line.contains(words), "{words}: {line}");
    }
    // Setups the estimate does not model, each named.
    type Edit = Box<dyn Fn(&mut Vec<Value>)>;
    let setups: Vec<(Edit, &str)> = vec![
        (
            Box::new(|r| set(r, "optimizer", "class", json!("RMSprop"))),
            "optimizer RMSprop",
        ),
        (
            Box::new(|r| set(r, "optimizer", "class", json!("SGD"))),
            "SGD's momentum",
        ),
        (
            Box::new(|r| set(r, "model", "dtype", json!("uint8"))),
            "uint8",
        ),
        (
            Box::new(|r| set(r, "model", "trainable", json!(5))),
            "trainable without LoRA",
        ),
        (Box::new(|r| set(r, "model", "lora", json!(2))), "LoRA rank"),
        (
            Box::new(|r| {
                set(r, "model", "lora", json!(2));
                set(r, "model", "lora_rank", json!(4));
                set(r, "model", "lora_targets", json!(".*attn.*"));
            }),
            "not module names",
        ),
        (
            Box::new(|r| {
                for s in r.iter_mut().filter(|x| x["kind"] == "step") {
                    s.as_object_mut().unwrap().remove("input");
                }
            }),
            "no training forward's input",
        ),
        (
            Box::new(|r| set(r, "step", "input", json!({"model": 0, "shape": [8]}))),
            "not batch × sequence",
        ),
        (
            Box::new(|r| set(r, "step", "input", json!({"model": 0, "shape": [0, 16]}))),
            "outside what mldebug memory estimates",
        ),
    ];
    for (edit, words) in setups {
        let mut r = hf_run(true, gpt2_config());
        edit(&mut r);
        let line = not_estimated(&stages_finding(&r)).clone();
        assert!(line.contains(words), "{words}: {line}");
    }
}

#[test]
fn a_trace_without_a_config_is_judged_as_before() {
    for cuda in [true, false] {
        let before = stages_finding(&with_points(clean(5), cuda));
        // The new fields present and null, as a plain module's record has them.
        let mut r = with_points(clean(5), cuda);
        for field in ["config", "attn_implementation", "lora_rank", "lora_targets"] {
            set(&mut r, "model", field, Value::Null);
        }
        set(&mut r, "model", "dtype", json!("float32"));
        let after = stages_finding(&r);
        assert_eq!(
            (&before.summary, &before.details, &before.numbers),
            (&after.summary, &after.details, &after.numbers)
        );
        assert!(!before.details.iter().any(|d| d.contains("mldebug memory")));
        assert!(before.get("estimate_peak_bytes").is_none());
    }
}
