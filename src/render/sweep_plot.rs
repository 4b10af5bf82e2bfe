//! `sweep-compare --plot FILE.svg`: each seed's A and B joined by a line (left), and the
//! differences with their mean and 95% interval (right). Multi-task comparisons get one
//! interval per task instead. Rendered to a string first so that a failed render writes nothing.

use super::axis::{self, Axis};
use super::plot_target::PlotTarget;
use crate::sweep::compare::{Comparison, TaskResult};
use crate::{Error, Result};
use plotters::prelude::*;
use std::path::PathBuf;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 440;
const COLOR_A: RGBColor = RGBColor(31, 119, 180);
const COLOR_B: RGBColor = RGBColor(255, 127, 14);
const COLOR_D: RGBColor = RGBColor(44, 44, 44);

/// Room above and below the values, as a fraction of their span.
const PAD: f64 = 0.08;

/// The y axis holding the finite `values` (see [`axis`]), and the caption's words when values
/// lie beyond it.
fn y_axis(values: impl IntoIterator<Item = f64>) -> (Axis, &'static str) {
    let mut clipped = false;
    let values: Vec<f64> = values
        .into_iter()
        .inspect(|v| clipped |= v.is_infinite())
        .collect();
    let a = axis::linear(values, PAD);
    let note = if a.clipped || clipped {
        " (values beyond the axis drawn at its edge)"
    } else {
        ""
    };
    (a, note)
}

fn draw_err<E: std::fmt::Debug>(e: E) -> Error {
    Error::internal(format!("drawing the plot failed: {e:?}"))
}

/// Render the plot as SVG text.
pub fn render(c: &Comparison) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        if c.multi_task() {
            forest(c, &root)?;
        } else {
            let (left, right) = root.split_horizontally(WIDTH / 2);
            seeds_panel(c, &c.tasks[0], &left)?;
            diff_panel(c, &c.tasks[0], &right)?;
        }
        root.present().map_err(draw_err)?;
    }
    // Run names and labels come from data files; XML forbids most control characters.
    Ok(super::terminal::safe(&svg, false).into_owned())
}

/// Render and write the plot to `target`: the whole file or nothing (exit 74 on a write error).
pub fn write(c: &Comparison, target: &PlotTarget) -> Result<Vec<PathBuf>> {
    target.write(&[("sweep-compare".to_string(), render(c)?)])
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn seeds_panel(c: &Comparison, t: &TaskResult, area: &Area) -> Result<()> {
    let av: Vec<f64> = t.a.values.iter().map(|v| v.2).collect();
    let bv: Vec<f64> = t.b.values.iter().map(|v| v.2).collect();
    let (y, note) = y_axis(av.iter().chain(&bv).copied());
    let (lo, hi) = (y.lo, y.hi);
    let (na, nb) = (c.arms.a.clone(), c.arms.b.clone());
    let mut chart = ChartBuilder::on(area)
        .caption(
            if t.paired.is_some() {
                format!("{} per seed (lines join a seed's A and B){note}", c.metric)
            } else {
                format!("{} per run (unpaired){note}", c.metric)
            },
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..1.5f64, lo..hi)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(5)
        .x_label_formatter(&|x| {
            if (x - 0.0).abs() < 1e-9 {
                format!("A: {na}")
            } else if (x - 1.0).abs() < 1e-9 {
                format!("B: {nb}")
            } else {
                String::new()
            }
        })
        .y_desc(c.metric.as_str())
        .draw()
        .map_err(draw_err)?;
    match &t.paired {
        Some(p) => {
            for pr in &p.pairs {
                chart
                    .draw_series(LineSeries::new(
                        [(0.0, y.clamp(pr.a)), (1.0, y.clamp(pr.b))],
                        COLOR_D.mix(0.45).stroke_width(1),
                    ))
                    .map_err(draw_err)?;
            }
            let a_pts = p
                .pairs
                .iter()
                .map(|pr| Circle::new((0.0, y.clamp(pr.a)), 4, COLOR_A.filled()));
            chart.draw_series(a_pts).map_err(draw_err)?;
            let b_pts = p
                .pairs
                .iter()
                .map(|pr| Circle::new((1.0, y.clamp(pr.b)), 4, COLOR_B.filled()));
            chart.draw_series(b_pts).map_err(draw_err)?;
        }
        None => {
            // Unpaired: a small deterministic spread so equal values stay visible.
            let jitter =
                |i: usize, n: usize| (i as f64 - (n as f64 - 1.0) / 2.0) * 0.12 / n.max(1) as f64;
            let a_pts = av
                .iter()
                .enumerate()
                .map(|(i, v)| Circle::new((jitter(i, av.len()), y.clamp(*v)), 4, COLOR_A.filled()));
            chart.draw_series(a_pts).map_err(draw_err)?;
            let b_pts = bv.iter().enumerate().map(|(i, v)| {
                Circle::new(
                    (1.0 + jitter(i, bv.len()), y.clamp(*v)),
                    4,
                    COLOR_B.filled(),
                )
            });
            chart.draw_series(b_pts).map_err(draw_err)?;
        }
    }
    for (x, d) in [(0.0, &t.a.describe), (1.0, &t.b.describe)] {
        if let Some(d) = d {
            chart
                .draw_series(LineSeries::new(
                    [(x - 0.18, y.clamp(d.mean)), (x + 0.18, y.clamp(d.mean))],
                    BLACK.stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
    }
    Ok(())
}

/// Estimate, its CI, per-seed differences (label, value) and the test's name.
type DiffView = (f64, (f64, f64), Vec<(String, f64)>, &'static str);

fn diff_panel(c: &Comparison, t: &TaskResult, area: &Area) -> Result<()> {
    let (est, ci, diffs, what): DiffView = match (&t.paired, &t.unpaired) {
        (Some(p), _) => (
            p.t.estimate,
            p.t.ci,
            p.pairs.iter().map(|x| (x.key.clone(), x.diff)).collect(),
            "paired t",
        ),
        (None, Some(u)) => (u.welch.estimate, u.welch.ci, Vec::new(), "Welch"),
        _ => (f64::NAN, (f64::NAN, f64::NAN), Vec::new(), ""),
    };
    let (y, note) = y_axis(diffs.iter().map(|d| d.1).chain([ci.0, ci.1, 0.0]));
    let (lo, hi) = (y.lo, y.hi);
    let n = diffs.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "A − B with 95% CI ({what}){note}  —  {}",
                c.verdict.headline
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.8f64..n + 0.8, lo..hi)
        .map_err(draw_err)?;
    let labels: Vec<String> = diffs.iter().map(|d| d.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(labels.len() + 2)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else if (x - n).abs() < 1e-9 {
                "mean".into()
            } else {
                String::new()
            }
        })
        .x_desc(if diffs.is_empty() { "" } else { "seed" })
        .y_desc("A − B")
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series(LineSeries::new(
            [(-0.8, 0.0), (n + 0.8, 0.0)],
            BLACK.mix(0.5).stroke_width(1),
        ))
        .map_err(draw_err)?;
    let pts = diffs
        .iter()
        .enumerate()
        .map(|(i, d)| Circle::new((i as f64, y.clamp(d.1)), 4, COLOR_D.filled()));
    chart.draw_series(pts).map_err(draw_err)?;
    if est.is_finite() && ci.0.is_finite() {
        chart
            .draw_series(LineSeries::new(
                [(n, y.clamp(ci.0)), (n, y.clamp(ci.1))],
                COLOR_A.stroke_width(3),
            ))
            .map_err(draw_err)?;
        for v in [ci.0, ci.1] {
            chart
                .draw_series(LineSeries::new(
                    [(n - 0.15, y.clamp(v)), (n + 0.15, y.clamp(v))],
                    COLOR_A.stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
        chart
            .draw_series([Circle::new((n, y.clamp(est)), 6, COLOR_A.filled())])
            .map_err(draw_err)?;
    }
    Ok(())
}

fn forest(c: &Comparison, area: &Area) -> Result<()> {
    let rows: Vec<(String, f64, (f64, f64))> = c
        .tasks
        .iter()
        .filter_map(|t| {
            let tt = t
                .paired
                .as_ref()
                .map(|p| p.t)
                .or(t.unpaired.as_ref().map(|u| u.welch))?;
            Some((t.task.clone().unwrap_or_default(), tt.estimate, tt.ci))
        })
        .collect();
    let (y, note) = y_axis(rows.iter().flat_map(|r| [r.1, r.2 .0, r.2 .1]).chain([0.0]));
    let (lo, hi) = (y.lo, y.hi);
    let n = rows.len().max(1) as f64;
    let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "{}: A − B per task with 95% CI{note}  —  {}",
                c.metric, c.verdict.headline
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.6f64..n - 0.4, lo..hi)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(labels.len() + 1)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        })
        .y_desc("A − B")
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series(LineSeries::new(
            [(-0.6, 0.0), (n - 0.4, 0.0)],
            BLACK.mix(0.5),
        ))
        .map_err(draw_err)?;
    for (i, r) in rows.iter().enumerate() {
        let x = i as f64;
        chart
            .draw_series(LineSeries::new(
                [(x, y.clamp(r.2 .0)), (x, y.clamp(r.2 .1))],
                COLOR_A.stroke_width(3),
            ))
            .map_err(draw_err)?;
        chart
            .draw_series([Circle::new((x, y.clamp(r.1)), 6, COLOR_A.filled())])
            .map_err(draw_err)?;
    }
    Ok(())
}
