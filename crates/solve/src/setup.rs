//! Run options to a checked run: what every front end (`ewr`, Python, studies) gives as text
//! and numbers, resolved against a model into [`Setup`] with errors that name the option at
//! fault. The front ends only spell the options (`--harmonics` on the command line,
//! `harmonics=` in Python); the rules, defaults and messages are these.

use crate::continuation::{Continuation, FrcSettings};
use crate::newton::NewtonOptions;
use crate::periodic::{
    DEFAULT_SET_NAME, PointSettings, default_set, default_tolerance, harmonic_set_problem,
    samples_problem,
};
use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::default_samples;
use ewr_hb::receptance::{Receptance, ReceptanceError, ReceptanceKind};
use ewr_model::Model;
use std::fmt;

/// An option of a run, as the front ends spell it: [`Opt::flag`] on the command line,
/// [`Opt::keyword`] in Python.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Opt {
    /// The harmonic set.
    Harmonics,
    /// Time samples per period.
    Samples,
    /// Friction bound override.
    MuN,
    /// Scaling of the friction law.
    Rho,
    /// Friction law.
    Law,
    /// Condensation backend.
    Receptance,
    /// Newton tolerance.
    Tol,
    /// Linear algebra of the Newton steps.
    Linear,
    /// Matrix-free preconditioner.
    Preconditioner,
    /// Newton iteration cap.
    MaxIter,
    /// Monitored DOFs.
    Dofs,
    /// Frequency of one solution.
    Omega,
    /// First frequency of a sweep.
    OmegaStart,
    /// Last frequency of a sweep.
    OmegaEnd,
    /// Frequency step of a sweep.
    Step,
    /// Continuation method.
    Continuation,
    /// Adaptive-step tolerance.
    Adaptive,
    /// Tracked parameter of peak tracking.
    Param,
    /// Amplitude measure.
    Amplitude,
    /// Engine order of a cyclic sector.
    EngineOrder,
}

impl Opt {
    /// The command-line spelling (`--omega-start`).
    pub fn flag(self) -> &'static str {
        match self {
            Opt::Harmonics => "--harmonics",
            Opt::Samples => "--samples",
            Opt::MuN => "--mu-n",
            Opt::Rho => "--rho",
            Opt::Law => "--law",
            Opt::Receptance => "--receptance",
            Opt::Tol => "--tol",
            Opt::Linear => "--linear",
            Opt::Preconditioner => "--preconditioner",
            Opt::MaxIter => "--max-iter",
            Opt::Dofs => "--dofs",
            Opt::Omega => "--omega",
            Opt::OmegaStart => "--omega-start",
            Opt::OmegaEnd => "--omega-end",
            Opt::Step => "--step",
            Opt::Continuation => "--continuation",
            Opt::Adaptive => "--adaptive",
            Opt::Param => "--param",
            Opt::Amplitude => "--amplitude",
            Opt::EngineOrder => "--engine-order",
        }
    }

    /// The Python keyword (`omega_start`).
    pub fn keyword(self) -> &'static str {
        match self {
            Opt::Harmonics => "harmonics",
            Opt::Samples => "samples",
            Opt::MuN => "mu_n",
            Opt::Rho => "rho",
            Opt::Law => "law",
            Opt::Receptance => "receptance",
            Opt::Tol => "tol",
            Opt::Linear => "linear",
            Opt::Preconditioner => "preconditioner",
            Opt::MaxIter => "max_iter",
            Opt::Dofs => "dofs",
            Opt::Omega => "omega",
            Opt::OmegaStart => "omega_start",
            Opt::OmegaEnd => "omega_end",
            Opt::Step => "step",
            Opt::Continuation => "continuation",
            Opt::Adaptive => "adaptive",
            Opt::Param => "param",
            Opt::Amplitude => "amplitude",
            Opt::EngineOrder => "engine_order",
        }
    }
}

/// How a front end names options in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `--harmonics odd:4: ...`
    Cli,
    /// `harmonics="odd:4": ...`
    Python,
}

/// A bad option value: which option, the value as given, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.render(Spelling::Cli))]
pub struct OptionError {
    /// The option at fault.
    pub option: Opt,
    /// The value as given, if the message shows it; `text` says whether Python quotes it.
    pub value: Option<(String, bool)>,
    /// What is wrong, as a sentence fragment.
    pub message: String,
}

impl OptionError {
    /// An error naming `option` without its value.
    pub fn new(option: Opt, message: impl Into<String>) -> Self {
        OptionError {
            option,
            value: None,
            message: message.into(),
        }
    }

    /// An error naming `option` and its numeric value.
    pub fn number(option: Opt, value: impl fmt::Display, message: impl Into<String>) -> Self {
        OptionError {
            option,
            value: Some((value.to_string(), false)),
            message: message.into(),
        }
    }

    /// An error naming `option` and its text value (quoted in Python).
    pub fn text(option: Opt, value: &str, message: impl Into<String>) -> Self {
        OptionError {
            option,
            value: Some((value.to_string(), true)),
            message: message.into(),
        }
    }

    /// The message as a front end shows it.
    pub fn render(&self, spelling: Spelling) -> String {
        match (spelling, &self.value) {
            (Spelling::Cli, None) => format!("{}: {}", self.option.flag(), self.message),
            (Spelling::Cli, Some((v, _))) => {
                format!("{} {v}: {}", self.option.flag(), self.message)
            }
            (Spelling::Python, None) => format!("{}: {}", self.option.keyword(), self.message),
            (Spelling::Python, Some((v, true))) => {
                format!("{}={v:?}: {}", self.option.keyword(), self.message)
            }
            (Spelling::Python, Some((v, false))) => {
                format!("{}={v}: {}", self.option.keyword(), self.message)
            }
        }
    }
}

/// Why a run cannot be set up.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// An option value is invalid for this model.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// The model has no friction contacts, so there is nothing to solve.
    #[error("the model has no friction contacts: nothing for E-WR to solve")]
    NoContacts,
    /// The run would need more memory than the machine gives this process.
    #[error("{0}")]
    Memory(String),
}

impl SetupError {
    /// The message as a front end shows it.
    pub fn render(&self, spelling: Spelling) -> String {
        match self {
            SetupError::Option(e) => e.render(spelling),
            e => e.to_string(),
        }
    }
}

/// `x` if it is finite and > 0.
pub fn positive(option: Opt, x: f64) -> Result<f64, OptionError> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(OptionError::number(option, x, "must be finite and > 0"))
    }
}

/// A DOF as a user names it.
#[derive(Clone, Debug, PartialEq)]
pub enum DofRef {
    /// Every DOF of the model.
    All,
    /// By index (negative: out of range).
    Index(i64),
    /// By label (`/dof_labels` of the model).
    Label(String),
}

impl DofRef {
    /// DOFs from a comma-separated list of indices or labels, or `all`.
    pub fn parse_list(spec: &str) -> Vec<DofRef> {
        if spec.trim() == "all" {
            return vec![DofRef::All];
        }
        spec.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| match item.parse::<i64>() {
                Ok(i) if i >= 0 => DofRef::Index(i),
                _ => DofRef::Label(item.to_string()),
            })
            .collect()
    }
}

/// The DOFs `items` name in `model`, without repeats, in the order given.
pub fn resolve_dofs(
    model: &Model,
    items: &[DofRef],
    option: Opt,
) -> Result<Vec<usize>, OptionError> {
    let n = model.n_dofs();
    let mut out = Vec::new();
    for item in items {
        let d = match item {
            DofRef::All => {
                out = (0..n).collect();
                continue;
            }
            DofRef::Index(i) => {
                if *i < 0 || *i as u64 >= n as u64 {
                    return Err(OptionError::new(
                        option,
                        format!("DOF {i} is out of range 0..{n}"),
                    ));
                }
                *i as usize
            }
            DofRef::Label(l) => model.dof_by_label(l).ok_or_else(|| {
                OptionError::new(
                    option,
                    format!("{l:?} is neither a DOF index nor a DOF label of the model"),
                )
            })?,
        };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        return Err(OptionError::new(option, "no DOF given"));
    }
    Ok(out)
}

/// The DOFs reported when none are named: all of a model up to 16 DOFs, else the forced ones.
pub fn default_monitor(model: &Model) -> Vec<usize> {
    if model.n_dofs() <= 16 {
        return (0..model.n_dofs()).collect();
    }
    let mut d: Vec<usize> = model.forcing.iter().map(|f| f.dof).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// How each periodic solution of a run is computed, as given (text as typed, `None` for the
/// default). [`SolveOptions::default`] holds the defaults every front end documents.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// `odd:H`, `all:H`, a list (`1,3,5`), `auto[:TOL]` or `default` ([`default_set`]).
    pub harmonics: String,
    /// Samples per period (default [`default_samples`]).
    pub samples: Option<usize>,
    /// Friction bound of every contact, overriding the model's.
    pub mu_n: Option<f64>,
    /// `rho` of every contact (a number > 0) or `auto` (default: the model's).
    pub rho: Option<String>,
    /// Friction law (`exact`, `projection`, `tanh:A`, `pwl:D`, `maxeps:E`).
    pub law: String,
    /// Condensation backend (`auto`, `dense`, `sparse`, `modal:N`).
    pub receptance: String,
    /// Tolerance on the scaled residual (default [`default_tolerance`]).
    pub tol: Option<f64>,
    /// Linear algebra of the Newton steps (`auto`, `dense`, `matrix-free`).
    pub linear: String,
    /// Matrix-free preconditioner (`contact`, `harmonic`, `two-level`).
    pub preconditioner: String,
    /// Newton iteration cap per solve.
    pub max_iter: usize,
    /// Ramp the harmonics up from one at a point without a start.
    pub ramp: bool,
    /// Monitored DOFs (default [`default_monitor`]).
    pub dofs: Option<Vec<DofRef>>,
    /// Amplitude measure (`max`, `dynamic`, `h1`, `pp`; see [`crate::Amplitude`]).
    pub amplitude: String,
    /// Engine order of a cyclic sector's excitation, overriding the model's.
    pub engine_order: Option<i64>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            harmonics: DEFAULT_SET_NAME.into(),
            samples: None,
            mu_n: None,
            rho: None,
            law: "exact".into(),
            receptance: "auto".into(),
            tol: None,
            linear: "auto".into(),
            preconditioner: "two-level".into(),
            max_iter: 200,
            ramp: true,
            dofs: None,
            amplitude: "max".into(),
            engine_order: None,
        }
    }
}

/// Everything a run needs, checked and resolved from the options.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The model, with the overrides applied.
    pub model: Model,
    /// How each periodic solution is computed.
    pub point: PointSettings,
    /// Condensation backend.
    pub kind: ReceptanceKind,
    /// What the user should hear but which does not stop the run (e.g. forcing outside the
    /// harmonic set).
    pub warnings: Vec<String>,
}

impl Setup {
    /// Condenses the structure onto its contacts with the chosen backend.
    pub fn receptance(&self) -> Result<Receptance, ReceptanceError> {
        Receptance::new(&self.model, self.kind)
    }

    /// The contacts' parameters as the solver reads them.
    pub fn params(&self) -> ContactParams {
        ContactParams::of(&self.model.contacts)
    }

    /// The DOF whose phase lag defines phase resonance and its first-harmonic force: the
    /// largest first-harmonic force on a monitored DOF.
    pub fn phase_dof(&self) -> Option<(usize, (f64, f64))> {
        self.model
            .forcing
            .iter()
            .filter(|f| f.harmonic == 1 && self.point.monitor.contains(&f.dof))
            .max_by(|x, y| x.cos.hypot(x.sin).total_cmp(&y.cos.hypot(y.sin)))
            .map(|f| (f.dof, (f.cos, f.sin)))
    }
}

/// Applies `rho` (a number > 0, or `auto`) to every contact of `model`.
pub fn apply_rho(model: &mut Model, rho: &str) -> Result<(), OptionError> {
    if rho == "auto" {
        model.contacts.rho_auto = true;
        return Ok(());
    }
    let r: f64 = rho
        .parse()
        .map_err(|_| OptionError::number(Opt::Rho, rho, "a number > 0 or auto"))?;
    positive(Opt::Rho, r)?;
    model.contacts.rho.iter_mut().for_each(|m| *m = r);
    model.contacts.rho_auto = false;
    Ok(())
}

/// Applies the overrides of `o` to `model` and resolves every option; nothing is computed.
pub fn resolve(mut model: Model, o: &SolveOptions) -> Result<Setup, SetupError> {
    if model.contacts.is_empty() {
        return Err(SetupError::NoContacts);
    }
    let mut warnings = Vec::new();
    if let Some(x) = o.mu_n {
        model
            .contacts
            .set_mu_n(x)
            .map_err(|e| OptionError::number(Opt::MuN, x, e))?;
    }
    if let Some(r) = &o.rho {
        apply_rho(&mut model, r)?;
    }
    if let Some(eo) = o.engine_order {
        model
            .set_engine_order(eo)
            .map_err(|e| OptionError::number(Opt::EngineOrder, eo, e))?;
    }
    let (set, auto) = match crate::auto::parse(&o.harmonics) {
        Some(tol) => (
            crate::auto::start_set(&model),
            Some(tol.map_err(|e| OptionError::new(Opt::Harmonics, e))?),
        ),
        None if o.harmonics.trim() == DEFAULT_SET_NAME => (default_set(&model), None),
        None => (
            o.harmonics.parse().map_err(|e: ewr_hb::FourierError| {
                OptionError::new(Opt::Harmonics, e.to_string())
            })?,
            None,
        ),
    };
    let law: FrictionLaw = o
        .law
        .parse()
        .map_err(|e: ewr_contact::ParseLawError| OptionError::new(Opt::Law, e.to_string()))?;
    let n_samples = o.samples.unwrap_or_else(|| default_samples(&set));
    if let Some(why) = samples_problem(&set, n_samples) {
        return Err(OptionError::number(Opt::Samples, n_samples, why).into());
    }
    if let Some(why) = harmonic_set_problem(&model, &set) {
        return Err(OptionError::text(Opt::Harmonics, &o.harmonics, why).into());
    }
    if let Some(f) = model.forcing.iter().find(|f| !set.contains(f.harmonic)) {
        warnings.push(format!(
            "warning: the forcing on DOF {} at harmonic {} is outside {} and is ignored",
            f.dof, f.harmonic, set
        ));
    }
    let tol = positive(Opt::Tol, o.tol.unwrap_or_else(|| default_tolerance(&model)))?;
    let monitor = match &o.dofs {
        Some(items) => resolve_dofs(&model, items, Opt::Dofs)?,
        None => default_monitor(&model),
    };
    let linear = o
        .linear
        .parse()
        .map_err(|e: String| OptionError::new(Opt::Linear, e))?;
    let preconditioner = o
        .preconditioner
        .parse()
        .map_err(|e: String| OptionError::new(Opt::Preconditioner, e))?;
    let kind = o.receptance.parse().map_err(|e: String| OptionError {
        option: Opt::Receptance,
        value: Some((format!("{:?}", o.receptance), false)),
        message: e,
    })?;
    let amplitude = o
        .amplitude
        .parse()
        .map_err(|e: String| OptionError::new(Opt::Amplitude, e))?;
    let point = PointSettings {
        amplitude,
        set,
        n_samples,
        law,
        newton: NewtonOptions {
            tol_residual: tol,
            max_iterations: o.max_iter,
            linear,
            ..NewtonOptions::default()
        },
        ramp: o.ramp,
        monitor,
        retry_rho: true,
        preconditioner,
        auto,
    };
    let setup = Setup {
        model,
        point,
        kind,
        warnings,
    };
    if let Some(why) = memory_problem(&setup.model.contacts, &setup.point) {
        return Err(SetupError::Memory(why));
    }
    Ok(setup)
}

/// Most points per curve: a guard against a step far too small for the range.
pub const MAX_POINTS: usize = 100_000;

/// Relative change of a mode's response ([`ewr_hb::DampingCoupling`]) from which the modal
/// receptance's diagonal damping is worth a warning.
pub const DAMPING_COUPLING_WARN: f64 = 0.01;

/// Modes up to this many times a run's highest harmonic frequency count for
/// [`receptance_warnings`]: those its harmonics can bring to resonance.
pub const DAMPING_COUPLING_REACH: f64 = 1.5;

/// The highest frequency a run's harmonics reach at fundamental `omega_max`: the set's
/// highest harmonic (an automatic set's largest possible) times `omega_max`.
fn harmonic_reach(point: &PointSettings, omega_max: f64) -> f64 {
    let h = if point.auto.is_some() {
        crate::auto::MAX_HARMONIC
    } else {
        point.set.h_max()
    };
    h.max(1) as f64 * omega_max.abs()
}

/// What the user should hear about a receptance once it is built, for a run with `point`'s
/// harmonics up to fundamental `omega_max`: where the modal backend keeps only the diagonal
/// of an explicit damping matrix's projection and that misses more than
/// [`DAMPING_COUPLING_WARN`] of the response of a retained mode up to
/// [`DAMPING_COUPLING_REACH`] times the highest harmonic frequency (docs/receptance.md,
/// "Non-proportional damping").
pub fn receptance_warnings(
    rec: &ewr_hb::Receptance,
    point: &PointSettings,
    omega_max: f64,
) -> Vec<String> {
    damping_coupling_warnings(
        rec,
        point,
        omega_max,
        "the sparse or dense receptance condenses the damping exactly",
    )
}

/// [`receptance_warnings`] with `advice` on what to do instead as its last clause.
pub fn damping_coupling_warnings(
    rec: &ewr_hb::Receptance,
    point: &PointSettings,
    omega_max: f64,
    advice: &str,
) -> Vec<String> {
    let reach = harmonic_reach(point, omega_max);
    match rec.damping_coupling_below(DAMPING_COUPLING_REACH * reach) {
        Some(c) if c.error > DAMPING_COUPLING_WARN || c.error.is_nan() => {
            let size = if c.error.is_nan() {
                "by an amount that cannot be estimated".to_string()
            } else if c.error.is_finite() {
                format!("by about {:.1}% of itself", 100.0 * c.error)
            } else {
                "without bound (two coupled modes of one frequency, or one the sum leaves undamped)"
                    .to_string()
            };
            vec![format!(
                "warning: the modal receptance keeps only the diagonal of the damping matrix \
                 projected on the modes, and this model's damping matrix couples them: near \
                 mode {} of the structure ({:.6e} rad/s) the response moves {size} with the \
                 coupling (docs/receptance.md, \"Non-proportional damping\"); {advice}",
                c.mode + 1,
                c.omega
            )]
        }
        _ => Vec::new(),
    }
}

/// A frequency sweep as given: band, step, continuation, what is computed beside the points.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// First frequency.
    pub omega_start: f64,
    /// Last frequency (below the first for a downward sweep).
    pub omega_end: f64,
    /// Frequency step (sequential) or first arclength step.
    pub step: f64,
    /// Smallest step (default `step / 64`).
    pub min_step: Option<f64>,
    /// Largest step (default `8 step`).
    pub max_step: Option<f64>,
    /// Sequential or arclength continuation.
    pub method: Continuation,
    /// Adaptive steps to this relative tolerance, or fixed steps.
    pub adaptive: Option<f64>,
    /// Cap on the points of one curve.
    pub max_points: usize,
    /// Refine every local maximum of the curves to the true maximum in frequency.
    pub refine_peaks: bool,
    /// Locate the phase resonances of the forced DOF.
    pub phase_resonances: bool,
    /// Keep each point's sampled histories (see [`FrcSettings::keep_histories`]).
    pub keep_histories: bool,
    /// Estimate the truncation error of every converged point
    /// ([`crate::estimate::truncation_error`]: one more solve per point, on `2H + 1`).
    pub estimate_points: bool,
    /// Estimate the truncation error of every refined peak.
    pub estimate_peaks: bool,
    /// Floquet multipliers of every converged point and refined peak
    /// ([`crate::stability::stability`]: one dense eigensolve per point).
    pub stability: bool,
    /// With `stability` on a cyclic sector: against every inter-sector phase of the
    /// perturbation ([`crate::stability::stability_all_phases`]), not only the travelling
    /// wave's.
    pub all_phases: bool,
}

impl SweepOptions {
    /// The band's highest fundamental, `max(|omega_start|, |omega_end|)`: how far up its
    /// harmonics reach.
    pub fn omega_max(&self) -> f64 {
        self.omega_start.abs().max(self.omega_end.abs())
    }

    /// A sequential sweep from `omega_start` to `omega_end` by `step` with the front ends'
    /// defaults: fixed steps, [`MAX_POINTS`], peaks and phase resonances refined, no histories.
    pub fn new(omega_start: f64, omega_end: f64, step: f64) -> Self {
        SweepOptions {
            omega_start,
            omega_end,
            step,
            min_step: None,
            max_step: None,
            method: Continuation::Sequential,
            adaptive: None,
            max_points: MAX_POINTS,
            refine_peaks: true,
            phase_resonances: true,
            keep_histories: false,
            estimate_points: false,
            estimate_peaks: true,
            stability: false,
            all_phases: false,
        }
    }

    /// Checks the band, the step and the adaptive tolerance, and that a sequential sweep fits
    /// under the point cap.
    pub fn check(&self) -> Result<(), OptionError> {
        positive(Opt::OmegaStart, self.omega_start)?;
        positive(Opt::OmegaEnd, self.omega_end)?;
        positive(Opt::Step, self.step)?;
        if let Some(tol) = self.adaptive {
            positive(Opt::Adaptive, tol)?;
        }
        let per_curve = self.points_per_curve();
        if self.method == Continuation::Sequential && per_curve > self.max_points as f64 {
            return Err(OptionError::number(
                Opt::Step,
                self.step,
                format!(
                    "{per_curve:.0} points from {} to {}, more than the {} a curve may have; use \
                     a larger step",
                    self.omega_start, self.omega_end, self.max_points
                ),
            ));
        }
        Ok(())
    }

    /// Checks what the sweep cannot do with these point settings: arclength continuation
    /// follows a fixed set of unknowns, so automatic harmonics are sequential only.
    pub fn check_point(&self, point: &PointSettings) -> Result<(), OptionError> {
        if point.auto.is_some() && self.method == Continuation::Arclength {
            return Err(OptionError::new(
                Opt::Harmonics,
                "auto: arclength continuation follows a fixed set of unknowns; use sequential \
                 continuation (the default) or an explicit set",
            ));
        }
        Ok(())
    }

    /// Points of one curve at the nominal step (its end included).
    pub fn points_per_curve(&self) -> f64 {
        ((self.omega_end - self.omega_start).abs() / self.step).ceil() + 1.0
    }

    /// The continuation settings of one curve computed with `point`.
    pub fn settings(&self, point: &PointSettings) -> FrcSettings {
        FrcSettings {
            omega_start: self.omega_start,
            omega_end: self.omega_end,
            step: self.step,
            min_step: self.min_step.unwrap_or(self.step / 64.0),
            max_step: self.max_step.unwrap_or(self.step * 8.0),
            method: self.method,
            point: point.clone(),
            max_points: self.max_points,
            adaptive: self.adaptive,
            keep_histories: self.keep_histories,
        }
    }
}

/// The continuation method of its name.
pub fn parse_continuation(s: &str) -> Result<Continuation, OptionError> {
    s.parse()
        .map_err(|e: String| OptionError::new(Opt::Continuation, e))
}

/// Friction bounds of the curves: a comma-separated list of numbers.
pub fn parse_mu_n_list(list: &str) -> Result<Vec<f64>, OptionError> {
    list.split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| OptionError::new(Opt::MuN, format!("{s:?} is not a number")))
        })
        .collect()
}

/// Memory the machine can give this process, in bytes: the smaller of the kernel's
/// `MemAvailable` and the address-space limit (`ulimit -v`) left above what the process
/// already maps; `None` where neither can be read.
pub fn available_memory() -> Option<f64> {
    let kb = |line: &str| -> Option<f64> { line.split_whitespace().nth(1)?.parse::<f64>().ok() };
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(kb)
            .map(|k| k * 1024.0)
    });
    let limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Max address space"))?;
            let soft = line.split_whitespace().nth(3)?;
            let soft: f64 = soft.parse().ok()?;
            let used = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|st| st.lines().find(|l| l.starts_with("VmSize:")).and_then(kb))
                .map_or(0.0, |k| k * 1024.0);
            Some((soft - used).max(0.0))
        });
    match (avail, limit) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    }
}

/// Bytes one periodic solution needs at least: the sampled histories and law derivatives of
/// every contact row, and the dense Jacobian with its LU where the Newton steps go dense. A
/// lower bound, to refuse before allocating what cannot fit.
pub fn memory_needed(contacts: &ewr_model::Contacts, point: &PointSettings) -> f64 {
    memory_for(contacts.dim, contacts.len(), contacts.has_normal(), point)
}

/// [`memory_needed`] for `nc` contacts of `dim` tangential directions (and a normal one).
pub fn memory_for(dim: usize, nc: usize, normal: bool, point: &PointSettings) -> f64 {
    let (d, ncf) = (dim as f64, nc as f64);
    let local = if normal { d + 1.0 } else { d };
    let rows = local * ncf;
    let nt = point.n_samples as f64;
    let n = rows * point.set.n_coeffs() as f64;
    // Samples of forces, velocities and residuals, and the law's derivatives per sample.
    let samples = 8.0 * nt * rows * (3.0 + 2.0 * local);
    let dense = match point.newton.linear {
        crate::LinearSolve::Dense => true,
        crate::LinearSolve::MatrixFree => false,
        crate::LinearSolve::Auto => nc <= 1 || n <= crate::AUTO_MATRIX_FREE_MIN_UNKNOWNS as f64,
    };
    // The Jacobian, its LU and the dogleg's products.
    let jacobian = if dense { 8.0 * 3.0 * n * n } else { 0.0 };
    samples + jacobian
}

/// Whether one periodic solution of the contacts `p` with `point` fits in the memory this
/// process can still get (true where that is unknown): the extra solves of an estimate or an
/// automatic set are skipped where it does not.
pub(crate) fn fits_in_memory(p: &ContactParams, point: &PointSettings) -> bool {
    available_memory()
        .is_none_or(|have| memory_for(p.dim, p.len(), p.normal.is_some(), point) <= have)
}

/// Why one periodic solution of these contacts and settings cannot be computed in this
/// machine's memory, if it cannot.
pub fn memory_problem(contacts: &ewr_model::Contacts, point: &PointSettings) -> Option<String> {
    let need = memory_needed(contacts, point);
    let have = available_memory()?;
    if need <= have {
        return None;
    }
    let mut matrix_free = point.clone();
    matrix_free.newton.linear = crate::LinearSolve::MatrixFree;
    let dense = memory_needed(contacts, &matrix_free) < need;
    Some(format!(
        "one periodic solution needs at least {:.1} GB ({} samples, {} harmonic coefficients \
         per contact row{}), more than the {:.1} GB this process can get; use fewer harmonics \
         or samples{}",
        need / 1e9,
        point.n_samples,
        point.set.n_coeffs(),
        if dense { ", a dense Jacobian" } else { "" },
        have / 1e9,
        if dense {
            ", or --linear matrix-free"
        } else {
            ""
        }
    ))
}

/// A stable 64-bit FNV-1a hash, for fingerprints stored in result files (std's hasher may
/// change between Rust releases).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain(&[0xff]) {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn matrix(&mut self, m: &ewr_model::SparseMatrix) {
        self.add(&(m.nrows() as u64).to_le_bytes());
        self.add(&(m.ncols() as u64).to_le_bytes());
        for t in m.triplet_iter() {
            let mut b = [0u8; 24];
            b[..8].copy_from_slice(&(t.row as u64).to_le_bytes());
            b[8..16].copy_from_slice(&(t.col as u64).to_le_bytes());
            b[16..].copy_from_slice(&t.val.to_bits().to_le_bytes());
            self.add(&b);
        }
    }
}

impl Setup {
    /// What defines the periodic solutions of this run, as 16 hex digits: the structure, its
    /// damping, contacts, forcing and cyclic symmetry, the harmonic set, samples and law. A
    /// resumed sweep is refused when its file holds another fingerprint (another model or
    /// other options), before anything is written.
    pub fn fingerprint(&self) -> String {
        let m = &self.model;
        let mut h = Fnv::new();
        h.add(b"ewr run fingerprint 1");
        h.matrix(&m.mass);
        h.matrix(&m.stiffness);
        if let Some(c) = &m.damping_matrix {
            h.matrix(c);
        }
        // The rest is small: its debug form is exact (floats print round-trip).
        h.add(format!("{:?}", (&m.damping, &m.contacts, &m.forcing, &m.cyclic)).as_bytes());
        let p = &self.point;
        h.add(format!("{} {} {}", p.set, p.n_samples, p.law).as_bytes());
        // Amplitudes of another measure are not the same curve (added only when not the
        // default, so that files written before the option existed keep their fingerprint).
        if p.amplitude != crate::Amplitude::Max {
            h.add(format!("amplitude {}", p.amplitude).as_bytes());
        }
        // Sweeps of 3-D contacts hold stuck contacts (docs/stuck-contacts.md), since version
        // 2 by an active set, since version 3 where they re-stuck between two points, since
        // version 4 moved where their slip leaves them, since version 5 with the re-stick
        // located to a 256th of the step: points stored before would continue with another
        // convention.
        if m.contacts.has_normal() {
            h.add(b"stuck contacts held 5");
        }
        // Since re-sticks are searched only where at least a tenth of the contacts re-stick
        // (`RESTICK_MIN_SHARE`), models of more than 10 contacts are swept another way.
        if m.contacts.len() > 10 {
            h.add(b"re-stick searched from a tenth of the contacts");
        }
        // So do constant-bound contacts on sets with h = 0 under the exact or the projection
        // law, since the hold was extended to them (version 3: moved where their slip leaves
        // them; 4: re-sticks located to a 256th of the step).
        let held_law = matches!(
            p.law,
            ewr_contact::FrictionLaw::Exact | ewr_contact::FrictionLaw::Projection
        );
        if !m.contacts.has_normal()
            && held_law
            && (p.set.coeff_index(0).is_some() || p.auto.is_some())
        {
            h.add(b"constant-bound stuck contacts held 4");
        }
        format!("{:016x}", h.0)
    }
}
