//! Tables for the human output (comfy-table): aligned columns, no borders, a bold header on a
//! terminal; plain and untruncated when piped.

use super::paint::Paint;
use comfy_table::{presets, Attribute, Cell, ContentArrangement, Table};

/// A borderless table with `header`.
pub fn new(header: &[&str], paint: Paint) -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING);
    if paint.color {
        t.enforce_styling();
        t.set_content_arrangement(ContentArrangement::Dynamic);
    } else {
        t.force_no_tty();
        t.set_content_arrangement(ContentArrangement::Disabled);
    }
    t.set_header(header.iter().map(|h| {
        let c = Cell::new(h.to_uppercase());
        if paint.color {
            c.add_attribute(Attribute::Bold)
        } else {
            c
        }
    }));
    t
}

/// Adds a row of data values, each escaped ([`super::terminal::escape`]): the knowledge
/// tables hold catalog text, which `--catalog DIR` reads from files mldebug does not control.
pub fn add_row<S: AsRef<str>>(t: &mut Table, cells: impl IntoIterator<Item = S>) {
    t.add_row(
        cells
            .into_iter()
            .map(|c| super::terminal::escape(c.as_ref()).into_owned())
            .collect::<Vec<_>>(),
    );
}

/// The table as text with trailing spaces trimmed from each line (stable in snapshots).
pub fn to_string(t: &Table) -> String {
    let mut s: String = t
        .to_string()
        .lines()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    s.push('\n');
    s
}
