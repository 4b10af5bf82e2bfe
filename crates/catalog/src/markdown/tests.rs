//! Tests of the Markdown reader.

use super::*;

fn messages(p: &FileParse) -> Vec<String> {
    p.problems.iter().map(|p| p.to_string()).collect()
}

const ENTRY: &str = "## First steps\n\n### Overfit one batch {#overfit-one-batch .training .first-steps}\n\n> The exact words.[^karpathy-recipe]\n\nOwn words here.\n\nCheck: `mldebug check overfit --model crate::Net`\n\n[^karpathy-recipe]: Andrej Karpathy, \"A Recipe\", <https://x>\n";

#[test]
fn entries_have_id_title_section_tags_body() {
    let p = parse("SKILL.md", ENTRY);
    assert!(p.problems.is_empty(), "{:?}", messages(&p));
    let e = &p.entries[0];
    assert_eq!(e.id, "overfit-one-batch");
    assert_eq!(e.title, "Overfit one batch");
    assert_eq!(e.section.as_deref(), Some("First steps"));
    assert_eq!(e.tags, ["training", "first-steps"]);
    assert_eq!(e.location.line, 3);
    assert!(e.body.contains("Own words here."), "{}", e.body);
    assert!(
        !e.body.contains("exact words"),
        "quotes are not part of the body"
    );
    assert_eq!(e.quotes, [0]);
    assert_eq!(e.checks, [CheckId::Overfit]);
    assert_eq!(e.commands, ["mldebug check overfit --model crate::Net"]);
}

#[test]
fn quotes_carry_source_line_and_marker() {
    let p = parse("SKILL.md", ENTRY);
    let q = &p.quotes[0];
    assert_eq!(q.text, "The exact words.");
    assert_eq!(q.source, "karpathy-recipe");
    assert_eq!(q.location.line, 5);
    assert_eq!(q.entry.as_deref(), Some("overfit-one-batch"));
    assert!(!q.marked_unverified);
    let marked = parse(
        "SKILL.md",
        &ENTRY.replace(
            "[^karpathy-recipe]\n\nOwn",
            "[^karpathy-recipe] *(unverified)*\n\nOwn",
        ),
    );
    assert!(
        marked.quotes[0].marked_unverified,
        "{:?}",
        messages(&marked)
    );
    assert!(marked.problems.is_empty(), "{:?}", messages(&marked));
}

#[test]
fn quote_markup_is_removed_and_lines_joined() {
    let p = parse(
        "SKILL.md",
        "> It's *really* `code`\n> and more.[^s]\n\n[^s]: S\n",
    );
    assert_eq!(p.quotes[0].text, "It's really code and more.");
}

#[test]
fn code_spans_are_kept_literally_too() {
    let p = parse("SKILL.md", "> Look for ``nan`` values.[^s]\n\n[^s]: S\n");
    assert_eq!(p.quotes[0].text, "Look for nan values.");
    assert_eq!(p.quotes[0].literal, "Look for ``nan`` values.");
}

#[test]
fn footnote_definitions_are_read() {
    let p = parse("SKILL.md", ENTRY);
    assert_eq!(p.footnotes[0].label, "karpathy-recipe");
    assert_eq!(p.footnotes[0].location.line, 11);
    assert!(p.footnotes[0].text.starts_with("Andrej Karpathy"));
    assert_eq!(p.footnote_refs.len(), 1);
}

#[test]
fn block_quote_without_source_is_an_error() {
    let p = parse("SKILL.md", "### A {#a}\n\n> Words with no source.\n");
    let m = messages(&p);
    assert!(
        m.iter()
            .any(|m| m.starts_with("SKILL.md:3:") && m.contains("without a source")),
        "{m:?}"
    );
}

#[test]
fn missing_footnote_definition_is_an_error() {
    let p = parse("SKILL.md", "### A {#a}\n\n> Words.[^nowhere]\n");
    let m = messages(&p);
    assert!(
        m.iter()
            .any(|m| m.starts_with("SKILL.md:3:") && m.contains("[^nowhere]")),
        "{m:?}"
    );
}

#[test]
fn two_quotes_run_together_are_an_error() {
    let p = parse(
        "SKILL.md",
        "> One.[^a]\n> Two.[^b]\nOwn words.\n\n[^a]: A\n[^b]: B\n",
    );
    let m = messages(&p);
    assert!(
        m.iter().any(|m| m.contains("more than one footnote")),
        "{m:?}"
    );
    assert!(m.iter().any(|m| m.contains("text after")), "{m:?}");
}

#[test]
fn check_mentions_are_collected_with_lines() {
    let p = parse("refs/x.md", "# X\n\nRun `mldebug check overfitt --model m` or\n\n```sh\nmldebug check grad-flow --model m\n```\n\n`mldebug check <id>` is a placeholder.\n");
    let ids: Vec<(&str, usize)> = p
        .check_mentions
        .iter()
        .map(|m| (m.id.as_str(), m.location.line))
        .collect();
    assert_eq!(ids, [("overfitt", 3), ("grad-flow", 6)]);
}

const TABLE: &str = "## Symptoms {#symptoms}\n\n| Symptom | Hypotheses (most likely first) | Checks |\n|---|---|---|\n| Loss is NaN {#loss-nan} | lr too high; fp16 overflow | `mldebug check nan-trace --model m` |\n| Loss is 0 {#loss-zero} | all masked | `mldebug check label-mask --model m` `mldebug check overfit --model m` |\n\n## Next {#next}\n";

#[test]
fn symptom_rows_are_parsed() {
    let p = parse("PLAYBOOK.md", TABLE);
    assert!(p.problems.is_empty(), "{:?}", messages(&p));
    assert!(p.has_symptoms_heading);
    assert_eq!(p.symptoms.len(), 2);
    let s = &p.symptoms[0];
    assert_eq!(s.symptom, "Loss is NaN");
    assert_eq!((s.id.as_str(), s.id_given), ("loss-nan", true));
    assert_eq!(s.hypotheses, ["lr too high", "fp16 overflow"]);
    assert_eq!(s.commands, ["mldebug check nan-trace --model m"]);
    assert_eq!(s.checks, [CheckId::NanTrace]);
    assert_eq!(s.location.line, 5);
    assert_eq!(p.symptoms[1].checks, [CheckId::LabelMask, CheckId::Overfit]);
    let p = parse("PLAYBOOK.md", &TABLE.replace(" {#loss-zero}", ""));
    assert_eq!(
        messages(&p),
        [format!(
            "PLAYBOOK.md:6: {}",
            super::super::symptom_id::MISSING
        )]
    );
    assert_eq!(
        (p.symptoms[1].id.as_str(), p.symptoms[1].id_given),
        ("loss-is-0", false)
    );
}

#[test]
fn log_symptom_rows_are_kept_apart_and_share_the_id_space() {
    let log = "## From a log {#log-symptoms}\n\n| Symptom | Hypotheses (most likely first) | Checks |\n|---|---|---|\n| Loss turns NaN at a step {#loss-nonfinite} | lr too high; a bad batch | `mldebug check nan-trace --model m` |\n";
    let p = parse("PLAYBOOK.md", &format!("{TABLE}\n{log}"));
    assert!(p.problems.is_empty(), "{:?}", messages(&p));
    assert_eq!(p.symptoms.len(), 2, "triage rows unchanged");
    assert_eq!(p.log_symptoms.len(), 1);
    assert_eq!(p.log_symptoms[0].id, "loss-nonfinite");
    assert_eq!(p.log_symptoms[0].hypotheses, ["lr too high", "a bad batch"]);
    // An id used in both tables is reported.
    let twice = format!("{TABLE}\n{}", log.replace("loss-nonfinite", "loss-nan"));
    let c = crate::parse_files(vec![("PLAYBOOK.md".into(), twice)]);
    let mut problems = Vec::new();
    crate::symptom_id::verify(&c, &mut problems);
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("`loss-nan` is already used")),
        "{problems:?}"
    );
}

#[test]
fn unterminated_table_is_an_error() {
    // No delimiter row: the lines are a paragraph, not a table.
    let broken = TABLE.replace("|---|---|---|\n", "");
    let p = parse("PLAYBOOK.md", &broken);
    let m = messages(&p);
    assert!(
        m.iter()
            .any(|m| m.starts_with("PLAYBOOK.md:3:") && m.contains("not part of a table")),
        "{m:?}"
    );
    // A row not closed with `|`.
    let open = TABLE.replace(
        "| all masked | `mldebug check label-mask --model m` `mldebug check overfit --model m` |",
        "| all masked | `mldebug check label-mask --model m`",
    );
    let m = messages(&parse("PLAYBOOK.md", &open));
    assert!(
        m.iter()
            .any(|m| m.starts_with("PLAYBOOK.md:6:") && m.contains("not closed")),
        "{m:?}"
    );
}

#[test]
fn symptom_rows_need_all_cells() {
    let bad = TABLE.replace("`mldebug check nan-trace --model m`", "run the nan check");
    let m = messages(&parse("PLAYBOOK.md", &bad));
    assert!(
        m.iter()
            .any(|m| m.starts_with("PLAYBOOK.md:5:") && m.contains("without a command")),
        "{m:?}"
    );
    let bad = TABLE.replace(
        "| Symptom | Hypotheses (most likely first) | Checks |",
        "| Symptom | Causes | Checks |",
    );
    let m = messages(&parse("PLAYBOOK.md", &bad));
    assert!(m.iter().any(|m| m.contains("columns")), "{m:?}");
    let m = messages(&parse(
        "PLAYBOOK.md",
        "## Symptoms {#symptoms}\n\nNo table.\n",
    ));
    assert!(m.iter().any(|m| m.contains("has no table")), "{m:?}");
}

#[test]
fn front_matter_is_not_an_entry_or_text() {
    let p = parse("SKILL.md", "---\nname: x\ndescription: y\n---\n\n# T\n");
    assert!(p.entries.is_empty());
    assert!(p.problems.is_empty(), "{:?}", messages(&p));
}
