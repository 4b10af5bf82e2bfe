//! `mldebug triage` and `mldebug search` on the real, embedded catalog: the wordings that used
//! to miss their row, a memory leak that is not a batch leak, the out-of-memory row's advice,
//! and the bounds on a huge query.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn mldebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("run mldebug")
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = mldebug(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn first_row(query: &str) -> String {
    let v = json(&["triage", query]);
    v["matches"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Each of these reached the wrong row, or none, before symptom rows had ids, concepts and
/// number classes.
#[test]
fn wordings_that_missed_now_reach_their_row() {
    for (query, id) in [
        ("fine-tune's loss went to 0 after step 1", "loss-zero"),
        ("training loss is zero", "loss-zero"),
        ("loss went to zero", "loss-zero"),
        ("loss spikes every few thousand steps", "loss-spikes"),
        ("LoRA finetune doesn't change outputs", "lora-no-effect"),
        ("GPU utilization is low, training is slow", "slow-training"),
        ("val loss increasing", "overfitting"),
        ("dataloader bottleneck", "dataloader-bottleneck"),
        ("memory leak", "memory-growth"),
    ] {
        assert_eq!(first_row(query), id, "{query}");
    }
}

#[test]
fn the_lora_row_names_adapters_that_are_not_applied_or_not_trainable() {
    let v = json(&["triage", "LoRA finetune doesn't change outputs"]);
    let hyps = v["matches"][0]["hypotheses"].to_string();
    assert!(
        hyps.contains("not applied") && hyps.contains("not trainable"),
        "{hyps}"
    );
    let checks = v["matches"][0]["checks"].to_string();
    assert!(checks.contains("grad-flow"), "{checks}");
}

#[test]
fn a_memory_leak_is_not_a_batch_leak() {
    let v = json(&["search", "memory", "leak"]);
    let ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let memory = ids.iter().position(|id| id.contains("memory"));
    let leak = ids.iter().position(|id| id.contains("leak"));
    assert!(memory.is_some(), "{ids:?}");
    assert!(
        leak.is_none_or(|l| l > memory.unwrap()),
        "a batch-leak entry ranks above every memory entry: {ids:?}"
    );
    assert_ne!(ids[0], "check-batch-leak", "{ids:?}");
}

#[test]
fn out_of_memory_points_at_the_memory_budget_not_at_overfitting() {
    let v = json(&[
        "triage",
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ]);
    let row = &v["matches"][0];
    assert_eq!(row["id"], "oom");
    let commands = row["commands"].to_string();
    assert!(
        commands.contains("mldebug show memory-napkin-math"),
        "{commands}"
    );
    assert!(!commands.contains("check overfit"), "{commands}");
}

/// A query of words separated by spaces, packed into arguments of at most 60,000 bytes (an
/// argument is limited to 128 KiB on Linux).
fn words_as_args(words: &[String]) -> Vec<String> {
    let mut args = vec![String::new()];
    for w in words {
        if args.last().unwrap().len() + w.len() + 1 > 60_000 {
            args.push(String::new());
        }
        let last = args.last_mut().unwrap();
        if !last.is_empty() {
            last.push(' ');
        }
        last.push_str(w);
    }
    args
}

fn distinct_words(n: usize) -> Vec<String> {
    let mut state = 7u64;
    (0..n)
        .map(|_| {
            (0..8)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (b'a' + (state >> 59) as u8 % 26) as char
                })
                .collect()
        })
        .collect()
}

/// 115,000 distinct words took about a minute (a quadratic merge of query terms); every stage
/// is now linear. Timed as a ratio, so a slow or loaded machine does not decide it: four times
/// the words must cost well under the sixteen times a quadratic stage would (and the process
/// start-up, the same for both, only lowers the ratio).
#[test]
fn query_time_grows_linearly_with_its_words() {
    let run = |cmd: &str, n: usize| {
        let args = words_as_args(&distinct_words(n));
        let mut all = vec![cmd, "--json"];
        all.extend(args.iter().map(String::as_str));
        let t = Instant::now();
        let out = mldebug(&all);
        let took = t.elapsed();
        assert!(
            matches!(out.status.code(), Some(0) | Some(2)),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        took
    };
    for cmd in ["triage", "search"] {
        let small = run(cmd, 25_000);
        let large = run(cmd, 100_000);
        assert!(
            large < small * 8 + Duration::from_secs(2),
            "{cmd}: 25,000 words {small:?}, 100,000 words {large:?}: grows faster than linearly"
        );
    }
}

#[test]
fn a_query_over_the_cap_is_refused_with_a_clear_message() {
    let words: Vec<String> = (0..200_001).map(|_| "x".to_string()).collect();
    let args = words_as_args(&words);
    let mut all = vec!["triage"];
    all.extend(args.iter().map(String::as_str));
    let out = mldebug(&all);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("more than 200000 words"), "{err}");
}

#[test]
fn every_row_has_an_id_and_ids_are_unique() {
    let c = mldebug::catalog::embedded();
    let mut ids: Vec<&str> = c.symptoms.iter().map(|s| s.id.as_str()).collect();
    assert!(
        c.symptoms.iter().all(|s| s.id_given),
        "every row writes its id"
    );
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate symptom ids");
}

/// A loss that falls and then stalls high (a candle GPT whose fused LayerNorms leave only the
/// head learning) is not "stuck from step 0": it reaches the plateau row, whose hypotheses start
/// with a part of the model cut off and whose checks run grad-flow.
#[test]
fn a_loss_that_falls_then_stalls_reaches_the_plateau_row_not_the_flat_one() {
    for query in [
        "loss falls then stalls at 2.2",
        "loss goes down then plateaus well above where it should be",
        "loss decreases then stalls high",
    ] {
        assert_eq!(first_row(query), "loss-plateau-high", "{query}");
    }
    let v = json(&["triage", "loss falls then stalls at 2.2"]);
    let row = &v["matches"][0];
    assert!(
        row["hypotheses"][0].as_str().unwrap().contains("cut off"),
        "{row}"
    );
    let checks = row["checks"].to_string();
    assert!(
        checks.contains("grad-flow") && checks.contains("overfit"),
        "{checks}"
    );
    // And the flat row still answers a loss that never moved.
    assert_eq!(first_row("loss is flat from step 0"), "loss-flat");
}
