//! Numbers as people read them in reports: three significant digits, the same text for the same
//! value on every machine, so snapshots of the output stay stable.

/// Significant digits shown for a measured value; enough to compare with a threshold, few enough
/// that float noise between runs does not change the text.
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

#[cfg(test)]
mod tests {
    use super::sig;

    #[test]
    fn three_significant_digits() {
        assert_eq!(sig(2.312585), "2.31");
        assert_eq!(sig(0.015349), "0.0153");
        assert_eq!(sig(123.456), "123");
        assert_eq!(sig(1234.5), "1230");
        assert_eq!(sig(-0.5), "-0.500");
    }

    #[test]
    fn rounding_up_carries_into_the_next_digit() {
        assert_eq!(sig(9.996), "10.0");
        assert_eq!(sig(0.09996), "0.100");
        assert_eq!(sig(999.7), "1000");
    }

    #[test]
    fn integers_are_written_in_full() {
        assert_eq!(sig(200.0), "200");
        assert_eq!(sig(12345.0), "12345");
        assert_eq!(sig(-3.0), "-3");
    }

    #[test]
    fn tiny_huge_and_non_finite() {
        assert_eq!(sig(1.2e-5), "1.20e-5");
        assert_eq!(sig(3.4e38), "3.40e38");
        assert_eq!(sig(1.0e7 + 0.5), "1.00e7");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(-0.0), "0");
        assert_eq!(sig(f64::NAN), "NaN");
        assert_eq!(sig(f64::INFINITY), "inf");
        assert_eq!(sig(f64::NEG_INFINITY), "-inf");
    }
}
