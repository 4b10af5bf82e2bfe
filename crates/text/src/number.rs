//! How every number mldebug writes for people is formatted: one policy, in named variants.
//!
//! - [`sig`]: a measured value in a check report, a plot label, a progress line: exactly three
//!   significant digits, trailing zeros kept (`2.30`, `0.0153`, `1.20e-5`), so a column of
//!   measurements reads at one precision and float noise between runs does not change the text.
//! - [`num`], [`signed`], [`pval`], [`p_eq`], [`interval`]: statistics and run-log findings
//!   (`sweep-compare`, `doctor`): three significant digits with trailing zeros dropped (`0.84`,
//!   `4`), an explicit sign on differences, p-values floored at `<0.001`, "—" where there is no
//!   number.
//! - [`human_bytes`], [`grouped`], [`human_count`]: sizes and counts (`6.42 GB`,
//!   `1,100,048,384`, `494.0M`).
//!
//! Every variant writes the same text for the same value on every machine, so snapshots stay
//! stable. JSON never goes through here: it carries the full value.

/// Significant digits of [`sig`] and [`num`]: enough to compare with a threshold, few enough that
/// float noise between runs does not change the text.
pub const SIGNIFICANT_DIGITS: usize = 3;

/// Below this magnitude (and at or above [`LARGE`]) a value is written in scientific notation.
const SMALL: f64 = 1e-3;
/// Integral values below this are written in full (step counts, parameter counts).
const LARGE: f64 = 1e6;

/// `x` rounded to [`SIGNIFICANT_DIGITS`]: `2.30`, `0.0153`, `1.20e-5`, `200`, `NaN`, `inf`.
pub fn sig(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs();
    if x.fract() == 0.0 && magnitude < LARGE {
        return format!("{x:.0}");
    }
    // Round once, in scientific form, and read the exponent of the *rounded* value so that
    // 9.996 becomes 10.0 rather than 9.100 or 10.00.
    let scientific = format!("{:.*e}", SIGNIFICANT_DIGITS - 1, x);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes an integer exponent");
    if !(SMALL..LARGE).contains(&magnitude) {
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (SIGNIFICANT_DIGITS as i32 - 1 - exponent).max(0) as usize;
    let rounded: f64 = scientific.parse().expect("`{:e}` output parses back");
    format!("{rounded:.decimals$}")
}

/// `x` with [`SIGNIFICANT_DIGITS`] significant digits, trailing zeros dropped (at least as many decimals as needed), scientific when
/// very large or very small; "—" for NaN, "inf"/"-inf" spelled out.
pub fn num(x: f64) -> String {
    if x.is_nan() {
        return "—".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{x:.2e}");
    }
    let decimals = (SIGNIFICANT_DIGITS as i32 - 1 - mag).clamp(0, 8) as usize;
    trim(format!("{x:.decimals$}"))
}

/// Drop trailing zeros after a decimal point ("0.840" → "0.84", "4.00" → "4").
fn trim(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Like [`num`] with an explicit `+` on positive values (differences).
pub fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", num(x))
    } else {
        num(x)
    }
}

/// A p-value: "<0.001" below that, else three significant digits.
pub fn pval(p: f64) -> String {
    if p.is_nan() {
        "—".into()
    } else if p < 0.001 {
        "<0.001".into()
    } else if p >= 0.9995 {
        "1".into()
    } else {
        let mag = p.log10().floor() as i32;
        let decimals = (2 - mag).clamp(0, 6) as usize;
        format!("{p:.decimals$}")
    }
}

/// "p=0.0625" or "p<0.001".
pub fn p_eq(p: f64) -> String {
    let s = pval(p);
    if s.starts_with('<') {
        format!("p{s}")
    } else {
        format!("p={s}")
    }
}

/// "[lo, hi]" with signs.
pub fn interval(lo: f64, hi: f64) -> String {
    format!("[{}, {}]", signed(lo), signed(hi))
}

/// Bytes for people, in decimal units with three significant figures at most two decimals:
/// `6.42 GB`, `153.6 MB`, `18.0 MB`, `912 B`. GB here is 10^9 bytes, as on the GPU spec sheets
/// that quote decimal sizes and in refs/memory.md.
pub fn human_bytes(bytes: f64) -> String {
    let sign = if bytes < 0.0 { "-" } else { "" };
    let b = bytes.abs();
    let (value, unit) = if b >= 1e12 {
        (b / 1e12, "TB")
    } else if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else if b >= 1e3 {
        (b / 1e3, "KB")
    } else {
        return format!("{sign}{b:.0} B");
    };
    let decimals = if unit == "GB" || unit == "TB" { 2 } else { 1 };
    format!("{sign}{value:.decimals$} {unit}")
}

/// A whole number with thousands separators: `1,100,048,384`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Counts for people: `1.10B`, `494.0M`, `22.5K`, `912`.
pub fn human_count(n: u64) -> String {
    let x = n as f64;
    if x >= 1e9 {
        format!("{:.2}B", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}K", x / 1e3)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_keeps_three_significant_digits() {
        assert_eq!(sig(2.312585), "2.31");
        assert_eq!(sig(0.015349), "0.0153");
        assert_eq!(sig(123.456), "123");
        assert_eq!(sig(1234.5), "1230");
        assert_eq!(sig(-0.5), "-0.500");
    }

    #[test]
    fn sig_rounding_up_carries_into_the_next_digit() {
        assert_eq!(sig(9.996), "10.0");
        assert_eq!(sig(0.09996), "0.100");
        assert_eq!(sig(999.7), "1000");
    }

    #[test]
    fn sig_writes_integers_in_full() {
        assert_eq!(sig(200.0), "200");
        assert_eq!(sig(12345.0), "12345");
        assert_eq!(sig(-3.0), "-3");
    }

    #[test]
    fn sig_tiny_huge_and_non_finite() {
        assert_eq!(sig(1.2e-5), "1.20e-5");
        assert_eq!(sig(3.4e38), "3.40e38");
        assert_eq!(sig(1.0e7 + 0.5), "1.00e7");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(-0.0), "0");
        assert_eq!(sig(f64::NAN), "NaN");
        assert_eq!(sig(f64::INFINITY), "inf");
        assert_eq!(sig(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn statistics_numbers_read_well() {
        assert_eq!(num(81.42), "81.4");
        assert_eq!(num(0.84), "0.84");
        assert_eq!(num(4.0), "4");
        assert_eq!(num(0.0123456), "0.0123");
        assert_eq!(num(1234.6), "1235");
        assert_eq!(num(2.5e-7), "2.50e-7");
        assert_eq!(num(f64::NAN), "—");
        assert_eq!(signed(0.7), "+0.7");
        assert_eq!(pval(0.0625), "0.0625");
        assert_eq!(pval(0.05634), "0.0563");
        assert_eq!(pval(0.00005), "<0.001");
        assert_eq!(p_eq(0.5), "p=0.500");
        assert_eq!(pval(0.03125), "0.0312");
        assert_eq!(interval(-0.1, 0.3), "[-0.1, +0.3]");
    }

    #[test]
    fn sizes_and_counts() {
        assert_eq!(human_bytes(6.42e9), "6.42 GB");
        assert_eq!(human_bytes(153.6e6), "153.6 MB");
        assert_eq!(human_bytes(912.0), "912 B");
        assert_eq!(human_bytes(-2.5e6), "-2.5 MB");
        assert_eq!(grouped(1_100_048_384), "1,100,048,384");
        assert_eq!(grouped(12), "12");
        assert_eq!(human_count(1_100_048_384), "1.10B");
        assert_eq!(human_count(494_032_768), "494.0M");
        assert_eq!(human_count(22_528), "22.5K");
        assert_eq!(human_count(912), "912");
    }
}
