//! `doctor --plot FILE.svg`: one row of panels per run (losses, learning rate, grad norm,
//! throughput, memory: those the run logs), each finding's step marked by a vertical line in the
//! panel of its series, coloured by severity and labelled with its symptom id. Rendered to a
//! string first so that a failed render writes nothing.

use super::axis::{self, Axis};
use crate::doctor::report::{Report, RunReport, SeriesSummary};
use crate::{Error, Result};
use mldebug_doctor::names::Role;
use mldebug_doctor::Severity;
use plotters::prelude::*;

const WIDTH: u32 = 1200;
const ROW_HEIGHT: u32 = 280;
/// At most this many runs are drawn (the rest are named in the caption): beyond it the rows
/// are too many to read in one picture.
const MAX_RUNS: usize = 12;
/// Points drawn per series at most: more than a panel's pixel width adds nothing.
const MAX_DRAWN: usize = 2000;

const PALETTE: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// The panels of a run, by the roles they draw.
const PANELS: [(&str, &[Role]); 5] = [
    ("loss", &[Role::TrainLoss, Role::EvalLoss]),
    ("learning rate", &[Role::LearningRate]),
    ("grad norm", &[Role::GradNorm]),
    (
        "throughput / step time",
        &[Role::Throughput, Role::StepTime],
    ),
    ("memory", &[Role::Memory]),
];

fn draw_err<E: std::fmt::Debug>(e: E) -> Error {
    Error::internal(format!("drawing the plot failed: {e:?}"))
}

/// Render the plot as SVG text.
pub fn render(r: &Report) -> Result<String> {
    let runs: Vec<&RunReport> = r.runs.iter().take(MAX_RUNS).collect();
    let rows = runs.len().max(1) as u32;
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, ROW_HEIGHT * rows)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let areas = root.split_evenly((rows as usize, 1));
        for (run, area) in runs.iter().zip(&areas) {
            draw_run(run, area)?;
        }
        root.present().map_err(draw_err)?;
    }
    // Series names and run names come from data files; XML forbids most control characters.
    Ok(super::terminal::safe(&svg, false).into_owned())
}

/// Render and write the plot to `path`: the whole file or nothing (exit 74 on a write error).
pub fn write(
    r: &Report,
    target: &super::plot_target::PlotTarget,
) -> Result<Vec<std::path::PathBuf>> {
    target.write(&[("doctor".to_string(), render(r)?)])
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_run(run: &RunReport, area: &Area) -> Result<()> {
    let panels: Vec<(&str, Vec<&SeriesSummary>)> = PANELS
        .iter()
        .map(|(title, roles)| {
            let s = run
                .series
                .iter()
                .filter(|s| roles.contains(&s.role))
                .collect();
            (*title, s)
        })
        .filter(|(_, s): &(&str, Vec<&SeriesSummary>)| !s.is_empty())
        .collect();
    let caption = if run.place.is_empty() {
        run.source.clone()
    } else {
        format!("{} ({})", run.source, run.place)
    };
    let area = area
        .titled(&caption, ("sans-serif", 16))
        .map_err(draw_err)?;
    if panels.is_empty() {
        return Ok(());
    }
    let cells = area.split_evenly((1, panels.len()));
    for ((title, series), cell) in panels.iter().zip(&cells) {
        draw_panel(run, title, series, cell)?;
    }
    Ok(())
}

/// The y axis: the finite values between the 1st and 99th percentile, padded, so one spike
/// to 1e3 does not flatten the rest of the curve (points beyond are drawn at the edge).
fn y_axis(series: &[&SeriesSummary]) -> Axis {
    let mut v: Vec<f64> = series
        .iter()
        .flat_map(|s| s.data.iter().map(|p| p.1))
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return axis::linear_between(0.0, 1.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    // Halved before subtracting: the difference of two values near ±f64::MAX overflows.
    let reach = at(0.99) / 2.0 - at(0.01) / 2.0;
    let lo = at(0.0).max(at(0.01) - reach - reach);
    let hi = at(0.99);
    axis::linear_between(lo, hi, 0.08)
}

/// The x axis: the finite steps of the series (a step logged as inf or NaN sets no range).
fn x_axis(series: &[&SeriesSummary]) -> Axis {
    let x = axis::linear(series.iter().flat_map(|s| s.data.iter().map(|p| p.0)), 0.0);
    let (lo, hi) = axis::extent(series.iter().flat_map(|s| s.data.iter().map(|p| p.0)));
    if hi > lo {
        x
    } else {
        // One step: a step either side of it.
        axis::linear_between(lo - 1.0, lo + 1.0, 0.0)
    }
}

/// Points with a step that is not finite: drawn nowhere, and said so in the panel's title.
fn unplaced(series: &[&SeriesSummary]) -> usize {
    series
        .iter()
        .flat_map(|s| s.data.iter())
        .filter(|p| !p.0.is_finite())
        .count()
}

fn draw_panel(run: &RunReport, title: &str, series: &[&SeriesSummary], cell: &Area) -> Result<()> {
    let x = x_axis(series);
    let y = y_axis(series);
    let (x0, x1, lo, hi) = (x.lo, x.hi, y.lo, y.hi);
    let mut notes = Vec::new();
    if x.clipped || y.clipped {
        notes.push(axis::CLIPPED_NOTE.to_string());
    }
    match unplaced(series) {
        0 => {}
        1 => notes.push("1 point at a non-finite step not drawn".to_string()),
        n => notes.push(format!("{n} points at a non-finite step not drawn")),
    }
    let title = if notes.is_empty() {
        title.to_string()
    } else {
        format!("{title} ({})", notes.join("; "))
    };
    let mut chart = ChartBuilder::on(cell)
        .caption(&title, ("sans-serif", 14))
        .margin(8)
        .x_label_area_size(24)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, lo..hi)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_labels(4)
        .y_labels(5)
        .x_desc("step")
        .draw()
        .map_err(draw_err)?;
    for (i, s) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let stride = s.data.len().div_ceil(MAX_DRAWN).max(1);
        let pts = s
            .data
            .iter()
            .step_by(stride)
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|p| (x.clamp(p.0), y.clamp(p.1)));
        chart
            .draw_series(LineSeries::new(pts, colour.stroke_width(1)))
            .map_err(draw_err)?
            .label(s.metric.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], colour));
    }
    for f in &run.findings {
        let f = &f.finding;
        if !series.iter().any(|s| s.metric == f.metric) {
            continue;
        }
        let colour = match f.severity {
            Severity::Fail => RED,
            Severity::Warn => RGBColor(230, 140, 0),
            Severity::Info => RGBColor(120, 120, 120),
        };
        if f.step.is_nan() {
            continue;
        }
        let x = f.step.clamp(x0, x1);
        chart
            .draw_series(LineSeries::new([(x, lo), (x, hi)], colour.stroke_width(2)))
            .map_err(draw_err)?;
        chart
            .draw_series([Text::new(
                f.symptom.id().to_string(),
                (x, hi),
                ("sans-serif", 12).into_font().color(&colour),
            )])
            .map_err(draw_err)?;
        let ticks = f.marks.iter().filter(|m| (x0..=x1).contains(*m)).map(|m| {
            PathElement::new(
                [(*m, lo), (*m, lo + 0.04 * (hi - lo))],
                colour.stroke_width(1),
            )
        });
        chart.draw_series(ticks).map_err(draw_err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 11))
        .draw()
        .map_err(draw_err)?;
    Ok(())
}
