//! The study file (TOML, documented in `docs/study.md`): parsed with unknown keys rejected,
//! every value checked with the line at fault, and expanded into its cases before any work.

use crate::hash::Fnv;
use crate::param::{Case, ParamKind, Value};
use ewr_contact::FrictionLaw;
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::ReceptanceKind;
use ewr_model::Model;
use ewr_solve::{Continuation, LinearSolve, NewtonOptions, Preconditioner};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Most cases a study may have: a guard against a grid typed wrong (1e12 cases would not
/// fit in memory, let alone finish), well above any study a workstation or cluster runs.
pub const MAX_CASES: usize = 100_000;

/// Version of the study and result layout, stored in every result file.
pub const STUDY_FORMAT_VERSION: i64 = 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStudy {
    title: Option<String>,
    model: Spanned<String>,
    frequency: RawFrequency,
    #[serde(default)]
    solver: RawSolver,
    #[serde(default)]
    targets: RawTargets,
    grid: Option<RawParams>,
    cases: Option<Vec<Spanned<RawParams>>>,
    optimize: Option<Spanned<RawOptimize>>,
    objective: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOptimize {
    parameter: Spanned<String>,
    from: Spanned<f64>,
    to: Spanned<f64>,
    count: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFrequency {
    start: Spanned<f64>,
    end: Spanned<f64>,
    step: Spanned<f64>,
    min_step: Option<Spanned<f64>>,
    max_step: Option<Spanned<f64>>,
    continuation: Option<Spanned<String>>,
    max_points: Option<Spanned<i64>>,
    adaptive: Option<Spanned<f64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSolver {
    harmonics: Option<Spanned<String>>,
    samples: Option<Spanned<i64>>,
    law: Option<Spanned<String>>,
    rho: Option<Spanned<toml::Value>>,
    tol: Option<Spanned<f64>>,
    max_iter: Option<Spanned<i64>>,
    ramp: Option<bool>,
    receptance: Option<Spanned<String>>,
    linear: Option<Spanned<String>>,
    preconditioner: Option<Spanned<String>>,
    dofs: Option<Spanned<toml::Value>>,
    amplitude: Option<Spanned<String>>,
    stability: Option<bool>,
    all_phases: Option<Spanned<bool>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTargets {
    mu_n_contacts: Option<Spanned<Vec<Spanned<i64>>>>,
    mass_dofs: Option<Spanned<toml::Value>>,
}

/// Swept parameters: the lists of `[grid]`, or the values of one `[[cases]]` entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParams {
    mu_n: Option<Spanned<toml::Value>>,
    mu: Option<Spanned<toml::Value>>,
    normal_preload: Option<Spanned<toml::Value>>,
    forcing_scale: Option<Spanned<toml::Value>>,
    mass: Option<Spanned<toml::Value>>,
    rho: Option<Spanned<toml::Value>>,
    law: Option<Spanned<toml::Value>>,
    harmonics: Option<Spanned<toml::Value>>,
    engine_order: Option<Spanned<toml::Value>>,
}

impl RawParams {
    fn entries(&self) -> [(ParamKind, Option<&Spanned<toml::Value>>); 9] {
        [
            (ParamKind::MuN, self.mu_n.as_ref()),
            (ParamKind::Mu, self.mu.as_ref()),
            (ParamKind::NormalPreload, self.normal_preload.as_ref()),
            (ParamKind::ForcingScale, self.forcing_scale.as_ref()),
            (ParamKind::Mass, self.mass.as_ref()),
            (ParamKind::Rho, self.rho.as_ref()),
            (ParamKind::Law, self.law.as_ref()),
            (ParamKind::Harmonics, self.harmonics.as_ref()),
            (ParamKind::EngineOrder, self.engine_order.as_ref()),
        ]
    }
}

/// The frequency band and how it is followed.
#[derive(Clone, Debug)]
pub struct Frequency {
    /// First frequency.
    pub start: f64,
    /// Last frequency (below `start` for a downward sweep).
    pub end: f64,
    /// Nominal step.
    pub step: f64,
    /// Smallest step (default `step / 64`).
    pub min_step: f64,
    /// Largest step (default `8 step`).
    pub max_step: f64,
    /// Sequential or arclength continuation.
    pub method: Continuation,
    /// Cap on the points of one curve.
    pub max_points: usize,
    /// Adaptive steps to this relative tolerance (`ewr_solve::step_control`), or fixed.
    pub adaptive: Option<f64>,
}

/// Solver settings shared by every case (a case may override harmonics, law and rho).
#[derive(Clone, Debug)]
pub struct Solver {
    /// Harmonic set (unless the case sweeps `harmonics`); with `auto`, the smallest tried.
    pub set: HarmonicSet,
    /// Automatic harmonics to this relative tolerance (`solver.harmonics = "auto:TOL"`).
    pub auto: Option<f64>,
    /// Fixed samples per period, or `None` for the default of each case's harmonic set.
    pub samples: Option<usize>,
    /// Friction law (unless swept).
    pub law: FrictionLaw,
    /// Newton options.
    pub newton: NewtonOptions,
    /// Harmonic ramping at the first point of each curve.
    pub ramp: bool,
    /// Condensation backend.
    pub kind: ReceptanceKind,
    /// Preconditioner of matrix-free Newton steps.
    pub preconditioner: Preconditioner,
    /// Monitored DOFs; the peak amplitude is `max_t ||u(t)||` over them, or the measure of
    /// `amplitude`.
    pub monitor: Vec<usize>,
    /// Amplitude measure of curves, peaks and optima (`solver.amplitude`).
    pub amplitude: ewr_solve::Amplitude,
    /// Floquet multipliers of every converged point, refined peak and locus peak
    /// (`solver.stability`, docs/stability.md).
    pub stability: bool,
    /// With `stability` on a cyclic sector: against every inter-sector phase of the
    /// perturbation, not only the travelling wave's (`solver.all_phases`).
    pub all_phases: bool,
}

/// One swept parameter: what it is and what it acts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// Which parameter.
    pub kind: ParamKind,
}

impl Parameter {
    /// Column name in the results (`mu_n`, `forcing_scale`, `mass`, `rho`, `law`, `harmonics`).
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// True for numbers, false for text values (law, harmonics).
    pub fn numeric(&self) -> bool {
        self.kind.numeric()
    }
}

/// What each case computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The frequency response curve on the study's steps, and its refined peak.
    Curve,
    /// The peaks only: every local maximum of a coarse sweep (adaptive steps by default)
    /// refined to the true maximum in frequency; all of them are stored.
    Peak,
}

/// The `[optimize]` section: the parameter whose value minimises the resonance peak, found
/// per case by tracking the peak over `count` values from `from` to `to` and refining the
/// smallest by golden section (as `ewr peaks`).
#[derive(Clone, Debug, PartialEq)]
pub struct Optimize {
    /// The optimised parameter (numeric, not swept by the grid).
    pub kind: ParamKind,
    /// First value.
    pub from: f64,
    /// Last value.
    pub to: f64,
    /// Values tracked before the golden-section refinement.
    pub count: usize,
}

impl Optimize {
    /// The tracked values, from `from` to `to`.
    pub fn values(&self) -> Vec<f64> {
        crate::param::values(self.from, self.to, self.count)
    }
}

/// A parsed and checked study: the base model, the settings and every case.
#[derive(Clone, Debug)]
pub struct Study {
    /// The study file.
    pub path: PathBuf,
    /// Its text, stored in the results for provenance.
    pub source: String,
    /// Optional title.
    pub title: Option<String>,
    /// The model path as written in the study file.
    pub model_name: String,
    /// The model path resolved against the study file's folder.
    pub model_path: PathBuf,
    /// The model as read (overrides are applied per case).
    pub base: Model,
    /// Frequency band and continuation.
    pub frequency: Frequency,
    /// Solver settings.
    pub solver: Solver,
    /// Contacts whose `mu_n` a swept `mu_n` sets (all by default).
    pub mu_n_contacts: Vec<usize>,
    /// DOFs whose (diagonal) mass a swept `mass` sets.
    pub mass_dofs: Vec<usize>,
    /// The swept parameters, in column order.
    pub parameters: Vec<Parameter>,
    /// Every case, in index order.
    pub cases: Vec<Case>,
    /// `[optimize]`: each case is then the peak locus over this parameter and its optimum.
    pub optimize: Option<Optimize>,
    /// `objective`: whole curves, or peaks only (always peaks with `[optimize]`).
    pub objective: Objective,
    /// Fingerprint of everything except the case values that determines the results: model
    /// file contents, frequency and solver settings, targets. Finished cases are reused only
    /// when it matches.
    pub hash: u64,
}

/// A message naming the study file and, where known, the line at fault.
fn at(path: &Path, src: &str, span: Option<std::ops::Range<usize>>, msg: String) -> String {
    match span {
        Some(s) => {
            let line = src[..s.start.min(src.len())].matches('\n').count() + 1;
            format!("{} line {line}: {msg}", path.display())
        }
        None => format!("{}: {msg}", path.display()),
    }
}

struct Ctx<'a> {
    path: &'a Path,
    src: &'a str,
}

impl Ctx<'_> {
    fn err<T>(&self, span: std::ops::Range<usize>, msg: impl Into<String>) -> Result<T, String> {
        Err(at(self.path, self.src, Some(span), msg.into()))
    }

    fn positive(&self, name: &str, v: &Spanned<f64>) -> Result<f64, String> {
        let x = *v.get_ref();
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            self.err(v.span(), format!("{name} = {x}: must be finite and > 0"))
        }
    }

    fn count(&self, name: &str, v: &Spanned<i64>, min: i64) -> Result<usize, String> {
        let x = *v.get_ref();
        if x >= min {
            Ok(x as usize)
        } else {
            self.err(
                v.span(),
                format!("{name} = {x}: must be an integer >= {min}"),
            )
        }
    }

    /// DOFs given as `"all"`, or a list of indices and labels.
    fn dofs(
        &self,
        name: &str,
        v: &Spanned<toml::Value>,
        model: &Model,
    ) -> Result<Vec<usize>, String> {
        let n = model.n_dofs();
        let items = match v.get_ref() {
            toml::Value::String(s) if s == "all" => return Ok((0..n).collect()),
            toml::Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        let mut out = Vec::new();
        for item in items {
            let d = match &item {
                toml::Value::Integer(i) if *i >= 0 && (*i as usize) < n => *i as usize,
                toml::Value::Integer(i) => {
                    return self.err(v.span(), format!("{name}: DOF {i} is out of range 0..{n}"));
                }
                toml::Value::String(s) => match model.dof_by_label(s) {
                    Some(d) => d,
                    None => {
                        return self.err(
                            v.span(),
                            format!("{name}: {s:?} is not a DOF label of the model"),
                        );
                    }
                },
                other => {
                    return self.err(
                        v.span(),
                        format!("{name}: {other} is neither a DOF index nor a label"),
                    );
                }
            };
            if !out.contains(&d) {
                out.push(d);
            }
        }
        if out.is_empty() {
            return self.err(v.span(), format!("{name}: no DOF given"));
        }
        Ok(out)
    }

    /// One value of a parameter, checked.
    fn value(
        &self,
        kind: ParamKind,
        v: &toml::Value,
        span: std::ops::Range<usize>,
    ) -> Result<Value, String> {
        let name = kind.name();
        if kind.numeric() {
            let x = match v {
                toml::Value::Float(x) => *x,
                toml::Value::Integer(i) => *i as f64,
                other => return self.err(span, format!("{name}: {other} is not a number")),
            };
            let ok = x.is_finite()
                && match kind {
                    ParamKind::MuN | ParamKind::Mu | ParamKind::NormalPreload | ParamKind::Mass => {
                        x >= 0.0
                    }
                    ParamKind::Rho => x > 0.0,
                    ParamKind::EngineOrder => x.fract() == 0.0 && x.abs() <= 1e15,
                    _ => true,
                };
            if !ok {
                let rule = match kind {
                    ParamKind::MuN | ParamKind::Mu | ParamKind::NormalPreload | ParamKind::Mass => {
                        "finite and >= 0"
                    }
                    ParamKind::Rho => "finite and > 0",
                    ParamKind::EngineOrder => "an integer",
                    _ => "finite",
                };
                return self.err(span, format!("{name} value {x}: must be {rule}"));
            }
            Ok(Value::Num(x))
        } else {
            let toml::Value::String(s) = v else {
                return self.err(span, format!("{name}: {v} is not a string"));
            };
            let canonical = match kind {
                ParamKind::Law => s
                    .parse::<FrictionLaw>()
                    .map(|l| l.to_string())
                    .map_err(|e| e.to_string()),
                _ => s
                    .parse::<HarmonicSet>()
                    .map(|h| h.to_string())
                    .map_err(|e| e.to_string()),
            };
            match canonical {
                Ok(c) => Ok(Value::Text(c)),
                Err(e) => self.err(span, format!("{name} {s:?}: {e}")),
            }
        }
    }

    /// A grid entry: a list of values, or for numbers a range table
    /// `{ start, end, count, spacing = "linear" | "log" }`.
    fn values(&self, kind: ParamKind, v: &Spanned<toml::Value>) -> Result<Vec<Value>, String> {
        let name = kind.name();
        let span = v.span();
        match v.get_ref() {
            toml::Value::Array(a) => {
                if a.is_empty() {
                    return self.err(span, format!("{name}: the list of values is empty"));
                }
                a.iter()
                    .map(|x| self.value(kind, x, span.clone()))
                    .collect()
            }
            toml::Value::Table(t) if kind.numeric() => {
                for k in t.keys() {
                    if !["start", "end", "count", "spacing"].contains(&k.as_str()) {
                        return self.err(
                            span,
                            format!(
                                "{name}: unknown key {k:?} in a range (expected start, end, \
                                 count, spacing)"
                            ),
                        );
                    }
                }
                let num = |k: &str| -> Result<f64, String> {
                    match t.get(k) {
                        Some(toml::Value::Float(x)) => Ok(*x),
                        Some(toml::Value::Integer(i)) => Ok(*i as f64),
                        Some(other) => {
                            self.err(span.clone(), format!("{name}.{k}: {other} is not a number"))
                        }
                        None => self.err(span.clone(), format!("{name}: a range needs `{k}`")),
                    }
                };
                let (a, b) = (num("start")?, num("end")?);
                let count = match t.get("count") {
                    Some(toml::Value::Integer(c)) if *c >= 1 && *c as u64 <= MAX_CASES as u64 => {
                        *c as usize
                    }
                    Some(other) => {
                        return self.err(
                            span,
                            format!(
                                "{name}.count = {other}: must be an integer from 1 to {MAX_CASES}"
                            ),
                        );
                    }
                    None => return self.err(span, format!("{name}: a range needs `count`")),
                };
                let log = match t.get("spacing") {
                    None => false,
                    Some(toml::Value::String(s)) if s == "linear" => false,
                    Some(toml::Value::String(s)) if s == "log" => true,
                    Some(other) => {
                        return self.err(
                            span,
                            format!("{name}.spacing = {other}: use \"linear\" or \"log\""),
                        );
                    }
                };
                if log && !(a > 0.0 && b > 0.0) {
                    return self.err(span, format!("{name}: a log range needs start and end > 0"));
                }
                (0..count)
                    .map(|i| {
                        let f = if count == 1 {
                            0.0
                        } else {
                            i as f64 / (count - 1) as f64
                        };
                        let x = if log {
                            a * (b / a).powf(f)
                        } else if i + 1 == count && count > 1 {
                            b
                        } else {
                            a + (b - a) * f
                        };
                        // An engine order range lands on integers up to rounding.
                        let x = if kind == ParamKind::EngineOrder
                            && (x - x.round()).abs() < 1e-9 * x.abs().max(1.0)
                        {
                            x.round()
                        } else {
                            x
                        };
                        self.value(kind, &toml::Value::Float(x), span.clone())
                    })
                    .collect()
            }
            other => {
                let what = if kind.numeric() {
                    "a list of numbers or a range table { start, end, count }"
                } else {
                    "a list of strings"
                };
                self.err(span, format!("{name} = {other}: expected {what}"))
            }
        }
    }
}

/// Why a study could not be loaded: a problem of the study file (naming its line) or an
/// unreadable model; bad input (exit 2).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct StudyError(pub String);

impl Study {
    /// Reads a study file and its model, checks every setting and value (naming the line at
    /// fault) and expands the cases; each case's model is built once to check it too.
    pub fn load(path: &Path) -> Result<Study, StudyError> {
        let src = std::fs::read_to_string(path)
            .map_err(|e| StudyError(format!("cannot read {}: {e}", path.display())))?;
        Study::from_source(path, src).map_err(StudyError)
    }

    fn from_source(path: &Path, src: String) -> Result<Study, String> {
        let raw: RawStudy = toml::from_str(&src)
            .map_err(|e| at(path, &src, e.span(), e.message().trim_end().to_string()))?;
        let cx = Ctx { path, src: &src };
        let model_name = raw.model.get_ref().clone();
        let dir = path.parent().unwrap_or(Path::new(""));
        let model_path = dir.join(&model_name);
        // A FIFO or a device would block the read below.
        if let Ok(m) = std::fs::metadata(&model_path)
            && !m.is_file()
        {
            return cx.err(
                raw.model.span(),
                format!(
                    "model {}: not a regular file (a folder, a FIFO or a device)",
                    model_path.display()
                ),
            );
        }
        let bytes = std::fs::read(&model_path).map_err(|e| {
            at(
                path,
                &src,
                Some(raw.model.span()),
                format!("model {}: {e}", model_path.display()),
            )
        })?;
        let read = ewr_model::read(&model_path).map_err(|e| {
            at(
                path,
                &src,
                Some(raw.model.span()),
                format!("model {}: {e}", model_path.display()),
            )
        })?;
        let base = read.model;
        if base.contacts.is_empty() {
            return cx.err(
                raw.model.span(),
                format!("model {}: no friction contacts", model_path.display()),
            );
        }

        // Frequency band.
        let f = &raw.frequency;
        let start = cx.positive("frequency.start", &f.start)?;
        let end = cx.positive("frequency.end", &f.end)?;
        let step = cx.positive("frequency.step", &f.step)?;
        let min_step = match &f.min_step {
            Some(v) => cx.positive("frequency.min_step", v)?,
            None => step / 64.0,
        };
        let max_step = match &f.max_step {
            Some(v) => cx.positive("frequency.max_step", v)?,
            None => step * 8.0,
        };
        if !(min_step <= step && step <= max_step) {
            return cx.err(f.step.span(), format!(
                "frequency: need min_step <= step <= max_step (got {min_step}, {step}, {max_step})"
            ));
        }
        let method = match &f.continuation {
            Some(c) => match c.get_ref().parse::<Continuation>() {
                Ok(m) => m,
                Err(e) => return cx.err(c.span(), format!("frequency.continuation: {e}")),
            },
            None => Continuation::Sequential,
        };
        let max_points = match &f.max_points {
            Some(v) => cx.count("frequency.max_points", v, 1)?,
            None => ewr_solve::MAX_POINTS,
        };
        let adaptive = match &f.adaptive {
            Some(v) => Some(cx.positive("frequency.adaptive", v)?),
            None => None,
        };
        let frequency = Frequency {
            start,
            end,
            step,
            min_step,
            max_step,
            method,
            max_points,
            adaptive,
        };

        // Solver.
        let s = &raw.solver;
        let (set, auto) = match &s.harmonics {
            Some(h) => match ewr_solve::auto::parse(h.get_ref()) {
                Some(Ok(tol)) => (ewr_solve::auto::start_set(&base), Some(tol)),
                Some(Err(e)) => return cx.err(h.span(), format!("solver.harmonics: {e}")),
                None => match h.get_ref().parse::<HarmonicSet>() {
                    Ok(set) => (set, None),
                    Err(e) => return cx.err(h.span(), format!("solver.harmonics: {e}")),
                },
            },
            None => (ewr_solve::default_set(&base), None),
        };
        let samples = match &s.samples {
            Some(v) => {
                let n = cx.count("solver.samples", v, 4)?;
                if n > ewr_hb::MAX_SAMPLES {
                    return cx.err(
                        v.span(),
                        format!(
                            "solver.samples = {n}: at most {} samples per period",
                            ewr_hb::MAX_SAMPLES
                        ),
                    );
                }
                Some(n)
            }
            None => None,
        };
        let law = match &s.law {
            Some(l) => match l.get_ref().parse::<FrictionLaw>() {
                Ok(l) => l,
                Err(e) => return cx.err(l.span(), format!("solver.law: {e}")),
            },
            None => FrictionLaw::Exact,
        };
        let mut base = base;
        if let Some(r) = &s.rho {
            if r.get_ref().as_str() == Some("auto") {
                base.contacts.rho_auto = true;
            } else {
                let x = match r.get_ref() {
                    toml::Value::Float(x) => *x,
                    toml::Value::Integer(i) => *i as f64,
                    _ => return cx.err(r.span(), "solver.rho: a number > 0 or \"auto\""),
                };
                let r = cx.positive("solver.rho", &Spanned::new(r.span(), x))?;
                base.contacts.rho.iter_mut().for_each(|v| *v = r);
                base.contacts.rho_auto = false;
            }
        }
        let tol = match &s.tol {
            Some(v) => cx.positive("solver.tol", v)?,
            None => ewr_solve::default_tolerance(&base),
        };
        let max_iter = match &s.max_iter {
            Some(v) => cx.count("solver.max_iter", v, 1)?,
            None => 200,
        };
        let kind = match &s.receptance {
            Some(k) => match k.get_ref().parse::<ReceptanceKind>() {
                Ok(k) => k,
                Err(_) => {
                    return cx.err(
                        k.span(),
                        format!(
                            "solver.receptance {:?}: use auto, dense, sparse or modal:MODES",
                            k.get_ref()
                        ),
                    );
                }
            },
            None => ReceptanceKind::Auto,
        };
        let linear = match &s.linear {
            Some(v) => match v.get_ref().parse::<LinearSolve>() {
                Ok(l) => l,
                Err(e) => return cx.err(v.span(), format!("solver.linear: {e}")),
            },
            None => LinearSolve::Auto,
        };
        let preconditioner = match &s.preconditioner {
            Some(v) => match v.get_ref().parse::<Preconditioner>() {
                Ok(p) => p,
                Err(e) => return cx.err(v.span(), format!("solver.preconditioner: {e}")),
            },
            None => Preconditioner::default(),
        };
        let monitor = match &s.dofs {
            Some(v) => cx.dofs("solver.dofs", v, &base)?,
            None => ewr_solve::setup::default_monitor(&base),
        };
        if let (Some(_), Continuation::Arclength, Some(h)) = (auto, frequency.method, &s.harmonics)
        {
            return cx.err(
                h.span(),
                "solver.harmonics = \"auto\": arclength continuation follows a fixed set of \
                 unknowns; use sequential continuation or an explicit set",
            );
        }
        let amplitude = match &s.amplitude {
            Some(a) => match a.get_ref().parse() {
                Ok(a) => a,
                Err(e) => return cx.err(a.span(), format!("solver.amplitude: {e}")),
            },
            None => ewr_solve::Amplitude::Max,
        };
        let stability = s.stability.unwrap_or(false);
        let all_phases = match &s.all_phases {
            Some(a) if *a.get_ref() && !stability => {
                return cx.err(
                    a.span(),
                    "solver.all_phases classifies the points' stability: set solver.stability = \
                     true too",
                );
            }
            Some(a) if *a.get_ref() && base.cyclic.is_none() => {
                return cx.err(
                    a.span(),
                    "solver.all_phases: the model is not a cyclic sector (its stability has no \
                     other inter-sector phases)",
                );
            }
            Some(a) => *a.get_ref(),
            None => false,
        };
        let solver = Solver {
            set,
            auto,
            samples,
            law,
            newton: NewtonOptions {
                tol_residual: tol,
                max_iterations: max_iter,
                linear,
                ..NewtonOptions::default()
            },
            ramp: s.ramp.unwrap_or(true),
            kind,
            preconditioner,
            monitor,
            amplitude,
            stability,
            all_phases,
        };

        // Targets.
        let nc = base.contacts.len();
        let mu_n_contacts = match &raw.targets.mu_n_contacts {
            Some(list) => {
                let mut out = Vec::new();
                for c in list.get_ref() {
                    let i = *c.get_ref();
                    if i < 0 || i as usize >= nc {
                        return cx.err(
                            c.span(),
                            format!("targets.mu_n_contacts: contact {i} is out of range 0..{nc}"),
                        );
                    }
                    if !out.contains(&(i as usize)) {
                        out.push(i as usize);
                    }
                }
                if out.is_empty() {
                    return cx.err(list.span(), "targets.mu_n_contacts: no contact given");
                }
                out
            }
            None => (0..nc).collect(),
        };
        let mass_dofs = match &raw.targets.mass_dofs {
            Some(v) => cx.dofs("targets.mass_dofs", v, &base)?,
            None => Vec::new(),
        };

        // Cases.
        let (parameters, cases, mass_span) =
            match (&raw.grid, &raw.cases) {
                (Some(_), Some(c)) if !c.is_empty() => {
                    return Err(at(
                        path,
                        &src,
                        None,
                        "give either [grid] or [[cases]], not both".into(),
                    ));
                }
                (Some(g), _) => {
                    let mut params = Vec::new();
                    let mut lists = Vec::new();
                    let mut mass_span = None;
                    for (kind, v) in g.entries() {
                        if let Some(v) = v {
                            if kind == ParamKind::Mass {
                                mass_span = Some(v.span());
                            }
                            params.push(Parameter { kind });
                            lists.push(cx.values(kind, v)?);
                        }
                    }
                    if params.is_empty() {
                        return Err(at(path, &src, None, "[grid] sweeps no parameter".into()));
                    }
                    // Full factorial, the first parameter varying slowest.
                    let total = lists
                        .iter()
                        .try_fold(1usize, |t, l| t.checked_mul(l.len()))
                        .filter(|&t| t <= MAX_CASES);
                    let Some(total) = total else {
                        let sizes: Vec<String> =
                            lists.iter().map(|l| l.len().to_string()).collect();
                        return Err(at(
                            path,
                            &src,
                            None,
                            format!(
                                "[grid] has {} cases, more than the {MAX_CASES} a study may \
                                 have: split it into several studies or use fewer values",
                                sizes.join(" x ")
                            ),
                        ));
                    };
                    let cases = (0..total)
                        .map(|index| {
                            let mut rem = index;
                            let mut values = vec![Value::Num(0.0); lists.len()];
                            for (p, list) in lists.iter().enumerate().rev() {
                                values[p] = list[rem % list.len()].clone();
                                rem /= list.len();
                            }
                            Case { index, values }
                        })
                        .collect();
                    (params, cases, mass_span)
                }
                (None, Some(list)) if !list.is_empty() => {
                    let kinds: Vec<ParamKind> = list[0]
                        .get_ref()
                        .entries()
                        .iter()
                        .filter(|(_, v)| v.is_some())
                        .map(|(k, _)| *k)
                        .collect();
                    let mut cases = Vec::new();
                    let mut mass_span = None;
                    for (index, c) in list.iter().enumerate() {
                        let mut values = Vec::new();
                        for (kind, v) in c.get_ref().entries() {
                            if let (false, Some(v)) = (kinds.contains(&kind), v) {
                                return cx.err(
                                    v.span(),
                                    format!(
                                        "cases[{index}] sets {} but the first case does not: every \
                                 case must set the same parameters",
                                        kind.name()
                                    ),
                                );
                            }
                        }
                        for (kind, v) in c.get_ref().entries() {
                            match (kinds.contains(&kind), v) {
                                (true, Some(v)) => {
                                    if kind == ParamKind::Mass {
                                        mass_span.get_or_insert(v.span());
                                    }
                                    values.push(cx.value(kind, v.get_ref(), v.span())?);
                                }
                                (true, None) => {
                                    return cx.err(c.span(), format!(
                                    "cases[{index}] does not set {}: every case must set the \
                                     same parameters",
                                    kind.name()
                                ));
                                }
                                _ => {}
                            }
                        }
                        cases.push(Case { index, values });
                    }
                    let params = kinds.into_iter().map(|kind| Parameter { kind }).collect();
                    (params, cases, mass_span)
                }
                _ => (
                    Vec::new(),
                    vec![Case {
                        index: 0,
                        values: Vec::new(),
                    }],
                    None,
                ),
            };
        if base.cyclic.is_none()
            && let Some(p) = parameters.iter().find(|p| p.kind == ParamKind::EngineOrder)
        {
            return Err(at(
                cx.path,
                cx.src,
                None,
                format!(
                    "{}: the model is not a cyclic sector (no /cyclic group); an engine order \
                     applies to one sector of a tuned disk",
                    p.kind.name()
                ),
            ));
        }
        if let Some(span) = &mass_span
            && mass_dofs.is_empty()
        {
            return cx.err(
                span.clone(),
                "mass is swept: say which DOFs in [targets] mass_dofs",
            );
        }

        let optimize = match &raw.optimize {
            None => None,
            Some(o) => {
                let span = o.span();
                let o = o.get_ref();
                let name = o.parameter.get_ref();
                let kind = match ParamKind::from_name(name) {
                    Some(k)
                        if k.numeric() && !matches!(k, ParamKind::Rho | ParamKind::EngineOrder) =>
                    {
                        k
                    }
                    _ => {
                        return cx.err(
                            o.parameter.span(),
                            format!(
                                "optimize.parameter {name:?}: use mu_n, mu, normal_preload, \
                                 forcing_scale or mass"
                            ),
                        );
                    }
                };
                if parameters.iter().any(|p| p.kind == kind) {
                    return cx.err(
                        o.parameter.span(),
                        format!(
                            "optimize.parameter {name:?} is also swept in [grid] or [[cases]]: \
                             the optimisation chooses its values"
                        ),
                    );
                }
                let from = cx.value(kind, &toml::Value::Float(*o.from.get_ref()), o.from.span())?;
                let to = cx.value(kind, &toml::Value::Float(*o.to.get_ref()), o.to.span())?;
                let count = match &o.count {
                    Some(c) => cx.count("optimize.count", c, 1)?,
                    None => 11,
                };
                if count > 1000 {
                    return cx.err(
                        o.count.as_ref().map_or(span.clone(), |c| c.span()),
                        format!("optimize.count = {count}: at most 1000 values"),
                    );
                }
                if kind == ParamKind::Mass && mass_dofs.is_empty() {
                    return cx.err(
                        o.parameter.span(),
                        "mass is optimised: say which DOFs in [targets] mass_dofs",
                    );
                }
                if frequency.method != Continuation::Sequential {
                    return cx.err(
                        span,
                        "[optimize] sweeps sequentially (the coarse sweeps at the ends of the \
                         range); remove frequency.continuation = \"arclength\"",
                    );
                }
                Some(Optimize {
                    kind,
                    from: from.num(),
                    to: to.num(),
                    count,
                })
            }
        };

        let objective = match &raw.objective {
            None => Objective::Curve,
            Some(o) => match o.get_ref().as_str() {
                "curve" => Objective::Curve,
                "peak" => Objective::Peak,
                other => {
                    return cx.err(
                        o.span(),
                        format!("objective {other:?}: use \"curve\" or \"peak\""),
                    );
                }
            },
        };
        let objective = match (&optimize, objective, &raw.objective) {
            (Some(_), Objective::Curve, Some(o)) => {
                return cx.err(
                    o.span(),
                    "objective = \"curve\" with [optimize]: an optimisation tracks peaks, \
                     not curves",
                );
            }
            (Some(_), _, _) => Objective::Peak,
            (None, o, _) => o,
        };
        if objective == Objective::Peak && frequency.method != Continuation::Sequential {
            return cx.err(
                raw.frequency.step.span(),
                "objective = \"peak\" sweeps sequentially (peaks are refined in frequency); \
                 remove frequency.continuation = \"arclength\"",
            );
        }

        let mut h = Fnv::new();
        // "refined peaks": case files from before peaks were refined are not reused.
        h.add(format!("ewr-study {STUDY_FORMAT_VERSION} refined peaks").as_bytes());
        h.add(&bytes);
        // Settings added later enter the fingerprint only when used, so that the finished
        // cases of a study written before them are still reused.
        h.add(
            format!("{frequency:?}")
                .replace(", adaptive: None", "")
                .as_bytes(),
        );
        // `auto` enters only when used, so that studies written before it keep their cases.
        // So does an amplitude measure other than the default.
        h.add(
            format!("{solver:?}")
                .replace(", auto: None", "")
                .replace(", amplitude: Max", "")
                .replace(", stability: false", "")
                .replace(", all_phases: false", "")
                .as_bytes(),
        );
        // Cases of 3-D contacts computed before stuck contacts were held along a sweep by
        // an active set where they re-stuck (located to a 256th of the step), and moved where
        // their slip leaves them (docs/stuck-contacts.md, version 5), are not reused.
        if base.contacts.has_normal() {
            h.add(b"stuck contacts held 5");
        }
        // Since re-sticks are searched only where at least a tenth of the contacts re-stick
        // (`RESTICK_MIN_SHARE`), models of more than 10 contacts are swept another way.
        if base.contacts.len() > 10 {
            h.add(b"re-stick searched from a tenth of the contacts");
        }
        // Constant-bound contacts have been held too where a set has h = 0 (version 3: moved
        // where their slip leaves them; 4: re-sticks located to a 256th of the step).
        let swept_harmonics = format!("{parameters:?}").contains("harmonics");
        if !base.contacts.has_normal()
            && (solver.set.coeff_index(0).is_some() || solver.auto.is_some() || swept_harmonics)
        {
            h.add(b"constant-bound stuck contacts held 4");
        }
        h.add(
            format!(
                "{:?} {:?} {:?}",
                base.contacts.rho, mu_n_contacts, mass_dofs
            )
            .as_bytes(),
        );
        h.add(format!("{parameters:?}").as_bytes());
        if let Some(o) = &optimize {
            h.add(format!("{o:?}").as_bytes());
        }
        if objective == Objective::Peak {
            h.add(b"objective peak");
        }
        let study = Study {
            path: path.to_path_buf(),
            title: raw.title,
            model_name,
            model_path,
            base,
            frequency,
            solver,
            mu_n_contacts,
            mass_dofs,
            parameters,
            cases,
            optimize,
            objective,
            hash: h.finish(),
            source: src.clone(),
        };
        // Build every case's setup now: a bad combination is input, found before any work.
        let ends: Vec<Option<(ParamKind, f64)>> = match &study.optimize {
            None => vec![None],
            Some(o) => vec![Some((o.kind, o.from)), Some((o.kind, o.to))],
        };
        for (c, extra) in study
            .cases
            .iter()
            .flat_map(|c| ends.iter().map(move |e| (c, e)))
        {
            study.case_setup_with(c, *extra).map_err(|e| {
                at(
                    path,
                    &src,
                    mass_span.clone(),
                    format!("case {} ({}): {e}", c.index, study.key(c)),
                )
            })?;
        }
        Ok(study)
    }

    /// Parses a study from text, as if read from `path` (for tests and tools).
    pub fn from_str_at(path: &Path, src: &str) -> Result<Study, StudyError> {
        Study::from_source(path, src.to_string()).map_err(StudyError)
    }

    /// Whether the cases classify their points against every inter-sector phase of a cyclic
    /// sector (`stability` and `all_phases`): the diameters that reaches are condensed with
    /// the structure.
    pub fn all_phase_stability(&self) -> bool {
        self.solver.stability && self.solver.all_phases
    }

    /// What of a case changes the receptance: its structural values (mass, forcing scale,
    /// normal preload) as `name=value` pairs; cases with equal keys share one condensation.
    pub fn structure_key(&self, case: &Case) -> String {
        self.parameters
            .iter()
            .zip(&case.values)
            .filter(|(p, _)| p.kind.structural())
            .map(|(p, v)| format!("{}={v}", p.name()))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// What of a case changes the structure's dynamics (mass, engine order), as
    /// [`structure_key`](Self::structure_key) without the values that move its loads alone:
    /// cases with equal keys share the modes, each with its own forcing.
    pub fn dynamics_key(&self, case: &Case) -> String {
        self.parameters
            .iter()
            .zip(&case.values)
            .filter(|(p, _)| p.kind.structural() && !p.kind.loads_only())
            .map(|(p, v)| format!("{}={v}", p.name()))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The identity of a case: its parameter values as `name=value` pairs.
    pub fn key(&self, case: &Case) -> String {
        if self.parameters.is_empty() {
            return "base".into();
        }
        self.parameters
            .iter()
            .zip(&case.values)
            .map(|(p, v)| format!("{}={v}", p.name()))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
    }

    fn load(src: &str) -> Result<Study, String> {
        Study::from_str_at(&model_dir().join("test.toml"), src).map_err(|e| e.0)
    }

    const HEAD: &str =
        "model = \"oscillator-2d.h5\"\n[frequency]\nstart = 0.5\nend = 1.5\nstep = 0.1\n";

    #[test]
    fn grid_expands_first_parameter_slowest() {
        let s = load(&format!(
            "{HEAD}[grid]\nmu_n = [1, 2]\nforcing_scale = {{ start = 0.5, end = 1.5, count = 3 }}\n"
        ))
        .unwrap();
        assert_eq!(s.cases.len(), 6);
        assert_eq!(s.key(&s.cases[0]), "mu_n=1,forcing_scale=0.5");
        assert_eq!(s.key(&s.cases[1]), "mu_n=1,forcing_scale=1");
        assert_eq!(s.key(&s.cases[5]), "mu_n=2,forcing_scale=1.5");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_their_line() {
        let e = load(&format!("{HEAD}[grid]\nmu_n = [1, 2]\nmuu = [3]\n")).unwrap_err();
        assert!(e.contains("line 8") && e.contains("muu"), "{e}");
        let e = load(&format!("{HEAD}[grid]\nmu_n = [1, -2]\n")).unwrap_err();
        assert!(e.contains("line 7") && e.contains("-2"), "{e}");
        let e = load(&format!("{HEAD}[grid]\nlaw = [\"exact\", \"tanh:x\"]\n")).unwrap_err();
        assert!(e.contains("line 7"), "{e}");
        let e = load(&format!("{HEAD}[grid]\nmass = [0.5]\n")).unwrap_err();
        assert!(e.contains("line 7") && e.contains("mass_dofs"), "{e}");
        let e = load(&HEAD.replace("step = 0.1", "step = -0.1")).unwrap_err();
        assert!(e.contains("line 5"), "{e}");
        let e = load(&format!("{HEAD}[targets]\nmass_dofs = [\"u9\"]\n")).unwrap_err();
        assert!(e.contains("line 7") && e.contains("u9"), "{e}");
        let e = load(&format!("{HEAD}[solver]\nharmonics = \"even:3\"\n")).unwrap_err();
        assert!(e.contains("line 7"), "{e}");
        let e = load(&format!("{HEAD}[solver]\nlinear = \"gauss\"\n")).unwrap_err();
        assert!(e.contains("line 7") && e.contains("solver.linear"), "{e}");
        let e = load(&format!("{HEAD}[solver]\npreconditioner = \"ilu\"\n")).unwrap_err();
        assert!(e.contains("line 7") && e.contains("ilu"), "{e}");
    }

    #[test]
    fn linear_algebra_settings_reach_the_solver() {
        let s = load(&format!(
            "{HEAD}[solver]\nlinear = \"matrix-free\"\npreconditioner = \"contact\"\n[grid]\nmu_n = [1]\n"
        ))
        .unwrap();
        assert_eq!(s.solver.newton.linear, LinearSolve::MatrixFree);
        assert_eq!(s.solver.preconditioner, Preconditioner::Contact);
        let d = load(&format!("{HEAD}[grid]\nmu_n = [1]\n")).unwrap();
        assert_eq!(d.solver.newton.linear, LinearSolve::Auto);
        assert_eq!(d.solver.preconditioner, Preconditioner::TwoLevel);
    }

    #[test]
    fn solver_rho_is_a_number_or_auto() {
        let grid = "[grid]\nmu_n = [1]\n";
        let s = load(&format!("{HEAD}[solver]\nrho = \"auto\"\n{grid}")).unwrap();
        assert!(s.base.contacts.rho_auto);
        let s = load(&format!("{HEAD}[solver]\nrho = 3\n{grid}")).unwrap();
        assert!(!s.base.contacts.rho_auto);
        assert!(s.base.contacts.rho.iter().all(|&r| r == 3.0));
        for bad in ["\"fast\"", "0", "-1.5"] {
            let e = load(&format!("{HEAD}[solver]\nrho = {bad}\n{grid}")).unwrap_err();
            assert!(
                e.contains("line 7") && e.contains("solver.rho"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn explicit_cases_must_agree_on_parameters() {
        let s = load(&format!(
            "{HEAD}[[cases]]\nmu_n = 1\nrho = 2\n[[cases]]\nmu_n = 3\nrho = 0.5\n"
        ))
        .unwrap();
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.key(&s.cases[1]), "mu_n=3,rho=0.5");
        let e = load(&format!("{HEAD}[[cases]]\nmu_n = 1\n[[cases]]\nrho = 3\n")).unwrap_err();
        assert!(e.contains("line 9"), "{e}");
    }

    #[test]
    fn hash_ignores_comments_but_not_settings() {
        let a = load(&format!("{HEAD}[grid]\nmu_n = [1]\n")).unwrap();
        let b = load(&format!("# comment\n{HEAD}[grid]\nmu_n = [1, 2]\n")).unwrap();
        let c = load(&format!("{HEAD}[solver]\ntol = 1e-9\n[grid]\nmu_n = [1]\n")).unwrap();
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
    }

    #[test]
    fn shipped_studies_load() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let s = Study::load(&root.join("models/damper-study.toml")).unwrap();
        assert_eq!(s.cases.len(), 30);
        assert_eq!(s.mass_dofs, [2, 3]);
        let b = Study::load(&root.join("benches/study-100.toml")).unwrap();
        assert_eq!(b.cases.len(), 100);
        let span = b.frequency.end - b.frequency.start;
        assert_eq!((span / b.frequency.step).round() as usize + 1, 300);
    }
}
