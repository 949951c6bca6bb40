//! `ewr simulate`: the time-domain reference solution (implicit time stepping with exact
//! Coulomb friction to the periodic steady state), and `ewr compare`: column-by-column
//! differences of two time-series CSV files (e.g. `simulate` against `solve`).

use crate::Failure;
use crate::args::{finite, parse_dofs, prepare_outputs};
use crate::paths::named;
use clap::{Args, ValueEnum};
use ewr_model::Model;
use ewr_results::figures::PeriodFigure;
use ewr_simulate::setup::{OptionProblem, RunOptions};
use ewr_simulate::timeseries::{self, TimeSeries};
use ewr_simulate::{LinearSolver, SimulateError, Summary};
use std::path::{Path, PathBuf};

/// The long help of `ewr simulate` (set on the subcommand in `main.rs`).
pub const SIMULATE_ABOUT: &str = "Time-domain reference solution: backward-Euler (Moreau-Jean) time \
    stepping of M u'' + C u' + K u = f(t) + W^T r with exact set-valued Coulomb friction at \
    every step, from rest until two successive periods agree within --tol (or --periods \
    periods have run); the last period is reported. Independent of the harmonic-balance \
    solver, so it checks `ewr solve`: --timeseries writes the same CSV columns, and `ewr \
    compare` prints the differences. First order in --dt. With --omega-start, --omega-end \
    and --step instead of --omega, a stepped sine: each frequency from the state the one \
    before ended in, as a test rig measures a frequency response (one row per frequency in \
    --csv, with `ewr frc --csv`'s column names). See docs/simulate.md.\n\n\
    Exit codes: 0 steady state reached (at every frequency), 1 not reached within --periods \
    (outputs are still written) or a numerical failure, 2 bad input.";

/// Arguments of `ewr simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// The model file (HDF5, see docs/model-format.md).
    model: PathBuf,
    /// Forcing circular frequency w (rad per time unit; the period is 2 pi / w).
    #[arg(
        long,
        value_name = "W",
        allow_hyphen_values = true,
        required_unless_present = "omega_start",
        conflicts_with = "omega_start"
    )]
    omega: Option<f64>,
    /// Stepped sine: first frequency. Each frequency A + k S up to B is integrated to its
    /// steady state from the state the one before ended in (the first from rest), as a test
    /// rig steps its shaker; one row per frequency in --csv, the curve in --plot.
    #[arg(
        long,
        value_name = "A",
        allow_hyphen_values = true,
        requires_all = ["omega_end", "step"]
    )]
    omega_start: Option<f64>,
    /// Stepped sine: last frequency (below the first for a downward sweep).
    #[arg(
        long,
        value_name = "B",
        allow_hyphen_values = true,
        requires = "omega_start"
    )]
    omega_end: Option<f64>,
    /// Stepped sine: frequency step.
    #[arg(
        long,
        value_name = "S",
        allow_hyphen_values = true,
        requires = "omega_start"
    )]
    step: Option<f64>,
    /// Stepped sine: write one row per frequency as CSV, flushed as each is done (omega,
    /// converged, periods, steady_state_error, amp_norm, amp_w<c>, peak_u<i>, mean_u<i>,
    /// h1_u<i>, stick<c>, energy<c>: the columns of `ewr frc --csv` where they agree).
    #[arg(long, value_name = "FRC.csv", requires = "omega_start")]
    csv: Option<PathBuf>,
    /// Time step, rounded so that a period is a whole number of steps (default: period /
    /// 65536, about the paper's 1e-3 at w = 0.1).
    #[arg(long, value_name = "DT", allow_hyphen_values = true)]
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
        allow_hyphen_values = true
    )]
    tol: f64,
    /// Friction bound mu*N (the sliding force f_d) for every contact, instead of the model's.
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    mu_n: Option<f64>,
    /// Static bound f_s = F * mu*N (F >= 1): a contact sticks while the force that keeps
    /// it stuck is within f_s, and slides with f_d = mu*N.
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1.0,
        allow_hyphen_values = true
    )]
    static_factor: f64,
    /// Elastic (Jenkins) contacts: put a tangential stiffness KT in series with every
    /// contact (a massless slider DOF per direction; w, v, r then describe the slider).
    #[arg(long, value_name = "KT", allow_hyphen_values = true)]
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
    /// (the columns of `ewr solve --timeseries`), then u<i> for --dofs (a stepped sine: its
    /// last frequency's).
    #[arg(long, value_name = "TS.csv")]
    timeseries: Option<PathBuf>,
    /// Write the result as HDF5 (layout in docs/simulate.md; a stepped sine: its last
    /// frequency's period).
    #[arg(short, long, value_name = "SIM.h5")]
    output: Option<PathBuf>,
    /// Print the summary as JSON on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Plot the last period of contact 0 (PNG or SVG by extension); a stepped sine: its
    /// amplitude against frequency, as `ewr frc --plot`.
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
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    tol: Option<f64>,
    /// Print the differences as JSON.
    #[arg(long)]
    json: bool,
}

/// `ewr simulate`.
pub fn simulate(a: &SimulateArgs) -> Result<(), Failure> {
    let problem = |e: OptionProblem| Failure::input(e.render(true));
    // A stepped sine's frequencies, checked before any file is touched.
    let stepped = match (a.omega_start, a.omega_end, a.step) {
        (Some(w0), Some(w1), Some(dw)) => {
            Some(ewr_simulate::setup::stepped(w0, w1, dw, a.dt).map_err(problem)?)
        }
        _ => None,
    };
    let omega = match (&stepped, a.omega) {
        // The lowest: the most steps a period, which the recording limit is checked at.
        (Some(ws), _) => ws.iter().copied().fold(f64::INFINITY, f64::min),
        (None, Some(w)) => w,
        (None, None) => {
            return Err(Failure::input(
                "give --omega, or --omega-start, --omega-end and --step",
            ));
        }
    };
    let mut run = RunOptions {
        dt: a.dt,
        periods: a.periods,
        tol: a.tol,
        mu_n: a.mu_n,
        static_factor: a.static_factor,
        jenkins: a.jenkins,
        eta_as_viscous: a.eta_as_viscous,
        record_dofs: None,
        linear_solver: match a.linear_solver {
            LinearSolverArg::Auto => LinearSolver::Auto,
            LinearSolverArg::Dense => LinearSolver::Dense,
            LinearSolverArg::Sparse => LinearSolver::Sparse,
        },
        ..RunOptions::new(omega)
    };
    ewr_simulate::setup::check(&run).map_err(problem)?;
    let _claims = prepare_outputs(
        &[named("MODEL", &a.model)],
        &[
            ("--timeseries", a.timeseries.as_deref(), &[]),
            ("-o", a.output.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
            ("--csv", a.csv.as_deref(), &[]),
        ],
    )?;
    crate::probe::readable(crate::probe::Kind::Model, &a.model)?;
    let read = ewr_model::read(&a.model).map_err(|e| Failure::input(e.to_string()))?;
    for w in &read.warnings {
        say_err!("{w}");
    }
    if let Some(spec) = &a.dofs {
        run.record_dofs = Some(parse_dofs(spec, &read.model)?);
    } else if stepped.is_some() {
        // The amplitude of a stepped sine is that of the DOFs `ewr frc` monitors.
        run.record_dofs = Some(ewr_solve::setup::default_monitor(&read.model));
    }
    let (model, mut opts) = ewr_simulate::setup::prepare(read.model, &run).map_err(problem)?;
    // Ctrl-C / SIGTERM: one more period is integrated and everything written, as `frc` does.
    crate::interrupt::install();
    opts.stop = Some(crate::interrupt::flag());
    if let Some(ws) = &stepped {
        return stepped_sine(a, &model, &opts, ws);
    }

    let bar = crate::progress::bar(a.periods as u64, "periods");
    let result = ewr_simulate::simulate(&model, &opts, &mut |p| {
        bar.set_position(p.period as u64);
        bar.set_message(format!("period-to-period change {:.1e}", p.error));
    });
    bar.finish_and_clear();
    let sim = result.map_err(simulate_failure)?;
    write_period(a, &model, &sim)?;
    let summary = sim.summary();
    if a.json {
        let s = serde_json::to_string_pretty(&summary)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        say!("{s}");
    } else {
        print_summary(&a.model, &model, &summary);
    }
    if summary.contact_solver.unconverged_steps > 0 {
        say_err!(
            "warning: the contact iteration hit its cap in {} steps (largest last change {:.1e} \
             of the static bound)",
            summary.contact_solver.unconverged_steps,
            summary.contact_solver.max_unconverged_change
        );
    }
    if sim.interrupted {
        return Err(Failure::work(format!(
            "interrupted after {} periods, before the steady state: the last period was \
             written with status \"interrupted\"",
            sim.periods_run
        )));
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

fn simulate_failure(e: SimulateError) -> Failure {
    match e {
        SimulateError::Option(_) | SimulateError::Model(_) => Failure::input(e.to_string()),
        SimulateError::Numerical(_) => Failure::work(e.to_string()),
        _ => Failure::input(e.to_string()),
    }
}

/// `--timeseries` and `-o` of one period (a stepped sine's last), and `--plot` of a single
/// frequency's.
fn write_period(
    a: &SimulateArgs,
    model: &Model,
    sim: &ewr_simulate::Simulation,
) -> Result<(), Failure> {
    if let Some(p) = &a.timeseries {
        sim.timeseries()
            .save(p)
            .map_err(|e| Failure::work(format!("cannot write {e}")))?;
    }
    if let Some(p) = &a.output {
        sim.write_h5(p, &a.model.display().to_string())
            .map_err(Failure::work)?;
    }
    if let (Some(p), None) = (&a.plot, a.omega_start) {
        if sim.n_contacts == 0 {
            return Err(Failure::input("--plot: the model has no contact to plot"));
        }
        ewr_results::figures::period(p, &PeriodFigure::of_simulation(sim, model))
            .map_err(Failure::work)?;
    }
    Ok(())
}

/// `ewr simulate --omega-start A --omega-end B --step S`: the stepped sine, its table written
/// row by row, the curve drawn, the last period written as a single run's.
fn stepped_sine(
    a: &SimulateArgs,
    model: &Model,
    opts: &ewr_simulate::Options,
    omegas: &[f64],
) -> Result<(), Failure> {
    let mut csv = match &a.csv {
        Some(p) => Some(
            ewr_results::stepped::SteppedCsv::create(p, model.contacts.len(), &opts.record_dofs)
                .map_err(Failure::work)?,
        ),
        None => None,
    };
    let keep_last = a.timeseries.is_some() || a.output.is_some();
    let mut last = None;
    let mut write_error = None;
    let bar = crate::progress::bar(omegas.len() as u64, "frequencies");
    let run = ewr_simulate::stepped_sine(
        model,
        opts,
        omegas,
        &mut |p| {
            bar.set_position(p.index as u64);
            bar.set_message(format!(
                "w = {}: period {}, change {:.1e}",
                p.omega, p.run.period, p.run.error
            ));
        },
        &mut |p, sim| {
            if keep_last {
                last = Some(sim.clone());
            }
            // A table that cannot be written ends the sweep: its rows are what it is for.
            match csv.as_mut().map(|c| c.row(p)) {
                Some(Err(e)) => {
                    write_error = Some(e);
                    false
                }
                _ => true,
            }
        },
    );
    bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(Failure::work(e));
    }
    // A failure part way keeps what was done: the table, the figure, the last period and the
    // printed rows, then the error.
    let points = run.points;
    if let Some(sim) = &last {
        write_period(a, model, sim)?;
    }
    if let Some(p) = &a.plot {
        ewr_results::stepped::plot(p, model, &a.model.display().to_string(), &points)
            .map_err(Failure::work)?;
    }
    if a.json {
        let v = serde_json::json!({ "dofs": &opts.record_dofs, "points": &points });
        let s = serde_json::to_string_pretty(&v)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        say!("{s}");
    } else {
        say!(
            "{:>14} {:>9} {:>8} {:>14}  stick fraction (min..max over contacts)",
            "omega",
            "steady",
            "periods",
            "amp_norm"
        );
        for p in &points {
            let (lo, hi) = p
                .stick_fraction
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &f| {
                    (l.min(f), h.max(f))
                });
            let sticks = if p.stick_fraction.is_empty() {
                String::new()
            } else {
                format!("{lo:.3}..{hi:.3}")
            };
            // The grid's round-off (0.6000000000000001) is the files' business, not the table's.
            let omega: f64 = format!("{:.12e}", p.omega).parse().unwrap_or(p.omega);
            say!(
                "{:>14} {:>9} {:>8} {:>14.6e}  {sticks}",
                omega,
                if p.converged { "yes" } else { "NO" },
                p.periods_run,
                p.amplitude
            );
        }
    }
    if let Some(e) = run.failure {
        let done = format!(
            "{} of {} frequencies done before it, and written",
            points.len(),
            omegas.len()
        );
        let at = omegas.get(points.len()).copied().unwrap_or(f64::NAN);
        let mut f = simulate_failure(e);
        f.message = format!("{} (at w = {at}; {done})", f.message);
        return Err(f);
    }
    if points.last().is_some_and(|p| p.interrupted) {
        return Err(Failure::work(format!(
            "interrupted at w = {} ({} of {} frequencies, the last before its steady state): \
             what was done is written",
            points.last().map_or(0.0, |p| p.omega),
            points.len(),
            omegas.len()
        )));
    }
    let failed: Vec<String> = points
        .iter()
        .filter(|p| !p.converged)
        .map(|p| p.omega.to_string())
        .collect();
    if !failed.is_empty() {
        return Err(Failure::work(format!(
            "no periodic steady state within {} periods at {} of {} frequencies (w = {}); \
             their last periods were still reported, and each next frequency started from \
             there",
            a.periods,
            failed.len(),
            points.len(),
            failed.join(", ")
        )));
    }
    Ok(())
}

/// Contacts listed one per line in the text summary; the rest are in `--json`.
const TEXT_CONTACTS: usize = 20;

/// Stick intervals listed per contact in the text summary; all are in `--json`.
const TEXT_INTERVALS: usize = 8;

fn print_summary(file: &Path, model: &Model, s: &Summary) {
    let c = &model.contacts;
    say!(
        "model:        {} ({} DOFs, {} contacts of dim {})",
        file.display(),
        model.n_dofs(),
        c.len(),
        c.dim
    );
    say!(
        "omega:        {} (period {:.6}), dt {:.6e} ({} steps per period, {} step matrix)",
        s.omega,
        s.period,
        s.dt,
        s.steps_per_period,
        s.linear_solver
    );
    if s.converged {
        say!(
            "steady state: after {} periods (change {:.1e} <= tol {:.1e}), {:.2} s",
            s.periods_run,
            s.steady_state_error,
            s.tol,
            s.elapsed_s
        );
    } else {
        say!(
            "steady state: NOT reached in {} periods (change {:.1e} > tol {:.1e}), {:.2} s",
            s.periods_run,
            s.steady_state_error,
            s.tol,
            s.elapsed_s
        );
    }
    let e = &s.energy;
    match e.normal {
        None => say!(
            "energy/period: input {:.6e} = viscous {:.6e} + friction {:.6e} + numerical {:.3e} \
             (storage change {:.1e}, residual {:.1e})",
            e.input,
            e.viscous,
            e.friction,
            e.numerical,
            e.storage_change,
            e.residual
        ),
        Some(normal) => say!(
            "energy/period: input {:.6e} = viscous {:.6e} + friction {:.6e} + normal {:.3e} + \
             numerical {:.3e} (storage change {:.1e}, residual {:.1e}); impacts {:.3e}",
            e.input,
            e.viscous,
            e.friction,
            normal,
            e.numerical,
            e.storage_change,
            e.residual,
            e.impact.unwrap_or(0.0)
        ),
    }
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
        say!(
            "contact {}:    {sticks}; |r| <= {:.4e}, |w| <= {:.4e}, Coulomb violation {:.1e}",
            cs.contact,
            cs.force_amplitude,
            cs.displacement_amplitude,
            cs.max_coulomb_violation
        );
        if let Some(n) = &cs.normal {
            let mut iv: Vec<String> = n
                .separation_intervals
                .iter()
                .take(TEXT_INTERVALS)
                .map(|i| format!("[{:.4}, {:.4}]", i[0], i[1]))
                .collect();
            if n.separation_intervals.len() > TEXT_INTERVALS {
                iv.push(format!(
                    "... ({} intervals in all)",
                    n.separation_intervals.len()
                ));
            }
            let sep = if iv.is_empty() {
                "never separates".to_string()
            } else {
                format!(
                    "separated {:.1} % of the period: {}",
                    100.0 * n.separation_fraction,
                    iv.join(" ")
                )
            };
            say!(
                "              {sep}; normal force mean {:.4e}, max {:.4e}; gap min {:.1e}, \
                 largest while loaded {:.1e}",
                n.normal_force_mean,
                n.normal_force_max,
                n.min_gap,
                n.max_loaded_gap
            );
        }
    }
    if s.contacts.len() > TEXT_CONTACTS {
        say!(
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
        say!("{s}");
    } else {
        say!(
            "{:<10} {:>12} {:>12} {:>12} {:>12} {:>12}",
            "column",
            "max |a-b|",
            "scale",
            "max rel",
            "rms rel",
            "at t"
        );
        for d in &diffs {
            say!(
                "{:<10} {:>12.4e} {:>12.4e} {:>12.4e} {:>12.4e} {:>12.6}",
                d.name,
                d.max_abs_diff,
                d.scale,
                d.max_rel_diff,
                d.rms_rel_diff,
                d.at_t
            );
        }
    }
    let broken: Vec<String> = diffs
        .iter()
        .filter(|d| d.non_finite > 0)
        .map(|d| {
            format!(
                "{} ({} samples, first at t = {})",
                d.name, d.non_finite, d.at_t
            )
        })
        .collect();
    if !broken.is_empty() {
        return Err(Failure::work(format!(
            "{} of {} columns hold NaN or infinite values, which agree with nothing: {}",
            broken.len(),
            diffs.len(),
            broken.join(", ")
        )));
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
