//! A zoo model as `mldebug zoo --json` lists it: its name and what its bug breaks.

use super::ZooModel;
use crate::CheckId;
use serde::Serialize;

/// One zoo model as `mldebug zoo --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ZooEntry {
    /// Usable as `--model zoo::<name>`.
    pub name: &'static str,
    /// A clean model (no planted bug).
    pub clean: bool,
    /// The checks a correct mldebug must fail on this model (empty for clean models).
    pub fails: Vec<CheckId>,
    /// The clean model this one is a buggy copy of.
    pub twin_of: Option<&'static str>,
    /// What the bug is, in one line ("" for clean models).
    pub breaks: &'static str,
}

impl From<&ZooModel> for ZooEntry {
    fn from(m: &ZooModel) -> Self {
        ZooEntry {
            name: m.name,
            clean: m.clean,
            fails: m.fails.to_vec(),
            twin_of: m.twin_of,
            breaks: m.breaks,
        }
    }
}
