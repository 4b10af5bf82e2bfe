//! One-line curves (`▁▂▃▄▅▆▇█`) for a terminal row: the overfit loss at a glance.

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// Drawn where a value is NaN or infinite, so a blow-up shows in the curve.
const NON_FINITE: char = '×';
/// Width of the sparkline in a report row: long enough to show the shape of a training curve,
/// short enough to fit beside a summary on an 80-column terminal.
pub const ROW_WIDTH: usize = 16;

/// `values` drawn in at most `width` characters, scaled between their finite min and max.
/// Longer inputs are split into `width` equal buckets and each bucket shows its mean (or
/// `NON_FINITE` if any value in it is not finite). Empty input gives an empty string.
pub fn sparkline(values: &[f64], width: usize) -> String {
    if values.is_empty() || width == 0 {
        return String::new();
    }
    let buckets: Vec<f64> = bucket_means(values, width);
    let finite = buckets.iter().copied().filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    buckets
        .iter()
        .map(|&v| {
            if !v.is_finite() {
                NON_FINITE
            } else if hi > lo {
                // Halved first: the span of values near ±f64::MAX overflows.
                let level = ((v / 2.0 - lo / 2.0) / (hi / 2.0 - lo / 2.0) * (BARS.len() - 1) as f64)
                    .round() as usize;
                BARS[level.min(BARS.len() - 1)]
            } else {
                BARS[0]
            }
        })
        .collect()
}

fn bucket_means(values: &[f64], width: usize) -> Vec<f64> {
    let n = width.min(values.len());
    (0..n)
        .map(|b| {
            let start = b * values.len() / n;
            let end = ((b + 1) * values.len() / n).max(start + 1);
            let chunk = &values[start..end];
            if chunk.iter().any(|v| !v.is_finite()) {
                f64::NAN
            } else {
                // Each value divided first: a sum of values near f64::MAX overflows.
                let n = chunk.len() as f64;
                chunk.iter().map(|v| v / n).sum::<f64>()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sparkline;

    #[test]
    fn values_near_the_largest_float_still_draw_their_shape() {
        assert_eq!(sparkline(&[9e307, -9e307], 2), "█▁");
        assert_eq!(sparkline(&[1.7e308, 1.7e308, -1.7e308, -1.7e308], 2), "█▁");
    }

    #[test]
    fn a_falling_curve_goes_from_full_to_empty() {
        assert_eq!(
            sparkline(&[8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0], 8),
            "█▇▆▅▄▃▂▁"
        );
    }

    #[test]
    fn long_inputs_are_averaged_into_buckets() {
        let values: Vec<f64> = (0..100).map(|i| 100.0 - i as f64).collect();
        let line = sparkline(&values, 10);
        assert_eq!(line.chars().count(), 10);
        assert!(line.starts_with('█') && line.ends_with('▁'), "{line}");
    }

    #[test]
    fn short_inputs_are_not_stretched() {
        assert_eq!(sparkline(&[1.0, 2.0], 16), "▁█");
    }

    #[test]
    fn non_finite_values_show_as_a_cross() {
        assert_eq!(sparkline(&[2.0, 1.0, f64::NAN], 3), "█▁×");
    }

    #[test]
    fn flat_and_empty_inputs() {
        assert_eq!(sparkline(&[3.0, 3.0, 3.0], 3), "▁▁▁");
        assert_eq!(sparkline(&[], 5), "");
    }
}
