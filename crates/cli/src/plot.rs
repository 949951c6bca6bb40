//! Figures people look at: one period at a contact like the paper's Figs. 6-12 (from `solve`
//! and from `simulate` alike) and frequency response curves like Figs. 5 and 17. PNG or SVG by
//! the file's extension.

use crate::solve_cmd::Curve;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

type Res = Result<(), String>;

fn register_font() -> Res {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| "cannot load the embedded font".to_string());
    });
    result
}

fn e<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("plot {what}: {err:?}")
}

fn kind(path: &Path) -> Result<bool, String> {
    crate::results::ensure_parent(path)?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("png") => Ok(true),
        Some("svg") => Ok(false),
        _ => Err(format!(
            "plot {}: the file name must end in .png or .svg",
            path.display()
        )),
    }
}

/// Frequency response curves: peak total amplitude of the monitored DOFs against `w`.
pub fn frc(path: &Path, curves: &[Curve]) -> Res {
    register_font()?;
    let png = kind(path)?;
    let size = (1000, 650);
    if png {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw_frc(&root, curves)?;
        root.present().map_err(e("write"))
    } else {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw_frc(&root, curves)?;
        root.present().map_err(e("write"))
    }
}

fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = 0.05 * (hi - lo).max(1e-12 * hi.abs().max(1.0));
    (lo - pad, hi + pad)
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn draw_frc<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, curves: &[Curve]) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let pts = curves.iter().flat_map(|c| &c.points);
    let (w0, w1) = bounds(pts.clone().map(|p| p.solution.omega));
    // Logarithmic amplitude: friction changes peaks by orders of magnitude (paper Fig. 5).
    let positive = pts
        .map(|p| p.solution.dofs.norm_peak)
        .filter(|a| *a > 0.0 && a.is_finite());
    let (a0, a1) = positive.fold((f64::INFINITY, 0.0f64), |(lo, hi), a| {
        (lo.min(a), hi.max(a))
    });
    let (a0, a1) = if a0.is_finite() {
        (a0 / 1.5, a1 * 1.5)
    } else {
        (1e-3, 1.0)
    };
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Frequency response (peak of the monitored DOFs)",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(w0..w1, (a0..a1).log_scale())
        .map_err(e("axes"))?;
    chart
        .configure_mesh()
        .x_desc("excitation frequency w")
        .y_desc("max_t ||u(t)||")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(e("mesh"))?;
    for (i, c) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut ok: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(|p| p.solution.status.converged())
            .map(|p| (p.solution.omega, p.solution.dofs.norm_peak.max(a0)))
            .collect();
        // Sequential curves are in w order already; arclength ones in curve order: keep it.
        if c.points
            .windows(2)
            .all(|w| w[0].solution.omega <= w[1].solution.omega)
        {
            ok.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let label = c
            .mu_n
            .map(|m| format!("mu N = {m}"))
            .unwrap_or_else(|| "model's mu N".into());
        chart
            .draw_series(LineSeries::new(ok, color.stroke_width(2)))
            .map_err(e("curve"))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        let bad = c
            .points
            .iter()
            .filter(|p| !p.solution.status.converged())
            .map(|p| {
                Cross::new(
                    (p.solution.omega, p.solution.dofs.norm_peak.max(a0)),
                    5,
                    RED,
                )
            });
        chart.draw_series(bad).map_err(e("failed points"))?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(e("legend"))
}

/// One period at one contact, whatever computed it: time histories per direction, stick
/// intervals and the friction bound.
pub struct PeriodFigure {
    /// Figure title.
    pub title: String,
    /// Sample times in `[0, period)`.
    pub t: Vec<f64>,
    /// The period.
    pub period: f64,
    /// Relative displacement, one series per tangential direction.
    pub w: Vec<Vec<f64>>,
    /// Relative velocity, likewise.
    pub v: Vec<Vec<f64>>,
    /// Friction force, likewise.
    pub r: Vec<Vec<f64>>,
    /// Stick intervals (an interval wrapping past the period has its end above it).
    pub stick: Vec<[f64; 2]>,
    /// Friction bound, drawn as the Coulomb circle of the force locus.
    pub mu_n: f64,
}

/// Time histories (stick phases shaded), trajectory, force locus with the Coulomb circle
/// and `|r|` against `|v|`: the paper's figure of a periodic solution.
pub fn period(path: &Path, fig: &PeriodFigure) -> Res {
    register_font()?;
    let png = kind(path)?;
    let size = (1500, 900);
    if png {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw_period(&root, fig)?;
        root.present().map_err(e("write"))
    } else {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw_period(&root, fig)?;
        root.present().map_err(e("write"))
    }
}

/// One x-y panel: title, x values, y values, axis labels.
type Panel<'a> = (&'a str, &'a [f64], &'a [f64], [&'a str; 2]);

fn draw_period<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &PeriodFigure) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let root = root
        .titled(&fig.title, ("sans-serif", 22))
        .map_err(e("title"))?;
    let panels = root.split_evenly((2, 3));
    let dim = fig.w.len();
    let ns = fig.t.len();
    // At most about 4000 points per curve: enough for the eye, small SVG files.
    let stride = ns.div_ceil(4000).max(1);
    let idx: Vec<usize> = (0..ns).step_by(stride).collect();
    let pick = |a: &[f64]| -> Vec<f64> { idx.iter().map(|&j| a[j]).collect() };
    let norm = |a: &[Vec<f64>]| -> Vec<f64> {
        idx.iter()
            .map(|&j| a.iter().map(|s| s[j] * s[j]).sum::<f64>().sqrt())
            .collect()
    };
    let t = pick(&fig.t);
    let histories = [
        ("w (relative displacement)", &fig.w),
        ("v (relative velocity)", &fig.v),
        ("r (friction force)", &fig.r),
    ];
    for (p, (name, a)) in panels.iter().zip(histories) {
        let series: Vec<Vec<f64>> = a.iter().map(|s| pick(s)).collect();
        let (y0, y1) = bounds(series.iter().flatten().copied());
        let mut ch = ChartBuilder::on(p)
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..fig.period, y0..y1)
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc("t")
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e("mesh"))?;
        // Stick phases as grey bands (wrapped intervals drawn in two pieces).
        let bands = fig.stick.iter().flat_map(|&[s, end]| {
            let mut v = vec![(s, end.min(fig.period))];
            if end > fig.period {
                v.push((0.0, end - fig.period));
            }
            v
        });
        ch.draw_series(bands.map(|(s, end)| {
            Rectangle::new([(s, y0), (end, y1)], RGBColor(220, 220, 220).filled())
        }))
        .map_err(e("stick"))?;
        for (k, y) in series.into_iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            ch.draw_series(LineSeries::new(
                t.iter().copied().zip(y),
                color.stroke_width(2),
            ))
            .map_err(e("curve"))?
            .label(format!("direction {}", k + 1))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
        if dim > 1 {
            ch.configure_series_labels()
                .border_style(BLACK)
                .background_style(WHITE.mix(0.8))
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(e("legend"))?;
        }
    }
    // Bottom row: trajectory, force locus, |r| against |v| (1-D: w-v, w-r, v-r).
    let (xs, ys, names) = if dim == 2 {
        (pick(&fig.w[0]), pick(&fig.w[1]), ["w1", "w2"])
    } else {
        (pick(&fig.w[0]), pick(&fig.v[0]), ["w", "v"])
    };
    let (fx, fy, fnames) = if dim == 2 {
        (pick(&fig.r[0]), pick(&fig.r[1]), ["r1", "r2"])
    } else {
        (pick(&fig.w[0]), pick(&fig.r[0]), ["w", "r"])
    };
    let (gx, gy) = (norm(&fig.v), norm(&fig.r));
    let locus = if dim == 2 {
        "friction force locus"
    } else {
        "hysteresis loop"
    };
    let plots: [Panel; 3] = [
        ("trajectory", &xs, &ys, names),
        (locus, &fx, &fy, fnames),
        ("|r| against |v|", &gx, &gy, ["|v|", "|r|"]),
    ];
    for (i, (name, x, y, labels)) in plots.into_iter().enumerate() {
        let (mut x0, mut x1) = bounds(x.iter().copied());
        let (mut y0, mut y1) = bounds(y.iter().copied());
        if i == 1 && dim == 2 {
            // Equal axes around the friction circle.
            let m = 1.1
                * fig
                    .mu_n
                    .max(x0.abs())
                    .max(x1.abs())
                    .max(y0.abs())
                    .max(y1.abs());
            (x0, x1, y0, y1) = (-m, m, -m, m);
        }
        let mut ch = ChartBuilder::on(&panels[3 + i])
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e("axes"))?;
        ch.configure_mesh()
            .x_desc(labels[0])
            .y_desc(labels[1])
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e("mesh"))?;
        if i == 1 && dim == 2 {
            let circle = (0..=200).map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 200.0;
                (fig.mu_n * a.cos(), fig.mu_n * a.sin())
            });
            ch.draw_series(LineSeries::new(circle, BLACK.stroke_width(1)))
                .map_err(e("circle"))?;
        }
        let pts = x.iter().copied().zip(y.iter().copied());
        if i == 2 {
            ch.draw_series(pts.map(|p| Circle::new(p, 2, COLORS[0].filled())))
                .map_err(e("points"))?;
        } else {
            ch.draw_series(LineSeries::new(pts, COLORS[0].stroke_width(2)))
                .map_err(e("curve"))?;
        }
    }
    Ok(())
}
