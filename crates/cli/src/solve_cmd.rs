//! `ewr solve` (one periodic solution) and `ewr frc` (frequency response curves).

use crate::Failure;
use crate::paths::named;
use clap::Args;
use ewr_results::figures::PeriodFigure;
use ewr_solve::setup::{DofRef, Opt, OptionError, SolveOptions, positive};
use ewr_solve::{
    Curve, CurveSpec, FrcPoint, PointSolution, Setup, SetupError, Spelling, StopReason,
    SweepObserver, SweepOptions, solve_point,
};
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
    /// (0..H, needed for static loads, 3-D contacts or even harmonics), a list such as
    /// `1,3,5,7` or `0,1,2,5`, or `auto[:TOL]` (chosen per point to a truncation error
    /// within TOL of the amplitude, docs/accuracy.md). `default`: odd:59, or all:59 where the
    /// model needs the static term or even harmonics.
    #[arg(long, default_value = ewr_solve::DEFAULT_SET_NAME, value_name = "SET")]
    pub harmonics: String,
    /// Time samples per period for the Galerkin integrals (default: 8 (H+1) rounded up to a
    /// power of two, at least 64).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub samples: Option<usize>,
    /// Scaling rho of the friction law for every contact (default: the model's, usually 1),
    /// or `auto`: at each frequency rho = 1 / (h w |G_h|) from the structure (times the
    /// model's rho), so that a model in SI or any other units needs no hand-picked rho. 3-D
    /// contacts are always scaled so; a number is then a factor.
    #[arg(long, value_name = "R|auto", allow_hyphen_values = true)]
    pub rho: Option<String>,
    /// Friction law: exact, projection, tanh:ALPHA, pwl:DELTA or maxeps:EPS.
    #[arg(long, default_value = "exact", value_name = "LAW")]
    pub law: String,
    /// Condensation backend: auto, dense, sparse or modal:MODES. `auto` is dense up to 500
    /// DOFs; above, 100 modes extracted once (proportional damping, not cyclic), with the
    /// harmonics above a quarter of the 100th mode condensed exactly; sparse otherwise.
    #[arg(long, default_value = "auto", value_name = "KIND")]
    pub receptance: String,
    /// Tolerance on the scaled residual ||g|| / (max muN)^2 (3-D contacts: their force
    /// scale) [default: 1e-10; 1e-9 for 3-D contacts, whose stuck mean forces the last digit
    /// would only move].
    #[arg(long, value_name = "TOL", allow_hyphen_values = true)]
    pub tol: Option<f64>,
    /// Linear algebra of each Newton step: dense (assemble and factorise the Jacobian),
    /// matrix-free (GMRES on Jacobian products, see --preconditioner), or auto (matrix-free
    /// above 500 unknowns with more than one contact; a point whose matrix-free solve stalls
    /// is finished with dense steps up to 6000 unknowns, in `ewr modes` an amplitude's retry
    /// from nearer); arclength continuation included (its corrector halves the step instead).
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
        allow_hyphen_values = true
    )]
    pub max_iter: usize,
    /// Solve directly on the full harmonic set instead of ramping up from one harmonic.
    #[arg(long)]
    pub no_ramp: bool,
    /// DOFs whose response is reported, by index or label, comma-separated (default: all
    /// DOFs of models up to 16 DOFs, else the forced DOFs).
    #[arg(long, value_name = "LIST")]
    pub dofs: Option<String>,
    /// What "amplitude" means for the monitored DOFs, in every curve, peak and estimate: max
    /// (max_t ||u(t)||, static part included), dynamic (about the mean: without preload and
    /// static deflection), h1 (the first harmonic alone) or pp (peak to peak).
    #[arg(long, default_value = "max", value_name = "MEASURE")]
    pub amplitude: String,
    /// Engine order of the excitation of a cyclic sector model, instead of the model's (the
    /// interference diagram needs one run per engine order, not one model per engine order).
    #[arg(long, value_name = "EO", allow_hyphen_values = true)]
    pub engine_order: Option<i64>,
    /// Report where the time went: wall and CPU time per phase (model read, receptance setup,
    /// condensation, residuals, Jacobians, preconditioner, GMRES, post-processing, output) on
    /// stderr, and as `profile` in --json.
    #[arg(long)]
    pub profile: bool,
}

/// Arguments of `ewr solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    pub common: Common,
    /// Excitation circular frequency w (rad per time unit of the model).
    #[arg(long, value_name = "W", allow_hyphen_values = true)]
    pub omega: f64,
    /// Friction bound mu*N for every contact, overriding the model's.
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
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
    /// Skip the truncation-error estimate (by default the solution is solved again on the
    /// richer set 2H+1 and the change of its amplitude reported: one more solve).
    #[arg(long)]
    pub no_estimate: bool,
    /// Skip the stability (by default the Floquet multipliers of the solution are computed
    /// by Hill's method on the linearised E-WR equations, docs/stability.md).
    #[arg(long)]
    pub no_stability: bool,
    /// On a cyclic sector, classify also against perturbations of every other inter-sector
    /// phase (families p = 1 .. N/2, the annulus's other nodal diameters; one Hill pencil
    /// each, docs/stability.md, section 2), not only those that keep the travelling wave.
    #[arg(long, conflicts_with = "no_stability")]
    pub all_phases: bool,
}

/// Arguments of `ewr frc`.
#[derive(Args, Debug)]
pub struct FrcArgs {
    #[command(flatten)]
    pub common: Common,
    /// First frequency.
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    pub omega_start: f64,
    /// Last frequency (below the first for a downward sweep).
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub omega_end: f64,
    /// Frequency step (sequential: the points `A + k S`; a point that does not converge is
    /// retried at halved steps, after which the sweep returns to that grid) or initial
    /// arclength step (arclength).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
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
    #[arg(long, value_name = "X[,Y...]", allow_hyphen_values = true)]
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
    /// refined to the true maximum in frequency, 10-20 extra solves per peak, and its
    /// truncation error estimated on the harmonic set 2H+1).
    #[arg(long)]
    pub no_refine: bool,
    /// Estimate the truncation error of every point (its amplitude against the same point on
    /// the richer set 2H+1: one more solve per point; CSV column amp_error, HDF5 amp_error).
    #[arg(long)]
    pub estimate: bool,
    /// Floquet multipliers of every converged point and refined peak (Hill's method,
    /// docs/stability.md; a dense eigensolve per point): CSV columns stable and
    /// max_multiplier, HDF5 stable, max_multiplier, stability_changes and turning_points,
    /// unstable stretches dashed on the figure, changes of stability listed.
    #[arg(long)]
    pub stability: bool,
    /// With --stability on a cyclic sector: classify every point against perturbations of
    /// every inter-sector phase (families p = 0 .. N/2; one Hill pencil each,
    /// docs/stability.md, section 2), not only those that keep the travelling wave; HDF5
    /// phase_max_multiplier per point and family.
    #[arg(long, requires = "stability")]
    pub all_phases: bool,
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

impl Common {
    /// The solver options as given, for the run layer to resolve.
    pub fn options(&self, mu_n: Option<f64>) -> SolveOptions {
        SolveOptions {
            harmonics: self.harmonics.clone(),
            samples: self.samples,
            mu_n,
            rho: self.rho.clone(),
            law: self.law.clone(),
            receptance: self.receptance.clone(),
            tol: self.tol,
            linear: self.linear.clone(),
            preconditioner: self.preconditioner.clone(),
            max_iter: self.max_iter,
            ramp: !self.no_ramp,
            dofs: self.dofs.as_deref().map(DofRef::parse_list),
            amplitude: self.amplitude.clone(),
            engine_order: self.engine_order,
        }
    }
}

impl From<OptionError> for Failure {
    fn from(e: OptionError) -> Self {
        Failure::input(e.render(Spelling::Cli))
    }
}

/// Reads the model, applies the overrides and resolves every option; bad input is exit 2.
/// Callers run [`crate::probe::readable`] on the model file first.
pub fn setup(c: &Common, mu_n: Option<f64>) -> Result<Setup, Failure> {
    if c.profile {
        ewr_solve::profile::enable();
    }
    let read = {
        let _t = ewr_solve::profile::span(ewr_solve::profile::Phase::Read);
        ewr_model::read(&c.model).map_err(|e| Failure::input(e.to_string()))?
    };
    for w in &read.warnings {
        say_err!("{w}");
    }
    let setup = ewr_solve::setup::resolve(read.model, &c.options(mu_n)).map_err(|e| match e {
        SetupError::NoContacts => Failure::input(format!(
            "{} has no friction contacts: nothing for E-WR to solve (`ewr model info` shows \
             its linear properties)",
            c.model.display()
        )),
        e => Failure::input(e.render(Spelling::Cli)),
    })?;
    for w in &setup.warnings {
        say_err!("{w}");
    }
    Ok(setup)
}

/// The setup's receptance, with its warnings for a run up to fundamental `omega_max`.
fn receptance(setup: &Setup, omega_max: f64) -> Result<ewr_hb::Receptance, Failure> {
    let _t = ewr_solve::profile::span(ewr_solve::profile::Phase::Setup);
    let rec = setup
        .receptance()
        .map_err(|e| Failure::input(format!("cannot condense the model: {e}")))?;
    for w in ewr_solve::setup::receptance_warnings(&rec, &setup.point, omega_max) {
        say_err!("{w}");
    }
    Ok(rec)
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
    /// What `dofs[].peak`, `amplitude` and the estimate measure (`--amplitude`).
    amplitude_measure: &'static str,
    /// The monitored DOFs' amplitude together, in that measure.
    amplitude: f64,
    dofs: Vec<DofPeak>,
    /// The truncation error of the amplitude (absent with --no-estimate).
    estimate: Option<EstimateSummary>,
    /// The Floquet multipliers (absent with --no-stability).
    stability: Option<StabilitySummary>,
    /// Time per phase (with --profile).
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Vec<ewr_solve::profile::PhaseTime>>,
}

/// A truncation-error estimate as JSON.
#[derive(Serialize)]
struct EstimateSummary {
    /// The set the solution was compared with: the richer set, or the next coarser for
    /// `auto`'s checks of sets from h = 31 (docs/accuracy.md, "A check from below").
    harmonics: String,
    /// How: `richer`, `richer-with-tail` or `from-below` (docs/accuracy.md).
    method: &'static str,
    /// `|A(richer) - A|` of the monitored amplitude (from below: the conservative estimate).
    amplitude: f64,
    /// The same relative to the amplitude.
    relative: f64,
    /// Largest change of a force coefficient, relative to the largest.
    force: f64,
    /// Whether the solutions compared with converged.
    converged: bool,
}

impl EstimateSummary {
    fn of(e: &ewr_solve::Estimate) -> Self {
        EstimateSummary {
            harmonics: e.set.to_string(),
            method: e.method.name(),
            amplitude: e.amplitude,
            relative: e.relative,
            force: e.force,
            converged: e.converged,
        }
    }
}

/// A solution's stability as JSON: classified, or why not.
#[derive(Serialize)]
pub(crate) struct StabilitySummary {
    /// Whether the multipliers were computed.
    classified: bool,
    /// No multiplier outside the unit circle.
    #[serde(skip_serializing_if = "Option::is_none")]
    stable: Option<bool>,
    /// Largest modulus of a Floquet multiplier.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_multiplier: Option<f64>,
    /// Its Floquet exponent `[re, im]` (rad per time unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    leading_exponent: Option<[f64; 2]>,
    /// Multipliers outside the unit circle.
    #[serde(skip_serializing_if = "Option::is_none")]
    unstable_multipliers: Option<usize>,
    /// Why not classified.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// A cyclic sector: classified against travelling-wave perturbations only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    travelling_wave_only: bool,
    /// With --all-phases: each inter-sector phase's family `p = 0 .. N/2`, classified or why
    /// not (the fields above then cover every family classified).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    phases: Vec<PhaseStability>,
}

/// One family of perturbations of a cyclic sector's solution (`--all-phases`; `p = 0` the
/// travelling wave's own).
#[derive(Serialize)]
pub(crate) struct PhaseStability {
    /// Inter-sector phase offset from the travelling wave, `2 pi p / N` (families `p`, `-p`).
    p: usize,
    /// No multiplier of this family outside the unit circle (absent: not classified).
    #[serde(skip_serializing_if = "Option::is_none")]
    stable: Option<bool>,
    /// Largest multiplier modulus of this family.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_multiplier: Option<f64>,
    /// Why not classified.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl StabilitySummary {
    pub(crate) fn of(s: &ewr_solve::Stability) -> Self {
        StabilitySummary {
            classified: true,
            stable: Some(s.is_stable()),
            max_multiplier: Some(s.max_multiplier),
            leading_exponent: s
                .exponent
                .re
                .is_finite()
                .then_some([s.exponent.re, s.exponent.im]),
            unstable_multipliers: Some(s.unstable),
            reason: None,
            travelling_wave_only: s.travelling_wave_only,
            phases: s
                .phases
                .iter()
                .map(|f| PhaseStability {
                    p: f.p,
                    stable: f.unstable.map(|n| n == 0),
                    max_multiplier: f.max_multiplier,
                    reason: f.reason.clone(),
                })
                .collect(),
        }
    }

    fn not_classified(reason: String) -> Self {
        StabilitySummary {
            classified: false,
            stable: None,
            max_multiplier: None,
            leading_exponent: None,
            unstable_multipliers: None,
            reason: Some(reason),
            travelling_wave_only: false,
            phases: Vec::new(),
        }
    }
}

/// Largest relative truncation error before ewr warns: 1 % of the amplitude.
const ESTIMATE_WARN: f64 = ewr_solve::estimate::WARN_ABOVE;

#[derive(Serialize)]
struct DofPeak {
    dof: usize,
    label: Option<String>,
    peak: f64,
}

fn dof_peaks(model: &ewr_model::Model, s: &PointSolution) -> Vec<DofPeak> {
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
/// Prints the per-phase profile on stderr when `--profile` was given.
pub(crate) fn print_profile(c: &Common, since: Instant) {
    if c.profile {
        say_err!(
            "{}",
            ewr_solve::profile::table(since.elapsed().as_secs_f64())
        );
    }
}

/// `--all-phases` on an ordinary model: bad input, refused before any work.
fn not_cyclic() -> Failure {
    Failure::input(
        "--all-phases: the model is not a cyclic sector (its stability has no other \
         inter-sector phases)",
    )
}

pub fn solve(a: &SolveArgs) -> Result<(), Failure> {
    let t_all = Instant::now();
    positive(Opt::Omega, a.omega)?;
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let setup = setup(&a.common, a.mu_n)?;
    let _claims = crate::args::prepare_outputs(
        &[named("MODEL", &a.common.model)],
        &[
            ("-o", a.output.as_deref(), &[]),
            ("--timeseries", a.timeseries.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
        ],
    )?;
    if a.all_phases && setup.model.cyclic.is_none() {
        return Err(not_cyclic());
    }
    let t0 = Instant::now();
    let rec = receptance(&setup, a.omega)?;
    let params = setup.params();
    let mut sol = solve_point(&rec, &params, a.omega, &setup.point, None)
        .map_err(|e| Failure::work(format!("at w = {}: {e}", a.omega)))?;
    // Automatic sets come with their estimate.
    if !a.no_estimate && sol.status.converged() && sol.estimate.is_none() {
        match ewr_solve::truncation_error(&rec, &params, &setup.point, &sol) {
            Ok(e) => sol.estimate = Some(e),
            Err(e) => say_err!("warning: no truncation-error estimate: {e}"),
        }
    }
    let stability = if a.no_stability || !sol.status.converged() {
        None
    } else {
        let st = rec
            .dynamics()
            .map_err(|e| ewr_solve::StabilityError::Unsupported(e.to_string()))
            .and_then(|d| {
                if a.all_phases {
                    ewr_solve::stability_all_phases(&rec, &d, &params, &setup.point, &sol)
                } else {
                    ewr_solve::stability(&rec, &d, &params, &setup.point, &sol)
                }
            });
        Some(match st {
            Ok(st) => {
                let summary = StabilitySummary::of(&st);
                sol.stability = Some(st);
                summary
            }
            Err(e) => StabilitySummary::not_classified(e.to_string()),
        })
    };
    let elapsed = t0.elapsed().as_secs_f64();
    let converged = sol.status.converged();
    let out_span = ewr_solve::profile::span(ewr_solve::profile::Phase::Output);
    if let Some(p) = &a.timeseries {
        ewr_results::write_timeseries(p, &sol, &params).map_err(Failure::work)?;
    }
    if let Some(p) = &a.output {
        ewr_results::write_solution(p, &a.common.model, &setup, &sol).map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        ewr_results::figures::period(p, &PeriodFigure::of_solution(&sol, &params, &setup.model))
            .map_err(Failure::work)?;
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
        n_samples: sol.histories.n_samples,
        law: setup.point.law.to_string(),
        tolerance: setup.point.newton.tol_residual,
        elapsed_s: elapsed,
        peak_memory_mb: crate::progress::peak_memory_mb(),
        contacts: &sol.contacts,
        fully_stuck: sol.fully_stuck(),
        amplitude_measure: setup.point.amplitude.name(),
        amplitude: sol.dofs.norm_peak,
        dofs: dof_peaks(&setup.model, &sol),
        estimate: sol.estimate.as_ref().map(EstimateSummary::of),
        stability,
        profile: a.common.profile.then(|| {
            drop(out_span);
            ewr_solve::profile::report()
        }),
    };
    print_profile(&a.common, t_all);
    if a.json {
        let s = serde_json::to_string_pretty(&summary)
            .map_err(|e| Failure::work(format!("cannot format JSON: {e}")))?;
        say!("{s}");
    } else {
        print_solution(&summary);
    }
    if let Some(e) = sol.estimate.as_ref().filter(|e| e.relative > ESTIMATE_WARN) {
        let richer = ewr_solve::estimate::suggested(&sol.set, e);
        say_err!(
            "warning: the truncation error is {:.1}% of the amplitude: use more harmonics \
             (e.g. --harmonics {richer}, or --harmonics auto)",
            100.0 * e.relative,
        );
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
                 periodic problem; it is held where the start left it, or where the solver \
                 leaves it from zero force (docs/stuck-contacts.md)"
            );
        }
    }
    for d in &s.dofs {
        let label = d
            .label
            .as_deref()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        let word = match s.amplitude_measure {
            "max" => "peak",
            other => other,
        };
        say!("DOF {}{label}: {word} {:.6e}", d.dof, d.peak);
    }
    if let Some(st) = &s.stability {
        match (st.stable, st.max_multiplier) {
            (Some(true), Some(_)) if st.leading_exponent.is_none() => say!(
                "stability: stable (no Floquet exponent within what the harmonics resolve: the \
                 contacts hold the structure)"
            ),
            (Some(stable), Some(m)) => say!(
                "stability: {} (largest Floquet multiplier |mu| = {m:.6}{}){}",
                if stable { "stable" } else { "UNSTABLE" },
                st.unstable_multipliers
                    .filter(|&n| n > 0)
                    .map(|n| format!(", {n} outside the unit circle"))
                    .unwrap_or_default(),
                match (st.travelling_wave_only, st.phases.is_empty()) {
                    (true, true) => {
                        " against perturbations that keep the travelling wave (other \
                         inter-sector phases not checked: --all-phases)"
                    }
                    (true, false) => {
                        " over the inter-sector phases classified (not all were: below)"
                    }
                    (false, false) => " over every inter-sector phase",
                    _ => "",
                }
            ),
            _ => say!(
                "stability: not classified ({})",
                st.reason.as_deref().unwrap_or("?")
            ),
        }
        for ph in &st.phases {
            let family = if ph.p == 0 {
                "the travelling wave's phase (p = 0)".to_string()
            } else {
                format!("inter-sector phase +-2 pi {}/N", ph.p)
            };
            match (ph.stable, ph.max_multiplier) {
                (Some(stable), Some(m)) => say!(
                    "  {family}: {} (largest Floquet multiplier |mu| = {m:.6})",
                    if stable { "stable" } else { "UNSTABLE" }
                ),
                _ => say!(
                    "  {family}: not classified ({})",
                    ph.reason.as_deref().unwrap_or("?")
                ),
            }
        }
    }
    if let Some(e) = &s.estimate {
        let how = match e.method {
            "richer-with-tail" => " (with the tail beyond it)",
            "from-below" => " and the set below it (auto's conservative check from below)",
            _ => "",
        };
        say!(
            "truncation error: the amplitude moves by {:.3e} ({:.2}%) on {}{how}{}",
            e.amplitude,
            100.0 * e.relative,
            e.harmonics,
            if e.converged {
                ""
            } else {
                " (which did not converge: indicative only)"
            }
        );
    }
}

/// What `ewr frc` does with each point as it arrives: the progress bar, the CSV row, the
/// interrupt check.
struct FrcObserver {
    bar: indicatif::ProgressBar,
    csv: Option<Mutex<ewr_results::FrcCsv>>,
    /// The first CSV write error: the curve stops, every output is still written.
    failed_write: Mutex<Option<String>>,
}

impl SweepObserver for FrcObserver {
    fn point(&self, curve: usize, mu_n: Option<f64>, p: &FrcPoint) -> Result<(), StopReason> {
        self.bar.inc(1);
        if let Some(csv) = &self.csv {
            let mut w = csv.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = w.row(curve, mu_n.unwrap_or(f64::NAN), p) {
                // The first failure is the one to report (points solved beside the sweep may
                // still arrive after it).
                self.failed_write
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(|| e.clone());
                return Err(StopReason::Caller(e));
            }
        }
        if crate::interrupt::requested() {
            return Err(StopReason::Interrupted {
                at: p.solution.omega,
            });
        }
        Ok(())
    }

    fn stopping(&self) -> bool {
        crate::interrupt::requested()
    }

    fn warn(&self, message: &str) {
        self.bar.suspend(|| say_err!("{message}"));
    }
}

/// `ewr frc`: exit 0 all converged, 1 some point did not (all written), 2 bad input.
pub fn frc_cmd(a: &FrcArgs) -> Result<(), Failure> {
    let t_all = Instant::now();
    let sweep = SweepOptions {
        method: ewr_solve::setup::parse_continuation(&a.continuation)?,
        adaptive: a.adaptive,
        refine_peaks: !a.no_refine,
        phase_resonances: !a.no_refine,
        estimate_points: a.estimate,
        estimate_peaks: !a.no_refine,
        stability: a.stability,
        all_phases: a.all_phases,
        ..SweepOptions::new(a.omega_start, a.omega_end, a.step)
    };
    sweep.check()?;
    let mu_values: Vec<Option<f64>> = match &a.mu_n {
        None => vec![None],
        Some(list) => ewr_solve::setup::parse_mu_n_list(list)?
            .into_iter()
            .map(Some)
            .collect(),
    };
    // Validate every curve's setup and every output before any work starts.
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let setups: Vec<Setup> = mu_values
        .iter()
        .map(|&m| setup(&a.common, m))
        .collect::<Result<_, _>>()?;
    sweep.check_point(&setups[0].point)?;
    if a.all_phases && setups[0].model.cyclic.is_none() {
        return Err(not_cyclic());
    }
    let stored: Option<Vec<ewr_solve::StoredCurve>> = match (&a.output, a.resume) {
        (Some(p), true) if p.exists() => {
            if !ewr_solve::sweep::resumable(sweep.method) {
                return Err(Failure::input(
                    "--resume: only sequential sweeps can be resumed",
                ));
            }
            crate::probe::readable(crate::probe::Kind::Result, p)?;
            Some(
                ewr_results::read_stored_curves(p, &setups[0], &mu_values)
                    .map_err(Failure::input)?,
            )
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
    let _claims = crate::args::prepare_outputs(
        &[named("MODEL", &a.common.model)],
        &[
            ("-o", a.output.as_deref(), &[]),
            ("--csv", a.csv.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
        ],
    )?;
    crate::interrupt::install();
    let t0 = Instant::now();
    let expected =
        (sweep.points_per_curve().min(sweep.max_points as f64) as u64) * setups.len() as u64;
    let mut observer = FrcObserver {
        bar: crate::progress::bar(expected, "points"),
        csv: match &a.csv {
            Some(p) => Some(Mutex::new(
                ewr_results::FrcCsv::create(
                    p,
                    setups[0].model.contacts.len(),
                    &setups[0].point.monitor,
                    (a.estimate, setups[0].point.auto.is_some(), a.stability),
                    setups[0].point.amplitude,
                )
                .map_err(Failure::work)?,
            )),
            None => None,
        },
        failed_write: Mutex::new(None),
    };
    // The curves differ only in their friction bounds, which the receptance does not see:
    // one condensation (a modal extraction, for large models) serves them all.
    let rec = receptance(&setups[0], sweep.omega_max())?;
    let specs: Vec<CurveSpec<'_>> = setups
        .iter()
        .zip(&mu_values)
        .enumerate()
        .map(|(i, (setup, &mu_n))| CurveSpec {
            mu_n,
            setup,
            resume: stored.as_ref().map(|s| &s[i]),
        })
        .collect();
    let curves: Vec<Curve> = ewr_solve::sweep(&rec, &specs, &sweep, &observer);
    let forced = setups[0].phase_dof();
    // A stored sweep that cannot be continued is kept as it is: nothing is written over it.
    if let Some(e) = curves.iter().find_map(|c| match &c.stopped {
        Some(e @ StopReason::Resume(_)) => Some(e),
        _ => None,
    }) {
        observer.bar.finish_and_clear();
        return Err(Failure::input(format!(
            "--resume: {e}; {} was left as it was (resume with the model and options of the \
             interrupted run)",
            a.output
                .as_deref()
                .unwrap_or(std::path::Path::new(""))
                .display()
        )));
    }
    observer.bar.finish_and_clear();
    if let Some(csv) = observer.csv.take() {
        let csv = csv.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = csv.finish() {
            say_err!("warning: {e}: the CSV keeps its rows in the order they were solved");
        }
    }
    let errors: Vec<String> = curves
        .iter()
        .filter_map(|c| {
            c.stopped.as_ref().map(|e| match c.mu_n {
                Some(m) => format!("mu_n = {m}: {e}"),
                None => e.to_string(),
            })
        })
        .collect();
    let done = curves;
    let elapsed = t0.elapsed().as_secs_f64();
    let out_span = ewr_solve::profile::span(ewr_solve::profile::Phase::Output);
    if let Some(p) = &a.output {
        ewr_results::write_frc(p, &a.common.model, &setups[0], &done).map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        let axis = ewr_results::figures::FrequencyAxis::of_model(
            &setups[0].model,
            setups[0].point.amplitude,
            a.hz,
        );
        ewr_results::figures::frc(p, &done, axis).map_err(Failure::work)?;
    }
    drop(out_span);
    print_profile(&a.common, t_all);
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
            "profile": a.common.profile.then(ewr_solve::profile::report),
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
                                "estimate": p.solution.estimate.as_ref().map(EstimateSummary::of),
                                "stability": p.solution.stability.as_ref().map(StabilitySummary::of),
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>(),
            "stability_changes": done
                .iter()
                .map(|c| {
                    let sols: Vec<&PointSolution> = c.points.iter().map(|p| &p.solution).collect();
                    ewr_solve::stability_changes(&sols)
                        .iter()
                        .map(|ch| {
                            serde_json::json!({
                                "mu_n": c.mu_n,
                                "index": ch.index,
                                "omega": ch.omega,
                                "crossing": ch.crossing.describe(),
                                "to_unstable": ch.to_unstable,
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>(),
            "turning_points": done
                .iter()
                .map(|c| {
                    let w: Vec<f64> = c.points.iter().map(|p| p.solution.omega).collect();
                    ewr_solve::turning_points(&w)
                        .into_iter()
                        .map(|i| w[i])
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
                     period per contact){}{}",
                    pk.amplitude,
                    pk.omega,
                    pk.evaluations,
                    stick.join(", "),
                    pk.solution
                        .estimate
                        .as_ref()
                        .map(|e| format!(
                            "; truncation error {:.2}% (against {})",
                            100.0 * e.relative,
                            e.set
                        ))
                        .unwrap_or_default(),
                    // An arclength curve's highest point can lie past a fold, where no
                    // stepped sine stays.
                    match &pk.solution.stability {
                        Some(st) if !st.is_stable() => format!(
                            "; UNSTABLE (largest Floquet multiplier {:.4}): a sweep jumps off \
                             before it",
                            st.max_multiplier
                        ),
                        _ => String::new(),
                    }
                );
            }
            let sols: Vec<&PointSolution> = c.points.iter().map(|p| &p.solution).collect();
            for ch in ewr_solve::stability_changes(&sols) {
                say!(
                    "  {label}{} near w = {:.6}: {}",
                    if ch.to_unstable {
                        "becomes unstable"
                    } else {
                        "becomes stable"
                    },
                    ch.omega,
                    ch.crossing.describe()
                );
            }
            if a.stability {
                let n_unstable = sols
                    .iter()
                    .filter(|s| s.stability.as_ref().is_some_and(|st| !st.is_stable()))
                    .count();
                let n_unknown = sols
                    .iter()
                    .filter(|s| s.status.converged() && s.stability.is_none())
                    .count();
                say!(
                    "  {label}stability: {n_unstable} of {} points unstable{}",
                    sols.len(),
                    if n_unknown > 0 {
                        format!(", {n_unknown} not classified")
                    } else {
                        String::new()
                    }
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
    // Truncation errors above 1 % of the amplitude, at the refined peaks and at the points
    // estimated (--estimate), with the set that would do better.
    let over: Vec<(f64, f64, String)> = done
        .iter()
        .flat_map(|c| {
            c.peaks
                .iter()
                .map(|p| &p.solution)
                .chain(c.points.iter().map(|p| &p.solution))
        })
        .filter_map(|s| {
            s.estimate
                .as_ref()
                .filter(|e| e.relative > ESTIMATE_WARN)
                .map(|e| {
                    let set = ewr_solve::estimate::suggested(&s.set, e);
                    (s.omega, e.relative, set.to_string())
                })
        })
        .collect();
    if let Some((w, r, set)) = over.iter().max_by(|a, b| a.1.total_cmp(&b.1)).cloned() {
        say_err!(
            "warning: the truncation error exceeds 1% of the amplitude at {} point(s) or peak(s), \
             up to {:.1}% at w = {w}: use more harmonics (e.g. --harmonics {set}), or --harmonics auto",
            over.len(),
            100.0 * r
        );
    }
    let stuck_points = done
        .iter()
        .flat_map(|c| &c.points)
        .filter(|p| !p.solution.fully_stuck().is_empty())
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
