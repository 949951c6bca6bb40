//! What a study varies: the parameters ([`ParamKind`]), their values, the cases (one value
//! per swept parameter) and how a numeric value is applied to a model.

use ewr_model::Model;

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
    /// Engine order of a cyclic sector model's excitation (an integer): the interference
    /// diagram of a bladed disk from one sector model.
    EngineOrder,
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
            ParamKind::EngineOrder => "engine_order",
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
            ParamKind::EngineOrder,
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
            ParamKind::ForcingScale
                | ParamKind::Mass
                | ParamKind::NormalPreload
                | ParamKind::EngineOrder
        )
    }

    /// Whether a value changes the structure's loads alone (the harmonic forces, the static
    /// ones and the contacts' preloads), not its dynamics: the receptance of another value
    /// keeps the modes ([`Receptance::with_forcing`](ewr_hb::Receptance::with_forcing)).
    pub fn loads_only(self) -> bool {
        matches!(self, ParamKind::ForcingScale | ParamKind::NormalPreload)
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
            ParamKind::EngineOrder => set_engine_order(model, x)?,
            ParamKind::Law | ParamKind::Harmonics => {
                return Err(format!("{}: not a number", self.name()));
            }
        }
        Ok(())
    }
}

/// Sets the engine order of `model`, a cyclic sector, to the integer `x`.
pub fn set_engine_order(model: &mut Model, x: f64) -> Result<(), String> {
    if x.fract() != 0.0 || x.abs() > 1e15 {
        return Err(format!("engine_order {x}: must be an integer"));
    }
    model
        .set_engine_order(x as i64)
        .map_err(|e| format!("engine_order: {e}"))
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

/// `count` values evenly spaced from `from` to `to` (just `from` when `count` is 1).
pub fn values(from: f64, to: f64, count: usize) -> Vec<f64> {
    (0..count)
        .map(|i| {
            if count == 1 {
                from
            } else {
                from + (to - from) * i as f64 / (count - 1) as f64
            }
        })
        .collect()
}
