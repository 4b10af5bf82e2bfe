//! Warnings printed under the verdict: things that make a result less trustworthy than its
//! p-value says, each with the numbers that triggered it.

use mldebug_text::number::num;

/// One warning: a stable id (for JSON consumers) and a sentence.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Warning {
    /// A stable id for programs (`integrity`, `few-seeds`, ...).
    pub id: &'static str,
    /// The sentence.
    pub message: String,
}

impl Warning {
    /// A warning `id` saying `message`.
    pub fn new(id: &'static str, message: impl Into<String>) -> Warning {
        Warning {
            id,
            message: message.into(),
        }
    }
}

/// Expected maximum of n independent standard normals, n = 1..=10 (standard order-statistic
/// values): how far "best of n" overstates a typical draw, in SDs.
pub const EXPECTED_MAX_OF_N: [f64; 10] = [
    0.0, 0.5642, 0.8463, 1.0294, 1.1630, 1.2672, 1.3522, 1.4236, 1.4850, 1.5388,
];

/// Skewness beyond which a t-based result deserves a second look (only with enough runs to
/// estimate skewness at all).
pub const SKEW_LIMIT: f64 = 1.0;
/// Fewest values before skewness is worth reporting.
pub const SKEW_MIN_N: usize = 8;
/// Share of the narrower arm's range covered by the other arm that counts as "mostly overlapping".
pub const OVERLAP_LIMIT: f64 = 0.5;

/// The best-of-n warning for `--reduce best`, `points` the typical number of evaluations per run.
pub fn best_of_n(points: usize) -> Warning {
    let inflation = if points <= 10 {
        format!("about {} SD", num(EXPECTED_MAX_OF_N[points.max(1) - 1]))
    } else {
        "more than 1.54 SD".to_string()
    };
    Warning::new(
        "best-of-n",
        format!(
            "--reduce best picks each run's best of its {points} evaluations on the same data it \
             reports: with noisy evaluations that overstates the run by {inflation} of the \
             evaluation noise (1.16 SD at n=5). Prefer last or mean-last:K for claims."
        ),
    )
}

/// Seed lottery: the worse arm's best seed beats the better arm's mean, or the ranges mostly
/// overlap. `x` is the arm the means favour. Values oriented so that larger is better.
pub fn seed_lottery(better: (&str, &[f64]), worse: (&str, &[f64])) -> Option<Warning> {
    let (bn, bx) = better;
    let (wn, wx) = worse;
    if bx.len() < 2 || wx.len() < 2 {
        return None;
    }
    let mean_b = bx.iter().sum::<f64>() / bx.len() as f64;
    let best_w = wx.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (blo, bhi) = min_max(bx);
    let (wlo, whi) = min_max(wx);
    let overlap = (bhi.min(whi) - blo.max(wlo)).max(0.0);
    let narrower = (bhi - blo).min(whi - wlo);
    let share = if narrower > 0.0 {
        overlap / narrower
    } else {
        0.0
    };
    if best_w > mean_b {
        Some(Warning::new(
            "seed-lottery",
            format!(
                "the best seed of {wn} beats the mean of {bn}: the spread between seeds is larger \
                 than the difference between arms, so a single run of either could have \"won\"."
            ),
        ))
    } else if share > OVERLAP_LIMIT {
        Some(Warning::new(
            "seed-lottery",
            format!(
                "the ranges of {bn} and {wn} overlap over {}% of the narrower one: the spread \
                 between seeds is comparable to the difference between arms.",
                (share * 100.0).round()
            ),
        ))
    } else {
        None
    }
}

fn min_max(x: &[f64]) -> (f64, f64) {
    x.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        })
}
