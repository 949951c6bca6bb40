//! The keyword options of `solve` and `frc`, checked and resolved as `ewr solve` resolves
//! its command-line options (same rules, same messages with the keyword's name).

use crate::InputError;
use ewr_hb::receptance::ReceptanceKind;
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_solve::{NewtonOptions, PointSettings};
use pyo3::prelude::*;

/// How a periodic solution is computed, as given in Python.
pub struct SolveOptions<'py> {
    pub harmonics: String,
    pub samples: Option<usize>,
    pub mu_n: Option<f64>,
    pub rho: Option<f64>,
    pub law: String,
    pub receptance: String,
    pub linear: String,
    /// `None`: the model's default (`ewr_solve::default_tolerance`).
    pub tol: Option<f64>,
    pub max_iter: usize,
    pub ramp: bool,
    pub dofs: Option<Vec<Bound<'py, PyAny>>>,
}

/// The model with the overrides applied, the point settings and the condensation backend.
pub struct Resolved {
    pub model: Model,
    pub point: PointSettings,
    pub kind: ReceptanceKind,
}

fn positive(name: &str, x: f64) -> PyResult<f64> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(InputError::new_err(format!(
            "{name}={x}: must be finite and > 0"
        )))
    }
}

/// Checks a frequency, step or tolerance given by the caller.
pub fn finite_positive(name: &str, x: f64) -> PyResult<f64> {
    positive(name, x)
}

fn receptance_kind(s: &str) -> PyResult<ReceptanceKind> {
    match s {
        "auto" => Ok(ReceptanceKind::Auto),
        "dense" => Ok(ReceptanceKind::Dense),
        "sparse" => Ok(ReceptanceKind::Sparse),
        _ => match s.strip_prefix("modal:").map(str::parse::<usize>) {
            Some(Ok(modes)) if modes > 0 => Ok(ReceptanceKind::Modal { modes }),
            _ => Err(InputError::new_err(format!(
                "receptance={s:?}: use auto, dense, sparse or modal:MODES (MODES > 0)"
            ))),
        },
    }
}

/// DOFs given by index or by label.
pub fn dof_list(model: &Model, items: &[Bound<'_, PyAny>], what: &str) -> PyResult<Vec<usize>> {
    let n = model.n_dofs();
    items
        .iter()
        .map(|item| {
            if let Ok(i) = item.extract::<i64>() {
                if i < 0 || i as usize >= n {
                    return Err(InputError::new_err(format!(
                        "{what}: DOF {i} is out of range 0..{n}"
                    )));
                }
                return Ok(i as usize);
            }
            let label: String = item.extract().map_err(|_| {
                InputError::new_err(format!("{what}: a DOF is an index or a label"))
            })?;
            model
                .dof_by_label(&label)
                .ok_or_else(|| InputError::new_err(format!("{what}: no DOF is labelled {label:?}")))
        })
        .collect()
}

/// Applies and checks every option against `model`.
pub fn resolve(model: &Model, o: &SolveOptions<'_>) -> PyResult<Resolved> {
    let mut model = model.clone();
    if model.contacts.is_empty() {
        return Err(InputError::new_err(
            "the model has no friction contacts: nothing for E-WR to solve",
        ));
    }
    if let Some(x) = o.mu_n {
        model
            .contacts
            .set_mu_n(x)
            .map_err(|e| InputError::new_err(format!("mu_n={x}: {e}")))?;
    }
    if let Some(r) = o.rho {
        positive("rho", r)?;
        model.contacts.rho.iter_mut().for_each(|m| *m = r);
    }
    let set: HarmonicSet = o
        .harmonics
        .parse()
        .map_err(|e| InputError::new_err(format!("harmonics={:?}: {e}", o.harmonics)))?;
    let law = o
        .law
        .parse()
        .map_err(|e| InputError::new_err(format!("law={:?}: {e}", o.law)))?;
    let n_samples = o.samples.unwrap_or_else(|| default_samples(&set));
    if let Some(why) = ewr_solve::samples_problem(&set, n_samples) {
        return Err(InputError::new_err(format!("samples={n_samples}: {why}")));
    }
    if let Some(why) = ewr_solve::harmonic_set_problem(&model, &set) {
        return Err(InputError::new_err(format!(
            "harmonics={:?}: {why}",
            o.harmonics
        )));
    }
    let tol = positive(
        "tol",
        o.tol
            .unwrap_or_else(|| ewr_solve::default_tolerance(&model)),
    )?;
    let monitor = match &o.dofs {
        Some(items) => dof_list(&model, items, "dofs")?,
        None => default_monitor(&model),
    };
    let point = PointSettings {
        set,
        n_samples,
        law,
        newton: NewtonOptions {
            tol_residual: tol,
            max_iterations: o.max_iter,
            linear: o
                .linear
                .parse()
                .map_err(|e| InputError::new_err(format!("linear={:?}: {e}", o.linear)))?,
            ..NewtonOptions::default()
        },
        ramp: o.ramp,
        monitor,
        retry_rho: true,
        preconditioner: Default::default(),
    };
    Ok(Resolved {
        kind: receptance_kind(&o.receptance)?,
        model,
        point,
    })
}

/// The DOFs reported by default, as `ewr solve`: all of a model up to 16 DOFs, else the
/// forced ones.
pub fn default_monitor(model: &Model) -> Vec<usize> {
    if model.n_dofs() <= 16 {
        return (0..model.n_dofs()).collect();
    }
    let mut d: Vec<usize> = model.forcing.iter().map(|f| f.dof).collect();
    d.sort_unstable();
    d.dedup();
    d
}
