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

/// `M`-orthogonalises `x` (`n x 1`) against the columns of `q`, given `mq = M q`, and
/// returns `M x` with the `M`-norm of `x` afterwards.
///
/// Classical Gram-Schmidt, repeated once where a pass removed most of `x` (its `M`-norm fell
/// below `1/sqrt 2` of what it was: the DGKS criterion, after which a second pass is enough).
/// With the three-term recurrence subtracted first, one pass usually suffices. Each pass
/// reads the basis twice (`(M q)^T x`, then `q c`), which at a few hundred vectors costs more
/// than a factor solve; keeping `M q` saves a mass product per pass.
fn orthogonalise(
    mass: SparseColMatRef<'_, usize, f64>,
    q: MatRef<'_, f64>,
    mq: MatRef<'_, f64>,
    x: &mut Mat<f64>,
) -> (Mat<f64>, f64) {
    let par = super::par();
    let m_norm = |x: &Mat<f64>| {
        let z = m_mul(mass, x.as_ref());
        let d: f64 = (0..x.nrows()).map(|i| x[(i, 0)] * z[(i, 0)]).sum();
        (z, d.max(0.0).sqrt())
    };
    let (mut mx, mut norm) = m_norm(x);
    for _ in 0..2 {
        if q.ncols() == 0 {
            break;
        }
        let mut c = Mat::zeros(q.ncols(), 1);
        faer::linalg::matmul::matmul(
            c.as_mut(),
            Accum::Replace,
            mq.transpose(),
            x.as_ref(),
            1.0,
            par,
        );
        faer::linalg::matmul::matmul(x.as_mut(), Accum::Add, q, c.as_ref(), -1.0, par);
        let before = norm;
        (mx, norm) = m_norm(x);
        if norm >= std::f64::consts::FRAC_1_SQRT_2 * before {
            break;
        }
    }
    (mx, norm)
}

/// Lanczos vectors `Q` and their mass products `M Q`, stored column after column.
struct Basis {
    n: usize,
    q: Vec<f64>,
    mq: Vec<f64>,
}

impl Basis {
    fn len(&self) -> usize {
        self.q.len() / self.n
    }

    fn q(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.q, self.n, self.len())
    }

    fn mq(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.mq, self.n, self.len())
    }

    /// Appends `x / b` (and `M x / b`).
    fn push(&mut self, x: &Mat<f64>, mx: &Mat<f64>, b: f64) {
        self.q.extend((0..self.n).map(|i| x[(i, 0)] / b));
        self.mq.extend((0..self.n).map(|i| mx[(i, 0)] / b));
    }
}

/// Lowest `nev` modes of `(K, M)` given `solve`, which overwrites its argument with
/// `(K - sigma M)^{-1}` times it (a positive definite factorisation with `factor_len`
/// entries, which sets how often convergence is checked).
///
/// `rank_bound` bounds the number of finite eigenvalues (the DOFs with mass); if the Krylov
/// space is exhausted before `nev` modes, all finite modes are returned.
pub(crate) fn lowest_modes(
    solve: &dyn Fn(MatMut<'_, f64>),
    factor_len: usize,
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
    // Convergence is checked every `step` vectors: a check (the eigenpairs of a tridiagonal
    // of order p <= p_max, about 10 p^3 flops) costs little beside a vector (a factor solve,
    // about 4 flops per factor entry, and the reorthogonalisation, 4 n p) on large models,
    // so these check often and stop within a few vectors of convergence; small ones check
    // every nev / 4 vectors.
    let check_cost = 10.0 * (p_max as f64).powi(3);
    let vector_cost = 4.0 * (factor_len as f64 + (n * p_max) as f64);
    let step = ((check_cost / vector_cost).ceil() as usize).clamp(1, (nev / 4).max(10));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let reserve = n * p_max.min(2 * nev + 40);
    let mut basis = Basis {
        n,
        q: Vec::with_capacity(reserve),
        mq: Vec::with_capacity(reserve),
    };
    let mut alpha: Vec<f64> = Vec::new();
    let mut beta: Vec<f64> = Vec::new();

    // A start (or restart) vector in the range of Op, M-orthogonal to the basis, with its
    // mass product and M-norm; None if the Krylov space already spans the whole range (all
    // finite modes found).
    let new_start = |rng: &mut Rng, basis: &Basis| -> Option<(Mat<f64>, Mat<f64>, f64)> {
        let none = MatRef::from_column_major_slice(&[], n, 0);
        for _ in 0..3 {
            let v = Mat::from_fn(n, 1, |_, _| rng.next());
            let mut x = m_mul(mass, v.as_ref());
            solve(x.as_mut());
            let (_, before) = orthogonalise(mass, none, none, &mut x);
            if before == 0.0 || !before.is_finite() {
                continue;
            }
            let (mx, after) = orthogonalise(mass, basis.q(), basis.mq(), &mut x);
            if after > 1e-8 * before {
                return Some((x, mx, after));
            }
        }
        None
    };

    let Some((x0, mx0, b0)) = new_start(&mut rng, &basis) else {
        return Err(ReceptanceError::Lanczos(
            "M (K - sigma M)^-1 M is zero: the model has no mass".into(),
        ));
    };
    basis.push(&x0, &mx0, b0);
    loop {
        let j = basis.len();
        let z = basis.mq().col(j - 1).as_mat().to_owned();
        let mut x = z.clone();
        solve(x.as_mut());
        let a: f64 = (0..n).map(|i| z[(i, 0)] * x[(i, 0)]).sum();
        if !a.is_finite() {
            return Err(ReceptanceError::Lanczos(
                "non-finite Lanczos coefficient".into(),
            ));
        }
        alpha.push(a);
        // The three-term recurrence, then full reorthogonalisation against every vector.
        let q = basis.q();
        for i in 0..n {
            x[(i, 0)] -= a * q[(i, j - 1)];
        }
        if j >= 2 {
            let b_prev = beta[j - 2];
            for i in 0..n {
                x[(i, 0)] -= b_prev * q[(i, j - 2)];
            }
        }
        let (mx, b) = orthogonalise(mass, basis.q(), basis.mq(), &mut x);
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
                return Ok(ritz(basis.q(), &theta, &y, k, sigma));
            }
            if j >= p_max {
                if j == rank_bound {
                    // The space spans every finite mode: the Ritz pairs are exact.
                    return Ok(ritz(basis.q(), &theta, &y, k, sigma));
                }
                return Err(ReceptanceError::Lanczos(format!(
                    "{nev} modes not converged with {j} Lanczos vectors"
                )));
            }
        }
        if breakdown {
            // Invariant subspace found: restart with a fresh vector orthogonal to it.
            match new_start(&mut rng, &basis) {
                Some((v, mv, bv)) => {
                    beta.push(0.0);
                    basis.push(&v, &mv, bv);
                }
                None => {
                    let (theta, y) = tridiagonal_eigen(&alpha, &beta)?;
                    let k = nev.min(j);
                    return Ok(ritz(basis.q(), &theta, &y, k, sigma));
                }
            }
        } else {
            beta.push(b);
            basis.push(&x, &mx, b);
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
fn ritz(qm: MatRef<'_, f64>, theta: &[f64], y: &Mat<f64>, k: usize, sigma: f64) -> LanczosModes {
    let mut phi = Mat::zeros(qm.nrows(), k);
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
