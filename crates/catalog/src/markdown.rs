//! One Markdown file of the catalog → entries, quotes, footnotes, check mentions and symptom rows,
//! following README "Markdown conventions". Structural mistakes (a block quote without a source,
//! a broken symptoms table) become [`Problem`]s with the file and line; nothing here reads files.

mod quotes;
mod scan;
mod symptoms;

pub use scan::{check_ids_in, footnote_labels_in, normalise};

use super::limits::{escape_cut, MAX_MESSAGE_CHARS};
use super::lines::LineIndex;
use super::model::{CheckMention, Entry, Footnote, Location, Problem, Quote, Symptom};
use mldebug_report::CheckId;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::collections::HashSet;
use std::ops::Range;

/// The id of the PLAYBOOK heading whose table lists the symptoms.
pub const SYMPTOMS_ID: &str = "symptoms";

/// The id of the PLAYBOOK heading whose table lists what `mldebug doctor` finds in a run's
/// logs: rows like the symptom table's, kept apart so that triage (how people describe a
/// problem) is not matched against a detector's vocabulary.
pub const LOG_SYMPTOMS_ID: &str = "log-symptoms";
/// The marker a quote from an unverified excerpt carries after its footnote reference.
pub const UNVERIFIED_MARKER: &str = "(unverified)";
/// Between the cells of a table row in an entry's body.
const CELL_SEPARATOR: &str = " | ";
/// The columns of the symptoms table, by the start of their header text.
pub const SYMPTOM_COLUMNS: [&str; 3] = ["symptom", "hypotheses", "checks"];

/// The pulldown-cmark options the catalog is written for.
pub fn options() -> Options {
    Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_TABLES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
}

/// What one Markdown file holds. Quote and entry indices are local to the file.
#[derive(Debug, Default)]
pub struct FileParse {
    /// Sections with an `{#id}`.
    pub entries: Vec<Entry>,
    /// Block quotes ending in a footnote reference.
    pub quotes: Vec<Quote>,
    /// Footnote definitions.
    pub footnotes: Vec<Footnote>,
    /// Every footnote reference (in quotes and in prose), by label.
    pub footnote_refs: Vec<(String, Location)>,
    /// Every `mldebug check <id>` written in the file.
    pub check_mentions: Vec<CheckMention>,
    /// Rows of the `{#symptoms}` table.
    pub symptoms: Vec<Symptom>,
    /// Rows of the `{#log-symptoms}` table.
    pub log_symptoms: Vec<Symptom>,
    /// Whether the file has a `{#symptoms}` heading.
    pub has_symptoms_heading: bool,
    /// The destination of every link and image, as written, with its place.
    pub links: Vec<(String, Location)>,
    /// What is wrong in the file, at its place.
    pub problems: Vec<Problem>,
}

/// A block quote being read.
struct OpenQuote {
    start: usize,
    text: String,
    /// The same words with code spans as written (backticks kept).
    literal: String,
    source: Option<String>,
    extra_sources: usize,
    after: String,
}

/// A table being read (only the symptoms table is kept).
struct OpenTable {
    symptoms: bool,
    /// The table under `{#log-symptoms}` (read like the symptoms table, kept apart).
    log: bool,
    in_head: bool,
    header: Vec<String>,
    row: Vec<Cell>,
    row_start: usize,
}

#[derive(Default)]
struct Cell {
    text: String,
    code: Vec<String>,
}

/// A heading being read: level, `{#id}`, `.classes`, title text, start offset.
struct OpenHeading {
    level: u8,
    id: Option<String>,
    tags: Vec<String>,
    title: String,
    start: usize,
}

struct HeadingFrame {
    level: u8,
    title: String,
    entry: Option<usize>,
}

struct Reader<'a> {
    path: &'a str,
    text: &'a str,
    lines: LineIndex,
    out: FileParse,
    stack: Vec<HeadingFrame>,
    heading: Option<OpenHeading>,
    quote_depth: usize,
    quote: Option<OpenQuote>,
    footnote: Option<(String, String, usize)>,
    table: Option<OpenTable>,
    table_ranges: Vec<Range<usize>>,
    symptoms_range: Option<(u8, Range<usize>)>,
    in_code_block: bool,
    /// The plain text of the current paragraph (or cell, item), to spot undefined footnotes.
    inline: String,
    inline_start: usize,
    in_metadata: bool,
    /// (entry, command) pairs already recorded, so a repeated command costs one lookup.
    seen_commands: HashSet<(usize, String)>,
}

/// Parse one Markdown file; `path` is relative to the catalog root.
pub fn parse(path: &str, text: &str) -> FileParse {
    let mut r = Reader {
        path,
        text,
        lines: LineIndex::new(text),
        out: FileParse::default(),
        stack: Vec::new(),
        heading: None,
        quote_depth: 0,
        quote: None,
        footnote: None,
        table: None,
        table_ranges: Vec::new(),
        symptoms_range: None,
        in_code_block: false,
        inline: String::new(),
        inline_start: 0,
        in_metadata: false,
        seen_commands: HashSet::new(),
    };
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        r.event(event, range);
    }
    r.finish()
}

impl<'a> Reader<'a> {
    fn at(&self, offset: usize) -> Location {
        Location {
            file: self.path.to_string(),
            line: self.lines.line(offset),
        }
    }

    fn problem(&mut self, offset: usize, message: impl Into<String>) {
        let location = self.at(offset);
        self.out.problems.push(Problem {
            location,
            message: message.into(),
        });
    }

    /// The innermost heading that is an entry.
    fn current_entry(&self) -> Option<usize> {
        self.stack.iter().rev().find_map(|h| h.entry)
    }

    fn event(&mut self, event: Event<'a>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag, range),
            Event::Text(t) => self.text(&t, range, false),
            Event::Code(t) => self.text(&t, range, true),
            Event::SoftBreak | Event::HardBreak => self.text(" ", range, false),
            Event::FootnoteReference(label) => self.footnote_ref(label.to_string(), range),
            Event::Html(_) | Event::InlineHtml(_) => {}
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t, range, false),
            Event::Rule | Event::TaskListMarker(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'a>, range: Range<usize>) {
        match tag {
            Tag::Heading {
                level, id, classes, ..
            } => {
                self.heading = Some(OpenHeading {
                    level: heading_level(level),
                    id: id.map(|s| s.to_string()),
                    tags: classes.iter().map(|c| c.to_string()).collect(),
                    title: String::new(),
                    start: range.start,
                });
            }
            Tag::BlockQuote(_) => {
                self.quote_depth += 1;
                if self.quote_depth == 1 && self.footnote.is_none() {
                    self.quote = Some(OpenQuote {
                        start: range.start,
                        text: String::new(),
                        literal: String::new(),
                        source: None,
                        extra_sources: 0,
                        after: String::new(),
                    });
                }
            }
            Tag::FootnoteDefinition(label) => {
                self.footnote = Some((label.to_string(), String::new(), range.start));
            }
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let location = self.at(range.start);
                self.out.links.push((dest_url.to_string(), location));
            }
            Tag::CodeBlock(_) => self.in_code_block = true,
            Tag::MetadataBlock(_) => self.in_metadata = true,
            Tag::Table(_) => {
                self.table_ranges.push(range.clone());
                let section = self
                    .stack
                    .iter()
                    .rev()
                    .find_map(|h| h.entry)
                    .map(|i| self.out.entries[i].id.as_str());
                let log = section == Some(LOG_SYMPTOMS_ID);
                self.table = Some(OpenTable {
                    symptoms: section == Some(SYMPTOMS_ID) || log,
                    log,
                    in_head: false,
                    header: Vec::new(),
                    row: Vec::new(),
                    row_start: range.start,
                });
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                    t.row.clear();
                    t.row_start = range.start;
                }
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.row.clear();
                    t.row_start = range.start;
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.row.push(Cell::default());
                }
            }
            Tag::Item => {
                self.body_push("- ");
                self.quote_space();
            }
            Tag::Paragraph => self.quote_space(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        if matches!(
            tag,
            TagEnd::Paragraph | TagEnd::TableCell | TagEnd::Item | TagEnd::Heading(_)
        ) {
            self.check_undefined_footnotes();
        }
        match tag {
            TagEnd::Heading(_) => self.end_heading(),
            TagEnd::BlockQuote(_) => {
                self.quote_depth = self.quote_depth.saturating_sub(1);
                if self.quote_depth == 0 {
                    if let Some(q) = self.quote.take() {
                        self.end_quote(q);
                    }
                }
            }
            TagEnd::FootnoteDefinition => {
                if let Some((label, text, start)) = self.footnote.take() {
                    let location = self.at(start);
                    self.out.footnotes.push(Footnote {
                        label,
                        text: normalise(&text),
                        location,
                    });
                }
            }
            TagEnd::CodeBlock => {
                self.in_code_block = false;
                self.body_break("\n\n");
            }
            TagEnd::Paragraph => self.body_break("\n\n"),
            TagEnd::Item => self.body_break("\n"),
            TagEnd::TableCell => self.body_push(CELL_SEPARATOR),
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = false;
                    t.header = t.row.iter().map(|c| normalise(&c.text)).collect();
                    if t.symptoms {
                        let start = t.row_start;
                        let header = t.header.clone();
                        self.check_symptom_header(&header, start);
                    }
                }
                self.body_break("\n");
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    if t.symptoms {
                        let cells = std::mem::take(&mut t.row);
                        let (start, log) = (t.row_start, t.log);
                        self.symptom_row(cells, start, range.end, log);
                    }
                }
                self.body_break("\n");
            }
            TagEnd::Table => {
                self.table = None;
                self.body_break("\n\n");
            }
            TagEnd::List(_) => self.body_break("\n\n"),
            TagEnd::MetadataBlock(_) => self.in_metadata = false,
            _ => {}
        }
    }

    fn end_heading(&mut self) {
        let Some(OpenHeading {
            level,
            id,
            tags,
            title,
            start,
        }) = self.heading.take()
        else {
            return;
        };
        let mut title = normalise(&title);
        if title.chars().count() > MAX_MESSAGE_CHARS {
            title = escape_cut(&title, MAX_MESSAGE_CHARS);
            self.problem(
                start,
                format!("heading longer than {MAX_MESSAGE_CHARS} characters"),
            );
        }
        while self.stack.last().is_some_and(|h| h.level >= level) {
            self.stack.pop();
        }
        let entry = id.map(|id| {
            if id == SYMPTOMS_ID {
                self.out.has_symptoms_heading = true;
            }
            let section = self
                .stack
                .iter()
                .rev()
                .find(|h| h.level < level)
                .map(|h| h.title.clone());
            let location = self.at(start);
            self.out.entries.push(Entry {
                id,
                title: title.clone(),
                section,
                level,
                body: String::new(),
                quotes: Vec::new(),
                checks: Vec::new(),
                commands: Vec::new(),
                tags,
                location,
            });
            self.out.entries.len() - 1
        });
        // The symptoms section runs until the next heading of the same or a higher level.
        if let Some((sym_level, r)) = &mut self.symptoms_range {
            if r.end == usize::MAX && level <= *sym_level {
                r.end = start;
            }
        }
        if entry.is_some_and(|i| self.out.entries[i].id == SYMPTOMS_ID) {
            self.symptoms_range = Some((level, start..usize::MAX));
        }
        self.stack.push(HeadingFrame {
            level,
            title,
            entry,
        });
    }

    fn text(&mut self, t: &str, range: Range<usize>, inline_code: bool) {
        if self.in_metadata {
            return;
        }
        if !inline_code && !self.in_code_block {
            if self.inline.is_empty() {
                self.inline_start = range.start;
            }
            self.inline.push_str(t);
        }
        if let Some(h) = &mut self.heading {
            h.title.push_str(t);
            return;
        }
        self.scan_commands(t, range.start, inline_code);
        if let Some(f) = &mut self.footnote {
            f.1.push_str(t);
            return;
        }
        if let Some(q) = &mut self.quote {
            if q.source.is_some() {
                q.after.push_str(t);
            } else {
                q.text.push_str(t);
                q.literal.push_str(if inline_code {
                    &self.text[range.clone()]
                } else {
                    t
                });
            }
            return;
        }
        if let Some(table) = &mut self.table {
            if let Some(cell) = table.row.last_mut() {
                cell.text.push_str(t);
                if inline_code {
                    cell.code.push(t.trim().to_string());
                }
            }
        }
        if let Some(i) = self.current_entry() {
            self.out.entries[i].body.push_str(t);
        }
    }

    /// Record every `mldebug ...` command and every `mldebug check <id>` in `t`.
    fn scan_commands(&mut self, t: &str, offset: usize, inline_code: bool) {
        let entry = self.current_entry();
        for line in t.lines() {
            let cmd = line.trim().trim_start_matches("$ ");
            if (inline_code || self.in_code_block) && cmd.starts_with("mldebug ") {
                if let Some(i) = entry {
                    if self.seen_commands.insert((i, cmd.to_string())) {
                        self.out.entries[i].commands.push(cmd.to_string());
                    }
                }
            }
        }
        for (at, id) in check_ids_in(t) {
            let location = self.at(offset + at);
            if let (Some(i), Ok(check)) = (entry, id.parse::<CheckId>()) {
                let checks = &mut self.out.entries[i].checks;
                if !checks.contains(&check) {
                    checks.push(check);
                }
            }
            self.out.check_mentions.push(CheckMention { id, location });
        }
    }

    /// The entry body being written, if text now belongs to one (not to a quote or footnote).
    fn body(&mut self) -> Option<&mut String> {
        if self.quote.is_some() || self.footnote.is_some() || self.heading.is_some() {
            return None;
        }
        let i = self.current_entry()?;
        Some(&mut self.out.entries[i].body)
    }

    fn body_push(&mut self, s: &str) {
        if let Some(body) = self.body() {
            body.push_str(s);
        }
    }

    /// End a line (`"\n"`) or a paragraph (`"\n\n"`) of the body.
    fn body_break(&mut self, sep: &str) {
        if let Some(body) = self.body() {
            let kept = body
                .trim_end_matches(CELL_SEPARATOR)
                .trim_end_matches(' ')
                .len();
            body.truncate(kept);
            if body.is_empty() || body.ends_with("\n\n") || body.ends_with(sep) {
                return;
            }
            if sep == "\n\n" && body.ends_with('\n') {
                body.push('\n');
            } else {
                body.push_str(sep);
            }
        }
    }

    fn finish(mut self) -> FileParse {
        self.check_symptoms_section();
        if self.quote.is_some() || self.footnote.is_some() {
            self.problem(
                self.text.len(),
                "the file ends inside a block quote or footnote",
            );
        }
        self.out.problems.sort();
        self.out.problems.dedup();
        for e in &mut self.out.entries {
            e.body = e.body.trim().to_string();
        }
        self.out
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn push_space(s: &mut String) {
    if !s.is_empty() && !s.ends_with(' ') {
        s.push(' ');
    }
}

#[cfg(test)]
mod tests;
