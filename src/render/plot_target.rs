//! Where `--plot PATH` puts SVG files, decided once for every command: a path ending in `.svg`
//! is a file, anything else a folder (created if missing).
//!
//! - A folder receives one file per plot under the plot's own name (`overfit-loss.svg`,
//!   `sweep-compare.svg`).
//! - A file receives the plot when there is one; when a command draws several, each is written
//!   beside it with the plot's name appended (`out.svg` → `out-overfit-loss.svg`), so no plot
//!   overwrites another.
//!
//! Every file is written through a temporary file and a rename: a reader never sees half a plot.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// A `--plot` argument, understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlotTarget {
    File(PathBuf),
    Dir(PathBuf),
}

impl PlotTarget {
    pub fn new(path: &Path) -> PlotTarget {
        let svg = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        if svg {
            PlotTarget::File(path.to_path_buf())
        } else {
            PlotTarget::Dir(path.to_path_buf())
        }
    }

    /// The file for each plot, given the plots' names (file names without `.svg`).
    pub fn paths(&self, names: &[String]) -> Vec<PathBuf> {
        match self {
            PlotTarget::Dir(dir) => names.iter().map(|n| dir.join(format!("{n}.svg"))).collect(),
            PlotTarget::File(file) if names.len() == 1 => vec![file.clone()],
            PlotTarget::File(file) => {
                let stem = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                names
                    .iter()
                    .map(|n| file.with_file_name(format!("{stem}-{n}.svg")))
                    .collect()
            }
        }
    }

    /// Write `(name, svg text)` plots; returns the files written, in order.
    pub fn write(&self, plots: &[(String, String)]) -> Result<Vec<PathBuf>> {
        if plots.is_empty() {
            return Ok(Vec::new());
        }
        if let PlotTarget::Dir(dir) = self {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::input(dir, "--plot", format!("cannot create the directory: {e}"))
            })?;
        }
        let names: Vec<String> = plots.iter().map(|(n, _)| n.clone()).collect();
        let paths = self.paths(&names);
        for (path, (_, text)) in paths.iter().zip(plots) {
            crate::atomic_file::write(path, text.as_bytes()).map_err(|e| {
                Error::io(
                    format_args!("{}: cannot write the plot", path.display()),
                    &e,
                )
            })?;
        }
        Ok(paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_svg_path_is_a_file_anything_else_a_folder() {
        assert_eq!(
            PlotTarget::new(Path::new("a/b.SVG")),
            PlotTarget::File("a/b.SVG".into())
        );
        assert_eq!(
            PlotTarget::new(Path::new("plots")),
            PlotTarget::Dir("plots".into())
        );
        assert_eq!(
            PlotTarget::new(Path::new("plots.d/")),
            PlotTarget::Dir("plots.d/".into())
        );
    }

    #[test]
    fn several_plots_for_one_file_go_beside_it_under_their_names() {
        let file = PlotTarget::new(Path::new("out/run.svg"));
        assert_eq!(file.paths(&names(&["x"])), [PathBuf::from("out/run.svg")]);
        assert_eq!(
            file.paths(&names(&["overfit-loss", "grad-flow-grad-norm"])),
            [
                PathBuf::from("out/run-overfit-loss.svg"),
                PathBuf::from("out/run-grad-flow-grad-norm.svg")
            ]
        );
        let dir = PlotTarget::new(Path::new("out"));
        assert_eq!(
            dir.paths(&names(&["sweep-compare"])),
            [PathBuf::from("out/sweep-compare.svg")]
        );
    }

    #[test]
    fn writes_every_plot_and_creates_the_folder() {
        let t = tempfile::tempdir().unwrap();
        let target = PlotTarget::new(&t.path().join("new"));
        let written = target
            .write(&[
                ("a".into(), "<svg/>".into()),
                ("b".into(), "<svg></svg>".into()),
            ])
            .unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(std::fs::read_to_string(&written[1]).unwrap(), "<svg></svg>");
        assert!(target.write(&[]).unwrap().is_empty());
    }
}
