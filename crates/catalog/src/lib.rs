//! The catalog: SKILL.md, PLAYBOOK.md, refs/*.md, refs/*.tsv and evidence/*.yaml parsed into typed data
//! ([`Catalog`]) that the knowledge commands answer from.
//!
//! The files come as (path, text) pairs ([`parse_files`]: the binary embeds them at build time)
//! or from a folder ([`from_dir`]: an edited copy). Parsing never
//! fails on a malformed file: what is wrong becomes a [`Problem`], and [`verify`] adds the
//! cross-file rules (quotes against evidence, check ids against the registry, the skill spec).
//!
//! Not here: printing (see `commands/` and `render/`).

#![warn(missing_docs)]

pub mod completeness;
pub mod error;
pub mod evidence;
pub mod front_matter;
pub mod limits;
pub mod lines;
pub mod lookup;
pub mod markdown;
pub mod model;
pub mod phrasings;
pub mod quote_match;
mod read;
pub mod records;
pub mod search;
pub mod symptom_id;
pub mod verify;

pub use error::{Error, Result};
pub use read::from_dir;

pub use model::{
    Catalog, Check, Entry, Excerpt, Footnote, Location, Phrasing, Problem, Quote, QuoteStatus,
    Source, Symptom,
};

use mldebug_report::CheckId;
use std::collections::HashMap;

/// The skill's main file, the playbook, and the check sections' home.
pub const SKILL_FILE: &str = "SKILL.md";
/// The playbook: the symptom table and what to do.
pub const PLAYBOOK_FILE: &str = "PLAYBOOK.md";
/// The check sections (`check-<id>`).
pub const DIAGNOSTICS_FILE: &str = "refs/diagnostics.md";
/// The folders whose files of the given extension belong to the catalog (beside SKILL.md and
/// PLAYBOOK.md): the references, the phrasings triage indexes, the evidence. The build script
/// that embeds them keeps its own copy, held to this one by a test.
pub const FOLDERS: [(&str, &str); 3] = [("refs", "md"), ("refs", "tsv"), ("evidence", "yaml")];

/// Parse catalog files given as (relative path, text).
pub fn parse_files(files: Vec<(String, String)>) -> Catalog {
    let mut c = Catalog::default();
    let mut symptoms_heading = false;
    for (path, text) in &files {
        if path.ends_with(".md") {
            let p = markdown::parse(path, text);
            let base = c.quotes.len();
            for mut e in p.entries {
                e.quotes.iter_mut().for_each(|q| *q += base);
                c.entries.push(e);
            }
            c.quotes.extend(p.quotes);
            c.footnotes.extend(p.footnotes);
            c.check_mentions.extend(p.check_mentions);
            c.symptoms.extend(p.symptoms);
            c.log_symptoms.extend(p.log_symptoms);
            c.problems.extend(p.problems);
            symptoms_heading |= p.has_symptoms_heading;
            c.footnote_refs.extend(p.footnote_refs);
            c.links.extend(p.links);
            if path == SKILL_FILE {
                let (fm, problems) = front_matter::check(path, text);
                c.front_matter = fm;
                c.problems.extend(problems);
            }
        } else if path.ends_with(".tsv") {
            let (p, problems) = phrasings::parse(path, text);
            c.phrasings.extend(p);
            c.problems.extend(problems);
        } else if path.ends_with(".yaml") {
            match evidence::parse(path, text) {
                Ok(s) => c.sources.push(s),
                Err(p) => c.problems.push(p),
            }
        }
    }
    if files.iter().any(|(p, _)| p == PLAYBOOK_FILE) && !symptoms_heading {
        c.problems.push(Problem {
            location: Location {
                file: PLAYBOOK_FILE.into(),
                line: 1,
            },
            message: "no `{#symptoms}` heading with the symptom → hypotheses → checks table".into(),
        });
    }
    c.checks = CheckId::ALL
        .iter()
        .map(|&id| {
            let section = c
                .entries
                .iter()
                .find(|e| e.id == Check::section_id(id) && e.location.file == DIAGNOSTICS_FILE);
            Check {
                id,
                section: section.map(|e| e.id.clone()),
                title: section.map(|e| e.title.clone()),
                command: Check::command_for(id),
            }
        })
        .collect();
    for p in &c.phrasings {
        if !c.symptoms.iter().any(|s| s.id == p.id) {
            c.problems.push(Problem {
                location: p.location.clone(),
                message: format!("`{}` is not a symptom row of {PLAYBOOK_FILE}", p.id),
            });
        }
    }
    link_quotes(&mut c);
    c.index_quotes();
    c.problems.iter_mut().for_each(limits::clean);
    c.files = files;
    c
}

/// The most (quote with an elision, excerpt) pairs compared while linking quotes; far above what
/// a real catalog needs (a few hundred), it keeps a hostile one from taking quadratic time.
pub const ELISION_PAIRS_MAX: usize = 200_000;

/// An excerpt's words, normalised once.
struct Normalised<'a> {
    id: &'a str,
    text: String,
    context: String,
}

/// Resolve each quote to the excerpt of its source whose text it matches: an exact match through
/// a map, an elided quote by its pieces (see `quote_match`), within [`ELISION_PAIRS_MAX`].
fn link_quotes(c: &mut Catalog) {
    let sources: HashMap<&str, &Source> = c.sources.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut cache: HashMap<&str, (HashMap<String, &str>, Vec<Normalised>)> = HashMap::new();
    let mut budget = ELISION_PAIRS_MAX;
    let mut stopped_at = None;
    for q in &mut c.quotes {
        let Some(source) = sources.get(q.source.as_str()) else {
            continue;
        };
        let (exact, all) = cache.entry(source.id.as_str()).or_insert_with(|| {
            let all: Vec<Normalised> = source
                .excerpts
                .iter()
                .map(|x| Normalised {
                    id: x.id.as_str(),
                    text: markdown::normalise(&x.text),
                    context: markdown::normalise(&x.context),
                })
                .collect();
            let mut exact = HashMap::new();
            for x in &all {
                exact.entry(x.text.clone()).or_insert(x.id);
            }
            (exact, all)
        });
        let candidates = [
            markdown::normalise(&q.text),
            markdown::normalise(&q.literal),
        ];
        let mut found = candidates.iter().find_map(|t| exact.get(t).copied());
        for pieces in candidates
            .iter()
            .filter_map(|t| quote_match::elided_pieces(t))
        {
            if found.is_some() || stopped_at.is_some() {
                break;
            }
            for x in all.iter() {
                if budget == 0 {
                    stopped_at = Some(q.location.clone());
                    break;
                }
                budget -= 1;
                if quote_match::in_order(&pieces, &x.text)
                    || quote_match::in_order(&pieces, &x.context)
                {
                    found = Some(x.id);
                    break;
                }
            }
        }
        q.excerpt = found.map(str::to_string);
    }
    if let Some(location) = stopped_at {
        c.problems.push(Problem {
            location,
            message: format!(
                "too many quotes with `[...]` against too many excerpts: matching stopped after {ELISION_PAIRS_MAX} comparisons; the quotes from here on are not matched"
            ),
        });
    }
}
