//! How well `mldebug triage` understands people: phrasings of training problems, as
//! practitioners type or paste them, each with the PLAYBOOK symptom row it should reach.
//!
//! - `tests/fixtures/triage_bench.tsv`: the set the matcher was developed against;
//! - `tests/fixtures/triage_holdout.tsv`: written after the matcher was tuned, to measure how it
//!   does on wordings it was never tuned on (measured: 77.8% top-1, 96.3% top-3; the matcher
//!   changed afterwards, so its later numbers are no longer a clean measure);
//! - `tests/fixtures/triage_holdout2.tsv`: written after those changes and measured once
//!   (70.4% top-1, 88.9% top-3) before a last round of general fixes; the concept rules for a
//!   loss beside a fixed phrase ("loss same as", "1/num_classes") were later written from its
//!   misses, so it too is no longer a clean measure.
//! - `tests/fixtures/triage_holdout3.tsv`: phrasings for the ten rows added with the PyTorch
//!   lessons (issue 41), written before those rows' wording was tuned on the benchmark and
//!   measured once after (86.7% top-1, 96.7% top-3 over 30 phrasings).
//! - `tests/fixtures/triage_holdout4.tsv`: phrasings for the rows that existed before, written
//!   after the ten new rows were in and measured once, to see whether the new rows take wordings
//!   from the old ones (86.7% top-1, 96.7% top-3 over 30 phrasings).
//! - `tests/fixtures/triage_holdout5.tsv`: two phrasings for every row (80), written from a
//!   one-line description of each symptom without reading the rows, the matcher or the other
//!   sets, and measured once (83.8% top-1, 93.8% top-3). The rules for a first loss against
//!   ln C and for a number after a reference word were later written from the classes of its
//!   misses, so it is no longer a clean measure.
//! - `tests/fixtures/triage_holdout6.tsv`: three phrasings for every row (120: a short query, a
//!   question with details, a pasted log), written the same way and measured once (66.7% top-1,
//!   84.2% top-3); the pasted curves, near-perfect first-epoch metrics and everyday wordings it
//!   missed were then read as general rules (a curve's trend, a first loss against ln C), so it
//!   is now a development set.
//! - `tests/fixtures/triage_holdout7.tsv`: 120 more, written the same way after those rules and
//!   measured once (73.3% top-1, 92.5% top-3).
//!
//! Both report top-1 and top-3 accuracy (`cargo test --test it triage_bench:: -- --nocapture`).
//! The tuned set must reach at least 90% top-1 and 100% top-3; the held-out set is reported and
//! held to a lower floor, so that a regression on unseen wordings still fails.

use mldebug::catalog::{embedded, search};

struct Case {
    line: usize,
    expected: String,
    query: String,
}

fn cases(path: &str) -> Vec<Case> {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let (expected, query) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("{path}:{}: expected `id<TAB>query`", i + 1));
            Case {
                line: i + 1,
                expected: expected.trim().to_string(),
                query: query.trim().to_string(),
            }
        })
        .collect()
}

struct Score {
    n: usize,
    top1: usize,
    top3: usize,
    misses: Vec<String>,
}

impl Score {
    fn pct(k: usize, n: usize) -> f64 {
        100.0 * k as f64 / n.max(1) as f64
    }
}

fn run(path: &str) -> Score {
    let c = embedded();
    let index = search::symptom_index(c);
    let ids: Vec<&str> = c.symptoms.iter().map(|s| s.id.as_str()).collect();
    let all = cases(path);
    assert!(!all.is_empty(), "{path} has no cases");
    let mut score = Score {
        n: all.len(),
        top1: 0,
        top3: 0,
        misses: Vec::new(),
    };
    for case in &all {
        assert!(
            ids.contains(&case.expected.as_str()),
            "{path}:{}: no symptom row has the id `{}`",
            case.line,
            case.expected
        );
        let hits = index.search(&case.query);
        let ranked: Vec<&str> = hits.iter().map(|(i, _)| ids[*i]).collect();
        let rank = ranked.iter().position(|id| *id == case.expected);
        if rank == Some(0) {
            score.top1 += 1;
        }
        if rank.is_some_and(|r| r < 3) {
            score.top3 += 1;
        }
        if rank != Some(0) {
            let want = ids.iter().position(|id| *id == case.expected).unwrap();
            let why = |doc: usize| -> String {
                index
                    .explain(&case.query, doc)
                    .iter()
                    .map(|(t, s)| format!("{t}={s:.2}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let first = hits.first().map_or(String::new(), |(i, _)| why(*i));
            score.misses.push(format!(
                "{path}:{}: `{}` → {:?} (want {} at rank {}: {}; first: {first})",
                case.line,
                case.query,
                &ranked[..ranked.len().min(3)],
                case.expected,
                rank.map_or("none".to_string(), |r| (r + 1).to_string()),
                why(want)
            ));
        }
    }
    println!(
        "{path}: {} phrasings, top-1 {:.1}% ({}), top-3 {:.1}% ({})",
        score.n,
        Score::pct(score.top1, score.n),
        score.top1,
        Score::pct(score.top3, score.n),
        score.top3
    );
    for m in &score.misses {
        println!("  miss: {m}");
    }
    score
}

#[test]
fn tuned_set_top1_at_least_90_and_top3_all() {
    let s = run("tests/fixtures/triage_bench.tsv");
    assert!(
        s.n >= 80,
        "the benchmark needs at least 80 phrasings, has {}",
        s.n
    );
    assert!(
        Score::pct(s.top1, s.n) >= 90.0,
        "top-1 {:.1}% < 90%:\n{}",
        Score::pct(s.top1, s.n),
        s.misses.join("\n")
    );
    assert_eq!(
        s.top3,
        s.n,
        "every phrasing in the top 3:\n{}",
        s.misses.join("\n")
    );
}

#[test]
fn every_symptom_row_is_in_the_benchmark() {
    let bench = cases("tests/fixtures/triage_bench.tsv");
    for s in &embedded().symptoms {
        let n = bench.iter().filter(|c| c.expected == s.id).count();
        assert!(
            n >= 3,
            "row `{}` has {n} phrasings in the benchmark; write at least 3",
            s.id
        );
    }
}

/// Wordings written after tuning. Reported, and held to a floor below what the tuned set reaches,
/// so that a change that only fits the tuned set shows up here.
#[test]
fn held_out_sets_generalise() {
    for path in [
        "tests/fixtures/triage_holdout.tsv",
        "tests/fixtures/triage_holdout2.tsv",
        "tests/fixtures/triage_holdout3.tsv",
        "tests/fixtures/triage_holdout4.tsv",
        "tests/fixtures/triage_holdout5.tsv",
        "tests/fixtures/triage_holdout6.tsv",
        "tests/fixtures/triage_holdout7.tsv",
    ] {
        held_out(path);
    }
}

fn held_out(path: &str) {
    let s = run(path);
    assert!(
        s.n >= 20,
        "the held-out set needs at least 20 phrasings, has {}",
        s.n
    );
    let (top1, top3) = (Score::pct(s.top1, s.n), Score::pct(s.top3, s.n));
    assert!(
        top1 >= 70.0 && top3 >= 85.0,
        "{path}: top-1 {top1:.1}% (floor 70%), top-3 {top3:.1}% (floor 85%):\n{}",
        s.misses.join("\n")
    );
}
