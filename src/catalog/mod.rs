//! The catalog: SKILL.md, PLAYBOOK.md, refs/*.md and evidence/*.yaml parsed into typed data
//! ([`Catalog`]) that the knowledge commands answer from.
//!
//! The files are embedded in the binary at build time (see `build.rs`), and parsed once, on first
//! use ([`embedded`]); `--catalog DIR` reads an edited copy instead ([`from_dir`]). Parsing never
//! fails on a malformed file: what is wrong becomes a [`Problem`], and [`verify`] adds the
//! cross-file rules (quotes against evidence, check ids against the registry, the skill spec).
//!
//! Not here: printing (see `commands/` and `render/`).

pub mod evidence;
pub mod front_matter;
pub mod lines;
pub mod lookup;
pub mod markdown;
pub mod model;
pub mod quote_match;
pub mod records;
pub mod search;
pub mod symptom_id;
pub mod verify;

pub use model::{
    Catalog, Check, Entry, Excerpt, Footnote, Location, Problem, Quote, QuoteStatus, Source,
    Symptom,
};

use crate::cli::Global;
use crate::{Error, Result};
use mldebug_diagnostics::CheckId;
use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

mod embedded_files {
    include!(concat!(env!("OUT_DIR"), "/embedded_catalog.rs"));
}

/// The skill's main file, the playbook, and the check sections' home.
pub const SKILL_FILE: &str = "SKILL.md";
pub const PLAYBOOK_FILE: &str = "PLAYBOOK.md";
pub const DIAGNOSTICS_FILE: &str = "refs/diagnostics.md";

/// The catalog files compiled into this binary: (path relative to the repository root, text).
pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
    embedded_files::FILES
}

/// The embedded catalog, parsed on first use.
pub fn embedded() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        parse_files(
            embedded_files()
                .iter()
                .map(|(p, t)| (p.to_string(), t.to_string()))
                .collect(),
        )
    })
}

/// The catalog a command answers from: `--catalog DIR` when given, else the embedded one.
pub fn open(g: &Global) -> Result<Cow<'static, Catalog>> {
    match &g.catalog {
        Some(dir) => Ok(Cow::Owned(from_dir(dir)?)),
        None => Ok(Cow::Borrowed(embedded())),
    }
}

/// Read and parse the catalog files under `dir` (the same layout as the repository root).
pub fn from_dir(dir: &Path) -> Result<Catalog> {
    if !dir.is_dir() {
        return Err(Error::input(
            dir,
            "--catalog",
            "not a directory (expected a folder holding SKILL.md, PLAYBOOK.md, refs/ and evidence/)",
        ));
    }
    let mut files = Vec::new();
    for name in [SKILL_FILE, PLAYBOOK_FILE] {
        let path = dir.join(name);
        if path.is_file() {
            files.push((name.to_string(), read(&path)?));
        }
    }
    for (sub, ext) in [("refs", "md"), ("evidence", "yaml")] {
        let Ok(read_dir) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        let mut names: Vec<String> = read_dir
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        for n in names {
            let rel = format!("{sub}/{n}");
            files.push((rel.clone(), read(&dir.join(&rel))?));
        }
    }
    let mut catalog = parse_files(files);
    // An installed skill lives in `.../skills/<name>/`: the folder must carry the skill's name.
    if let (Some(fm), Ok(abs)) = (&catalog.front_matter, dir.canonicalize()) {
        let name_of = |p: Option<&Path>| {
            p.and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        };
        let folder = name_of(Some(&abs)).unwrap_or_default();
        if name_of(abs.parent()).as_deref() == Some("skills") && folder != fm.name {
            catalog.problems.push(Problem {
                location: fm.location.clone(),
                message: format!(
                    "front matter `name: {}` must equal the skill's folder name `{folder}`",
                    fm.name
                ),
            });
        }
    }
    Ok(catalog)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::input(path, "reading", e))
}

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
            c.problems.extend(p.problems);
            symptoms_heading |= p.has_symptoms_heading;
            c.footnote_refs.extend(p.footnote_refs);
            if path == SKILL_FILE {
                let (fm, problems) = front_matter::check(path, text);
                c.front_matter = fm;
                c.problems.extend(problems);
            }
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
    link_quotes(&mut c);
    c.files = files;
    c
}

/// Resolve each quote to the excerpt of its source whose text it matches.
fn link_quotes(c: &mut Catalog) {
    for q in &mut c.quotes {
        let Some(source) = c.sources.iter().find(|s| s.id == q.source) else {
            continue;
        };
        q.excerpt = source
            .excerpts
            .iter()
            .find(|x| quote_match::matches(&q.text, x) || quote_match::matches(&q.literal, x))
            .map(|x| x.id.clone());
    }
}
