//! The `mldebug zoo` table: each model, what its bug is, and the checks that must fail on it.

use super::style::Style;
use comfy_table::Cell;
use mldebug_diagnostics::zoo::entry::ZooEntry;
use mldebug_diagnostics::Status;

pub fn render(entries: &[ZooEntry], style: &Style) -> String {
    let mut table = style.table();
    table.set_header(["model", "kind", "what it breaks", "must fail"]);
    for e in entries {
        let kind = match e.twin_of {
            Some(of) => format!("twin of {of}"),
            None if e.clean => "clean".to_string(),
            None => "buggy".to_string(),
        };
        let fails = if e.fails.is_empty() {
            "none".to_string()
        } else {
            e.fails
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let status = if e.clean { Status::Pass } else { Status::Fail };
        table.add_row(vec![
            Cell::new(e.name),
            style.status_cell(status, kind),
            Cell::new(if e.breaks.is_empty() { "—" } else { e.breaks }),
            Cell::new(fails),
        ]);
    }
    let clean = entries.iter().filter(|e| e.clean).count();
    format!(
        "{}\n{} models: {clean} clean, {} with a bug.\nRun one: mldebug check all --model \
         zoo::<name>\nRun them all: mldebug demo\n",
        table.trim_fmt(),
        entries.len(),
        entries.len() - clean
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mldebug_diagnostics::CheckId;

    #[test]
    fn twins_show_their_bug_and_the_checks_that_must_fail() {
        let entries = [
            ZooEntry {
                name: "mlp",
                clean: true,
                fails: vec![],
                twin_of: None,
                breaks: "",
            },
            ZooEntry {
                name: "mlp-unnormalised",
                clean: false,
                fails: vec![CheckId::InitLoss, CheckId::Overfit],
                twin_of: Some("mlp"),
                breaks: "inputs left in 0-255",
            },
        ];
        let text = render(&entries, &Style::plain());
        let twin = text
            .lines()
            .find(|l| l.contains("mlp-unnormalised"))
            .unwrap();
        assert!(twin.contains("twin of mlp"), "{text}");
        assert!(twin.contains("inputs left in 0-255"), "{text}");
        assert!(twin.contains("init-loss, overfit"), "{text}");
        assert!(text.contains("2 models: 1 clean, 1 with a bug."), "{text}");
    }
}
