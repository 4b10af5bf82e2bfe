//! Block quotes and footnotes: a quote ends in its one footnote reference (and may carry the
//! `*(unverified)*` marker), and a `[^label]` left as plain text is a reference to nothing.

use super::super::limits::shown;
use super::{footnote_labels_in, normalise, push_space, OpenQuote, Reader, UNVERIFIED_MARKER};
use crate::model::Quote;
use std::ops::Range;

impl Reader<'_> {
    pub(super) fn end_quote(&mut self, q: OpenQuote) {
        let text = normalise(&q.text);
        let literal = normalise(&q.literal);
        let Some(source) = q.source else {
            self.problem(
                q.start,
                "block quote without a source: end it with a footnote reference, e.g. `> The words.[^source-id]`",
            );
            return;
        };
        if q.extra_sources > 0 {
            self.problem(
                q.start,
                "block quote with more than one footnote reference: one block quote, one quote",
            );
        }
        let after = normalise(&q.after);
        let marked_unverified = after == UNVERIFIED_MARKER;
        if !after.is_empty() && !marked_unverified {
            self.problem(
                q.start,
                format!(
                    "text after the quote's footnote reference: `{}` (only `*(unverified)*` may follow it)",
                    shown(&after)
                ),
            );
        }
        if text.is_empty() {
            self.problem(
                q.start,
                "block quote with no words before its footnote reference",
            );
        }
        let entry = self.current_entry();
        let location = self.at(q.start);
        self.out.quotes.push(Quote {
            text,
            literal,
            source,
            marked_unverified,
            entry: entry.map(|i| self.out.entries[i].id.clone()),
            excerpt: None,
            location,
        });
        if let Some(i) = entry {
            let n = self.out.quotes.len() - 1;
            self.out.entries[i].quotes.push(n);
        }
    }

    pub(super) fn footnote_ref(&mut self, label: String, range: Range<usize>) {
        let location = self.at(range.start);
        self.out.footnote_refs.push((label.clone(), location));
        if let Some(q) = &mut self.quote {
            if q.source.is_none() {
                q.source = Some(label);
            } else {
                q.extra_sources += 1;
            }
        }
    }

    /// A `[^label]` left as text is a reference to a footnote that is not defined.
    pub(super) fn check_undefined_footnotes(&mut self) {
        let text = std::mem::take(&mut self.inline);
        let mut labels: Vec<&str> = footnote_labels_in(&text)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        labels.sort_unstable();
        labels.dedup();
        for label in labels {
            self.problem(
                self.inline_start,
                format!(
                    "footnote [^{}] has no definition in this file",
                    shown(label)
                ),
            );
        }
    }

    /// A paragraph or item inside a quote starts with a space.
    pub(super) fn quote_space(&mut self) {
        if let Some(q) = &mut self.quote {
            if q.source.is_some() {
                push_space(&mut q.after);
            } else {
                push_space(&mut q.text);
                push_space(&mut q.literal);
            }
        }
    }
}
