//! `mldebug catalog verify`: the rules that tie the catalog's files together.
//!
//! - every footnote reference has a definition in its file and an `evidence/<label>.yaml`;
//! - every quote matches an excerpt of its source exactly (see `quote_match`);
//! - `*(unverified)*` follows a quote exactly when its excerpt is unverified;
//! - every `mldebug check <id>` names a registered check, and every registered check has a
//!   `{#check-<id>}` section in refs/diagnostics.md;
//! - evidence files are consistent (file name = id, status = weakest excerpt status, unique ids);
//! - SKILL.md's front matter follows the agent-skill spec (checked while parsing);
//! - entry ids are unique, and so are symptom row ids (see `symptom_id`);
//! - SKILL.md, PLAYBOOK.md and refs/diagnostics.md exist and hold text, and every relative link
//!   names a catalog file (see `completeness`).
//!
//! Each rule costs time in proportion to the catalog's size (lookups go through maps), and at
//! most `limits::MAX_PROBLEMS_PER_FILE` problems are listed per file.

use super::limits::{self, shown, MAX_PROBLEMS_PER_FILE};
use super::markdown::normalise;
use super::model::{Catalog, Excerpt, Location, Problem, QuoteStatus, Source};
use super::quote_match;
use super::DIAGNOSTICS_FILE;
use mldebug_report::CheckId;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Every problem in the catalog, sorted by file and line, at most
/// [`MAX_PROBLEMS_PER_FILE`] per file (then one line counting the rest).
pub fn verify(c: &Catalog) -> Vec<Problem> {
    limits::bound(all(c))
}

/// Every problem in the catalog, unsorted and unbounded (see [`limits::bound`]).
pub fn all(c: &Catalog) -> Vec<Problem> {
    let mut out = c.problems.clone();
    super::completeness::check(c, &mut out);
    let sources: HashMap<&str, &Source> = c.sources.iter().map(|s| (s.id.as_str(), s)).collect();
    footnotes(c, &sources, &mut out);
    quotes(c, &sources, &mut out);
    checks(c, &mut out);
    self::sources(c, &mut out);
    unique_entries(c, &mut out);
    super::symptom_id::verify(c, &mut out);
    out
}

fn problem(file: &str, line: usize, message: impl Into<String>) -> Problem {
    Problem {
        location: Location {
            file: file.to_string(),
            line,
        },
        message: message.into(),
    }
}

fn at(location: &Location, message: impl Into<String>) -> Problem {
    Problem {
        location: location.clone(),
        message: message.into(),
    }
}

fn evidence_path(label: &str) -> String {
    format!("evidence/{label}.yaml")
}

type Sources<'a> = HashMap<&'a str, &'a Source>;

fn footnotes(c: &Catalog, sources: &Sources, out: &mut Vec<Problem>) {
    let defined: HashSet<(&str, &str)> = c
        .footnotes
        .iter()
        .map(|f| (f.location.file.as_str(), f.label.as_str()))
        .collect();
    for (label, loc) in &c.footnote_refs {
        if !defined.contains(&(loc.file.as_str(), label.as_str())) {
            let label = shown(label);
            out.push(at(
                loc,
                format!("footnote [^{label}] has no definition in this file (add `[^{label}]: Author, \"Title\", <url>`)"),
            ));
        }
    }
    for f in &c.footnotes {
        if !sources.contains_key(f.label.as_str()) {
            out.push(at(
                &f.location,
                format!(
                    "footnote [^{}] names {}, which does not exist or does not parse",
                    shown(&f.label),
                    shown(&evidence_path(&f.label))
                ),
            ));
        }
    }
}

fn quotes(c: &Catalog, sources: &Sources, out: &mut Vec<Problem>) {
    // The nearest excerpt is looked for only for the quotes whose problem will be listed.
    let mut unmatched: HashMap<&str, usize> = HashMap::new();
    let mut normalised: HashMap<&str, Vec<String>> = HashMap::new();
    let excerpts: HashMap<(&str, &str), &Excerpt> = c
        .sources
        .iter()
        .flat_map(|s| {
            s.excerpts
                .iter()
                .map(move |x| ((s.id.as_str(), x.id.as_str()), x))
        })
        .collect();
    for q in &c.quotes {
        let Some(source) = sources.get(q.source.as_str()) else {
            out.push(at(
                &q.location,
                format!(
                    "quote cites [^{}] but {} does not exist or does not parse",
                    shown(&q.source),
                    shown(&evidence_path(&q.source))
                ),
            ));
            continue;
        };
        let Some(excerpt) = q
            .excerpt
            .as_deref()
            .and_then(|id| excerpts.get(&(source.id.as_str(), id)))
        else {
            let n = unmatched.entry(q.location.file.as_str()).or_default();
            *n += 1;
            let detail = if *n <= MAX_PROBLEMS_PER_FILE {
                nearest(&q.text, source, &mut normalised)
            } else {
                String::new()
            };
            out.push(at(
                &q.location,
                format!(
                    "quote does not match any excerpt of {} exactly{detail}",
                    shown(&evidence_path(&q.source))
                ),
            ));
            continue;
        };
        let unverified = excerpt.status == QuoteStatus::Unverified;
        if unverified && !q.marked_unverified {
            out.push(at(
                &q.location,
                format!(
                    "quote from unverified excerpt `{}` lacks the marker: write `*(unverified)*` right after the footnote reference",
                    shown(&excerpt.id)
                ),
            ));
        } else if !unverified && q.marked_unverified {
            out.push(at(
                &q.location,
                format!(
                    "quote is marked `*(unverified)*` but excerpt `{}` is {}: remove the marker",
                    shown(&excerpt.id),
                    excerpt.status
                ),
            ));
        }
    }
}

/// Which excerpt of `source` a quote that matches none was meant to be, and where they part.
/// `normalised` keeps each source's excerpt texts, normalised once.
fn nearest<'a>(
    quote: &str,
    source: &'a Source,
    normalised: &mut HashMap<&'a str, Vec<String>>,
) -> String {
    let texts = normalised
        .entry(source.id.as_str())
        .or_insert_with(|| source.excerpts.iter().map(|x| normalise(&x.text)).collect());
    let Some((x, text)) = source
        .excerpts
        .iter()
        .zip(texts.iter())
        .max_by_key(|(_, t)| quote_match::shared_prefix_words_normalised(quote, t))
    else {
        return " (the evidence file has no excerpts)".to_string();
    };
    match quote_match::first_difference(quote, text) {
        Some((n, ours, theirs)) => format!(
            "; nearest excerpt `{}` differs at word {n}: the quote has `{}`, the evidence has `{}`",
            shown(&x.id),
            shown(&ours),
            shown(&theirs)
        ),
        None => format!("; nearest excerpt `{}`", shown(&x.id)),
    }
}

fn checks(c: &Catalog, out: &mut Vec<Problem>) {
    let known: Vec<&str> = CheckId::ALL.iter().map(|c| c.as_str()).collect();
    for m in &c.check_mentions {
        if m.id != "all" && !known.contains(&m.id.as_str()) {
            out.push(at(
                &m.location,
                format!(
                    "unknown check `{}` in `mldebug check {}`; the checks are: {}, all",
                    shown(&m.id),
                    shown(&m.id),
                    known.join(", ")
                ),
            ));
        }
    }
    for check in &c.checks {
        if check.section.is_none() {
            out.push(problem(
                DIAGNOSTICS_FILE,
                1,
                format!(
                    "check `{}` has no section: add a heading with `{{#check-{}}}` to {DIAGNOSTICS_FILE}",
                    check.id, check.id
                ),
            ));
        }
    }
}

fn sources(c: &Catalog, out: &mut Vec<Problem>) {
    let mut seen_excerpts: BTreeMap<&str, &str> = BTreeMap::new();
    let texts: HashMap<&str, &str> = c
        .files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    for s in &c.sources {
        let file = &s.location.file;
        let text = texts.get(file.as_str()).copied().unwrap_or("");
        let id_lines = super::evidence::id_lines(text);
        if *file != evidence_path(&s.id) {
            out.push(at(
                &s.location,
                format!(
                    "the evidence file's id is `{}`, so it must be named {}",
                    shown(&s.id),
                    shown(&evidence_path(&s.id))
                ),
            ));
        }
        if s.excerpts.is_empty() {
            out.push(at(&s.location, "the evidence file has no excerpts"));
        }
        if let Some(weakest) = s.excerpts.iter().map(|x| x.status).min() {
            if weakest != s.status {
                out.push(problem(
                    file,
                    line_of_key(text, "status"),
                    format!(
                        "source status is {} but its weakest excerpt is {}: the source status must be the weakest",
                        s.status, weakest
                    ),
                ));
            }
        }
        for x in &s.excerpts {
            let line = id_lines.get(x.id.as_str()).copied().unwrap_or(1);
            if normalise(&x.text).is_empty() {
                out.push(problem(
                    file,
                    line,
                    format!("excerpt `{}` has no text", shown(&x.id)),
                ));
            }
            if let Some(other) = seen_excerpts.insert(&x.id, file) {
                out.push(problem(
                    file,
                    line,
                    format!("excerpt id `{}` is also used in {other}", shown(&x.id)),
                ));
            }
        }
    }
}

fn line_of_key(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(&format!("{key}:")))
        .map(|i| i + 1)
        .unwrap_or(1)
}

fn unique_entries(c: &Catalog, out: &mut Vec<Problem>) {
    let mut seen: BTreeMap<&str, &Location> = BTreeMap::new();
    for e in &c.entries {
        if let Some(first) = seen.insert(&e.id, &e.location) {
            out.push(at(
                &e.location,
                format!("entry id `{}` is already used at {first}", shown(&e.id)),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_files;

    const EVIDENCE: &str = "id: src\nauthor: A. Person\ntitle: T\nurl: https://x\ndate: '2020'\nstatus: unverified\nexcerpts:\n- id: src-one\n  text: The exact words here.\n  status: verified-exact\n- id: src-two\n  text: Words nobody checked.\n  status: unverified\n";

    fn skill(body: &str) -> String {
        format!("---\nname: t\ndescription: d\n---\n\n## S\n\n### E {{#e}}\n\n{body}\n\n[^src]: A. Person, \"T\", <https://x>\n")
    }

    fn problems(body: &str) -> Vec<String> {
        let c = parse_files(vec![
            ("SKILL.md".into(), skill(body)),
            ("evidence/src.yaml".into(), EVIDENCE.into()),
        ]);
        verify(&c)
            .into_iter()
            .filter(|p| !p.message.contains("has no section") && !p.message.ends_with("is missing"))
            .map(|p| p.to_string())
            .collect()
    }

    #[test]
    fn a_good_quote_passes() {
        assert_eq!(
            problems("> The exact words here.[^src]"),
            Vec::<String>::new()
        );
        assert_eq!(
            problems("> Words nobody checked.[^src] *(unverified)*"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_changed_word_is_caught_with_its_line() {
        let p = problems("> The exact word here.[^src]");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("SKILL.md:10: quote does not match"),
            "{p:?}"
        );
        assert!(p[0].contains("word 3: the quote has `word`"), "{p:?}");
    }

    #[test]
    fn the_unverified_marker_follows_the_evidence() {
        let p = problems("> Words nobody checked.[^src]");
        assert!(p[0].contains("lacks the marker"), "{p:?}");
        let p = problems("> The exact words here.[^src] *(unverified)*");
        assert!(p[0].contains("remove the marker"), "{p:?}");
    }

    #[test]
    fn unknown_checks_and_missing_evidence() {
        let p = problems("Check: `mldebug check overfit-one --model m`");
        assert!(
            p[0].starts_with("SKILL.md:10: unknown check `overfit-one`"),
            "{p:?}"
        );
        let p = problems("> The exact words here.[^other]\n\n[^other]: Nobody");
        assert!(p.iter().any(|m| m.contains("evidence/other.yaml")), "{p:?}");
    }

    #[test]
    fn missing_check_sections_are_listed() {
        let c = parse_files(vec![("SKILL.md".into(), skill("Text."))]);
        let missing = verify(&c)
            .into_iter()
            .filter(|p| p.message.contains("has no section"))
            .count();
        assert_eq!(missing, CheckId::ALL.len());
    }

    #[test]
    fn duplicate_entry_ids() {
        let p = problems("### Again {#e}\n\nText.");
        assert!(
            p.iter()
                .any(|m| m.contains("entry id `e` is already used at SKILL.md:8")),
            "{p:?}"
        );
    }
}
