//! The one bounded whole number: every flag and every request field that takes a count in a
//! range (`--steps`, `--timeout`, `--batch`, a request's `steps`) is read and checked by a
//! [`Bounded`], so each says what it counts and its range in the same words.

/// A whole number from `lo` to `hi` (both included) and what it counts, in the words of an
/// error: "a step count", "a number of seconds".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded {
    /// The least value taken.
    pub lo: u64,
    /// The greatest value taken.
    pub hi: u64,
    /// What the number counts, with its article.
    pub what: &'static str,
}

impl Bounded {
    /// A whole number from `lo` to `hi` counting `what`.
    pub const fn new(lo: u64, hi: u64, what: &'static str) -> Bounded {
        Bounded { lo, hi, what }
    }

    /// Reads `text` as typed (a flag's value): ASCII digits only, no sign, no space, within
    /// the range. The error quotes `text` and names the range (clap puts the flag in front).
    pub fn parse(&self, text: &str) -> Result<u64, String> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "`{}` is not a whole number ({})",
                text.escape_debug(),
                self.expected()
            ));
        }
        match text.parse::<u64>() {
            Ok(n) if self.contains(n) => Ok(n),
            _ => Err(self.out_of_range(&text.escape_debug().to_string())),
        }
    }

    /// Checks a number already read (a field of a JSON request): the same range and words
    /// as [`Bounded::parse`].
    pub fn check(&self, n: u64) -> Result<u64, String> {
        if self.contains(n) {
            Ok(n)
        } else {
            Err(self.out_of_range(&n.to_string()))
        }
    }

    /// Whether `n` is in the range.
    pub fn contains(&self, n: u64) -> bool {
        (self.lo..=self.hi).contains(&n)
    }

    /// "expected a step count from 1 to 100000".
    fn expected(&self) -> String {
        format!("expected {} from {} to {}", self.what, self.lo, self.hi)
    }

    fn out_of_range(&self, shown: &str) -> String {
        format!("`{shown}` is out of range ({})", self.expected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BATCH: Bounded = Bounded::new(1, 10, "a batch size");

    #[test]
    fn a_whole_number_in_range_is_read_and_anything_else_names_the_range() {
        assert_eq!(BATCH.parse("8"), Ok(8));
        assert_eq!(BATCH.parse("10"), Ok(10));
        for bad in [
            "0",
            "11",
            "-1",
            "+3",
            "3.0",
            "",
            " 3",
            "99999999999999999999999",
        ] {
            let e = BATCH.parse(bad).unwrap_err();
            assert!(
                e.contains("expected a batch size from 1 to 10"),
                "{bad:?}: {e}"
            );
        }
        assert_eq!(
            BATCH.parse("x").unwrap_err(),
            "`x` is not a whole number (expected a batch size from 1 to 10)"
        );
    }

    #[test]
    fn a_number_already_read_is_checked_in_the_same_words() {
        assert_eq!(BATCH.check(1), Ok(1));
        assert_eq!(BATCH.check(11).unwrap_err(), BATCH.parse("11").unwrap_err());
        assert_eq!(
            BATCH.check(0).unwrap_err(),
            "`0` is out of range (expected a batch size from 1 to 10)"
        );
    }
}
