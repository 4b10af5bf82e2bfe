//! `mldebug show` for a person: an entry, source, check or quote with its quotes and the
//! commands it links to.

use super::paint::Paint;
use super::quotes;
use super::terminal::{escape, escape_text};
use super::text::{wrap, WRAP};
use crate::catalog::lookup::QuoteHit;
use crate::catalog::{self, Entry, Source};
use serde::Serialize;

/// What `show` found: the `--json` document's payload and what [`render`] draws.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shown {
    Entry {
        entry: Entry,
        quotes: Vec<QuoteHit>,
    },
    Source {
        source: Source,
        quotes: Vec<QuoteHit>,
    },
    Check {
        check: catalog::Check,
        section: Option<Entry>,
        linked_from: Vec<String>,
    },
    Quote {
        quote: QuoteHit,
    },
}

/// The text for a person.
pub fn render(shown: &Shown, paint: Paint) -> String {
    let mut out = String::new();
    match shown {
        Shown::Entry {
            entry: e,
            quotes: qs,
        } => {
            out.push_str(&format!(
                "{}  [{}]\n",
                paint.bold(&escape(&e.title)),
                escape(&e.id)
            ));
            let mut meta = vec![e.location.to_string()];
            if let Some(s) = &e.section {
                meta.insert(0, format!("section: {s}"));
            }
            if !e.tags.is_empty() {
                meta.push(format!("tags: {}", e.tags.join(", ")));
            }
            out.push_str(&paint.dim(&escape(&meta.join(" · "))));
            out.push_str("\n\n");
            if !e.body.is_empty() {
                out.push_str(&wrap(&escape_text(&e.body), WRAP, ""));
                out.push('\n');
            }
            if !qs.is_empty() {
                out.push_str(&format!("{}\n", paint.bold("Quotes")));
                let blocks: Vec<String> = qs
                    .iter()
                    .map(|q| quotes::quote_in(q, paint, Some(&e.id)))
                    .collect();
                out.push_str(&blocks.join("\n"));
                out.push('\n');
            }
            if !e.commands.is_empty() {
                out.push_str(&format!("{}\n", paint.bold("Commands")));
                for cmd in &e.commands {
                    out.push_str(&format!("  {}\n", escape(cmd)));
                }
            }
        }
        Shown::Source {
            source: s,
            quotes: qs,
        } => {
            out.push_str(&format!(
                "{}  [{}]\n",
                paint.bold(&escape(&s.title)),
                escape(&s.id)
            ));
            out.push_str(&format!(
                "{}, {}\n{}\n",
                escape(&s.author),
                escape(&s.date),
                paint.cyan(&escape(&s.url))
            ));
            out.push_str(&format!(
                "status: {} (the weakest of its quotes)\n\n",
                paint.status(s.status)
            ));
            let blocks: Vec<String> = qs
                .iter()
                .map(|q| {
                    let mut b = format!("{} {}\n", paint.bold("quote"), escape(&q.id));
                    b.push_str(&quotes::quote(q, paint));
                    if !q.note.is_empty() {
                        let note = format!("note: {}", escape_text(&q.note));
                        b.push_str(&wrap(&note, WRAP, "      "));
                    }
                    b
                })
                .collect();
            out.push_str(&blocks.join("\n"));
        }
        Shown::Check {
            check: k,
            section,
            linked_from,
        } => {
            let title = section.as_ref().map(|e| e.title.as_str()).unwrap_or("");
            out.push_str(&format!(
                "{}  [check {}]\n",
                paint.bold(&escape(if title.is_empty() {
                    k.id.as_str()
                } else {
                    title
                })),
                escape(k.id.as_str())
            ));
            out.push_str(&format!("run: {}\n", escape(&k.command)));
            match section {
                Some(e) => {
                    let place = format!("section {} · {}", e.id, e.location);
                    out.push_str(&paint.dim(&escape(&place)));
                    out.push_str("\n\n");
                    out.push_str(&wrap(&escape_text(&e.body), WRAP, ""));
                }
                None => out.push_str("(no refs/diagnostics.md section yet)\n"),
            }
            if !linked_from.is_empty() {
                out.push_str(&format!(
                    "\n{} {}\n",
                    paint.bold("Entries that use it:"),
                    escape(&linked_from.join(", "))
                ));
            }
        }
        Shown::Quote { quote } => {
            out.push_str(&format!("{} {}\n", paint.bold("quote"), escape(&quote.id)));
            out.push_str(&quotes::quote(quote, paint));
            if !quote.note.is_empty() {
                let note = format!("note: {}", escape_text(&quote.note));
                out.push_str(&wrap(&note, WRAP, "      "));
            }
        }
    }
    out
}
