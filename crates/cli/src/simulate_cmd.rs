//! `ewr simulate`: the time-domain reference solution (implicit time stepping with exact
//! Coulomb friction to the periodic steady state), and `ewr compare`: column-by-column
//! differences of two time-series CSV files (e.g. `simulate` against `solve`).

use crate::Failure;
use clap::{Args, ValueEnum};
use ewr_model::Model;
use ewr_simulate::timeseries::{self, TimeSeries};
use ewr_simulate::{
    Hysteretic, LinearSolver, Options, SimulateError, Simulation, Summary, with_jenkins,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The long help of `ewr simulate` (set on the subcommand in `main.rs`).
pub const SIMULATE_ABOUT: &str = "Time-domain reference solution: backward-Euler (Moreau-Jean) time \
    stepping of M u'' + C u' + K u = f(t) + W^T r with exact set-valued Coulomb friction at \
    every step, from rest until two successive periods agree within --tol (or --periods \
    periods have run); the last period is reported. Independent of the harmonic-balance \
    solver, so it checks `ewr solve`: --timeseries writes the same CSV columns, and `ewr \
    compare` prints the differences. First order in --dt. See docs/simulate.md.\n\n\
    Exit codes: 0 steady state reached, 1 not reached within --periods (outputs are still \
    written) or a numerical failure, 2 bad input.";

/// Arguments of `ewr simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// The model file (HDF5, see docs/model-format.md).
    model: PathBuf,
    /// Forcing circular frequency w (rad per time unit; the period is 2 pi / w).
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    omega: f64,
    /// Time step, rounded so that a period is a whole number of steps (default: period /
    /// 65536, about the paper's 1e-3 at w = 0.1).
    #[arg(long, value_name = "DT", allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Most periods to integrate before giving up on the steady state.
    #[arg(long, value_name = "P", default_value_t = 1000)]
    periods: usize,
    /// Steady-state tolerance: largest change of the state over a period, relative to its
    /// largest value.
    #[arg(
        long,
        value_name = "T",
        default_value_t = 1e-6,
        allow_negative_numbers = true
    )]
    tol: f64,
    /// Friction bound mu*N (the sliding force f_d) for every contact, instead of the model's.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    mu_n: Option<f64>,
    /// Static bound f_s = F * mu*N (F >= 1): a contact sticks while the force that keeps
    /// it stuck is within f_s, and slides with f_d = mu*N.
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    static_factor: f64,
    /// Elastic (Jenkins) contacts: put a tangential stiffness KT in series with every
    /// contact (a massless slider DOF per direction; w, v, r then describe the slider).
    #[arg(long, value_name = "KT", allow_negative_numbers = true)]
    jenkins: Option<f64>,
    /// Accept hysteretic damping eta by replacing it with the viscous (eta / w) K, exact at
    /// harmonic 1 only (otherwise such models are refused).
    #[arg(long)]
    eta_as_viscous: bool,
    /// DOFs whose displacement is recorded (CSV columns u<i>, HDF5 time/u): `all`, or a
    /// comma-separated list of 0-based indices or DOF labels.
    #[arg(long, value_name = "LIST")]
    dofs: Option<String>,
    /// Step matrix factorisation.
    #[arg(long, value_enum, default_value = "auto")]
    linear_solver: LinearSolverArg,
    /// Write the last period as CSV: t, then per contact w<c>_<k>, v<c>_<k>, r<c>_<k>
    /// (the columns of `ewr solve --timeseries`), then u<i> for --dofs.
    #[arg(long, value_name = "TS.csv")]
    timeseries: Option<PathBuf>,
    /// Write the result as HDF5 (layout in docs/simulate.md).
    #[arg(short, long, value_name = "SIM.h5")]
    output: Option<PathBuf>,
    /// Print the summary as JSON on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Plot the last period of contact 0 (PNG or SVG by extension).
    #[arg(long, value_name = "FIG.png|svg")]
    plot: Option<PathBuf>,
}

/// Step-matrix factorisation choices of the CLI.
#[derive(Clone, Copy, ValueEnum)]
enum LinearSolverArg {
    /// Dense up to 100 DOFs, sparse above.
    Auto,
    /// Dense inverse.
    Dense,
    /// Sparse Cholesky (LU if not positive definite).
    Sparse,
}

/// The long help of `ewr compare` (set on the subcommand in `main.rs`).
pub const COMPARE_ABOUT: &str = "Compare two time-series CSV files (`ewr simulate --timeseries`, \
    `ewr solve --timeseries`) column by column. For every column both files have (except \
    t), prints the largest absolute difference normalised by the column's largest absolute \
    value, and the RMS difference likewise; B is interpolated (periodic, linear) onto A's \
    times when the samplings differ. Jumps of the friction force make the largest \
    difference sensitive to sampling; the RMS is not.\n\n\
    Exit codes: 0 compared (and within --tol if given), 1 some column above --tol, 2 bad \
    input.";

/// Arguments of `ewr compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// First time series (its samples are the comparison points).
    a: PathBuf,
    /// Second time series.
    b: PathBuf,
    /// Fail (exit 1) if a column's normalised largest difference exceeds T.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    tol: Option<f64>,
    /// Print the differences as JSON.
    #[arg(long)]
    json: bool,
}

fn finite(name: &str, x: f64, min: f64, inclusive: bool) -> Result<f64, Failure> {
    let ok = x.is_finite() && if inclusive { x >= min } else { x > min };
    if ok {
        Ok(x)
    } else {
        let rel = if inclusive { ">=" } else { ">" };
        Err(Failure::input(format!(
            "{name} {x}: must be finite and {rel} {min}"
        )))
    }
}

/// Checks that an output's folder exists or can be made, before a long run.
fn prepare_output(path: &Path, extensions: &[&str]) -> Result<(), Failure> {
    if !extensions.is_empty() {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !extensions.contains(&ext) {
            return Err(Failure::input(format!(
                "{}: the file name must end in .{}",
                path.display(),
                extensions.join(" or .")
            )));
        }
    }
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|e| Failure::work(format!("cannot create folder {}: {e}", dir.display()))),
        _ => Ok(()),
    }
}

fn parse_dofs(spec: &str, model: &Model) -> Result<Vec<usize>, Failure> {
    let n = model.n_dofs();
    if spec.trim() == "all" {
        return Ok((0..n).collect());
    }
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let d = match item.parse::<usize>() {
            Ok(d) => d,
            Err(_) => model.dof_by_label(item).ok_or_else(|| {
                Failure::input(format!(
                    "--dofs: {item:?} is neither a DOF index nor a label"
                ))
            })?,
        };
        if d >= n {
            return Err(Failure::input(format!(
                "--dofs: DOF {d} is out of range 0..{n}"
            )));
        }
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        return Err(Failure::input("--dofs: no DOF given"));
    }
    Ok(out)
}

/// Most recorded values (samples x DOFs) accepted, to keep `--dofs all` on a big model from
/// exhausting memory (8 bytes each).
const MAX_RECORDED: usize = 100_000_000;

/// `ewr simulate`.
pub fn simulate(a: &SimulateArgs) -> Result<(), Failure> {
    finite("--omega", a.omega, 0.0, false)?;
    if let Some(dt) = a.dt {
        finite("--dt", dt, 0.0, false)?;
    }
    finite("--tol", a.tol, 0.0, false)?;
    finite("--static-factor", a.static_factor, 1.0, true)?;
    if a.periods == 0 {
        return Err(Failure::input("--periods 0: at least one period is needed"));
    }
    if let Some(x) = a.mu_n {
        finite("--mu-n", x, 0.0, true)?;
    }
    if let Some(k) = a.jenkins {
        finite("--jenkins", k, 0.0, false)?;
    }
    if let Some(p) = &a.timeseries {
        prepare_output(p, &[])?;
    }
    if let Some(p) = &a.output {
        prepare_output(p, &[])?;
    }
    if let Some(p) = &a.plot {
        prepare_output(p, &["png", "svg"])?;
    }
    let read = ewr_model::read(&a.model).map_err(|e| Failure::input(e.to_string()))?;
    for w in &read.warnings {
        eprintln!("{w}");
    }
    let mut model = read.model;
    if let Some(x) = a.mu_n {
        model.contacts.mu_n.iter_mut().for_each(|m| *m = x);
    }
    if let Some(k) = a.jenkins {
        model = with_jenkins(&model, &[k]).map_err(|e| Failure::input(e.to_string()))?;
    }
    let mut opts = Options::new(a.omega);
    opts.dt = a.dt;
    opts.max_periods = a.periods;
    opts.tol = a.tol;
    opts.static_factor = a.static_factor;
    opts.linear_solver = match a.linear_solver {
        LinearSolverArg::Auto => LinearSolver::Auto,
        LinearSolverArg::Dense => LinearSolver::Dense,
        LinearSolverArg::Sparse => LinearSolver::Sparse,
    };
    if a.eta_as_viscous {
        opts.hysteretic = Hysteretic::EquivalentViscous;
    }
    if let Some(spec) = &a.dofs {
        opts.record_dofs = parse_dofs(spec, &model)?;
        let values = opts
            .record_dofs
            .len()
            .saturating_mul(opts.steps_per_period());
        if values > MAX_RECORDED {
            return Err(Failure::input(format!(
                "--dofs: {} DOFs x {} samples is too much to record; name fewer DOFs or \
                 use a larger --dt",
                opts.record_dofs.len(),
                opts.steps_per_period()
            )));
        }
    }

    let bar = progress_bar(a.periods as u64);
    let result = ewr_simulate::simulate(&model, &opts, &mut |p| {
        bar.set_position(p.period as u64);
        bar.set_message(format!("period-to-period change {:.1e}", p.error));
    });
    bar.finish_and_clear();
    let sim = result.map_err(|e| match e {
        SimulateError::Option(_) | SimulateError::Model(_) => Failure::input(e.to_string()),
        SimulateError::Numerical(_) => Failure::work(e.to_string()),
    })?;

    if let Some(p) = &a.timeseries {
        sim.timeseries()
            .save(p)
            .map_err(|e| Failure::work(format!("cannot write {e}")))?;
    }
    if let Some(p) = &a.output {
        sim.write_h5(p, &a.model.display().to_string())
            .map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        plot(p, &sim, &model).map_err(Failure::work)?;
    }
    let summary = sim.summary();
    if a.json {
        let s = serde_json::to_string_pretty(&summary)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        println!("{s}");
    } else {
        print_summary(&a.model, &model, &summary);
    }
    if summary.contact_solver.unconverged_steps > 0 {
        eprintln!(
            "warning: the contact iteration hit its cap in {} steps (largest last change {:.1e} \
             of the static bound)",
            summary.contact_solver.unconverged_steps, summary.contact_solver.max_unconverged_change
        );
    }
    if !sim.converged {
        return Err(Failure::work(format!(
            "no periodic steady state within {} periods (last change {:.2e} > --tol {:.1e}); \
             the last period was still reported",
            sim.periods_run, sim.steady_state_error, sim.tol
        )));
    }
    Ok(())
}

fn progress_bar(len: u64) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if std::io::stderr().is_terminal() {
        pb.set_draw_target(ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] period {pos}/{len} {msg}")
        {
            pb.set_style(style.progress_chars("=> "));
        }
    } else {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    pb
}

/// Contacts listed one per line in the text summary; the rest are in `--json`.
const TEXT_CONTACTS: usize = 20;

/// Stick intervals listed per contact in the text summary; all are in `--json`.
const TEXT_INTERVALS: usize = 8;

fn print_summary(file: &Path, model: &Model, s: &Summary) {
    let c = &model.contacts;
    println!(
        "model:        {} ({} DOFs, {} contacts of dim {})",
        file.display(),
        model.n_dofs(),
        c.len(),
        c.dim
    );
    println!(
        "omega:        {} (period {:.6}), dt {:.6e} ({} steps per period, {} step matrix)",
        s.omega, s.period, s.dt, s.steps_per_period, s.linear_solver
    );
    if s.converged {
        println!(
            "steady state: after {} periods (change {:.1e} <= tol {:.1e}), {:.2} s",
            s.periods_run, s.steady_state_error, s.tol, s.elapsed_s
        );
    } else {
        println!(
            "steady state: NOT reached in {} periods (change {:.1e} > tol {:.1e}), {:.2} s",
            s.periods_run, s.steady_state_error, s.tol, s.elapsed_s
        );
    }
    let e = &s.energy;
    println!(
        "energy/period: input {:.6e} = viscous {:.6e} + friction {:.6e} + numerical {:.3e} \
         (storage change {:.1e}, residual {:.1e})",
        e.input, e.viscous, e.friction, e.numerical, e.storage_change, e.residual
    );
    for cs in s.contacts.iter().take(TEXT_CONTACTS) {
        let mut iv: Vec<String> = cs
            .stick_intervals
            .iter()
            .take(TEXT_INTERVALS)
            .map(|i| format!("[{:.4}, {:.4}]", i[0], i[1]))
            .collect();
        if cs.stick_intervals.len() > TEXT_INTERVALS {
            iv.push(format!(
                "... ({} intervals in all)",
                cs.stick_intervals.len()
            ));
        }
        let sticks = if iv.is_empty() {
            "never sticks".to_string()
        } else {
            format!(
                "sticks {:.1} % of the period: {}",
                100.0 * cs.stick_fraction,
                iv.join(" ")
            )
        };
        println!(
            "contact {}:    {sticks}; |r| <= {:.4e}, |w| <= {:.4e}, Coulomb violation {:.1e}",
            cs.contact, cs.force_amplitude, cs.displacement_amplitude, cs.max_coulomb_violation
        );
    }
    if s.contacts.len() > TEXT_CONTACTS {
        println!(
            "... {} more contacts (see --json)",
            s.contacts.len() - TEXT_CONTACTS
        );
    }
}

/// `ewr compare`.
pub fn compare(a: &CompareArgs) -> Result<(), Failure> {
    if let Some(t) = a.tol {
        finite("--tol", t, 0.0, false)?;
    }
    let load = |p: &Path| TimeSeries::load(p).map_err(|e| Failure::input(e.to_string()));
    let (ta, tb) = (load(&a.a)?, load(&a.b)?);
    let diffs = timeseries::compare(&ta, &tb).map_err(|e| Failure::input(e.to_string()))?;
    if a.json {
        let s = serde_json::to_string_pretty(&diffs)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        println!("{s}");
    } else {
        println!(
            "{:<10} {:>12} {:>12} {:>12} {:>12} {:>12}",
            "column", "max |a-b|", "scale", "max rel", "rms rel", "at t"
        );
        for d in &diffs {
            println!(
                "{:<10} {:>12.4e} {:>12.4e} {:>12.4e} {:>12.4e} {:>12.6}",
                d.name, d.max_abs_diff, d.scale, d.max_rel_diff, d.rms_rel_diff, d.at_t
            );
        }
    }
    if let Some(tol) = a.tol {
        let over: Vec<&str> = diffs
            .iter()
            .filter(|d| d.max_rel_diff > tol)
            .map(|d| d.name.as_str())
            .collect();
        if !over.is_empty() {
            return Err(Failure::work(format!(
                "{} of {} columns differ by more than {tol}: {}",
                over.len(),
                diffs.len(),
                over.join(", ")
            )));
        }
    }
    Ok(())
}

// ---- plot -------------------------------------------------------------------------------

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

type Res = Result<(), String>;

fn err<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("plot {what}: {e:?}")
}

const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
];

/// The last period of contact 0: `w`, `v`, `r` against time (stick phases shaded), the
/// trajectory, the force locus with the friction circle, and `|r|` against `|v|`.
fn plot(path: &Path, sim: &Simulation, model: &Model) -> Res {
    if sim.n_contacts == 0 {
        return Err("plot: the model has no contact to plot".into());
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut font = Ok(());
    ONCE.call_once(|| {
        font = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| "cannot load the embedded font".to_string());
    });
    font?;
    let size = (1500, 900);
    let png = path.extension().and_then(|e| e.to_str()) == Some("png");
    let title = format!(
        "ewr simulate: {}, w = {}, dt = {:.3e}, contact 0 of {}{}",
        model.title.as_deref().unwrap_or("model"),
        sim.omega,
        sim.dt,
        sim.n_contacts,
        if sim.converged { "" } else { " (NOT steady)" }
    );
    if png {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw(&root, sim, &title)?;
        root.present().map_err(err("write"))
    } else {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw(&root, sim, &title)?;
        root.present().map_err(err("write"))
    }
}

fn range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if !lo.is_finite() {
        return (-1.0, 1.0);
    }
    let pad = 0.05 * (hi - lo).max(1e-12 * hi.abs().max(lo.abs()).max(1e-300));
    (lo - pad, hi + pad)
}

/// One x-y panel: title, x values, y values, axis labels.
type Panel<'a> = (&'a str, &'a [f64], &'a [f64], [&'a str; 2]);

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, sim: &Simulation, title: &str) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err("fill"))?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(err("title"))?;
    let panels = root.split_evenly((2, 3));
    let (dim, ns) = (sim.dim, sim.t.len());
    // At most about 4000 points per curve: enough for the eye, small SVG files.
    let stride = ns.div_ceil(4000).max(1);
    let idx: Vec<usize> = (0..ns).step_by(stride).collect();
    let comp =
        |a: &[f64], k: usize| -> Vec<f64> { idx.iter().map(|&j| sim.at(a, j, 0, k)).collect() };
    let norm = |a: &[f64]| -> Vec<f64> {
        idx.iter()
            .map(|&j| {
                (0..dim)
                    .map(|k| sim.at(a, j, 0, k).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
            .collect()
    };
    let t: Vec<f64> = idx.iter().map(|&j| sim.t[j]).collect();
    let stick = sim.contact_summaries()[0].stick_intervals.clone();
    let histories = [
        ("w (relative displacement)", &sim.w),
        ("v (relative velocity)", &sim.v),
        ("r (friction force)", &sim.r),
    ];
    for (p, (name, a)) in panels.iter().zip(histories) {
        let series: Vec<Vec<f64>> = (0..dim).map(|k| comp(a, k)).collect();
        let (y0, y1) = range(series.iter().flatten().copied());
        let mut ch = ChartBuilder::on(p)
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..sim.period, y0..y1)
            .map_err(err("axes"))?;
        ch.configure_mesh()
            .x_desc("t")
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err("mesh"))?;
        // Stick phases as grey bands (wrapped intervals drawn in two pieces).
        let bands = stick.iter().flat_map(|&[s, e]| {
            let mut v = vec![(s, e.min(sim.period))];
            if e > sim.period {
                v.push((0.0, e - sim.period));
            }
            v
        });
        ch.draw_series(
            bands
                .map(|(s, e)| Rectangle::new([(s, y0), (e, y1)], RGBColor(220, 220, 220).filled())),
        )
        .map_err(err("stick"))?;
        for (k, y) in series.into_iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            ch.draw_series(LineSeries::new(
                t.iter().copied().zip(y),
                color.stroke_width(2),
            ))
            .map_err(err("curve"))?
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
                .map_err(err("legend"))?;
        }
    }
    // Bottom row: trajectory, force locus, |r| against |v| (1-D: w-v, w-r, v-r).
    let (xs, ys, names): (Vec<f64>, Vec<f64>, [&str; 2]) = if dim == 2 {
        (comp(&sim.w, 0), comp(&sim.w, 1), ["w1", "w2"])
    } else {
        (comp(&sim.w, 0), comp(&sim.v, 0), ["w", "v"])
    };
    let (fx, fy, fnames): (Vec<f64>, Vec<f64>, [&str; 2]) = if dim == 2 {
        (comp(&sim.r, 0), comp(&sim.r, 1), ["r1", "r2"])
    } else {
        (comp(&sim.w, 0), comp(&sim.r, 0), ["w", "r"])
    };
    let (gx, gy) = (norm(&sim.v), norm(&sim.r));
    let plots: [Panel; 3] = [
        ("trajectory", &xs, &ys, names),
        (
            if dim == 2 {
                "friction force locus"
            } else {
                "hysteresis loop"
            },
            &fx,
            &fy,
            fnames,
        ),
        ("|r| against |v|", &gx, &gy, ["|v|", "|r|"]),
    ];
    let mu_n = sim.mu_n[0];
    for (i, (name, x, y, labels)) in plots.into_iter().enumerate() {
        let (mut x0, mut x1) = range(x.iter().copied());
        let (mut y0, mut y1) = range(y.iter().copied());
        if i == 1 && dim == 2 {
            // Equal axes around the friction circle.
            let m = 1.1 * mu_n.max(x0.abs()).max(x1.abs()).max(y0.abs()).max(y1.abs());
            (x0, x1, y0, y1) = (-m, m, -m, m);
        }
        let mut ch = ChartBuilder::on(&panels[3 + i])
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err("axes"))?;
        ch.configure_mesh()
            .x_desc(labels[0])
            .y_desc(labels[1])
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err("mesh"))?;
        if i == 1 && dim == 2 {
            let circle = (0..=200).map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 200.0;
                (mu_n * a.cos(), mu_n * a.sin())
            });
            ch.draw_series(LineSeries::new(circle, BLACK.stroke_width(1)))
                .map_err(err("circle"))?;
        }
        let pts = x.iter().copied().zip(y.iter().copied());
        if i == 2 {
            ch.draw_series(pts.map(|p| Circle::new(p, 2, COLORS[0].filled())))
                .map_err(err("points"))?;
        } else {
            ch.draw_series(LineSeries::new(pts, COLORS[0].stroke_width(2)))
                .map_err(err("curve"))?;
        }
    }
    Ok(())
}
