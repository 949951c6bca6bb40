//! The modes and static data of one nodal diameter of a cyclic sector (`NdModes`), and the
//! solves with them at one frequency (`NdSolve`): what the cyclic modal backend extracts
//! (`cyclic_modal`) and what a prepared harmonic keeps to solve with (`direct::Solver`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::ForcingKey;
use super::cholesky::{Cholesky, CholeskyPattern};
use faer::sparse::SparseColMat;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::{Accum, Mat, c64};

use super::ReceptanceError;

/// The modes and static data of one nodal diameter.
pub(crate) struct NdModes {
    pub(super) lambda: Vec<f64>,
    /// `nr x p`, `M_k`-orthonormal.
    pub(super) phi: Mat<c64>,
    /// `W_k Phi` (`m x p`).
    pub(super) wphi: Mat<c64>,
    /// `phi_r^H C_k phi_r`.
    pub(super) damping: Vec<f64>,
    /// `R_k` (`m x m`, Hermitian).
    pub(super) residual: Mat<c64>,
    /// `E(K_k)`, refactored on demand: the factor is dropped after extraction, since several
    /// diameters' factors of a large sector do not fit in memory together.
    pub(super) k2: SparseColMat<usize, f64>,
    /// Columns `S_k e_i` of the static residual operator `S_k = K_k^{-1} - Phi Lambda^{-1}
    /// Phi^H` (Hermitian) by independent DOF `i`: the forced DOFs' at extraction, others on
    /// first use (one factorisation per new set).
    pub(super) columns: Mutex<HashMap<usize, Arc<Vec<c64>>>>,
    /// `W_k (K_k^{-1} - Phi Lambda^{-1} Phi^H) T^H F_h` per forced harmonic and forcing
    /// ([`ForcingKey`]: receptances derived for another forcing share the diameter's modes),
    /// on first use.
    pub(super) forced_static: Mutex<HashMap<ForcingKey, Arc<Vec<c64>>>>,
    /// `W_k` (`m x nr`).
    pub(super) wk: SparseColMat<usize, c64>,
}

/// `Z_k^{-1} b` at one frequency: modal sum plus static residual.
pub(crate) struct NdSolve {
    pub(super) nd: Arc<NdModes>,
    pub(super) inv_d: Vec<c64>,
    pub(super) res: c64,
}

impl NdModes {
    /// `K_k^{-1} b` for complex `b` (`nr x cols`), through a Cholesky factor of `E(K_k)`.
    fn static_solve(llt: &Cholesky, b: &Mat<c64>) -> Mat<c64> {
        let nr = b.nrows();
        let mut x = Mat::from_fn(2 * nr, b.ncols(), |i, j| {
            if i < nr {
                b[(i, j)].re
            } else {
                b[(i - nr, j)].im
            }
        });
        llt.solve_in_place(x.as_mut());
        Mat::from_fn(nr, b.ncols(), |i, j| c64::new(x[(i, j)], x[(i + nr, j)]))
    }

    /// `S_k b = (K_k^{-1} - Phi Lambda^{-1} Phi^H) b`: the static response of the omitted
    /// modes, with the factor `llt`, or a fresh one when `None`.
    pub(super) fn residual_solve(&self, llt: Option<&Cholesky>, b: &Mat<c64>) -> Mat<c64> {
        let mut x = match llt {
            Some(l) => Self::static_solve(l, b),
            None => Self::static_solve(
                &factor(&self.k2).expect("E(K_k) was factorised at extraction"),
                b,
            ),
        };
        let pb = self.phi.adjoint() * b;
        for (r, &l) in self.lambda.iter().enumerate() {
            for j in 0..b.ncols() {
                let coef = pb[(r, j)] / l;
                for i in 0..x.nrows() {
                    x[(i, j)] -= self.phi[(i, r)] * coef;
                }
            }
        }
        x
    }
}

impl NdModes {
    /// `W_k x`.
    pub(super) fn wk_times(&self, x: &Mat<c64>) -> Mat<c64> {
        let mut wx = Mat::zeros(self.wk.nrows(), x.ncols());
        sparse_dense_matmul(
            wx.as_mut(),
            Accum::Replace,
            self.wk.as_ref(),
            x.as_ref(),
            c64::new(1.0, 0.0),
            super::par(),
        );
        wx
    }

    /// `W_k S_k f` for a reduced load `f`.
    pub(super) fn forced_static_of(&self, llt: Option<&Cholesky>, f: &Mat<c64>) -> Vec<c64> {
        let wx = self.wk_times(&self.residual_solve(llt, f));
        (0..wx.nrows()).map(|i| wx[(i, 0)]).collect()
    }
}

impl NdSolve {
    /// `Z_k^{-1} b` on the independent DOFs.
    pub fn solve(&self, b: &Mat<c64>) -> Mat<c64> {
        let m = &self.nd;
        let mut pb = m.phi.adjoint() * b;
        for (r, d) in self.inv_d.iter().enumerate() {
            for j in 0..b.ncols() {
                pb[(r, j)] *= *d;
            }
        }
        let mut x = &m.phi * &pb;
        let st = m.residual_solve(None, b);
        for j in 0..b.ncols() {
            for i in 0..x.nrows() {
                x[(i, j)] += self.res * st[(i, j)];
            }
        }
        x
    }
}

impl NdSolve {
    /// Entries `rows` (independent DOF indices) of `Z_k^{-1} b`, from cached columns of the
    /// static residual operator (computed, with one factorisation, for rows not seen before).
    pub fn solve_at(&self, b: &Mat<c64>, rows: &[usize]) -> Vec<c64> {
        let m = &self.nd;
        let cols = m.columns_for(rows);
        let mut pb = m.phi.adjoint() * b;
        for (r, d) in self.inv_d.iter().enumerate() {
            pb[(r, 0)] *= *d;
        }
        rows.iter()
            .zip(&cols)
            .map(|(&i, col)| {
                let modal: c64 = (0..pb.nrows()).map(|r| m.phi[(i, r)] * pb[(r, 0)]).sum();
                // (S b)_i = (S e_i)^H b, S Hermitian.
                let stat: c64 = col
                    .iter()
                    .zip(0..b.nrows())
                    .map(|(c, j)| c.conj() * b[(j, 0)])
                    .sum();
                modal + self.res * stat
            })
            .collect()
    }
}

impl NdModes {
    /// `S_k e_i` for each `i` of `rows`, computing the missing ones (one factorisation).
    fn columns_for(&self, rows: &[usize]) -> Vec<Arc<Vec<c64>>> {
        let lock = || self.columns.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing: Vec<usize> = {
            let cache = lock();
            rows.iter()
                .copied()
                .filter(|i| !cache.contains_key(i))
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        // Solved without the lock: the solve runs on the thread pool, and a worker holding
        // the lock while it waits could take a task that asks for it (a deadlock). Of two
        // that race, the first to finish keeps its columns.
        let mut fresh = HashMap::new();
        if !missing.is_empty() {
            self.fill_columns(None, &missing, &mut fresh);
        }
        let mut cache = lock();
        for (i, col) in fresh {
            cache.entry(i).or_insert(col);
        }
        rows.iter().map(|i| Arc::clone(&cache[i])).collect()
    }

    pub(super) fn fill_columns(
        &self,
        llt: Option<&Cholesky>,
        missing: &[usize],
        cache: &mut HashMap<usize, Arc<Vec<c64>>>,
    ) {
        let nr = self.phi.nrows();
        let e = Mat::from_fn(nr, missing.len(), |i, j| {
            c64::new(if i == missing[j] { 1.0 } else { 0.0 }, 0.0)
        });
        let x = self.residual_solve(llt, &e);
        for (j, &i) in missing.iter().enumerate() {
            cache.insert(i, Arc::new((0..nr).map(|r| x[(r, j)]).collect()));
        }
    }
}

/// Cholesky factor of `E(K_k)`, `None` when it is not positive definite.
pub(super) fn factor(k2: &SparseColMat<usize, f64>) -> Result<Cholesky, ReceptanceError> {
    CholeskyPattern::new(k2.symbolic())?
        .factor(k2.as_ref())?
        .ok_or_else(|| ReceptanceError::Factorization("not positive definite".into()))
}
