//! `ewr solve` (one periodic solution) and `ewr frc` (frequency response curves).

use crate::Failure;
use crate::paths::named;
use crate::results;
use clap::Args;
use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_solve::{
    Continuation, FrcPoint, FrcSettings, NewtonOptions, Peak, PointSettings, PointSolution, frc,
    frc_resume, refine_peaks, solve_point,
};
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// Options shared by `solve` and `frc`: harmonics, friction law, overrides, solver.
#[derive(Args, Clone, Debug)]
pub struct Common {
    /// The model file (HDF5, see docs/model-format.md).
    pub model: PathBuf,
    /// Harmonic set: `odd:H` (odd harmonics 1..H, the paper's N_phi = H + 1), `all:H`
    /// (0..H, needed for static loads or even harmonics) or a list such as `1,3,5,7` or
    /// `0,1,2,5`.
    #[arg(long, default_value = "odd:59", value_name = "SET")]
    pub harmonics: String,
    /// Time samples per period for the Galerkin integrals (default: 8 (H+1) rounded up to a
    /// power of two, at least 64).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub samples: Option<usize>,
    /// Scaling rho of the friction law for every contact (default: the model's, usually 1),
    /// or `auto`: at each frequency rho = 1 / (h w |G_h|) from the structure (times the
    /// model's rho), so that a model in SI or any other units needs no hand-picked rho. 3-D
    /// contacts are always scaled so; a number is then a factor.
    #[arg(long, value_name = "R|auto", allow_negative_numbers = true)]
    pub rho: Option<String>,
    /// Friction law: exact, projection, tanh:ALPHA, pwl:DELTA or maxeps:EPS.
    #[arg(long, default_value = "exact", value_name = "LAW")]
    pub law: String,
    /// Condensation backend: auto, dense, sparse or modal:MODES.
    #[arg(long, default_value = "auto", value_name = "KIND")]
    pub receptance: String,
    /// Tolerance on the scaled residual ||g|| / (max muN)^2 (3-D contacts: their force
    /// scale) [default: 1e-10; 1e-9 for 3-D contacts, whose stuck mean forces the last digit
    /// would only move].
    #[arg(long, value_name = "TOL", allow_negative_numbers = true)]
    pub tol: Option<f64>,
    /// Linear algebra of each Newton step: dense (assemble and factorise the Jacobian),
    /// matrix-free (GMRES on Jacobian products, see --preconditioner), or auto (matrix-free
    /// above 500 unknowns with more than one contact); arclength continuation included.
    #[arg(long, default_value = "auto", value_name = "KIND")]
    pub linear: String,
    /// Preconditioner of the matrix-free path: contact (each contact's own Jacobian block),
    /// harmonic (per harmonic, the Jacobian with period-averaged law derivatives: all the
    /// coupling through the structure), or two-level (both; best when contacts interact).
    #[arg(long, default_value = "two-level", value_name = "KIND")]
    pub preconditioner: String,
    /// Newton iteration cap per solve.
    #[arg(
        long,
        default_value_t = 200,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub max_iter: usize,
    /// Solve directly on the full harmonic set instead of ramping up from one harmonic.
    #[arg(long)]
    pub no_ramp: bool,
    /// DOFs whose response is reported, by index or label, comma-separated (default: all
    /// DOFs of models up to 16 DOFs, else the forced DOFs).
    #[arg(long, value_name = "LIST")]
    pub dofs: Option<String>,
}

/// Arguments of `ewr solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    pub common: Common,
    /// Excitation circular frequency w (rad per time unit of the model).
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub omega: f64,
    /// Friction bound mu*N for every contact, overriding the model's.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub mu_n: Option<f64>,
    /// Write the result (coefficients, time histories, status) to this HDF5 file.
    #[arg(long, short, value_name = "RESULT.h5")]
    pub output: Option<PathBuf>,
    /// Write one period of contact displacement, velocity and friction force as CSV.
    #[arg(long, value_name = "TS.csv")]
    pub timeseries: Option<PathBuf>,
    /// Plot the solution (time histories, trajectory, force locus, |r| vs |v|): .png or .svg.
    #[arg(long, value_name = "FIG")]
    pub plot: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `ewr frc`.
#[derive(Args, Debug)]
pub struct FrcArgs {
    #[command(flatten)]
    pub common: Common,
    /// First frequency.
    #[arg(long, value_name = "A", allow_negative_numbers = true)]
    pub omega_start: f64,
    /// Last frequency (below the first for a downward sweep).
    #[arg(long, value_name = "B", allow_negative_numbers = true)]
    pub omega_end: f64,
    /// Frequency step (sequential) or initial arclength step (arclength).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub step: f64,
    /// Continuation: sequential (fixed frequency steps, each point started from the secant
    /// through the last two, else from the previous one as in the paper) or arclength (pseudo-arclength, adaptive step, passes turning points).
    #[arg(long, default_value = "sequential", value_name = "METHOD")]
    pub continuation: String,
    /// Adaptive step: smaller at resonance peaks and folds, larger (up to 8 --step) where
    /// the curve is straight, so that the polyline through the points stays within TOL
    /// (relative, default 0.01) of the amplitude; --step is the first step.
    #[arg(
        long,
        value_name = "TOL",
        num_args = 0..=1,
        default_missing_value = "0.01",
        allow_negative_numbers = true
    )]
    pub adaptive: Option<f64>,
    /// Friction bound(s) mu*N for every contact, comma-separated: one curve per value,
    /// computed in parallel (default: the model's bounds, one curve).
    #[arg(long, value_name = "X[,Y...]", allow_negative_numbers = true)]
    pub mu_n: Option<String>,
    /// Write every curve (coefficients and status per point) to this HDF5 file.
    #[arg(long, short, value_name = "FRC.h5")]
    pub output: Option<PathBuf>,
    /// Write a table (one row per point, flushed as points are computed) as CSV.
    #[arg(long, value_name = "FRC.csv")]
    pub csv: Option<PathBuf>,
    /// Plot the curves (amplitude against frequency): .png or .svg.
    #[arg(long, value_name = "FIG")]
    pub plot: Option<PathBuf>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not refine the curves' peaks (by default each local maximum of the amplitude is
    /// refined to the true maximum in frequency, 10-20 extra solves per peak).
    #[arg(long)]
    pub no_refine: bool,
    /// Continue an interrupted sweep (Ctrl-C, SIGTERM, a crash) from the `-o` file of the
    /// same command: its points are checked (re-solved from their stored coefficients) and
    /// kept, and each curve goes on from its last point. Without that file, starts afresh.
    #[arg(long, requires = "output")]
    pub resume: bool,
    /// Draw the figure against f = w / 2 pi (Hz when the model's time unit is the second)
    /// instead of w; the CSV and HDF5 files keep w.
    #[arg(long)]
    pub hz: bool,
}

/// Everything a run needs, checked and resolved from the options.
pub struct Setup {
    /// The model, with overrides applied.
    pub model: Model,
    /// How each periodic solution is computed.
    pub point: PointSettings,
    /// Resolved receptance backend request.
    pub kind: ReceptanceKind,
}

fn parse_kind(s: &str) -> Result<ReceptanceKind, Failure> {
    match s {
        "auto" => Ok(ReceptanceKind::Auto),
        "dense" => Ok(ReceptanceKind::Dense),
        "sparse" => Ok(ReceptanceKind::Sparse),
        _ => match s.strip_prefix("modal:").map(str::parse::<usize>) {
            Some(Ok(modes)) if modes > 0 => Ok(ReceptanceKind::Modal { modes }),
            _ => Err(Failure::input(format!(
                "--receptance {s:?}: use auto, dense, sparse or modal:MODES (MODES > 0)"
            ))),
        },
    }
}

fn finite_positive(name: &str, x: f64) -> Result<f64, Failure> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(Failure::input(format!(
            "{name} {x}: must be finite and > 0"
        )))
    }
}

/// Reads the model, applies the overrides and resolves every option; bad input is exit 2.
/// Callers run [`crate::probe::readable`] on the model file first.
pub fn setup(c: &Common, mu_n: Option<f64>) -> Result<Setup, Failure> {
    let read = ewr_model::read(&c.model).map_err(|e| Failure::input(e.to_string()))?;
    for w in &read.warnings {
        say_err!("{w}");
    }
    let mut model = read.model;
    if model.contacts.is_empty() {
        return Err(Failure::input(format!(
            "{} has no friction contacts: nothing for E-WR to solve (`ewr model info` shows \
             its linear properties)",
            c.model.display()
        )));
    }
    if let Some(x) = mu_n {
        model
            .contacts
            .set_mu_n(x)
            .map_err(|e| Failure::input(format!("--mu-n {x}: {e}")))?;
    }
    match c.rho.as_deref() {
        None => {}
        Some("auto") => model.contacts.rho_auto = true,
        Some(s) => {
            let r: f64 = s
                .parse()
                .map_err(|_| Failure::input(format!("--rho {s}: a number > 0 or auto")))?;
            finite_positive("--rho", r)?;
            model.contacts.rho.iter_mut().for_each(|m| *m = r);
            model.contacts.rho_auto = false;
        }
    }
    let set: HarmonicSet = c
        .harmonics
        .parse()
        .map_err(|e| Failure::input(format!("--harmonics: {e}")))?;
    let law: FrictionLaw = c
        .law
        .parse()
        .map_err(|e| Failure::input(format!("--law: {e}")))?;
    let n_samples = c.samples.unwrap_or_else(|| default_samples(&set));
    if let Some(why) = ewr_solve::samples_problem(&set, n_samples) {
        return Err(Failure::input(format!("--samples {n_samples}: {why}")));
    }
    if let Some(why) = ewr_solve::harmonic_set_problem(&model, &set) {
        return Err(Failure::input(format!(
            "--harmonics {}: {why}",
            c.harmonics
        )));
    }
    if let Some(f) = model.forcing.iter().find(|f| !set.contains(f.harmonic)) {
        say_err!(
            "warning: the forcing on DOF {} at harmonic {} is outside {} and is ignored",
            f.dof,
            f.harmonic,
            c.harmonics
        );
    }
    let tol = c
        .tol
        .unwrap_or_else(|| ewr_solve::default_tolerance(&model));
    finite_positive("--tol", tol)?;
    let monitor = match &c.dofs {
        Some(list) => crate::args::parse_dofs(list, &model)?,
        None if model.n_dofs() <= 16 => (0..model.n_dofs()).collect(),
        None => {
            let mut d: Vec<usize> = model.forcing.iter().map(|f| f.dof).collect();
            d.sort_unstable();
            d.dedup();
            d
        }
    };
    let point = PointSettings {
        set,
        n_samples,
        law,
        newton: NewtonOptions {
            tol_residual: tol,
            max_iterations: c.max_iter,
            linear: c
                .linear
                .parse()
                .map_err(|e| Failure::input(format!("--linear: {e}")))?,
            ..NewtonOptions::default()
        },
        ramp: !c.no_ramp,
        monitor,
        retry_rho: true,
        preconditioner: c
            .preconditioner
            .parse()
            .map_err(|e| Failure::input(format!("--preconditioner: {e}")))?,
    };
    Ok(Setup {
        model,
        point,
        kind: parse_kind(&c.receptance)?,
    })
}

fn receptance(setup: &Setup) -> Result<Receptance, Failure> {
    Receptance::new(&setup.model, setup.kind)
        .map_err(|e| Failure::input(format!("cannot condense the model: {e}")))
}

/// JSON summary of one periodic solution.
#[derive(Serialize)]
struct SolveSummary<'a> {
    converged: bool,
    status: String,
    residual: f64,
    iterations: usize,
    /// GMRES iterations of the matrix-free Newton steps (0: every step was dense).
    gmres_iterations: usize,
    /// Factor on rho that the solution satisfies (1 unless only a rho retry converged).
    rho_factor: f64,
    omega: f64,
    harmonics: String,
    n_samples: usize,
    law: String,
    /// Tolerance on the scaled residual the solve was held to (given, or the model's default).
    tolerance: f64,
    elapsed_s: f64,
    /// Peak resident memory of the process (Linux), MB.
    peak_memory_mb: Option<f64>,
    contacts: &'a [ewr_solve::ContactSummary],
    /// Contacts stuck the whole period with the static term in the set: their mean friction
    /// force is not determined by the periodic problem (docs/contact-3d.md, pitfall 3).
    fully_stuck: Vec<usize>,
    dofs: Vec<DofPeak>,
}

#[derive(Serialize)]
struct DofPeak {
    dof: usize,
    label: Option<String>,
    peak: f64,
}

fn dof_peaks(model: &Model, s: &PointSolution) -> Vec<DofPeak> {
    s.dofs
        .dofs
        .iter()
        .zip(&s.dofs.peak)
        .map(|(&dof, &peak)| DofPeak {
            dof,
            label: model.dof_labels.as_ref().map(|l| l[dof].clone()),
            peak,
        })
        .collect()
}

/// `ewr solve`: exit 0 converged, 1 not converged (results still written), 2 bad input.
pub fn solve(a: &SolveArgs) -> Result<(), Failure> {
    finite_positive("--omega", a.omega)?;
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let setup = setup(&a.common, a.mu_n)?;
    crate::args::prepare_outputs(
        &[named("MODEL", &a.common.model)],
        &[
            ("-o", a.output.as_deref(), &[]),
            ("--timeseries", a.timeseries.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
        ],
    )?;
    let t0 = Instant::now();
    let rec = receptance(&setup)?;
    let params = ContactParams::of(&setup.model.contacts);
    let sol = solve_point(&rec, &params, a.omega, &setup.point, None)
        .map_err(|e| Failure::work(format!("at w = {}: {e}", a.omega)))?;
    let elapsed = t0.elapsed().as_secs_f64();
    let converged = sol.status.converged();
    if let Some(p) = &a.timeseries {
        results::write_timeseries(p, &sol, &params).map_err(Failure::work)?;
    }
    if let Some(p) = &a.output {
        results::write_solution(p, &a.common.model, &setup, &sol).map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        crate::plot::period(p, &period_figure(&sol, &params)).map_err(Failure::work)?;
    }
    let summary = SolveSummary {
        converged,
        status: sol.status.to_string(),
        residual: sol.residual,
        iterations: sol.iterations,
        gmres_iterations: sol.krylov_iterations,
        rho_factor: sol.rho_factor,
        omega: sol.omega,
        harmonics: sol.set.to_string(),
        n_samples: setup.point.n_samples,
        law: setup.point.law.to_string(),
        tolerance: setup.point.newton.tol_residual,
        elapsed_s: elapsed,
        peak_memory_mb: crate::progress::peak_memory_mb(),
        contacts: &sol.contacts,
        fully_stuck: fully_stuck(&sol),
        dofs: dof_peaks(&setup.model, &sol),
    };
    if a.json {
        let s = serde_json::to_string_pretty(&summary)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        say!("{s}");
    } else {
        print_solution(&summary);
    }
    if converged {
        Ok(())
    } else {
        Err(Failure::work(format!(
            "the periodic solution at w = {} did not converge ({}; scaled residual {:.3e}); \
             results were written with this status",
            a.omega, sol.status, sol.residual
        )))
    }
}

/// The contacts of `s` stuck the whole period when the set has the static term, whose mean
/// friction force then depends on the path to the solution, not on the periodic equations.
pub fn fully_stuck(s: &PointSolution) -> Vec<usize> {
    if !s.set.contains_zero() {
        return Vec::new();
    }
    let f = s.stick_fractions();
    (0..f.len()).filter(|&c| f[c] >= 0.999).collect()
}

fn print_solution(s: &SolveSummary<'_>) {
    say!(
        "w = {}  {}  {} samples  law {}",
        s.omega,
        s.harmonics,
        s.n_samples,
        s.law
    );
    say!(
        "{}: scaled residual {:.3e} after {} Newton iterations{} ({:.3} s)",
        s.status,
        s.residual,
        s.iterations,
        if s.gmres_iterations > 0 {
            format!(" ({} GMRES)", s.gmres_iterations)
        } else {
            String::new()
        },
        s.elapsed_s
    );
    for (c, cs) in s.contacts.iter().enumerate() {
        let stick: Vec<String> = cs
            .stick_intervals
            .iter()
            .map(|i| format!("[{:.4}, {:.4}]", i[0], i[1]))
            .collect();
        say!(
            "contact {c}: |w| max {:.6e}, |r| max {:.6e}, dissipated/cycle {:.6e}, Coulomb \
             violation on the samples of the truncated series {:.2e}",
            cs.displacement_amplitude,
            cs.force_amplitude,
            cs.dissipated_energy,
            cs.max_coulomb_violation
        );
        if let Some([lo, hi]) = cs.normal_force_range {
            say!("  normal force {lo:.6e} .. {hi:.6e}");
            if !cs.separation_intervals.is_empty() {
                let sep: Vec<String> = cs
                    .separation_intervals
                    .iter()
                    .map(|i| format!("[{:.4}, {:.4}]", i[0], i[1]))
                    .collect();
                say!("  separated on {}", sep.join(" "));
            }
        }
        if stick.is_empty() && cs.normal_force_range.is_some() {
            say!("  never sticks");
        } else if stick.is_empty() {
            say!("  slides all the time");
        } else {
            say!("  sticks on {}", stick.join(" "));
        }
        if s.fully_stuck.contains(&c) {
            say!(
                "  sticks the whole period: its mean friction force is not determined by the \
                 periodic problem and depends on the start (docs/contact-3d.md, pitfall 3)"
            );
        }
    }
    for d in &s.dofs {
        let label = d
            .label
            .as_deref()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        say!("DOF {}{label}: peak {:.6e}", d.dof, d.peak);
    }
}

/// One frequency response curve: its bound (if overridden), its points and how it ended.
pub struct Curve {
    /// The `--mu-n` value of this curve, if any.
    pub mu_n: Option<f64>,
    /// Every point computed, in the order computed (also when the curve stopped early).
    pub points: Vec<FrcPoint>,
    /// `None` when the sweep ran to its end, else why it stopped.
    pub stopped: Option<String>,
    /// The local maxima of the amplitude, refined to the true maximum in frequency.
    pub peaks: Vec<Peak>,
    /// Phase resonances of the forced DOF (its first harmonic in quadrature with its force).
    pub phase: Vec<ewr_solve::PhaseResonance>,
}

/// Resumes one curve: re-solves its stored points from their coefficients (one Newton
/// iteration each when they still hold, so a file from other options or a damaged one is
/// caught), hands them to `on_point` as if just computed, then continues the sweep after the
/// last one.
fn resume_curve(
    rec: &Receptance,
    params: &ContactParams,
    setup: &Setup,
    settings: &FrcSettings,
    old: &results::StoredCurve,
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
) -> Result<(), ewr_solve::SolveError> {
    let mut good: Vec<PointSolution> = Vec::new();
    for ((&w, &step), x) in old.omega.iter().zip(&old.step).zip(&old.friction) {
        let solution = solve_point(rec, params, w, &setup.point, Some((&setup.point.set, x)))?;
        if solution.status.converged() {
            good.push(solution.clone());
        }
        if !on_point(&FrcPoint { solution, step }) {
            return Ok(());
        }
    }
    let Some(&last) = old.omega.last() else {
        return frc(rec, params, settings, on_point).map(drop);
    };
    let dir = if settings.omega_end >= settings.omega_start {
        1.0
    } else {
        -1.0
    };
    let next = FrcSettings {
        omega_start: last + dir * settings.step,
        ..settings.clone()
    };
    let tail = good.len().saturating_sub(2);
    frc_resume(rec, params, &next, &good[tail..], on_point).map(drop)
}

/// Most points per curve: a guard against a step far too small for the range.
const MAX_POINTS: usize = 100_000;

/// `ewr frc`: exit 0 all converged, 1 some point did not (all written), 2 bad input.
pub fn frc_cmd(a: &FrcArgs) -> Result<(), Failure> {
    for (name, x) in [
        ("--omega-start", a.omega_start),
        ("--omega-end", a.omega_end),
    ] {
        finite_positive(name, x)?;
    }
    finite_positive("--step", a.step)?;
    if let Some(tol) = a.adaptive {
        crate::args::finite("--adaptive", tol, 0.0, false)?;
    }
    let method: Continuation = a.continuation.parse().map_err(Failure::input)?;
    let span = (a.omega_end - a.omega_start).abs();
    let per_curve = (span / a.step).ceil() + 1.0;
    if method == Continuation::Sequential && per_curve > MAX_POINTS as f64 {
        return Err(Failure::input(format!(
            "--step {}: {per_curve:.0} points from {} to {}, more than the {MAX_POINTS} a curve \
             may have; use a larger step",
            a.step, a.omega_start, a.omega_end
        )));
    }
    let mu_values: Vec<Option<f64>> = match &a.mu_n {
        None => vec![None],
        Some(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .map(Some)
                    .map_err(|_| Failure::input(format!("--mu-n: {s:?} is not a number")))
            })
            .collect::<Result<_, _>>()?,
    };
    // Validate every curve's setup and every output before any work starts.
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let setups: Vec<Setup> = mu_values
        .iter()
        .map(|&m| setup(&a.common, m))
        .collect::<Result<_, _>>()?;
    let stored: Option<Vec<results::StoredCurve>> = match (&a.output, a.resume) {
        (Some(p), true) if p.exists() => {
            if method != Continuation::Sequential {
                return Err(Failure::input(
                    "--resume: only sequential sweeps can be resumed",
                ));
            }
            Some(results::read_frc(p, &setups[0], &mu_values).map_err(Failure::input)?)
        }
        (Some(p), true) => {
            say_err!(
                "--resume: {} does not exist yet; starting afresh",
                p.display()
            );
            None
        }
        _ => None,
    };
    crate::args::prepare_outputs(
        &[named("MODEL", &a.common.model)],
        &[
            ("-o", a.output.as_deref(), &[]),
            ("--csv", a.csv.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
        ],
    )?;
    crate::interrupt::install();
    let t0 = Instant::now();
    let expected = (per_curve.min(MAX_POINTS as f64) as u64) * setups.len() as u64;
    let bar = crate::progress::bar(expected, "points");
    let csv = match &a.csv {
        Some(p) => Some(Mutex::new(
            results::FrcCsv::create(p, setups[0].model.contacts.len(), &setups[0].point.monitor)
                .map_err(Failure::work)?,
        )),
        None => None,
    };
    // The curves differ only in their friction bounds, which the receptance does not see:
    // one condensation (a modal extraction, for large models) serves them all.
    let rec = receptance(&setups[0])?;
    let recs: Vec<&Receptance> = setups.iter().map(|_| &rec).collect();
    // The phase-resonance criterion follows the largest first-harmonic force on a monitored DOF.
    let forced = setups[0]
        .model
        .forcing
        .iter()
        .filter(|f| f.harmonic == 1 && setups[0].point.monitor.contains(&f.dof))
        .max_by(|x, y| x.cos.hypot(x.sin).total_cmp(&y.cos.hypot(y.sin)))
        .map(|f| (f.dof, (f.cos, f.sin)));
    let failed_write = Mutex::new(None::<String>);
    let curves: Vec<Curve> = setups
        .par_iter()
        .zip(&recs)
        .zip(&mu_values)
        .enumerate()
        .map(|(i, ((setup, rec), &mu_n))| {
            let params = ContactParams::of(&setup.model.contacts);
            let settings = FrcSettings {
                omega_start: a.omega_start,
                omega_end: a.omega_end,
                step: a.step,
                min_step: a.step / 64.0,
                max_step: a.step * 8.0,
                method,
                point: setup.point.clone(),
                max_points: MAX_POINTS,
                adaptive: a.adaptive,
                keep_histories: false,
            };
            // Points are kept here as they arrive, so that a curve that stops on an error
            // still has every point it computed.
            let mut points = Vec::new();
            let mut cut = false;
            let mut on_point = |p: &FrcPoint| {
                bar.inc(1);
                points.push(p.clone());
                if let Some(csv) = &csv {
                    let mut w = csv.lock().unwrap_or_else(|e| e.into_inner());
                    if let Err(e) = w.row(mu_n.unwrap_or(f64::NAN), p) {
                        *failed_write.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                        return false;
                    }
                }
                if crate::interrupt::requested() {
                    cut = true;
                    return false;
                }
                true
            };
            let result = match stored.as_ref().map(|s| &s[i]) {
                Some(old) => resume_curve(rec, &params, setup, &settings, old, &mut on_point),
                None => frc(rec, &params, &settings, &mut on_point).map(drop),
            };
            let stopped = match result {
                Err(e) => Some(e.to_string()),
                Ok(()) if cut => Some(format!(
                    "interrupted at w = {}; `--resume` continues the sweep",
                    points.last().map_or(f64::NAN, |p| p.solution.omega)
                )),
                Ok(()) if points.len() >= MAX_POINTS => Some(format!(
                    "stopped at the cap of {MAX_POINTS} points at w = {} before reaching {}; \
                     use a larger --step",
                    points.last().map_or(f64::NAN, |p| p.solution.omega),
                    a.omega_end
                )),
                Ok(()) => None,
            };
            // Refine each local maximum of what was computed, even if the sweep stopped.
            let peaks = if a.no_refine || crate::interrupt::requested() {
                Vec::new()
            } else {
                match refine_peaks(rec, &params, &setup.point, &points) {
                    Ok(p) => p,
                    Err(e) => {
                        bar.suspend(|| say_err!("warning: peak refinement failed: {e}"));
                        Vec::new()
                    }
                }
            };
            let phase = match forced {
                Some((dof, force)) if !a.no_refine && !crate::interrupt::requested() => {
                    ewr_solve::phase_resonances(rec, &params, &setup.point, &points, dof, force)
                        .unwrap_or_else(|e| {
                            bar.suspend(|| say_err!("warning: phase resonance failed: {e}"));
                            Vec::new()
                        })
                }
                _ => Vec::new(),
            };
            Curve {
                mu_n,
                points,
                stopped,
                peaks,
                phase,
            }
        })
        .collect();
    bar.finish_and_clear();
    if let Some(e) = failed_write.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(Failure::work(e));
    }
    let errors: Vec<String> = curves
        .iter()
        .filter_map(|c| {
            c.stopped.as_ref().map(|e| match c.mu_n {
                Some(m) => format!("mu_n = {m}: {e}"),
                None => e.clone(),
            })
        })
        .collect();
    let done = curves;
    let elapsed = t0.elapsed().as_secs_f64();
    if let Some(p) = &a.output {
        results::write_frc(p, &a.common.model, &setups[0], &done).map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        let axis = crate::plot::FrequencyAxis {
            hz: a.hz,
            units: setups[0].model.units.clone(),
        };
        crate::plot::frc(p, &done, axis).map_err(Failure::work)?;
    }
    let n_points: usize = done.iter().map(|c| c.points.len()).sum();
    let n_failed: usize = done
        .iter()
        .flat_map(|c| &c.points)
        .filter(|p| !p.solution.status.converged())
        .count();
    let iterations: usize = done
        .iter()
        .flat_map(|c| &c.points)
        .map(|p| p.solution.iterations)
        .sum();
    let gmres: usize = done
        .iter()
        .flat_map(|c| &c.points)
        .map(|p| p.solution.krylov_iterations)
        .sum();
    if a.json {
        let s = serde_json::json!({
            "curves": done.len(),
            "points": n_points,
            "failed_points": n_failed,
            "iterations": iterations,
            "gmres_iterations": gmres,
            "elapsed_s": elapsed,
            "peak_memory_mb": crate::progress::peak_memory_mb(),
            "errors": errors,
            "peaks": done
                .iter()
                .map(|c| {
                    c.peaks
                        .iter()
                        .map(|p| {
                            serde_json::json!({
                                "mu_n": c.mu_n,
                                "omega": p.omega,
                                "amplitude": p.amplitude,
                                "evaluations": p.evaluations,
                                "stick_fraction": p.solution.stick_fractions(),
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>(),
            "phase_resonances": done
                .iter()
                .map(|c| {
                    c.phase
                        .iter()
                        .map(|p| {
                            serde_json::json!({
                                "mu_n": c.mu_n,
                                "dof": forced.map(|f| f.0),
                                "omega": p.omega,
                                "amplitude": p.amplitude,
                                "evaluations": p.evaluations,
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>(),
        });
        say!("{s:#}");
    } else {
        say!(
            "{} curve(s), {n_points} points ({n_failed} not converged), {iterations} Newton \
             iterations{}, {elapsed:.3} s{}",
            done.len(),
            if gmres > 0 {
                format!(" ({gmres} GMRES)")
            } else {
                String::new()
            },
            crate::progress::peak_memory_mb()
                .map(|m| format!(", peak memory {m:.0} MB"))
                .unwrap_or_default()
        );
        for c in &done {
            let label = c.mu_n.map(|m| format!("mu_n = {m}: ")).unwrap_or_default();
            let grid = c
                .points
                .iter()
                .filter(|p| p.solution.status.converged())
                .max_by(|x, y| {
                    x.solution
                        .dofs
                        .norm_peak
                        .total_cmp(&y.solution.dofs.norm_peak)
                });
            if c.peaks.is_empty()
                && let Some(p) = grid
            {
                say!(
                    "  {label}largest point: amplitude {:.6e} at w = {:.6}",
                    p.solution.dofs.norm_peak,
                    p.solution.omega
                );
            }
            for pk in &c.peaks {
                let stick: Vec<String> = pk
                    .solution
                    .stick_fractions()
                    .iter()
                    .map(|f| format!("{:.0}%", 100.0 * f))
                    .collect();
                say!(
                    "  {label}peak amplitude {:.6e} at w = {:.6} ({} solves; stuck {} of the \
                     period per contact)",
                    pk.amplitude,
                    pk.omega,
                    pk.evaluations,
                    stick.join(", ")
                );
            }
            for pr in &c.phase {
                say!(
                    "  {label}phase resonance (DOF {} lags its force by 90 deg) at w = {:.6}, \
                     amplitude {:.6e}",
                    forced.map_or(0, |f| f.0),
                    pr.omega,
                    pr.amplitude
                );
            }
        }
    }
    let stuck_points = done
        .iter()
        .flat_map(|c| &c.points)
        .filter(|p| !fully_stuck(&p.solution).is_empty())
        .count();
    if stuck_points > 0 && !a.json {
        say!(
            "note: at {stuck_points} point(s) a contact sticks the whole period; its mean \
             friction force there depends on the sweep's path (docs/contact-3d.md, pitfall 3)"
        );
    }
    if crate::interrupt::requested() {
        return Err(Failure::work(format!(
            "interrupted: the {n_points} points computed were written{}",
            if a.output.is_some() {
                "; rerun the same command with --resume to continue"
            } else {
                " (with -o FRC.h5, --resume can continue an interrupted sweep)"
            }
        )));
    }
    if !errors.is_empty() {
        return Err(Failure::work(format!(
            "{} curve(s) stopped on an error: {}",
            errors.len(),
            errors.join("; ")
        )));
    }
    if n_failed > 0 {
        return Err(Failure::work(format!(
            "{n_failed} of {n_points} points did not converge; every point was written with \
             its status"
        )));
    }
    Ok(())
}

/// Contact 0 of a periodic solution as the figure of `--plot`.
fn period_figure(s: &PointSolution, params: &ContactParams) -> crate::plot::PeriodFigure {
    let h = &s.histories;
    let nt = h.n_samples;
    let period = std::f64::consts::TAU / s.omega;
    let series = |buf: &[f64]| -> Vec<Vec<f64>> {
        (0..params.dim)
            .map(|k| buf[k * nt..(k + 1) * nt].to_vec())
            .collect()
    };
    crate::plot::PeriodFigure {
        title: format!(
            "ewr solve: w = {}, {}, contact 0 of {} ({}; residual {:.1e})",
            s.omega,
            s.set,
            params.len(),
            s.status,
            s.residual
        ),
        t: (0..nt).map(|j| period * j as f64 / nt as f64).collect(),
        period,
        w: series(&h.displacement),
        v: series(&h.velocity),
        r: series(&h.force),
        stick: s.contacts[0].stick_intervals.clone(),
        mu_n: match (&h.normal, &params.normal) {
            (Some(nh), Some(np)) => np.mu[0] * nh.force[..nt].iter().copied().fold(0.0, f64::max),
            _ => params.mu_n[0],
        },
        normal: h
            .normal
            .as_ref()
            .zip(params.normal.as_ref())
            .map(|(nh, np)| crate::plot::NormalPanel {
                lambda: nh.force[..nt].to_vec(),
                mu: np.mu[0],
                separated: s.contacts[0].separation_intervals.clone(),
            }),
    }
}
