//! Dynamic condensation of the linear structure onto the friction contacts: the receptance
//! `G_h = W Z_h^{-1} W^T` per harmonic and the forced response at the contacts.
//!
//! # Conventions
//!
//! * **Complex amplitudes.** Every periodic quantity is `x(t) = Re(sum_h X_h e^{i h w t})`.
//!   A forcing term `cos * cos(h w t) + sin * sin(h w t)` therefore has the complex amplitude
//!   `F_h = cos - i sin`. Velocities are the caller's job: `V_h = i h w W U_h`.
//! * **Dynamic stiffness.** `Z_h = K (1 + i eta) - (h w)^2 M + i h w C` for `h >= 1`, with
//!   `C = model.viscous_damping()` (explicit `C` plus Rayleigh `alpha M + beta K`) and `eta`
//!   the hysteretic loss factor. For `h = 0`, `Z_0 = K`: hysteretic damping is a loss per
//!   *cycle* and is conventionally omitted from the static term (keeping it would make the
//!   static response complex, which has no physical meaning). The same rule holds at `w = 0`
//!   with `h >= 1` (then `Z_h = K (1 + i eta)`).
//! * **Receptance.** `G_h = W Z_h^{-1} W^T` (`m x m`, `m = dim * nc`, contact `c` direction
//!   `k` is row `c * dim + k`). `Z_h` is complex *symmetric* (not Hermitian), so `G_h` is
//!   complex symmetric; the direct backends symmetrise it (`(G + G^T) / 2`) to remove rounding.
//! * **Response.** `U_h = Z_h^{-1} (F_h + W^T R_h)`, so the contact displacement is
//!   `W U_h = G_h R_h + W Z_h^{-1} F_h` ([`ReceptanceAt::forced_contact_response`] is the
//!   second term) and any DOF is recovered by [`ReceptanceAt::recover`].
//!
//! # Why three backends
//!
//! The cost of `G_h` decides what model sizes are usable, and no single method is best:
//! * **dense** (complex dense LU of `Z_h`): exact, trivial, `O(n^3)` per harmonic and
//!   frequency; the right tool for lumped models (the papers' oscillators, blade-damper-blade).
//! * **sparse** (complex sparse LU of `Z_h`, symbolic analysis once for the pattern union of
//!   `K`, `M`, `C`, reused across harmonics and frequencies): exact, affordable up to some
//!   ten thousand DOFs, but a fresh numeric factorisation per harmonic and frequency.
//! * **modal** (lowest modes of `(K, M)` once, by shift-invert Lanczos on a sparse real
//!   Cholesky factor, then a modal sum plus the residual flexibility of the omitted modes):
//!   the per-frequency cost no longer depends on `n`; approximate in the dynamic contribution
//!   of the omitted modes and in non-proportional damping, exact in statics.
//!
//! [`ReceptanceKind::Auto`] picks dense for `n <= 500`; from 2000 DOFs, modal (100 modes, or
//! one per modal damping ratio) where the damping is proportional and the model is not a
//! cyclic sector, with every harmonic above a quarter of the highest retained mode condensed
//! exactly by the sparse backend instead; sparse otherwise up to `n <= 20_000`, modal above.
//! Explicit kinds override it.
//!
//! # Calling pattern
//!
//! [`Receptance::new`] does the frequency-independent work (dense copies, the symbolic sparse
//! analysis, or the modal extraction and residual flexibility). [`Receptance::prepare`] then
//! factorises every harmonic of the set at one frequency (in parallel over harmonics for the
//! direct backends; results do not depend on the thread count's scheduling because each
//! harmonic is computed independently) and returns a [`ReceptanceAt`], whose queries are cheap
//! and may be called any number of times.

mod cholesky;
mod cyclic_modal;
mod direct;
mod dynamics;
mod gram;
mod lanczos;
mod modal;
mod nd_modes;
mod tree_solve;

fn par() -> faer::Par {
    crate::deterministic_parallelism()
}

/// Rows per task in [`rows_of`].
const PRODUCT_ROWS: usize = 2048;

/// An `m x b` matrix computed a row at a time and stored by rows (`m * b` values): `row(k, y)`
/// fills row `k` into `y` (`b` zeros at the start). Rows are split among threads, each filled
/// by one of them, so the result does not depend on the thread count.
fn rows_of(m: usize, b: usize, row: impl Fn(usize, &mut [f64]) + Sync) -> Vec<f64> {
    use rayon::prelude::*;
    let mut out = vec![0.0; m * b];
    if b > 0 {
        out.par_chunks_mut(PRODUCT_ROWS * b)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (r, y) in chunk.chunks_mut(b).enumerate() {
                    row(c * PRODUCT_ROWS + r, y);
                }
            });
    }
    out
}

/// [`rows_of`] as a matrix.
fn by_rows(m: usize, b: usize, row: impl Fn(usize, &mut [f64]) + Sync) -> faer::Mat<f64> {
    use rayon::prelude::*;
    // Each chunk of rows is written straight into the matrix's columns: a copy out of a
    // row-major buffer afterwards was a serial pass over the whole product.
    let mut out = faer::Mat::zeros(m, b);
    if b > 0 {
        out.par_row_chunks_mut(PRODUCT_ROWS)
            .enumerate()
            .for_each(|(c, mut chunk)| {
                let mut y = vec![0.0; b];
                for r in 0..chunk.nrows() {
                    y.fill(0.0);
                    row(c * PRODUCT_ROWS + r, &mut y);
                    for (j, &v) in y.iter().enumerate() {
                        chunk[(r, j)] = v;
                    }
                }
            });
    }
    out
}

/// `a x` for a symmetric sparse `a` (a mass matrix) and a block `x`, reading `a` once for the
/// whole block: row `k` of the product is column `k` of `a` against the rows of `x`, which are
/// gathered contiguous (a block of 8 is one cache line a row). faer's product streams `a` once
/// per column of `x`, on one thread.
fn symmetric_times(
    a: faer::sparse::SparseColMatRef<'_, usize, f64>,
    x: faer::MatRef<'_, f64>,
) -> faer::Mat<f64> {
    let (n, b) = (x.nrows(), x.ncols());
    debug_assert_eq!(a.nrows(), a.ncols());
    let rows = rows_of(n, b, |i, y| {
        for (j, yj) in y.iter_mut().enumerate() {
            *yj = x[(i, j)];
        }
    });
    by_rows(n, b, |k, y| {
        for (&i, &v) in a.row_idx_of_col_raw(k).iter().zip(a.val_of_col(k)) {
            for (yj, xj) in y.iter_mut().zip(&rows[i * b..(i + 1) * b]) {
                *yj += v * xj;
            }
        }
    })
}

/// `a x` for a sparse `a` with few entries a row (the contacts' map `W`, `m x n`) and a tall
/// block `x`: each row of the product gathers its few rows of `x`, where faer's product walks
/// all `n` columns of `a` once per column of `x`, on one thread.
fn sparse_times(
    a: faer::sparse::SparseColMatRef<'_, usize, f64>,
    x: faer::MatRef<'_, f64>,
) -> faer::Mat<f64> {
    let (m, b) = (a.nrows(), x.ncols());
    let Ok(a_rows) = a.to_row_major() else {
        // Out of memory for the copy by rows: faer's product needs none.
        let mut y = faer::Mat::zeros(m, b);
        faer::sparse::linalg::matmul::sparse_dense_matmul(
            y.as_mut(),
            faer::Accum::Replace,
            a,
            x,
            1.0,
            faer::Par::Seq,
        );
        return y;
    };
    let a_rows = a_rows.as_ref();
    by_rows(m, b, |k, y| {
        for (&i, &v) in a_rows
            .col_idx_of_row_raw(k)
            .iter()
            .zip(a_rows.val_of_row(k))
        {
            for (j, yj) in y.iter_mut().enumerate() {
                *yj += v * x[(i, j)];
            }
        }
    })
}

use std::collections::BTreeMap;
use std::sync::Arc;

use ewr_model::{Model, SparseMatrix};
use faer::reborrow::ReborrowMut;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, MatMut, MatRef, c64};
use rayon::prelude::*;

pub use dynamics::{ContactDynamics, DYNAMICS_MAX_STATES, HarmonicDynamics};
pub use modal::{DampingCoupling, Modes, ResponseNorm, damping_coupling_errors};

/// Largest model [`ReceptanceKind::Auto`] sends to the dense backend (`O(n^3)` per harmonic;
/// a dense complex LU of 500 DOFs takes about 10 ms here).
pub const AUTO_DENSE_MAX_DOFS: usize = 500;
/// Largest model [`ReceptanceKind::Auto`] sends to the sparse backend; above, one numeric
/// complex sparse LU per harmonic and frequency becomes the bottleneck of a sweep.
pub const AUTO_SPARSE_MAX_DOFS: usize = 20_000;
/// Most DOFs a modal receptance recovers through cached static columns (one solve per DOF,
/// once, then none per call), or a quarter of the model's if more; more are recovered by one
/// solve per call. Every DOF of a 7488-DOF model by columns took 11 s and 2 GB (a nonlinear
/// mode's shapes); a forced sweep's monitored DOFs stay on the columns.
pub const RECOVER_AT_MAX_DOFS: usize = 64;

/// Modes kept by [`ReceptanceKind::Auto`] when it chooses the modal backend and the model has
/// no modal damping ratios (otherwise one mode per ratio).
pub const AUTO_MODAL_MODES: usize = 100;
/// From this many DOFs (every model the dense backend does not take) [`ReceptanceKind::Auto`]
/// extracts modes once instead of factorising every harmonic at every frequency (models with
/// proportional damping, not cyclic sectors). Measured (docs/performance.md, "A CalculiX area
/// contact, and the automatic receptance", "The automatic receptance from 500 DOFs"): the
/// extraction costs what 3-13 sparse harmonic condensations cost from 2000 to 15 000 DOFs and
/// about 50 at 570 DOFs, so a sweep, or one solve on 8 harmonics or more, is cheaper with it
/// (7488 DOFs: 420 s and 1.3 GB sparse, 147 s and 0.23 GB modal; the 570-DOF CalculiX blade
/// with 3-D shrouds, all:31: 13.3 s against 1.8 s, the same curve to 3e-7).
pub const AUTO_MODAL_MIN_DOFS: usize = AUTO_DENSE_MAX_DOFS + 1;
/// A modal backend chosen by [`ReceptanceKind::Auto`] condenses harmonic `h` at `w` from its
/// modes only while `h w` is at most this fraction of the highest retained mode's frequency;
/// above, the omitted modes' dynamic contribution is no longer small next to their static
/// one (their error grows as `(h w / omega_k)^2`), and the harmonic is condensed exactly by
/// the sparse backend.
pub const AUTO_MODAL_COVERAGE: f64 = 0.25;

/// Which backend computes the receptance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceptanceKind {
    /// Choose by size and cost: dense for `n <= AUTO_DENSE_MAX_DOFS`; from
    /// `AUTO_MODAL_MIN_DOFS`, modal with exact (sparse) condensation of the harmonics the
    /// modes do not cover ([`AUTO_MODAL_COVERAGE`]) where the damping is proportional and the
    /// model is not a cyclic sector; otherwise sparse up to `AUTO_SPARSE_MAX_DOFS`, modal
    /// above. A model with modal damping ratios always goes modal (with one mode per ratio),
    /// since only the modal backend can represent them.
    Auto,
    /// Complex dense LU of `Z_h`.
    Dense,
    /// Complex sparse LU of `Z_h` with a symbolic analysis shared by all harmonics/frequencies.
    Sparse,
    /// Modal sum over the lowest `modes` modes plus the residual flexibility of the others.
    Modal {
        /// Number of modes to retain (fewer if the structure has fewer finite-frequency modes).
        modes: usize,
    },
}

impl std::str::FromStr for ReceptanceKind {
    type Err = String;

    /// `auto`, `dense`, `sparse` or `modal:MODES` (MODES > 0), as every front end spells it.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(ReceptanceKind::Auto),
            "dense" => Ok(ReceptanceKind::Dense),
            "sparse" => Ok(ReceptanceKind::Sparse),
            _ => match s.strip_prefix("modal:").map(str::parse::<usize>) {
                Some(Ok(modes)) if modes > 0 => Ok(ReceptanceKind::Modal { modes }),
                _ => Err("use auto, dense, sparse or modal:MODES (MODES > 0)".into()),
            },
        }
    }
}

/// Why a receptance could not be built or evaluated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceptanceError {
    /// `Z_h` is (numerically) singular: an undamped structure at resonance, or a structure
    /// with rigid-body modes at `h w = 0`.
    #[error(
        "the dynamic stiffness of harmonic {harmonic} at w = {frequency} is singular \
         (undamped resonance, or rigid-body modes at zero frequency)"
    )]
    Singular {
        /// Harmonic index.
        harmonic: usize,
        /// Fundamental circular frequency `w`.
        frequency: f64,
    },
    /// A harmonic was queried that [`Receptance::prepare`] was not given.
    #[error("harmonic {harmonic} was not in the prepared set")]
    NotPrepared {
        /// Harmonic index.
        harmonic: usize,
    },
    /// An argument has the wrong length or shape.
    #[error("{what}: expected {expected}, got {got}")]
    BadSize {
        /// What was wrong.
        what: &'static str,
        /// Expected length / rows.
        expected: usize,
        /// Given length / rows.
        got: usize,
    },
    /// The model is inconsistent (matrix sizes, DOF indices, non-finite frequency...).
    #[error("invalid model for the receptance: {0}")]
    BadInput(String),
    /// A real sparse factorisation used by the modal backend failed (`K - sigma M` not
    /// positive definite, e.g. a negative stiffness or a massless DOF without stiffness).
    #[error("sparse factorisation failed: {0}")]
    Factorization(String),
    /// The Lanczos eigensolver did not converge or found an inconsistent spectrum.
    #[error("modal extraction failed: {0}")]
    Lanczos(String),
    /// Modal damping ratios (`/damping/zeta`) can only be represented by the modal backend.
    #[error("modal damping ratios need the modal receptance backend (ReceptanceKind::Modal)")]
    ModalDampingNeedsModal,
}

/// The structure as the backends need it: matrices, contact map, damping constants, forcing.
/// From this many DOFs [`Receptance::prepare`] condenses the harmonics of the direct
/// backends in parallel (rayon); below it, sequentially.
pub const PREPARE_PARALLEL_MIN_DOFS: usize = 64;

pub(crate) struct Structure {
    pub n: usize,
    pub m: usize,
    pub k: SparseMatrix,
    pub mass: SparseMatrix,
    /// `C + alpha M + beta K`.
    pub c: SparseMatrix,
    pub w: SparseMatrix,
    pub w_c: SparseColMat<usize, c64>,
    pub eta: f64,
    pub rayleigh_beta: f64,
    pub modal_zeta: Option<Vec<f64>>,
    /// Whether the model has an explicit damping matrix (not proportional in general: the
    /// modal backend keeps only its diagonal in the modal basis).
    pub explicit_c: bool,
    /// Complex forcing amplitudes per harmonic: `(dof, cos - i sin)`, summed.
    pub forcing: BTreeMap<usize, Vec<(usize, c64)>>,
    /// Series compliance `1/k` per contact row, added to the diagonal of every `G_h`
    /// (contact stiffness; empty when every contact is rigid).
    pub compliance: Vec<f64>,
    /// Cyclic symmetry of a sector model: harmonic `h` is condensed on nodal diameter
    /// `(h EO) mod N` (see [`CyclicMap`]).
    pub cyclic: Option<CyclicMap>,
}

/// Harmonic `h` and its forcing terms `(dof, re bits, im bits)` ([`Structure::forcing_key`]).
pub(crate) type ForcingKey = (usize, Vec<(usize, u64, u64)>);

/// The sector's right DOFs eliminated through `u_R = c_h u_L`, `c_h = exp(i 2 pi k_h / N)`:
/// `u = T_h q` with `q` the `nr` independent DOFs, so that `Z_h` becomes `T_h^H Z_h T_h`,
/// `W` becomes `W T_h` and a load `b` becomes `T_h^H b` (docs/cyclic.md).
pub(crate) struct CyclicMap {
    pub cyclic: ewr_model::Cyclic,
    /// Independent index of each DOF (a right DOF's is its left partner's).
    pub red: Vec<usize>,
    /// Whether each DOF is a right DOF (factor `c_h` in `T_h`).
    pub right: Vec<bool>,
    /// Number of independent DOFs.
    pub nr: usize,
}

impl CyclicMap {
    /// Independent index of DOF `i` and its factor in `T_h` for the phase `c`.
    pub fn of(&self, i: usize, c: c64) -> (usize, c64) {
        (
            self.red[i],
            if self.right[i] { c } else { c64::new(1.0, 0.0) },
        )
    }
}

impl Structure {
    fn new(model: &Model) -> Result<Self, ReceptanceError> {
        let n = model.n_dofs();
        let square = |a: &SparseMatrix, name: &str| {
            if a.nrows() != n || a.ncols() != n {
                Err(ReceptanceError::BadInput(format!(
                    "{name} is {} x {}, expected {n} x {n}",
                    a.nrows(),
                    a.ncols()
                )))
            } else {
                Ok(())
            }
        };
        square(&model.stiffness, "K")?;
        square(&model.mass, "M")?;
        if let Some(c) = &model.damping_matrix {
            square(c, "C")?;
        }
        let w = model
            .contacts
            .contact_matrix(n)
            .map_err(ReceptanceError::BadInput)?;
        let m = w.nrows();
        let w_c = to_complex(&w);
        let mut forcing: BTreeMap<usize, Vec<(usize, c64)>> = BTreeMap::new();
        for t in &model.forcing {
            if t.dof >= n {
                return Err(ReceptanceError::BadInput(format!(
                    "forcing on DOF {} out of range 0..{n}",
                    t.dof
                )));
            }
            forcing
                .entry(t.harmonic)
                .or_default()
                .push((t.dof, c64::new(t.cos, -t.sin)));
        }
        let d = &model.damping;
        Ok(Structure {
            n,
            m,
            k: model.stiffness.clone(),
            mass: model.mass.clone(),
            c: model.viscous_damping(),
            w,
            w_c,
            eta: d.hysteretic_eta.unwrap_or(0.0),
            rayleigh_beta: d.rayleigh.map_or(0.0, |r| r.1),
            modal_zeta: d.modal_zeta.clone(),
            explicit_c: model.damping_matrix.is_some(),
            forcing,
            compliance: model.contacts.compliance().unwrap_or_default(),
            cyclic: match &model.cyclic {
                None => None,
                Some(cy) => {
                    if let Some(p) = cy.problems(n).first() {
                        return Err(ReceptanceError::BadInput(format!("cyclic: {p}")));
                    }
                    let (red, right) = cy.reduction(n);
                    Some(CyclicMap {
                        cyclic: cy.clone(),
                        red,
                        right,
                        nr: n - cy.right.len(),
                    })
                }
            },
        })
    }

    /// Whether `other` has the same dynamics: stiffness, mass, damping, contacts and cyclic
    /// symmetry (the forcing may differ), compared to the bit.
    fn same_dynamics(&self, other: &Structure) -> bool {
        let same = |a: &SparseMatrix, b: &SparseMatrix| {
            a.nrows() == b.nrows()
                && a.ncols() == b.ncols()
                && a.triplet_iter()
                    .map(|t| (t.row, t.col, t.val.to_bits()))
                    .eq(b.triplet_iter().map(|t| (t.row, t.col, t.val.to_bits())))
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        self.n == other.n
            && self.m == other.m
            && same(&self.k, &other.k)
            && same(&self.mass, &other.mass)
            && same(&self.c, &other.c)
            && same(&self.w, &other.w)
            && self.eta.to_bits() == other.eta.to_bits()
            && self.rayleigh_beta.to_bits() == other.rayleigh_beta.to_bits()
            && self.modal_zeta.as_deref().map(bits) == other.modal_zeta.as_deref().map(bits)
            && self.explicit_c == other.explicit_c
            && bits(&self.compliance) == bits(&other.compliance)
            && self.cyclic.as_ref().map(|c| &c.cyclic) == other.cyclic.as_ref().map(|c| &c.cyclic)
    }

    /// What identifies harmonic `h`'s forcing: its terms, to the bit (a cache of forced
    /// responses shared by receptances of other forcings keys on it).
    pub fn forcing_key(&self, h: usize) -> ForcingKey {
        let terms = self.forcing.get(&h).map_or(Vec::new(), |t| {
            t.iter()
                .map(|(d, v)| (*d, v.re.to_bits(), v.im.to_bits()))
                .collect()
        });
        (h, terms)
    }

    /// Number of independent DOFs: `n`, less the right DOFs of a cyclic sector.
    pub fn n_independent(&self) -> usize {
        self.cyclic.as_ref().map_or(self.n, |c| c.nr)
    }

    /// The inter-sector phase `c_h` of harmonic `h` (1 without cyclic symmetry).
    pub fn phase(&self, h: usize) -> c64 {
        self.cyclic
            .as_ref()
            .map_or(c64::new(1.0, 0.0), |c| c.cyclic.phase(h))
    }

    /// `T_h^H b` for an `n`-row `b` (`b` itself without cyclic symmetry).
    pub fn reduce(&self, h: usize, b: Mat<c64>) -> Mat<c64> {
        let Some(cm) = &self.cyclic else {
            return b;
        };
        let c = self.phase(h);
        let mut out = Mat::zeros(cm.nr, b.ncols());
        for i in 0..self.n {
            let (r, f) = cm.of(i, c);
            for j in 0..b.ncols() {
                out[(r, j)] += f.conj() * b[(i, j)];
            }
        }
        out
    }

    /// `T_h q` for an `nr`-row `q` (`q` itself without cyclic symmetry).
    pub fn expand(&self, h: usize, q: Mat<c64>) -> Mat<c64> {
        let Some(cm) = &self.cyclic else {
            return q;
        };
        let c = self.phase(h);
        Mat::from_fn(self.n, q.ncols(), |i, j| {
            let (r, f) = cm.of(i, c);
            f * q[(r, j)]
        })
    }

    /// `W T_h` (`m x nr`, complex); `None` without cyclic symmetry (then it is `w_c`).
    pub fn w_cyclic(&self, h: usize) -> Option<SparseColMat<usize, c64>> {
        self.cyclic.as_ref()?;
        Some(self.w_cyclic_phase(self.phase(h)))
    }

    /// `W T` for the inter-sector phase `c` (cyclic structures only).
    pub fn w_cyclic_phase(&self, c: c64) -> SparseColMat<usize, c64> {
        let cm = self.cyclic.as_ref().expect("cyclic structure");
        let trip: Vec<_> = self
            .w
            .triplet_iter()
            .map(|t| {
                let (r, f) = cm.of(t.col, c);
                Triplet::new(t.row, r, f * *t.val)
            })
            .collect();
        SparseColMat::try_new_from_triplets(self.m, cm.nr, &trip)
            .expect("indices come from a valid W")
    }

    /// Hysteretic loss factor used at harmonic `h` (none in the static term).
    pub fn eta_h(&self, h: usize) -> f64 {
        if h == 0 { 0.0 } else { self.eta }
    }

    /// `F_h` as an `n x 1` matrix, or `None` when harmonic `h` is not forced.
    pub fn force(&self, h: usize) -> Option<Mat<c64>> {
        let terms = self.forcing.get(&h)?;
        let mut f = Mat::zeros(self.n, 1);
        for &(dof, v) in terms {
            f[(dof, 0)] += v;
        }
        Some(f)
    }

    /// `F_h + W^T r` as an `n x 1` matrix.
    pub fn load(&self, h: usize, r: &[c64]) -> Mat<c64> {
        let mut b = self.force(h).unwrap_or_else(|| Mat::zeros(self.n, 1));
        let w = self.w.as_ref();
        for j in 0..self.n {
            for (i, v) in w.row_idx_of_col(j).zip(w.val_of_col(j)) {
                b[(j, 0)] += r[i] * *v;
            }
        }
        b
    }

    /// `(W T_h)^H = T_h^H W^T` as a dense complex `nr x m` matrix followed by `extra` zero
    /// columns (`W^T` without cyclic symmetry).
    pub fn wt_dense_h(&self, h: usize, extra: usize) -> Mat<c64> {
        let Some(cm) = &self.cyclic else {
            return self.wt_dense(extra);
        };
        let c = self.phase(h);
        let mut b = Mat::zeros(cm.nr, self.m + extra);
        for t in self.w.triplet_iter() {
            let (r, f) = cm.of(t.col, c);
            b[(r, t.row)] += f.conj() * *t.val;
        }
        b
    }

    /// `W^T` as a dense complex `n x m` matrix followed by `extra` zero columns.
    pub fn wt_dense(&self, extra: usize) -> Mat<c64> {
        let mut b = Mat::zeros(self.n, self.m + extra);
        let w = self.w.as_ref();
        for j in 0..self.n {
            for (i, v) in w.row_idx_of_col(j).zip(w.val_of_col(j)) {
                b[(j, i)] = c64::new(*v, 0.0);
            }
        }
        b
    }
}

/// The receptance of a model at its contacts, with the frequency-independent work done.
///
/// Backends are an enum rather than a trait object: the set is closed and owned here, `Auto`
/// has to choose one at run time from the model, and the per-frequency data of each backend
/// ([`ReceptanceAt`]) differs, which an enum keeps in one concrete, `Send + Sync` type.
pub struct Receptance {
    s: Structure,
    backend: Backend,
    /// Where [`ReceptanceKind::Auto`] chose the modal backend: the highest `h w` its modes
    /// condense, and the sparse backend for the harmonics above (built on first need).
    exact_above: Option<ExactAbove>,
    /// The direct harmonics of the last frequency prepared: solves repeated at one frequency
    /// (the hold's rounds, `rho` retries, a truncation estimate's shared harmonics, a peak's
    /// re-evaluations) factorise each harmonic once.
    last: std::sync::Mutex<Prepared>,
}

/// Factorised harmonics kept from the last [`Receptance::prepare`], all at the frequency with
/// bits `w`.
#[derive(Default)]
struct Prepared {
    w: u64,
    harmonics: Vec<(usize, Arc<direct::DirectHarmonic>)>,
}

struct ExactAbove {
    limit: f64,
    sparse: std::sync::OnceLock<Result<direct::SparseBackend, ReceptanceError>>,
}

impl ExactAbove {
    /// The sparse analysis of `s`, built on first use.
    fn sparse(&self, s: &Structure) -> &Result<direct::SparseBackend, ReceptanceError> {
        if let Some(built) = self.sparse.get() {
            return built;
        }
        // Built outside the cell's lock: the orderings run on the thread pool, and a worker
        // waiting inside `get_or_init` could take a task (another curve) that asks for the
        // same cell, a deadlock. Two that race build the same analysis; the first is kept.
        let _ = self.sparse.set(direct::SparseBackend::new(s));
        self.sparse.get().expect("set above")
    }
}

enum Backend {
    Dense(direct::DenseBackend),
    Sparse(direct::SparseBackend),
    Modal(Box<modal::ModalBackend>),
    /// Modes per nodal diameter of a cyclic sector.
    CyclicModal(cyclic_modal::CyclicModalBackend),
}

impl Receptance {
    /// Builds the receptance of `model` with the given backend (see [`ReceptanceKind`]).
    ///
    /// For the modal backend this extracts the modes and the residual flexibility (the
    /// expensive, one-time part); for the sparse backend it does the symbolic analysis.
    pub fn new(model: &Model, kind: ReceptanceKind) -> Result<Self, ReceptanceError> {
        let s = Structure::new(model)?;
        let zeta = s.modal_zeta.as_ref().map(Vec::len);
        if kind == ReceptanceKind::Auto
            && zeta.is_none_or(|nz| nz == 0)
            && s.n >= AUTO_MODAL_MIN_DOFS
            && s.cyclic.is_none()
            && !s.explicit_c
        {
            // Up to AUTO_SPARSE_MAX_DOFS, a structure the modal backend cannot take (K - sigma
            // M not positive definite, no finite modes) goes sparse, as it did before.
            let modal = modal::ModalBackend::new(&s, AUTO_MODAL_MODES);
            if modal.is_ok() || s.n > AUTO_SPARSE_MAX_DOFS {
                let b = modal?;
                let limit = AUTO_MODAL_COVERAGE * b.modes.omega.last().copied().unwrap_or(0.0);
                return Ok(Receptance {
                    s,
                    backend: Backend::Modal(Box::new(b)),
                    exact_above: Some(ExactAbove {
                        limit,
                        sparse: std::sync::OnceLock::new(),
                    }),
                    last: Default::default(),
                });
            }
            return Ok(Receptance {
                backend: Backend::Sparse(direct::SparseBackend::new(&s)?),
                s,
                exact_above: None,
                last: Default::default(),
            });
        }
        let kind = match kind {
            ReceptanceKind::Auto => match zeta {
                Some(nz) if nz > 0 => ReceptanceKind::Modal { modes: nz },
                _ if s.n <= AUTO_DENSE_MAX_DOFS => ReceptanceKind::Dense,
                _ if s.n <= AUTO_SPARSE_MAX_DOFS => ReceptanceKind::Sparse,
                _ => ReceptanceKind::Modal {
                    modes: AUTO_MODAL_MODES,
                },
            },
            k => k,
        };
        let has_zeta = zeta.is_some_and(|nz| nz > 0);
        let backend = match kind {
            ReceptanceKind::Dense | ReceptanceKind::Sparse if has_zeta => {
                return Err(ReceptanceError::ModalDampingNeedsModal);
            }
            ReceptanceKind::Dense => Backend::Dense(direct::DenseBackend::new(&s)),
            ReceptanceKind::Sparse => Backend::Sparse(direct::SparseBackend::new(&s)?),
            ReceptanceKind::Modal { modes } if s.cyclic.is_some() => {
                Backend::CyclicModal(cyclic_modal::CyclicModalBackend::new(&s, modes)?)
            }
            ReceptanceKind::Modal { modes } => {
                Backend::Modal(Box::new(modal::ModalBackend::new(&s, modes)?))
            }
            ReceptanceKind::Auto => unreachable!("Auto was resolved above"),
        };
        Ok(Receptance {
            s,
            backend,
            exact_above: None,
            last: Default::default(),
        })
    }

    /// The receptance of `model`, which differs from this one's in its forcing alone (a
    /// study's forcing scale or preload): the modal backends keep their modes, factor and
    /// residual flexibility ([`keeps_modes_for_other_forcing`](Self::keeps_modes_for_other_forcing));
    /// the direct backends are built anew.
    ///
    /// # Errors
    /// [`ReceptanceError::BadInput`] where the stiffness, mass, damping, contacts or cyclic
    /// symmetry differ; what [`new`](Self::new) returns for a bad model.
    pub fn with_forcing(&self, model: &Model) -> Result<Self, ReceptanceError> {
        let s = Structure::new(model)?;
        if !self.s.same_dynamics(&s) {
            return Err(ReceptanceError::BadInput(
                "the model differs from the receptance's in more than its forcing".into(),
            ));
        }
        let backend = match &self.backend {
            Backend::Modal(b) => Backend::Modal(Box::new(b.with_forcing(&s))),
            Backend::Dense(_) => Backend::Dense(direct::DenseBackend::new(&s)),
            Backend::Sparse(_) => Backend::Sparse(direct::SparseBackend::new(&s)?),
            Backend::CyclicModal(b) => Backend::CyclicModal(b.with_forcing()),
        };
        Ok(Receptance {
            s,
            backend,
            exact_above: self.exact_above.as_ref().map(|e| ExactAbove {
                limit: e.limit,
                sparse: std::sync::OnceLock::new(),
            }),
            last: Default::default(),
        })
    }

    /// Whether [`with_forcing`](Self::with_forcing) keeps this receptance's one-time work (the
    /// modal backends' modes), rather than building anew (the direct backends).
    pub fn keeps_modes_for_other_forcing(&self) -> bool {
        matches!(self.backend, Backend::Modal(_) | Backend::CyclicModal(_))
    }

    /// The highest harmonic frequency `h w` the modes condense where [`ReceptanceKind::Auto`]
    /// chose the modal backend (harmonics above are condensed exactly); `None` otherwise.
    pub fn modal_coverage(&self) -> Option<f64> {
        self.exact_above.as_ref().map(|e| e.limit)
    }

    /// The backend in use (never `Auto`; for modal, the number of modes actually retained).
    pub fn kind(&self) -> ReceptanceKind {
        match &self.backend {
            Backend::Dense(_) => ReceptanceKind::Dense,
            Backend::Sparse(_) => ReceptanceKind::Sparse,
            Backend::Modal(b) => ReceptanceKind::Modal {
                modes: b.modes.omega.len(),
            },
            Backend::CyclicModal(b) => ReceptanceKind::Modal { modes: b.modes },
        }
    }

    /// Number of DOFs `n`.
    pub fn n_dofs(&self) -> usize {
        self.s.n
    }

    /// The harmonics the model is forced on: a harmonic set without one of them solves
    /// another problem (the truncation estimate's set below must keep them).
    pub fn forced_harmonics(&self) -> impl Iterator<Item = usize> + '_ {
        self.s.forcing.keys().copied()
    }

    /// The cyclic symmetry of a sector model (`None` for an ordinary model).
    pub fn cyclic(&self) -> Option<&ewr_model::Cyclic> {
        self.s.cyclic.as_ref().map(|c| &c.cyclic)
    }

    /// Size `m = dim * nc` of the contact receptance.
    pub fn n_contact_rows(&self) -> usize {
        self.s.m
    }

    /// Where the modal backend condenses a model with an explicit damping matrix: what keeping
    /// only the diagonal of its projection on the modes costs ([`DampingCoupling`]). `None`
    /// for other backends and for damping the modes diagonalise (Rayleigh, modal ratios,
    /// hysteretic).
    pub fn damping_coupling(&self) -> Option<DampingCoupling> {
        self.damping_coupling_below(f64::INFINITY)
    }

    /// [`Receptance::damping_coupling`] over the retained modes up to `omega_max` (rad/s):
    /// those a run's harmonics can bring to resonance. Above, a mode responds
    /// quasi-statically and its damping, coupled or not, hardly matters.
    pub fn damping_coupling_below(&self, omega_max: f64) -> Option<DampingCoupling> {
        match &self.backend {
            Backend::Modal(b) => b
                .coupling
                .as_ref()
                .map(|errors| modal::worst_coupling(errors, &b.modes.omega, omega_max)),
            _ => None,
        }
    }

    /// The retained modes and residual flexibility (modal backend only).
    pub fn modes(&self) -> Option<&Modes> {
        match &self.backend {
            Backend::Modal(b) => Some(&b.modes),
            _ => None,
        }
    }

    /// Factorises (or evaluates) every harmonic of `harmonics` at fundamental frequency `w`.
    ///
    /// Duplicates in `harmonics` are ignored; queries for other harmonics fail with
    /// [`ReceptanceError::NotPrepared`].
    pub fn prepare(
        &self,
        w: f64,
        harmonics: &[usize],
    ) -> Result<ReceptanceAt<'_>, ReceptanceError> {
        self.prepare_with(w, harmonics, 0.0)
    }

    /// Extracts now what the backend would otherwise extract on first use for `harmonics` up
    /// to the fundamental `omega_max` (a cyclic sector's modes of their nodal diameters, the
    /// automatic backend's sparse analysis for the harmonics above its modes' coverage), so
    /// that curves started together, or the work beside a curve, share one instead of each
    /// racing to make its own. An
    /// extraction that fails is reported again by the [`prepare`](Self::prepare) that needs
    /// it.
    pub fn warm(&self, harmonics: &[usize], omega_max: f64) {
        if let Some(cm) = self.s.cyclic.as_ref() {
            self.warm_diameters(harmonics.iter().map(|&h| cm.cyclic.nodal_diameter(h)));
        }
        let h_max = harmonics.iter().copied().max().unwrap_or(0);
        if let Some(e) = &self.exact_above
            && h_max as f64 * omega_max.abs() > e.limit
        {
            let _ = e.sparse(&self.s);
        }
    }

    /// [`warm`](Self::warm) for the nodal diameters `nds` of a cyclic sector (taken modulo
    /// its sectors; nothing on other models): those a classification against other
    /// inter-sector phases reaches.
    pub fn warm_nodal_diameters(&self, nds: impl IntoIterator<Item = usize>) {
        if let Some(cm) = self.s.cyclic.as_ref() {
            let n = cm.cyclic.sectors;
            self.warm_diameters(nds.into_iter().map(|nd| nd % n));
        }
    }

    /// The most structural states a harmonic has in a cyclic sector's stability pencil: the
    /// modes kept per nodal diameter, or the sector's independent DOFs on a direct backend
    /// ([`Receptance::dynamics`] holds none for a sector: each harmonic's structure is its
    /// diameter's). `None` on other models.
    pub fn cyclic_states(&self) -> Option<usize> {
        let cm = self.s.cyclic.as_ref()?;
        Some(match &self.backend {
            Backend::CyclicModal(b) => b.modes,
            _ => cm.nr,
        })
    }

    fn warm_diameters(&self, nds: impl Iterator<Item = usize>) {
        if let Backend::CyclicModal(b) = &self.backend {
            let mut nds: Vec<usize> = nds.collect();
            nds.sort_unstable();
            nds.dedup();
            for nd in nds {
                let _ = b.nd(&self.s, nd);
            }
        }
    }

    /// [`prepare`](Self::prepare) for the structure with `-xi M` added to its damping, from
    /// the modal backend's modes without extracting them again: mass-normalised modes turn
    /// it into `-xi` on each modal damping (exact for the retained modes). The residual
    /// flexibility of the modes left out keeps its own damping (`eta`, `beta`): the shift
    /// is left out there, as `alpha M` already is, a relative error of about `xi / (h w)`
    /// on a quasi-static term. The extended periodic motion concept's
    /// negative damping (nonlinear modes) changes `xi` at every Newton evaluation. Only where
    /// every harmonic is condensed by modes: other backends, and harmonics an automatic
    /// choice condenses exactly, give [`ReceptanceError::BadInput`].
    pub fn prepare_damped(
        &self,
        w: f64,
        harmonics: &[usize],
        xi: f64,
    ) -> Result<ReceptanceAt<'_>, ReceptanceError> {
        if !xi.is_finite() {
            return Err(ReceptanceError::BadInput(format!(
                "damping shift xi = {xi}"
            )));
        }
        if !matches!(self.backend, Backend::Modal(_)) {
            return Err(ReceptanceError::BadInput(
                "a mass-proportional damping shift needs the modal receptance".into(),
            ));
        }
        self.prepare_with(w, harmonics, xi)
    }

    fn prepare_with(
        &self,
        w: f64,
        harmonics: &[usize],
        xi: f64,
    ) -> Result<ReceptanceAt<'_>, ReceptanceError> {
        if !w.is_finite() {
            return Err(ReceptanceError::BadInput(format!("frequency w = {w}")));
        }
        let mut hs: Vec<usize> = Vec::with_capacity(harmonics.len());
        for &h in harmonics {
            if !hs.contains(&h) {
                hs.push(h);
            }
        }
        // Harmonics factorised at this frequency by the last call are shared, not redone.
        let key = w.to_bits();
        let kept: Vec<Option<Arc<direct::DirectHarmonic>>> = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if last.w != key {
                // Another frequency: its factors are let go before new ones are made.
                last.w = key;
                last.harmonics.clear();
            }
            hs.iter()
                .map(|h| {
                    last.harmonics
                        .iter()
                        .find(|(k, _)| k == h)
                        .map(|(_, d)| d.clone())
                })
                .collect()
        };
        let direct = |h: usize, d: Result<direct::DirectHarmonic, ReceptanceError>| {
            d.map(|d| HarmonicData::Direct(Arc::new(d)))
                .map(|data| (h, data))
        };
        // Each harmonic is independent, so threads do not change the result; below
        // PREPARE_PARALLEL_MIN_DOFS one harmonic is a few microseconds and handing it to
        // the thread pool costs more than it saves.
        let parallel = self.s.n >= PREPARE_PARALLEL_MIN_DOFS;
        let one = |(&h, kept): (&usize, &Option<Arc<direct::DirectHarmonic>>)| {
            if let Some(d) = kept {
                return Ok((h, HarmonicData::Direct(d.clone())));
            }
            match &self.backend {
                Backend::Dense(b) => direct(h, b.harmonic(&self.s, w, h)),
                Backend::Sparse(b) => direct(h, b.harmonic(&self.s, w, h)),
                // Modes are extracted per nodal diameter on first use, then O(m^2 modes).
                Backend::CyclicModal(b) => direct(h, b.harmonic(&self.s, w, h)),
                // Per harmonic this is O(modes) work. Harmonics above an automatic choice's
                // coverage are condensed exactly instead.
                Backend::Modal(b) => match &self.exact_above {
                    Some(e) if xi != 0.0 && h as f64 * w.abs() > e.limit => {
                        Err(ReceptanceError::BadInput(format!(
                            "harmonic {h} at w = {w} is condensed exactly, not by modes: a \
                             damping shift needs every harmonic condensed by modes (more modes)"
                        )))
                    }
                    Some(e) if h as f64 * w.abs() > e.limit => {
                        let sparse = e.sparse(&self.s).as_ref().map_err(Clone::clone)?;
                        direct(h, sparse.harmonic(&self.s, w, h))
                    }
                    _ => b
                        .harmonic(&self.s, w, h, xi)
                        .map(|d| (h, HarmonicData::Modal(d))),
                },
            }
        };
        let threads = parallel && matches!(self.backend, Backend::Dense(_) | Backend::Sparse(_));
        let data: Result<Vec<(usize, HarmonicData)>, ReceptanceError> = if threads {
            hs.par_iter().zip(kept.par_iter()).map(one).collect()
        } else {
            hs.iter().zip(kept.iter()).map(one).collect()
        };
        let data = data?;
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if last.w == key {
                for (h, d) in &data {
                    if let HarmonicData::Direct(d) = d
                        && !last.harmonics.iter().any(|(k, _)| k == h)
                    {
                        last.harmonics.push((*h, d.clone()));
                    }
                }
            }
        }
        let data: Vec<HarmonicData> = data.into_iter().map(|(_, d)| d).collect();
        Ok(ReceptanceAt {
            rec: self,
            w,
            harmonics: hs,
            data,
        })
    }
}

enum HarmonicData {
    // Shared with the cache of the last frequency (a dense LU is much larger than the modal
    // data).
    Direct(Arc<direct::DirectHarmonic>),
    Modal(modal::ModalHarmonic),
}

/// `G_h x` for several harmonics at once, from the modal receptance's real factors
/// (`W Phi`, the residual flexibility `R`, the series compliance) without forming any `G_h`
/// (see [`ReceptanceAt::modal_product`]). Matrix-free Newton multiplies by every `G_h` of
/// the set at each GMRES step; one harmonic at a time that read `R` (`m x m`) once per
/// harmonic, a few flops per entry read, while here one real product reads it once for all
/// (docs/performance.md, "The receptance product of all harmonics at once").
#[derive(Clone)]
pub struct ModalProduct {
    factors: Arc<modal::ContactFactors>,
    /// Per column: `1 / d_r` per mode.
    inv_d: Vec<Vec<c64>>,
    /// Per column: the residual flexibility's factor.
    res_factor: Vec<c64>,
}

impl std::fmt::Debug for ModalProduct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModalProduct")
            .field("rows", &self.rows())
            .field("modes", &self.factors.w_phi.ncols())
            .field("columns", &self.columns())
            .finish()
    }
}

impl ModalProduct {
    /// Contact rows `m`.
    pub fn rows(&self) -> usize {
        self.factors.w_phi.nrows()
    }

    /// Columns of the input: one per harmonic given to [`ReceptanceAt::modal_product`].
    pub fn columns(&self) -> usize {
        self.res_factor.len()
    }

    /// `G_h` of column `j`'s harmonic, formed (`O(m^2 modes)`): what
    /// [`ReceptanceAt::contact_receptance`] gives, to the bit, for a system that kept only the
    /// products and needs the matrix after all (a preconditioner, a dense Jacobian).
    ///
    /// # Panics
    /// If `j` is not below [`columns`](Self::columns).
    pub fn dense(&self, j: usize) -> Mat<c64> {
        self.factors.form_g(&self.inv_d[j], self.res_factor[j])
    }

    /// `out[:, j] = G_{h_j} x[:, j]` (`x` and `out` are `m x columns`). `G_h` is symmetric, so
    /// this is also the product by `G_h^T`.
    ///
    /// # Panics
    /// If `x` or `out` is not `m x columns`.
    pub fn apply(&self, x: MatRef<'_, c64>, mut out: MatMut<'_, c64>) {
        let f = &*self.factors;
        let (m, k) = (self.rows(), self.columns());
        assert!(x.nrows() == m && x.ncols() == k && out.nrows() == m && out.ncols() == k);
        let r = f.w_phi.ncols();
        // Real and imaginary parts side by side: `[Re X | Im X]`.
        let split = |scale: &dyn Fn(usize) -> c64| {
            Mat::from_fn(m, 2 * k, |i, j| {
                let z = x[(i, j % k)] * scale(j % k);
                if j < k { z.re } else { z.im }
            })
        };
        let xr = split(&|_| c64::new(1.0, 0.0));
        let mut t = Mat::<f64>::zeros(r, 2 * k);
        faer::linalg::matmul::matmul(
            t.as_mut(),
            faer::Accum::Replace,
            f.w_phi.transpose(),
            xr.as_ref(),
            1.0,
            par(),
        );
        for (j, d) in self.inv_d.iter().enumerate() {
            for (q, d) in d.iter().enumerate() {
                let z = c64::new(t[(q, j)], t[(q, j + k)]) * d;
                t[(q, j)] = z.re;
                t[(q, j + k)] = z.im;
            }
        }
        let mut y = Mat::<f64>::zeros(m, 2 * k);
        faer::linalg::matmul::matmul(
            y.as_mut(),
            faer::Accum::Replace,
            f.w_phi.as_ref(),
            t.as_ref(),
            1.0,
            par(),
        );
        let xs = split(&|j| self.res_factor[j]);
        faer::linalg::matmul::matmul(
            y.as_mut(),
            faer::Accum::Add,
            f.residual.as_ref(),
            xs.as_ref(),
            1.0,
            par(),
        );
        for j in 0..k {
            for i in 0..m {
                // No compliance (rigid contacts) is an empty list.
                let c = f.compliance.get(i).copied().unwrap_or(0.0);
                out[(i, j)] = c64::new(y[(i, j)], y[(i, j + k)]) + x[(i, j)] * c;
            }
        }
    }
}

/// The receptance at one fundamental frequency for a set of harmonics (see
/// [`Receptance::prepare`]). All queries are read-only and may run concurrently.
pub struct ReceptanceAt<'a> {
    rec: &'a Receptance,
    w: f64,
    harmonics: Vec<usize>,
    data: Vec<HarmonicData>,
}

impl<'a> ReceptanceAt<'a> {
    /// The fundamental circular frequency `w`.
    pub fn frequency(&self) -> f64 {
        self.w
    }

    /// Number of DOFs `n` of the structure condensed.
    pub fn n_dofs(&self) -> usize {
        self.rec.s.n
    }

    /// True when every `G_h` is complex symmetric (`G_h^T = G_h`), i.e. except on a cyclic
    /// sector.
    pub fn is_symmetric(&self) -> bool {
        self.rec.s.cyclic.is_none()
    }

    /// The prepared harmonics, in the order given (duplicates removed).
    pub fn harmonics(&self) -> &[usize] {
        &self.harmonics
    }

    fn get(&self, h: usize) -> Result<&HarmonicData, ReceptanceError> {
        self.harmonics
            .iter()
            .position(|&x| x == h)
            .map(|i| &self.data[i])
            .ok_or(ReceptanceError::NotPrepared { harmonic: h })
    }

    fn modal(&self) -> &modal::ModalBackend {
        match &self.rec.backend {
            Backend::Modal(b) => b,
            _ => unreachable!("modal harmonic data only comes from the modal backend"),
        }
    }

    /// `G_h = W Z_h^{-1} W^T` (`m x m`, complex symmetric). Formed at [`Receptance::prepare`]
    /// by the direct backends, on first use by the modal backend (then cached).
    pub fn contact_receptance(&self, h: usize) -> Result<MatRef<'_, c64>, ReceptanceError> {
        Ok(match self.get(h)? {
            HarmonicData::Direct(d) => d.g.as_ref(),
            HarmonicData::Modal(d) => d.g(self.modal()).as_ref(),
        })
    }

    /// The `size x size` diagonal block of `G_h` at rows and columns `first .. first + size`
    /// (e.g. one contact's self-receptance, `first = c * dim`, `size = dim`). The modal
    /// backend computes it from the modes without forming `G_h`.
    pub fn diagonal_block(
        &self,
        h: usize,
        first: usize,
        size: usize,
    ) -> Result<Mat<c64>, ReceptanceError> {
        let m = self.rec.s.m;
        if first + size > m {
            return Err(ReceptanceError::BadSize {
                what: "end of the diagonal block",
                expected: m,
                got: first + size,
            });
        }
        Ok(match self.get(h)? {
            HarmonicData::Direct(d) => d.g.as_ref().submatrix(first, first, size, size).to_owned(),
            HarmonicData::Modal(d) => {
                let mut b = d.block(self.modal(), first, size);
                for (i, c) in self
                    .rec
                    .s
                    .compliance
                    .iter()
                    .skip(first)
                    .take(size)
                    .enumerate()
                {
                    b[(i, i)] += c64::new(*c, 0.0);
                }
                b
            }
        })
    }

    /// `out = G_h x` for `x` with `m` rows and any number of columns.
    ///
    /// The modal backend never forms `G_h` for this: `W Phi diag(1/d) Phi^T W^T x` plus the
    /// residual flexibility, i.e. `O(m (modes + m))` per column.
    pub fn apply(
        &self,
        h: usize,
        x: MatRef<'_, c64>,
        out: MatMut<'_, c64>,
    ) -> Result<(), ReceptanceError> {
        let m = self.rec.s.m;
        if x.nrows() != m {
            return Err(ReceptanceError::BadSize {
                what: "rows of x in apply",
                expected: m,
                got: x.nrows(),
            });
        }
        if out.nrows() != m || out.ncols() != x.ncols() {
            return Err(ReceptanceError::BadSize {
                what: "rows of out in apply (and columns must match x)",
                expected: m,
                got: out.nrows(),
            });
        }
        match self.get(h)? {
            HarmonicData::Direct(d) => {
                faer::linalg::matmul::matmul(
                    out,
                    faer::Accum::Replace,
                    d.g.as_ref(),
                    x,
                    c64::new(1.0, 0.0),
                    par(),
                );
            }
            HarmonicData::Modal(d) => {
                let mut out = out;
                d.apply(self.modal(), x, out.rb_mut());
                for (i, c) in self.rec.s.compliance.iter().enumerate() {
                    for j in 0..x.ncols() {
                        out[(i, j)] += x[(i, j)] * *c;
                    }
                }
            }
        }
        Ok(())
    }

    /// `out = G_h^T x`, for the transposed Jacobian products of matrix-free Newton. Equal to
    /// [`apply`](Self::apply) except on a cyclic sector, whose `G_h` is not symmetric
    /// (`G_h^T` is the receptance of the wave travelling the other way).
    pub fn apply_transpose(
        &self,
        h: usize,
        x: MatRef<'_, c64>,
        out: MatMut<'_, c64>,
    ) -> Result<(), ReceptanceError> {
        match self.get(h)? {
            HarmonicData::Direct(d) if self.rec.s.cyclic.is_some() => {
                let m = self.rec.s.m;
                if x.nrows() != m || out.nrows() != m || out.ncols() != x.ncols() {
                    return Err(ReceptanceError::BadSize {
                        what: "rows of x and out in apply_transpose",
                        expected: m,
                        got: x.nrows(),
                    });
                }
                faer::linalg::matmul::matmul(
                    out,
                    faer::Accum::Replace,
                    d.g.as_ref().transpose(),
                    x,
                    c64::new(1.0, 0.0),
                    par(),
                );
                Ok(())
            }
            _ => self.apply(h, x, out),
        }
    }

    /// The product by every `G_h` of `hs` at once from the modal backend's factors (column
    /// `j` of its input multiplied by `G_{hs[j]}`), or `None` where a harmonic of `hs` is not
    /// condensed by modes (other backends, a cyclic sector, harmonics above an automatic
    /// choice's coverage) or was not prepared.
    pub fn modal_product(&self, hs: &[usize]) -> Option<ModalProduct> {
        let Backend::Modal(b) = &self.rec.backend else {
            return None;
        };
        let mut inv_d = Vec::with_capacity(hs.len());
        let mut res_factor = Vec::with_capacity(hs.len());
        for &h in hs {
            match self.get(h).ok()? {
                HarmonicData::Modal(d) => {
                    inv_d.push(d.inv_d().to_vec());
                    res_factor.push(d.res_factor());
                }
                HarmonicData::Direct(_) => return None,
            }
        }
        Some(ModalProduct {
            factors: b.factors.clone(),
            inv_d,
            res_factor,
        })
    }

    /// `y = G_h x` for one vector (convenience form of [`apply`](Self::apply)).
    pub fn apply_vec(&self, h: usize, x: &[c64]) -> Result<Vec<c64>, ReceptanceError> {
        let m = self.rec.s.m;
        if x.len() != m {
            return Err(ReceptanceError::BadSize {
                what: "length of x in apply_vec",
                expected: m,
                got: x.len(),
            });
        }
        let mut y = Mat::zeros(m, 1);
        self.apply(h, MatRef::from_column_major_slice(x, m, 1), y.as_mut())?;
        Ok(col(&y))
    }

    /// `W Z_h^{-1} F_h`: the contact displacement of harmonic `h` without friction (`m`
    /// entries; zeros when `h` is not forced).
    pub fn forced_contact_response(&self, h: usize) -> Result<Vec<c64>, ReceptanceError> {
        Ok(match self.get(h)? {
            HarmonicData::Direct(d) => d.forced.clone(),
            HarmonicData::Modal(d) => d.forced(self.modal(), &self.rec.s, h),
        })
    }

    /// `Z_h^{-1} b` for a load `b` on every DOF (not contact forces: [`recover`](Self::recover)
    /// adds the model's forcing to `W^T r`). With symmetric `K`, `M` and `C`, `Z_h^{-1}` is
    /// complex symmetric, so one such solve gives a linear functional of every contact row's
    /// response (`(W Z^{-1} a)_s = a^T Z^{-1} W^T e_s`): a nonlinear mode's normalisation
    /// rows differentiated by two solves instead of one per contact row. Not for cyclic
    /// sectors.
    pub fn solve_load(&self, h: usize, b: &[c64]) -> Result<Vec<c64>, ReceptanceError> {
        let s = &self.rec.s;
        if b.len() != s.n {
            return Err(ReceptanceError::BadSize {
                what: "length of the load in solve_load",
                expected: s.n,
                got: b.len(),
            });
        }
        if s.cyclic.is_some() {
            return Err(ReceptanceError::BadInput(
                "solve_load: not on cyclic sectors".into(),
            ));
        }
        let b = Mat::from_fn(s.n, 1, |i, _| b[i]);
        let u = match self.get(h)? {
            HarmonicData::Direct(d) => s.expand(h, d.solve(s.reduce(h, b))),
            HarmonicData::Modal(d) => d.recover(self.modal(), s, b),
        };
        Ok(col(&u))
    }

    /// The kinetic-energy norm `Q^H M Q` of harmonic `h`'s response `Q = Z_h^{-1} W^T r` to the
    /// contact forces `r` alone, `Q` at `dof`, and their derivatives in `r`, without
    /// recovering every DOF: what a nonlinear mode's normalisation reads at every Newton
    /// evaluation. From the modal backend's coordinates and the Gram matrix of its modes and
    /// static residual in `M` (formed on first use: one static solve per contact row);
    /// `Ok(None)` where there is no such shortcut (the dense and direct backends, cyclic
    /// sectors, a forced harmonic, an interface too large to keep `S W^T`): recover then.
    pub fn response_norm(
        &self,
        h: usize,
        r: &[c64],
        dof: usize,
    ) -> Result<Option<ResponseNorm>, ReceptanceError> {
        let s = &self.rec.s;
        if r.len() != s.m {
            return Err(ReceptanceError::BadSize {
                what: "length of the contact forces in response_norm",
                expected: s.m,
                got: r.len(),
            });
        }
        if dof >= s.n {
            return Err(ReceptanceError::BadInput(format!(
                "response_norm: DOF {dof} out of range 0..{}",
                s.n
            )));
        }
        if s.cyclic.is_some() || s.forcing.contains_key(&h) {
            return Ok(None);
        }
        Ok(match self.get(h)? {
            HarmonicData::Modal(d) => d.response_norm(self.modal(), s, r, dof),
            HarmonicData::Direct(_) => None,
        })
    }

    /// [`recover`](Self::recover) of every DOF for several harmonics at once (`(h, r)` pairs):
    /// where every one is condensed by modes, one static residual solve serves them all (the
    /// factor read once, not once per harmonic); each on its own otherwise.
    pub fn recover_every(
        &self,
        loads: &[(usize, &[c64])],
    ) -> Result<Vec<Vec<c64>>, ReceptanceError> {
        let s = &self.rec.s;
        let mut parts = Vec::with_capacity(loads.len());
        for &(h, r) in loads {
            if r.len() != s.m {
                return Err(ReceptanceError::BadSize {
                    what: "length of the contact forces in recover_every",
                    expected: s.m,
                    got: r.len(),
                });
            }
            match self.get(h)? {
                HarmonicData::Modal(d) => parts.push((d, s.load(h, r))),
                HarmonicData::Direct(_) => {
                    return loads
                        .iter()
                        .map(|&(h, r)| self.recover(h, r, None))
                        .collect();
                }
            }
        }
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        Ok(modal::ModalHarmonic::recover_many(self.modal(), s, &parts)
            .iter()
            .map(col)
            .collect())
    }

    /// `U_h = Z_h^{-1} (F_h + W^T R_h)` at the DOFs `dofs` (all DOFs when `None`), for the
    /// contact forces `r` (`m` entries) of harmonic `h`.
    ///
    /// Costs one solve with the stored factorisation (direct backends) or a modal sum plus
    /// one static residual solve (modal backend); the modal backend recovers a DOF list of up
    /// to [`RECOVER_AT_MAX_DOFS`] (or a quarter of the DOFs) from cached columns of the static
    /// residual operator (one solve per DOF, once).
    pub fn recover(
        &self,
        h: usize,
        r: &[c64],
        dofs: Option<&[usize]>,
    ) -> Result<Vec<c64>, ReceptanceError> {
        let s = &self.rec.s;
        if r.len() != s.m {
            return Err(ReceptanceError::BadSize {
                what: "length of the contact forces in recover",
                expected: s.m,
                got: r.len(),
            });
        }
        if let Some(&bad) = dofs.and_then(|d| d.iter().find(|&&d| d >= s.n)) {
            return Err(ReceptanceError::BadInput(format!(
                "recover: DOF {bad} out of range 0..{}",
                s.n
            )));
        }
        let data = self.get(h)?;
        let b = s.load(h, r);
        if let (HarmonicData::Modal(d), Some(dofs)) = (data, dofs)
            && dofs.len() <= RECOVER_AT_MAX_DOFS.max(s.n / 4)
        {
            return Ok(d.recover_at(self.modal(), s, &b, dofs));
        }
        let u = match data {
            HarmonicData::Direct(d) => {
                let rb = s.reduce(h, b);
                // A cyclic modal solver gives a few DOFs from cached columns, without a solve.
                if let (Some(dofs), Some(cm)) = (dofs, &s.cyclic) {
                    let rows: Vec<usize> = dofs.iter().map(|&i| cm.red[i]).collect();
                    if let Some(q) = d.solve_at(&rb, &rows) {
                        let c = s.phase(h);
                        return Ok(dofs
                            .iter()
                            .zip(q)
                            .map(|(&i, qi)| cm.of(i, c).1 * qi)
                            .collect());
                    }
                }
                s.expand(h, d.solve(rb))
            }
            HarmonicData::Modal(d) => d.recover(self.modal(), s, b),
        };
        Ok(match dofs {
            Some(d) => d.iter().map(|&i| u[(i, 0)]).collect(),
            None => col(&u),
        })
    }
}

/// The real symmetric embeddings `(E(K_k), E(M_k))` (`2 nr x 2 nr`) of a cyclic sector's
/// Hermitian pair on nodal diameter `nd` (docs/cyclic.md); each eigenvalue appears twice.
pub(crate) fn embedded_pair(
    model: &Model,
    nd: usize,
) -> Result<(SparseMatrix, SparseMatrix), ReceptanceError> {
    let s = Structure::new(model)?;
    let cm = s
        .cyclic
        .as_ref()
        .ok_or_else(|| ReceptanceError::BadInput("not a cyclic sector".into()))?;
    let a = 2.0 * std::f64::consts::PI * (nd % cm.cyclic.sectors) as f64 / cm.cyclic.sectors as f64;
    let c = c64::new(a.cos(), a.sin());
    Ok((
        cyclic_modal::embed(&cyclic_modal::reduce_triplets(&s, &s.k, c), cm.nr),
        cyclic_modal::embed(&cyclic_modal::reduce_triplets(&s, &s.mass, c), cm.nr),
    ))
}

/// First column of a matrix as a vector.
fn col(a: &Mat<c64>) -> Vec<c64> {
    (0..a.nrows()).map(|i| a[(i, 0)]).collect()
}

/// Complex copy of a real sparse matrix (faer does not multiply mixed real/complex).
fn to_complex(a: &SparseMatrix) -> SparseColMat<usize, c64> {
    let trip: Vec<_> = a
        .triplet_iter()
        .map(|t| Triplet::new(t.row, t.col, c64::new(*t.val, 0.0)))
        .collect();
    SparseColMat::try_new_from_triplets(a.nrows(), a.ncols(), &trip)
        .expect("same indices as a valid matrix")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ewr_model::examples;

    #[test]
    fn forcing_convention_is_cos_minus_i_sin() {
        let mut m = examples::oscillator_2d();
        m.forcing[0].sin = 3.0;
        let s = Structure::new(&m).unwrap();
        let f = s.force(1).unwrap();
        assert_eq!(f[(0, 0)], c64::new(10.0, -3.0));
        assert_eq!(f[(1, 0)], c64::new(10.0, 0.0));
        assert!(s.force(3).is_none());
    }

    /// A chain of `n` unit masses on springs of `1e4`, grounded at the first, with one
    /// contact and a first-harmonic force at the last: above 500 DOFs, `auto`'s modal backend.
    fn forced_chain(n: usize) -> Model {
        let mut b = ewr_model::ModelBuilder::new(n).rayleigh(0.0, 1e-4);
        for i in 0..n {
            b = b.mass(i, 1.0);
            if i + 1 < n {
                b = b.spring(i, i + 1, 1e4);
            }
        }
        b.spring_to_ground(0, 1e4)
            .contacts(ewr_model::Contacts::to_ground(1, vec![n - 1], vec![1.0]))
            .force(n - 1, 1, 1.0, 0.0)
            .build()
            .unwrap()
    }

    /// `warm` builds the automatic backend's sparse analysis where a harmonic of the band
    /// reaches above the modes' coverage, and only there (it is the work of the first
    /// `prepare` that needs it, done before several curves race for it).
    #[test]
    fn warm_builds_the_sparse_analysis_only_where_the_band_reaches_above_the_modes() {
        let model = forced_chain(600);
        let rec = Receptance::new(&model, ReceptanceKind::Auto).unwrap();
        let limit = rec
            .modal_coverage()
            .expect("the automatic modal backend above 500 DOFs");
        let cell = &rec.exact_above.as_ref().unwrap().sparse;
        rec.warm(&[1, 3], 0.9 * limit / 3.0);
        assert!(cell.get().is_none(), "the band stays below the coverage");
        rec.warm(&[1, 3], 1.1 * limit / 3.0);
        assert!(
            cell.get().is_some_and(Result::is_ok),
            "harmonic 3 reaches above it"
        );
    }

    /// A receptance for another forcing shares the modal extraction (its factors are the
    /// same object: no Lanczos, no residual flexibility again) and keeps the automatic
    /// backend's coverage; a cyclic sector's is built anew.
    #[test]
    fn another_forcing_shares_the_modal_extraction() {
        let model = forced_chain(600);
        let mut louder = model.clone();
        louder.forcing[0].cos = 4.0;
        let rec = Receptance::new(&model, ReceptanceKind::Auto).unwrap();
        let derived = rec.with_forcing(&louder).unwrap();
        let factors = |r: &Receptance| match &r.backend {
            Backend::Modal(b) => Arc::clone(&b.factors),
            _ => panic!("the automatic modal backend above 500 DOFs"),
        };
        assert!(Arc::ptr_eq(&factors(&rec), &factors(&derived)));
        assert_eq!(derived.modal_coverage(), rec.modal_coverage());
        let w = 0.5 * rec.modes().unwrap().omega[0];
        let q = |r: &Receptance| {
            r.prepare(w, &[1])
                .unwrap()
                .forced_contact_response(1)
                .unwrap()
        };
        assert!((q(&derived)[0] - q(&rec)[0] * 4.0).norm() <= 1e-12 * q(&rec)[0].norm() * 4.0);
    }

    /// A cyclic sector's receptance for another forcing shares the diameters extracted (the
    /// same objects) and equals one built anew for that model, to the bit: its forced static
    /// responses are kept per forcing in the shared diameters.
    #[test]
    fn another_forcing_shares_a_cyclic_sector_s_diameters() {
        use ewr_model::examples::{BladedDisk, bladed_disk};
        let sector = bladed_disk(&BladedDisk {
            sectors: 12,
            engine_order: 5,
        });
        let mut louder = sector.clone();
        for f in &mut louder.forcing {
            (f.cos, f.sin) = (3.0 * f.cos, 3.0 * f.sin);
        }
        let kind = ReceptanceKind::Modal { modes: 4 };
        let rec = Receptance::new(&sector, kind).unwrap();
        let (w, hs) = (1.2, [0, 1, 3]);
        let q = |r: &Receptance, h: usize| -> Vec<(u64, u64)> {
            let at = r.prepare(w, &hs).unwrap();
            let mut v: Vec<(u64, u64)> = at
                .forced_contact_response(h)
                .unwrap()
                .iter()
                .map(|z| (z.re.to_bits(), z.im.to_bits()))
                .collect();
            let g = at.contact_receptance(h).unwrap();
            for j in 0..g.ncols() {
                for i in 0..g.nrows() {
                    v.push((g[(i, j)].re.to_bits(), g[(i, j)].im.to_bits()));
                }
            }
            v
        };
        let base_q1 = q(&rec, 1);
        let derived = rec.with_forcing(&louder).unwrap();
        assert!(derived.keeps_modes_for_other_forcing());
        let (Backend::CyclicModal(a), Backend::CyclicModal(b)) = (&rec.backend, &derived.backend)
        else {
            panic!("the cyclic backend")
        };
        for nd in [0, 3, 5] {
            let (x, y) = (a.nd(&rec.s, nd).unwrap(), b.nd(&derived.s, nd).unwrap());
            assert!(Arc::ptr_eq(&x, &y), "diameter {nd} shared");
        }
        let fresh = Receptance::new(&louder, kind).unwrap();
        for h in hs {
            assert_eq!(q(&derived, h), q(&fresh, h), "h = {h}");
        }
        assert_ne!(q(&derived, 1), base_q1, "the new forcing's response");
        assert_eq!(q(&rec, 1), base_q1, "the first's unchanged beside it");
    }

    #[test]
    fn auto_picks_dense_for_examples_and_refuses_zeta_on_direct() {
        let m = examples::two_mass_damper(1.0);
        let r = Receptance::new(&m, ReceptanceKind::Auto).unwrap();
        assert_eq!(r.kind(), ReceptanceKind::Dense);
        let mut mz = m.clone();
        mz.damping.modal_zeta = Some(vec![0.01; 2]);
        assert_eq!(
            Receptance::new(&mz, ReceptanceKind::Dense).err(),
            Some(ReceptanceError::ModalDampingNeedsModal)
        );
        let r = Receptance::new(&mz, ReceptanceKind::Auto).unwrap();
        assert_eq!(r.kind(), ReceptanceKind::Modal { modes: 2 });
    }

    /// A pseudo-random sparse `rows x cols` matrix with about `per_col` entries a column,
    /// symmetric (both triangles stored) when asked.
    fn random_sparse(
        rows: usize,
        cols: usize,
        per_col: usize,
        symmetric: bool,
    ) -> SparseColMat<usize, f64> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut triplets = Vec::new();
        for j in 0..cols {
            for _ in 0..per_col {
                let i = (next() % rows as u64) as usize;
                let v = (next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                triplets.push(faer::sparse::Triplet::new(i, j, v));
                if symmetric {
                    triplets.push(faer::sparse::Triplet::new(j, i, v));
                }
            }
        }
        SparseColMat::try_new_from_triplets(rows, cols, &triplets).unwrap()
    }

    /// The products by rows against faer's, and the same bits on one thread and on three.
    #[test]
    fn products_by_rows_are_faer_s_and_do_not_depend_on_the_threads() {
        let n = 5000;
        let mass = random_sparse(n, n, 6, true);
        let w = random_sparse(300, n, 1, false);
        for b in [1, 8, 64] {
            let x = Mat::from_fn(n, b, |i, j| ((i * 7 + j * 13) % 17) as f64 - 8.0);
            for (a, by_rows) in [
                (mass.as_ref(), symmetric_times(mass.as_ref(), x.as_ref())),
                (w.as_ref(), sparse_times(w.as_ref(), x.as_ref())),
            ] {
                let mut reference = Mat::zeros(a.nrows(), b);
                faer::sparse::linalg::matmul::sparse_dense_matmul(
                    reference.as_mut(),
                    faer::Accum::Replace,
                    a,
                    x.as_ref(),
                    1.0,
                    faer::Par::Seq,
                );
                let err = (&by_rows - &reference).norm_max();
                assert!(err <= 1e-13 * reference.norm_max(), "b = {b}: {err}");
            }
            let on = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| {
                        (
                            symmetric_times(mass.as_ref(), x.as_ref()),
                            sparse_times(w.as_ref(), x.as_ref()),
                        )
                    })
            };
            let (one, three) = (on(1), on(3));
            assert!(one.0 == three.0 && one.1 == three.1, "b = {b}");
        }
    }
}
