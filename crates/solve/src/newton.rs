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

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul;
use faer::{Accum, Conj, Mat, MatMut, MatRef, Par};
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
/// ([`OldLu`]), and only if that fails is `J` factorised again. Once converged, steps with the
/// last Jacobian (by the same GMRES) polish the solution while they keep halving the
/// residual, so the result is the root to rounding, as with full Newton steps (a
/// 3600-unknown LU costs about 30 GFLOP; a GMRES product one product and two triangular
/// solves).
pub const DENSE_REUSE_MIN_UNKNOWNS: usize = 1000;

/// A chord step is kept when it multiplies the residual norm by at most this.
const CHORD_CONTRACTION: f64 = 0.5;

/// Largest number of polishing chord steps after convergence.
const CHORD_POLISH_STEPS: usize = 4;

/// How the Newton direction is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolve {
    /// Matrix-free above [`AUTO_MATRIX_FREE_MIN_UNKNOWNS`] unknowns when supported, else dense.
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
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError(pub String);

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EvalError {}

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

/// The dense path's workspace, allocated once per solve: the LU factors (in place, `L`
/// strictly below the diagonal, `U` on and above), the row permutation, faer's scratch and a
/// right-hand side, so that no Newton iteration allocates an `n x n` matrix.
struct DenseWork {
    lu: Mat<f64>,
    fwd: Vec<usize>,
    bwd: Vec<usize>,
    mem: MemBuffer,
    rhs: Mat<f64>,
    par: Par,
    /// True once `lu` holds a factorisation.
    factored: bool,
}

impl DenseWork {
    fn new(n: usize) -> Self {
        let par = if n < DENSE_SEQUENTIAL_BELOW {
            Par::Seq
        } else {
            faer::get_global_parallelism()
        };
        let scratch =
            faer::linalg::lu::partial_pivoting::factor::lu_in_place_scratch::<usize, f64>(
                n,
                n,
                par,
                Default::default(),
            )
            .or(
                faer::linalg::lu::partial_pivoting::solve::solve_in_place_scratch::<usize, f64>(
                    n, 1, par,
                ),
            );
        DenseWork {
            lu: Mat::zeros(n, n),
            fwd: vec![0; n],
            bwd: vec![0; n],
            mem: MemBuffer::new(scratch),
            rhs: Mat::zeros(n, 1),
            par,
            factored: false,
        }
    }

    /// Factorises `jac` (partial pivoting, as `Mat::partial_piv_lu`).
    fn factor(&mut self, jac: MatRef<'_, f64>) {
        self.lu.copy_from(jac);
        pin_empty_rows(self.lu.as_mut(), f64::abs, |v| v);
        faer::linalg::lu::partial_pivoting::factor::lu_in_place(
            self.lu.as_mut(),
            &mut self.fwd,
            &mut self.bwd,
            self.par,
            MemStack::new(&mut self.mem),
            Default::default(),
        );
        self.factored = true;
    }

    /// `-J^{-1} g` from the last factorisation, `None` when not finite (singular `J`).
    fn newton_step(&mut self, g: &[f64]) -> Option<Vec<f64>> {
        let n = g.len();
        for (i, v) in g.iter().enumerate() {
            self.rhs[(i, 0)] = *v;
        }
        let perm = faer::perm::PermRef::new_checked(&self.fwd, &self.bwd, n);
        faer::linalg::lu::partial_pivoting::solve::solve_in_place_with_conj(
            self.lu.as_ref(),
            self.lu.as_ref(),
            perm,
            Conj::No,
            self.rhs.as_mut(),
            self.par,
            MemStack::new(&mut self.mem),
        );
        let p: Vec<f64> = (0..n).map(|i| -self.rhs[(i, 0)]).collect();
        p.iter().all(|v| v.is_finite()).then_some(p)
    }

    /// `out = op(J) v` with `op` the identity or the transpose.
    fn product(&self, jac: MatRef<'_, f64>, v: &[f64], out: &mut [f64]) {
        let n = v.len();
        let vc = MatRef::from_column_major_slice(v, n, 1);
        let oc = MatMut::from_column_major_slice_mut(out, n, 1);
        matmul(oc, Accum::Replace, jac, vc, 1.0, self.par);
    }
}

/// A dense Newton step longer than this many times `max(||x||, Cauchy step)` is taken as
/// coming from a (nearly) singular Jacobian and replaced by a Levenberg-Marquardt step.
const NEAR_SINGULAR_STEP: f64 = 1e3;

/// Puts the matrix's largest magnitude on the diagonal of every row that is empty (below
/// `1e-12` of it) before a factorisation. Such a row is an equation that holds identically,
/// e.g. the `h = 0` friction equation of a contact stuck all period, whose mean force no
/// equation fixes (its residual entry is zero too): with the pivot the step leaves that
/// unknown where it is, instead of a singular factorisation (and, in a preconditioner block,
/// a fallback to the identity for the whole block).
pub(crate) fn pin_empty_rows<T: Copy>(
    mut a: faer::MatMut<'_, T>,
    abs: impl Fn(T) -> f64,
    from: impl Fn(f64) -> T,
) {
    let n = a.nrows().min(a.ncols());
    let mut big = 0.0f64;
    let mut rows = vec![0.0f64; a.nrows()];
    for j in 0..a.ncols() {
        for (i, r) in rows.iter_mut().enumerate() {
            let v = abs(a[(i, j)]);
            *r = r.max(v);
            big = big.max(v);
        }
    }
    if !(big > 0.0 && big.is_finite()) {
        return;
    }
    for (i, &r) in rows.iter().enumerate().take(n) {
        if r <= 1e-12 * big {
            a[(i, i)] = from(big);
        }
    }
}

/// `-(J^T J + mu I)^{-1} J^T g` with `mu = 1e-10 ||J||_F^2 / n`: the Gauss-Newton step,
/// regularised along directions the equations do not determine. `None` if it fails.
fn levenberg_marquardt_step(jac: &Mat<f64>, g: &[f64], par: Par) -> Option<Vec<f64>> {
    let n = g.len();
    let mut jtj = Mat::<f64>::zeros(n, n);
    matmul(
        jtj.as_mut(),
        Accum::Replace,
        jac.transpose(),
        jac.as_ref(),
        1.0,
        par,
    );
    let fro: f64 = (0..n).map(|i| jtj[(i, i)]).sum();
    let mu = 1e-10 * fro / n.max(1) as f64;
    if !(mu > 0.0 && mu.is_finite()) {
        return None;
    }
    for i in 0..n {
        jtj[(i, i)] += mu;
    }
    let gc = MatRef::from_column_major_slice(g, n, 1);
    let mut rhs = Mat::<f64>::zeros(n, 1);
    matmul(rhs.as_mut(), Accum::Replace, jac.transpose(), gc, -1.0, par);
    use faer::linalg::solvers::Solve;
    let llt = jtj.llt(faer::Side::Lower).ok()?;
    let p = llt.solve(&rhs);
    let p: Vec<f64> = (0..n).map(|i| p[(i, 0)]).collect();
    p.iter().all(|v| v.is_finite()).then_some(p)
}

/// Relative tolerance of the polishing steps' GMRES solves with the last Jacobian: a polish
/// starts below the Newton tolerance, so four more digits reach rounding.
const POLISH_GMRES_RTOL: f64 = 1e-4;

/// Krylov vectors GMRES may spend with an older LU before a fresh factorisation is cheaper:
/// each costs two `n x n` triangular solves and one product (about `6 n^2` flops against the
/// `2 n^3 / 3` of a factorisation, so 40 of them are 2 % of one at 3600 unknowns, memory
/// traffic aside).
const OLD_LU_GMRES_MAX: usize = 40;

/// `J` (assembled, current) with the LU of an earlier Jacobian as preconditioner: the Newton
/// system of a large dense step solved by GMRES. The stick/slip pattern of a friction contact
/// changes at a few samples from one Newton step to the next, so `J_old^{-1} J` is the
/// identity plus a low-rank part and GMRES needs a few products where a new LU costs `n^3`.
struct OldLu<'a> {
    jac: MatRef<'a, f64>,
    work: &'a mut DenseWork,
}

impl Residual for OldLu<'_> {
    fn len(&self) -> usize {
        self.jac.nrows()
    }

    fn evaluate(
        &mut self,
        _: &[f64],
        _: &mut [f64],
        _: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        Err(EvalError("a linear operator has no residual".into()))
    }

    fn supports_matrix_free(&self) -> bool {
        true
    }

    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        self.work.product(self.jac, v, out);
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        // newton_step gives -J_old^{-1} v.
        let p = self
            .work
            .newton_step(v)
            .ok_or_else(|| EvalError("the old factorisation is singular".into()))?;
        v.iter_mut().zip(p).for_each(|(a, b)| *a = -b);
        Ok(())
    }
}

/// Newton step by dense LU, gradient and products by dense matrix-vector products. With
/// `reuse` (a relative tolerance, the Newton forcing term) and an earlier factorisation at
/// hand, the step is first sought by GMRES preconditioned with it ([`OldLu`]); only if that
/// does not converge within [`OLD_LU_GMRES_MAX`] products is `J` factorised.
/// `krylov_iterations` counts the products.
///
/// A singular or ill-conditioned Jacobian gives a non-finite Newton step; the steepest-descent
/// direction is then used alone, which always exists while the gradient is non-zero.
fn linearize_dense(
    jac: &Mat<f64>,
    g: &[f64],
    x_norm: f64,
    work: &mut DenseWork,
    reuse: Option<f64>,
    krylov_iterations: &mut usize,
) -> Linearization {
    let n = g.len();
    let mut newton = None;
    if let (Some(rtol), true) = (reuse, work.factored) {
        let rhs: Vec<f64> = g.iter().map(|v| -v).collect();
        let opts = KrylovOptions {
            restart: OLD_LU_GMRES_MAX,
            max_iterations: OLD_LU_GMRES_MAX,
            ..KrylovOptions::default()
        };
        let mut op = OldLu {
            jac: jac.as_ref(),
            work,
        };
        if let Ok(sol) = gmres(&mut op, &rhs, rtol, &opts) {
            *krylov_iterations += sol.iterations;
            if sol.converged && sol.x.iter().all(|v| v.is_finite()) {
                newton = Some(sol.x);
            }
        }
    }
    if newton.is_none() {
        work.factor(jac.as_ref());
        newton = work.newton_step(g);
    }
    let mut grad = vec![0.0; n];
    work.product(jac.transpose(), g, &mut grad);
    let mut j_grad = vec![0.0; n];
    work.product(jac.as_ref(), &grad, &mut j_grad);
    // A (nearly) rank-deficient J, e.g. the mean friction force of a contact stuck all
    // period, which no equation fixes, gives a Newton step that is huge along the null
    // space; the dogleg then crawls along it. The Levenberg-Marquardt step (nearly the
    // minimum-norm Gauss-Newton step) keeps what the equations decide and leaves the rest.
    let cauchy = {
        let (gs, js) = (norm(&grad).powi(2), norm(&j_grad).powi(2));
        if js > 0.0 { gs / js * gs.sqrt() } else { 0.0 }
    };
    let too_long = newton
        .as_ref()
        .is_none_or(|p| norm(p) > NEAR_SINGULAR_STEP * x_norm.max(cauchy));
    if too_long && let Some(p) = levenberg_marquardt_step(jac, g, work.par) {
        newton = Some(p);
    }
    let mut j_newton = vec![0.0; n];
    if let Some(p) = &newton {
        work.product(jac.as_ref(), p, &mut j_newton);
    }
    Linearization {
        newton,
        j_newton,
        grad,
        j_grad,
    }
}

/// After convergence, steps with the last assembled Jacobian while they keep halving the
/// residual, down to four digits below the tolerance: the root to rounding, as full Newton
/// steps with fresh factorisations would give.
fn polish_root(
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
fn chord_steps(
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

/// Newton step by preconditioned GMRES, gradient by one transpose product.
fn linearize_matrix_free(
    system: &mut dyn Residual,
    g: &[f64],
    eta: f64,
    opts: &KrylovOptions,
    krylov_iterations: &mut usize,
) -> Result<Linearization, EvalError> {
    let n = g.len();
    let mut grad = vec![0.0; n];
    system.jacobian_transpose_product(g, &mut grad)?;
    let mut j_grad = vec![0.0; n];
    system.jacobian_product(&grad, &mut j_grad)?;
    let rhs: Vec<f64> = g.iter().map(|v| -v).collect();
    let sol = gmres(system, &rhs, eta, opts)?;
    *krylov_iterations += sol.iterations;
    let newton = sol.x.iter().all(|v| v.is_finite()).then_some(sol.x);
    let mut j_newton = vec![0.0; n];
    if let Some(p) = &newton {
        system.jacobian_product(p, &mut j_newton)?;
    }
    Ok(Linearization {
        newton,
        j_newton,
        grad,
        j_grad,
    })
}

/// Result of a GMRES solve.
pub struct GmresSolution {
    /// The approximate solution (the best found, also when not converged).
    pub x: Vec<f64>,
    /// Matrix-vector products spent in the Arnoldi process.
    pub iterations: usize,
    /// Relative residual `||b - A x|| / ||b||` (as estimated by the Arnoldi recursion).
    pub relative_residual: f64,
    /// True when `relative_residual <= rtol`.
    pub converged: bool,
}

/// Restarted GMRES(m) for `J x = b` with right preconditioning `J M^{-1} y = b`,
/// `x = M^{-1} y`, where `J` and `M^{-1}` are the system's
/// [`jacobian_product`](Residual::jacobian_product) and [`precondition`](Residual::precondition)
/// at its last linearisation. Modified Gram-Schmidt with one reorthogonalisation pass, Givens
/// rotations; the preconditioned vectors are stored (flexible form), so a preconditioner that
/// varies between calls is also allowed. Starts from `x = 0`. Stops early, not converged,
/// when [`KrylovOptions::stagnation_window`] products do not halve the residual.
pub fn gmres(
    system: &mut dyn Residual,
    b: &[f64],
    rtol: f64,
    opts: &KrylovOptions,
) -> Result<GmresSolution, EvalError> {
    let n = b.len();
    let bnorm = norm(b);
    let mut x = vec![0.0; n];
    if bnorm == 0.0 {
        return Ok(GmresSolution {
            x,
            iterations: 0,
            relative_residual: 0.0,
            converged: true,
        });
    }
    let m = opts.restart.max(1);
    let mut r = b.to_vec();
    let mut beta = bnorm;
    let mut total = 0;
    let mut w = vec![0.0; n];
    // The residual estimate after each product, to notice stagnation.
    let mut history: Vec<f64> = Vec::new();
    let mut stagnated = false;
    loop {
        let mut v: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        let mut z: Vec<Vec<f64>> = Vec::with_capacity(m);
        v.push(r.iter().map(|x| x / beta).collect());
        // Hessenberg columns (j + 2 entries each), rotations and the rotated rhs.
        let mut h: Vec<Vec<f64>> = Vec::with_capacity(m);
        let (mut cs, mut sn): (Vec<f64>, Vec<f64>) = (Vec::with_capacity(m), Vec::with_capacity(m));
        let mut s = vec![0.0; m + 1];
        s[0] = beta;
        let mut k = 0;
        let mut resid = beta;
        while k < m && total < opts.max_iterations {
            let mut zk = v[k].clone();
            system.precondition(&mut zk)?;
            system.jacobian_product(&zk, &mut w)?;
            z.push(zk);
            total += 1;
            let mut hk = vec![0.0; k + 2];
            for _pass in 0..2 {
                for (i, vi) in v.iter().enumerate() {
                    let d: f64 = vi.iter().zip(&w).map(|(a, b)| a * b).sum();
                    hk[i] += d;
                    w.iter_mut().zip(vi).for_each(|(a, b)| *a -= d * b);
                }
            }
            let wn = norm(&w);
            hk[k + 1] = wn;
            for i in 0..k {
                let t = cs[i] * hk[i] + sn[i] * hk[i + 1];
                hk[i + 1] = -sn[i] * hk[i] + cs[i] * hk[i + 1];
                hk[i] = t;
            }
            let den = (hk[k] * hk[k] + hk[k + 1] * hk[k + 1]).sqrt();
            let (c, sgn) = if den == 0.0 {
                (1.0, 0.0)
            } else {
                (hk[k] / den, hk[k + 1] / den)
            };
            hk[k] = den;
            hk[k + 1] = 0.0;
            s[k + 1] = -sgn * s[k];
            s[k] *= c;
            cs.push(c);
            sn.push(sgn);
            h.push(hk);
            k += 1;
            resid = s[k].abs();
            history.push(resid);
            if resid <= rtol * bnorm || wn <= 1e-14 * beta || !resid.is_finite() {
                break;
            }
            if stagnating(&history, opts.stagnation_window) {
                stagnated = true;
                break;
            }
            v.push(w.iter().map(|x| x / wn).collect());
        }
        // Back substitution for y, then x += Z y.
        let mut y = vec![0.0; k];
        for i in (0..k).rev() {
            let mut acc = s[i];
            for j in i + 1..k {
                acc -= h[j][i] * y[j];
            }
            y[i] = if h[i][i] != 0.0 { acc / h[i][i] } else { 0.0 };
        }
        for (zj, yj) in z.iter().zip(&y) {
            x.iter_mut().zip(zj).for_each(|(a, b)| *a += yj * b);
        }
        let converged = resid <= rtol * bnorm;
        if converged || stagnated || total >= opts.max_iterations || !resid.is_finite() || k < m {
            return Ok(GmresSolution {
                x,
                iterations: total,
                relative_residual: resid / bnorm,
                converged,
            });
        }
        // Restart from the true residual.
        system.jacobian_product(&x, &mut w)?;
        r.iter_mut()
            .zip(b)
            .zip(&w)
            .for_each(|((r, b), w)| *r = b - w);
        beta = norm(&r);
        if beta <= rtol * bnorm {
            return Ok(GmresSolution {
                x,
                iterations: total,
                relative_residual: beta / bnorm,
                converged: true,
            });
        }
    }
}

/// True when the last `window` products (0: never) did not halve the residual.
///
/// A singular Jacobian with `g` outside its range (a contact stuck all period leaves its mean
/// friction force free, docs/contact-3d.md pitfall 3) stalls GMRES at the least-squares
/// residual: the products up to `max_iterations` only cost time (17 s per Newton step on the
/// 200-contact 3-D sector); the best step so far goes to the trust region instead.
fn stagnating(history: &[f64], window: usize) -> bool {
    let k = history.len();
    window > 0 && k > window && history[k - 1] > 0.5 * history[k - 1 - window]
}

/// A dogleg step and `||g + J p||^2`, the squared residual the linear model predicts.
struct Step {
    p: Vec<f64>,
    model_norm_sq: f64,
}

/// Powell's dogleg: Newton if inside the radius, else Cauchy-to-Newton on the boundary; the
/// steepest-descent step alone when there is no Newton step. `J p` is combined from the
/// stored `J p_N` and `J grad`, so no product is needed here.
fn dogleg(lin: &Linearization, g: &[f64], radius: f64) -> Step {
    let n = g.len();
    let grad = &lin.grad;
    let grad_sq = dot(grad, grad);
    let jg_sq = dot(&lin.j_grad, &lin.j_grad);
    let cauchy_len = if jg_sq > 0.0 { grad_sq / jg_sq } else { 0.0 };
    // p = a * grad + b * p_N, J p = a * J grad + b * J p_N.
    let (a, b) = match &lin.newton {
        Some(pn) if norm(pn) <= radius => (0.0, 1.0),
        Some(pn) => {
            let cn = cauchy_len * grad_sq.sqrt();
            if cn >= radius {
                (-cauchy_len * radius / cn, 0.0)
            } else {
                // Point on the segment cauchy -> newton at distance `radius` from the origin.
                let cauchy: Vec<f64> = grad.iter().map(|v| -cauchy_len * v).collect();
                let d: Vec<f64> = pn.iter().zip(&cauchy).map(|(a, b)| a - b).collect();
                let (qa, qb, qc) = (
                    dot(&d, &d),
                    2.0 * dot(&cauchy, &d),
                    dot(&cauchy, &cauchy) - radius * radius,
                );
                let tau = (-qb + (qb * qb - 4.0 * qa * qc).max(0.0).sqrt()) / (2.0 * qa);
                (-cauchy_len * (1.0 - tau), tau)
            }
        }
        None => {
            let gn = grad_sq.sqrt();
            if gn == 0.0 {
                (0.0, 0.0)
            } else {
                (-cauchy_len.min(radius / gn), 0.0)
            }
        }
    };
    let zero = vec![0.0; n];
    let pn = lin.newton.as_deref().unwrap_or(&zero);
    let p: Vec<f64> = (0..n).map(|i| a * grad[i] + b * pn[i]).collect();
    let model_norm_sq = (0..n)
        .map(|i| {
            let r = g[i] + a * lin.j_grad[i] + b * lin.j_newton[i];
            r * r
        })
        .sum();
    Step { p, model_norm_sq }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unilateral::STAGNATION_WINDOW_3D;

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

    /// `J = diag(d)` as a matrix-free system.
    struct Diagonal(Vec<f64>);

    impl Residual for Diagonal {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn evaluate(
            &mut self,
            _: &[f64],
            _: &mut [f64],
            _: Option<MatMut<'_, f64>>,
        ) -> Result<(), EvalError> {
            Ok(())
        }
        fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
            for ((o, d), x) in out.iter_mut().zip(&self.0).zip(v) {
                *o = d * x;
            }
            Ok(())
        }
    }

    #[test]
    fn gmres_stops_at_the_least_squares_residual_of_a_singular_system() {
        // A zero eigenvalue with b partly along it (a contact stuck all period): no Krylov
        // vector removes that part, so GMRES cannot reach rtol. It must stop soon after the
        // rest is solved instead of spending every product it is allowed.
        let n = 400;
        let d: Vec<f64> = (0..n).map(|i| i as f64 / 10.0).collect();
        let b: Vec<f64> = (0..n).map(|i| if i == 0 { 1.0 } else { 0.05 }).collect();
        let opts = KrylovOptions {
            max_iterations: 2000,
            stagnation_window: STAGNATION_WINDOW_3D,
            ..KrylovOptions::default()
        };
        let sol = gmres(&mut Diagonal(d.clone()), &b, 1e-10, &opts).unwrap();
        assert!(!sol.converged);
        assert!(sol.iterations < 200, "{} products", sol.iterations);
        // What is left is the part GMRES cannot reach: |b_0| / |b|, to within a few percent.
        let floor = 1.0 / norm(&b);
        assert!(
            sol.relative_residual < 1.05 * floor && sol.relative_residual >= floor * (1.0 - 1e-9),
            "{} vs {floor}",
            sol.relative_residual
        );
        // A regular system is unaffected: it converges to rtol.
        let mut regular = d.clone();
        regular[0] = 0.05;
        let sol = gmres(&mut Diagonal(regular), &b, 1e-10, &opts).unwrap();
        assert!(sol.converged, "{}", sol.relative_residual);
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
