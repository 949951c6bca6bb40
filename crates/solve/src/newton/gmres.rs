//! The matrix-free (Newton-Krylov) path: restarted, right-preconditioned GMRES(m) on the
//! system's `J x` products, and the linearisation it gives the dogleg.

use super::{EvalError, KrylovOptions, Linearization, Residual, norm};

/// Newton step by preconditioned GMRES, gradient by one transpose product.
pub(super) fn linearize_matrix_free(
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

#[cfg(test)]
mod tests {
    use super::super::norm;
    use super::*;
    use crate::unilateral::STAGNATION_WINDOW_3D;
    use faer::MatMut;

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
}
