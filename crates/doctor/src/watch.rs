//! What `doctor --watch` keeps between polls of a growing run: the findings already reported
//! (so each is printed once), and a cap on the points kept per series (so memory stays bounded
//! however long the run goes on).

use crate::finding::{Finding, Severity, Symptom};
use std::collections::BTreeMap;

/// The most points kept per series while watching: 2^20 points are 16 MiB per series, and
/// still far more than the detectors' binned trends resolve (see `robust::MAX_TREND_POINTS`).
pub const MAX_WATCH_POINTS: usize = 1 << 20;

/// Findings reported so far for one run, by (symptom, series).
#[derive(Debug, Default)]
pub struct Reported {
    seen: BTreeMap<(Symptom, String), Severity>,
}

impl Reported {
    /// The findings not reported before, or reported at a lower severity; remembers them.
    pub fn fresh<'a>(&mut self, findings: &'a [Finding]) -> Vec<&'a Finding> {
        let mut out = Vec::new();
        for f in findings {
            let key = f.key();
            match self.seen.get(&key) {
                Some(s) if *s >= f.severity => {}
                _ => {
                    self.seen.insert(key, f.severity);
                    out.push(f);
                }
            }
        }
        out
    }
}

/// Halves a series that has grown past [`MAX_WATCH_POINTS`] by dropping every other point of
/// its older half; non-finite points are always kept (they are findings).
pub fn cap(points: &mut Vec<(f64, f64)>) {
    if points.len() <= MAX_WATCH_POINTS {
        return;
    }
    let half = points.len() / 2;
    let mut i = 0usize;
    points.retain(|p| {
        let keep = i >= half || i.is_multiple_of(2) || !p.1.is_finite();
        i += 1;
        keep
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_finding_is_reported_once_unless_it_worsens() {
        let mut r = Reported::default();
        let a = [Finding::new(
            Symptom::LossSpikes,
            Severity::Info,
            "loss",
            5.0,
        )];
        assert_eq!(r.fresh(&a).len(), 1);
        assert_eq!(r.fresh(&a).len(), 0);
        let b = [Finding::new(
            Symptom::LossSpikes,
            Severity::Warn,
            "loss",
            5.0,
        )];
        assert_eq!(r.fresh(&b).len(), 1);
    }

    #[test]
    fn capping_keeps_recent_points_and_non_finite_ones() {
        let mut pts: Vec<(f64, f64)> = (0..MAX_WATCH_POINTS + 2).map(|i| (i as f64, 1.0)).collect();
        pts[1].1 = f64::NAN;
        cap(&mut pts);
        assert!(pts.len() < MAX_WATCH_POINTS);
        assert!(pts[1].1.is_nan());
        assert_eq!(pts.last().unwrap().0, (MAX_WATCH_POINTS + 1) as f64);
    }
}
