//! The catalog's typed data: what SKILL.md, PLAYBOOK.md, refs/ and evidence/ say, once parsed.
//! Plain data with no I/O; `parse` builds it and `verify` judges it.

use mldebug_report::CheckId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// A place in a catalog file, for messages a person can follow.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    /// Path relative to the catalog root, e.g. `SKILL.md` or `evidence/karpathy-recipe.yaml`.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// How far a quote was checked against its original (the weakest first in `Ord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuoteStatus {
    /// The original could not be checked; the text is as the draft had it.
    Unverified,
    /// Checked; the text is the corrected source text and `note` says what differed.
    VerifiedWithDifferences,
    /// Checked and exact.
    VerifiedExact,
}

impl QuoteStatus {
    /// The status as written in evidence files: `unverified`, `verified-exact`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            QuoteStatus::Unverified => "unverified",
            QuoteStatus::VerifiedWithDifferences => "verified-with-differences",
            QuoteStatus::VerifiedExact => "verified-exact",
        }
    }
}

impl fmt::Display for QuoteStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One exact excerpt of a source, as recorded in `evidence/<source>.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excerpt {
    /// The record id (the same id as in the quotes evidence record).
    pub id: String,
    /// The quoted words, exact, `[...]` marking elisions.
    pub text: String,
    /// The quote with the sentences around it, exact; empty when the original was not available.
    pub context: String,
    /// Whether the words were checked against the source.
    pub status: QuoteStatus,
    /// What differed, or what the check could not see.
    pub note: String,
    /// What the words were checked against (an archived copy, a page).
    pub verified_against: String,
    /// The topics it is filed under.
    pub topics: Vec<String>,
}

/// A source (a post, a book chapter, a docs page): one `evidence/<id>.yaml` file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// The source id: the evidence file's name and the footnote label.
    pub id: String,
    /// Who wrote it.
    pub author: String,
    /// Its title.
    pub title: String,
    /// Where to read it.
    pub url: String,
    /// When it was published.
    pub date: String,
    /// The weakest status of its excerpts.
    pub status: QuoteStatus,
    /// Its exact excerpts.
    pub excerpts: Vec<Excerpt>,
    /// Where the evidence file is (`evidence/<id>.yaml`).
    #[serde(skip)]
    pub location: Location,
}

/// A quote as written in the Markdown: a block quote ending in a footnote reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quote {
    /// The quoted words, whitespace-normalised, Markdown markup removed.
    pub text: String,
    /// The same words with code spans as written, backticks kept (for sources whose own text
    /// has backticks, such as reStructuredText ``literals``).
    #[serde(skip)]
    pub literal: String,
    /// The footnote label, which names `evidence/<source>.yaml`.
    pub source: String,
    /// Whether the `*(unverified)*` marker follows the footnote reference.
    pub marked_unverified: bool,
    /// The entry the quote sits in, if any.
    pub entry: Option<String>,
    /// The evidence excerpt the text matches, once resolved (see `parse::link`).
    pub excerpt: Option<String>,
    /// Where the quote is.
    pub location: Location,
}

/// A section of the Markdown with an `{#id}`: a folklore entry in SKILL.md, a section of
/// PLAYBOOK.md or refs/.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// The `{#id}`.
    pub id: String,
    /// The heading's text.
    pub title: String,
    /// The title of the enclosing level-2 heading (for a level-2 entry: the level-1 heading).
    pub section: Option<String>,
    /// The heading level (1 for `#`).
    pub level: u8,
    /// The entry's own words as plain text (paragraphs, lists, tables), without its quotes.
    pub body: String,
    /// Indices into `Catalog::quotes`.
    #[serde(skip)]
    pub quotes: Vec<usize>,
    /// Checks named by `mldebug check <id>` inside the entry, in order of first mention.
    pub checks: Vec<CheckId>,
    /// Every `mldebug ...` command in inline code or code blocks, in order, without repeats.
    pub commands: Vec<String>,
    /// Heading classes (`.training` → `training`).
    pub tags: Vec<String>,
    /// Where the heading is.
    pub location: Location,
}

/// A row of the PLAYBOOK symptoms table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Symptom {
    /// The row's stable id: the `{#id}` that ends its symptom cell (see `symptom_id`).
    pub id: String,
    /// Whether the row wrote its id; otherwise `id` is a slug of the symptom.
    #[serde(skip)]
    pub id_given: bool,
    /// The symptom, as the row says it.
    pub symptom: String,
    /// Most likely first.
    pub hypotheses: Vec<String>,
    /// The `mldebug ...` commands of the checks cell.
    pub commands: Vec<String>,
    /// Check ids named by those commands.
    pub checks: Vec<CheckId>,
    /// Where the row is.
    pub location: Location,
}

/// A registered check: its id, its refs/ section and the command that runs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The check.
    pub id: CheckId,
    /// `check-<id>`, when refs/diagnostics.md has that section.
    pub section: Option<String>,
    /// The section's title, when present.
    pub title: Option<String>,
    /// The command that runs it on a model (`--model <path>`).
    pub command: String,
}

impl Check {
    /// The refs/diagnostics.md section of check `id`: `check-<id>`.
    pub fn section_id(id: CheckId) -> String {
        id.entry().to_string()
    }

    /// The command that runs check `id`, with a placeholder model.
    pub fn command_for(id: CheckId) -> String {
        id.command("<path>")
    }
}

/// SKILL.md's front matter (agent-skill spec fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontMatter {
    /// The skill's name.
    pub name: String,
    /// What the skill does and when to use it.
    pub description: String,
    /// Where the front matter is.
    pub location: Location,
}

/// A footnote definition: `[^label]: Author, "Title", <url>`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Footnote {
    /// The footnote's label (`[^label]`).
    pub label: String,
    /// Its text.
    pub text: String,
    /// Where it is defined.
    pub location: Location,
}

/// A `mldebug check <id>` found anywhere in the Markdown (verified against the registry).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckMention {
    /// The check id as written.
    pub id: String,
    /// Where it is written.
    pub location: Location,
}

/// One phrasing of a symptom (`refs/*.tsv`, see `phrasings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phrasing {
    /// The symptom row's id.
    pub id: String,
    /// Where the phrasing came from (a set's short name).
    pub set: String,
    /// The words, as people wrote them.
    pub text: String,
    /// Where it is written.
    pub location: Location,
}

/// Something wrong with the catalog, at a place.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    /// Where.
    pub location: Location,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Everything the catalog holds.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Sections with an `{#id}`, in file order.
    pub entries: Vec<Entry>,
    /// Every block quote, in file order.
    pub quotes: Vec<Quote>,
    /// The evidence files' sources.
    pub sources: Vec<Source>,
    /// Rows of the PLAYBOOK's `{#symptoms}` table.
    pub symptoms: Vec<Symptom>,
    /// Rows of the PLAYBOOK's `{#log-symptoms}` table: what `mldebug doctor` finds in a run's
    /// logs, by the detector's symptom id. Not triage rows.
    pub log_symptoms: Vec<Symptom>,
    /// The registered checks.
    pub checks: Vec<Check>,
    /// Footnote definitions.
    pub footnotes: Vec<Footnote>,
    /// Every `mldebug check <id>` written anywhere.
    pub check_mentions: Vec<CheckMention>,
    /// Every footnote reference (in quotes and in prose): label and place.
    pub footnote_refs: Vec<(String, Location)>,
    /// The destination of every link and image in the Markdown, as written, and its place.
    pub links: Vec<(String, Location)>,
    /// How people describe the symptom rows (`refs/*.tsv`), for triage.
    pub phrasings: Vec<Phrasing>,
    /// SKILL.md's front matter, once parsed.
    pub front_matter: Option<FrontMatter>,
    /// Problems found while parsing (malformed Markdown or YAML); `verify` adds the rest.
    pub problems: Vec<Problem>,
    /// The catalog files as read: (relative path, text).
    pub files: Vec<(String, String)>,
    /// Excerpt id → the entries quoting it, once built by [`Catalog::index_quotes`].
    pub quoted_by: Option<HashMap<String, Vec<String>>>,
}

impl Catalog {
    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The source with this id.
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// The check with this id (`grad-flow`).
    pub fn check(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id.as_str() == id)
    }

    /// The source and excerpt with this excerpt id.
    pub fn excerpt(&self, id: &str) -> Option<(&Source, &Excerpt)> {
        self.sources
            .iter()
            .find_map(|s| s.excerpts.iter().find(|x| x.id == id).map(|x| (s, x)))
    }

    /// Entries that quote the excerpt `excerpt_id` (in the order of their quotes).
    pub fn entries_quoting(&self, excerpt_id: &str) -> Vec<&str> {
        match &self.quoted_by {
            Some(index) => index
                .get(excerpt_id)
                .map(|ids| ids.iter().map(String::as_str).collect())
                .unwrap_or_default(),
            None => {
                let mut ids: Vec<&str> = self
                    .quotes
                    .iter()
                    .filter(|q| q.excerpt.as_deref() == Some(excerpt_id))
                    .filter_map(|q| q.entry.as_deref())
                    .collect();
                ids.dedup();
                ids
            }
        }
    }

    /// Index the entries quoting each excerpt, so [`Catalog::entries_quoting`] is a lookup.
    pub fn index_quotes(&mut self) {
        let mut index: HashMap<String, Vec<String>> = HashMap::new();
        for q in &self.quotes {
            if let (Some(x), Some(e)) = (&q.excerpt, &q.entry) {
                let ids = index.entry(x.clone()).or_default();
                if ids.last() != Some(e) {
                    ids.push(e.clone());
                }
            }
        }
        self.quoted_by = Some(index);
    }

    /// Entries that link to check `id`.
    pub fn entries_linking(&self, id: CheckId) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|e| e.checks.contains(&id))
            .map(|e| e.id.as_str())
            .collect()
    }
}
