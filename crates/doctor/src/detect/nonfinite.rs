//! `loss-nonfinite`: the first NaN or inf in a loss, with the grad norm and learning rate logged
//! just before it, which say whether the run was already blowing up (a grad norm far above its
//! usual level) or broke at once (a bad batch, a log of zero).

use super::{before, Context};
use crate::finding::{Finding, Severity, Symptom};
use crate::robust::median;
use mldebug_text::number::num;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    masked(cx, out);
    for s in cx.losses() {
        let pts = &s.points;
        let Some(k) = pts.iter().position(|p| !p.1.is_finite()) else {
            continue;
        };
        let (step, bad) = pts[k];
        let count = pts.iter().filter(|p| !p.1.is_finite()).count();
        let last_finite = pts[..k].iter().rev().find(|p| p.1.is_finite()).copied();
        let recovers = pts[k..].iter().any(|p| p.1.is_finite());
        let kind = if bad.is_nan() {
            "NaN"
        } else if bad > 0.0 {
            "inf"
        } else {
            "-inf"
        };
        let grad = cx.grad.and_then(|g| before(&g.points, step));
        let grad_median = cx.grad.map_or(f64::NAN, |g| {
            median(
                g.points[..g.points.partition_point(|p| p.0 < step)]
                    .iter()
                    .map(|p| p.1),
            )
        });
        let lr = cx.lr.and_then(|l| before(&l.points, step));
        let mut text = format!(
            "{} is {kind} from step {} ({count} of {} logged points{})",
            s.name,
            num(step),
            pts.len(),
            if recovers {
                ", finite again later"
            } else {
                ", never finite again"
            }
        );
        if let Some((ls, lv)) = last_finite {
            text.push_str(&format!("; last finite {} at step {}", num(lv), num(ls)));
        }
        if let Some((gs, gv)) = grad {
            text.push_str(&format!("; grad norm {} at step {}", num(gv), num(gs)));
            if grad_median.is_finite() && grad_median > 0.0 {
                text.push_str(&format!(" ({}× its median)", num(gv / grad_median)));
            }
        }
        if let Some((_, lv)) = lr {
            text.push_str(&format!("; learning rate {}", num(lv)));
        }
        out.push(
            Finding::new(Symptom::LossNonfinite, Severity::Fail, &s.name, step)
                .summary(text)
                .number("count", count as f64)
                .number("last_finite_step", last_finite.map_or(f64::NAN, |p| p.0))
                .number("last_finite_value", last_finite.map_or(f64::NAN, |p| p.1))
                .number("grad_norm_before", grad.map_or(f64::NAN, |p| p.1))
                .number("grad_norm_median", grad_median)
                .number("learning_rate_before", lr.map_or(f64::NAN, |p| p.1)),
        );
    }
}

/// A training loss logged as exactly 0 from the step the grad norm turns non-finite: the
/// logger replaced the non-finite losses (the HF Trainer's `logging_nan_inf_filter`, on by
/// default, logs the running mean instead, and once every weight is NaN that reads 0).
fn masked(cx: &Context, out: &mut Vec<Finding>) {
    let (Some((s, _)), Some(g)) = (&cx.train, cx.grad) else {
        return;
    };
    if s.points.iter().any(|p| !p.1.is_finite()) {
        return; // the plain case, reported below
    }
    let Some(&(g_step, g_val)) = g.points.iter().find(|p| !p.1.is_finite()) else {
        return;
    };
    let interval = crate::robust::logging_interval(&s.points);
    let Some(&(z_step, _)) = s.points.iter().find(|p| p.1 == 0.0) else {
        return;
    };
    let near = (z_step - g_step).abs() <= 2.0 * interval.max(0.0);
    let stays = s
        .points
        .iter()
        .filter(|p| p.0 >= z_step)
        .all(|p| p.1 == 0.0);
    if !(near && stays) {
        return;
    }
    let before = before(&s.points, g_step);
    let text = format!(
        "{} reads exactly 0 from step {} while {} is {} from step {}: the non-finite losses were \
         replaced when logged (the HF Trainer's logging_nan_inf_filter does this){}",
        s.name,
        num(z_step),
        g.name,
        if g_val.is_nan() { "NaN" } else { "inf" },
        num(g_step),
        before.map_or(String::new(), |(bs, bv)| format!(
            "; last real loss {} at step {}",
            num(bv),
            num(bs)
        )),
    );
    out.push(
        Finding::new(Symptom::LossNonfinite, Severity::Fail, &s.name, g_step)
            .summary(text)
            .number("zero_from_step", z_step)
            .number("last_finite_value", before.map_or(f64::NAN, |p| p.1)),
    );
}
