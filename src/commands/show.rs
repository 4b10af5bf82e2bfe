//! `mldebug show <id>`: one entry, source, check or quote, with its quotes and the commands it
//! links to. Entries are looked up first, then sources, checks and quote (excerpt) ids.

use crate::catalog::lookup::{self, QuoteHit};
use crate::catalog::{self, Catalog, Entry, Source};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{
    json,
    paint::Paint,
    quotes,
    text::{warn_problems, wrap, WRAP},
};
use crate::{Error, Exit, Result};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An entry id (`overfit-one-batch`), a source id, a check id (`overfit`) or a quote id.
    pub id: String,
}

#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shown {
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

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    warn_problems(&c, g);
    let shown = find(&c, args.id.trim()).ok_or_else(|| {
        let close = lookup::suggest(&args.id, &lookup::all_ids(&c));
        let hint = if close.is_empty() {
            "`mldebug list entries` lists the ids, `mldebug search <words>` finds by words"
                .to_string()
        } else {
            format!("did you mean: {}?", close.join(", "))
        };
        Error::usage(format!(
            "no entry, source, check or quote has the id `{}`; {hint}",
            args.id
        ))
    })?;
    if g.json() {
        emit_json(&json::to_string("show", &shown)?)?;
    } else {
        let paint = Paint::new(g.stdout);
        emit(&human(&shown, paint), paint.color)?;
    }
    Ok(Exit::Ok)
}

fn entry_quotes(c: &Catalog, e: &Entry) -> Vec<QuoteHit> {
    let mut out: Vec<QuoteHit> = Vec::new();
    for &i in &e.quotes {
        let q = &c.quotes[i];
        let hit = q
            .excerpt
            .as_deref()
            .and_then(|x| c.excerpt(x))
            .map(|(s, x)| QuoteHit::new(c, s, x));
        if let Some(h) = hit {
            if !out.iter().any(|o| o.id == h.id) {
                out.push(h);
            }
        }
    }
    out
}

fn find(c: &Catalog, id: &str) -> Option<Shown> {
    if let Some(e) = c.entry(id) {
        return Some(Shown::Entry {
            entry: e.clone(),
            quotes: entry_quotes(c, e),
        });
    }
    if let Some(s) = c.source(id) {
        return Some(Shown::Source {
            source: s.clone(),
            quotes: s.excerpts.iter().map(|x| QuoteHit::new(c, s, x)).collect(),
        });
    }
    if let Some(k) = c.check(id) {
        return Some(Shown::Check {
            check: k.clone(),
            section: k.section.as_deref().and_then(|s| c.entry(s)).cloned(),
            linked_from: c
                .entries_linking(k.id)
                .into_iter()
                .map(String::from)
                .collect(),
        });
    }
    c.excerpt(id).map(|(s, x)| Shown::Quote {
        quote: QuoteHit::new(c, s, x),
    })
}

fn human(shown: &Shown, paint: Paint) -> String {
    let mut out = String::new();
    match shown {
        Shown::Entry {
            entry: e,
            quotes: qs,
        } => {
            out.push_str(&format!("{}  [{}]\n", paint.bold(&e.title), e.id));
            let mut meta = vec![e.location.to_string()];
            if let Some(s) = &e.section {
                meta.insert(0, format!("section: {s}"));
            }
            if !e.tags.is_empty() {
                meta.push(format!("tags: {}", e.tags.join(", ")));
            }
            out.push_str(&paint.dim(&meta.join(" · ")));
            out.push_str("\n\n");
            if !e.body.is_empty() {
                out.push_str(&wrap(&e.body, WRAP, ""));
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
                    out.push_str(&format!("  {cmd}\n"));
                }
            }
        }
        Shown::Source {
            source: s,
            quotes: qs,
        } => {
            out.push_str(&format!("{}  [{}]\n", paint.bold(&s.title), s.id));
            out.push_str(&format!(
                "{}, {}\n{}\n",
                s.author,
                s.date,
                paint.cyan(&s.url)
            ));
            out.push_str(&format!(
                "status: {} (the weakest of its quotes)\n\n",
                paint.status(s.status)
            ));
            let blocks: Vec<String> = qs
                .iter()
                .map(|q| {
                    let mut b = format!("{} {}\n", paint.bold("quote"), q.id);
                    b.push_str(&quotes::quote(q, paint));
                    if !q.note.is_empty() {
                        b.push_str(&wrap(&format!("note: {}", q.note), WRAP, "      "));
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
                paint.bold(if title.is_empty() {
                    k.id.as_str()
                } else {
                    title
                }),
                k.id
            ));
            out.push_str(&format!("run: {}\n", k.command));
            match section {
                Some(e) => {
                    out.push_str(&paint.dim(&format!("section {} · {}", e.id, e.location)));
                    out.push_str("\n\n");
                    out.push_str(&wrap(&e.body, WRAP, ""));
                }
                None => out.push_str("(no refs/diagnostics.md section yet)\n"),
            }
            if !linked_from.is_empty() {
                out.push_str(&format!(
                    "\n{} {}\n",
                    paint.bold("Entries that use it:"),
                    linked_from.join(", ")
                ));
            }
        }
        Shown::Quote { quote } => {
            out.push_str(&format!("{} {}\n", paint.bold("quote"), quote.id));
            out.push_str(&quotes::quote(quote, paint));
            if !quote.note.is_empty() {
                out.push_str(&wrap(&format!("note: {}", quote.note), WRAP, "      "));
            }
        }
    }
    out
}
