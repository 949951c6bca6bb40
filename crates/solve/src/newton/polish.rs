//! Chord steps with a kept LU factorisation: cheap steps after an accepted Newton step on
//! large dense systems, and the polishing of a converged root to rounding.

use super::dense::{DenseWork, OLD_LU_GMRES_MAX, OldLu};
use super::gmres::gmres;
use super::{KrylovOptions, NewtonOptions, Residual, norm};
use faer::{Mat, MatRef};

/// A chord step is kept when it multiplies the residual norm by at most this.
const CHORD_CONTRACTION: f64 = 0.5;

/// Largest number of polishing chord steps after convergence.
const CHORD_POLISH_STEPS: usize = 4;

/// Relative tolerance of the polishing steps' GMRES solves with the last Jacobian: a polish
/// starts below the Newton tolerance, so four more digits reach rounding.
const POLISH_GMRES_RTOL: f64 = 1e-4;

/// After convergence, steps with the last assembled Jacobian while they keep halving the
/// residual, down to four digits below the tolerance: the root to rounding, as full Newton
/// steps with fresh factorisations would give.
pub(super) fn polish_root(
    system: &mut dyn Residual,
    dense: &mut DenseWork,
    jac: &Mat<f64>,
    (x, g, gnorm): (&mut Vec<f64>, &mut Vec<f64>, &mut f64),
    opts: &NewtonOptions,
    evaluations: &mut usize,
    scratch: (&mut Vec<f64>, &mut Vec<f64>),
) {
    chord_steps(
        system,
        dense,
        Some(jac.as_ref()),
        x,
        g,
        gnorm,
        None,
        CHORD_POLISH_STEPS,
        1e-4 * opts.tol_residual,
        evaluations,
        scratch,
    );
}

/// Chord steps `x <- x - J_old^{-1} g(x)` with the factorisation in `work`, at most
/// `max_steps`, each kept only when it multiplies `||g||` by at most [`CHORD_CONTRACTION`]
/// (and, with a `radius`, is no longer than it); the first that fails is discarded and the
/// iterate is left where the last kept step put it. With `jac`, the
/// steps solve the last assembled Jacobian's equations by GMRES preconditioned with the
/// factorisation instead, and stop once `||g|| <= floor`.
#[allow(clippy::too_many_arguments)]
pub(super) fn chord_steps(
    system: &mut dyn Residual,
    work: &mut DenseWork,
    jac: Option<MatRef<'_, f64>>,
    x: &mut Vec<f64>,
    g: &mut Vec<f64>,
    gnorm: &mut f64,
    radius: Option<f64>,
    max_steps: usize,
    floor: f64,
    evaluations: &mut usize,
    (trial, g_trial): (&mut Vec<f64>, &mut Vec<f64>),
) {
    let mut steps = 0;
    while steps < max_steps && *gnorm > 0.0 {
        // Krylov polishing stops at four digits below the tolerance: the Jacobian
        // factorised steps it replaces got there (rounding), and each further solve costs as
        // much as a Newton step.
        if jac.is_some() && *gnorm <= floor {
            return;
        }
        let step = match jac {
            // Steps with the last assembled Jacobian (one Newton step from the root, so a
            // far better chord than an older factorisation), solved by GMRES preconditioned
            // with the factorisation.
            Some(jac) => {
                let rhs: Vec<f64> = g.iter().map(|v| -v).collect();
                let opts = KrylovOptions {
                    restart: OLD_LU_GMRES_MAX,
                    max_iterations: OLD_LU_GMRES_MAX,
                    ..KrylovOptions::default()
                };
                let mut op = OldLu { jac, work };
                gmres(&mut op, &rhs, POLISH_GMRES_RTOL, &opts)
                    .ok()
                    .filter(|s| s.converged)
                    .map(|s| s.x)
            }
            None => work.newton_step(g),
        };
        let Some(p) = step else {
            return;
        };
        if radius.is_some_and(|r| norm(&p) > r) {
            return;
        }
        for ((t, xi), pi) in trial.iter_mut().zip(x.iter()).zip(&p) {
            *t = xi + pi;
        }
        *evaluations += 1;
        steps += 1;
        if system.evaluate(trial, g_trial, None).is_err() {
            return;
        }
        let tn = norm(g_trial);
        if !(tn.is_finite() && tn <= CHORD_CONTRACTION * *gnorm) {
            return;
        }
        std::mem::swap(x, trial);
        std::mem::swap(g, g_trial);
        *gnorm = tn;
    }
}
