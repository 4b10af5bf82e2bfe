//! `mldebug zoo`: the built-in models, and for each buggy twin what it breaks and which checks a
//! correct mldebug must fail on it. Also the name lookup behind `--model zoo::<name>`.

use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{json, style::Style, zoo as render_zoo};
use crate::suggest::{edit_distance, SUGGEST_MAX_EDITS};
use crate::{Error, Exit, Result};
use mldebug_diagnostics::zoo::{self, entry::ZooEntry, ZooModel};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, g: &Context) -> Result<Exit> {
    let entries: Vec<ZooEntry> = zoo::all().iter().map(ZooEntry::from).collect();
    if g.json() {
        #[derive(serde::Serialize)]
        struct Zoo<'a> {
            models: &'a [ZooEntry],
        }
        emit_json(&json::to_string("zoo", &Zoo { models: &entries })?)?;
    } else {
        let style = Style::from(g.stdout);
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
        assert_eq!(err.exit(), Exit::Usage);
        assert!(err.message.contains("mldebug zoo"), "{}", err.message);
    }
}
