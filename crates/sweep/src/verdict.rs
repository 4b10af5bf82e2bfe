//! The verdict in plain words, from the numbers of one comparison.
//!
//! Rules (α two-sided; "favours A" means the sign of Δ = A − B matches the metric's direction):
//!
//! 1. REFUSE when an arm has fewer than 2 usable runs: one run proves nothing; or when a value
//!    is beyond ±[`crate::compare::MAX_MAGNITUDE`], where f64 sums of squares overflow.
//! 2. NO MEANINGFUL DIFFERENCE only with `--equivalence-margin M`, when the 90% CI of Δ lies inside
//!    [−M, +M] (two one-sided tests at 0.05). Checked before 3: a margin says that smaller effects
//!    do not matter, even when they are statistically clear. Without a margin the tool never
//!    claims "no difference".
//! 3. A BETTER when the 95% CI of Δ excludes 0 in A's favour, the primary p < α, the exact
//!    robustness p < α, and the integrity checks pass.
//! 4. A LIKELY BETTER (underpowered) when Δ favours A and either the primary p < α but the exact
//!    test cannot reach α at this n, gives p ≥ α, or an integrity check failed; or p <
//!    [`SUGGESTIVE_P`] and P(A better) ≥ [`SUGGESTIVE_PROB`].
//! 5. B BETTER / B LIKELY BETTER: the mirror of 3 and 4.
//! 6. INCONCLUSIVE otherwise, saying how large an effect the data cannot rule out and how many
//!    seeds the observed difference would need.

use crate::numbers::{interval, num, p_eq, signed};

/// The p-value below which a lopsided win rate makes a "likely" verdict (§9.3 rule 3).
pub const SUGGESTIVE_P: f64 = 0.20;
/// The probability of superiority that counts as lopsided (the meaningfulness threshold
/// γ = 0.75 proposed for P(A > B) by Bouthillier et al. 2021).
pub const SUGGESTIVE_PROB: f64 = 0.75;

/// The verdict's kind; `--gate` exits 0 only on [`VerdictKind::ABetter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    ABetter,
    ALikelyBetter,
    Inconclusive,
    NoMeaningfulDifference,
    BLikelyBetter,
    BBetter,
    Refused,
}

impl VerdictKind {
    pub fn headline(self) -> &'static str {
        match self {
            VerdictKind::ABetter => "A BETTER",
            VerdictKind::ALikelyBetter => "A LIKELY BETTER (underpowered)",
            VerdictKind::Inconclusive => "INCONCLUSIVE",
            VerdictKind::NoMeaningfulDifference => "NO MEANINGFUL DIFFERENCE",
            VerdictKind::BLikelyBetter => "B LIKELY BETTER (underpowered)",
            VerdictKind::BBetter => "B BETTER",
            VerdictKind::Refused => "REFUSED",
        }
    }
}

/// A verdict: its kind and the sentences that justify it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    pub headline: &'static str,
    /// Plain-words explanation, with the numbers it rests on.
    pub reason: String,
}

impl Verdict {
    fn new(kind: VerdictKind, reason: String) -> Verdict {
        Verdict {
            kind,
            headline: kind.headline(),
            reason,
        }
    }

    /// Rule 1: an arm with fewer than two usable runs.
    pub fn refuse(arm: &str, name: &str, n: usize, failed: usize) -> Verdict {
        let failed = if failed > 0 {
            format!(" ({failed} failed)")
        } else {
            String::new()
        };
        Verdict::new(
            VerdictKind::Refused,
            format!(
                "arm {arm} ({name}) has {n} usable run{}{failed}; one run proves nothing. Run at \
                 least 2 seeds per arm (5 or more to detect anything but a large effect).",
                if n == 1 { "" } else { "s" }
            ),
        )
    }
}

impl Verdict {
    /// Rule 1 too: a value too large for the statistics to be computed in f64.
    pub fn refuse_magnitude(run: &str, value: f64, bound: f64) -> Verdict {
        Verdict::new(
            VerdictKind::Refused,
            format!(
                "run {run} has the value {value:e}, beyond ±{bound:e}: the variances behind every \
                 test would overflow. Rescale the metric (or check that it is the metric you meant)."
            ),
        )
    }
}

/// Two one-sided tests for equivalence within ±margin.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Tost {
    pub margin: f64,
    /// The 90% CI of Δ (the TOST interval at α = 0.05).
    pub ci90: (f64, f64),
    pub equivalent: bool,
}

/// Everything the rules look at.
#[derive(Debug, Clone)]
pub struct Evidence<'a> {
    pub higher_is_better: bool,
    pub alpha: f64,
    pub paired: bool,
    /// Pairs when paired, else the smaller arm.
    pub n: usize,
    pub delta: f64,
    pub ci: (f64, f64),
    pub primary: &'a str,
    pub primary_p: f64,
    pub robust: &'a str,
    pub robust_p: f64,
    pub robust_min: f64,
    /// Point estimate of P(a seed of A is better than B's).
    pub prob_a_better: f64,
    /// Seeds that favour A / B (paired) — for the words only.
    pub wins: Option<(usize, usize)>,
    pub mde: f64,
    pub seeds_for_observed: Option<usize>,
    pub tost: Option<Tost>,
    pub integrity: &'a [String],
    /// The unpaired Welch p, shown when pairing made the difference.
    pub ignoring_pairing_p: Option<f64>,
    /// "Holm-adjusted " when the p-values are adjusted across tasks.
    pub adjusted: &'a str,
}

/// The smallest number of pairs (paired) or runs per arm (unpaired) at which the exact test can
/// reach `alpha`, and the minimum p there.
pub fn attainable_at(paired: bool, alpha: f64) -> (usize, f64) {
    let mut n = 2;
    loop {
        let min = if paired {
            2.0 / 2f64.powi(n as i32)
        } else {
            2.0 / crate::stats::permutation::choose(2 * n, n)
        };
        if min < alpha {
            return (n, min);
        }
        n += 1;
    }
}

/// Apply rules 2–6.
pub fn decide(e: &Evidence) -> Verdict {
    let sign = if e.higher_is_better { 1.0 } else { -1.0 };
    let better = e.delta * sign; // > 0 favours A
    let (lo, hi) = (e.ci.0 * sign, e.ci.1 * sign); // oriented: > 0 favours A
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let d = format!("Δ = {} {}", signed(e.delta), interval(e.ci.0, e.ci.1));
    let unit = if e.paired {
        "paired seeds"
    } else {
        "runs per arm"
    };
    let unit_one = if e.paired {
        "paired seed"
    } else {
        "run per arm"
    };

    if let Some(t) = e.tost.filter(|t| t.equivalent) {
        return Verdict::new(
            VerdictKind::NoMeaningfulDifference,
            format!(
                "the 90% interval of Δ {} lies inside ±{} (two one-sided tests at 0.05), so any \
                 difference is smaller than the margin you set. {d}.",
                interval(t.ci90.0, t.ci90.1),
                num(t.margin)
            ),
        );
    }

    for s in [1.0, -1.0] {
        let favoured = better * s > 0.0;
        if !favoured {
            continue;
        }
        let (win, lose) = if s > 0.0 { ("A", "B") } else { ("B", "A") };
        let excludes = if s > 0.0 { lo > 0.0 } else { hi < 0.0 };
        let prob = if s > 0.0 {
            e.prob_a_better
        } else {
            1.0 - e.prob_a_better
        };
        let primary_ok = e.primary_p < e.alpha;
        let robust_ok = e.robust_p < e.alpha;
        let integrity_ok = e.integrity.is_empty();
        if excludes && primary_ok && robust_ok && integrity_ok {
            let kind = if s > 0.0 {
                VerdictKind::ABetter
            } else {
                VerdictKind::BBetter
            };
            return Verdict::new(
                kind,
                format!(
                    "{win} beats {lose}: {d}; {}{} {}, {}{} {}.",
                    e.adjusted,
                    e.primary,
                    p_eq(e.primary_p),
                    e.adjusted,
                    e.robust,
                    p_eq(e.robust_p)
                ),
            );
        }
        let unreachable = e.robust_min >= e.alpha;
        let strong = primary_ok && (unreachable || !robust_ok || !integrity_ok);
        let suggestive = e.primary_p < SUGGESTIVE_P && prob >= SUGGESTIVE_PROB;
        if !(strong || suggestive) {
            continue;
        }
        let kind = if s > 0.0 {
            VerdictKind::ALikelyBetter
        } else {
            VerdictKind::BLikelyBetter
        };
        let wins = match e.wins {
            Some((a, b)) => {
                let (w, l) = if s > 0.0 { (a, b) } else { (b, a) };
                format!(" and {w} of {} seeds favour {win}", w + l)
            }
            None => format!(" and P({win} better) = {}", num(prob)),
        };
        let mut reason = if strong {
            format!(
                "the {}{} is significant ({}){wins}, but ",
                e.adjusted,
                e.primary,
                p_eq(e.primary_p)
            )
        } else {
            format!(
                "{d} leans to {win}: {}{} {}{wins}; suggestive, not established, and ",
                e.adjusted,
                e.primary,
                p_eq(e.primary_p)
            )
        };
        if unreachable {
            let (need, min) = attainable_at(e.paired, e.alpha);
            reason.push_str(&format!(
                "with {} {} no exact test can reach p<{} two-sided. {} more {} (n={need} → min \
                 p={}) would make {} BETTER reachable.",
                e.n,
                unit,
                num(e.alpha),
                need.saturating_sub(e.n),
                if need.saturating_sub(e.n) == 1 {
                    unit_one
                } else {
                    unit
                },
                crate::numbers::pval(min),
                win
            ));
        } else if !robust_ok {
            reason.push_str(&format!(
                "the {}{} gives {}.",
                e.adjusted,
                e.robust,
                p_eq(e.robust_p)
            ));
        } else if !integrity_ok {
            reason.push_str(&format!(
                "an integrity check failed: {}.",
                e.integrity.join("; ")
            ));
        } else {
            reason.push_str("the test does not reach the level.");
        }
        if let Some(n) = e.seeds_for_observed {
            reason.push_str(&format!(" Seeds for 80% power at this Δ: {n} {unit}."));
        }
        if let Some(pw) = e.ignoring_pairing_p.filter(|p| *p >= e.alpha && primary_ok) {
            reason.push_str(&format!(
                " Note: unpaired Welch gives {} — pairing is doing the work here.",
                p_eq(pw)
            ));
        }
        return Verdict::new(kind, reason);
    }

    // Inconclusive.
    let far = if better >= 0.0 { hi } else { -lo };
    let far_arm = if better >= 0.0 { "A" } else { "B" };
    let need = match e.seeds_for_observed {
        Some(n) => format!(
            "detecting Δ = {} with 80% power needs about {n} {unit}",
            signed(e.delta)
        ),
        None => "the observed Δ is zero, so no number of seeds would detect it".to_string(),
    };
    let reason = if far > e.mde {
        format!(
            "{d} includes 0 ({}{} {}). The data cannot rule out an effect as large as {} in \
             {far_arm}'s favour; {need}.",
            e.adjusted,
            e.primary,
            p_eq(e.primary_p),
            num(far)
        )
    } else {
        format!(
            "{d} includes 0 ({}{} {}) and stays within the minimum detectable effect {}; \
             without --equivalence-margin this is not a claim of no difference. {need}.",
            e.adjusted,
            e.primary,
            p_eq(e.primary_p),
            num(e.mde)
        )
    };
    Verdict::new(VerdictKind::Inconclusive, reason)
}
