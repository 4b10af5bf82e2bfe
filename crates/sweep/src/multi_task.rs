//! Several tasks at once: Holm-adjusted p-values, each task judged again on them, and the
//! overall verdict from the per-task ones.

use crate::comparison::TaskResult;
use crate::stats::holm::holm;
use crate::task::TaskOutcome;
use crate::verdict::{self, Verdict, VerdictKind};

/// Adjust the primary and the exact p-values across the analysed tasks (two families, Holm),
/// and judge each analysed task again on the adjusted values.
pub(crate) fn holm_adjust(tasks: &mut [TaskOutcome]) {
    let analysed: Vec<(f64, f64)> = tasks
        .iter()
        .filter_map(|t| match t {
            TaskOutcome::Analysed(_, e) => Some((e.primary_p, e.robust_p)),
            TaskOutcome::Refused(_) => None,
        })
        .collect();
    let primary = holm(&analysed.iter().map(|p| p.0).collect::<Vec<_>>());
    let robust = holm(&analysed.iter().map(|p| p.1).collect::<Vec<_>>());
    let adjusted = tasks.iter_mut().filter_map(|t| match t {
        TaskOutcome::Analysed(result, evidence) => Some((result, evidence)),
        TaskOutcome::Refused(_) => None,
    });
    for ((result, evidence), (hp, hr)) in adjusted.zip(primary.into_iter().zip(robust)) {
        evidence.primary_p = hp;
        evidence.robust_p = hr;
        evidence.holm_adjusted = true;
        result.holm_primary_p = Some(hp);
        result.holm_robust_p = Some(hr);
        result.verdict = verdict::decide(evidence);
    }
}

/// A BETTER when at least one task is and none leans to B (mirror for B), INCONCLUSIVE when the
/// tasks disagree; REFUSED when no task could be analysed.
pub(crate) fn overall_verdict(tasks: &[TaskResult]) -> Verdict {
    use VerdictKind::*;
    let count = |k: VerdictKind| tasks.iter().filter(|t| t.verdict.kind == k).count();
    let m = tasks.len();
    let analysed = m - count(Refused);
    let make = |kind: VerdictKind, reason: String| Verdict {
        kind,
        headline: kind.headline(),
        reason,
    };
    if analysed == 0 {
        return make(Refused, format!("every one of the {m} tasks has an arm with fewer than 2 usable runs; one run proves nothing."));
    }
    let (ab, al, bb, bl, eq) = (
        count(ABetter),
        count(ALikelyBetter),
        count(BBetter),
        count(BLikelyBetter),
        count(NoMeaningfulDifference),
    );
    let tally = format!(
        "per task (Holm-adjusted): A better {ab}, A likely {al}, B better {bb}, B likely {bl}, no meaningful difference {eq}, inconclusive {}, refused {}",
        count(Inconclusive),
        count(Refused)
    );
    if ab > 0 && bb + bl == 0 {
        make(
            ABetter,
            format!("A is better on {ab} of {m} tasks and B on none; {tally}."),
        )
    } else if bb > 0 && ab + al == 0 {
        make(
            BBetter,
            format!("B is better on {bb} of {m} tasks and A on none; {tally}."),
        )
    } else if (ab + al > 0) && (bb + bl > 0) {
        make(
            Inconclusive,
            format!("the tasks disagree: some favour A, some B; {tally}."),
        )
    } else if al > 0 {
        make(
            ALikelyBetter,
            format!("A leans ahead on {al} of {m} tasks without a decisive result; {tally}."),
        )
    } else if bl > 0 {
        make(
            BLikelyBetter,
            format!("B leans ahead on {bl} of {m} tasks without a decisive result; {tally}."),
        )
    } else if eq == analysed {
        make(
            NoMeaningfulDifference,
            format!("every analysed task is within the equivalence margin; {tally}."),
        )
    } else {
        make(
            Inconclusive,
            format!("no task shows a clear difference; {tally}."),
        )
    }
}
