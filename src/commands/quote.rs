//! `mldebug quote <who>`: a practitioner's quotes with source, link and how far each was checked.
//! `who` is matched case-insensitively against author names and source ids (`rahtz`,
//! `karpathy-recipe`), or names one excerpt id.

use crate::catalog::lookup::{self, NoQuotes, QuoteHit};
use crate::catalog::{self};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{json, paint::Paint, quotes, text::warn_problems};
use crate::{Error, Exit, Result};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An author's name or a source id, case-insensitive: rahtz, karpathy, bekman, whitaker.
    pub who: String,
    /// Only quotes on this topic (e.g. nan, seeds, overfit).
    #[arg(long)]
    pub topic: Option<String>,
    /// Print one matching quote, chosen at random.
    #[arg(long)]
    pub random: bool,
    /// Seed for --random, for a repeatable choice.
    #[arg(long, requires = "random")]
    pub seed: Option<u64>,
}

#[derive(Debug, Serialize)]
struct Output<'a> {
    query: &'a str,
    topic: Option<&'a str>,
    quotes: Vec<QuoteHit>,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    warn_problems(&c, g);
    let mut hits = lookup::quotes(&c, &args.who, args.topic.as_deref())
        .map_err(|why| no_quotes(&args, why))?;
    if args.random {
        let seed = args.seed.unwrap_or_else(clock_seed);
        let i = lookup::pick(hits.len(), seed);
        hits = vec![hits.swap_remove(i)];
    }
    let out = Output {
        query: &args.who,
        topic: args.topic.as_deref(),
        quotes: hits,
    };
    if g.json() {
        emit_json(&json::to_string("quote", &out)?)?;
    } else {
        let paint = Paint::new(g.stdout);
        let blocks: Vec<String> = out.quotes.iter().map(|q| quotes::quote(q, paint)).collect();
        emit(&blocks.join("\n"), paint.color)?;
    }
    Ok(Exit::Ok)
}

fn no_quotes(args: &Args, why: NoQuotes) -> Error {
    match why {
        NoQuotes::UnknownWho { suggestions } if suggestions.is_empty() => Error::usage(format!(
            "no author or source matches `{}`; `mldebug list sources` shows who is quoted",
            args.who
        )),
        NoQuotes::UnknownWho { suggestions } => Error::usage(format!(
            "no author or source matches `{}`; did you mean: {}?",
            args.who,
            suggestions.join(", ")
        )),
        NoQuotes::NoTopic { topics } => Error::usage(format!(
            "`{}` has no quotes on topic `{}`; their topics: {}",
            args.who,
            args.topic.as_deref().unwrap_or(""),
            topics.join(", ")
        )),
    }
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}
