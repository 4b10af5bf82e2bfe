//! How well `mldebug triage` understands people: phrasings of training problems, as
//! practitioners type or paste them, each with the PLAYBOOK symptom row it should reach.
//!
//! `refs/triage_phrasings.tsv` is part of the catalog: triage indexes its phrasings beside each
//! row's own words. Its sets, in the order they were written:
//! - `tuned`: the phrasings the matcher's rules were developed against;
//! - `h1` to `h5`: held-out sets, each written after the previous round of changes and measured
//!   once before rules were written from its misses (h1 77.8% top-1 / 96.3% top-3, h2 70.4 /
//!   88.9, h3 86.7 / 96.7, h4 86.7 / 96.7, h5 83.8 / 93.8, the matcher of each time);
//! - `h6`: three phrasings for every row (a short query, a question with details, a pasted log),
//!   written from a one-line description of each symptom, measured once before it shaped the
//!   rules for curves and numbers in pasted logs (66.7% / 84.2%), then the set on which the
//!   phrasings' weight was chosen (`PHRASING_WEIGHT`).
//!
//! Each set is measured with the others indexed (its own phrasings left out): how triage does
//! on wordings of people it has not read. The sets never indexed measure the same thing without
//! any choice made on them:
//! - `tests/fixtures/triage_holdout7.tsv`: 120 phrasings written like h6, measured once before
//!   the phrasings were indexed (73.3% / 92.5%) and once after;
//! - `tests/fixtures/triage_holdout8.tsv`: 120 more, written after the phrasings were indexed,
//!   measured once.
//!
//! Both report top-1 and top-3 accuracy (`cargo test --test it triage_bench:: -- --nocapture`).

use mldebug::catalog::Phrasing;
use mldebug::catalog::{embedded, search};

const PHRASINGS: &str = "refs/triage_phrasings.tsv";

struct Case {
    place: String,
    expected: String,
    query: String,
}

/// A held-out file's cases: `id<TAB>query` lines.
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
                place: format!("{path}:{}", i + 1),
                expected: expected.trim().to_string(),
                query: query.trim().to_string(),
            }
        })
        .collect()
}

/// The catalog's phrasings of one set, as cases.
fn set_cases(set: &str) -> Vec<Case> {
    embedded()
        .phrasings
        .iter()
        .filter(|p| p.set == set)
        .map(|p| Case {
            place: p.location.to_string(),
            expected: p.id.clone(),
            query: p.text.clone(),
        })
        .collect()
}

fn sets() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &embedded().phrasings {
        if !out.contains(&p.set) {
            out.push(p.set.clone());
        }
    }
    out
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

/// Top-1 and top-3 of `all` against the symptom index built with the phrasings `keep` accepts.
fn run(name: &str, all: &[Case], keep: impl Fn(&Phrasing) -> bool) -> Score {
    let c = embedded();
    let index = search::symptom_index_with(c, keep);
    let ids: Vec<&str> = c.symptoms.iter().map(|s| s.id.as_str()).collect();
    assert!(!all.is_empty(), "{name} has no cases");
    let mut score = Score {
        n: all.len(),
        top1: 0,
        top3: 0,
        misses: Vec::new(),
    };
    for case in all {
        assert!(
            ids.contains(&case.expected.as_str()),
            "{}: no symptom row has the id `{}`",
            case.place,
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
                "{}: `{}` → {:?} (want {} at rank {}: {}; first: {first})",
                case.place,
                case.query,
                &ranked[..ranked.len().min(3)],
                case.expected,
                rank.map_or("none".to_string(), |r| (r + 1).to_string()),
                why(want)
            ));
        }
    }
    println!(
        "{name}: {} phrasings, top-1 {:.1}% ({}), top-3 {:.1}% ({})",
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

fn at_least(name: &str, s: &Score, top1: f64, top3: f64) {
    let (t1, t3) = (Score::pct(s.top1, s.n), Score::pct(s.top3, s.n));
    assert!(
        t1 >= top1 && t3 >= top3,
        "{name}: top-1 {t1:.1}% (floor {top1}%), top-3 {t3:.1}% (floor {top3}%):\n{}",
        s.misses.join("\n")
    );
}

#[test]
fn every_symptom_row_has_phrasings_and_every_phrasing_a_row() {
    let c = embedded();
    for s in &c.symptoms {
        let n = c.phrasings.iter().filter(|p| p.id == s.id).count();
        assert!(
            n >= 5,
            "row `{}` has {n} phrasings in {PHRASINGS}; write at least 5",
            s.id
        );
    }
    let stray: Vec<String> = c
        .problems
        .iter()
        .filter(|p| p.location.file == PHRASINGS)
        .map(|p| p.to_string())
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// Each set of the catalog's phrasings, with the other sets indexed and its own left out.
#[test]
fn each_indexed_set_reads_with_the_others_indexed() {
    let names = sets();
    assert!(names.len() >= 5, "{names:?}");
    for set in names {
        let s = run(&format!("{PHRASINGS} [{set}]"), &set_cases(&set), |p| {
            p.set != set
        });
        at_least(&set, &s, 70.0, 85.0);
    }
}

/// Every phrasing found with everything indexed: the index holds what it was given.
#[test]
fn the_indexed_phrasings_reach_their_rows() {
    let all: Vec<Case> = sets().iter().flat_map(|s| set_cases(s)).collect();
    let s = run(&format!("{PHRASINGS} [all, indexed]"), &all, |_| true);
    assert!(s.n >= 400, "{} phrasings", s.n);
    at_least("all", &s, 95.0, 99.0);
}

/// Sets never indexed: triage as a user meets it.
#[test]
fn held_out_sets_generalise() {
    for path in [
        "tests/fixtures/triage_holdout7.tsv",
        "tests/fixtures/triage_holdout8.tsv",
    ] {
        let s = run(path, &cases(path), |_| true);
        assert!(s.n >= 100, "{path}: {} phrasings", s.n);
        at_least(path, &s, 75.0, 90.0);
    }
}
