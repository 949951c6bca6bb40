//! Every kind of figure ewr draws, rendered to SVG from data spanning awkward ranges (many
//! decades, less than one, tiny SI values), and its tick labels read back: each axis has at
//! least three, each is a short plain number, and no two on an axis overlap.

use crate::LocusPoint;
use crate::figures::{self, FrcLine, FrcPanel, FrcStyle, FrequencyAxis};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A `<text>` element of an SVG: position, anchor, font size and content.
#[derive(Debug)]
struct Label {
    x: f64,
    y: f64,
    anchor: String,
    dy: String,
    size: f64,
    rotated: bool,
    text: String,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(tag[start..end].to_string())
}

fn labels(svg: &str) -> Vec<Label> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let (tag, rest) = t.split_once('>')?;
            let text = rest.split_once("</text>")?.0.trim().to_string();
            Some(Label {
                x: attr(tag, "x")?.parse().ok()?,
                y: attr(tag, "y")?.parse().ok()?,
                anchor: attr(tag, "text-anchor").unwrap_or_default(),
                dy: attr(tag, "dy").unwrap_or_default(),
                size: attr(tag, "font-size")?.parse().ok()?,
                rotated: tag.contains("rotate("),
                text,
            })
        })
        .collect()
}

fn numeric(l: &Label) -> bool {
    l.text.starts_with(|c: char| c.is_ascii_digit() || c == '-') && l.text.parse::<f64>().is_ok()
}

/// Width of a label in pixels, generously (DejaVu Sans digits are 0.64 em).
fn width(l: &Label) -> f64 {
    0.64 * l.size * l.text.chars().count() as f64
}

/// The labels of one row (or column) sorted by `pos`, cut into axes where the values stop
/// running one way (`rising`: with `pos`, as on an x axis; else against it, as on a y axis,
/// whose pixels run downwards), or the gap to the next label is well above the typical one.
fn split_axes(mut line: Vec<&Label>, pos: fn(&Label) -> f64, rising: bool) -> Vec<Vec<&Label>> {
    line.sort_by(|a, b| pos(a).total_cmp(&pos(b)));
    let mut gaps: Vec<f64> = line.windows(2).map(|w| pos(w[1]) - pos(w[0])).collect();
    gaps.sort_by(f64::total_cmp);
    let typical = gaps.get(gaps.len() / 2).copied().unwrap_or(0.0);
    let value = |l: &Label| l.text.parse::<f64>().unwrap();
    let mut axes: Vec<Vec<&Label>> = Vec::new();
    for l in line {
        match axes.last_mut() {
            Some(a)
                if pos(l) - pos(a[a.len() - 1]) <= 2.5 * typical
                    && (value(l) > value(a[a.len() - 1])) == rising =>
            {
                a.push(l)
            }
            _ => axes.push(vec![l]),
        }
    }
    axes
}

/// Checks the tick labels of the SVG at `path`: every numeric label short and plain, axes (the
/// numeric labels sharing a column, right-aligned, or a row, centred) with at least
/// `min_per_axis` labels that do not overlap, and at least `axes` such axes.
fn check_ticks(path: &Path, axes: usize, min_per_axis: usize) {
    let svg = std::fs::read_to_string(path).unwrap();
    let all = labels(&svg);
    let nums: Vec<&Label> = all.iter().filter(|l| numeric(l) && !l.rotated).collect();
    for l in &nums {
        assert!(
            l.text.len() <= 7 && !l.text.contains("e+") && !l.text.ends_with('.'),
            "{}: tick label {:?}",
            path.display(),
            l.text
        );
    }
    // y axes: right-aligned labels in one column; x axes: centred labels on one row.
    let mut columns: BTreeMap<i64, Vec<&Label>> = BTreeMap::new();
    let mut rows: BTreeMap<i64, Vec<&Label>> = BTreeMap::new();
    for l in &nums {
        if l.anchor == "end" {
            columns.entry(l.x.round() as i64).or_default().push(l);
        } else if l.anchor == "middle" && l.dy == "0.76em" {
            rows.entry(l.y.round() as i64).or_default().push(l);
        }
    }
    // Panels side by side put their x axes on one row (and stacked ones their y axes in one
    // column): an axis ends where the gap to the next label is well above the typical one.
    let columns: Vec<(i64, Vec<&Label>)> = columns
        .into_iter()
        .flat_map(|(x, c)| {
            split_axes(c, |l| l.y, false)
                .into_iter()
                .map(move |a| (x, a))
        })
        .collect();
    let rows: Vec<(i64, Vec<&Label>)> = rows
        .into_iter()
        .flat_map(|(y, r)| {
            split_axes(r, |l| l.x, true)
                .into_iter()
                .map(move |a| (y, a))
        })
        .collect();
    let mut found = 0;
    for (x, col) in &columns {
        assert!(
            col.len() >= min_per_axis,
            "{}: the y axis at x = {x} has {} labels: {:?}",
            path.display(),
            col.len(),
            col.iter().map(|l| &l.text).collect::<Vec<_>>()
        );
        let mut texts: Vec<&str> = col.iter().map(|l| l.text.as_str()).collect();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(
            texts.len(),
            col.len(),
            "{}: the y axis at x = {x} repeats a label: {:?}",
            path.display(),
            col.iter().map(|l| &l.text).collect::<Vec<_>>()
        );
        for w in col.windows(2) {
            assert!(
                w[1].y - w[0].y >= 0.9 * w[0].size,
                "{}: y labels {:?} and {:?} overlap",
                path.display(),
                w[0].text,
                w[1].text
            );
        }
        found += 1;
    }
    for (y, row) in &rows {
        assert!(
            row.len() >= min_per_axis,
            "{}: the x axis at y = {y} has {} labels: {:?}",
            path.display(),
            row.len(),
            row.iter().map(|l| &l.text).collect::<Vec<_>>()
        );
        for w in row.windows(2) {
            assert!(
                w[1].x - w[0].x >= 0.5 * (width(w[0]) + width(w[1])) + 2.0,
                "{}: x labels {:?} and {:?} overlap",
                path.display(),
                w[0].text,
                w[1].text
            );
        }
        found += 1;
    }
    assert!(
        found >= axes,
        "{}: {found} labelled axes, expected {axes}; labels {:?}",
        path.display(),
        nums.iter().map(|l| &l.text).collect::<Vec<_>>()
    );
}

/// A resonance curve `a / sqrt((1 - (w/wn)^2)^2 + (2 z w/wn)^2)` sampled over `w0..w1`.
fn resonance(a: f64, wn: f64, z: f64, w0: f64, w1: f64, n: usize) -> Vec<(f64, f64, bool)> {
    (0..n)
        .map(|i| {
            let w = w0 + (w1 - w0) * i as f64 / (n - 1) as f64;
            let r = w / wn;
            let amp = a / ((1.0 - r * r).powi(2) + (2.0 * z * r).powi(2)).sqrt();
            (w, amp, i % 17 != 5)
        })
        .collect()
}

fn line(label: &str, value: f64, points: Vec<(f64, f64, bool)>) -> FrcLine {
    let peak = points
        .iter()
        .map(|p| (p.0, p.1))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    FrcLine {
        label: label.to_string(),
        points,
        peaks: vec![peak],
        value: Some(value),
        inaccurate: Vec::new(),
        unstable: Vec::new(),
    }
}

fn out(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn si_axis() -> FrequencyAxis {
    FrequencyAxis {
        units: Some("SI (N, m, s, kg)".into()),
        model_title: Some("blade: a cantilever".into()),
        ..Default::default()
    }
}

#[test]
fn frequency_response_figures() {
    let dir = tempfile::tempdir().unwrap();
    // Damping from 0.2 % to 40 %: amplitudes over four decades, micrometres (SI).
    let lines: Vec<FrcLine> = [0.002, 0.02, 0.1, 0.4]
        .iter()
        .map(|&z| {
            line(
                &format!("mu N = {z}"),
                z,
                resonance(1e-7, 5330.0, z, 5000.0, 5700.0, 120),
            )
        })
        .collect();
    let style = FrcStyle {
        title: "blade: frequency response",
        axis: si_axis(),
        parameter: Some("mu N"),
    };
    let p = out(&dir, "frc.svg");
    figures::frc_lines(&p, &style, &lines).unwrap();
    check_ticks(&p, 2, 3);
    // Less than a decade of amplitude (a stiff, heavily damped case).
    let flat = vec![line("flat", 1.0, resonance(1.0, 1.0, 2.0, 0.9, 1.1, 50))];
    let p = out(&dir, "flat.svg");
    figures::frc_lines(&p, &style, &flat).unwrap();
    check_ticks(&p, 2, 3);
    // More curves than a legend holds: coloured by value, with a colour bar (a third axis).
    let many: Vec<FrcLine> = (0..30)
        .map(|k| {
            let z = 0.01 + 0.01 * k as f64;
            line(
                &format!("{k}"),
                z * 100.0,
                resonance(1.0, 1.0, z, 0.2, 2.6, 80),
            )
        })
        .collect();
    let p = out(&dir, "many.svg");
    figures::frc_lines(&p, &style, &many).unwrap();
    check_ticks(&p, 3, 3);
    // Small multiples: three panels of ten curves, and the colour bar.
    let panels: Vec<FrcPanel> = many
        .chunks(10)
        .enumerate()
        .map(|(k, c)| FrcPanel {
            caption: format!("mass = {}", [0.25, 0.5, 1.0][k]),
            lines: c.to_vec(),
        })
        .collect();
    let p = out(&dir, "grid.svg");
    figures::frc_grid(&p, &style, &panels).unwrap();
    check_ticks(&p, 7, 3);
}

#[test]
fn design_map_and_locus_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mu: Vec<f64> = (0..10).map(|k| 1.0 + 3.0 * k as f64).collect();
    let peak = |m: f64, s: f64| 40.0 * s / (1.0 + (m - 12.0).powi(2) / 30.0) + 1.0 / m;
    let panel = figures::DesignPanel {
        parameter: "mu_n".into(),
        series: [0.25, 0.5, 1.0]
            .iter()
            .map(|&s| {
                (
                    format!("mass={s}"),
                    mu.iter().map(|&m| (m, peak(m, s))).collect(),
                )
            })
            .collect(),
        optimum: (1.0, peak(1.0, 0.25)),
        mark: "optimum",
        amplitude: Default::default(),
    };
    let p = out(&dir, "design.svg");
    figures::design(&p, "damper: peak amplitude", &[panel]).unwrap();
    check_ticks(&p, 2, 3);
    let masses = vec![0.25, 0.5, 1.0];
    let map = figures::HeatMap {
        x: ("mu_n".into(), mu.clone()),
        y: ("mass".into(), masses.clone()),
        z: masses
            .iter()
            .flat_map(|&s| mu.iter().map(move |&m| peak(m, s)))
            .collect(),
        optimum: (0, 0),
    };
    let p = out(&dir, "map.svg");
    figures::heat_map(&p, "damper: peak amplitude", &map).unwrap();
    // The grid's own axes are labelled by value (3 and 10 cells); the colour bar is a third.
    check_ticks(&p, 2, 3);
    // Peak loci: friction loads over two decades (log x) with a switch of resonance, and a
    // narrow linear range.
    for (name, values) in [
        (
            "mu_n",
            (0..12).map(|k| 0.5 * 1.6f64.powi(k)).collect::<Vec<_>>(),
        ),
        ("mass", (0..12).map(|k| 0.5 + 0.01 * k as f64).collect()),
    ] {
        let points: Vec<LocusPoint> = values
            .iter()
            .enumerate()
            .map(|(k, &v)| LocusPoint {
                value: v,
                omega: if k < 6 {
                    5330.0 + k as f64
                } else {
                    5620.0 + k as f64
                },
                amplitude: 1e-6 / (1.0 + (k as f64 - 6.0).powi(2)),
                evaluations: 5,
                stick_fraction: vec![0.5],
                stable: Some(k != 3),
                max_multiplier: Some(0.9),
                switched: k == 6,
            })
            .collect();
        let p = out(&dir, &format!("locus-{name}.svg"));
        crate::plot_peaks(
            &p,
            name,
            &points,
            Some((values[6], 1e-6, 5620.0)),
            si_axis(),
        )
        .unwrap();
        check_ticks(&p, 3, 3);
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("highest peak changes resonance"), "{name}");
    }
}

#[test]
fn period_figure() {
    let dir = tempfile::tempdir().unwrap();
    let n = 256;
    let period = 2.0 * std::f64::consts::PI / 5330.0;
    let t: Vec<f64> = (0..n).map(|i| period * i as f64 / n as f64).collect();
    let s = |a: f64, ph: f64| -> Vec<f64> {
        t.iter()
            .map(|&t| a * (2.0 * std::f64::consts::PI * t / period + ph).sin())
            .collect()
    };
    let fig = figures::PeriodFigure {
        title: "blade: contact 0 at w = 5330".into(),
        t: t.clone(),
        period,
        w: vec![s(3e-7, 0.0), s(1e-7, 1.0)],
        v: vec![s(1.6e-3, 1.57), s(5e-4, 2.5)],
        r: vec![s(4.0, 0.3), s(1.0, 1.2)],
        stick: vec![[0.1 * period, 0.3 * period]],
        mu_n: 4.5,
        normal: Some(figures::NormalPanel {
            lambda: s(2.0, 0.0).iter().map(|x| 10.0 + x).collect(),
            mu: 0.4,
            separated: Vec::new(),
        }),
    };
    let p = out(&dir, "period.svg");
    figures::period(&p, &fig).unwrap();
    check_ticks(&p, 6, 3);
}

#[test]
fn backbone_figure() {
    // A frequency falling by 40 % (two-mass-damper) and one falling by 0.1 % (the 3-D FE
    // sector's mode 1, 3512.1 -> 3509.1 rad/s, whose labels four significant digits repeated).
    for (w_free, w_stuck, name) in [
        (0.618, std::f64::consts::SQRT_2, "backbone.svg"),
        (3509.07, 3512.11, "backbone-narrow.svg"),
    ] {
        backbone_figure_of(w_free, w_stuck, name);
    }
}

fn backbone_figure_of(w_free: f64, w_stuck: f64, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let set = ewr_hb::HarmonicSet::odd(3).unwrap();
    let points: Vec<ewr_solve::nonlinear_mode::ModePoint> = (0..40)
        .map(|k| {
            let a = 1e-8 * 10f64.powf(k as f64 / 10.0);
            let s = 1.0 / (1.0 + (a / 1e-6).powi(2));
            let omega = w_free + (w_stuck - w_free) * s;
            let z = 0.05 * s * (1.0 - s) + 0.002;
            ewr_solve::nonlinear_mode::ModePoint {
                amplitude: a,
                omega,
                xi: 2.0 * z * omega,
                damping_ratio: z,
                converged: k != 7,
                no_oscillation: false,
                sensitivity: 0.0,
                iterations: 5,
                krylov_iterations: 0,
                residual: 1e-12,
                set: set.clone(),
                friction: Vec::new(),
                shape: Vec::new(),
                displacement: Vec::new(),
            }
        })
        .collect();
    let response = figures::ResponsePanel {
        label: "max_t |u1(t)|".into(),
        backbone: points.iter().map(|p| (p.omega, p.amplitude)).collect(),
        synthesis: resonance(1e-6, 1.0, 0.05, 0.5, 1.5, 60)
            .into_iter()
            .map(|p| (p.0, p.1))
            .collect(),
        frc: Vec::new(),
    };
    let p = out(&dir, name);
    figures::backbone(&p, "two-mass-damper: mode 1", &points, &response).unwrap();
    check_ticks(&p, 5, 3);
}
