//! Warnings about the design as a whole, across tasks: best-of-n, confounds, unequal run
//! lengths.

use crate::arms::{self, Arms};
use crate::options::Options;
use crate::record::RunRecord;
use crate::reduce::Reduction;
use crate::task::Run;
use crate::warnings::{self, Warning};
use mldebug_text::number::num;
use std::collections::{BTreeMap, BTreeSet};

/// Warnings about the design as a whole: best-of-n, confounds, unequal run lengths.
pub(crate) fn design_warnings(
    runs: &[Run],
    arms: &Arms,
    opts: &Options,
    multi: bool,
) -> Vec<Warning> {
    let mut out = Vec::new();
    if opts.reduce == Reduction::Best {
        let mut pts: Vec<usize> = runs.iter().map(|r| r.red.points).collect();
        pts.sort_unstable();
        out.push(warnings::best_of_n(
            pts.get(pts.len() / 2).copied().unwrap_or(1),
        ));
    }
    let recs: Vec<&RunRecord> = runs.iter().map(|r| r.rec).collect();
    let arm_key = match &arms.key {
        arms::ArmKey::Config(k) => Some(k.as_str()),
        arms::ArmKey::Group => None,
    };
    let confounds: BTreeMap<String, BTreeSet<String>> = arms::varying_config_keys(&recs)
        .into_iter()
        .filter(|(k, _)| Some(k.as_str()) != arm_key && !arms::is_structural(k))
        .filter(|(k, _)| !(multi && arms::TASK_KEYS.contains(&k.as_str())))
        .collect();
    if !confounds.is_empty() {
        let list: Vec<String> = confounds
            .iter()
            .take(5)
            .map(|(k, v)| {
                let vals: Vec<&str> = v.iter().take(4).map(String::as_str).collect();
                format!("{k} ({})", vals.join(", "))
            })
            .collect();
        out.push(Warning::new(
            "confounds",
            format!(
                "configs differ beyond the arm key: {}{} — a difference may come from these, not from {}.",
                list.join("; "),
                if confounds.len() > 5 { format!(" and {} more", confounds.len() - 5) } else { String::new() },
                arms.key
            ),
        ));
    }
    if opts.reduce != Reduction::Best && !matches!(opts.reduce, Reduction::AtStep { .. }) {
        let steps: Vec<f64> = runs.iter().filter_map(|r| r.red.last_step).collect();
        if let (Some(lo), Some(hi)) = (
            steps.iter().copied().reduce(f64::min),
            steps.iter().copied().reduce(f64::max),
        ) {
            if lo != hi {
                out.push(Warning::new(
                    "unequal-lengths",
                    format!(
                        "runs end at different steps ({} to {}): a longer run may simply have trained more; use --reduce at-step:{} to align.",
                        num(lo),
                        num(hi),
                        num(lo)
                    ),
                ));
            }
        }
    }
    out
}
