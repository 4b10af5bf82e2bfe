//! A small CSV parser (RFC 4180 quoting, quoted cells may span lines) that keeps the line each
//! record starts on, for error messages.

use crate::{Error, Result};
use std::path::Path;

/// One CSV record and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub line: usize,
    pub cells: Vec<String>,
}

/// Every non-empty record of `text`.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Record>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut line = 1usize;
    let mut start = 1usize;
    let mut quote_line = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => {
                quoted = !quoted;
                quote_line = line;
            }
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            '\r' if !quoted && chars.peek() == Some(&'\n') => {}
            '\n' if !quoted => {
                cells.push(std::mem::take(&mut cell));
                let blank = cells.len() == 1 && cells[0].trim().is_empty();
                if !blank {
                    records.push(Record {
                        line: start,
                        cells: std::mem::take(&mut cells),
                    });
                }
                cells.clear();
                line += 1;
                start = line;
            }
            '\n' => {
                cell.push(c);
                line += 1;
            }
            c => cell.push(c),
        }
    }
    if quoted {
        return Err(Error::input(
            path,
            format_args!("line {quote_line}"),
            "a quoted cell is never closed (the file is truncated?)",
        ));
    }
    cells.push(cell);
    if !(cells.len() == 1 && cells[0].trim().is_empty()) {
        records.push(Record { line: start, cells });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_blank_lines_and_line_numbers() {
        let text = "\u{feff}a,b,c\r\n\n1,\"x, \"\"y\"\"\",\"two\nlines\"\n3,,\n";
        let r = parse(Path::new("t.csv"), text).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].cells, ["a", "b", "c"]);
        assert_eq!(
            (r[1].line, r[1].cells.clone()),
            (3, vec!["1".into(), "x, \"y\"".into(), "two\nlines".into()])
        );
        assert_eq!(
            (r[2].line, r[2].cells.clone()),
            (5, vec!["3".into(), String::new(), String::new()])
        );
    }

    #[test]
    fn an_unclosed_quote_is_an_error() {
        let e = parse(Path::new("t.csv"), "a,b\n1,\"open\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv: line 2: a quoted cell is never closed (the file is truncated?)"
        );
    }
}
