//! SKILL.md routes: it stays small enough to be read whole (at most 25 KB), its routing table
//! at the top sends every row to an entry that exists, a ref file that exists and commands that
//! run (PyTorch's `mldebug run` first, then `--torch` checks, then candle's), and every
//! `Check:` line in the catalog shows the candle and the torch form. The skill as installed by
//! `mldebug skill install` holds everything its routes and files name: a copy in a temporary
//! folder is resolved on its own, without the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The budget: an agent's first read of the skill must reach its end.
const MAX_SKILL_BYTES: usize = 25_000;

/// Top-level names of the skill's layout: a code span starting with one of them names a file
/// the installed skill must hold.
const SKILL_PATHS: [&str; 5] = ["SKILL.md", "PLAYBOOK.md", "refs/", "evidence/", "torch/"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn skill() -> String {
    std::fs::read_to_string(root().join("SKILL.md")).unwrap()
}

/// One row of the routing table.
struct Route {
    seen: String,
    entry: String,
    reference: String,
    /// The commands of the last cell, in order (separated by ` · `).
    commands: Vec<String>,
}

fn routes(text: &str) -> Vec<Route> {
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
            let tick = |s: &str| s.trim().trim_matches('`').to_string();
            let reference = cells[2]
                .split_once("](")
                .and_then(|(_, r)| r.strip_suffix(')'))
                .unwrap_or_else(|| panic!("the ref cell is a link: {l}"))
                .to_string();
            Route {
                seen: cells[0].to_string(),
                entry: tick(cells[1]),
                reference,
                commands: cells[3].split(" · ").map(tick).collect(),
            }
        })
        .collect()
}

/// Where a command sits in the order a PyTorch user should try them: `mldebug run`, then a
/// check on `--torch`, then one on a candle `--model`; `None` for the others.
fn rank(command: &str) -> Option<u8> {
    if command.starts_with("mldebug run ") {
        Some(0)
    } else if command.contains(" --torch ") {
        Some(1)
    } else if command.contains(" --model ") {
        Some(2)
    } else {
        None
    }
}

/// The command's subcommand exists and takes every flag the command gives it (the words before
/// `--`; what follows is the user's own command). `check` must name a registered check.
fn command_runs(bin: &Path, seen: &str, command: &str) {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "mldebug", "{seen}: {command}");
    if words[1] == "check" {
        let id = words[2];
        assert!(
            id == "all" || id.parse::<mldebug_diagnostics::CheckId>().is_ok(),
            "{seen}: unknown check {id}"
        );
    }
    let out = Command::new(bin)
        .args([words[1], "--help"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{seen}: `mldebug {} --help` failed: {}",
        words[1],
        String::from_utf8_lossy(&out.stderr)
    );
    let help = String::from_utf8_lossy(&out.stdout);
    let own = words.iter().take_while(|w| **w != "--");
    for flag in own.filter(|w| w.starts_with("--")) {
        assert!(
            help.contains(*flag),
            "{seen}: `{flag}` is not a flag of {}",
            words[1]
        );
    }
}

/// Every route of `skill` resolves against the catalog in `dir`: its entry exists, its ref is a
/// file there, its commands run and come in the PyTorch-first order.
fn routes_resolve(dir: &Path, skill: &str) {
    let catalog = mldebug_catalog::from_dir(dir).unwrap();
    let ids: Vec<&str> = catalog.entries.iter().map(|e| e.id.as_str()).collect();
    let bin = Path::new(env!("CARGO_BIN_EXE_mldebug"));
    for r in routes(skill) {
        assert!(
            ids.contains(&r.entry.as_str()),
            "{}: no entry `{}`",
            r.seen,
            r.entry
        );
        let path = dir.join(r.reference.split('#').next().unwrap());
        assert!(path.is_file(), "{}: no file {}", r.seen, path.display());
        for c in &r.commands {
            command_runs(bin, &r.seen, c);
        }
        let ranks: Vec<u8> = r.commands.iter().filter_map(|c| rank(c)).collect();
        assert!(
            ranks.windows(2).all(|w| w[0] <= w[1]),
            "{}: `mldebug run` first, then --torch, then --model: {:?}",
            r.seen,
            r.commands
        );
    }
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
    assert!(routes(&text).len() >= 12);
}

#[test]
fn pytorch_symptoms_lead_with_mldebug_run() {
    let all = routes(&skill());
    assert!(
        all[0].commands[0].starts_with("mldebug run "),
        "the first route is the one command that needs no adapter: {:?}",
        all[0].commands
    );
    let with_torch: Vec<&Route> = all
        .iter()
        .filter(|r| r.commands.iter().any(|c| c.contains(" --torch ")))
        .collect();
    let with_run = with_torch
        .iter()
        .filter(|r| r.commands[0].starts_with("mldebug run "))
        .count();
    assert!(
        2 * with_run > with_torch.len(),
        "most PyTorch routes start with `mldebug run`: {with_run} of {}",
        with_torch.len()
    );
}

#[test]
fn every_route_resolves_to_an_entry_a_ref_and_a_command_that_runs() {
    routes_resolve(&root(), &skill());
}

/// The code spans of `text` that name a file of the skill's layout (placeholders such as
/// `evidence/<label>.yaml` left out).
fn named_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|s| SKILL_PATHS.iter().any(|p| s.starts_with(p)))
        .filter(|s| !s.contains(['<', '*', ' ']))
        .map(|s| s.split('#').next().unwrap_or(s).to_string())
        .collect()
}

/// The ids after `mldebug show ` in `text` (a placeholder `<entry>` is left out).
fn shown_ids(text: &str) -> Vec<String> {
    text.split("mldebug show ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                .collect::<String>()
        })
        .filter(|id| !id.is_empty())
        .collect()
}

#[test]
fn the_installed_skill_holds_everything_it_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("skill");
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["skill", "install", "--dir"])
        .arg(&dir)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    assert_eq!(installed, skill());
    // The copy is a catalog of its own: every quote, footnote and link resolves inside it.
    let catalog = mldebug_catalog::from_dir(&dir).unwrap();
    let problems = mldebug_catalog::verify::verify(&catalog);
    assert!(problems.is_empty(), "{problems:#?}");
    routes_resolve(&dir, &installed);
    let mut ids: Vec<&str> = catalog.entries.iter().map(|e| e.id.as_str()).collect();
    ids.extend(catalog.sources.iter().map(|s| s.id.as_str()));
    let mut named = 0;
    for (file, text) in &catalog.files {
        if !file.ends_with(".md") {
            continue;
        }
        for path in named_paths(text) {
            assert!(
                dir.join(&path).is_file(),
                "{file} names `{path}`, not installed"
            );
            named += 1;
        }
        for id in shown_ids(text) {
            assert!(
                ids.contains(&id.as_str()),
                "{file}: `mldebug show {id}`: no such entry"
            );
        }
    }
    assert!(named >= 2, "the protocol file is named: {named}");
    let protocol = std::fs::read_to_string(dir.join("torch/mldebug_model.py")).unwrap();
    assert_eq!(
        protocol,
        std::fs::read_to_string(root().join("torch/mldebug_model.py")).unwrap()
    );
    assert!(protocol.contains("def batch(self, seed, device)"));
}

#[test]
fn named_paths_and_shown_ids_are_found() {
    let text = "copy `torch/mldebug_model.py`, see `refs/a.md#x`, not `evidence/<label>.yaml` nor `cargo test`; `mldebug show alignment-check` and `mldebug show <entry>`";
    assert_eq!(
        named_paths(text),
        vec![
            "torch/mldebug_model.py".to_string(),
            "refs/a.md".to_string()
        ]
    );
    assert_eq!(shown_ids(text), vec!["alignment-check".to_string()]);
    assert_eq!(rank("mldebug run --steps 30 -- python train.py"), Some(0));
    assert_eq!(rank("mldebug check overfit --torch m.py:Net"), Some(1));
    assert_eq!(rank("mldebug check overfit --model crate::Net"), Some(2));
    assert_eq!(rank("mldebug doctor train.log"), None);
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
