//! Figures people look at: a periodic solution like the paper's Figs. 6-12 and frequency
//! response curves like Figs. 5 and 17. PNG or SVG by the file's extension.

use crate::solve_cmd::Curve;
use ewr_contact::ContactParams;
use ewr_solve::PointSolution;
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

/// The periodic solution of the first contact: histories, trajectory, force locus, |r|(|v|).
pub fn solution(path: &Path, s: &PointSolution, params: &ContactParams) -> Res {
    register_font()?;
    let png = kind(path)?;
    let size = (1500, 900);
    if png {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw_solution(&root, s, params)?;
        root.present().map_err(e("write"))
    } else {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw_solution(&root, s, params)?;
        root.present().map_err(e("write"))
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

fn draw_solution<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &PointSolution,
    params: &ContactParams,
) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e("fill"))?;
    let title = format!(
        "w = {}, {}, contact 0 of {} ({}; residual {:.1e})",
        s.omega,
        s.set,
        params.len(),
        s.status,
        s.residual
    );
    let root = root
        .titled(&title, ("sans-serif", 22))
        .map_err(e("title"))?;
    let panels = root.split_evenly((2, 3));
    let h = &s.histories;
    let d = params.dim;
    let nt = h.n_samples;
    let period = std::f64::consts::TAU / s.omega;
    let t: Vec<f64> = (0..nt).map(|j| period * j as f64 / nt as f64).collect();
    let comp = |buf: &[f64], k: usize| buf[k * nt..(k + 1) * nt].to_vec();
    let stuck: Vec<bool> = (0..nt)
        .map(|j| {
            let z: f64 = (0..d)
                .map(|k| (h.force[k * nt + j] - params.rho[0] * h.velocity[k * nt + j]).powi(2))
                .sum::<f64>()
                .sqrt();
            z <= params.mu_n[0]
        })
        .collect();
    for (panel, (name, buf)) in panels.iter().zip([
        ("relative displacement w", &h.displacement),
        ("relative velocity v", &h.velocity),
        ("friction force r", &h.force),
    ]) {
        let series: Vec<Vec<f64>> = (0..d).map(|k| comp(buf, k)).collect();
        time_panel(panel, name, &t, &series)?;
    }
    let norm = |buf: &[f64], j: usize| (0..d).map(|k| buf[k * nt + j].powi(2)).sum::<f64>().sqrt();
    if d == 2 {
        let traj: Vec<(f64, f64)> = (0..nt)
            .map(|j| (h.displacement[j], h.displacement[nt + j]))
            .collect();
        let marks: Vec<(f64, f64)> = (0..nt).filter(|&j| stuck[j]).map(|j| traj[j]).collect();
        xy_panel(
            &panels[3],
            "trajectory (w1, w2); red: stuck",
            traj,
            marks,
            None,
        )?;
        let locus: Vec<(f64, f64)> = (0..nt).map(|j| (h.force[j], h.force[nt + j])).collect();
        xy_panel(
            &panels[4],
            "friction force locus (r1, r2)",
            locus,
            Vec::new(),
            Some(params.mu_n[0]),
        )?;
    } else {
        let traj: Vec<(f64, f64)> = (0..nt).map(|j| (t[j], h.displacement[j])).collect();
        let marks: Vec<(f64, f64)> = (0..nt).filter(|&j| stuck[j]).map(|j| traj[j]).collect();
        xy_panel(&panels[3], "w(t); red: stuck", traj, marks, None)?;
        let locus: Vec<(f64, f64)> = (0..nt).map(|j| (h.velocity[j], h.force[j])).collect();
        xy_panel(
            &panels[4],
            "friction force r against v",
            locus,
            Vec::new(),
            None,
        )?;
    }
    let rv: Vec<(f64, f64)> = (0..nt)
        .map(|j| (norm(&h.velocity, j), norm(&h.force, j)))
        .collect();
    xy_panel(&panels[5], "|r| against |v|", rv, Vec::new(), None)?;
    Ok(())
}

fn time_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    t: &[f64],
    series: &[Vec<f64>],
) -> Res
where
    DB::ErrorType: 'static,
{
    let (y0, y1) = bounds(series.iter().flatten().copied());
    let t1 = t.last().copied().unwrap_or(1.0) + t.get(1).copied().unwrap_or(0.0);
    let mut chart = ChartBuilder::on(area)
        .caption(name, ("sans-serif", 17))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..t1, y0..y1)
        .map_err(e("axes"))?;
    chart
        .configure_mesh()
        .x_desc("t")
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e("mesh"))?;
    for (k, s) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                t.iter().copied().zip(s.iter().copied()),
                color.stroke_width(2),
            ))
            .map_err(e("series"))?
            .label(format!("direction {}", k + 1))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(e("legend"))?;
    }
    Ok(())
}

fn xy_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    line: Vec<(f64, f64)>,
    marks: Vec<(f64, f64)>,
    circle: Option<f64>,
) -> Res
where
    DB::ErrorType: 'static,
{
    let r = circle.unwrap_or(0.0);
    let (x0, x1) = bounds(line.iter().map(|p| p.0).chain([-r, r]));
    let (y0, y1) = bounds(line.iter().map(|p| p.1).chain([-r, r]));
    let mut chart = ChartBuilder::on(area)
        .caption(name, ("sans-serif", 17))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(55)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e("axes"))?;
    chart
        .configure_mesh()
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e("mesh"))?;
    if let Some(r) = circle {
        let pts: Vec<(f64, f64)> = (0..=200)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / 200.0;
                (r * a.cos(), r * a.sin())
            })
            .collect();
        chart
            .draw_series(LineSeries::new(pts, BLACK.mix(0.5)))
            .map_err(e("circle"))?;
    }
    let mut closed = line.clone();
    if let Some(&first) = line.first() {
        closed.push(first);
    }
    chart
        .draw_series(LineSeries::new(closed, COLORS[0].stroke_width(2)))
        .map_err(e("line"))?;
    chart
        .draw_series(marks.into_iter().map(|p| Circle::new(p, 3, RED.filled())))
        .map_err(e("marks"))?;
    Ok(())
}
