//! Sizes and counts as people type them (`24GB`, `80GiB`, `7B`, `350M`), parsed strictly, and
//! a GPU's memory written back in GiB as PyTorch prints a total capacity (other sizes and counts
//! are written by `mldebug_text::number`).
//!
//! Strict means: a plain decimal number (digits, at most one `.`), then at once a unit from the
//! fixed list, nothing else — no sign, no exponent, no spaces inside, no `NaN`. Anything else is
//! an error that says what was expected; nothing is guessed.

/// Decimal (`KB`, `MB`, `GB`, `TB`: powers of 1000) and binary (`KiB` ... `TiB`: powers of 1024)
/// byte units; a bare number is bytes.
const BYTE_UNITS: [(&str, f64); 9] = [
    ("B", 1.0),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

/// Count suffixes as parameter counts are quoted: thousand, million, billion, trillion.
const COUNT_UNITS: [(&str, f64); 4] = [("K", 1e3), ("M", 1e6), ("B", 1e9), ("T", 1e12)];

/// The largest size accepted: 1 PB (no device is near it; larger is a typo).
pub const MAX_BYTES: f64 = 1e15;
/// The largest parameter count accepted: 100 trillion.
pub const MAX_COUNT: f64 = 1e14;

/// `24GB` → 24e9, `80GiB` → 80·2^30, `1024` → 1024 bytes.
pub fn parse_bytes(text: &str) -> Result<f64, String> {
    let expected = "expected a size such as 24GB, 80GiB or 16000MB (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
    let (number, unit) = split_number(text).ok_or_else(|| bad(text, expected))?;
    let scale = if unit.is_empty() {
        1.0
    } else {
        BYTE_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, s)| *s)
            .ok_or_else(|| bad(text, expected))?
    };
    let bytes = number * scale;
    if bytes <= 0.0 || bytes > MAX_BYTES {
        return Err(format!(
            "`{}` is out of range (expected more than 0 and at most 1 PB)",
            text.escape_debug()
        ));
    }
    Ok(bytes)
}

/// `7B` → 7e9, `1.1B` → 1.1e9, `350M` → 3.5e8, `124439808` → itself. Whole numbers only.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let expected = "expected a count such as 7B, 1.1B, 350M or 124439808 (suffixes: K, M, B, T)";
    let (number, unit) = split_number(text).ok_or_else(|| bad(text, expected))?;
    let scale = if unit.is_empty() {
        1.0
    } else {
        COUNT_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, s)| *s)
            .ok_or_else(|| bad(text, expected))?
    };
    let count = (number * scale).round();
    if !(1.0..=MAX_COUNT).contains(&count) {
        return Err(format!(
            "`{}` is out of range (expected 1 to 100T)",
            text.escape_debug()
        ));
    }
    Ok(count as u64)
}

/// The number and the unit after it, or `None` when the number part is not a plain decimal.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(end);
    let digits = number.bytes().filter(u8::is_ascii_digit).count();
    let dots = number.bytes().filter(|&b| b == b'.').count();
    if digits == 0 || dots > 1 || number.starts_with('.') || number.ends_with('.') {
        return None;
    }
    // At most 15 significant digits: beyond that f64 would round what was typed.
    if digits > 15 {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    Some((value, unit))
}

fn bad(text: &str, expected: &str) -> String {
    format!("`{}` is not understood ({expected})", text.escape_debug())
}

/// A GPU's memory in GiB to two decimals, the unit and precision of PyTorch's "total capacity":
/// a T4's CUDA total `14.58 GiB`, `--gpu-memory 24GB` `22.35 GiB`. A total read this way is what
/// CUDA can hold, so it is never rounded up to the size the card is sold with.
pub fn gpu_memory(bytes: f64) -> String {
    format!("{:.2} GiB", bytes / 1073741824.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_decimal_and_binary_units() {
        assert_eq!(parse_bytes("24GB"), Ok(24e9));
        assert_eq!(parse_bytes("80GiB"), Ok(80.0 * 1073741824.0));
        assert_eq!(parse_bytes("16000MB"), Ok(16e9));
        assert_eq!(parse_bytes("1.5TB"), Ok(1.5e12));
        assert_eq!(parse_bytes("1024"), Ok(1024.0));
    }

    #[test]
    fn anything_but_a_plain_number_and_a_known_unit_is_refused() {
        for bad in [
            "",
            "GB",
            "24 GB",
            "24gb",
            "24G",
            "-24GB",
            "+24GB",
            "1e9",
            "24GBs",
            "2.4.0GB",
            ".5GB",
            "5.GB",
            "NaN",
            "inf",
            "0GB",
            "2PB",
            "１GB",
            "99999999999999999GB",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad:?} was accepted");
        }
        let e = parse_bytes("24 GB").unwrap_err();
        assert!(e.contains("expected a size such as 24GB"), "{e}");
    }

    #[test]
    fn counts_with_suffixes() {
        assert_eq!(parse_count("7B"), Ok(7_000_000_000));
        assert_eq!(parse_count("1.1B"), Ok(1_100_000_000));
        assert_eq!(parse_count("350M"), Ok(350_000_000));
        assert_eq!(parse_count("124439808"), Ok(124_439_808));
        for bad in [
            "",
            "7b",
            "7 B",
            "7BB",
            "-7B",
            "0",
            "0.0000001K",
            "1000T",
            "7e9",
            "B",
        ] {
            assert!(parse_count(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn gpu_memory_in_gib_as_pytorch_prints_it() {
        assert_eq!(gpu_memory(15_655_829_504.0), "14.58 GiB");
        assert_eq!(gpu_memory(79.11 * 1073741824.0), "79.11 GiB");
        assert_eq!(gpu_memory(80.0 * 1073741824.0), "80.00 GiB");
        assert_eq!(gpu_memory(24e9), "22.35 GiB");
    }
}
