//! Shift-invert Lanczos in the `M` inner product with full reorthogonalisation: the lowest
//! eigenpairs of `K phi = lambda M phi` for a consistent (non-diagonal, possibly singular) `M`.
//!
//! The operator `Op = (K - sigma M)^{-1} M` is self-adjoint in `<x, y>_M = x^T M y`, with
//! eigenvalues `theta = 1 / (lambda - sigma)`; the largest `theta` are the lowest `lambda`.
//! Every Lanczos vector lies in the range of `Op`, on which `<.,.>_M` is a true inner product
//! even when `M` is singular (if `x = Op v` and `x^T M x = 0` then `M x = 0`, so
//! `v^T M (K - sigma M)^{-1} M v = 0` and `M v = 0`, `x = 0`). Massless DOFs therefore never
//! produce the infinite eigenvalues they would in the pencil; the vectors carry them as
//! statically condensed slaves.

use faer::sparse::SparseColMatRef;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::{Accum, Mat, MatMut, MatRef, Side};

use super::ReceptanceError;

/// Deterministic start vectors (xorshift64*), so that results do not vary between runs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// The lowest `nev` eigenpairs, `lambda` ascending and `phi` (`n x nev`) `M`-orthonormal.
pub(crate) struct LanczosModes {
    pub lambda: Vec<f64>,
    pub phi: Mat<f64>,
}

/// `M x` for a block of vectors.
fn m_mul(mass: SparseColMatRef<'_, usize, f64>, x: MatRef<'_, f64>) -> Mat<f64> {
    let mut z = Mat::zeros(x.nrows(), x.ncols());
    sparse_dense_matmul(z.as_mut(), Accum::Replace, mass, x, 1.0, super::par());
    z
}

/// `M`-orthogonalises `x` (`n x 1`) against the columns of `q` (twice: "twice is enough")
/// and returns its `M`-norm afterwards.
fn orthogonalise(
    mass: SparseColMatRef<'_, usize, f64>,
    q: MatRef<'_, f64>,
    x: &mut Mat<f64>,
) -> f64 {
    let par = super::par();
    for _ in 0..2 {
        if q.ncols() == 0 {
            break;
        }
        let z = m_mul(mass, x.as_ref());
        let mut c = Mat::zeros(q.ncols(), 1);
        faer::linalg::matmul::matmul(
            c.as_mut(),
            Accum::Replace,
            q.transpose(),
            z.as_ref(),
            1.0,
            par,
        );
        faer::linalg::matmul::matmul(x.as_mut(), Accum::Add, q, c.as_ref(), -1.0, par);
    }
    let z = m_mul(mass, x.as_ref());
    let d: f64 = (0..x.nrows()).map(|i| x[(i, 0)] * z[(i, 0)]).sum();
    d.max(0.0).sqrt()
}

/// Lowest `nev` modes of `(K, M)` given `solve`, which overwrites its argument with
/// `(K - sigma M)^{-1}` times it (a positive definite factorisation).
///
/// `rank_bound` bounds the number of finite eigenvalues (the DOFs with mass); if the Krylov
/// space is exhausted before `nev` modes, all finite modes are returned.
pub(crate) fn lowest_modes(
    solve: &dyn Fn(MatMut<'_, f64>),
    mass: SparseColMatRef<'_, usize, f64>,
    rank_bound: usize,
    nev: usize,
    sigma: f64,
    tol: f64,
) -> Result<LanczosModes, ReceptanceError> {
    let n = mass.nrows();
    let nev = nev.min(rank_bound);
    if nev == 0 {
        return Ok(LanczosModes {
            lambda: Vec::new(),
            phi: Mat::zeros(n, 0),
        });
    }
    // Maximum Krylov dimension: generous for a shift-invert at the bottom of the spectrum
    // (about 1.5 nev + 20 usually suffice), bounded by the number of finite eigenvalues.
    let p_max = rank_bound.min(3 * nev + 100);
    let step = (nev / 4).max(10);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Columns of Q stored contiguously (column-major) so that Q is a faer view.
    let mut q: Vec<f64> = Vec::with_capacity(n * p_max.min(2 * nev + 40));
    let mut alpha: Vec<f64> = Vec::new();
    let mut beta: Vec<f64> = Vec::new();

    // A start (or restart) vector in the range of Op, M-orthonormal to Q; None if the Krylov
    // space already spans the whole range (all finite modes found).
    let new_start = |rng: &mut Rng, q: &[f64]| -> Option<Mat<f64>> {
        for _ in 0..3 {
            let v = Mat::from_fn(n, 1, |_, _| rng.next());
            let mut x = m_mul(mass, v.as_ref());
            solve(x.as_mut());
            let before = orthogonalise(mass, MatRef::from_column_major_slice(&[], n, 0), &mut x);
            if before == 0.0 || !before.is_finite() {
                continue;
            }
            let j = q.len() / n;
            let after = orthogonalise(mass, MatRef::from_column_major_slice(q, n, j), &mut x);
            if after > 1e-8 * before {
                return Some(Mat::from_fn(n, 1, |i, _| x[(i, 0)] / after));
            }
        }
        None
    };

    let Some(q0) = new_start(&mut rng, &q) else {
        return Err(ReceptanceError::Lanczos(
            "M (K - sigma M)^-1 M is zero: the model has no mass".into(),
        ));
    };
    q.extend((0..n).map(|i| q0[(i, 0)]));
    loop {
        let j = q.len() / n;
        let qj = MatRef::from_column_major_slice(&q[(j - 1) * n..], n, 1);
        let z = m_mul(mass, qj);
        let mut x = z.clone();
        solve(x.as_mut());
        let a: f64 = (0..n).map(|i| z[(i, 0)] * x[(i, 0)]).sum();
        if !a.is_finite() {
            return Err(ReceptanceError::Lanczos(
                "non-finite Lanczos coefficient".into(),
            ));
        }
        alpha.push(a);
        // Full reorthogonalisation also removes the alpha q_j and beta q_{j-1} components.
        let b = orthogonalise(mass, MatRef::from_column_major_slice(&q, n, j), &mut x);
        let theta_max = alpha.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let breakdown = b <= 1e-12 * theta_max;
        let check = breakdown || j >= p_max || (j >= nev && (j - nev).is_multiple_of(step));
        if check {
            let (theta, y) = tridiagonal_eigen(&alpha, &beta)?;
            let last_beta = if breakdown { 0.0 } else { b };
            let k = nev.min(j);
            let converged = k == nev
                && (0..k).all(|i| {
                    (last_beta * y[(j - 1, i)]).abs()
                        <= tol * theta[i].abs() + 1e3 * f64::EPSILON * theta_max
                });
            if converged {
                return Ok(ritz(&q, n, j, &theta, &y, k, sigma));
            }
            if j >= p_max {
                if j == rank_bound {
                    // The space spans every finite mode: the Ritz pairs are exact.
                    return Ok(ritz(&q, n, j, &theta, &y, k, sigma));
                }
                return Err(ReceptanceError::Lanczos(format!(
                    "{nev} modes not converged with {j} Lanczos vectors"
                )));
            }
        }
        if breakdown {
            // Invariant subspace found: restart with a fresh vector orthogonal to it.
            match new_start(&mut rng, &q) {
                Some(v) => {
                    beta.push(0.0);
                    q.extend((0..n).map(|i| v[(i, 0)]));
                }
                None => {
                    let (theta, y) = tridiagonal_eigen(&alpha, &beta)?;
                    let k = nev.min(j);
                    return Ok(ritz(&q, n, j, &theta, &y, k, sigma));
                }
            }
        } else {
            beta.push(b);
            q.extend((0..n).map(|i| x[(i, 0)] / b));
        }
    }
}

/// Eigenpairs of the symmetric tridiagonal `T`, `theta` descending.
fn tridiagonal_eigen(alpha: &[f64], beta: &[f64]) -> Result<(Vec<f64>, Mat<f64>), ReceptanceError> {
    let j = alpha.len();
    let t = Mat::from_fn(j, j, |r, c| {
        if r == c {
            alpha[r]
        } else if r == c + 1 {
            beta[c]
        } else if c == r + 1 {
            beta[r]
        } else {
            0.0
        }
    });
    let evd = t.self_adjoint_eigen(Side::Lower).map_err(|_| {
        ReceptanceError::Lanczos("the tridiagonal eigensolver did not converge".into())
    })?;
    // Ascending from faer; reverse to descending theta.
    let theta: Vec<f64> = (0..j).rev().map(|i| evd.S()[i]).collect();
    let u = evd.U();
    let y = Mat::from_fn(j, j, |r, c| u[(r, j - 1 - c)]);
    Ok((theta, y))
}

/// The `k` leading Ritz pairs as modes, `lambda` ascending.
fn ritz(
    q: &[f64],
    n: usize,
    j: usize,
    theta: &[f64],
    y: &Mat<f64>,
    k: usize,
    sigma: f64,
) -> LanczosModes {
    let qm = MatRef::from_column_major_slice(&q[..n * j], n, j);
    let mut phi = Mat::zeros(n, k);
    faer::linalg::matmul::matmul(
        phi.as_mut(),
        Accum::Replace,
        qm,
        y.as_ref().subcols(0, k),
        1.0,
        super::par(),
    );
    // theta descending -> lambda = sigma + 1/theta ascending (theta > 0 for an SPD shift).
    let lambda = theta[..k].iter().map(|t| sigma + 1.0 / t).collect();
    LanczosModes { lambda, phi }
}
