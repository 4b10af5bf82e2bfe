//! The ranges every plot's axes are drawn on: finite, ordered, and of a span that plotters can
//! place ticks on. plotters loops forever on an axis whose span is not finite (±9e307 overflows
//! it), and a log axis whose ends are too many decades apart steps through them one by one;
//! every axis mldebug draws (`check`, `doctor`, `sweep-compare`) is built here instead.
//!
//! Non-finite values never set a range; finite values beyond [`MAX_MAGNITUDE`] are drawn at the
//! edge of an axis clipped there, and [`Axis::clipped`] says so for the plot's caption.

/// Axis ends are kept within ± this: the span between two ends and a padding of it stay finite
/// (2e300 is far below f64::MAX, 1.8e308), with room to spare for any value a run logs.
pub const MAX_MAGNITUDE: f64 = 1e300;

/// The least span of a linear axis, relative to its ends' magnitude: ticks one step apart must
/// differ in f64 (whose precision is 2.2e-16), with a margin for plotters' rounding.
const MIN_RELATIVE_SPAN: f64 = 1e-9;

/// The least span of a linear axis at all (ends at or near 0): far above the subnormals, where
/// division by the span would overflow.
const MIN_SPAN: f64 = 1e-290;

/// The most decades a log axis spans: a span of 1e-300 to 1e300 would put 600 labels on it,
/// and a ratio beyond f64::MAX makes plotters count its decades forever.
pub const MAX_LOG_DECADES: f64 = 60.0;

/// The smallest lower end of a log axis: above the subnormals, where `lo / 10` underflows to 0.
const MIN_LOG: f64 = 1e-290;

/// One axis: its ends, and whether values had to be left out of it or drawn at its edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    /// Some finite value lies beyond the axis and is drawn at its edge.
    pub clipped: bool,
}

impl Axis {
    /// `v` moved onto the axis (NaN stays NaN: callers leave it out).
    pub fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.lo, self.hi)
    }

    /// Whether `v` lies on the axis.
    pub fn contains(&self, v: f64) -> bool {
        (self.lo..=self.hi).contains(&v)
    }
}

/// The linear axis holding the finite `values`, widened by `pad` (a fraction of the span) on
/// each side; 0 to 1 when there are none.
pub fn linear(values: impl IntoIterator<Item = f64>, pad: f64) -> Axis {
    let (lo, hi) = extent(values);
    linear_between(lo, hi, pad)
}

/// The linear axis from `lo` to `hi` (in either order), widened by `pad` of its span on each
/// side, made finite and wide enough to tick.
pub fn linear_between(lo: f64, hi: f64, pad: f64) -> Axis {
    if !lo.is_finite() || !hi.is_finite() {
        return match (lo.is_finite(), hi.is_finite()) {
            (true, false) => linear_between(lo, lo, pad),
            (false, true) => linear_between(hi, hi, pad),
            _ => Axis {
                lo: 0.0,
                hi: 1.0,
                clipped: false,
            },
        };
    }
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let clipped = lo < -MAX_MAGNITUDE || hi > MAX_MAGNITUDE;
    let (lo, hi) = (
        lo.clamp(-MAX_MAGNITUDE, MAX_MAGNITUDE),
        hi.clamp(-MAX_MAGNITUDE, MAX_MAGNITUDE),
    );
    let magnitude = lo.abs().max(hi.abs());
    let least = (magnitude * MIN_RELATIVE_SPAN).max(MIN_SPAN);
    let (lo, hi) = if hi - lo < least {
        // One value (or a few within rounding): a visible band around it.
        let half = (magnitude * 0.1)
            .max(least)
            .max(if magnitude == 0.0 { 0.5 } else { 0.0 });
        (lo - half, hi + half)
    } else {
        let pad = if pad.is_finite() {
            pad.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let p = (hi - lo) * pad;
        (lo - p, hi + p)
    };
    Axis {
        lo: lo.max(-2.0 * MAX_MAGNITUDE),
        hi: hi.min(2.0 * MAX_MAGNITUDE),
        clipped,
    }
}

/// A log axis from `lo` to `hi` (`0 <= lo < hi`; `hi` may have overflowed to infinity),
/// narrowed to [`MAX_LOG_DECADES`] below `hi` and kept off the subnormals; `None` when no log
/// axis can hold them.
pub fn log_between(lo: f64, hi: f64) -> Option<Axis> {
    if !(lo.is_finite() && lo >= 0.0 && lo < hi) {
        return None;
    }
    let top = hi.min(MAX_MAGNITUDE);
    let floor = (top / 10f64.powf(MAX_LOG_DECADES)).max(MIN_LOG);
    let bottom = lo.max(floor);
    if bottom >= top {
        return None;
    }
    Some(Axis {
        lo: bottom,
        hi: top,
        clipped: bottom > lo || top < hi,
    })
}

/// The least and greatest finite value (infinities when there is none).
pub fn extent(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

/// The words a caption adds when an axis was clipped.
pub const CLIPPED_NOTE: &str = "values beyond the axis drawn at its edge";

#[cfg(test)]
mod tests {
    use super::*;

    fn sane(a: Axis) {
        assert!(a.lo.is_finite() && a.hi.is_finite(), "{a:?}");
        assert!(a.hi > a.lo, "{a:?}");
        assert!((a.hi - a.lo).is_finite(), "{a:?}");
        let mag = a.lo.abs().max(a.hi.abs());
        assert!(a.hi - a.lo >= mag * 1e-12, "{a:?}");
    }

    #[test]
    fn every_range_is_finite_ordered_and_wide_enough() {
        let cases = [
            (9e307, -9e307),
            (f64::MAX, f64::MIN),
            (f64::INFINITY, 1.0),
            (f64::NAN, f64::NAN),
            (f64::NEG_INFINITY, f64::INFINITY),
            (5e-324, 5e-324),
            (0.0, 0.0),
            (1e17, 1e17 + 16.0),
            (-1e300, -1e300),
            (1.0, 2.0),
        ];
        for (lo, hi) in cases {
            for pad in [0.0, 0.05, 0.08, 7.0, f64::NAN] {
                sane(linear_between(lo, hi, pad));
            }
        }
        sane(linear([f64::NAN, f64::INFINITY], 0.1));
    }

    #[test]
    fn overflowing_values_are_clipped_and_said_to_be() {
        let a = linear([9e307, -9e307, 1.0], 0.05);
        assert!(a.clipped);
        assert!(a.hi >= MAX_MAGNITUDE && a.lo <= -MAX_MAGNITUDE);
        assert_eq!(a.clamp(9e307), a.hi);
        let b = linear([0.5, 2.5], 0.0);
        assert!(!b.clipped);
        assert_eq!((b.lo, b.hi), (0.5, 2.5));
    }

    #[test]
    fn a_log_axis_spans_a_bounded_number_of_decades() {
        let a = log_between(5e-324, 1e308).unwrap();
        assert!(a.clipped);
        assert!((a.hi / a.lo).log10() <= MAX_LOG_DECADES + 1e-9);
        assert!(log_between(-1.0, 1.0).is_none());
        assert!(log_between(f64::NAN, 1.0).is_none());
        assert!(log_between(1.0, f64::NAN).is_none());
        let c = log_between(0.0, f64::INFINITY).unwrap();
        assert!(c.clipped && c.hi == MAX_MAGNITUDE && c.lo > 0.0);
        assert!(log_between(2.0, 1.0).is_none());
        let b = log_between(0.002, 2.3).unwrap();
        assert_eq!((b.lo, b.hi, b.clipped), (0.002, 2.3, false));
    }
}
