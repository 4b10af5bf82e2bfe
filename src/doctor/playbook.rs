//! A finding's PLAYBOOK row: the symptom row with the finding's id, its first hypotheses (those
//! the measurement ruled out left out) and its commands, as they apply to the program's
//! framework.

use super::document::PlaybookLink;
use crate::catalog::Catalog;

/// Hypotheses quoted from a PLAYBOOK row in the report (the row has the rest).
const MAX_HYPOTHESES: usize = 3;

/// The symptom row with this id (in the symptom table or the log-symptoms table), if the
/// catalog has it.
pub fn link(catalog: &Catalog, id: &str) -> Option<PlaybookLink> {
    link_as(catalog, id, Framework::Any)
}

/// Whose program a finding is about: a log could come from any framework; a run trace comes
/// from a PyTorch program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// Every hypothesis and command of the row.
    Any,
    /// The row as it applies to PyTorch: hypotheses about candle left out, a check on a candle
    /// model (`--model crate::Net`) asked of the PyTorch model (`--torch model.py:Net`), and
    /// candle-only entries left out.
    PyTorch,
}

/// A candle model in a row's command, and the PyTorch model that takes its place.
const CANDLE_MODEL: (&str, &str) = ("--model crate::Net", "--torch model.py:Net");

/// [`link`], for a program of this framework.
pub fn link_as(catalog: &Catalog, id: &str, framework: Framework) -> Option<PlaybookLink> {
    link_without(catalog, id, framework, &[])
}

/// [`link_as`], leaving out the hypotheses that hold any of the `ruled_out` phrases (what the
/// measurement excluded: a finding's [`ruled_out`](mldebug_doctor::Finding::ruled_out)).
pub fn link_without(
    catalog: &Catalog,
    id: &str,
    framework: Framework,
    ruled_out: &[String],
) -> Option<PlaybookLink> {
    let row = catalog
        .symptoms
        .iter()
        .chain(&catalog.log_symptoms)
        .find(|s| s.id == id)?;
    let torch = framework == Framework::PyTorch;
    let candle_only = |text: &str| text.to_ascii_lowercase().contains("candle");
    Some(PlaybookLink {
        row: row.id.clone(),
        link: format!("PLAYBOOK.md#{}", row.id),
        symptom: row.symptom.clone(),
        hypotheses: row
            .hypotheses
            .iter()
            .filter(|h| !(torch && h.to_ascii_lowercase().starts_with("in candle")))
            .filter(|h| !ruled_out.iter().any(|r| h.contains(r.as_str())))
            .take(MAX_HYPOTHESES)
            .cloned()
            .collect(),
        next: row
            .commands
            .iter()
            .filter(|c| !(torch && candle_only(c)))
            .map(|c| match torch {
                true => c.replace(CANDLE_MODEL.0, CANDLE_MODEL.1),
                false => c.clone(),
            })
            .collect(),
    })
}
