//! `mldebug catalog verify`: the rules that tie the catalog's files together.
//!
//! - every footnote reference has a definition in its file and an `evidence/<label>.yaml`;
//! - every quote matches an excerpt of its source exactly (see `quote_match`);
//! - `*(unverified)*` follows a quote exactly when its excerpt is unverified;
//! - every `mldebug check <id>` names a registered check, and every registered check has a
//!   `{#check-<id>}` section in refs/diagnostics.md;
//! - evidence files are consistent (file name = id, status = weakest excerpt status, unique ids);
//! - SKILL.md's front matter follows the agent-skill spec (checked while parsing);
//! - entry ids are unique, and so are symptom row ids (see `symptom_id`).

use super::markdown::normalise;
use super::model::{Catalog, Location, Problem, QuoteStatus};
use super::quote_match;
use super::{DIAGNOSTICS_FILE, SKILL_FILE};
use mldebug_diagnostics::CheckId;
use std::collections::BTreeMap;

/// Every problem in the catalog, sorted by file and line.
pub fn verify(c: &Catalog) -> Vec<Problem> {
    let mut out = c.problems.clone();
    let has_file = |f: &str| c.files.iter().any(|(p, _)| p == f);
    if !has_file(SKILL_FILE) {
        out.push(problem(SKILL_FILE, 1, "SKILL.md is missing"));
    }
    footnotes(c, &mut out);
    quotes(c, &mut out);
    checks(c, &mut out);
    sources(c, &mut out);
    unique_entries(c, &mut out);
    super::symptom_id::verify(c, &mut out);
    out.sort();
    out.dedup();
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

fn footnotes(c: &Catalog, out: &mut Vec<Problem>) {
    for (label, loc) in &c.footnote_refs {
        let defined = c
            .footnotes
            .iter()
            .any(|f| &f.label == label && f.location.file == loc.file);
        if !defined {
            out.push(at(
                loc,
                format!("footnote [^{label}] has no definition in this file (add `[^{label}]: Author, \"Title\", <url>`)"),
            ));
        }
    }
    for f in &c.footnotes {
        if c.source(&f.label).is_none() {
            out.push(at(
                &f.location,
                format!(
                    "footnote [^{}] names {}, which does not exist or does not parse",
                    f.label,
                    evidence_path(&f.label)
                ),
            ));
        }
    }
}

fn quotes(c: &Catalog, out: &mut Vec<Problem>) {
    for q in &c.quotes {
        let Some(source) = c.source(&q.source) else {
            out.push(at(
                &q.location,
                format!(
                    "quote cites [^{}] but {} does not exist or does not parse",
                    q.source,
                    evidence_path(&q.source)
                ),
            ));
            continue;
        };
        let Some(excerpt) = q
            .excerpt
            .as_deref()
            .and_then(|id| source.excerpts.iter().find(|x| x.id == id))
        else {
            let nearest = source
                .excerpts
                .iter()
                .max_by_key(|x| quote_match::shared_prefix_words(&q.text, &normalise(&x.text)));
            let detail = match nearest {
                Some(x) => match quote_match::first_difference(&q.text, &normalise(&x.text)) {
                    Some((n, ours, theirs)) => format!(
                        "; nearest excerpt `{}` differs at word {n}: the quote has `{ours}`, the evidence has `{theirs}`",
                        x.id
                    ),
                    None => format!("; nearest excerpt `{}`", x.id),
                },
                None => " (the evidence file has no excerpts)".to_string(),
            };
            out.push(at(
                &q.location,
                format!(
                    "quote does not match any excerpt of {} exactly{detail}",
                    evidence_path(&q.source)
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
                    excerpt.id
                ),
            ));
        } else if !unverified && q.marked_unverified {
            out.push(at(
                &q.location,
                format!(
                    "quote is marked `*(unverified)*` but excerpt `{}` is {}: remove the marker",
                    excerpt.id, excerpt.status
                ),
            ));
        }
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
                    m.id,
                    m.id,
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
    for s in &c.sources {
        let file = &s.location.file;
        let text = c
            .files
            .iter()
            .find(|(p, _)| p == file)
            .map(|(_, t)| t.as_str())
            .unwrap_or("");
        if *file != evidence_path(&s.id) {
            out.push(at(
                &s.location,
                format!(
                    "the evidence file's id is `{}`, so it must be named {}",
                    s.id,
                    evidence_path(&s.id)
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
            let line = super::evidence::line_of_id(text, &x.id);
            if normalise(&x.text).is_empty() {
                out.push(problem(
                    file,
                    line,
                    format!("excerpt `{}` has no text", x.id),
                ));
            }
            if let Some(other) = seen_excerpts.insert(&x.id, file) {
                out.push(problem(
                    file,
                    line,
                    format!("excerpt id `{}` is also used in {other}", x.id),
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
                format!("entry id `{}` is already used at {first}", e.id),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::parse_files;

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
            .filter(|p| !p.message.contains("has no section"))
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
