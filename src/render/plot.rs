//! SVG plots of the curves behind a finding (`--plot PATH`, see [`super::plot_target`]): the overfit loss per step and the
//! gradient-norm profile per parameter. Drawn into a string first, so a failed plot leaves no
//! half-written file.

use super::axis;
use super::plot_target::PlotTarget;
use crate::{Error, Result};
use mldebug_diagnostics::report::Series;
use mldebug_diagnostics::{Finding, Report};
use mldebug_text::number::sig;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::path::PathBuf;

/// A loss curve is drawn on a log axis when it spans at least this ratio (max / min): falling
/// from 2.3 to 0.002 is then visible all the way down instead of a cliff and a flat line.
const LOG_SPAN: f64 = 100.0;
/// Pixels per parameter row in the gradient-norm profile: room for one line of label text.
const ROW_PX: u32 = 22;
/// Blank pixels above and below each bar, so neighbouring parameters read as separate rows.
const BAR_GAP_PX: u32 = 3;
/// Approximate width of one label character at the plot's font size (for the label margin).
const CHAR_PX: u32 = 9;
const WIDTH_PX: u32 = 900;
const LINE_HEIGHT_PX: u32 = 480;
const FONT: &str = "sans-serif";
const CAPTION_PT: u32 = 24;
const AXIS_NAME_PT: u32 = 18;
const TICK_LABEL_PT: u32 = 15;

/// Write one SVG per series of every finding to `target`; returns the paths.
pub fn write_plots(report: &Report, target: &PlotTarget) -> Result<Vec<PathBuf>> {
    let plots: Vec<(String, String)> = report
        .checks
        .iter()
        .flat_map(|f| f.series.iter().map(move |s| (f, s)))
        .map(|(f, s)| {
            // XML forbids most control characters; a name may hold any.
            let text = super::terminal::safe(&svg(&report.model, f, s)?, false).into_owned();
            Ok((plot_name(f, s), text))
        })
        .collect::<Result<_>>()?;
    target.write(&plots)
}

/// `overfit-loss`, `grad-flow-grad-norm`: the plot's name (its file name without `.svg`).
pub fn plot_name(f: &Finding, s: &Series) -> String {
    format!("{}-{}", f.check, s.name.replace('_', "-"))
}

/// The SVG text for one series of `model`'s finding: a bar per label when the points are
/// labelled (one per parameter), else a line over x.
pub fn svg(model: &str, f: &Finding, s: &Series) -> Result<String> {
    let mut out = String::new();
    let title = caption(model, f, s);
    let drawn = if s.labels.is_empty() {
        line_chart(&mut out, &title, s)
    } else {
        profile_chart(&mut out, &title, s)
    };
    drawn.map_err(|e| Error::internal(format!("plotting {} {}: {e}", f.check, s.name)))?;
    Ok(out)
}

type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// `zoo::mlp · overfit: loss (pass)`.
fn caption(model: &str, f: &Finding, s: &Series) -> String {
    format!(
        "{model} · {}: {} ({})",
        f.check,
        s.name.replace('_', " "),
        f.status
    )
}

fn line_chart(out: &mut String, title: &str, s: &Series) -> DrawResult {
    let finite: Vec<(f64, f64)> = s
        .points
        .iter()
        .filter(|p| p[0].is_finite() && p[1].is_finite())
        .map(|p| (p[0], p[1]))
        .collect();
    let x = axis::linear(finite.iter().map(|p| p.0), 0.0);
    let (y0, y1) = axis::extent(finite.iter().map(|p| p.1));
    let log = (y0 > 0.0 && y1 / y0 >= LOG_SPAN)
        .then(|| axis::log_between(y0, y1))
        .flatten();
    let y = log.unwrap_or_else(|| axis::linear_between(y0, y1, 0.05));
    let title = if x.clipped || y.clipped {
        format!("{title} ({})", axis::CLIPPED_NOTE)
    } else {
        title.to_string()
    };
    let drawn: Vec<(f64, f64)> = finite
        .iter()
        .map(|p| (x.clamp(p.0), y.clamp(p.1)))
        .collect();
    let root = SVGBackend::with_string(out, (WIDTH_PX, LINE_HEIGHT_PX)).into_drawing_area();
    root.fill(&WHITE)?;
    if log.is_some() {
        draw_line(
            &root,
            &title,
            s,
            &drawn,
            x.lo..x.hi,
            (y.lo..y.hi).log_scale(),
        )?;
    } else {
        draw_line(&root, &title, s, &drawn, x.lo..x.hi, y.lo..y.hi)?;
    }
    root.present()?;
    Ok(())
}

fn draw_line<Y>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    s: &Series,
    points: &[(f64, f64)],
    x: std::ops::Range<f64>,
    y: Y,
) -> DrawResult
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, CAPTION_PT))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .x_desc(s.x_label.as_str())
        .y_desc(s.y_label.as_str())
        .axis_desc_style((FONT, AXIS_NAME_PT))
        .label_style((FONT, TICK_LABEL_PT))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    chart.draw_series(LineSeries::new(
        points.iter().copied(),
        BLUE.stroke_width(2),
    ))?;
    Ok(())
}

/// One horizontal bar per labelled point on a log axis, first label at the top. A zero or
/// non-finite value cannot sit on a log axis: it is drawn as a red mark at the left edge and its
/// label says why.
fn profile_chart(out: &mut String, title: &str, s: &Series) -> DrawResult {
    let n = s.points.len();
    let positive: Vec<f64> = s
        .points
        .iter()
        .map(|p| p[1])
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    // A decade of room on each side; with no positive value, an arbitrary visible span.
    let (lo, hi) = match axis::extent(positive.iter().copied()) {
        (lo, hi) if lo <= hi => {
            axis::log_between(lo / 10.0, hi * 10.0).map_or((1e-12, 1.0), |a| (a.lo, a.hi))
        }
        _ => (1e-12, 1.0),
    };
    let label_chars = s
        .labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(8)
        + 8;
    let height = (n as u32 * ROW_PX + 140).max(240);
    let root = SVGBackend::with_string(out, (WIDTH_PX, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let label_of = |i: usize| -> String {
        let name = s.labels.get(i).cloned().unwrap_or_else(|| i.to_string());
        match s.points.get(i).map(|p| p[1]) {
            // The label may already say why (a parameter with no gradient at all).
            _ if name.ends_with(')') => name,
            Some(0.0) => format!("{name} (zero)"),
            Some(v) if !v.is_finite() => format!("{name} (non-finite)"),
            _ => name,
        }
    };
    // Rows are numbered bottom-up on the axis; parameter i sits on row n-1-i so the first
    // layer is at the top.
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, CAPTION_PT))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(label_chars as u32 * CHAR_PX)
        .build_cartesian_2d((lo..hi).log_scale(), (0..n).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_label_formatter(&|v| tick(*v))
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(row) if *row < n => label_of(n - 1 - row),
            _ => String::new(),
        })
        .x_desc(s.y_label.as_str())
        .axis_desc_style((FONT, AXIS_NAME_PT))
        .label_style((FONT, TICK_LABEL_PT))
        .draw()?;
    chart.draw_series(s.points.iter().enumerate().map(|(i, p)| {
        let row = n - 1 - i;
        let ok = p[1].is_finite() && p[1] > 0.0;
        let (end, colour) = if ok {
            (p[1].clamp(lo, hi), BLUE.mix(0.6))
        } else {
            (lo * 1.6, RED.mix(0.9))
        };
        let mut bar = Rectangle::new(
            [
                (lo, SegmentValue::Exact(row)),
                (end, SegmentValue::Exact(row + 1)),
            ],
            colour.filled(),
        );
        bar.set_margin(BAR_GAP_PX, BAR_GAP_PX, 0, 0);
        bar
    }))?;
    root.present()?;
    Ok(())
}

/// An axis tick: three significant digits without trailing zeros (`1.4`, `0.9`, `1.0e-5` → `1e-5`).
fn tick(v: f64) -> String {
    let text = sig(v);
    let (mantissa, exponent) = match text.split_once('e') {
        Some((m, e)) => (m.to_string(), format!("e{e}")),
        None => (text, String::new()),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        mantissa
    };
    format!("{mantissa}{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mldebug_diagnostics::{CheckId, Status};

    fn finding(check: CheckId, series: Series) -> Finding {
        let mut f = Finding::new(check, Status::Pass, "");
        f.series.push(series);
        f
    }

    fn loss(points: Vec<[f64; 2]>) -> Series {
        Series {
            name: "loss".into(),
            x_label: "step".into(),
            y_label: "loss".into(),
            points,
            labels: vec![],
        }
    }

    #[test]
    fn a_loss_curve_is_an_svg_with_its_axis_names() {
        let points = (0..50).map(|i| [i as f64, 2.3 * 0.9f64.powi(i)]).collect();
        let f = finding(CheckId::Overfit, loss(points));
        let text = svg("zoo::mlp", &f, &f.series[0]).unwrap();
        assert!(text.starts_with("<svg"), "{}", &text[..80]);
        assert!(
            text.contains("\nstep\n") && text.contains("\nloss\n"),
            "{text}"
        );
        assert!(text.contains("polyline"));
        assert_eq!(plot_name(&f, &f.series[0]), "overfit-loss");
    }

    #[test]
    fn ticks_drop_trailing_zeros() {
        assert_eq!(tick(1.4), "1.4");
        assert_eq!(tick(0.9), "0.9");
        assert_eq!(tick(200.0), "200");
        assert_eq!(tick(1e-5), "1e-5");
        assert_eq!(tick(0.0105), "0.0105");
    }

    #[test]
    fn a_curve_with_nan_and_a_rising_curve_still_plot() {
        let f = finding(
            CheckId::Overfit,
            loss(vec![[0.0, -1.0], [1.0, -3.0], [2.0, f64::NAN]]),
        );
        assert!(svg("zoo::mlp", &f, &f.series[0]).is_ok());
    }

    /// `svg` of `series`, on a thread given a few seconds: plotters loops forever on an axis
    /// whose span is not finite.
    fn svg_in_time(check: CheckId, series: Series) -> String {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let f = finding(check, series);
            let _ = tx.send(svg("zoo::mlp", &f, &f.series[0]).map_err(|e| e.to_string()));
        });
        rx.recv_timeout(std::time::Duration::from_secs(20))
            .expect("the plot did not finish")
            .unwrap()
    }

    #[test]
    fn curves_whose_span_overflows_are_drawn_on_a_clipped_axis() {
        for points in [
            vec![[0.0, 9e307], [1.0, -9e307]],
            vec![[0.0, f64::MAX], [1.0, f64::MIN], [2.0, 0.0]],
            vec![[-1e308, 1.0], [1e308, 2.0]],
            vec![[0.0, 5e-324], [1.0, 1e308]],
            vec![[f64::INFINITY, 1.0], [1.0, f64::NEG_INFINITY], [2.0, 3.0]],
        ] {
            let text = svg_in_time(CheckId::Overfit, loss(points.clone()));
            assert!(!text.contains("NaN"), "{points:?}");
        }
        let text = svg_in_time(CheckId::Overfit, loss(vec![[0.0, 9e307], [1.0, -9e307]]));
        assert!(text.contains(super::axis::CLIPPED_NOTE), "{text}");
    }

    #[test]
    fn a_profile_of_extreme_norms_is_drawn_on_a_bounded_log_axis() {
        let text = svg_in_time(
            CheckId::GradFlow,
            Series {
                name: "grad_norm".into(),
                x_label: "parameter".into(),
                y_label: "gradient L2 norm".into(),
                points: vec![[0.0, 5e-324], [1.0, f64::MAX], [2.0, 1.0]],
                labels: vec!["a".into(), "b".into(), "c".into()],
            },
        );
        assert!(text.contains("<rect"));
    }

    #[test]
    fn the_gradient_profile_labels_every_parameter_and_flags_zero() {
        let f = finding(
            CheckId::GradFlow,
            Series {
                name: "grad_norm".into(),
                x_label: "parameter".into(),
                y_label: "gradient L2 norm".into(),
                points: vec![[0.0, 0.5], [1.0, 0.0], [2.0, 1e-6]],
                labels: vec!["fc1.weight".into(), "fc1.bias".into(), "fc2.weight".into()],
            },
        );
        let text = svg("zoo::mlp", &f, &f.series[0]).unwrap();
        assert!(text.contains("<rect"), "no bars drawn");
        assert!(text.contains("fc1.weight"));
        assert!(text.contains("fc1.bias (zero)"));
        assert!(text.contains("fc2.weight"));
        assert_eq!(plot_name(&f, &f.series[0]), "grad-flow-grad-norm");
    }

    #[test]
    fn a_profile_of_one_parameter_still_draws_its_bar_and_axis() {
        let f = finding(
            CheckId::GradFlow,
            Series {
                name: "grad_norm".into(),
                x_label: "parameter".into(),
                y_label: "gradient L2 norm".into(),
                points: vec![[4.0, 3e-9]],
                labels: vec!["hidden.1.bias".into()],
            },
        );
        let text = svg("zoo::mlp", &f, &f.series[0]).unwrap();
        let bars = text.matches("<rect").count();
        assert!(
            bars >= 2,
            "background and one bar expected, got {bars} rects"
        );
        assert!(
            text.contains("e-9") || text.contains("e-8"),
            "no tick labels:\n{text}"
        );
    }

    #[test]
    fn plots_are_written_into_a_new_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plots");
        let f = finding(CheckId::Overfit, loss(vec![[0.0, 2.0], [1.0, 1.0]]));
        let report = Report {
            model: "zoo::mlp".into(),
            device: "cpu".into(),
            seed: 0,
            checks: vec![f],
        };
        let written = write_plots(&report, &PlotTarget::new(&dir)).unwrap();
        assert_eq!(written, vec![dir.join("overfit-loss.svg")]);
        assert!(std::fs::read_to_string(&written[0])
            .unwrap()
            .contains("<svg"));
    }
}
