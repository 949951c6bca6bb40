//! One periodic solution at one frequency: the E-WR residual of all contacts solved by
//! trust-region Newton, optionally ramping the number of harmonics.

use crate::newton::{self, EvalError, NewtonOptions, NewtonReport, NewtonStatus, Residual};
use crate::post::{ContactSummary, summarise};
use ewr_contact::{ContactHistories, ContactParams, EwrResidual, FrictionLaw, ResidualError};
use ewr_hb::receptance::{Receptance, ReceptanceError};
use ewr_hb::{FourierError, HarmonicKind, HarmonicSet};
use faer::MatMut;
use faer::reborrow::ReborrowMut;
use std::fmt;

/// Why a periodic solution could not be attempted (non-convergence is not an error: it is
/// reported in [`PointSolution::status`]).
#[derive(Debug)]
pub enum SolveError {
    /// The structure could not be condensed at this frequency (e.g. singular `Z_h`).
    Receptance(ReceptanceError),
    /// The residual could not be set up.
    Residual(ResidualError),
    /// A harmonic set or sample count is invalid.
    Fourier(FourierError),
    /// A start vector does not fit.
    Start(String),
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Receptance(e) => write!(f, "condensation: {e}"),
            SolveError::Residual(e) => write!(f, "residual: {e}"),
            SolveError::Fourier(e) => write!(f, "harmonics: {e}"),
            SolveError::Start(e) => write!(f, "start vector: {e}"),
        }
    }
}

impl std::error::Error for SolveError {}

impl From<ReceptanceError> for SolveError {
    fn from(e: ReceptanceError) -> Self {
        SolveError::Receptance(e)
    }
}
impl From<ResidualError> for SolveError {
    fn from(e: ResidualError) -> Self {
        SolveError::Residual(e)
    }
}
impl From<FourierError> for SolveError {
    fn from(e: FourierError) -> Self {
        SolveError::Fourier(e)
    }
}

/// How to compute one periodic solution.
#[derive(Clone, Debug)]
pub struct PointSettings {
    /// Harmonics of the friction forces and displacements.
    pub set: HarmonicSet,
    /// Time samples per period for the Galerkin integrals.
    pub n_samples: usize,
    /// The friction law.
    pub law: FrictionLaw,
    /// Newton options; `tol_residual` applies to the scaled residual (see [`scaled_norm`]).
    pub newton: NewtonOptions,
    /// Solve with fewer harmonics first and prolong (paper Table 1: much faster from zero).
    pub ramp: bool,
}

/// The E-WR residual divided by `(max mu N)^2`, the natural size of `Psi = r max(mu N, |z|)
/// - mu N z` for forces of the order of the bound, so that the tolerance is dimensionless.
///
/// [`scaled_norm`]: the reported residual is `||g||_2 / (max mu N)^2`.
pub struct ScaledResidual<'s, 'a> {
    /// The residual being solved.
    pub inner: &'s mut EwrResidual<'a>,
    /// `1 / (max mu N)^2` (1 when every bound is 0).
    pub scale: f64,
}

impl Residual for ScaledResidual<'_, '_> {
    fn len(&self) -> usize {
        self.inner.len()
    }

    fn evaluate(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        jacobian: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        let res = match jacobian {
            Some(mut j) => {
                let r = self.inner.residual_and_jacobian(x, g, j.rb_mut());
                if r.is_ok() {
                    let s = self.scale;
                    for c in 0..j.ncols() {
                        for i in 0..j.nrows() {
                            j[(i, c)] *= s;
                        }
                    }
                }
                r
            }
            None => self.inner.residual(x, g),
        };
        res.map_err(|e| EvalError(e.to_string()))?;
        g.iter_mut().for_each(|v| *v *= self.scale);
        Ok(())
    }
}

/// The residual scale `1 / (max mu N)^2`, or 1 when every bound is zero.
pub fn scaled_norm(params: &ContactParams) -> f64 {
    let m = params.mu_n.iter().copied().fold(0.0, f64::max);
    if m > 0.0 { 1.0 / (m * m) } else { 1.0 }
}

/// A periodic solution and what was done to get it.
#[derive(Clone, Debug)]
pub struct PointSolution {
    /// Fundamental circular frequency.
    pub omega: f64,
    /// The harmonic set of `friction`.
    pub set: HarmonicSet,
    /// Friction-force coefficients (hb block layout, signal `c * dim + k`).
    pub friction: Vec<f64>,
    /// Coefficients of the contacts' relative displacement, same layout.
    pub displacement: Vec<f64>,
    /// How the (last stage of the) Newton solve ended.
    pub status: NewtonStatus,
    /// Final scaled residual norm.
    pub residual: f64,
    /// Newton iterations over all ramp stages.
    pub iterations: usize,
    /// Sampled histories at the contacts.
    pub histories: ContactHistories,
    /// Per-contact summary.
    pub contacts: Vec<ContactSummary>,
}

/// The harmonic sets of a ramp towards `target`: a few harmonics, then doubling.
pub fn ramp_sets(target: &HarmonicSet) -> Vec<HarmonicSet> {
    let h_max = target.h_max();
    let mut out = Vec::new();
    let mut h = 5usize;
    while h < h_max {
        let set = match target.kind() {
            HarmonicKind::Odd => HarmonicSet::odd(h | 1),
            HarmonicKind::All => HarmonicSet::all(h),
        };
        if let Ok(s) = set {
            out.push(s);
        }
        h = 2 * h + 1;
    }
    out.push(target.clone());
    out
}

/// Solves for the periodic response at `omega`, from `start` (coefficients on some harmonic
/// set, prolonged to `settings.set`) or from zero friction force.
pub fn solve_point(
    rec: &Receptance,
    params: &ContactParams,
    omega: f64,
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    let at = rec.prepare(omega, settings.set.harmonics())?;
    let scale = scaled_norm(params);
    let m = params.dim * params.len();
    let stages = match start {
        Some(_) => vec![settings.set.clone()],
        None if settings.ramp => ramp_sets(&settings.set),
        None => vec![settings.set.clone()],
    };
    let (mut x_set, mut x): (HarmonicSet, Vec<f64>) = match start {
        Some((set, x)) => {
            if x.len() != m * set.n_coeffs() {
                return Err(SolveError::Start(format!(
                    "{} coefficients given, {} expected for {set}",
                    x.len(),
                    m * set.n_coeffs()
                )));
            }
            (set.clone(), x.to_vec())
        }
        None => (stages[0].clone(), vec![0.0; m * stages[0].n_coeffs()]),
    };
    let mut iterations = 0;
    let mut last: Option<NewtonReport> = None;
    for stage in &stages {
        let x0 = stage.prolong(&x, &x_set)?;
        let mut sys = EwrResidual::new(
            &at,
            stage.clone(),
            settings.n_samples,
            settings.law,
            params.clone(),
        )?;
        let mut scaled = ScaledResidual {
            inner: &mut sys,
            scale,
        };
        let report = newton::solve(&mut scaled, &x0, &settings.newton);
        iterations += report.iterations;
        // A stage that did not converge still gives the next one a better start than zero;
        // only the last stage's status counts.
        x = report.x.clone();
        x_set = stage.clone();
        last = Some(report);
    }
    let report = last.expect("at least one stage");
    let x = settings.set.prolong(&x, &x_set)?;
    let mut sys = EwrResidual::new(
        &at,
        settings.set.clone(),
        settings.n_samples,
        settings.law,
        params.clone(),
    )?;
    let histories = sys.histories(&x)?;
    let displacement = sys.displacement_coeffs(&x)?;
    let contacts = summarise(&histories, params, omega);
    Ok(PointSolution {
        omega,
        set: settings.set.clone(),
        friction: x,
        displacement,
        status: report.status,
        residual: report.residual,
        iterations,
        histories,
        contacts,
    })
}
