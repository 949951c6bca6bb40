//! The shifted pencil's Schur complement on the forces, factorised harmonic by harmonic where
//! the contact law is time-invariant.
//!
//! A signal whose law has the same coefficients over the whole period (a contact stuck, closed
//! or open all period: on a many-contact model near its resonance, most of them) couples each
//! harmonic of its rows only to the same harmonic of every signal. Its rows of the complement
//! `F` are zero between harmonics, so with `I_k` those rows' unknowns on harmonic `k` and `V`
//! every unknown of the time-varying signals,
//!
//! ```text
//! F = [ F_kk  F_kV ]      x_k = F_kk^{-1} (b_k - F_kV x_V)
//!     [ F_Vk  F_VV ]      (F_VV - sum_k F_Vk F_kk^{-1} F_kV) x_V = b_V - sum_k F_Vk F_kk^{-1} b_k
//! ```
//!
//! one LU per harmonic of the invariant rows and one dense LU on `V` replace the dense LU of
//! the whole complement (docs/stability.md, "The forces by harmonics").

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::{Accum, Conj, Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Right-hand sides up to which a solve runs its large kernels (the varying unknowns' LU and
/// the products with it) on one thread: Arnoldi's one vector a step, where faer's fork-join
/// costs more than it saves. Block Arnoldi's eight vectors a step are wide enough to split: on
/// the 100-contact 3-D sector a step's solve took about 27 ms on two threads against 47 ms on
/// one (docs/stability.md, section 2; measured before the harmonics' small LUs ran side by
/// side, one per task, as they now do at any width).
const NARROW: usize = 4;

/// The kernels' parallelism for `r` right-hand sides.
pub(super) fn par_for(r: usize) -> Par {
    if r <= NARROW {
        Par::Seq
    } else {
        faer::get_global_parallelism()
    }
}

/// `lu^{-1} rhs` in place, the kernels' parallelism chosen by the width of `rhs`.
pub(super) fn lu_solve_in_place(lu: &PartialPivLu<f64>, rhs: MatMut<'_, f64>) {
    let par = par_for(rhs.ncols());
    lu_solve_in_place_by(lu, rhs, par);
}

/// `lu^{-1} rhs` in place with the kernels' parallelism `par`.
pub(super) fn lu_solve_in_place_by(lu: &PartialPivLu<f64>, rhs: MatMut<'_, f64>, par: Par) {
    let n = lu.L().nrows();
    let mut buf = MemBuffer::new(
        faer::linalg::lu::partial_pivoting::solve::solve_in_place_scratch::<usize, f64>(
            n,
            rhs.ncols(),
            par,
        ),
    );
    faer::linalg::lu::partial_pivoting::solve::solve_in_place_with_conj(
        lu.L(),
        lu.U(),
        lu.P(),
        Conj::No,
        rhs,
        par,
        MemStack::new(&mut buf),
    );
}

/// `lu^{-1} rhs`.
pub(super) fn lu_solve(lu: &PartialPivLu<f64>, rhs: MatRef<'_, f64>) -> Mat<f64> {
    let mut x = rhs.to_owned();
    lu_solve_in_place(lu, x.as_mut());
    x
}

/// Backward error above which the elimination by harmonics is not trusted (its pivots are
/// chosen within each harmonic, not over the whole complement) and the dense LU is used.
const BACKWARD_ERROR_MAX: f64 = 1e-10;

/// The complement on the forces, factorised.
pub(super) enum ForceFactor {
    /// One LU of the whole complement.
    Dense(PartialPivLu<f64>),
    /// The invariant rows eliminated per harmonic, then the varying unknowns.
    ByHarmonics(ByHarmonics),
}

pub(super) struct ByHarmonics {
    groups: Vec<Group>,
    /// The time-varying signals' unknowns.
    varying: Vec<usize>,
    /// The complement on `varying` (absent when every signal is invariant).
    schur: Option<PartialPivLu<f64>>,
    n: usize,
}

/// The invariant rows of one harmonic.
struct Group {
    idx: Vec<usize>,
    lu: PartialPivLu<f64>,
    /// The varying unknowns (positions in `ByHarmonics::varying`) that these rows read, every
    /// column with a nonzero entry in them: on time-invariant rows only the same harmonic's,
    /// since such a row is exactly zero on every other harmonic's columns, the varying
    /// signals' included.
    cols: Vec<usize>,
    /// `F_kk^{-1} F_kV` on `cols`.
    coupled: Mat<f64>,
    /// `F_Vk`, dense; `None` once the caller applies it by the pencil's blocks
    /// ([`ForceFactor::read_by`]).
    reads: Option<Mat<f64>>,
}

/// `F x` on (at least) the rows of the time-varying signals, applied without the dense
/// `F_Vk` (`x` is `n x r`, the result `n x r`).
pub(super) type ReadVarying<'a> = &'a dyn Fn(MatRef<'_, f64>) -> Mat<f64>;

/// Agreement required between the dense `F_Vk` and the caller's product before the dense one
/// is dropped (relative, Frobenius): rounding is about `1e-15`.
const READS_AGREE: f64 = 1e-10;

impl ForceFactor {
    /// Factorises `f` (square, `n`): by harmonics where `groups` (per harmonic, the invariant
    /// rows' unknowns, zero in `f` against every other harmonic's) is not empty and the result
    /// passes a backward-error test, else whole.
    pub(super) fn new(f: Mat<f64>, groups: Vec<Vec<usize>>, varying: Vec<usize>) -> Self {
        let groups: Vec<Vec<usize>> = groups.into_iter().filter(|g| !g.is_empty()).collect();
        if groups.is_empty() {
            return ForceFactor::Dense(f.partial_piv_lu());
        }
        let blocked = ByHarmonics::new(f.as_ref(), groups, varying);
        if blocked.backward_error(f.as_ref()) <= BACKWARD_ERROR_MAX {
            ForceFactor::ByHarmonics(blocked)
        } else {
            drop(blocked);
            crate::profile::count(
                "stability: the forces' complement factored whole (by harmonics failed its \
                 backward-error test)",
            );
            ForceFactor::Dense(f.partial_piv_lu())
        }
    }

    /// `F^{-1} b` for the columns of `b`; `read` applies `F` on the varying rows where the
    /// dense `F_Vk` were dropped ([`ForceFactor::read_by`]).
    pub(super) fn solve(&self, b: MatRef<'_, f64>, read: Option<ReadVarying<'_>>) -> Mat<f64> {
        match self {
            ForceFactor::Dense(lu) => lu_solve(lu, b),
            ForceFactor::ByHarmonics(f) => f.solve(b, read),
        }
    }

    /// Bytes of the dense `F_Vk` (zero where the complement is factored whole or no signal
    /// varies).
    pub(super) fn dense_reads_bytes(&self) -> usize {
        match self {
            ForceFactor::ByHarmonics(f) if f.schur.is_some() => f
                .groups
                .iter()
                .filter_map(|g| g.reads.as_ref())
                .map(|m| m.nrows() * m.ncols() * std::mem::size_of::<f64>())
                .sum(),
            _ => 0,
        }
    }

    /// Drops the dense `F_Vk` for `read` where the two agree on a pseudo-random vector (to
    /// [`READS_AGREE`]); whether they did. The `F_Vk` are read whole at every solve, the
    /// largest part of its memory traffic on a many-contact model (docs/stability.md, "What
    /// the invariant and the varying rows read"); `read` computes the same product from the
    /// pencil's blocks.
    pub(super) fn read_by(&mut self, read: ReadVarying<'_>) -> bool {
        let ForceFactor::ByHarmonics(f) = self else {
            return false;
        };
        if f.schur.is_none() || f.groups.iter().any(|g| g.reads.is_none()) {
            return false;
        }
        let mut random = super::xorshift(0x6a09_e667_f3bc_c909);
        let mut y = Mat::<f64>::zeros(f.n, 1);
        for g in &f.groups {
            for &i in &g.idx {
                y[(i, 0)] = random();
            }
        }
        let mut dense = Mat::<f64>::zeros(f.varying.len(), 1);
        for g in &f.groups {
            if let Some(reads) = &g.reads {
                dense += reads * super::gather_rows(y.as_ref(), &g.idx, 0);
            }
        }
        let by_blocks = super::gather_rows(read(y.as_ref()).as_ref(), &f.varying, 0);
        let gap = (&by_blocks - &dense).norm_l2();
        let agree = gap.is_finite() && gap <= READS_AGREE * dense.norm_l2();
        if agree {
            for g in &mut f.groups {
                g.reads = None;
            }
        }
        agree
    }

    /// Whether the complement was eliminated by harmonics.
    #[cfg(test)]
    pub(super) fn by_harmonics(&self) -> bool {
        matches!(self, ForceFactor::ByHarmonics(_))
    }
}

impl ByHarmonics {
    fn new(f: MatRef<'_, f64>, groups: Vec<Vec<usize>>, varying: Vec<usize>) -> Self {
        let nv = varying.len();
        // The complement on `varying`, less each harmonic's `F_Vk F_kk^{-1} F_kV` as it comes.
        let mut schur = (nv > 0).then(|| Mat::from_fn(nv, nv, |i, j| f[(varying[i], varying[j])]));
        let groups: Vec<Group> = groups
            .into_iter()
            .map(|idx| {
                let fkk = Mat::from_fn(idx.len(), idx.len(), |i, j| f[(idx[i], idx[j])]);
                let lu = fkk.partial_piv_lu();
                // Found from the entries rather than from the harmonic layout, so that a
                // column these rows do read is never dropped (a NaN counts as read).
                let cols: Vec<usize> = (0..nv)
                    .filter(|&j| idx.iter().any(|&i| f[(i, varying[j])] != 0.0))
                    .collect();
                let fkv = Mat::from_fn(idx.len(), cols.len(), |i, j| f[(idx[i], varying[cols[j]])]);
                let coupled = lu.solve(fkv);
                let reads = Mat::from_fn(nv, idx.len(), |i, j| f[(varying[i], idx[j])]);
                if let Some(s) = schur.as_mut().filter(|_| !cols.is_empty()) {
                    let product = &reads * &coupled;
                    for (c, &j) in cols.iter().enumerate() {
                        for (dst, src) in s.col_mut(j).iter_mut().zip(product.col(c).iter()) {
                            *dst -= *src;
                        }
                    }
                }
                Group {
                    idx,
                    lu,
                    cols,
                    coupled,
                    reads: Some(reads),
                }
            })
            .collect();
        ByHarmonics {
            groups,
            varying,
            schur: schur.map(|s| s.partial_piv_lu()),
            n: f.nrows(),
        }
    }

    fn solve(&self, b: MatRef<'_, f64>, read: Option<ReadVarying<'_>>) -> Mat<f64> {
        let r = b.ncols();
        let par = par_for(r);
        let gather = |idx: &[usize]| super::gather_rows(b, idx, 0);
        // One harmonic's rows per task, their kernels on one thread: split by faer, eight
        // right-hand sides on LUs of a few hundred rows took 1.6 times longer (docs/stability.md).
        let partial: Vec<Mat<f64>> = self
            .groups
            .par_iter()
            .map(|g| {
                let mut y = gather(&g.idx);
                lu_solve_in_place_by(&g.lu, y.as_mut(), Par::Seq);
                y
            })
            .collect();
        let mut x = Mat::<f64>::zeros(self.n, r);
        let xv = self.schur.as_ref().map(|schur| {
            let mut bv = gather(&self.varying);
            // The dense `F_Vk` are kept or dropped all together (`read_by`).
            if self.groups.iter().all(|g| g.reads.is_some()) {
                for (g, y) in self.groups.iter().zip(&partial) {
                    if let Some(reads) = &g.reads {
                        faer::linalg::matmul::matmul(bv.as_mut(), Accum::Add, reads, y, -1.0, par);
                    }
                }
            } else {
                let mut invariant = Mat::<f64>::zeros(self.n, r);
                for (g, y) in self.groups.iter().zip(&partial) {
                    super::scatter_rows(invariant.as_mut(), &g.idx, 0, y.as_ref());
                }
                let read = read.expect("the dense F_Vk are dropped only for a product given here");
                bv -= super::gather_rows(read(invariant.as_ref()).as_ref(), &self.varying, 0);
            }
            lu_solve_in_place(schur, bv.as_mut());
            bv
        });
        for (g, mut y) in self.groups.iter().zip(partial) {
            if let Some(xv) = xv.as_ref().filter(|_| !g.cols.is_empty()) {
                let read = super::gather_rows(xv.as_ref(), &g.cols, 0);
                faer::linalg::matmul::matmul(y.as_mut(), Accum::Add, &g.coupled, &read, -1.0, par);
            }
            super::scatter_rows(x.as_mut(), &g.idx, 0, y.as_ref());
        }
        if let Some(xv) = xv {
            super::scatter_rows(x.as_mut(), &self.varying, 0, xv.as_ref());
        }
        x
    }

    /// `|F x - b| / (|F| |x| + |b|)` (infinity norms) for a fixed pseudo-random `b`: rounding
    /// for a stable elimination, large where a harmonic's pivots were poor; not finite where
    /// one of its blocks is singular.
    fn backward_error(&self, f: MatRef<'_, f64>) -> f64 {
        let mut random = super::xorshift(0x9e37_79b9_7f4a_7c15);
        let b = Mat::from_fn(self.n, 1, |_, _| random());
        let x = self.solve(b.as_ref(), None);
        let residual = f * &x - &b;
        // Row sums, column by column (the storage's order).
        let mut row_sums = vec![0.0f64; f.nrows()];
        for j in 0..f.ncols() {
            for (sum, v) in row_sums.iter_mut().zip(f.col(j).iter()) {
                *sum += v.abs();
            }
        }
        let f_norm = row_sums.into_iter().fold(0.0, f64::max);
        let err = residual.norm_max() / (f_norm * x.norm_max() + b.norm_max());
        if err.is_finite() { err } else { f64::INFINITY }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A complement with the structure of [`ForceFactor`]: `signals` of `nco` coefficients in
    /// harmonic groups of `width`, the first `invariant` signals zero between groups.
    fn complement(signals: usize, invariant: usize, nco: usize, width: usize) -> Mat<f64> {
        let n = signals * nco;
        let mut noise = super::super::xorshift(7);
        Mat::from_fn(n, n, |i, j| {
            let (si, pi) = (i / nco, i % nco);
            let pj = j % nco;
            let v = noise() + if i == j { 4.0 } else { 0.0 };
            if si < invariant && pi / width != pj / width {
                0.0
            } else {
                v
            }
        })
    }

    fn layout(
        signals: usize,
        invariant: usize,
        nco: usize,
        width: usize,
    ) -> (Vec<Vec<usize>>, Vec<usize>) {
        let groups = (0..nco / width)
            .map(|k| {
                (0..invariant)
                    .flat_map(|s| (0..width).map(move |j| s * nco + k * width + j))
                    .collect()
            })
            .collect();
        let varying = (invariant * nco..signals * nco).collect();
        (groups, varying)
    }

    #[test]
    fn elimination_by_harmonics_solves_the_complement() {
        for (signals, invariant) in [(12, 9), (12, 12), (5, 1)] {
            let (nco, width) = (6, 2);
            let f = complement(signals, invariant, nco, width);
            let b = Mat::from_fn(f.nrows(), 3, |i, j| (i * 3 + j) as f64 * 0.01 - 1.0);
            let (groups, varying) = layout(signals, invariant, nco, width);
            let factor = ForceFactor::new(f.clone(), groups, varying);
            assert!(factor.by_harmonics());
            let x = factor.solve(b.as_ref(), None);
            let reference = f.partial_piv_lu().solve(&b);
            assert!((&x - &reference).norm_max() < 1e-12 * reference.norm_max());
        }
    }

    #[test]
    fn invariant_rows_keep_only_the_varying_columns_they_read() {
        let (signals, invariant, nco, width) = (10, 7, 6, 2);
        let mut f = complement(signals, invariant, nco, width);
        // Signal 0's first harmonic reads a varying unknown on its third harmonic: not the
        // layout's, but the elimination by harmonics stays exact if that column is kept.
        let far = invariant * nco + 2 * width + 1;
        f[(1, far)] = 2.5;
        let (groups, varying) = layout(signals, invariant, nco, width);
        let factor = ForceFactor::new(f.clone(), groups, varying.clone());
        let ForceFactor::ByHarmonics(blocked) = &factor else {
            panic!("the complement was factored whole");
        };
        for (k, g) in blocked.groups.iter().enumerate() {
            let on_k: Vec<usize> = (0..varying.len())
                .filter(|&j| (varying[j] % nco) / width == k || (k == 0 && varying[j] == far))
                .collect();
            assert_eq!(g.cols, on_k, "harmonic {k}");
            assert_eq!(g.coupled.ncols(), on_k.len());
        }
        let b = Mat::from_fn(f.nrows(), 9, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let x = factor.solve(b.as_ref(), None);
        let reference = f.partial_piv_lu().solve(&b);
        assert!((&x - &reference).norm_max() < 1e-12 * reference.norm_max());
    }

    #[test]
    fn rows_that_couple_harmonics_send_it_to_the_dense_lu() {
        let (signals, invariant, nco, width) = (8, 6, 6, 2);
        let mut f = complement(signals, invariant, nco, width);
        // Signal 0 declared invariant but coupling its first harmonic to its second.
        f[(0, 3)] = 2.5;
        let (groups, varying) = layout(signals, invariant, nco, width);
        let factor = ForceFactor::new(f.clone(), groups, varying);
        assert!(!factor.by_harmonics());
        let b = Mat::from_fn(f.nrows(), 1, |i, _| 1.0 + i as f64);
        let x = factor.solve(b.as_ref(), None);
        assert!((&f * &x - &b).norm_max() < 1e-12 * b.norm_max());
    }
}
