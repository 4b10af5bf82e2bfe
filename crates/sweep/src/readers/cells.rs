//! Single values in JSON run files: numbers (including Python's `NaN` / `Infinity`, which are not
//! JSON but which `json.dumps` writes), and the errors serde_json gives, mapped to a file place.

use crate::Error;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// Stand-ins for Python's non-JSON number tokens, the same length as the token they replace so that
/// line and column numbers in error messages stay right.
const NAN_STANDIN: &[u8] = b"\"N\"";
const INF_STANDIN: &[u8] = b"\"+Infin\"";
const NEG_INF_STANDIN: &[u8] = b"\"-Infin\" ";

/// The UTF-8 byte-order mark some Windows tools put before JSON, which JSON does not allow.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Rewrites bare `NaN`, `Infinity` and `-Infinity` (outside strings) into same-length strings that
/// [`nonfinite`] reads back, and a leading byte-order mark into spaces. Borrows when there is
/// nothing to rewrite, which is the common case.
pub fn sanitize_nonfinite(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    if bytes.starts_with(BOM) {
        let mut o = bytes.to_vec();
        o[..BOM.len()].fill(b' ');
        out = Some(o);
    }
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let (token, standin): (&[u8], &[u8]) = match b {
            b'"' => {
                in_string = true;
                i += 1;
                continue;
            }
            b'N' => (b"NaN", NAN_STANDIN),
            b'I' => (b"Infinity", INF_STANDIN),
            b'-' => (b"-Infinity", NEG_INF_STANDIN),
            _ => {
                i += 1;
                continue;
            }
        };
        if bytes[i..].starts_with(token) {
            let o = out.get_or_insert_with(|| bytes.to_vec());
            o[i..i + token.len()].copy_from_slice(standin);
            i += token.len();
        } else {
            i += 1;
        }
    }
    match out {
        Some(v) => Cow::Owned(v),
        None => Cow::Borrowed(bytes),
    }
}

/// A string that stands for a non-finite number: our stand-ins, and the spellings Python, W&B and
/// pandas use when they write one as text.
pub fn nonfinite(s: &str) -> Option<f64> {
    match s {
        "N" | "NaN" | "nan" | "NAN" => Some(f64::NAN),
        "+Infin" | "Infinity" | "inf" | "+inf" | "+Infinity" => Some(f64::INFINITY),
        "-Infin" | "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// A number from a JSON value, if it is one (or a non-finite spelling).
pub fn number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => nonfinite(s),
        _ => None,
    }
}

/// One JSON value where a metric value is expected.
#[derive(Debug)]
pub enum Cell {
    Num(f64),
    Null,
    /// A string that is not a number.
    Text(String),
    /// A boolean, object or array, described for the error message.
    Other(&'static str),
}

impl Cell {
    /// Describes a non-numeric cell for an error message.
    pub fn describe(&self) -> String {
        match self {
            Cell::Text(t) => format!("the string {t:?}"),
            Cell::Other(what) => (*what).to_string(),
            Cell::Num(_) | Cell::Null => String::new(),
        }
    }
}

struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Cell, E> {
        Ok(Cell::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Cell, E> {
        Ok(Cell::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Cell, E> {
        Ok(Cell::Num(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cell, E> {
        Ok(nonfinite(v).map_or_else(|| Cell::Text(v.to_string()), Cell::Num))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Cell, E> {
        Ok(Cell::Other(if v { "true" } else { "false" }))
    }
    fn visit_unit<E>(self) -> Result<Cell, E> {
        Ok(Cell::Null)
    }
    fn visit_none<E>(self) -> Result<Cell, E> {
        Ok(Cell::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Cell, D::Error> {
        Cell::deserialize(d)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Cell::Other("an object"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cell, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Cell::Other("an array"))
    }
}

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CellVisitor)
    }
}

/// Builds a positioned error for a value found where a number was expected.
pub fn not_a_number<E: de::Error>(what: fmt::Arguments<'_>, cell: &Cell) -> E {
    E::custom(format!("{what} is not a number: found {}", cell.describe()))
}

/// Maps a serde_json error to an input error naming the file, line and column.
/// `line_base` is added to the line (for one JSON document per line of a `.jsonl` file, the
/// document's own line is 1).
pub fn json_error(path: &Path, e: &serde_json::Error, line_base: usize) -> Error {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = full.strip_suffix(&suffix).unwrap_or(&full);
    let msg = if e.is_eof() {
        format!("JSON ends early: {msg} (truncated?)")
    } else if e.is_syntax() {
        format!("JSON syntax error: {msg}")
    } else {
        msg.to_string()
    };
    if e.line() == 0 {
        return Error::input(path, "JSON", msg);
    }
    Error::input(
        path,
        format_args!("line {}, column {}", e.line() + line_base, e.column()),
        msg,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_nonfinite_tokens_become_numbers_and_keep_positions() {
        let src = br#"{"a": NaN, "b": -Infinity, "c": Infinity, "s": "NaN inside", "d": 1}"#;
        let clean = sanitize_nonfinite(src);
        assert_eq!(clean.len(), src.len());
        let v: serde_json::Value = serde_json::from_slice(&clean).unwrap();
        assert!(number(&v["a"]).unwrap().is_nan());
        assert_eq!(number(&v["b"]), Some(f64::NEG_INFINITY));
        assert_eq!(number(&v["c"]), Some(f64::INFINITY));
        assert_eq!(v["s"], "NaN inside");
        assert!(matches!(
            sanitize_nonfinite(b"{\"x\": 1}"),
            Cow::Borrowed(_)
        ));
        let bom = sanitize_nonfinite(b"\xef\xbb\xbf{\"x\": NaN}");
        assert_eq!(&bom[..], b"   {\"x\": \"N\"}");
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let src = br#"{"k": "say \"NaN\"", "v": NaN}"#;
        let v: serde_json::Value = serde_json::from_slice(&sanitize_nonfinite(src)).unwrap();
        assert_eq!(v["k"], "say \"NaN\"");
        assert!(number(&v["v"]).unwrap().is_nan());
    }
}
