//! The PLAYBOOK symptoms table: its header, its rows, and rows that fell out of the table.

use super::super::limits::shown;
use super::{check_ids_in, normalise, Cell, Reader, SYMPTOM_COLUMNS};
use crate::model::Symptom;
use mldebug_report::CheckId;

impl Reader<'_> {
    pub(super) fn check_symptom_header(&mut self, header: &[String], start: usize) {
        let ok = header.len() == SYMPTOM_COLUMNS.len()
            && header
                .iter()
                .zip(SYMPTOM_COLUMNS)
                .all(|(h, want)| h.to_lowercase().starts_with(want));
        if !ok {
            self.problem(
                start,
                format!(
                    "the symptoms table must have the columns `Symptom | Hypotheses (most likely first) | Checks`; it has `{}`",
                    shown(&header.join(" | "))
                ),
            );
        }
    }

    /// Reads one row; `log` rows go to the log-symptoms list.
    pub(super) fn symptom_row(&mut self, cells: Vec<Cell>, start: usize, end: usize, log: bool) {
        let raw = self.text[start..end.min(self.text.len())].trim_end();
        if !raw.ends_with('|') {
            self.problem(start, "symptoms table row is not closed with `|`");
        }
        let mut cells = cells.into_iter();
        let cell = normalise(&cells.next().map(|c| c.text).unwrap_or_default());
        let (symptom, id) = super::super::symptom_id::split(&cell);
        let hypotheses: Vec<String> = cells
            .next()
            .map(|c| c.text)
            .unwrap_or_default()
            .split(';')
            .map(normalise)
            .filter(|h| !h.is_empty())
            .collect();
        let commands: Vec<String> = cells
            .next()
            .map(|c| c.code)
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c.starts_with("mldebug "))
            .collect();
        if symptom.is_empty() {
            self.problem(start, "symptoms table row without a symptom");
        }
        if id.is_none() {
            self.problem(start, super::super::symptom_id::MISSING);
        }
        if hypotheses.is_empty() {
            self.problem(
                start,
                "symptoms table row without hypotheses (separate them with `;`)",
            );
        }
        if commands.is_empty() {
            self.problem(
                start,
                "symptoms table row without a command in its Checks cell (write it in backticks: `mldebug check ...`)",
            );
        }
        let checks = commands
            .iter()
            .flat_map(|c| check_ids_in(c))
            .filter_map(|(_, id)| id.parse::<CheckId>().ok())
            .fold(Vec::new(), |mut v, c| {
                if !v.contains(&c) {
                    v.push(c);
                }
                v
            });
        let location = self.at(start);
        let list = if log {
            &mut self.out.log_symptoms
        } else {
            &mut self.out.symptoms
        };
        list.push(Symptom {
            id_given: id.is_some(),
            id: id.unwrap_or_else(|| super::super::symptom_id::fallback(&symptom)),
            symptom,
            hypotheses,
            commands,
            checks,
            location,
        });
    }

    /// Every `|` line of the symptoms section must be part of a table, and there must be one.
    pub(super) fn check_symptoms_section(&mut self) {
        if let Some((_, r)) = self.symptoms_range.clone() {
            let end = r.end.min(self.text.len());
            let section = &self.text[r.start..end];
            let mut offset = r.start;
            let mut tables = 0;
            // Tables come in order and do not overlap: walk them alongside the lines.
            let mut next_table = 0;
            for line in section.split_inclusive('\n') {
                while self
                    .table_ranges
                    .get(next_table)
                    .is_some_and(|t| t.end <= offset)
                {
                    next_table += 1;
                }
                let in_table = self
                    .table_ranges
                    .get(next_table)
                    .is_some_and(|t| t.contains(&offset));
                if line.trim_start().starts_with('|') && !in_table {
                    self.problem(
                        offset,
                        "unterminated or broken symptoms table: this `|` row is not part of a table (is the `|---|---|---|` delimiter row missing, or a blank line inside the table?)",
                    );
                }
                offset += line.len();
            }
            for t in &self.table_ranges {
                if t.start >= r.start && t.start < end {
                    tables += 1;
                }
            }
            if tables == 0 {
                self.problem(r.start, "the {#symptoms} section has no table");
            }
        }
    }
}
