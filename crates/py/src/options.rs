//! The keyword options of `solve`, `frc` and `peaks`, handed to the run layer
//! (`ewr_solve::setup`), which checks and resolves them as it does `ewr`'s command-line
//! options; only the spelling of the messages differs (`harmonics=` for `--harmonics`).

use crate::InputError;
use ewr_model::Model;
use ewr_solve::Setup;
use ewr_solve::setup::{DofRef, OptionError, SetupError, SolveOptions, Spelling};
use pyo3::prelude::*;

/// `rho` as Python gives it: a number, or `"auto"`.
#[derive(FromPyObject)]
pub enum Rho {
    /// A number > 0 for every contact.
    Value(f64),
    /// `"auto"` (anything else is refused by the run layer).
    Text(String),
}

impl Rho {
    fn spelled(&self) -> String {
        match self {
            Rho::Value(x) => x.to_string(),
            Rho::Text(s) => s.clone(),
        }
    }
}

/// How a periodic solution is computed, as given in Python.
pub struct PyOptions<'py> {
    pub harmonics: String,
    pub samples: Option<usize>,
    pub mu_n: Option<f64>,
    pub rho: Option<Rho>,
    pub law: String,
    pub receptance: String,
    pub linear: String,
    pub preconditioner: String,
    /// Amplitude measure (`max`, `dynamic`, `h1`, `pp`).
    pub amplitude: String,
    /// Engine order of a cyclic sector, overriding the model's.
    pub engine_order: Option<i64>,
    /// `None`: the model's default (`ewr_solve::default_tolerance`).
    pub tol: Option<f64>,
    pub max_iter: usize,
    pub ramp: bool,
    pub dofs: Option<Vec<Bound<'py, PyAny>>>,
}

/// An option error as a Python `InputError`, named by its keyword.
pub fn option_error(e: OptionError) -> PyErr {
    InputError::new_err(e.render(Spelling::Python))
}

/// DOFs given by index or by label.
pub fn dof_refs(items: &[Bound<'_, PyAny>], what: &str) -> PyResult<Vec<DofRef>> {
    items
        .iter()
        .map(|item| {
            if let Ok(i) = item.extract::<i64>() {
                return Ok(DofRef::Index(i));
            }
            item.extract::<String>()
                .map(DofRef::Label)
                .map_err(|_| InputError::new_err(format!("{what}: a DOF is an index or a label")))
        })
        .collect()
}

impl PyOptions<'_> {
    /// The options for the run layer, with the friction bound `mu_n` of one curve.
    pub fn solve_options(&self, mu_n: Option<f64>) -> PyResult<SolveOptions> {
        Ok(SolveOptions {
            harmonics: self.harmonics.clone(),
            samples: self.samples,
            mu_n,
            rho: self.rho.as_ref().map(Rho::spelled),
            law: self.law.clone(),
            receptance: self.receptance.clone(),
            tol: self.tol,
            linear: self.linear.clone(),
            preconditioner: self.preconditioner.clone(),
            max_iter: self.max_iter,
            ramp: self.ramp,
            dofs: match &self.dofs {
                Some(items) => Some(dof_refs(items, "dofs")?),
                None => None,
            },
            amplitude: self.amplitude.clone(),
            engine_order: self.engine_order,
        })
    }

    /// Applies and checks every option against `model`, for a curve with bound `mu_n`.
    pub fn resolve(&self, model: &Model, mu_n: Option<f64>) -> PyResult<Setup> {
        ewr_solve::setup::resolve(model.clone(), &self.solve_options(mu_n)?).map_err(|e| match e {
            SetupError::NoContacts => InputError::new_err(e.to_string()),
            e => InputError::new_err(e.render(Spelling::Python)),
        })
    }
}
