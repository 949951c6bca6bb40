//! Newton's method with a Powell dogleg trust region, for square nonlinear systems g(x) = 0.
//!
//! This is the globalisation the E-WR paper uses (MATLAB's `fsolve`, trust-region dogleg):
//! the Newton step when it lies inside the trust region, otherwise a blend of the Cauchy
//! (steepest-descent) step and the Newton step on the region's boundary. The E-WR residual is
//! only piecewise smooth, so the "Jacobian" is a generalised one; the trust region is what
//! keeps Newton from cycling between the pieces.
//!
//! The solver sees only a [`Residual`]: the physics lives in the caller.
//!
//! # Dense and matrix-free (Newton-Krylov) linear algebra
//!
//! The dogleg needs three things per Jacobian: the Newton step `J^{-1} g`, the gradient
//! `J^T g` of `||g||^2 / 2` and the curvature `||J J^T g||` along it. The **dense** path
//! assembles `J` and factorises it (LU, `O(n^3)`). The **matrix-free** path
//! ([`LinearSolve::MatrixFree`], for systems that implement the optional matrix-free methods
//! of [`Residual`]) never forms `J`:
//! * the Newton step is an *inexact* one, from restarted GMRES(m) with right
//!   preconditioning by [`Residual::precondition`] (faer 0.24 has BiCGSTAB but no GMRES;
//!   GMRES is used because it minimises exactly the quantity the trust region models,
//!   `||g + J p||`, monotonically in the iterations, so even an unconverged solve is a
//!   descent step for the model);
//! * the Cauchy direction uses one transpose product `J^T g`
//!   ([`Residual::jacobian_transpose_product`]) and one product `J (J^T g)`: the dogleg stays
//!   exactly Powell's, only the Newton point is inexact. This was preferred over a
//!   backtracking line search along the Newton direction because a line search has no
//!   fallback when the (generalised, piecewise) Jacobian is singular or the Krylov solve
//!   fails, while the dogleg then still takes a steepest-descent step, as the dense path does;
//! * the linear model's prediction `||g + J p||` is evaluated from stored products (`J p`
//!   is a combination of `J p_N` and `J J^T g`), so the ratio test is the same as dense.
//!
//! The GMRES tolerance is an Eisenstat-Walker forcing term (`||g + J p_N|| <= eta ||g||`,
//! `eta` from the last residual decrease, clipped to [`KrylovOptions::forcing_min`,
//! `forcing_max`]), tightened so that one accepted full step can reach `tol_residual`.
//! [`LinearSolve::Auto`] uses the matrix-free path when the system supports it and has more
//! than [`AUTO_MATRIX_FREE_MIN_UNKNOWNS`] unknowns.

mod dense;
mod dogleg;
mod gmres;
mod polish;

pub(crate) use dense::{pin_empty_columns, pin_empty_rows};
pub use gmres::{GmresSolution, gmres};

use dense::{DenseWork, linearize_dense};
use dogleg::dogleg;
use faer::{Mat, MatMut};
use gmres::linearize_matrix_free;
use polish::{chord_steps, polish_root};
use std::fmt;

/// Above this many unknowns [`LinearSolve::Auto`] goes matrix-free (when the system supports
/// and prefers it). Measured on this 2-core machine (docs/performance.md, "Scale"): with the
/// two-level preconditioner, GMRES beats a dense LU from a few hundred unknowns on every
/// multi-contact model tried (chain N = 290 at 580 unknowns: 6.9 s against 7.7 s per sweep;
/// a 20-contact sector at 320: 0.015 s against 0.019 s per point), and loses below.
pub const AUTO_MATRIX_FREE_MIN_UNKNOWNS: usize = 500;

/// Below this many unknowns the dense path runs its LU and matrix products on the calling
/// thread: for the paper's small models (120 unknowns for Fig. 5) handing a 120 x 120 LU to
/// the thread pool costs more than it saves, and makes 2 threads slower than 1.
pub const DENSE_SEQUENTIAL_BELOW: usize = 512;

/// From this many unknowns the dense path keeps its LU factorisation across Newton steps:
/// after an accepted step it first tries chord steps `-J_old^{-1} g` (no new Jacobian), kept
/// while each one at least halves the residual and stays inside the trust region; then the
/// Newton equations with the new Jacobian are solved by GMRES preconditioned with the old LU
/// ([`OldLu`](dense::OldLu)), and only if that fails is `J` factorised again. Once
/// converged, steps with the last Jacobian (by the same GMRES) polish the solution while they
/// keep halving the residual, so the result is the root to rounding, as with full Newton
/// steps (a 3600-unknown LU costs about 30 GFLOP; a GMRES product one product and two
/// triangular solves).
pub const DENSE_REUSE_MIN_UNKNOWNS: usize = 1000;

/// How the Newton direction is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolve {
    /// Matrix-free above [`AUTO_MATRIX_FREE_MIN_UNKNOWNS`] unknowns when supported, else dense.
    /// A periodic solution whose matrix-free solve stalls is finished with dense steps where
    /// they fit ([`crate::point::DENSE_FALLBACK_MAX_UNKNOWNS`]).
    #[default]
    Auto,
    /// Assemble `J` and factorise it (dense LU).
    Dense,
    /// GMRES on `J x` products with the system's preconditioner. Falls back to dense for a
    /// system that does not implement the matrix-free methods.
    MatrixFree,
}

impl std::str::FromStr for LinearSolve {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(LinearSolve::Auto),
            "dense" => Ok(LinearSolve::Dense),
            "matrix-free" | "mf" | "krylov" => Ok(LinearSolve::MatrixFree),
            _ => Err(format!(
                "unknown linear solver '{s}' (expected dense, matrix-free or auto)"
            )),
        }
    }
}

impl fmt::Display for LinearSolve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LinearSolve::Auto => "auto",
            LinearSolve::Dense => "dense",
            LinearSolve::MatrixFree => "matrix-free",
        })
    }
}

/// Settings of the GMRES solves of the matrix-free path.
#[derive(Clone, Debug, PartialEq)]
pub struct KrylovOptions {
    /// Krylov vectors kept before a restart (the `m` of GMRES(m)).
    pub restart: usize,
    /// Largest number of `J x` products per Newton step (over all restarts).
    pub max_iterations: usize,
    /// Loosest relative tolerance `||g + J p|| / ||g||` (first iterations, far from the root).
    pub forcing_max: f64,
    /// Tightest relative tolerance.
    pub forcing_min: f64,
    /// Stop early (not converged) when this many products do not halve the residual; 0
    /// never does. For systems whose Jacobian may be singular with `g` outside its range,
    /// where GMRES sits on its least-squares floor (3-D contacts stuck all period). Off by
    /// default: a weak but working preconditioner can plateau as long and then drop.
    pub stagnation_window: usize,
}

impl Default for KrylovOptions {
    fn default() -> Self {
        KrylovOptions {
            restart: 200,
            max_iterations: 1000,
            forcing_max: 1e-2,
            forcing_min: 1e-10,
            stagnation_window: 0,
        }
    }
}

/// A square nonlinear system `g(x) = 0` with a (generalised) Jacobian.
///
/// The dense interface is [`evaluate`](Self::evaluate). A system may also offer the
/// matrix-free interface ([`supports_matrix_free`](Self::supports_matrix_free) returning
/// true): [`linearize`](Self::linearize) at the current iterate, then any number of
/// [`jacobian_product`](Self::jacobian_product),
/// [`jacobian_transpose_product`](Self::jacobian_transpose_product) and
/// [`precondition`](Self::precondition) calls, interleaved with `evaluate(.., None)` at trial
/// points (which must not disturb the linearisation).
pub trait Residual {
    /// Number of unknowns, equal to the number of equations.
    fn len(&self) -> usize;

    /// True for a system without unknowns.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Evaluates `g(x)` into `g` and, when `jacobian` is given, `dg/dx` into it (`len x len`).
    ///
    /// One call computes both because they share the expensive part (for E-WR, the friction
    /// law on every time sample).
    fn evaluate(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        jacobian: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError>;

    /// True when the matrix-free methods below are implemented.
    fn supports_matrix_free(&self) -> bool {
        false
    }

    /// True when, above [`AUTO_MATRIX_FREE_MIN_UNKNOWNS`], the matrix-free path is expected
    /// to beat a dense LU ([`LinearSolve::Auto`]). E-WR says no for a single contact, where
    /// the preconditioner is the whole Jacobian anyway.
    fn prefers_matrix_free(&self) -> bool {
        self.supports_matrix_free()
    }

    /// Evaluates `g(x)` and keeps whatever the products and the preconditioner need at `x`.
    fn linearize(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        let _ = (x, g);
        Err(EvalError("this system has no matrix-free interface".into()))
    }

    /// `out = J v` at the last [`linearize`](Self::linearize)d point.
    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let _ = (v, out);
        Err(EvalError("this system has no matrix-free interface".into()))
    }

    /// `out = J^T v` at the last [`linearize`](Self::linearize)d point.
    fn jacobian_transpose_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let _ = (v, out);
        Err(EvalError("this system has no matrix-free interface".into()))
    }

    /// Applies an approximation of `J^{-1}` in place (identity by default).
    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        let _ = v;
        Ok(())
    }
}

/// A residual evaluation that could not be completed (e.g. a non-finite value appeared).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// Stopping rules and trust-region settings.
#[derive(Clone, Debug, PartialEq)]
pub struct NewtonOptions {
    /// Converged when `||g(x)||_2 <= tol_residual` (default 1e-10; front ends take
    /// [`crate::default_tolerance`] of the model, 1e-9 for 3-D contacts).
    pub tol_residual: f64,
    /// Stop when a step is shorter than `tol_step * (||x||_2 + tol_step)`.
    pub tol_step: f64,
    /// Largest number of Jacobian evaluations (Newton iterations).
    pub max_iterations: usize,
    /// Initial trust radius as a multiple of `max(||x0||_2, 1)` (MINPACK's `factor`).
    pub initial_radius_factor: f64,
    /// Dense or matrix-free Newton direction (see the module documentation).
    pub linear: LinearSolve,
    /// GMRES settings of the matrix-free path.
    pub krylov: KrylovOptions,
    /// Stop as [`NewtonStatus::Stalled`] when this many iterations have cut `||g||` by less
    /// than [`STALL_REDUCTION`] while it is above [`STALL_FLOOR`] times the tolerance: a
    /// local minimum of `||g||` that a caller with another start or scaling leaves sooner
    /// than the rest of the iteration budget would (0: never).
    pub stall_window: usize,
}

/// Relative decrease of `||g||` below which [`NewtonOptions::stall_window`] iterations count
/// as no progress.
pub const STALL_REDUCTION: f64 = 0.05;

/// Multiple of the tolerance below which a slow decrease is never a stall: near the root of
/// a 3-D contact problem the last digits come at a few per cent per iteration
/// (docs/performance.md, "3-D contacts"), and that progress is real.
pub const STALL_FLOOR: f64 = 100.0;

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            tol_residual: 1e-10,
            tol_step: 1e-14,
            max_iterations: 200,
            initial_radius_factor: 100.0,
            linear: LinearSolve::Auto,
            krylov: KrylovOptions::default(),
            stall_window: 0,
        }
    }
}

/// How a solve ended.
#[derive(Clone, Debug, PartialEq)]
pub enum NewtonStatus {
    /// `||g|| <= tol_residual`.
    Converged,
    /// The iteration cap was reached first.
    MaxIterations,
    /// Steps became negligible while the residual was still above tolerance: a local
    /// minimum of `||g||` that is not a root, or a discontinuity the trust region cannot cross.
    Stalled,
    /// The residual could not be evaluated at an iterate.
    EvaluationFailed(String),
}

impl NewtonStatus {
    /// True only for [`NewtonStatus::Converged`].
    pub fn converged(&self) -> bool {
        *self == NewtonStatus::Converged
    }
}

impl fmt::Display for NewtonStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NewtonStatus::Converged => f.write_str("converged"),
            NewtonStatus::MaxIterations => f.write_str("iteration limit reached"),
            NewtonStatus::Stalled => f.write_str("stalled (no further decrease of the residual)"),
            NewtonStatus::EvaluationFailed(e) => write!(f, "residual evaluation failed: {e}"),
        }
    }
}

/// The outcome of a solve: the last accepted iterate and how it was reached.
#[derive(Clone, Debug)]
pub struct NewtonReport {
    /// Last accepted iterate (the solution when converged).
    pub x: Vec<f64>,
    /// `||g(x)||_2` at `x`.
    pub residual: f64,
    /// Jacobian evaluations (Newton iterations).
    pub iterations: usize,
    /// Residual evaluations, trial points included.
    pub evaluations: usize,
    /// How the solve ended.
    pub status: NewtonStatus,
    /// True when the matrix-free (Newton-Krylov) path was used.
    pub matrix_free: bool,
    /// GMRES iterations (`J x` products inside GMRES) over the solve: matrix-free steps, and
    /// from [`DENSE_REUSE_MIN_UNKNOWNS`] unknowns the dense steps solved with an older LU
    /// (polishing at the root not counted); 0 on the dense path of smaller systems.
    pub krylov_iterations: usize,
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Whether `system` is solved matrix-free under `linear`.
pub fn uses_matrix_free(system: &dyn Residual, linear: LinearSolve) -> bool {
    system.supports_matrix_free()
        && match linear {
            LinearSolve::Dense => false,
            LinearSolve::MatrixFree => true,
            LinearSolve::Auto => {
                system.prefers_matrix_free() && system.len() > AUTO_MATRIX_FREE_MIN_UNKNOWNS
            }
        }
}

/// What the dogleg needs from one linearisation, computed once and reused while the trust
/// radius shrinks.
struct Linearization {
    /// Newton step `-J^{-1} g` (inexact on the matrix-free path), `None` when it failed.
    newton: Option<Vec<f64>>,
    /// `J p_N`.
    j_newton: Vec<f64>,
    /// Gradient `J^T g` of `||g||^2 / 2`.
    grad: Vec<f64>,
    /// `J grad`.
    j_grad: Vec<f64>,
}

/// Solves `g(x) = 0` from `x0` by trust-region dogleg Newton.
///
/// Small dense systems (below [`DENSE_SEQUENTIAL_BELOW`] unknowns) reuse the Jacobian and LU
/// storage of this thread's previous solve of the same size: a frequency sweep solves one
/// such system per point.
pub fn solve(system: &mut dyn Residual, x0: &[f64], opts: &NewtonOptions) -> NewtonReport {
    let n = system.len();
    let matrix_free = uses_matrix_free(system, opts.linear);
    if matrix_free || n >= DENSE_SEQUENTIAL_BELOW {
        let mut jac = if matrix_free {
            Mat::<f64>::zeros(0, 0)
        } else {
            Mat::<f64>::zeros(n, n)
        };
        let mut dense = DenseWork::new(if matrix_free { 0 } else { n });
        return solve_in(system, x0, opts, matrix_free, &mut jac, &mut dense);
    }
    let cached = DENSE_CACHE.with(|c| c.borrow_mut().take());
    let (mut jac, mut dense) = match cached {
        Some((mut jac, mut dense)) if jac.nrows() == n => {
            jac.fill(0.0);
            dense.factored = false;
            (jac, dense)
        }
        _ => (Mat::<f64>::zeros(n, n), DenseWork::new(n)),
    };
    let report = solve_in(system, x0, opts, false, &mut jac, &mut dense);
    DENSE_CACHE.with(|c| *c.borrow_mut() = Some((jac, dense)));
    report
}

thread_local! {
    /// The Jacobian and LU storage of this thread's last small dense solve.
    static DENSE_CACHE: std::cell::RefCell<Option<(Mat<f64>, DenseWork)>> =
        const { std::cell::RefCell::new(None) };
}

fn solve_in(
    system: &mut dyn Residual,
    x0: &[f64],
    opts: &NewtonOptions,
    matrix_free: bool,
    jac: &mut Mat<f64>,
    dense: &mut DenseWork,
) -> NewtonReport {
    let n = system.len();
    let mut x = x0.to_vec();
    let mut g = vec![0.0; n];
    let reuse = !matrix_free && n >= DENSE_REUSE_MIN_UNKNOWNS;
    let mut krylov_iterations = 0;
    let report = |x: Vec<f64>, residual, iterations, evaluations, status, kry| NewtonReport {
        x,
        residual,
        iterations,
        evaluations,
        status,
        matrix_free,
        krylov_iterations: kry,
    };
    if x0.len() != n {
        let msg = format!("start vector has {} entries, the system {n}", x0.len());
        return report(x, f64::NAN, 0, 0, NewtonStatus::EvaluationFailed(msg), 0);
    }
    let mut evaluations = 0;
    let mut trial = vec![0.0; n];
    let mut g_trial = vec![0.0; n];
    let mut radius = opts.initial_radius_factor * norm(&x).max(1.0);
    let mut lin: Option<Linearization> = None;
    let mut gnorm = f64::INFINITY;
    let mut gnorm_prev = f64::NAN;
    let mut eta = opts.krylov.forcing_max;
    // ||g|| at the start of each iteration, for the stall test.
    let mut history: Vec<f64> = Vec::new();
    for iteration in 0..=opts.max_iterations {
        if lin.is_none() && reuse && dense.factored && iteration > 0 {
            // Chord steps with the last factorisation, while they contract fast.
            let polish = if gnorm <= opts.tol_residual {
                0
            } else {
                usize::MAX
            };
            chord_steps(
                system,
                dense,
                None,
                &mut x,
                &mut g,
                &mut gnorm,
                Some(radius),
                polish,
                0.0,
                &mut evaluations,
                (&mut trial, &mut g_trial),
            );
        }
        // After a step that reached the tolerance, its residual is current: no Jacobian is
        // assembled at the root only to find it converged (one of the 2-3 Jacobian
        // evaluations of a typical sweep point).
        if lin.is_none() && (gnorm > opts.tol_residual || gnorm.is_nan()) {
            evaluations += 1;
            let res = if matrix_free {
                system.linearize(&x, &mut g)
            } else {
                system.evaluate(&x, &mut g, Some(jac.as_mut()))
            };
            if let Err(e) = res {
                return report(
                    x,
                    gnorm,
                    iteration,
                    evaluations,
                    NewtonStatus::EvaluationFailed(e.0),
                    krylov_iterations,
                );
            }
            gnorm = norm(&g);
        }
        if !gnorm.is_finite() {
            let msg = "the residual is not finite".to_string();
            return report(
                x,
                gnorm,
                iteration,
                evaluations,
                NewtonStatus::EvaluationFailed(msg),
                krylov_iterations,
            );
        }
        if gnorm <= opts.tol_residual {
            if reuse && dense.factored {
                polish_root(
                    system,
                    dense,
                    jac,
                    (&mut x, &mut g, &mut gnorm),
                    opts,
                    &mut evaluations,
                    (&mut trial, &mut g_trial),
                );
            }
            return report(
                x,
                gnorm,
                iteration,
                evaluations,
                NewtonStatus::Converged,
                krylov_iterations,
            );
        }
        if iteration == opts.max_iterations {
            break;
        }
        history.push(gnorm);
        if opts.stall_window > 0
            && iteration >= opts.stall_window
            && gnorm > STALL_FLOOR * opts.tol_residual
            && gnorm > (1.0 - STALL_REDUCTION) * history[iteration - opts.stall_window]
        {
            return report(
                x,
                gnorm,
                iteration,
                evaluations,
                NewtonStatus::Stalled,
                krylov_iterations,
            );
        }
        if lin.is_none() {
            // Eisenstat-Walker (choice 2, gamma = 0.9), safeguarded, and never looser than
            // needed to reach the tolerance in one full step: how well a Krylov solve (the
            // matrix-free path, or GMRES with an older LU) must solve the Newton equations.
            if gnorm_prev.is_finite() && gnorm_prev > 0.0 {
                let ew = 0.9 * (gnorm / gnorm_prev).powi(2);
                eta = ew.max(0.9 * eta * eta).min(opts.krylov.forcing_max);
            }
            let eta_k = eta
                .max(0.5 * opts.tol_residual / gnorm)
                .max(opts.krylov.forcing_min)
                .min(opts.krylov.forcing_max);
            let made = if matrix_free {
                linearize_matrix_free(system, &g, eta_k, &opts.krylov, &mut krylov_iterations)
            } else {
                Ok(linearize_dense(
                    jac,
                    &g,
                    norm(&x),
                    dense,
                    // The dense path's results must be what an exact Newton step gives: its
                    // last step overshoots the tolerance by orders of magnitude, so the
                    // Krylov solve aims at 1e-5 of it instead of half.
                    reuse.then(|| {
                        eta.max(1e-5 * opts.tol_residual / gnorm)
                            .max(opts.krylov.forcing_min)
                            .min(opts.krylov.forcing_max)
                    }),
                    &mut krylov_iterations,
                ))
            };
            match made {
                Ok(l) => lin = Some(l),
                Err(e) => {
                    return report(
                        x,
                        gnorm,
                        iteration,
                        evaluations,
                        NewtonStatus::EvaluationFailed(e.0),
                        krylov_iterations,
                    );
                }
            }
            gnorm_prev = gnorm;
        }
        let step = dogleg(lin.as_ref().expect("just made"), &g, radius);
        let step_norm = norm(&step.p);
        for i in 0..n {
            trial[i] = x[i] + step.p[i];
        }
        evaluations += 1;
        let ok = system.evaluate(&trial, &mut g_trial, None).is_ok();
        let trial_norm = if ok { norm(&g_trial) } else { f64::INFINITY };
        // Ratio of actual to predicted decrease of ||g||^2 / 2 under the linear model.
        let actual = gnorm * gnorm - trial_norm * trial_norm;
        let predicted = gnorm * gnorm - step.model_norm_sq;
        let ratio = if predicted > 0.0 {
            actual / predicted
        } else {
            -1.0
        };
        if ratio > 1e-4 && trial_norm.is_finite() {
            std::mem::swap(&mut x, &mut trial);
            std::mem::swap(&mut g, &mut g_trial);
            gnorm = trial_norm;
            lin = None;
            if gnorm <= opts.tol_residual {
                // Converged: the next pass's test reports it, without a new Jacobian.
                continue;
            }
            if ratio > 0.75 {
                radius = radius.max(3.0 * step_norm);
            } else if ratio < 0.25 {
                radius = 0.5 * step_norm;
            }
        } else {
            radius = 0.25 * step_norm.min(radius);
        }
        let xnorm = norm(&x);
        if radius <= opts.tol_step * (xnorm + opts.tol_step) {
            // (A step that reached the tolerance was reported converged above.)
            return report(
                x,
                gnorm,
                iteration + 1,
                evaluations,
                NewtonStatus::Stalled,
                krylov_iterations,
            );
        }
    }
    report(
        x,
        gnorm,
        opts.max_iterations,
        evaluations,
        NewtonStatus::MaxIterations,
        krylov_iterations,
    )
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A system given by closures, for tests.
    struct Closure<F, J> {
        n: usize,
        f: F,
        j: J,
        calls: usize,
    }

    impl<F: FnMut(&[f64], &mut [f64]), J: FnMut(&[f64], MatMut<'_, f64>)> Residual for Closure<F, J> {
        fn len(&self) -> usize {
            self.n
        }
        fn evaluate(
            &mut self,
            x: &[f64],
            g: &mut [f64],
            jac: Option<MatMut<'_, f64>>,
        ) -> Result<(), EvalError> {
            self.calls += 1;
            (self.f)(x, g);
            if let Some(j) = jac {
                (self.j)(x, j);
            }
            Ok(())
        }
    }

    fn system<F, J>(n: usize, f: F, j: J) -> Closure<F, J> {
        Closure { n, f, j, calls: 0 }
    }

    #[test]
    fn rosenbrock_system_from_the_classic_start() {
        let mut s = system(
            2,
            |x: &[f64], g: &mut [f64]| {
                g[0] = 10.0 * (x[1] - x[0] * x[0]);
                g[1] = 1.0 - x[0];
            },
            |x: &[f64], mut j: MatMut<'_, f64>| {
                j[(0, 0)] = -20.0 * x[0];
                j[(0, 1)] = 10.0;
                j[(1, 0)] = -1.0;
                j[(1, 1)] = 0.0;
            },
        );
        let r = solve(&mut s, &[-1.2, 1.0], &NewtonOptions::default());
        assert!(r.status.converged(), "{:?}", r.status);
        assert!((r.x[0] - 1.0).abs() < 1e-10 && (r.x[1] - 1.0).abs() < 1e-10);
        assert_eq!(r.evaluations, s.calls);
    }

    #[test]
    fn powell_badly_scaled() {
        // More, Garbow & Hillstrom problem 3; root near (1.098e-5, 9.106).
        let mut s = system(
            2,
            |x: &[f64], g: &mut [f64]| {
                g[0] = 1e4 * x[0] * x[1] - 1.0;
                g[1] = (-x[0]).exp() + (-x[1]).exp() - 1.0001;
            },
            |x: &[f64], mut j: MatMut<'_, f64>| {
                j[(0, 0)] = 1e4 * x[1];
                j[(0, 1)] = 1e4 * x[0];
                j[(1, 0)] = -(-x[0]).exp();
                j[(1, 1)] = -(-x[1]).exp();
            },
        );
        let opts = NewtonOptions {
            tol_residual: 1e-12,
            ..Default::default()
        };
        let r = solve(&mut s, &[0.0, 1.0], &opts);
        assert!(r.status.converged(), "{:?} at {:?}", r.status, r.x);
        assert!((r.x[0] * r.x[1] * 1e4 - 1.0).abs() < 1e-10);
        assert!((r.x[0] - 1.098159e-5).abs() < 1e-9, "{:?}", r.x);
    }

    #[test]
    fn freudenstein_roth_local_minimum_is_reported_not_hidden() {
        // From (0.5, -2) Newton-type methods are drawn to the local minimiser of ||g||
        // near (11.41, -0.8968), which is not a root: the status must say so.
        let mut s = system(
            2,
            |x: &[f64], g: &mut [f64]| {
                g[0] = -13.0 + x[0] + ((5.0 - x[1]) * x[1] - 2.0) * x[1];
                g[1] = -29.0 + x[0] + ((x[1] + 1.0) * x[1] - 14.0) * x[1];
            },
            |x: &[f64], mut j: MatMut<'_, f64>| {
                j[(0, 0)] = 1.0;
                j[(0, 1)] = 10.0 * x[1] - 3.0 * x[1] * x[1] - 2.0;
                j[(1, 0)] = 1.0;
                j[(1, 1)] = 3.0 * x[1] * x[1] + 2.0 * x[1] - 14.0;
            },
        );
        let r = solve(&mut s, &[0.5, -2.0], &NewtonOptions::default());
        if r.status.converged() {
            // Reaching the true root (5, 4) would also be honest.
            assert!((r.x[0] - 5.0).abs() < 1e-8 && (r.x[1] - 4.0).abs() < 1e-8);
        } else {
            assert!(r.residual > 1.0, "{r:?}");
            assert!(matches!(
                r.status,
                NewtonStatus::Stalled | NewtonStatus::MaxIterations
            ));
        }
    }

    #[test]
    fn a_stall_window_stops_a_solve_that_no_longer_gains() {
        // g(x) = 1 + exp(-x) has no root; ||g|| creeps down to 1 as x grows.
        let mut s = system(
            1,
            |x: &[f64], g: &mut [f64]| g[0] = 1.0 + (-x[0]).exp(),
            |x: &[f64], mut j: MatMut<'_, f64>| j[(0, 0)] = -(-x[0]).exp(),
        );
        let full = solve(&mut s, &[0.0], &NewtonOptions::default());
        assert!(!full.status.converged());
        let opts = NewtonOptions {
            stall_window: 10,
            ..NewtonOptions::default()
        };
        let r = solve(&mut s, &[0.0], &opts);
        assert_eq!(r.status, NewtonStatus::Stalled, "{r:?}");
        assert!(
            r.iterations >= 10 && r.iterations < full.iterations,
            "{r:?} {full:?}"
        );
        // It stopped with nothing left to gain: the full budget got no closer to a root.
        assert!(r.residual - 1.0 < 0.05 * (1.0 + 1.0) && full.residual <= r.residual);
    }

    #[test]
    fn piecewise_linear_system_is_solved_exactly() {
        // g(x) = x + 2 max(0, x - 1) - 4, root x = 2: a kink like the friction law's.
        let mut s = system(
            1,
            |x: &[f64], g: &mut [f64]| g[0] = x[0] + 2.0 * (x[0] - 1.0).max(0.0) - 4.0,
            |x: &[f64], mut j: MatMut<'_, f64>| j[(0, 0)] = if x[0] > 1.0 { 3.0 } else { 1.0 },
        );
        let r = solve(&mut s, &[0.0], &NewtonOptions::default());
        assert!(r.status.converged());
        assert!((r.x[0] - 2.0).abs() < 1e-12);
        // The first full Newton step overshoots the kink and is rejected; a few more follow.
        assert!(r.iterations <= 8, "{}", r.iterations);
    }

    #[test]
    fn singular_jacobian_falls_back_to_steepest_descent() {
        // g = (x0^2, x1): J singular at x0 = 0 is avoided from x0 = 1, but J is rank
        // deficient at the start of the second component's solve: must not blow up.
        let mut s = system(
            2,
            |x: &[f64], g: &mut [f64]| {
                g[0] = x[0] * x[0] * x[0];
                g[1] = x[1] - 1.0;
            },
            |x: &[f64], mut j: MatMut<'_, f64>| {
                j[(0, 0)] = 3.0 * x[0] * x[0];
                j[(0, 1)] = 0.0;
                j[(1, 0)] = 0.0;
                j[(1, 1)] = 1.0;
            },
        );
        let opts = NewtonOptions {
            tol_residual: 1e-9,
            ..Default::default()
        };
        let r = solve(&mut s, &[0.0, 0.0], &opts);
        assert!(r.status.converged(), "{r:?}");
        assert!((r.x[1] - 1.0).abs() < 1e-9);
    }

    #[test]
    fn large_dense_system_reuses_its_factorisation_and_reaches_the_root() {
        // n >= DENSE_REUSE_MIN_UNKNOWNS: chord steps with a kept LU, then polishing. A weakly
        // coupled cubic system whose root is known from the decoupled scalar equations plus
        // a fixed point on the coupling.
        let n = DENSE_REUSE_MIN_UNKNOWNS + 24;
        let c: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.5).collect();
        let coupling = 1e-3;
        let f = move |x: &[f64], g: &mut [f64]| {
            let sum: f64 = x.iter().sum();
            for i in 0..n {
                g[i] = x[i] + 0.1 * x[i].powi(3) + coupling * sum / n as f64 - c[i];
            }
        };
        let j = move |x: &[f64], mut jac: MatMut<'_, f64>| {
            for col in 0..n {
                for row in 0..n {
                    jac[(row, col)] = coupling / n as f64;
                }
                jac[(col, col)] += 1.0 + 0.3 * x[col] * x[col];
            }
        };
        let mut s = system(n, f.clone(), j);
        let opts = NewtonOptions {
            tol_residual: 1e-10,
            ..Default::default()
        };
        let r = solve(&mut s, &vec![0.0; n], &opts);
        assert!(r.status.converged(), "{r:?}");
        // Polished to rounding, not just below the tolerance.
        let mut g = vec![0.0; n];
        f(&r.x, &mut g);
        assert!(norm(&g) < 1e-13, "{}", norm(&g));
        // Chord steps are evaluations without a Jacobian.
        assert!(r.evaluations > r.iterations + 1, "{r:?}");
    }

    #[test]
    fn evaluation_failure_is_reported() {
        struct Failing;
        impl Residual for Failing {
            fn len(&self) -> usize {
                1
            }
            fn evaluate(
                &mut self,
                _: &[f64],
                _: &mut [f64],
                _: Option<MatMut<'_, f64>>,
            ) -> Result<(), EvalError> {
                Err(EvalError("NaN in contact 3".into()))
            }
        }
        let r = solve(&mut Failing, &[0.0], &NewtonOptions::default());
        assert_eq!(
            r.status,
            NewtonStatus::EvaluationFailed("NaN in contact 3".into())
        );
    }

    #[test]
    fn iteration_cap_is_reported() {
        let mut s = system(
            1,
            |x: &[f64], g: &mut [f64]| g[0] = x[0].exp() - 1e6,
            |x: &[f64], mut j: MatMut<'_, f64>| j[(0, 0)] = x[0].exp(),
        );
        let opts = NewtonOptions {
            max_iterations: 2,
            ..Default::default()
        };
        let r = solve(&mut s, &[0.0], &opts);
        assert_eq!(r.status, NewtonStatus::MaxIterations);
        assert_eq!(r.iterations, 2);
    }
}
