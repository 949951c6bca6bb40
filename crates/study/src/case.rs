//! Cases of a study: parameter values and the model and settings they give.

use crate::spec::{Objective, Study};
use ewr_contact::FrictionLaw;
use ewr_hb::receptance::ReceptanceKind;
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_solve::{FrcSettings, PointSettings};

/// The parameters a study can sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Friction bound `mu N` of the target contacts (`[targets] mu_n_contacts`, default all).
    MuN,
    /// Friction coefficient `mu` of the target 3-D contacts (same targets as `mu_n`).
    Mu,
    /// Factor on the static preload of 3-D contacts: every harmonic-0 load and every initial
    /// interference (negative gap) together.
    NormalPreload,
    /// Factor on every forcing amplitude.
    ForcingScale,
    /// Diagonal mass of the target DOFs (`[targets] mass_dofs`), e.g. the damper mass.
    Mass,
    /// `rho` of every contact.
    Rho,
    /// Friction law (`exact`, `tanh:50`, ...).
    Law,
    /// Harmonic set (`odd:59`, `all:20`).
    Harmonics,
}

impl ParamKind {
    /// Name in the study file and result columns.
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::MuN => "mu_n",
            ParamKind::Mu => "mu",
            ParamKind::NormalPreload => "normal_preload",
            ParamKind::ForcingScale => "forcing_scale",
            ParamKind::Mass => "mass",
            ParamKind::Rho => "rho",
            ParamKind::Law => "law",
            ParamKind::Harmonics => "harmonics",
        }
    }

    /// The parameter of a result column name.
    pub fn from_name(s: &str) -> Option<ParamKind> {
        [
            ParamKind::MuN,
            ParamKind::Mu,
            ParamKind::NormalPreload,
            ParamKind::ForcingScale,
            ParamKind::Mass,
            ParamKind::Rho,
            ParamKind::Law,
            ParamKind::Harmonics,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }

    /// True for numeric parameters.
    pub fn numeric(self) -> bool {
        !matches!(self, ParamKind::Law | ParamKind::Harmonics)
    }

    /// Whether a value changes the structure or its loads, so that the receptance must be
    /// built again; friction, `rho`, the law and the harmonic set enter the contact
    /// equations only.
    pub fn structural(self) -> bool {
        matches!(
            self,
            ParamKind::ForcingScale | ParamKind::Mass | ParamKind::NormalPreload
        )
    }

    /// Sets the numeric parameter to `x` in `model`: on `contacts` (friction) or `dofs`
    /// (mass). Fails where it does not apply (`mu_n` on 3-D contacts, `mu` on constant
    /// bounds) or gives an invalid mass.
    pub fn apply(
        self,
        model: &mut Model,
        x: f64,
        contacts: &[usize],
        dofs: &[usize],
    ) -> Result<(), String> {
        let normal = model.contacts.has_normal();
        match self {
            ParamKind::MuN if normal => {
                return Err(
                    "mu_n: the model's contacts are 3-D (normal direction), whose \
                            bound is mu times the normal force: vary mu or normal_preload"
                        .into(),
                );
            }
            ParamKind::Mu | ParamKind::NormalPreload if !normal => {
                return Err(format!(
                    "{}: only for models with 3-D contacts (normal direction); vary mu_n",
                    self.name()
                ));
            }
            ParamKind::MuN => contacts.iter().for_each(|&c| model.contacts.mu_n[c] = x),
            ParamKind::Mu => {
                if let Some(n) = model.contacts.normal.as_mut() {
                    contacts.iter().for_each(|&c| n.mu[c] = x);
                }
            }
            // The static state scales with every static load and interference together.
            ParamKind::NormalPreload => {
                model
                    .forcing
                    .iter_mut()
                    .filter(|f| f.harmonic == 0)
                    .for_each(|f| f.cos *= x);
                if let Some(n) = model.contacts.normal.as_mut() {
                    n.g0.iter_mut().filter(|g| **g < 0.0).for_each(|g| *g *= x);
                    // Fixed normal loads too (NaN, a unilateral contact, stays NaN).
                    if let Some(l) = n.load.as_mut() {
                        l.iter_mut().for_each(|v| *v *= x);
                    }
                }
            }
            // The excitation only: a static load (preload) is not part of it.
            ParamKind::ForcingScale => {
                for f in model.forcing.iter_mut().filter(|f| f.harmonic > 0) {
                    f.cos *= x;
                    f.sin *= x;
                }
            }
            ParamKind::Mass => model.set_mass(dofs, x)?,
            ParamKind::Rho => model.contacts.rho.iter_mut().for_each(|r| *r = x),
            ParamKind::Law | ParamKind::Harmonics => {
                return Err(format!("{}: not a number", self.name()));
            }
        }
        Ok(())
    }
}

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number.
    Num(f64),
    /// A law or harmonic set, in canonical spelling.
    Text(String),
}

impl Value {
    /// The number, or NaN for text.
    pub fn num(&self) -> f64 {
        match self {
            Value::Num(x) => *x,
            Value::Text(_) => f64::NAN,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Num(x) => write!(f, "{x}"),
            Value::Text(s) => f.write_str(s),
        }
    }
}

/// One case: its index in the study and one value per swept parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Position in the study (grid order: first parameter slowest).
    pub index: usize,
    /// Values in the order of [`Study::parameters`].
    pub values: Vec<Value>,
}

/// Everything one case's frequency sweep needs.
#[derive(Clone, Debug)]
pub struct CaseSetup {
    /// The model with the case's values applied.
    pub model: Model,
    /// Sweep settings, including how each point is solved.
    pub settings: FrcSettings,
    /// Condensation backend.
    pub kind: ReceptanceKind,
}

impl Study {
    /// The model and settings of one case; fails on a combination that cannot be solved
    /// (e.g. a harmonic set that misses the forcing, too few samples, an invalid mass matrix).
    pub fn case_setup(&self, case: &Case) -> Result<CaseSetup, String> {
        self.case_setup_with(case, None)
    }

    /// [`Study::case_setup`] with one more parameter set to a value: the optimised one of an
    /// `[optimize]` study.
    pub fn case_setup_with(
        &self,
        case: &Case,
        extra: Option<(ParamKind, f64)>,
    ) -> Result<CaseSetup, String> {
        let mut model = self.base.clone();
        let mut set = self.solver.set.clone();
        let mut law = self.solver.law;
        let values = self
            .parameters
            .iter()
            .map(|p| p.kind)
            .zip(case.values.iter().cloned())
            .chain(extra.map(|(k, x)| (k, Value::Num(x))));
        let mut mass = false;
        for (kind, v) in values {
            mass |= kind == ParamKind::Mass;
            match (kind, &v) {
                (ParamKind::Law, Value::Text(s)) => {
                    law = s.parse::<FrictionLaw>().map_err(|e| e.to_string())?;
                }
                (ParamKind::Harmonics, Value::Text(s)) => {
                    set = s.parse::<HarmonicSet>().map_err(|e| e.to_string())?;
                }
                (k, Value::Num(x)) if k.numeric() => {
                    k.apply(&mut model, *x, &self.mu_n_contacts, &self.mass_dofs)?;
                }
                (k, v) => return Err(format!("{}: invalid value {v}", k.name())),
            }
        }
        if mass {
            let problems = ewr_model::validate(&model);
            if ewr_model::has_errors(&problems) {
                let msgs: Vec<String> = problems
                    .iter()
                    .filter(|p| p.severity == ewr_model::Severity::Error)
                    .map(|p| p.to_string())
                    .collect();
                return Err(format!("invalid model: {}", msgs.join("; ")));
            }
        }
        if model.forcing.iter().all(|f| !set.contains(f.harmonic)) {
            return Err(format!("no forcing harmonic is in {set}"));
        }
        if let Some(why) = ewr_solve::harmonic_set_problem(&model, &set) {
            return Err(format!("harmonics {set}: {why}"));
        }
        let n_samples = self.solver.samples.unwrap_or_else(|| default_samples(&set));
        if let Some(why) = ewr_solve::samples_problem(&set, n_samples) {
            return Err(format!("{n_samples} samples per period for {set}: {why}"));
        }
        let f = &self.frequency;
        let settings = FrcSettings {
            omega_start: f.start,
            omega_end: f.end,
            step: f.step,
            min_step: f.min_step,
            max_step: f.max_step,
            method: f.method,
            point: PointSettings {
                set,
                n_samples,
                law,
                newton: self.solver.newton.clone(),
                ramp: self.solver.ramp,
                monitor: self.solver.monitor.clone(),
                retry_rho: true,
                preconditioner: self.solver.preconditioner,
            },
            max_points: f.max_points,
            // Peaks are refined in frequency anyway: a coarse sweep only has to bracket them,
            // which adaptive steps do without missing a sharp one.
            adaptive: match self.objective {
                Objective::Peak => f
                    .adaptive
                    .or(Some(ewr_solve::step_control::DEFAULT_TOLERANCE)),
                Objective::Curve => f.adaptive,
            },
            keep_histories: false,
        };
        Ok(CaseSetup {
            model,
            settings,
            kind: self.solver.kind,
        })
    }
}
