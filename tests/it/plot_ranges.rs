//! `--plot` on values and steps that overflow an axis (±9e307, whose span is beyond f64::MAX;
//! a step of Infinity; 5e-324 beside 1e308 on a log axis): every plot mldebug draws is written
//! within seconds, its axes finite, and its caption says what was clipped or left out. plotters
//! loops forever on an axis whose span is not finite, so each run is held to a time bound.

use crate::sweep_support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far beyond the 0.1 s these take, far below a hang.
const BOUND: Duration = Duration::from_secs(20);

/// Runs mldebug with `args`, killed at [`BOUND`]; (exit code, stdout, stderr).
fn bounded(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(sweep_support::bin())
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > BOUND {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("mldebug {args:?} still running after {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The plot's numbers are all finite (no `NaN`/`inf` coordinates in the SVG).
fn assert_finite_svg(path: &Path) -> String {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg"), "{}", path.display());
    for bad in ["NaN", "inf\"", "=\"inf"] {
        assert!(!svg.contains(bad), "{}: {bad} in the SVG", path.display());
    }
    svg
}

#[test]
fn doctor_plots_values_whose_span_overflows() {
    let t = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 5] = [
        ("text.log", "step 1 | loss 9e307\nstep 2 | loss -9e307\n"),
        ("max.log", "step 1 | loss 1.7976931348623157e308\nstep 2 | loss -1.7976931348623157e308\nstep 3 | loss 1\n"),
        ("inf-step.jsonl", "{\"step\": 1, \"loss\": 1.0}\n{\"step\": Infinity, \"loss\": 2.0}\n{\"step\": 3, \"loss\": 0.5}\n"),
        ("wide-steps.jsonl", "{\"step\": 1e308, \"loss\": 1.0}\n{\"step\": -1e308, \"loss\": 2.0}\n{\"step\": 3, \"loss\": 0.5}\n"),
        ("tiny.jsonl", "{\"step\": 1, \"loss\": 5e-324}\n{\"step\": 2, \"loss\": 1e308}\n{\"step\": 3, \"grad_norm\": 5e-324}\n{\"step\": 4, \"grad_norm\": 1e-300}\n"),
    ];
    for (name, text) in cases {
        let log = t.path().join(name);
        std::fs::write(&log, text).unwrap();
        let plot = t.path().join(format!("{name}.svg"));
        let (code, out, err) = bounded(&[
            "doctor",
            log.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{name}: exit {code}: {out}{err}");
        let svg = assert_finite_svg(&plot);
        match name {
            "text.log" | "max.log" | "wide-steps.jsonl" => assert!(
                svg.contains("values beyond the axis drawn at its edge"),
                "{name}: the caption does not say the axis was clipped"
            ),
            "inf-step.jsonl" => assert!(
                svg.contains("1 point at a non-finite step not drawn"),
                "{name}: the caption does not say a point was left out"
            ),
            _ => {}
        }
    }
}

#[test]
fn sweep_compare_plots_values_whose_span_overflows() {
    for (a, b) in [(9e307, -9e307), (f64::MAX, f64::MIN), (5e-324, 1e308)] {
        let t = tempfile::tempdir().unwrap();
        sweep_support::write_runs(
            t.path(),
            "acc",
            &sweep_support::paired(
                "A",
                &[a, a / 2.0, a / 4.0],
                "B",
                &[b, b / 2.0, b / 4.0],
                None,
            ),
        );
        let plot = t.path().join("plot.svg");
        let (code, out, err) = bounded(&[
            "sweep-compare",
            t.path().to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{a} vs {b}: {out}{err}");
        assert_finite_svg(&plot);
    }
    // An infinite value (JSON `Infinity`) sets no axis.
    let t = tempfile::tempdir().unwrap();
    for (i, (g, v)) in [
        ("A", "Infinity"),
        ("A", "1"),
        ("A", "2"),
        ("B", "-Infinity"),
        ("B", "1"),
        ("B", "0.5"),
    ]
    .iter()
    .enumerate()
    {
        let run = format!("{{\"name\": \"r{i}\", \"group\": \"{g}\", \"seed\": {}, \"metrics\": {{\"acc\": {v}}}}}", i % 3);
        std::fs::write(t.path().join(format!("r{i}.json")), run).unwrap();
    }
    let plot = t.path().join("plot.svg");
    let (code, out, err) = bounded(&[
        "sweep-compare",
        t.path().to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_finite_svg(&plot);
}
