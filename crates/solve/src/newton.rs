//! Newton's method with a Powell dogleg trust region, for square nonlinear systems g(x) = 0.
//!
//! This is the globalisation the E-WR paper uses (MATLAB's `fsolve`, trust-region dogleg):
//! the Newton step when it lies inside the trust region, otherwise a blend of the Cauchy
//! (steepest-descent) step and the Newton step on the region's boundary. The E-WR residual is
//! only piecewise smooth, so the "Jacobian" is a generalised one; the trust region is what
//! keeps Newton from cycling between the pieces.
//!
//! The solver sees only a [`Residual`]: the physics lives in the caller.

use faer::linalg::solvers::Solve;
use faer::{Mat, MatMut};
use std::fmt;

/// A square nonlinear system `g(x) = 0` with a (generalised) Jacobian.
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
    /// Converged when `||g(x)||_2 <= tol_residual`.
    pub tol_residual: f64,
    /// Stop when a step is shorter than `tol_step * (||x||_2 + tol_step)`.
    pub tol_step: f64,
    /// Largest number of Jacobian evaluations (Newton iterations).
    pub max_iterations: usize,
    /// Initial trust radius as a multiple of `max(||x0||_2, 1)` (MINPACK's `factor`).
    pub initial_radius_factor: f64,
}

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            tol_residual: 1e-10,
            tol_step: 1e-14,
            max_iterations: 200,
            initial_radius_factor: 100.0,
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
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Solves `g(x) = 0` from `x0` by trust-region dogleg Newton.
pub fn solve(system: &mut dyn Residual, x0: &[f64], opts: &NewtonOptions) -> NewtonReport {
    let n = system.len();
    let mut x = x0.to_vec();
    let mut g = vec![0.0; n];
    let mut jac = Mat::<f64>::zeros(n, n);
    let report = |x: Vec<f64>, residual, iterations, evaluations, status| NewtonReport {
        x,
        residual,
        iterations,
        evaluations,
        status,
    };
    if x0.len() != n {
        let msg = format!("start vector has {} entries, the system {n}", x0.len());
        return report(x, f64::NAN, 0, 0, NewtonStatus::EvaluationFailed(msg));
    }
    let mut evaluations = 0;
    let mut trial = vec![0.0; n];
    let mut g_trial = vec![0.0; n];
    let mut radius = opts.initial_radius_factor * norm(&x).max(1.0);
    let mut fresh_jacobian = false;
    let mut gnorm = f64::INFINITY;
    for iteration in 0..=opts.max_iterations {
        if !fresh_jacobian {
            evaluations += 1;
            if let Err(e) = system.evaluate(&x, &mut g, Some(jac.as_mut())) {
                return report(
                    x,
                    gnorm,
                    iteration,
                    evaluations,
                    NewtonStatus::EvaluationFailed(e.0),
                );
            }
            gnorm = norm(&g);
            fresh_jacobian = true;
        }
        if !gnorm.is_finite() {
            let msg = "the residual is not finite".to_string();
            return report(
                x,
                gnorm,
                iteration,
                evaluations,
                NewtonStatus::EvaluationFailed(msg),
            );
        }
        if gnorm <= opts.tol_residual {
            return report(x, gnorm, iteration, evaluations, NewtonStatus::Converged);
        }
        if iteration == opts.max_iterations {
            break;
        }
        let step = dogleg(&jac, &g, radius);
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
            fresh_jacobian = false;
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
            if !fresh_jacobian && gnorm <= opts.tol_residual {
                return report(
                    x,
                    gnorm,
                    iteration + 1,
                    evaluations,
                    NewtonStatus::Converged,
                );
            }
            return report(x, gnorm, iteration + 1, evaluations, NewtonStatus::Stalled);
        }
    }
    report(
        x,
        gnorm,
        opts.max_iterations,
        evaluations,
        NewtonStatus::MaxIterations,
    )
}

/// A dogleg step and `||g + J p||^2`, the squared residual the linear model predicts.
struct Step {
    p: Vec<f64>,
    model_norm_sq: f64,
}

/// Powell's dogleg: Newton if inside the radius, else Cauchy-to-Newton on the boundary.
///
/// A singular or ill-conditioned Jacobian gives a non-finite Newton step; the steepest-descent
/// direction is then used alone, which always exists while the gradient is non-zero.
fn dogleg(jac: &Mat<f64>, g: &[f64], radius: f64) -> Step {
    let n = g.len();
    let gcol = faer::Col::<f64>::from_fn(n, |i| g[i]);
    let newton: Option<Vec<f64>> = {
        let lu = jac.partial_piv_lu();
        let s = lu.solve(&gcol);
        let p: Vec<f64> = (0..n).map(|i| -s[i]).collect();
        p.iter().all(|v| v.is_finite()).then_some(p)
    };
    // Gradient of ||g||^2 / 2 and the Cauchy point along it.
    let grad = jac.transpose() * &gcol;
    let jg = jac * &grad;
    let grad_sq = grad.squared_norm_l2();
    let jg_sq = jg.squared_norm_l2();
    let cauchy_len = if jg_sq > 0.0 { grad_sq / jg_sq } else { 0.0 };
    let cauchy: Vec<f64> = (0..n).map(|i| -cauchy_len * grad[i]).collect();
    let p = match newton {
        Some(pn) if norm(&pn) <= radius => pn,
        Some(pn) => {
            let cn = norm(&cauchy);
            if cn >= radius {
                scaled(&cauchy, radius / cn)
            } else {
                // Point on the segment cauchy -> newton at distance `radius` from the origin.
                let d: Vec<f64> = pn.iter().zip(&cauchy).map(|(a, b)| a - b).collect();
                let (a, b, c) = (
                    dot(&d, &d),
                    2.0 * dot(&cauchy, &d),
                    dot(&cauchy, &cauchy) - radius * radius,
                );
                let tau = (-b + (b * b - 4.0 * a * c).max(0.0).sqrt()) / (2.0 * a);
                cauchy.iter().zip(&d).map(|(c, d)| c + tau * d).collect()
            }
        }
        None => {
            let gn = norm(&grad.iter().copied().collect::<Vec<_>>());
            if gn == 0.0 {
                vec![0.0; n]
            } else {
                let len = cauchy_len.min(radius / gn);
                (0..n).map(|i| -len * grad[i]).collect()
            }
        }
    };
    let pcol = faer::Col::<f64>::from_fn(n, |i| p[i]);
    let model = jac * &pcol + &gcol;
    Step {
        p,
        model_norm_sq: model.squared_norm_l2(),
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn scaled(v: &[f64], s: f64) -> Vec<f64> {
    v.iter().map(|x| s * x).collect()
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
