//! `mldebug zoo`: the built-in models, and for each buggy twin what it breaks and which checks a
//! correct mldebug must fail on it. Also the name lookup behind `--model zoo::<name>`.

use crate::cli::Global;
use crate::render::output::{emit, emit_json};
use crate::render::{style::Style, zoo as render_zoo};
use crate::suggest::{edit_distance, SUGGEST_MAX_EDITS};
use crate::{Error, Exit, Result};
use mldebug_diagnostics::zoo::{self, ZooModel};
use mldebug_diagnostics::CheckId;
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {}

/// One zoo model as `mldebug zoo --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ZooEntry {
    /// Usable as `--model zoo::<name>`.
    pub name: &'static str,
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

pub fn run(_args: Args, g: &Global) -> Result<Exit> {
    let entries: Vec<ZooEntry> = zoo::all().iter().map(ZooEntry::from).collect();
    if g.json {
        let text = serde_json::to_string_pretty(&entries)
            .map_err(|e| Error::internal(format!("writing the zoo as JSON: {e}")))?;
        emit_json(&format!("{text}\n"))?;
    } else {
        let style = Style::for_stdout(g.color);
        emit(&render_zoo::render(&entries, &style), style.colour)?;
    }
    Ok(Exit::Ok)
}

/// The zoo model called `name`, or a usage error listing the names close to it.
pub fn lookup(name: &str) -> Result<&'static ZooModel> {
    if let Some(m) = zoo::find(name) {
        return Ok(m);
    }
    let names: Vec<&str> = zoo::all().iter().map(|m| m.name).collect();
    let close = close_names(name, &names);
    let hint = if close.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", close.join(", "))
    };
    Err(Error::usage(format!(
        "--model zoo::{name}: no such zoo model{hint}; `mldebug zoo` lists them all"
    )))
}

/// Names within [`SUGGEST_MAX_EDITS`] edits of `wanted`, or containing it, closest first.
pub fn close_names<'a>(wanted: &str, names: &[&'a str]) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .filter_map(|&n| {
            let d = edit_distance(wanted, n);
            let near = d <= SUGGEST_MAX_EDITS || (!wanted.is_empty() && n.contains(wanted));
            near.then_some((d, n))
        })
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_typos_and_substrings_closest_first() {
        let names = ["mlp", "mlp-sigmoid", "cnn", "tiny-gpt"];
        assert_eq!(close_names("mpl", &names), vec!["mlp"]);
        assert_eq!(close_names("mlp", &names), vec!["mlp", "mlp-sigmoid"]);
        assert_eq!(close_names("gpt", &names), vec!["tiny-gpt"]);
        assert!(close_names("resnet", &names).is_empty());
    }

    #[test]
    fn every_zoo_model_is_found_by_its_name_and_an_unknown_one_is_a_usage_error() {
        for m in zoo::all() {
            assert_eq!(lookup(m.name).unwrap().name, m.name);
        }
        let err = lookup("no-such-model").unwrap_err();
        assert_eq!(err.exit, Exit::Usage);
        assert!(err.message.contains("mldebug zoo"), "{}", err.message);
    }
}
