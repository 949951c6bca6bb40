//! Shift-invert block Lanczos in the `M` inner product with full reorthogonalisation: the
//! lowest eigenpairs of `K phi = lambda M phi` for a consistent (non-diagonal, possibly
//! singular) `M`.
//!
//! The operator `Op = (K - sigma M)^{-1} M` is self-adjoint in `<x, y>_M = x^T M y`, with
//! eigenvalues `theta = 1 / (lambda - sigma)`; the largest `theta` are the lowest `lambda`.
//! Every Lanczos vector lies in the range of `Op`, on which `<.,.>_M` is a true inner product
//! even when `M` is singular (if `x = Op v` and `x^T M x = 0` then `M x = 0`, so
//! `v^T M (K - sigma M)^{-1} M v = 0` and `M v = 0`, `x = 0`). Massless DOFs therefore never
//! produce the infinite eigenvalues they would in the pencil; the vectors carry them as
//! statically condensed slaves.
//!
//! **Why blocks.** A factor solve reads the whole sparse factor for a few flops per entry: it
//! is bound by memory bandwidth, and on a 100 000-DOF model a solve with eight right-hand
//! sides costs about twice one with one (153 against 73 ms). The block recurrence advances
//! `b` vectors per solve (docs/performance.md, "Block Lanczos"); the block Krylov space needs
//! more vectors for the same modes (about 1.5 times with `b = 8`), and far fewer passes over
//! the factor. Small factors keep `b = 1`, the plain Lanczos recurrence.

use faer::sparse::SparseColMatRef;
use faer::{Accum, Mat, MatMut, MatRef};

use super::ReceptanceError;

/// Right-hand sides per factor solve on large factors (measured on the 108 000-DOF sector:
/// blocks of 4, 8, 12 and 16 took 13.3, 12.1, 12.7 and 12.7 s against 20.1 s for single
/// vectors; larger blocks need more vectors, 214 single against 328 in blocks of 8).
const BLOCK: usize = 8;
/// Factors with at least this many entries use blocks of [`BLOCK`] vectors: below it a solve
/// is cheap beside the reorthogonalisation, and single vectors need the fewest of them.
const BLOCK_MIN_FACTOR: usize = 1_000_000;

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
    super::symmetric_times(mass, x)
}

/// `M`-norm of each column of `x`, given `mx = M x`.
fn col_norms(x: MatRef<'_, f64>, mx: MatRef<'_, f64>) -> Vec<f64> {
    (0..x.ncols())
        .map(|j| {
            let d: f64 = (0..x.nrows()).map(|i| x[(i, j)] * mx[(i, j)]).sum();
            d.max(0.0).sqrt()
        })
        .collect()
}

/// Rows per task in the products with the basis: a chunk of a few hundred basis columns
/// stays in cache while its block of vectors is read.
const ROWS: usize = 1024;

/// `q^T x` (`q` tall, `x` a block), reading `q` once: row chunks in parallel, their partial
/// products summed in chunk order (the same result for any number of threads).
fn project(q: MatRef<'_, f64>, x: MatRef<'_, f64>) -> Mat<f64> {
    use rayon::prelude::*;
    let partial: Vec<Mat<f64>> = q
        .par_row_chunks(ROWS)
        .zip(x.par_row_chunks(ROWS))
        .map(|(qc, xc)| {
            let mut c = Mat::zeros(qc.ncols(), xc.ncols());
            faer::linalg::matmul::matmul(
                c.as_mut(),
                Accum::Replace,
                qc.transpose(),
                xc,
                1.0,
                faer::Par::Seq,
            );
            c
        })
        .collect();
    let mut c = Mat::zeros(q.ncols(), x.ncols());
    for p in &partial {
        c += p;
    }
    c
}

/// `x -= q c`, reading `q` once: row chunks in parallel.
fn subtract(q: MatRef<'_, f64>, c: MatRef<'_, f64>, x: MatMut<'_, f64>) {
    use rayon::prelude::*;
    x.par_row_chunks_mut(ROWS)
        .zip(q.par_row_chunks(ROWS))
        .for_each(|(xc, qc)| {
            faer::linalg::matmul::matmul(xc, Accum::Add, qc, c, -1.0, faer::Par::Seq);
        });
}

/// `M`-orthogonalises the columns of `x` against the columns of `q`, given `mq = M q`, and
/// returns `M x` afterwards.
///
/// Block classical Gram-Schmidt, repeated once where a pass removed most of a column (its
/// `M`-norm fell below `1/sqrt 2` of what it was: the DGKS criterion, after which a second
/// pass is enough; the norm before a pass is the norm after it and the coefficients', by
/// Pythagoras). With the three-term recurrence subtracted first, one pass usually suffices.
/// Each pass reads the basis twice (`(M q)^T x`, then `q c`), once for the whole block;
/// keeping `M q` saves a mass product per pass.
fn orthogonalise(
    mass: SparseColMatRef<'_, usize, f64>,
    q: MatRef<'_, f64>,
    mq: MatRef<'_, f64>,
    x: &mut Mat<f64>,
) -> Mat<f64> {
    for _ in 0..2 {
        if q.ncols() == 0 {
            break;
        }
        let c = project(mq, x.as_ref());
        subtract(q, c.as_ref(), x.as_mut());
        let mx = m_mul(mass, x.as_ref());
        let after = col_norms(x.as_ref(), mx.as_ref());
        let enough = (0..x.ncols()).all(|j| {
            let removed: f64 = (0..c.nrows()).map(|k| c[(k, j)] * c[(k, j)]).sum();
            after[j] * after[j] >= 0.5 * (after[j] * after[j] + removed)
        });
        if enough {
            return mx;
        }
    }
    m_mul(mass, x.as_ref())
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

    /// Appends columns. The storage grows by [`GROWTH`] columns at a time, not by doubling:
    /// at 100 000 DOFs a column pair is 1.6 MB, and a doubled basis would hold hundreds of
    /// megabytes it never fills.
    fn push(&mut self, x: MatRef<'_, f64>, mx: MatRef<'_, f64>) {
        let add = self.n * x.ncols();
        if self.q.capacity() < self.q.len() + add {
            self.q.reserve_exact(add.max(self.n * GROWTH));
            self.mq.reserve_exact(add.max(self.n * GROWTH));
            prefault(&mut self.q);
            prefault(&mut self.mq);
        }
        // Column slices copy at memory speed into pages mapped beforehand ([`prefault`]).
        let append = |dst: &mut Vec<f64>, col: faer::ColRef<'_, f64>| match col.try_as_col_major() {
            Some(c) => dst.extend_from_slice(c.as_slice()),
            None => dst.extend(col.iter().copied()),
        };
        for j in 0..x.ncols() {
            append(&mut self.q, x.col(j));
            append(&mut self.mq, mx.col(j));
        }
    }
}

/// Maps the pages of `v`'s spare capacity, on every thread. The kernel maps (and zeroes) a
/// page at its first write; left to [`Basis::push`]'s copies, that was one thread at under
/// 1 GB/s: 0.7-0.8 s of the 108 000-DOF sector's Lanczos (two bases of 300 MB) whatever the
/// thread count, now 0.4-0.5 s on two threads.
fn prefault(v: &mut Vec<f64>) {
    use rayon::prelude::*;
    // 512 doubles are a 4 KiB page; one write a page maps it.
    v.spare_capacity_mut()
        .par_chunks_mut(1 << 16)
        .for_each(|c| {
            c.iter_mut().step_by(512).for_each(|x| {
                x.write(0.0);
            })
        });
}

/// Columns by which the Lanczos basis grows once its first estimate is full.
const GROWTH: usize = 32;

/// A block made `M`-orthonormal: `x = Q B`.
struct Orthonormal {
    q: Mat<f64>,
    mq: Mat<f64>,
    /// `B` (`q.ncols() x x.ncols()`, upper trapezoidal).
    b: Mat<f64>,
}

/// `M`-orthonormalises the columns of `x` (already orthogonal to the basis) one after
/// another, given `mx = M x`: `x = Q B` with `Q^T M Q = I`. A column whose `M`-norm, once
/// the columns before it are taken out, is below `floor` is dropped (a rank-deficient block:
/// the Krylov space is invariant there), so `Q` may have fewer columns than `x`.
///
/// Column by column (Gram-Schmidt with the DGKS repeat, each norm from its own vector)
/// rather than from the block's Gram matrix: the Gram matrix squares the condition, and its
/// small directions, those of converged Ritz vectors, would come out with an absolute error
/// of `sqrt(eps)` of the block's norm, which the convergence test reads. `M v` follows the
/// vector by the same combinations, and is computed afresh where a pass cancelled most of
/// it. For one column this is `x / ||x||_M`, the plain Lanczos step.
fn orthonormalise(
    mass: SparseColMatRef<'_, usize, f64>,
    x: MatRef<'_, f64>,
    mx: MatRef<'_, f64>,
    floor: f64,
) -> Orthonormal {
    use rayon::prelude::*;
    let (n, w) = (x.nrows(), x.ncols());
    let mut q = Mat::<f64>::zeros(n, w);
    let mut mq = Mat::<f64>::zeros(n, w);
    let mut b = Mat::<f64>::zeros(w, w);
    let mut kept = 0;
    // Sums in index order, as `col_norms`; the updates, element by element, on every thread.
    let dot = |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
    let axpy = |y: &mut [f64], a: f64, x: &[f64]| {
        y.par_chunks_mut(ROWS)
            .zip(x.par_chunks(ROWS))
            .for_each(|(y, x)| y.iter_mut().zip(x).for_each(|(y, x)| *y -= a * x));
    };
    for c in 0..w {
        let mut v: Vec<f64> = x.col(c).iter().copied().collect();
        let mut mv: Vec<f64> = mx.col(c).iter().copied().collect();
        let mut norm = dot(&v, &mv).max(0.0).sqrt();
        for _ in 0..2 {
            if kept == 0 {
                break;
            }
            for k in 0..kept {
                let coef = dot(mq.col_as_slice(k), &v);
                b[(k, c)] += coef;
                axpy(&mut v, coef, q.col_as_slice(k));
                axpy(&mut mv, coef, mq.col_as_slice(k));
            }
            let before = norm;
            norm = dot(&v, &mv).max(0.0).sqrt();
            if norm >= std::f64::consts::FRAC_1_SQRT_2 * before {
                break;
            }
            mv = m_mul(mass, MatRef::from_column_major_slice(&v, n, 1))
                .col_as_slice(0)
                .to_vec();
            norm = dot(&v, &mv).max(0.0).sqrt();
        }
        if norm > floor && norm.is_finite() {
            b[(kept, c)] = norm;
            let scale = |dst: &mut [f64], src: &[f64]| {
                dst.par_chunks_mut(ROWS)
                    .zip(src.par_chunks(ROWS))
                    .for_each(|(d, s)| d.iter_mut().zip(s).for_each(|(d, s)| *d = s / norm));
            };
            scale(q.col_as_slice_mut(kept), &v);
            scale(mq.col_as_slice_mut(kept), &mv);
            kept += 1;
        }
    }
    Orthonormal {
        q: q.subcols(0, kept).to_owned(),
        mq: mq.subcols(0, kept).to_owned(),
        b: b.subrows(0, kept).to_owned(),
    }
}

/// Vectors per factor solve for a factor of `factor_len` entries ([`BLOCK`] from
/// [`BLOCK_MIN_FACTOR`], else 1).
pub(crate) fn block_size(factor_len: usize) -> usize {
    if factor_len >= BLOCK_MIN_FACTOR {
        BLOCK
    } else {
        1
    }
}

/// Lowest `nev` modes of `(K, M)` given `solve`, which overwrites its argument (any number
/// of columns) with `(K - sigma M)^{-1}` times it (a positive definite factorisation with
/// `factor_len` entries, which sets how often convergence is checked), `block` vectors per
/// solve ([`block_size`]).
///
/// `rank_bound` bounds the number of finite eigenvalues (the DOFs with mass); if the Krylov
/// space is exhausted before `nev` modes, all finite modes are returned.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lowest_modes(
    solve: &dyn Fn(MatMut<'_, f64>),
    factor_len: usize,
    mass: SparseColMatRef<'_, usize, f64>,
    rank_bound: usize,
    nev: usize,
    sigma: f64,
    tol: f64,
    block: usize,
) -> Result<LanczosModes, ReceptanceError> {
    let n = mass.nrows();
    let nev = nev.min(rank_bound);
    if nev == 0 {
        return Ok(LanczosModes {
            lambda: Vec::new(),
            phi: Mat::zeros(n, 0),
        });
    }
    let block = block.clamp(1, nev);
    // Maximum Krylov dimension: generous for a shift-invert at the bottom of the spectrum
    // (about 1.5 nev + 20 usually suffice, a few blocks more with blocks), bounded by the
    // number of finite eigenvalues.
    let p_max = rank_bound.min(3 * nev + 100 + 4 * block);
    // Convergence is checked every `step` vectors: a check (the eigenpairs of a matrix of
    // order p <= p_max, about 10 p^3 flops) costs little beside a vector (a factor solve,
    // about 4 flops per factor entry, shared by the block, and the reorthogonalisation,
    // 4 n p) on large models, so these check often and stop within a block or a few vectors
    // of convergence; small ones check every nev / 4 vectors.
    let check_cost = 10.0 * (p_max as f64).powi(3);
    let vector_cost = 4.0 * (factor_len as f64 / block as f64 + (n * p_max) as f64);
    let step = ((check_cost / vector_cost).ceil() as usize)
        .clamp(1, (nev / 4).max(10))
        .max(block);
    let timed_solve = |x: MatMut<'_, f64>| {
        let _t = crate::profile::span(crate::profile::Phase::LanczosSolve);
        solve(x)
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // The first estimate of the basis: single vectors take about 2 nev, blocks about 3 nev
    // (100 modes of the 108 000-DOF sector: 214, and 328 in blocks of 8). Growing past it
    // copies the basis, and the copy briefly holds both.
    let reserve = n * p_max.min(if block > 1 {
        3 * nev + 40
    } else {
        2 * nev + 40
    });
    let mut basis = Basis {
        n,
        q: Vec::with_capacity(reserve),
        mq: Vec::with_capacity(reserve),
    };
    prefault(&mut basis.q);
    prefault(&mut basis.mq);
    // The projected operator `Q^T M Op M Q`: block tridiagonal, filled as the blocks come.
    let dim = p_max + block;
    let mut t = Mat::<f64>::zeros(dim, dim);
    let mut theta_max = 0.0f64;

    // Up to `count` fresh vectors in the range of Op, M-orthonormal to the basis (fewer or
    // none once the Krylov space spans the whole range: all finite modes found).
    let fresh = |rng: &mut Rng, basis: &Basis, count: usize| -> Orthonormal {
        let v = Mat::from_fn(n, count, |_, _| rng.next());
        let mut x = m_mul(mass, v.as_ref());
        timed_solve(x.as_mut());
        let mx = m_mul(mass, x.as_ref());
        let before = col_norms(x.as_ref(), mx.as_ref());
        let scale = before.iter().fold(0.0f64, |a, &b| a.max(b));
        if !(scale > 0.0 && scale.is_finite()) {
            return Orthonormal {
                q: Mat::zeros(n, 0),
                mq: Mat::zeros(n, 0),
                b: Mat::zeros(0, count),
            };
        }
        let _t = crate::profile::span(crate::profile::Phase::Reorthogonalise);
        let mx = orthogonalise(mass, basis.q(), basis.mq(), &mut x);
        orthonormalise(mass, x.as_ref(), mx.as_ref(), 1e-8 * scale)
    };

    let start = fresh(&mut rng, &basis, block);
    if start.q.ncols() == 0 {
        return Err(ReceptanceError::Lanczos(
            "M (K - sigma M)^-1 M is zero: the model has no mass".into(),
        ));
    }
    basis.push(start.q.as_ref(), start.mq.as_ref());
    // The current block's first column and width, and the previous block's.
    let mut cur = (0, start.q.ncols());
    let mut prev: Option<(usize, usize)> = None;
    let mut last_check = 0;
    loop {
        let (s, w) = cur;
        let j = s + w;
        let z = basis.mq().subcols(s, w).to_owned();
        let mut x = z.clone();
        timed_solve(x.as_mut());
        let a = z.transpose() * &x;
        if (0..w).any(|i| (0..w).any(|k| !a[(i, k)].is_finite())) {
            return Err(ReceptanceError::Lanczos(
                "non-finite Lanczos coefficient".into(),
            ));
        }
        for i in 0..w {
            for k in 0..w {
                t[(s + i, s + k)] = 0.5 * (a[(i, k)] + a[(k, i)]);
            }
            theta_max = theta_max.max(a[(i, i)].abs());
        }
        // The three-term recurrence, then full reorthogonalisation against every vector.
        let q = basis.q();
        faer::linalg::matmul::matmul(
            x.as_mut(),
            Accum::Add,
            q.subcols(s, w),
            t.as_ref().submatrix(s, s, w, w),
            -1.0,
            super::par(),
        );
        if let Some((sp, wp)) = prev {
            faer::linalg::matmul::matmul(
                x.as_mut(),
                Accum::Add,
                q.subcols(sp, wp),
                t.as_ref().submatrix(sp, s, wp, w),
                -1.0,
                super::par(),
            );
        }
        let reorthogonalise = crate::profile::span(crate::profile::Phase::Reorthogonalise);
        let mx = orthogonalise(mass, basis.q(), basis.mq(), &mut x);
        let next = orthonormalise(mass, x.as_ref(), mx.as_ref(), 1e-12 * theta_max);
        drop(reorthogonalise);
        let breakdown = next.q.ncols() == 0;
        let check =
            breakdown || next.q.ncols() < w || j >= p_max || (j >= nev && j - last_check >= step);
        if check {
            last_check = j;
            let (theta, y) = projected_eigen(t.as_ref().submatrix(0, 0, j, j))?;
            let k = nev.min(j);
            // Ritz residuals: the coupling to the next block, `B y_last`.
            let converged = k == nev
                && (0..k).all(|i| {
                    let r: f64 = (0..next.b.nrows())
                        .map(|r| {
                            let v: f64 = (0..w).map(|c| next.b[(r, c)] * y[(s + c, i)]).sum();
                            v * v
                        })
                        .sum::<f64>()
                        .sqrt();
                    r <= tol * theta[i].abs() + 1e3 * f64::EPSILON * theta_max
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
        // Directions the block lost (an invariant subspace) are replaced by fresh ones,
        // uncoupled from it.
        let width = w.min(p_max - j).max(1);
        let mut new_q = next.q;
        let mut new_mq = next.mq;
        let kept = new_q.ncols();
        if kept < width {
            // The kept columns join the basis for a moment, so that the fresh vectors are
            // made orthogonal to them too; they are pushed again below with the fresh ones.
            basis.push(new_q.as_ref(), new_mq.as_ref());
            let extra = fresh(&mut rng, &basis, width - kept);
            basis.q.truncate(n * j);
            basis.mq.truncate(n * j);
            if kept + extra.q.ncols() == 0 {
                let (theta, y) = projected_eigen(t.as_ref().submatrix(0, 0, j, j))?;
                let k = nev.min(j);
                return Ok(ritz(basis.q(), &theta, &y, k, sigma));
            }
            let cat = |a: Mat<f64>, b: &Mat<f64>| {
                Mat::from_fn(n, a.ncols() + b.ncols(), |i, c| {
                    if c < a.ncols() {
                        a[(i, c)]
                    } else {
                        b[(i, c - a.ncols())]
                    }
                })
            };
            new_q = cat(new_q, &extra.q);
            new_mq = cat(new_mq, &extra.mq);
        }
        for r in 0..kept {
            for c in 0..w {
                t[(j + r, s + c)] = next.b[(r, c)];
                t[(s + c, j + r)] = next.b[(r, c)];
            }
        }
        basis.push(new_q.as_ref(), new_mq.as_ref());
        prev = Some(cur);
        cur = (j, new_q.ncols());
    }
}

/// Eigenpairs of the symmetric projected operator, `theta` descending.
///
/// By the implicit QR algorithm on faer's tridiagonal form, not faer's divide and conquer
/// (its default from 128 rows): on projected operators of this kind, graded over five
/// decades with clustered eigenvalues, divide and conquer returned eigenvectors with
/// residuals of `1e-9 ||T||` (QR: `2e-16`), which the convergence test then misread as
/// Ritz residuals it could not reach. The QR algorithm costs a few `j^3`, small beside the
/// Lanczos vectors.
fn projected_eigen(t: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>), ReceptanceError> {
    let j = t.nrows();
    let (s, u) = crate::modes::symmetric_eigen(t, super::par()).ok_or_else(|| {
        ReceptanceError::Lanczos("the projected eigensolver did not converge".into())
    })?;
    // Ascending from faer; reverse to descending theta.
    let theta: Vec<f64> = (0..j).rev().map(|i| s[i]).collect();
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
        y.as_ref().subrows(0, qm.ncols()).subcols(0, k),
        1.0,
        super::par(),
    );
    // theta descending -> lambda = sigma + 1/theta ascending (theta > 0 for an SPD shift).
    let lambda = theta[..k].iter().map(|t| sigma + 1.0 / t).collect();
    LanczosModes { lambda, phi }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::sparse::{SparseColMat, Triplet};

    /// `chains` identical fixed-free spring chains of `len` unit masses and unit springs,
    /// one after another: `K` block tridiagonal, `M = I`. Each chain's eigenvalues are
    /// `4 sin^2((2 j - 1) pi / (2 (2 len + 1)))`, `j = 1..len`, every one `chains` times.
    struct Chains {
        len: usize,
        chains: usize,
    }

    impl Chains {
        fn exact(&self, count: usize) -> Vec<f64> {
            let mut l: Vec<f64> = (1..=self.len)
                .flat_map(|j| {
                    let s = ((2 * j - 1) as f64 * std::f64::consts::PI
                        / (2.0 * (2 * self.len + 1) as f64))
                        .sin();
                    std::iter::repeat_n(4.0 * s * s, self.chains)
                })
                .collect();
            l.truncate(count);
            l
        }

        /// `(K - sigma M)^{-1}` by the Thomas algorithm, chain by chain.
        fn solve(&self, sigma: f64, mut x: MatMut<'_, f64>) {
            let n = self.len;
            for c in 0..x.ncols() {
                for chain in 0..self.chains {
                    let o = chain * n;
                    // Diagonal 2 (1 at the free end), off-diagonal -1.
                    let diag = |i: usize| if i + 1 == n { 1.0 } else { 2.0 } - sigma;
                    let mut cp = vec![0.0; n];
                    let mut dp = vec![0.0; n];
                    cp[0] = -1.0 / diag(0);
                    dp[0] = x[(o, c)] / diag(0);
                    for i in 1..n {
                        let m = diag(i) + cp[i - 1];
                        cp[i] = -1.0 / m;
                        dp[i] = (x[(o + i, c)] + dp[i - 1]) / m;
                    }
                    x[(o + n - 1, c)] = dp[n - 1];
                    for i in (0..n - 1).rev() {
                        x[(o + i, c)] = dp[i] - cp[i] * x[(o + i + 1, c)];
                    }
                }
            }
        }

        fn identity(&self) -> SparseColMat<usize, f64> {
            let n = self.len * self.chains;
            let t: Vec<_> = (0..n).map(|i| Triplet::new(i, i, 1.0)).collect();
            SparseColMat::try_new_from_triplets(n, n, &t).unwrap()
        }

        /// `|K phi - lambda phi|` for one mode.
        fn residual(&self, phi: MatRef<'_, f64>, lambda: f64) -> f64 {
            let n = self.len;
            let mut r = 0.0f64;
            for chain in 0..self.chains {
                let o = chain * n;
                for i in 0..n {
                    let d = if i + 1 == n { 1.0 } else { 2.0 };
                    let mut k = d * phi[(o + i, 0)];
                    if i > 0 {
                        k -= phi[(o + i - 1, 0)];
                    }
                    if i + 1 < n {
                        k -= phi[(o + i + 1, 0)];
                    }
                    r = r.max((k - lambda * phi[(o + i, 0)]).abs());
                }
            }
            r
        }
    }

    /// The lowest `nev` modes of `chains` chains of `len` masses, in each of `blocks`, against
    /// the closed form: eigenvalues, residuals and `M`-orthonormality.
    fn check(len: usize, chains: usize, nev: usize, blocks: &[usize]) {
        let chains = Chains { len, chains };
        let m = chains.identity();
        let sigma = -1e-3;
        let exact = chains.exact(nev);
        for &block in blocks {
            let modes = lowest_modes(
                &|x| chains.solve(sigma, x),
                10 * chains.len,
                m.as_ref(),
                m.nrows(),
                nev,
                sigma,
                1e-10,
                block,
            )
            .unwrap();
            for (i, (l, e)) in modes.lambda.iter().zip(&exact).enumerate() {
                assert!(
                    (l - e).abs() <= 1e-9 * e,
                    "block {block}: mode {i} lambda {l} against {e}"
                );
                let r = chains.residual(modes.phi.subcols(i, 1), *l);
                assert!(
                    r <= 1e-8 * e.sqrt(),
                    "block {block}: mode {i} residual {r:e}"
                );
            }
            let g = modes.phi.transpose() * &modes.phi;
            for a in 0..nev {
                for b in 0..nev {
                    let d = g[(a, b)] - if a == b { 1.0 } else { 0.0 };
                    assert!(
                        d.abs() < 1e-10,
                        "block {block}: phi^T M phi [{a},{b}] = {}",
                        g[(a, b)]
                    );
                }
            }
        }
    }

    #[test]
    fn blocks_and_single_vectors_find_the_exact_lowest_modes_of_a_chain() {
        check(3000, 1, 60, &[1, 4, 8]);
    }

    /// A repeated eigenvalue has a one-dimensional trace in a single-vector Krylov space:
    /// plain Lanczos finds its copies only from rounding, late or not at all. Blocks of at
    /// least the multiplicity find every copy.
    #[test]
    fn blocks_find_every_copy_of_a_repeated_eigenvalue() {
        check(800, 3, 45, &[4, 8]);
    }

    /// Asking for as many modes as the structure has: the blocks run out of directions (the
    /// last ones deflate, fresh vectors find nothing left) and every mode comes back exact;
    /// with two identical chains, every eigenvalue twice.
    #[test]
    fn a_block_run_that_exhausts_the_space_returns_every_mode() {
        check(30, 1, 30, &[1, 8]);
        check(30, 2, 60, &[8]);
    }

    /// faer's divide and conquer (its default from 128 rows) returned eigenvectors of this
    /// operator, from a block Lanczos run on the 100-contact 3-D sector, with residuals of
    /// `1e-9 ||T||`: the convergence test then waited for Ritz residuals it could not see.
    #[test]
    fn the_projected_operator_s_eigenpairs_are_exact_to_rounding() {
        let text = include_str!("../../tests/data/lanczos-projected-operator.txt");
        let entries: Vec<(usize, usize, f64)> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let mut f = l.split_whitespace();
                let r = f.next().unwrap().parse().unwrap();
                let c = f.next().unwrap().parse().unwrap();
                (r, c, f.next().unwrap().parse().unwrap())
            })
            .collect();
        let n = entries.iter().map(|e| e.0).max().unwrap() + 1;
        let mut t = Mat::<f64>::zeros(n, n);
        for &(r, c, v) in &entries {
            t[(r, c)] = v;
            t[(c, r)] = v;
        }
        let norm = (0..n).map(|i| t[(i, i)].abs()).fold(0.0, f64::max);
        let (theta, y) = projected_eigen(t.as_ref()).unwrap();
        let ty = &t * &y;
        let mut worst = 0.0f64;
        for c in 0..n {
            for r in 0..n {
                worst = worst.max((ty[(r, c)] - theta[c] * y[(r, c)]).abs());
            }
        }
        assert!(
            worst <= 1e-14 * norm,
            "|T y - theta y| = {:e} ||T||",
            worst / norm
        );
        assert!(theta.windows(2).all(|w| w[0] >= w[1]), "theta descending");
    }
}
