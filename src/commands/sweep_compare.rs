//! `mldebug sweep-compare`: does A really beat B, over seeds?
//!
//! Reads run files (any format the readers know), reduces each run to one number, compares the
//! two arms with paired or unpaired statistics, and prints a verdict in plain words. With `--gate`
//! the exit status is 0 only when A is better (1 otherwise), so CI can block "improvements" that
//! are not evidenced; without it the exit status is 0 whenever the comparison ran.

use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{style::Style, sweep_markdown, sweep_plot, sweep_table};
use crate::sweep::compare::{self, Options, DEFAULT_ALPHA, DEFAULT_BOOTSTRAP_REPS};
use crate::sweep::pairing::PairBy;
use crate::sweep::readers;
use crate::sweep::reduce::Reduction;
use crate::sweep::verdict::VerdictKind;
use crate::{Error, Exit, Result};
use clap::ValueEnum;
use std::path::PathBuf;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run files, directories or globs (our JSON/JSONL, W&B, MLflow, TensorBoard, HF, Lightning).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The metric to compare (default: the only metric every run logs).
    #[arg(long)]
    pub metric: Option<String>,
    /// Larger values are better (default: inferred from the metric's name).
    #[arg(long, conflicts_with = "lower_is_better")]
    pub higher_is_better: bool,
    /// Smaller values are better (inferred for loss, error, ppl, perplexity, wer …).
    #[arg(long)]
    pub lower_is_better: bool,
    /// What splits the arms: `group`, or a (dotted) config key.
    #[arg(long, value_name = "KEY")]
    pub group_by: Option<String>,
    /// The arm to test (its group or config value).
    #[arg(long = "a", value_name = "NAME")]
    pub arm_a: Option<String>,
    /// The arm to compare against (the baseline).
    #[arg(long = "b", value_name = "NAME")]
    pub arm_b: Option<String>,
    /// Pair runs on this key (default: the seed, when both arms have the same seeds).
    #[arg(long, value_name = "KEY", conflicts_with = "no_pair")]
    pub pair_by: Option<String>,
    /// Analyse as unpaired even when seeds match.
    #[arg(long)]
    pub no_pair: bool,
    /// How each run becomes one number: last, best, mean-last:K, at-step:N.
    #[arg(long, default_value = "last", value_parser = parse_reduction)]
    pub reduce: Reduction,
    /// Significance level (two-sided).
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    pub alpha: f64,
    /// An effect size you care about: report the seeds needed to detect it.
    #[arg(long, value_name = "VALUE")]
    pub mde: Option<f64>,
    /// Differences smaller than this do not matter: allows "no meaningful difference" (TOST).
    #[arg(long, value_name = "M")]
    pub equivalence_margin: Option<f64>,
    /// Bootstrap resamples for the multi-task aggregates (100 to 1,000,000; each costs a
    /// resample of every task, so the top of the range already takes seconds).
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_REPS as u64,
          value_parser = clap::value_parser!(u64).range(MIN_BOOTSTRAP_REPS..=MAX_BOOTSTRAP_REPS))]
    pub bootstrap_reps: u64,
    /// Seed of every resampling, reported in the output (as `rng_seed`).
    #[arg(long = "seed", alias = "rng-seed", default_value_t = 0)]
    pub rng_seed: u64,
    /// Output format (`--json` is the same as `--format json`).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the comparison as SVG: to FILE.svg, or into a folder as sweep-compare.svg.
    #[arg(long, value_name = "FILE.svg|DIR")]
    pub plot: Option<PathBuf>,
    /// Exit 1 unless A is better (for CI).
    #[arg(long)]
    pub gate: bool,
}

/// The fewest bootstrap resamples accepted: fewer make the percentile intervals meaningless.
pub const MIN_BOOTSTRAP_REPS: u64 = 100;
/// The most accepted: each resample redraws every task, and memory grows with the count.
pub const MAX_BOOTSTRAP_REPS: u64 = 1_000_000;

fn parse_reduction(s: &str) -> std::result::Result<Reduction, String> {
    s.parse()
}

impl Args {
    fn options(&self) -> Result<Options> {
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return Err(Error::usage(format!(
                "--alpha {}: must be between 0 and 0.5",
                self.alpha
            )));
        }
        for (flag, v) in [
            ("--mde", self.mde),
            ("--equivalence-margin", self.equivalence_margin),
        ] {
            if let Some(v) = v {
                if !(v > 0.0 && v.is_finite()) {
                    return Err(Error::usage(format!(
                        "{flag} {v}: must be a positive number"
                    )));
                }
            }
        }
        Ok(Options {
            metric: self.metric.clone(),
            higher_is_better: self.higher_is_better,
            lower_is_better: self.lower_is_better,
            group_by: self.group_by.clone(),
            a: self.arm_a.clone(),
            b: self.arm_b.clone(),
            pair_by: match (&self.pair_by, self.no_pair) {
                (_, true) => PairBy::Off,
                (Some(k), false) => PairBy::Key(k.clone()),
                (None, false) => PairBy::Auto,
            },
            reduce: self.reduce,
            alpha: self.alpha,
            mde: self.mde,
            equivalence_margin: self.equivalence_margin,
            // The parser bounds it to MAX_BOOTSTRAP_REPS, which fits any usize.
            bootstrap_reps: self.bootstrap_reps as usize,
            rng_seed: self.rng_seed,
        })
    }
}

/// Whether to colour the terminal output.
/// Read, compare and render to a string (the testable core of the command).
pub fn report(args: &Args, g: &Context) -> Result<(String, VerdictKind)> {
    let opts = args.options()?;
    let records = readers::read_paths(&args.paths)?;
    let cmp = compare::compare(&records, &opts)?;
    if let Some(path) = &args.plot {
        sweep_plot::write(&cmp, &crate::render::plot_target::PlotTarget::new(path))?;
    }
    let format = if g.json() { Format::Json } else { args.format };
    let text = match format {
        Format::Json => crate::render::json::to_string("sweep-compare", &cmp)?,
        Format::Markdown => sweep_markdown::render(&cmp),
        Format::Table => sweep_table::render(&cmp, Style::from(g.stdout).colour),
    };
    Ok((text, cmp.verdict.kind))
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let (text, kind) = report(&args, g)?;
    match (g.json(), args.format) {
        (true, _) | (_, Format::Json) => emit_json(&text)?,
        (_, Format::Markdown) => emit(&text, false)?,
        (_, Format::Table) => emit(&text, Style::from(g.stdout).colour)?,
    }
    Ok(if args.gate && kind != VerdictKind::ABetter {
        Exit::Failed
    } else {
        Exit::Ok
    })
}
