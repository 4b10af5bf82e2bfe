//! `evidence/<source-id>.yaml`: one source, its metadata and the exact excerpts quoted from it.
//!
//! The schema, field for field: `id, author, title, url, date, status` and `excerpts`, a list of
//! `{id, text, context, status, note, verified_against, topics}`. Unknown fields are errors, so a
//! misspelt field is caught rather than silently ignored.

use super::model::{Excerpt, Location, Problem, QuoteStatus, Source};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceFile {
    id: String,
    author: String,
    title: String,
    url: String,
    date: Scalar,
    status: QuoteStatus,
    excerpts: Vec<ExcerptFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExcerptFile {
    id: String,
    text: String,
    #[serde(default)]
    context: String,
    status: QuoteStatus,
    #[serde(default)]
    note: String,
    #[serde(default)]
    verified_against: String,
    #[serde(default)]
    topics: Vec<String>,
}

/// A date written as `'2019-04-25'`, `2019-04-25` or `2016`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Number(i64),
}

impl Scalar {
    fn into_string(self) -> String {
        match self {
            Scalar::Text(s) => s,
            Scalar::Number(n) => n.to_string(),
        }
    }
}

/// Parse one evidence file. `path` is relative to the catalog root (`evidence/x.yaml`).
pub fn parse(path: &str, text: &str) -> Result<Source, Problem> {
    if let Err(deep) = crate::yaml_depth::check(text.as_bytes()) {
        return Err(Problem {
            location: Location {
                file: path.to_string(),
                line: deep.line,
            },
            message: format!(
                "not a valid evidence file: nested more than {} levels deep",
                crate::yaml_depth::MAX_FLOW_DEPTH
            ),
        });
    }
    let file: SourceFile = serde_norway::from_str(text).map_err(|e| Problem {
        location: Location {
            file: path.to_string(),
            line: e.location().map(|l| l.line()).unwrap_or(1),
        },
        message: format!("not a valid evidence file: {e}"),
    })?;
    Ok(Source {
        id: file.id,
        author: file.author,
        title: file.title,
        url: file.url,
        date: file.date.into_string(),
        status: file.status,
        excerpts: file
            .excerpts
            .into_iter()
            .map(|x| Excerpt {
                id: x.id,
                text: x.text,
                context: x.context,
                status: x.status,
                note: x.note,
                verified_against: x.verified_against,
                topics: x.topics,
            })
            .collect(),
        location: Location {
            file: path.to_string(),
            line: 1,
        },
    })
}

/// The 1-based line of `- id: <id>` (or `id: <id>`) in an evidence file, for messages about
/// one excerpt; line 1 when it cannot be found. For many ids, build [`id_lines`] once.
pub fn line_of_id(text: &str, id: &str) -> usize {
    id_lines(text).get(id).copied().unwrap_or(1)
}

/// The 1-based line of the first `- id: <id>` (or `id: <id>`) of every id in an evidence file,
/// in one pass over the text.
pub fn id_lines(text: &str) -> HashMap<&str, usize> {
    let mut out = HashMap::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim_start().trim_start_matches("- ").trim();
        if let Some(v) = l.strip_prefix("id:") {
            out.entry(v.trim().trim_matches(['\'', '"']))
                .or_insert(i + 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "id: karpathy-recipe\nauthor: Andrej Karpathy\ntitle: A Recipe\nurl: https://x\ndate: 2019-04-25\nstatus: verified-exact\nexcerpts:\n- id: karpathy-a\n  text: Some words.\n  status: verified-exact\n  topics: [a, b]\n";

    #[test]
    fn parses_the_schema() {
        let s = parse("evidence/karpathy-recipe.yaml", GOOD).unwrap();
        assert_eq!(s.id, "karpathy-recipe");
        assert_eq!(s.date, "2019-04-25");
        assert_eq!(s.excerpts[0].topics, ["a", "b"]);
        assert_eq!(s.excerpts[0].status, QuoteStatus::VerifiedExact);
        assert_eq!(line_of_id(GOOD, "karpathy-a"), 8);
    }

    #[test]
    fn numeric_dates_are_text() {
        let s = parse("e.yaml", &GOOD.replace("2019-04-25", "2016")).unwrap();
        assert_eq!(s.date, "2016");
    }

    #[test]
    fn unknown_field_names_the_line() {
        let bad = GOOD.replace("  topics", "  topicz");
        let p = parse("evidence/k.yaml", &bad).unwrap_err();
        assert_eq!(p.location.line, 11, "{p}");
        assert!(p.message.contains("topicz"), "{p}");
    }

    #[test]
    fn bad_status_is_an_error() {
        let p = parse(
            "evidence/k.yaml",
            &GOOD.replace("status: verified-exact\nexc", "status: checked\nexc"),
        )
        .unwrap_err();
        assert_eq!(p.location.line, 6, "{p}");
    }
}
