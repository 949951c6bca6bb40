//! Scale benchmarks (release build): `cargo bench -p ewr-solve --bench scale [-- PART]` with
//! PART in `precond`, `chain`, `harmonics`, `contacts`, `sector` (default: all). Prints tables; see
//! docs/performance.md ("Scale").

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_model::examples::{self, Sector, sector};
use ewr_solve::{
    Continuation, FrcSettings, LinearSolve, NewtonOptions, PointSettings, Preconditioner, frc,
    solve_point,
};
use std::time::Instant;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn settings(set: HarmonicSet, linear: LinearSolve, monitor: Vec<usize>) -> PointSettings {
    PointSettings {
        n_samples: default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            linear,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor,
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

/// A sequential sweep; returns (points, not converged, Newton iterations, GMRES
/// iterations, seconds).
fn sweep(
    rec: &Receptance,
    model: &Model,
    set: HarmonicSet,
    linear: LinearSolve,
    (w0, w1, n): (f64, f64, usize),
) -> (usize, usize, usize, usize, f64) {
    let p = ContactParams::of(&model.contacts);
    let step = (w1 - w0) / (n - 1) as f64;
    let s = FrcSettings {
        omega_start: w0,
        omega_end: w1,
        step,
        min_step: step,
        max_step: step,
        method: Continuation::Sequential,
        point: settings(set, linear, vec![model.forcing[0].dof]),
        max_points: n,
        adaptive: None,
        keep_histories: true,
    };
    let t = Instant::now();
    let mut done = 0usize;
    let pts = frc(rec, &p, &s, &mut |_| {
        done += 1;
        if n >= 50 && done.is_multiple_of(10) {
            eprintln!("  {done}/{n} points, {:.1} s", t.elapsed().as_secs_f64());
        }
        true
    })
    .expect("sweep");
    let secs = t.elapsed().as_secs_f64();
    let bad = pts
        .iter()
        .filter(|q| !q.solution.status.converged())
        .count();
    let it = pts.iter().map(|q| q.solution.iterations).sum();
    let kry = pts.iter().map(|q| q.solution.krylov_iterations).sum();
    (pts.len(), bad, it, kry, secs)
}

/// One point from zero force with the dense solver and each matrix-free preconditioner.
fn precond_case(name: &str, model: &Model, kind: ReceptanceKind, omega: f64, set: HarmonicSet) {
    let rec = Receptance::new(model, kind).unwrap();
    let p = ContactParams::of(&model.contacts);
    let n = p.dim * p.len() * set.n_coeffs();
    let mut dense_x: Option<Vec<f64>> = None;
    for (linear, pre) in [
        (LinearSolve::Dense, Preconditioner::Contact),
        (LinearSolve::MatrixFree, Preconditioner::Contact),
        (LinearSolve::MatrixFree, Preconditioner::Harmonic),
        (LinearSolve::MatrixFree, Preconditioner::TwoLevel),
    ] {
        if linear == LinearSolve::Dense && n > 5000 {
            continue;
        }
        let mut s = settings(set.clone(), linear, vec![]);
        s.preconditioner = pre;
        let t = Instant::now();
        let sol = solve_point(&rec, &p, omega, &s, None).expect("solve");
        let secs = t.elapsed().as_secs_f64();
        let mu = p.mu_n.iter().copied().fold(0.0, f64::max);
        let diff = dense_x.as_ref().map_or(f64::NAN, |d| {
            d.iter()
                .zip(&sol.friction)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / mu
        });
        let label = match linear {
            LinearSolve::Dense => "dense".to_string(),
            _ => format!("matrix-free, {pre}"),
        };
        println!(
            "| {name} | {n} | {label} | {} | {} | {} | {:.3} | {diff:.1e} |",
            sol.status, sol.iterations, sol.krylov_iterations, secs
        );
        if linear == LinearSolve::Dense {
            dense_x = Some(sol.friction);
        }
    }
}

fn precond() {
    println!("\n## preconditioners: one point from zero force, harmonic ramping\n");
    println!(
        "| case | unknowns | linear | status | Newton it | GMRES it | s | max dR / muN vs dense |"
    );
    println!("|---|---:|---|---|---:|---:|---:|---:|");
    let mut c40 = examples::chain(40);
    c40.forcing[0].cos *= 4.0;
    precond_case(
        "chain 40, x4 force, w = 0.1",
        &c40,
        ReceptanceKind::Dense,
        0.1,
        HarmonicSet::odd(7).unwrap(),
    );
    precond_case(
        "chain 290, w = 0.3",
        &examples::chain(290),
        ReceptanceKind::Dense,
        0.3,
        HarmonicSet::odd(3).unwrap(),
    );
    let mut m = examples::two_mass_damper(1.0);
    m.forcing[1].harmonic = 3;
    precond_case(
        "Fig. 21 (odd:1799)",
        &m,
        ReceptanceKind::Dense,
        0.115,
        HarmonicSet::odd(1799).unwrap(),
    );
    for (refine, nc) in [(2usize, 20usize), (3, 100)] {
        let model = sector(&Sector {
            refine,
            contacts: nc,
            ..Sector::default()
        });
        let kind = ReceptanceKind::Modal { modes: 100 };
        let w1 = Receptance::new(&model, kind)
            .unwrap()
            .modes()
            .unwrap()
            .omega[0];
        precond_case(
            &format!("sector r{refine}, {nc} contacts, w1"),
            &model,
            kind,
            w1,
            HarmonicSet::odd(7).unwrap(),
        );
    }
}

fn chain() {
    println!("\n## chain, N = 290, 300 points, w = 0.02 .. 0.6\n");
    println!(
        "| harmonics | linear | unknowns | points | not converged | Newton it | GMRES it | s |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let model = examples::chain(290);
    let rec = Receptance::new(&model, ReceptanceKind::Auto).unwrap();
    for h in [1usize, 3] {
        for linear in [
            LinearSolve::Auto,
            LinearSolve::Dense,
            LinearSolve::MatrixFree,
        ] {
            let set = HarmonicSet::odd(h).unwrap();
            let n = 290 * set.n_coeffs();
            let (np, bad, it, kry, s) = sweep(&rec, &model, set, linear, (0.02, 0.6, 300));
            println!("| odd:{h} | {linear} | {n} | {np} | {bad} | {it} | {kry} | {s:.2} |");
        }
    }
}

/// Least-squares slope of log(y) against log(x).
fn exponent(x: &[f64], y: &[f64]) -> f64 {
    let lx: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    let ly: Vec<f64> = y.iter().map(|v| v.ln()).collect();
    let n = lx.len() as f64;
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = lx.iter().map(|a| (a - mx).powi(2)).sum();
    sxy / sxx
}

/// Where the scaling tables and plots are written (`target/bench-scale/`).
fn out_dir() -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-scale");
    std::fs::create_dir_all(&d).expect("create target/bench-scale");
    d
}

/// A log-log plot of `series` (name, points), with the fitted exponent in each legend entry,
/// as `file.svg` and `file.png`.
fn loglog_svg(file: &str, title: &str, xlabel: &str, series: &[(String, Vec<(f64, f64)>)]) {
    use plotters::prelude::*;
    static FONT: &[u8] = include_bytes!("../../results/assets/DejaVuSans.ttf");
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
    let svg = out_dir().join(format!("{file}.svg"));
    let png = out_dir().join(format!("{file}.png"));
    draw_loglog(
        &SVGBackend::new(&svg, (800, 560)).into_drawing_area(),
        title,
        xlabel,
        series,
    );
    draw_loglog(
        &BitMapBackend::new(&png, (800, 560)).into_drawing_area(),
        title,
        xlabel,
        series,
    );
    println!("\nplot: {} (and .png)", svg.display());
}

fn draw_loglog<DB: plotters::prelude::DrawingBackend>(
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    xlabel: &str,
    series: &[(String, Vec<(f64, f64)>)],
) {
    use plotters::prelude::*;
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for &(x, y) in pts {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    root.fill(&WHITE).unwrap();
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            ((x0 / 1.3)..(x1 * 1.3)).log_scale(),
            ((y0 / 1.5)..(y1 * 1.5)).log_scale(),
        )
        .unwrap();
    chart
        .configure_mesh()
        .x_desc(xlabel)
        .y_desc("seconds per frequency point")
        .label_style(("sans-serif", 14))
        .draw()
        .unwrap();
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
    ];
    for (k, (name, p)) in series.iter().enumerate() {
        let c = colors[k % colors.len()];
        let (x, y): (Vec<f64>, Vec<f64>) = p.iter().copied().unzip();
        let label = if p.len() >= 2 {
            format!("{name} (slope {:.2})", exponent(&x, &y))
        } else {
            name.clone()
        };
        chart
            .draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
            .unwrap()
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(p.iter().map(|&q| Circle::new(q, 4, c.filled())))
            .unwrap();
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .unwrap();
    root.present().unwrap();
}

fn harmonics() {
    println!("\n## harmonics: sector refine 2, 20 contacts, 5 points around w1, modal 50\n");
    let model = sector(&Sector {
        refine: 2,
        contacts: 20,
        ..Sector::default()
    });
    let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 50 }).unwrap();
    let w1 = rec.modes().unwrap().omega[0];
    println!(
        "| H | unknowns | linear | not converged | Newton it | GMRES it | s/point | ms/iteration |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|");
    let mut rows: Vec<(LinearSolve, f64, f64, f64)> = Vec::new();
    for h in [1usize, 3, 7, 15, 31, 63, 127, 199] {
        let set = HarmonicSet::odd(h).unwrap();
        let n = 40 * set.n_coeffs();
        for linear in [LinearSolve::Dense, LinearSolve::MatrixFree] {
            if linear == LinearSolve::Dense && n > 4000 {
                continue;
            }
            let (np, bad, it, kry, s) =
                sweep(&rec, &model, set.clone(), linear, (0.98 * w1, 1.02 * w1, 5));
            let per_it = 1e3 * s / it.max(1) as f64;
            println!(
                "| {h} | {n} | {linear} | {bad} | {it} | {kry} | {:.3} | {per_it:.2} |",
                s / np as f64
            );
            rows.push((linear, h as f64, s / np as f64, per_it));
        }
    }
    print_growth(&rows, "H", 1, " (H >= 3)");
    plot_rows(
        "scale-harmonics",
        "sector, 20 contacts: time against harmonics",
        "highest harmonic H (odd:H)",
        &rows,
    );
}

/// Fitted growth exponents of the (linear, x, s/point, ms/iteration) rows per linear solver,
/// leaving out the first `skip` rows of each.
fn print_growth(rows: &[(LinearSolve, f64, f64, f64)], var: &str, skip: usize, note: &str) {
    for linear in [LinearSolve::Dense, LinearSolve::MatrixFree] {
        let r: Vec<_> = rows.iter().filter(|r| r.0 == linear).skip(skip).collect();
        let x: Vec<f64> = r.iter().map(|r| r.1).collect();
        let pp: Vec<f64> = r.iter().map(|r| r.2).collect();
        let pi: Vec<f64> = r.iter().map(|r| r.3).collect();
        println!(
            "\n{linear}: time per point ~ {var}^{:.2}, per iteration ~ {var}^{:.2}{note}",
            exponent(&x, &pp),
            exponent(&x, &pi)
        );
    }
}

/// The (linear, x, s/point) rows as a log-log plot, one line per linear solver.
fn plot_rows(file: &str, title: &str, xlabel: &str, rows: &[(LinearSolve, f64, f64, f64)]) {
    let series: Vec<(String, Vec<(f64, f64)>)> = [LinearSolve::Dense, LinearSolve::MatrixFree]
        .iter()
        .map(|&l| {
            (
                l.to_string(),
                rows.iter()
                    .filter(|r| r.0 == l)
                    .map(|r| (r.1, r.2))
                    .collect(),
            )
        })
        .filter(|s: &(String, Vec<(f64, f64)>)| !s.1.is_empty())
        .collect();
    loglog_svg(file, title, xlabel, &series);
}

fn contacts() {
    println!("\n## contacts: sector refine 3, odd:7, 5 points around w1, modal 100\n");
    println!(
        "| contacts | DOFs | unknowns | linear | setup s | not converged | Newton it | GMRES it | s/point | ms/iteration |"
    );
    println!("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut rows: Vec<(LinearSolve, f64, f64, f64)> = Vec::new();
    for nc in [10usize, 30, 100, 300, 1000] {
        let model = sector(&Sector {
            refine: 3,
            contacts: nc,
            ..Sector::default()
        });
        let t = Instant::now();
        let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 100 }).unwrap();
        let setup = t.elapsed().as_secs_f64();
        let w1 = rec.modes().unwrap().omega[0];
        let set = HarmonicSet::odd(7).unwrap();
        let n = 2 * nc * set.n_coeffs();
        for linear in [LinearSolve::Dense, LinearSolve::MatrixFree] {
            if linear == LinearSolve::Dense && n > 5000 {
                continue;
            }
            let (np, bad, it, kry, s) =
                sweep(&rec, &model, set.clone(), linear, (0.98 * w1, 1.02 * w1, 5));
            let per_it = 1e3 * s / it.max(1) as f64;
            println!(
                "| {nc} | {} | {n} | {linear} | {setup:.1} | {bad} | {it} | {kry} | {:.3} | {per_it:.2} |",
                model.n_dofs(),
                s / np as f64
            );
            rows.push((linear, nc as f64, s / np as f64, per_it));
        }
    }
    print_growth(&rows, "nc", 0, "");
    plot_rows(
        "scale-contacts",
        "sector, odd:7: time against contacts",
        "friction contacts",
        &rows,
    );
}

fn big_sector() {
    let t0 = Instant::now();
    let model = sector(&Sector {
        refine: 4,
        contacts: 500,
        ..Sector::default()
    });
    let t_mesh = t0.elapsed().as_secs_f64();
    let t = Instant::now();
    let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 100 }).unwrap();
    let t_modal = t.elapsed().as_secs_f64();
    let w1 = rec.modes().unwrap().omega[0];
    let set = HarmonicSet::odd(7).unwrap();
    let (np, bad, it, kry, s) = sweep(
        &rec,
        &model,
        set,
        LinearSolve::Auto,
        (0.9 * w1, 1.1 * w1, 100),
    );
    println!(
        "\n## sector refine 4: {} DOFs, 500 contacts, odd:7 (8000 unknowns), 100 points\n",
        model.n_dofs()
    );
    println!(
        "| mesh s | modal extraction s | sweep s | total s | points | not converged | Newton it | GMRES it | peak RSS MB |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {t_mesh:.1} | {t_modal:.1} | {s:.1} | {:.1} | {np} | {bad} | {it} | {kry} | {:.0} |",
        t0.elapsed().as_secs_f64(),
        peak_rss_mb()
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |p: &str| args.is_empty() || args.iter().any(|a| a == p);
    println!("threads: {}", rayon::current_num_threads());
    if want("precond") {
        precond();
    }
    if want("chain") {
        chain();
    }
    if want("harmonics") {
        harmonics();
    }
    if want("contacts") {
        contacts();
    }
    if want("sector") {
        big_sector();
    }
    println!("\npeak RSS {:.0} MB", peak_rss_mb());
}
