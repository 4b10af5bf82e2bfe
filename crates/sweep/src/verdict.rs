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

use mldebug_text::number::{interval, num, p_eq, signed};

/// The p-value below which a lopsided win rate makes a "likely" verdict (refs/sweeps.md, the verdict table).
pub const SUGGESTIVE_P: f64 = 0.20;
/// The probability of superiority that counts as lopsided (the meaningfulness threshold
/// γ = 0.75 proposed for P(A > B) by Bouthillier et al. 2021).
pub const SUGGESTIVE_PROB: f64 = 0.75;

/// The verdict's kind; `--gate` exits 0 only on [`VerdictKind::ABetter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// Rule 3: the interval excludes 0 in A's favour and both tests and the integrity checks agree.
    ABetter,
    /// Rule 4: A leads, but the evidence falls short (underpowered, the tests disagree, or an
    /// integrity check failed).
    ALikelyBetter,
    /// Rule 6: the data cannot tell.
    Inconclusive,
    /// Rule 2: equivalent within `--equivalence-margin`.
    NoMeaningfulDifference,
    /// Rule 5: the mirror of rule 4.
    BLikelyBetter,
    /// Rule 5: the mirror of rule 3.
    BBetter,
    /// Rule 1: no comparison is made (an arm with fewer than 2 usable runs, values too large).
    Refused,
}

impl VerdictKind {
    /// The headline as printed (`A BETTER`).
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
    /// Which verdict.
    pub kind: VerdictKind,
    /// Its headline.
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
    /// Δ counts as no difference within ±margin.
    pub margin: f64,
    /// The 90% CI of Δ (the TOST interval at α = 0.05).
    pub ci90: (f64, f64),
    /// The 90% interval lies within the margin.
    pub equivalent: bool,
}

impl Tost {
    /// Equivalent when the 90% interval lies strictly inside ±margin.
    pub fn within(margin: f64, ci90: (f64, f64)) -> Tost {
        Tost {
            margin,
            ci90,
            equivalent: ci90.0 > -margin && ci90.1 < margin,
        }
    }
}

/// The design's two tests: the primary one (its CI and p decide) and the exact one that must
/// agree before a claim is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Paired t-test on the differences, exact sign-flip test.
    Paired,
    /// Welch t-test, exact permutation test.
    Unpaired,
}

impl Test {
    /// The primary test's name.
    pub fn primary(self) -> &'static str {
        match self {
            Test::Paired => "paired t-test",
            Test::Unpaired => "Welch t-test",
        }
    }

    /// The robust (exact) test's name.
    pub fn robust(self) -> &'static str {
        match self {
            Test::Paired => "exact sign-flip test",
            Test::Unpaired => "exact permutation test",
        }
    }

    /// What n counts, in the plural: pairs, or runs in the smaller arm.
    fn units(self) -> &'static str {
        self.unit(2)
    }

    /// What n counts, singular for 1: pairs, or runs in the smaller arm.
    fn unit(self, n: usize) -> &'static str {
        match (self, n) {
            (Test::Paired, 1) => "paired seed",
            (Test::Paired, _) => "paired seeds",
            (Test::Unpaired, 1) => "run per arm",
            (Test::Unpaired, _) => "runs per arm",
        }
    }
}

/// Everything the rules look at.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// A higher value is better.
    pub higher_is_better: bool,
    /// The significance level.
    pub alpha: f64,
    /// Paired or unpaired.
    pub test: Test,
    /// Pairs when paired, else the smaller arm.
    pub n: usize,
    /// Δ = A − B.
    pub delta: f64,
    /// The primary test's confidence interval of Δ.
    pub ci: (f64, f64),
    /// The primary test's p-value.
    pub primary_p: f64,
    /// The exact test's p-value.
    pub robust_p: f64,
    /// The smallest p-value the exact test can reach at this n.
    pub robust_min: f64,
    /// Point estimate of P(a seed of A is better than B's).
    pub prob_a_better: f64,
    /// Seeds that favour A / B (paired) — for the words only.
    pub wins: Option<(usize, usize)>,
    /// Smallest |Δ| detected with 80% power at this n.
    pub mde: f64,
    /// Seeds needed to detect the observed Δ.
    pub seeds_for_observed: Option<usize>,
    /// The equivalence test, when a margin was given.
    pub tost: Option<Tost>,
    /// Failed integrity checks, in words (a pair of bit-identical runs, ...).
    pub integrity: Vec<String>,
    /// The unpaired Welch p, shown when pairing made the difference.
    pub ignoring_pairing_p: Option<f64>,
    /// The p-values are Holm-adjusted across tasks.
    pub holm_adjusted: bool,
}

impl Evidence {
    /// "Holm-adjusted " before a test's name when the p-values are, else nothing.
    fn adjusted(&self) -> &'static str {
        if self.holm_adjusted {
            "Holm-adjusted "
        } else {
            ""
        }
    }
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

/// Which arm a rule speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Arm A.
    A,
    /// Arm B.
    B,
}

impl Side {
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Side::A => ("A", "B"),
            Side::B => ("B", "A"),
        }
    }
}

/// Why a difference that leans one way is only "likely".
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Short {
    /// No exact test can reach α at this n; `need` units would, with minimum p `min`.
    Unreachable {
        /// Units that would reach α.
        need: usize,
        /// The smallest p-value the exact test can reach now.
        min: f64,
    },
    /// The exact test does not agree.
    Robust,
    /// An integrity check failed.
    Integrity,
    /// Suggestive only: the primary test does not reach α.
    Level,
}

/// The rule that fired (rules 2–6), with what its words need; no wording here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Rule 2: the 90% interval lies within the margin.
    Equivalent(Tost),
    /// Rules 3 and 5.
    Better(Side),
    /// Rules 4 and 5: `strong` when the primary test is significant, else suggestive.
    Likely {
        /// The arm it leans to.
        side: Side,
        /// The primary test is significant.
        strong: bool,
        /// Why it is only likely.
        short: Short,
    },
    /// Rule 6: `far` is the largest effect the interval allows, in `side`'s favour.
    Inconclusive {
        /// The arm the interval leans to.
        side: Side,
        /// The largest effect it allows that way.
        far: f64,
    },
}

impl Decision {
    /// The verdict kind this rule gives.
    pub fn kind(self) -> VerdictKind {
        match self {
            Decision::Equivalent(_) => VerdictKind::NoMeaningfulDifference,
            Decision::Better(Side::A) => VerdictKind::ABetter,
            Decision::Better(Side::B) => VerdictKind::BBetter,
            Decision::Likely { side: Side::A, .. } => VerdictKind::ALikelyBetter,
            Decision::Likely { side: Side::B, .. } => VerdictKind::BLikelyBetter,
            Decision::Inconclusive { .. } => VerdictKind::Inconclusive,
        }
    }
}

/// Apply rules 2–6: the verdict and its words.
pub fn decide(e: &Evidence) -> Verdict {
    let decision = rule(e);
    Verdict::new(decision.kind(), words(decision, e))
}

/// Rules 2–6 on the numbers alone.
pub fn rule(e: &Evidence) -> Decision {
    if let Some(t) = e.tost.filter(|t| t.equivalent) {
        return Decision::Equivalent(t);
    }
    let sign = if e.higher_is_better { 1.0 } else { -1.0 };
    let better = e.delta * sign; // > 0 favours A
    let (lo, hi) = (e.ci.0 * sign, e.ci.1 * sign); // oriented: > 0 favours A
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let primary_ok = e.primary_p < e.alpha;
    let robust_ok = e.robust_p < e.alpha;
    let integrity_ok = e.integrity.is_empty();
    for side in [Side::A, Side::B] {
        let (favoured, excludes, prob) = match side {
            Side::A => (better > 0.0, lo > 0.0, e.prob_a_better),
            Side::B => (better < 0.0, hi < 0.0, 1.0 - e.prob_a_better),
        };
        if !favoured {
            continue;
        }
        if excludes && primary_ok && robust_ok && integrity_ok {
            return Decision::Better(side);
        }
        let unreachable = e.robust_min >= e.alpha;
        let strong = primary_ok && (unreachable || !robust_ok || !integrity_ok);
        let suggestive = e.primary_p < SUGGESTIVE_P && prob >= SUGGESTIVE_PROB;
        if !(strong || suggestive) {
            continue;
        }
        let short = if unreachable {
            let (need, min) = attainable_at(e.test == Test::Paired, e.alpha);
            Short::Unreachable { need, min }
        } else if !robust_ok {
            Short::Robust
        } else if !integrity_ok {
            Short::Integrity
        } else {
            Short::Level
        };
        return Decision::Likely {
            side,
            strong,
            short,
        };
    }
    if better >= 0.0 {
        Decision::Inconclusive {
            side: Side::A,
            far: hi,
        }
    } else {
        Decision::Inconclusive {
            side: Side::B,
            far: -lo,
        }
    }
}

/// The words of a decision, with the numbers it rests on.
pub fn words(decision: Decision, e: &Evidence) -> String {
    let d = format!("Δ = {} {}", signed(e.delta), interval(e.ci.0, e.ci.1));
    let adj = e.adjusted();
    let primary = format!("{adj}{} {}", e.test.primary(), p_eq(e.primary_p));
    match decision {
        Decision::Equivalent(t) => format!(
            "the 90% interval of Δ {} lies inside ±{} (two one-sided tests at 0.05), so any \
             difference is smaller than the margin you set. {d}.",
            interval(t.ci90.0, t.ci90.1),
            num(t.margin)
        ),
        Decision::Better(side) => {
            let (win, lose) = side.names();
            format!(
                "{win} beats {lose}: {d}; {primary}, {adj}{} {}.",
                e.test.robust(),
                p_eq(e.robust_p)
            )
        }
        Decision::Likely {
            side,
            strong,
            short,
        } => likely_words(side, strong, short, e, &d, &primary),
        Decision::Inconclusive { side, far } => {
            let (far_arm, _) = side.names();
            let need = match e.seeds_for_observed {
                Some(n) => format!(
                    "detecting Δ = {} with 80% power needs about {n} {}",
                    signed(e.delta),
                    e.test.units()
                ),
                None => "the observed Δ is zero, so no number of seeds would detect it".to_string(),
            };
            if far > e.mde {
                format!(
                    "{d} includes 0 ({primary}). The data cannot rule out an effect as large as {} \
                     in {far_arm}'s favour; {need}.",
                    num(far)
                )
            } else {
                format!(
                    "{d} includes 0 ({primary}) and stays within the minimum detectable effect {}; \
                     without --equivalence-margin this is not a claim of no difference. {need}.",
                    num(e.mde)
                )
            }
        }
    }
}

fn likely_words(
    side: Side,
    strong: bool,
    short: Short,
    e: &Evidence,
    d: &str,
    primary: &str,
) -> String {
    let (win, _) = side.names();
    let wins = match (e.wins, side) {
        (Some((a, b)), Side::A) => format!(" and {a} of {} seeds favour {win}", a + b),
        (Some((a, b)), Side::B) => format!(" and {b} of {} seeds favour {win}", a + b),
        (None, Side::A) => format!(" and P({win} better) = {}", num(e.prob_a_better)),
        (None, Side::B) => format!(" and P({win} better) = {}", num(1.0 - e.prob_a_better)),
    };
    let mut reason = if strong {
        format!(
            "the {}{} is significant ({}){wins}, but ",
            e.adjusted(),
            e.test.primary(),
            p_eq(e.primary_p)
        )
    } else {
        format!("{d} leans to {win}: {primary}{wins}; suggestive, not established, and ")
    };
    let adj = e.adjusted();
    match short {
        Short::Unreachable { need, min } => {
            let more = need.saturating_sub(e.n);
            reason.push_str(&format!(
                "with {} {} no exact test can reach p<{} two-sided. {more} more {} (n={need} → \
                 min p={}) would make {win} BETTER reachable.",
                e.n,
                e.test.units(),
                num(e.alpha),
                e.test.unit(more),
                mldebug_text::number::pval(min),
            ));
        }
        Short::Robust => {
            reason.push_str(&format!(
                "the {adj}{} gives {}.",
                e.test.robust(),
                p_eq(e.robust_p)
            ));
        }
        Short::Integrity => {
            reason.push_str(&format!(
                "an integrity check failed: {}.",
                e.integrity.join("; ")
            ));
        }
        Short::Level => reason.push_str("the test does not reach the level."),
    }
    if let Some(n) = e.seeds_for_observed {
        reason.push_str(&format!(
            " Seeds for 80% power at this Δ: {n} {}.",
            e.test.units()
        ));
    }
    let primary_ok = e.primary_p < e.alpha;
    if let Some(pw) = e.ignoring_pairing_p.filter(|p| *p >= e.alpha && primary_ok) {
        reason.push_str(&format!(
            " Note: unpaired Welch gives {} — pairing is doing the work here.",
            p_eq(pw)
        ));
    }
    reason
}
