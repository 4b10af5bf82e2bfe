//! How a quote is shown to a person: the words, then who said it, where, and how far the text
//! was checked. An unverified quote says so in words, not only in colour.

use super::paint::Paint;
use super::terminal::{escape, escape_text};
use super::text::{wrap, WRAP};
use crate::catalog::lookup::QuoteHit;
use crate::catalog::QuoteStatus;

/// One quote, as a block of lines ending in a newline.
pub fn quote(q: &QuoteHit, paint: Paint) -> String {
    quote_in(q, paint, None)
}

/// One quote shown inside entry `shown` (which is then not offered as "in: mldebug show ...").
pub fn quote_in(q: &QuoteHit, paint: Paint, shown: Option<&str>) -> String {
    let mut out = wrap(&format!("“{}”", escape_text(&q.text)), WRAP, "  ");
    let date = if q.date.is_empty() {
        String::new()
    } else {
        format!(" ({})", escape(&q.date))
    };
    out.push_str(&format!(
        "    — {}, {}{date}\n",
        paint.bold(&escape(&q.author)),
        escape(&q.title)
    ));
    out.push_str(&format!("      {}\n", paint.cyan(&q.url)));
    out.push_str(&format!("      {}\n", status_line(q.status, paint)));
    let others: Vec<String> = q
        .entries
        .iter()
        .filter(|e| Some(e.as_str()) != shown)
        .map(|e| escape(&mldebug_report::show_command(e)).into_owned())
        .collect();
    if !others.is_empty() {
        out.push_str(&format!(
            "      {}\n",
            paint.dim(&format!("in: {}", others.join(", ")))
        ));
    }
    out
}

/// "status: verified-exact", or a plain warning for an unverified quote.
pub fn status_line(s: QuoteStatus, paint: Paint) -> String {
    match s {
        QuoteStatus::Unverified => format!(
            "status: {} (not checked against the original; folklore in circulation, not a citation)",
            paint.status(s)
        ),
        _ => format!("status: {}", paint.status(s)),
    }
}
