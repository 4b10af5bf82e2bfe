//! How numbers are written in verdicts and reports: a few significant digits, p-values with a
//! floor, signs where a difference is meant. One place, so the table, markdown and verdict agree.

/// Significant digits shown for estimates.
const SIG: i32 = 3;

/// `x` with [`SIG`] significant digits (at least as many decimals as needed), scientific when
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
    let decimals = (SIG - 1 - mag).clamp(0, 8) as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(81.42), "81.4");
        assert_eq!(num(0.84), "0.84");
        assert_eq!(num(4.0), "4");
        assert_eq!(num(0.0123456), "0.0123");
        assert_eq!(num(1234.6), "1235");
        assert_eq!(num(2.5e-7), "2.50e-7");
        assert_eq!(signed(0.7), "+0.7");
        assert_eq!(pval(0.0625), "0.0625");
        assert_eq!(pval(0.05634), "0.0563");
        assert_eq!(pval(0.00005), "<0.001");
        assert_eq!(p_eq(0.5), "p=0.500");
        assert_eq!(pval(0.03125), "0.0312");
        assert_eq!(interval(-0.1, 0.3), "[-0.1, +0.3]");
    }
}
