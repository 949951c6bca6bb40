//! `simulate`'s options as a user gives them (the `ewr simulate` flags, Python's keywords),
//! checked and applied to a model with messages that name the option, so that both front ends
//! refuse the same input with the same words (a keyword `static_factor` is the flag
//! `--static-factor`).

use crate::{Hysteretic, LinearSolver, Options, with_jenkins};
use ewr_model::Model;

/// The run as given.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Forcing circular frequency.
    pub omega: f64,
    /// Time step (default: period / 65536).
    pub dt: Option<f64>,
    /// Most periods before giving up on the steady state.
    pub periods: usize,
    /// Steady-state tolerance.
    pub tol: f64,
    /// Friction bound of every contact, overriding the model's.
    pub mu_n: Option<f64>,
    /// Static bound factor `F >= 1`.
    pub static_factor: f64,
    /// Tangential stiffness in series with every contact (Jenkins elements).
    pub jenkins: Option<f64>,
    /// Replace hysteretic damping by its viscous equivalent at harmonic 1.
    pub eta_as_viscous: bool,
    /// Recorded DOFs (default: all of a small model, else the forced ones).
    pub record_dofs: Option<Vec<usize>>,
    /// Step-matrix factorisation.
    pub linear_solver: LinearSolver,
}

impl RunOptions {
    /// The defaults of `ewr simulate` at `omega`.
    pub fn new(omega: f64) -> Self {
        RunOptions {
            omega,
            dt: None,
            periods: 1000,
            tol: 1e-6,
            mu_n: None,
            static_factor: 1.0,
            jenkins: None,
            eta_as_viscous: false,
            record_dofs: None,
            linear_solver: LinearSolver::Auto,
        }
    }
}

/// A bad option: its keyword (`static_factor`), its value if shown, what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.render(true))]
pub struct OptionProblem {
    /// The Python keyword; the flag is `--` and the keyword with `-` for `_`.
    pub keyword: &'static str,
    /// The value as given.
    pub value: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl OptionProblem {
    /// As the command line (`--static-factor 0.5: ...`) or Python (`static_factor=0.5: ...`)
    /// spells it.
    pub fn render(&self, cli: bool) -> String {
        let name = if cli {
            format!("--{}", self.keyword.replace('_', "-"))
        } else {
            self.keyword.to_string()
        };
        match (&self.value, cli) {
            (Some(v), true) => format!("{name} {v}: {}", self.message),
            (Some(v), false) => format!("{name}={v}: {}", self.message),
            (None, _) => format!("{name}: {}", self.message),
        }
    }
}

/// Most recorded values (samples x DOFs) accepted, to keep recording every DOF of a big
/// model from exhausting memory (8 bytes each).
pub const MAX_RECORDED: usize = 100_000_000;

fn at_least(keyword: &'static str, x: f64, min: f64, inclusive: bool) -> Result<(), OptionProblem> {
    let ok = x.is_finite() && if inclusive { x >= min } else { x > min };
    if ok {
        return Ok(());
    }
    Err(OptionProblem {
        keyword,
        value: Some(x.to_string()),
        message: format!(
            "must be finite and {} {min}",
            if inclusive { ">=" } else { ">" }
        ),
    })
}

/// Checks the options that do not depend on the model (front ends call it before they touch
/// any file).
pub fn check(o: &RunOptions) -> Result<(), OptionProblem> {
    at_least("omega", o.omega, 0.0, false)?;
    if let Some(dt) = o.dt {
        at_least("dt", dt, 0.0, false)?;
    }
    at_least("tol", o.tol, 0.0, false)?;
    at_least("static_factor", o.static_factor, 1.0, true)?;
    if o.periods == 0 {
        return Err(OptionProblem {
            keyword: "periods",
            value: Some("0".into()),
            message: "at least one period is needed".into(),
        });
    }
    if let Some(x) = o.mu_n {
        at_least("mu_n", x, 0.0, true)?;
    }
    if let Some(k) = o.jenkins {
        at_least("jenkins", k, 0.0, false)?;
    }
    Ok(())
}

/// Most frequencies of a stepped sine: each is a run to its steady state.
pub const MAX_STEPPED_FREQUENCIES: usize = 100_000;

/// The frequencies of a stepped sine from `omega_start` to `omega_end` by `step` (checked:
/// positive, finite, at most [`MAX_STEPPED_FREQUENCIES`]; with a time step `dt`, enough steps
/// per period at the highest of them). Pass the lowest as [`RunOptions::omega`], where a
/// period has the most steps to record.
pub fn stepped(
    omega_start: f64,
    omega_end: f64,
    step: f64,
    dt: Option<f64>,
) -> Result<Vec<f64>, OptionProblem> {
    at_least("omega_start", omega_start, 0.0, false)?;
    at_least("omega_end", omega_end, 0.0, false)?;
    at_least("step", step, 0.0, false)?;
    // Counted as the grid is built (saturating for absurd grids).
    let count = crate::stepped::stepped_count(omega_start, omega_end, step);
    if count > MAX_STEPPED_FREQUENCIES {
        return Err(OptionProblem {
            keyword: "step",
            value: Some(step.to_string()),
            message: format!(
                "{count} frequencies from {omega_start} to {omega_end}: at most \
                 {MAX_STEPPED_FREQUENCIES}, each a run to its steady state"
            ),
        });
    }
    let top = omega_start.max(omega_end);
    if let Some(dt) = dt {
        at_least("dt", dt, 0.0, false)?;
        let steps = (std::f64::consts::TAU / top / dt).round();
        if steps < crate::MIN_STEPS_PER_PERIOD as f64 {
            return Err(OptionProblem {
                keyword: "dt",
                value: Some(dt.to_string()),
                message: format!(
                    "only {steps} steps per period at omega = {top}, the sweep's highest \
                     frequency; at least {} are needed",
                    crate::MIN_STEPS_PER_PERIOD
                ),
            });
        }
        let bottom = omega_start.min(omega_end);
        let most = (std::f64::consts::TAU / bottom / dt).round();
        if most > u32::MAX as f64 {
            return Err(OptionProblem {
                keyword: "dt",
                value: Some(dt.to_string()),
                message: format!(
                    "{most} steps per period at omega = {bottom}, the sweep's lowest frequency: \
                     too many"
                ),
            });
        }
    }
    Ok(crate::stepped_frequencies(omega_start, omega_end, step))
}

/// Checks every option, applies the model-changing ones (friction bound, Jenkins elements)
/// and returns the model to integrate with the integrator's options.
pub fn prepare(model: Model, o: &RunOptions) -> Result<(Model, Options), OptionProblem> {
    check(o)?;
    let mut model = model;
    if o.mu_n.is_some() && model.contacts.has_normal() {
        return Err(OptionProblem {
            keyword: "mu_n",
            value: None,
            message: "the model's contacts have normal directions, so their friction bound is \
                      mu times the normal force; change mu in the model (/contacts/normal/mu) \
                      instead"
                .into(),
        });
    }
    if let Some(x) = o.mu_n {
        model.contacts.mu_n.iter_mut().for_each(|m| *m = x);
    }
    if let Some(k) = o.jenkins {
        model = with_jenkins(&model, &[k]).map_err(|e| OptionProblem {
            keyword: "jenkins",
            value: Some(k.to_string()),
            message: e.to_string(),
        })?;
    }
    let mut opts = Options::new(o.omega);
    opts.dt = o.dt;
    opts.max_periods = o.periods;
    opts.tol = o.tol;
    opts.static_factor = o.static_factor;
    opts.linear_solver = o.linear_solver;
    if o.eta_as_viscous {
        opts.hysteretic = Hysteretic::EquivalentViscous;
    }
    if let Some(dofs) = &o.record_dofs {
        opts.record_dofs = dofs.clone();
        let values = dofs.len().saturating_mul(opts.steps_per_period());
        if values > MAX_RECORDED {
            return Err(OptionProblem {
                keyword: "dofs",
                value: None,
                message: format!(
                    "{} DOFs x {} samples is too much to record; name fewer DOFs or use a \
                     larger dt",
                    dofs.len(),
                    opts.steps_per_period()
                ),
            });
        }
    }
    Ok((model, opts))
}
