//! What a run of the checks is asked to do: which checks, on which seeds, for how many steps,
//! where, and for how long. One [`Plan`], whoever asks: `mldebug check`'s flags (a zoo model,
//! a model in the user's crate, a PyTorch model), the request a generated harness reads
//! ([`crate::harness::Request::plan`]) and the request the torch driver reads are all made
//! from it or read into it, and its numbers are bounded here once, by the same
//! [`Bounded`] for a flag as for a request's field.
//!
//! Not for: how the checks measure or judge (they get [`crate::Options`], which read the limits
//! here), nor how a report is shown.

use crate::report::CheckId;
use mldebug_text::bounded::Bounded;
use std::time::Duration;

pub use mldebug_judge::{DEFAULT_STEPS, MAX_STEPS};

/// The longest time limit, in seconds: one day.
pub const MAX_TIMEOUT_S: u64 = 86_400;
/// The default time limit of `mldebug check`, in seconds: generous for a few hundred CPU
/// steps of a mid-sized model, short enough that a hung run is noticed.
pub const DEFAULT_TIMEOUT_S: u64 = 900;
/// The most seeds one run takes (`--seeds`).
pub const MAX_SEEDS: usize = 100;

/// Optimizer steps for the checks that train.
pub const STEPS: Bounded = Bounded::new(1, MAX_STEPS as u64, "a step count");
/// The time limit, seconds.
pub const TIMEOUT_S: Bounded = Bounded::new(1, MAX_TIMEOUT_S, "a number of seconds");

/// What a run of the checks is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The checks to run, in order.
    pub checks: Vec<CheckId>,
    /// The seeds to run every check with, in the order given, each once; never empty, at most
    /// [`MAX_SEEDS`].
    pub seeds: Vec<u64>,
    /// Optimizer steps for the checks that train ([`STEPS`]).
    pub steps: usize,
    /// Where the checks run, by name: `cpu`, `cuda:N` (a harness takes `metal:N` too).
    pub device: String,
    /// How long the checks of one seed may take ([`TIMEOUT_S`], whole seconds).
    pub timeout: Duration,
}

impl Plan {
    /// Refuses numbers outside the limits, naming the field: for a plan read from a request,
    /// whose writer may be another program than this library's CLI.
    pub fn check(&self) -> Result<(), String> {
        STEPS
            .check(u64::try_from(self.steps).unwrap_or(u64::MAX))
            .map_err(|e| format!("steps: {e}"))?;
        TIMEOUT_S
            .check(self.timeout.as_secs())
            .map_err(|e| format!("timeout_s: {e}"))?;
        if self.seeds.is_empty() || self.seeds.len() > MAX_SEEDS {
            return Err(format!(
                "seeds: {} seeds (expected 1 to {MAX_SEEDS})",
                self.seeds.len()
            ));
        }
        Ok(())
    }

    /// The time limit of one process that runs every seed in turn: [`Plan::timeout`] for each.
    pub fn timeout_for_every_seed(&self) -> Duration {
        let seeds = u32::try_from(self.seeds.len().max(1)).unwrap_or(u32::MAX);
        self.timeout.saturating_mul(seeds)
    }
}

/// `--steps`: a whole number in [`STEPS`].
pub fn parse_steps(text: &str) -> Result<usize, String> {
    STEPS.parse(text).map(|n| n as usize)
}

/// `--timeout`: a whole number of seconds in [`TIMEOUT_S`].
pub fn parse_timeout_s(text: &str) -> Result<u64, String> {
    TIMEOUT_S.parse(text)
}

/// `--seeds`: the seeds in the order given, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// `--seeds`: comma-separated seeds or inclusive ranges `A-B`; no seed twice, at most
/// [`MAX_SEEDS`].
pub fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let bad = |why: &str| format!("`{}`: {why}", s.escape_debug());
    let number = |w: &str| {
        w.trim()
            .parse::<u64>()
            .map_err(|_| bad(&format!("`{}` is not a seed", w.trim().escape_debug())))
    };
    let mut seeds = Vec::new();
    for part in s.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(bad(&format!("the range {lo}-{hi} is empty")));
        }
        if hi - lo >= MAX_SEEDS as u64 || seeds.len() + (hi - lo) as usize >= MAX_SEEDS {
            return Err(bad(&format!("more than {MAX_SEEDS} seeds")));
        }
        for seed in lo..=hi {
            if seeds.contains(&seed) {
                return Err(bad(&format!("seed {seed} is given twice")));
            }
            seeds.push(seed);
        }
    }
    Ok(Seeds(seeds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: usize, timeout_s: u64, seeds: usize) -> Plan {
        Plan {
            checks: vec![CheckId::Overfit],
            seeds: (0..seeds as u64).collect(),
            steps,
            device: "cpu".into(),
            timeout: Duration::from_secs(timeout_s),
        }
    }

    #[test]
    fn steps_and_timeout_are_bounded_and_the_error_names_the_range() {
        assert_eq!(parse_steps("200"), Ok(200));
        assert_eq!(parse_steps("100000"), Ok(100_000));
        for bad in [
            "0",
            "-3",
            "+3",
            " 3",
            "100001",
            "18446744073709551615",
            "99999999999999999999",
            "x",
        ] {
            let e = parse_steps(bad).unwrap_err();
            assert!(
                e.contains("expected a step count from 1 to 100000"),
                "{bad}: {e}"
            );
        }
        assert_eq!(parse_timeout_s("3"), Ok(3));
        assert_eq!(parse_timeout_s("86400"), Ok(86_400));
        for bad in ["0", "86401", "-1", "1e3"] {
            let e = parse_timeout_s(bad).unwrap_err();
            assert!(
                e.contains("expected a number of seconds from 1 to 86400"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_plan_out_of_the_limits_is_refused_in_the_words_of_the_flags() {
        assert_eq!(plan(200, 900, 1).check(), Ok(()));
        assert_eq!(plan(100_000, 86_400, MAX_SEEDS).check(), Ok(()));
        let e = plan(usize::MAX, 900, 1).check().unwrap_err();
        assert!(e.starts_with("steps: "), "{e}");
        assert!(
            e.ends_with(&parse_steps("18446744073709551615").unwrap_err()),
            "{e}"
        );
        let e = plan(200, 0, 1).check().unwrap_err();
        assert_eq!(
            e,
            format!("timeout_s: {}", parse_timeout_s("0").unwrap_err())
        );
        assert!(plan(200, 900, 0).check().is_err());
        assert!(plan(200, 900, MAX_SEEDS + 1).check().is_err());
    }

    #[test]
    fn one_process_for_every_seed_gets_the_limit_for_each() {
        assert_eq!(
            plan(200, 60, 3).timeout_for_every_seed(),
            Duration::from_secs(180)
        );
        assert_eq!(
            plan(200, 60, 1).timeout_for_every_seed(),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn seed_lists_keep_their_order_and_refuse_repeats_empty_ranges_and_too_many() {
        assert_eq!(parse_seeds("0-4"), Ok(Seeds(vec![0, 1, 2, 3, 4])));
        assert_eq!(parse_seeds("7"), Ok(Seeds(vec![7])));
        assert_eq!(parse_seeds(" 5, 1 ,9"), Ok(Seeds(vec![5, 1, 9])));
        assert_eq!(parse_seeds("5,0-2,9"), Ok(Seeds(vec![5, 0, 1, 2, 9])));
        assert_eq!(parse_seeds("0-99").map(|s| s.0.len()), Ok(MAX_SEEDS));
        for (bad, why) in [
            ("1,1", "seed 1 is given twice"),
            ("0-3,2", "seed 2 is given twice"),
            ("3-1", "the range 3-1 is empty"),
            ("0-100", "more than 100 seeds"),
            ("0-49,50-100", "more than 100 seeds"),
            ("0-18446744073709551615", "more than 100 seeds"),
            ("", "`` is not a seed"),
            ("1,", "`` is not a seed"),
            ("-1", "`` is not a seed"),
            ("x", "`x` is not a seed"),
        ] {
            let e = parse_seeds(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
