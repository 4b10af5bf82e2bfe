//! SKILL.md routes: it stays small enough to be read whole (at most 25 KB), its routing table
//! at the top sends every row to an entry that exists, a ref file that exists and a command
//! that runs, and every `Check:` line in the catalog shows the candle and the torch form.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The budget: an agent's first read of the skill must reach its end.
const MAX_SKILL_BYTES: usize = 25_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn skill() -> String {
    std::fs::read_to_string(root().join("SKILL.md")).unwrap()
}

/// The routing table's rows as (what you see, entry, ref path, command).
fn routes(text: &str) -> Vec<(String, String, String, String)> {
    let start = text
        .find("{#route}")
        .expect("SKILL.md has a {#route} section");
    let table = &text[start..];
    let end = table[1..].find("\n## ").map_or(table.len(), |i| i + 1);
    table[..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| You see"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a route has four cells: {l}");
            let tick = |s: &str| s.trim_matches('`').to_string();
            let link = cells[2]
                .split_once("](")
                .and_then(|(_, r)| r.strip_suffix(')'))
                .unwrap_or_else(|| panic!("the ref cell is a link: {l}"))
                .to_string();
            (cells[0].to_string(), tick(cells[1]), link, tick(cells[3]))
        })
        .collect()
}

#[test]
fn the_skill_fits_its_budget_and_routes_first() {
    let text = skill();
    assert!(
        text.len() <= MAX_SKILL_BYTES,
        "SKILL.md is {} bytes; move framework-specific material to refs/ (budget {MAX_SKILL_BYTES})",
        text.len()
    );
    let route = text.find("{#route}").unwrap();
    let first_entry = text.find("\n### ").unwrap();
    assert!(
        route < first_entry,
        "the routing table comes before the entries"
    );
    assert!(routes(&text).len() >= 12, "{:?}", routes(&text));
}

#[test]
fn every_route_resolves_to_an_entry_a_ref_and_a_command_that_runs() {
    let catalog = mldebug_catalog::from_dir(&root()).unwrap();
    let ids: Vec<&str> = catalog.entries.iter().map(|e| e.id.as_str()).collect();
    for (seen, entry, reference, command) in routes(&skill()) {
        assert!(ids.contains(&entry.as_str()), "{seen}: no entry `{entry}`");
        let path = root().join(reference.split('#').next().unwrap());
        assert!(path.is_file(), "{seen}: no file {}", path.display());
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words[0], "mldebug", "{seen}: {command}");
        if words[1] == "check" {
            let id = words[2];
            assert!(
                id == "all" || id.parse::<mldebug_diagnostics::CheckId>().is_ok(),
                "{seen}: unknown check {id}"
            );
        }
        // The subcommand (and for `check`, the flag) exists: its help prints.
        let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
            .args([words[1], "--help"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{seen}: `mldebug {} --help` failed",
            words[1]
        );
        let help = String::from_utf8_lossy(&out.stdout);
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            assert!(
                help.contains(*flag),
                "{seen}: `{flag}` is not a flag of {}",
                words[1]
            );
        }
    }
}

/// Every `Check: mldebug check <id> --model crate::Net` also shows `--torch model.py:Net`.
#[test]
fn every_check_line_shows_the_candle_and_the_torch_form() {
    let mut files = vec![root().join("SKILL.md"), root().join("PLAYBOOK.md")];
    files.extend(
        std::fs::read_dir(root().join("refs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.strip_prefix("Check: ") else {
                continue;
            };
            for part in rest.split("`mldebug check ").skip(1) {
                let id = part.split_whitespace().next().unwrap();
                if part.starts_with(&format!("{id} --model crate::Net")) {
                    let torch = format!("`mldebug check {id} --torch model.py:Net`");
                    assert!(
                        rest.contains(&torch),
                        "{}:{}: no torch form {torch}",
                        short(&file),
                        n + 1
                    );
                }
            }
        }
    }
}

fn short(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}
