//! The checks run once per seed (`mldebug check --seeds 0-4`): each seed's report, and per
//! check the seeds on which it came out each way. A verdict that holds on one seed only is luck;
//! one that holds on every seed is the model's.

use crate::{CheckId, Report, Status};
use serde::{Deserialize, Serialize};

/// The `--json` document of `check --seeds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedsReport {
    /// The model as the command line named it.
    pub model: String,
    /// Where the checks ran.
    pub device: String,
    /// The seeds, in the order they ran.
    pub seeds: Vec<u64>,
    /// One report per seed, in the same order.
    pub reports: Vec<Report>,
    /// Per check (in the order the checks ran): the seeds that gave each status.
    pub verdicts: Vec<SeedVerdict>,
}

/// How one check came out over the seeds: the seeds that gave each status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedVerdict {
    /// The check.
    pub check: CheckId,
    /// The seeds it passed on, in run order; and the same for each other status.
    pub pass: Vec<u64>,
    /// The seeds it warned on.
    pub warn: Vec<u64>,
    /// The seeds it failed on.
    pub fail: Vec<u64>,
    /// The seeds it could not judge the model on.
    pub skipped: Vec<u64>,
    /// The seeds it could not run on (the model errored).
    pub error: Vec<u64>,
}

impl SeedVerdict {
    /// The seeds that gave `status`.
    pub fn seeds(&self, status: Status) -> &[u64] {
        match status {
            Status::Pass => &self.pass,
            Status::Warn => &self.warn,
            Status::Fail => &self.fail,
            Status::Skipped => &self.skipped,
            Status::Error => &self.error,
        }
    }

    fn none(check: CheckId) -> Self {
        SeedVerdict {
            check,
            pass: Vec::new(),
            warn: Vec::new(),
            fail: Vec::new(),
            skipped: Vec::new(),
            error: Vec::new(),
        }
    }

    fn push(&mut self, status: Status, seed: u64) {
        match status {
            Status::Pass => self.pass.push(seed),
            Status::Warn => self.warn.push(seed),
            Status::Fail => self.fail.push(seed),
            Status::Skipped => self.skipped.push(seed),
            Status::Error => self.error.push(seed),
        }
    }
}

impl SeedsReport {
    /// The document for `reports` (one per seed, in order; their model and device are the
    /// first one's). A check missing from a seed's report counts for none of its statuses.
    pub fn new(reports: Vec<Report>) -> Self {
        let mut verdicts: Vec<SeedVerdict> = Vec::new();
        for report in &reports {
            for finding in &report.checks {
                let i = match verdicts.iter().position(|v| v.check == finding.check) {
                    Some(i) => i,
                    None => {
                        verdicts.push(SeedVerdict::none(finding.check));
                        verdicts.len() - 1
                    }
                };
                verdicts[i].push(finding.status, report.seed);
            }
        }
        let first = reports.first();
        SeedsReport {
            model: first.map(|r| r.model.clone()).unwrap_or_default(),
            device: first.map(|r| r.device.clone()).unwrap_or_default(),
            seeds: reports.iter().map(|r| r.seed).collect(),
            reports,
            verdicts,
        }
    }

    /// Every finding of every seed.
    pub fn findings(&self) -> impl Iterator<Item = &crate::Finding> {
        self.reports.iter().flat_map(|r| r.checks.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Finding;

    fn report(seed: u64, statuses: &[(CheckId, Status)]) -> Report {
        Report {
            model: "zoo::mlp".into(),
            device: "cpu".into(),
            seed,
            checks: statuses
                .iter()
                .map(|&(c, s)| Finding::new(c, s, "summary"))
                .collect(),
        }
    }

    #[test]
    fn each_check_lists_the_seeds_of_each_status_in_run_order() {
        let doc = SeedsReport::new(vec![
            report(
                7,
                &[
                    (CheckId::GradFlow, Status::Fail),
                    (CheckId::Overfit, Status::Pass),
                ],
            ),
            report(
                2,
                &[
                    (CheckId::GradFlow, Status::Pass),
                    (CheckId::Overfit, Status::Error),
                ],
            ),
            report(
                9,
                &[
                    (CheckId::GradFlow, Status::Fail),
                    (CheckId::Overfit, Status::Warn),
                ],
            ),
        ]);
        assert_eq!(doc.seeds, [7, 2, 9]);
        assert_eq!(doc.verdicts.len(), 2);
        let grad = &doc.verdicts[0];
        assert_eq!(grad.check, CheckId::GradFlow);
        assert_eq!(grad.seeds(Status::Fail), [7, 9]);
        assert_eq!(grad.seeds(Status::Pass), [2]);
        let fit = &doc.verdicts[1];
        assert_eq!(
            (
                fit.pass.as_slice(),
                fit.error.as_slice(),
                fit.warn.as_slice()
            ),
            (&[7][..], &[2][..], &[9][..])
        );
        assert_eq!(doc.findings().count(), 6);
    }

    #[test]
    fn the_document_reads_back_as_written() {
        let doc = SeedsReport::new(vec![
            report(0, &[(CheckId::InitLoss, Status::Pass)]),
            report(1, &[(CheckId::InitLoss, Status::Skipped)]),
        ]);
        let text = crate::envelope::to_json("check", &doc).unwrap();
        let back: SeedsReport = crate::envelope::from_json("check", &text).unwrap();
        assert_eq!(back, doc);
    }
}
