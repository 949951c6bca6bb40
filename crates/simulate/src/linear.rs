//! The linear part of a backward-Euler step: the step matrix `A = M + h C + h^2 K`,
//! factorised once, and the "free" velocity `A^-1 (M v - h K u + h f(t))`.
//!
//! Small models invert `A` densely and precompute `A^-1 M`, `h A^-1 K` and `h A^-1 f_h`,
//! so that a step is two dense matrix-vector products; larger models keep `M` and `K`
//! sparse and solve with a sparse Cholesky factor of `A` (LU if `A` is not positive
//! definite). `A` is positive definite whenever every DOF carries mass, damping or
//! stiffness, which is what lets massless DOFs (zero rows of `M`) through.

use crate::SimulateError;
use ewr_model::linalg_error::Sentence;
use ewr_model::{Model, SparseMatrix};
use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::sparse::linalg::solvers::{Llt, Lu};
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, MatMut, Side};

/// A sparse matrix by rows, for the per-step products (no allocation, no dispatch).
#[derive(Clone, Debug)]
pub(crate) struct Csr {
    pub ncols: usize,
    ptr: Vec<usize>,
    idx: Vec<usize>,
    val: Vec<f64>,
}

impl Csr {
    pub fn from_sparse(a: &SparseMatrix) -> Self {
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); a.nrows()];
        for t in a.triplet_iter() {
            if *t.val != 0.0 {
                rows[t.row].push((t.col, *t.val));
            }
        }
        Self::from_rows(a.ncols(), rows)
    }

    /// From `(col, value)` lists per row; duplicates in a row are summed.
    pub fn from_rows(ncols: usize, rows: Vec<Vec<(usize, f64)>>) -> Self {
        let mut ptr = Vec::with_capacity(rows.len() + 1);
        let (mut idx, mut val) = (Vec::new(), Vec::new());
        ptr.push(0);
        for mut row in rows {
            row.sort_by_key(|p| p.0);
            let first = idx.len();
            for (j, v) in row {
                // Duplicates add up, as in assembly.
                if idx.len() > first && idx[idx.len() - 1] == j {
                    *val.last_mut().expect("an entry was pushed") += v;
                } else {
                    idx.push(j);
                    val.push(v);
                }
            }
            ptr.push(idx.len());
        }
        Csr {
            ncols,
            ptr,
            idx,
            val,
        }
    }

    pub fn nrows(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Entries `(col, value)` of row `i`.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let r = self.ptr[i]..self.ptr[i + 1];
        self.idx[r.clone()]
            .iter()
            .copied()
            .zip(self.val[r].iter().copied())
    }

    /// Row `i` times `x`.
    #[inline]
    pub fn row_dot(&self, i: usize, x: &[f64]) -> f64 {
        let r = self.ptr[i]..self.ptr[i + 1];
        self.idx[r.clone()]
            .iter()
            .zip(&self.val[r])
            .map(|(&j, &a)| a * x[j])
            .sum()
    }

    /// `y = A x`.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = self.row_dot(i, x);
        }
    }

    /// `x^T A x`.
    pub fn quad(&self, x: &[f64]) -> f64 {
        (0..self.nrows()).map(|i| x[i] * self.row_dot(i, x)).sum()
    }

    /// Dense copy, row-major.
    pub fn to_dense(&self) -> Vec<f64> {
        let mut d = vec![0.0; self.nrows() * self.ncols];
        for i in 0..self.nrows() {
            for (j, v) in self.row(i) {
                d[i * self.ncols + j] += v;
            }
        }
        d
    }
}

/// Loads of one harmonic on the DOFs: `(dof, amplitude)` pairs.
type Terms = Vec<(usize, f64)>;

/// The harmonic forcing of a model, grouped by harmonic.
#[derive(Clone, Debug)]
pub(crate) struct Forcing {
    /// `(harmonic, cos terms, sin terms)`.
    pub harmonics: Vec<(usize, Terms, Terms)>,
}

impl Forcing {
    pub fn from_model(model: &Model) -> Self {
        let mut harmonics: Vec<(usize, Terms, Terms)> = Vec::new();
        for f in &model.forcing {
            let i = match harmonics.iter().position(|h| h.0 == f.harmonic) {
                Some(i) => i,
                None => {
                    harmonics.push((f.harmonic, Vec::new(), Vec::new()));
                    harmonics.len() - 1
                }
            };
            if f.cos != 0.0 {
                harmonics[i].1.push((f.dof, f.cos));
            }
            // sin(0) = 0: a sine amplitude on harmonic 0 loads nothing.
            if f.sin != 0.0 && f.harmonic != 0 {
                harmonics[i].2.push((f.dof, f.sin));
            }
        }
        Forcing { harmonics }
    }

    /// `out += scale * f(t)`.
    pub fn add_to(&self, omega: f64, t: f64, scale: f64, out: &mut [f64]) {
        for (h, cs, sn) in &self.harmonics {
            let ph = *h as f64 * omega * t;
            let (c, s) = (scale * ph.cos(), scale * ph.sin());
            for &(d, a) in cs {
                out[d] += c * a;
            }
            for &(d, a) in sn {
                out[d] += s * a;
            }
        }
    }

    /// `f(t) . v`.
    pub fn dot(&self, omega: f64, t: f64, v: &[f64]) -> f64 {
        let mut p = 0.0;
        for (h, cs, sn) in &self.harmonics {
            let ph = *h as f64 * omega * t;
            let (c, s) = (ph.cos(), ph.sin());
            p += c * cs.iter().map(|&(d, a)| a * v[d]).sum::<f64>();
            p += s * sn.iter().map(|&(d, a)| a * v[d]).sum::<f64>();
        }
        p
    }
}

/// How the step matrix is factorised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Dense up to [`DENSE_MAX_DOFS`] DOFs, sparse above.
    #[default]
    Auto,
    /// Dense inverse of the step matrix (small models).
    Dense,
    /// Sparse Cholesky (or LU) factorisation of the step matrix.
    Sparse,
}

/// Largest model that [`LinearSolver::Auto`] treats densely: a dense step costs `2 n^2`
/// flops against a few sparse products and two triangular solves.
pub const DENSE_MAX_DOFS: usize = 100;

pub(crate) enum Factor {
    Llt(Llt<usize, f64>),
    Lu(Box<Lu<usize, f64>>),
}

/// `A^-1 (M v - h K u + h f(t))`, dense or sparse.
pub(crate) enum Step {
    Dense {
        n: usize,
        /// `A^-1 M`, row-major.
        p: Vec<f64>,
        /// `h A^-1 K`, row-major.
        q: Vec<f64>,
        /// `(harmonic, h A^-1 f_cos, h A^-1 f_sin)`.
        forcing: Vec<(usize, Vec<f64>, Vec<f64>)>,
        /// `A^-1`, row-major (for the contact operators).
        ainv: Vec<f64>,
    },
    Sparse {
        m: Csr,
        k: Csr,
        forcing: Forcing,
        factor: Factor,
        h: f64,
    },
}

impl Step {
    /// Builds and factorises `A = M + h C + h^2 K`.
    pub fn new(
        mass: &Csr,
        stiffness: &Csr,
        damping: &Csr,
        forcing: &Forcing,
        h: f64,
        kind: LinearSolver,
    ) -> Result<Step, SimulateError> {
        let n = mass.nrows();
        let dense = match kind {
            LinearSolver::Auto => n <= DENSE_MAX_DOFS,
            LinearSolver::Dense => true,
            LinearSolver::Sparse => false,
        };
        let singular = || {
            SimulateError::Numerical(
                "the step matrix M + h C + h^2 K is singular: some DOF (or combination) has \
                 no mass, damping or stiffness"
                    .into(),
            )
        };
        if dense {
            let (md, kd, cd) = (mass.to_dense(), stiffness.to_dense(), damping.to_dense());
            let a = Mat::from_fn(n, n, |i, j| {
                md[i * n + j] + h * cd[i * n + j] + h * h * kd[i * n + j]
            });
            let inv = match a.llt(Side::Lower) {
                Ok(llt) => llt.inverse(),
                Err(_) => a.partial_piv_lu().inverse(),
            };
            // Check the inverse: LU does not report singularity by itself.
            let res = &a * &inv - Mat::<f64>::identity(n, n);
            let bad = (0..n).any(|j| (0..n).any(|i| !inv[(i, j)].is_finite()));
            if bad || res.norm_max() > 1e-6 {
                return Err(singular());
            }
            let ainv: Vec<f64> = (0..n * n).map(|x| inv[(x / n, x % n)]).collect();
            let prod = |b: &[f64], s: f64| {
                let mut out = vec![0.0; n * n];
                for i in 0..n {
                    for l in 0..n {
                        let a = s * ainv[i * n + l];
                        if a != 0.0 {
                            for j in 0..n {
                                out[i * n + j] += a * b[l * n + j];
                            }
                        }
                    }
                }
                out
            };
            let apply = |f: &[(usize, f64)]| {
                let mut out = vec![0.0; n];
                for &(d, a) in f {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o += h * ainv[i * n + d] * a;
                    }
                }
                out
            };
            let forcing = forcing
                .harmonics
                .iter()
                .map(|(hh, cs, sn)| (*hh, apply(cs), apply(sn)))
                .collect();
            Ok(Step::Dense {
                n,
                p: prod(&md, 1.0),
                q: prod(&kd, h),
                forcing,
                ainv,
            })
        } else {
            let mut trip = Vec::new();
            for (a, s) in [(mass, 1.0), (damping, h), (stiffness, h * h)] {
                for i in 0..n {
                    for (j, v) in a.row(i) {
                        trip.push(Triplet::new(i, j, s * v));
                    }
                }
            }
            let a = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &trip)
                .map_err(|e| SimulateError::Numerical(format!("step matrix: {}", e.sentence())))?;
            let factor = match a.sp_cholesky(Side::Lower) {
                Ok(l) => Factor::Llt(l),
                Err(_) => Factor::Lu(Box::new(a.sp_lu().map_err(|_| singular())?)),
            };
            Ok(Step::Sparse {
                m: mass.clone(),
                k: stiffness.clone(),
                forcing: forcing.clone(),
                factor,
                h,
            })
        }
    }

    /// True for the dense variant.
    pub fn is_dense(&self) -> bool {
        matches!(self, Step::Dense { .. })
    }

    /// `x <- A^-1 x`.
    pub fn solve_in_place(&self, x: &mut [f64]) {
        match self {
            Step::Dense { n, ainv, .. } => {
                let y: Vec<f64> = (0..*n)
                    .map(|i| {
                        ainv[i * n..(i + 1) * n]
                            .iter()
                            .zip(x.iter())
                            .map(|(a, b)| a * b)
                            .sum()
                    })
                    .collect();
                x.copy_from_slice(&y);
            }
            Step::Sparse { factor, .. } => {
                let n = x.len();
                let rhs = MatMut::from_column_major_slice_mut(x, n, 1);
                match factor {
                    Factor::Llt(l) => l.solve_in_place(rhs),
                    Factor::Lu(l) => l.solve_in_place(rhs),
                }
            }
        }
    }

    /// `out = A^-1 (M v - h K u + h f(t))`; `scratch` has `n` entries.
    pub fn free_velocity(
        &self,
        u: &[f64],
        v: &[f64],
        omega: f64,
        t: f64,
        out: &mut [f64],
        scratch: &mut [f64],
    ) {
        match self {
            Step::Dense {
                n, p, q, forcing, ..
            } => {
                let n = *n;
                for (i, o) in out.iter_mut().enumerate() {
                    let (pr, qr) = (&p[i * n..(i + 1) * n], &q[i * n..(i + 1) * n]);
                    let mut s = 0.0;
                    for j in 0..n {
                        s += pr[j] * v[j] - qr[j] * u[j];
                    }
                    *o = s;
                }
                for (hh, gc, gs) in forcing {
                    let ph = *hh as f64 * omega * t;
                    let (c, s) = (ph.cos(), ph.sin());
                    if *hh == 0 {
                        out.iter_mut().zip(gc).for_each(|(o, g)| *o += g);
                    } else {
                        for i in 0..n {
                            out[i] += c * gc[i] + s * gs[i];
                        }
                    }
                }
            }
            Step::Sparse {
                m, k, forcing, h, ..
            } => {
                m.mul(v, out);
                k.mul(u, scratch);
                out.iter_mut()
                    .zip(scratch.iter())
                    .for_each(|(o, s)| *o -= h * s);
                forcing.add_to(omega, t, *h, out);
                self.solve_in_place(out);
            }
        }
    }
}
