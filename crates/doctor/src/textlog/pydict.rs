//! The dicts the HF Trainer prints when it logs:
//! `{'loss': 2.3012, 'grad_norm': 1.87, 'learning_rate': 4.9e-05, 'epoch': 0.02}` (newer
//! versions quote the numbers: `'loss': '2.301'`). A dict counts only when it holds a number
//! under a name the trainer logs (a loss, the learning rate, the grad norm, the epoch).

use crate::names::{self, Role};

/// The (key, value) pairs of the first Python dict literal in `text` that looks like a
/// training log, or `None`.
pub fn parse(text: &str) -> Option<Vec<(String, f64)>> {
    let start = text.find("{'").or_else(|| text.find("{\""))?;
    let mut p = Parser {
        s: &text.as_bytes()[start + 1..],
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        p.ws();
        match p.peek()? {
            b'}' => break,
            b',' => {
                p.i += 1;
                continue;
            }
            b'\'' | b'"' => {}
            _ => return None,
        }
        let key = p.string()?;
        p.ws();
        if p.peek()? != b':' {
            return None;
        }
        p.i += 1;
        p.ws();
        if let Some(v) = p.value()? {
            out.push((key, v));
        }
    }
    let logged = out.iter().any(|(k, _)| {
        !matches!(names::role(k), Role::Other) || k == "train_runtime" || k == "total_flos"
    });
    (logged && !out.is_empty()).then_some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// A quoted string (no escapes: keys and values the trainer prints have none).
    fn string(&mut self) -> Option<String> {
        let q = self.peek()?;
        let rest = &self.s[self.i + 1..];
        let end = rest.iter().position(|b| *b == q)?;
        let text = std::str::from_utf8(&rest[..end]).ok()?.to_string();
        self.i += end + 2;
        Some(text)
    }

    /// A value: a number, a quoted number, `nan`/`inf`; `Some(None)` for a value that is not a
    /// number (a string, `None`, a list), which is skipped.
    fn value(&mut self) -> Option<Option<f64>> {
        match self.peek()? {
            b'\'' | b'"' => {
                let s = self.string()?;
                Some(number(&s))
            }
            b'[' | b'(' | b'{' => {
                self.skip_nested()?;
                Some(None)
            }
            _ => {
                let start = self.i;
                while self.peek().is_some_and(|b| b != b',' && b != b'}') {
                    self.i += 1;
                }
                let tok = std::str::from_utf8(&self.s[start..self.i]).ok()?.trim();
                Some(number(tok))
            }
        }
    }

    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'[' | b'(' | b'{' => depth += 1,
                b']' | b')' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
    }
}

/// A number as Python prints it, `nan` and `inf` included.
pub fn number(tok: &str) -> Option<f64> {
    match tok.trim().to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        t => {
            let ok = !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_digit() || b"+-.e".contains(&b))
                && t.bytes().any(|b| b.is_ascii_digit());
            if ok {
                t.parse().ok()
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trainer_dicts_parse() {
        let d =
            parse("{'loss': 2.3012, 'grad_norm': 1.87, 'learning_rate': 4.9e-05, 'epoch': 0.02}")
                .unwrap();
        assert_eq!(d[0], ("loss".into(), 2.3012));
        assert_eq!(d[2], ("learning_rate".into(), 4.9e-05));
        let d =
            parse(" 10%|█ | 5/50 [00:01<00:09]{'loss': '0.6935', 'grad_norm': nan, 'epoch': 1.0}")
                .unwrap();
        assert_eq!(d[0].1, 0.6935);
        assert!(d[1].1.is_nan());
    }

    #[test]
    fn other_dicts_are_not_training_logs() {
        assert!(parse("{'name': 'bert', 'layers': 12}").is_none());
        assert!(parse("{'a': [1, 2], 'loss': 0.5}").is_some());
        assert!(parse("{'loss': 0.5").is_none());
        assert!(parse("no dict here").is_none());
    }
}
