//! Cases of a study: parameter values and the model and settings they give.

use crate::spec::Study;
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
        let mut model = self.base.clone();
        let mut set = self.solver.set.clone();
        let mut law = self.solver.law;
        for (p, v) in self.parameters.iter().zip(&case.values) {
            match (p.kind, v) {
                (ParamKind::MuN, Value::Num(_)) if model.contacts.has_normal() => {
                    return Err(
                        "mu_n: the model's contacts are 3-D (normal direction), whose bound is \
                         mu times the normal force; a study of mu or of the preload is not \
                         available yet (use ewr peaks --param mu|normal-preload)"
                            .into(),
                    );
                }
                (ParamKind::MuN, Value::Num(x)) => {
                    for &c in &self.mu_n_contacts {
                        model.contacts.mu_n[c] = *x;
                    }
                }
                (ParamKind::ForcingScale, Value::Num(x)) => {
                    // The excitation only: a static load (preload) is not part of it.
                    for f in model.forcing.iter_mut().filter(|f| f.harmonic > 0) {
                        f.cos *= x;
                        f.sin *= x;
                    }
                }
                (ParamKind::Mass, Value::Num(x)) => {
                    model.set_mass(&self.mass_dofs, *x)?;
                }
                (ParamKind::Rho, Value::Num(x)) => {
                    model.contacts.rho.iter_mut().for_each(|r| *r = *x);
                }
                (ParamKind::Law, Value::Text(s)) => {
                    law = s.parse::<FrictionLaw>().map_err(|e| e.to_string())?;
                }
                (ParamKind::Harmonics, Value::Text(s)) => {
                    set = s.parse::<HarmonicSet>().map_err(|e| e.to_string())?;
                }
                (k, v) => return Err(format!("{}: invalid value {v}", k.name())),
            }
        }
        if self.parameters.iter().any(|p| p.kind == ParamKind::Mass) {
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
        let n_samples = self.solver.samples.unwrap_or_else(|| default_samples(&set));
        if n_samples <= 2 * set.h_max() {
            return Err(format!(
                "{n_samples} samples per period must exceed 2 x the highest harmonic of {set}"
            ));
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
            adaptive: f.adaptive,
        };
        Ok(CaseSetup {
            model,
            settings,
            kind: self.solver.kind,
        })
    }
}
