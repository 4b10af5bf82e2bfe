//! `mldebug show <id>`: one entry, source, check or quote, with its quotes and the commands it
//! links to. Entries are looked up first, then sources, checks and quote (excerpt) ids.

use crate::catalog::lookup::{self, QuoteHit};
use crate::catalog::{self, Catalog, Entry};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::show::{self as render_show, Shown};
use crate::render::{json, paint::Paint, text::warn_problems};
use crate::{Error, Exit, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An entry id (`overfit-one-batch`), a source id, a check id (`overfit`) or a quote id.
    pub id: String,
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
        emit(&render_show::render(&shown, paint), paint.color)?;
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
