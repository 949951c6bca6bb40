//! Modal condensation of a cyclic sector, one nodal diameter at a time (docs/cyclic.md).
//!
//! Nodal diameter `k` has the Hermitian pair `(K_k, M_k) = (T^H K T, T^H M T)` on the
//! sector's `nr` independent DOFs. Its modes come from the real symmetric embedding
//! `E(A) = [[Re A, -Im A], [Im A, Re A]]` (`2 nr`), solved by the same shift-invert Lanczos
//! as the ordinary modal backend: an eigenvector `[a; b]` of `(E(K_k), E(M_k))` is the
//! complex mode `a + i b` of `(K_k, M_k)`, and each appears twice in the embedding (`[a; b]`
//! and `[-b; a]` are `phi` and `i phi`), so the vectors are turned complex and
//! Gram-Schmidt-orthonormalised in `M_k` to drop repeats. Static solves with `K_k` are
//! solves with the real Cholesky factor of `E(K_k)`. Then, as for an ordinary structure,
//!
//!   `G_h = W_k Phi diag(1 / d_r) Phi^H W_k^H + R_k / (1 + i (eta + Omega beta))`,
//!   `d_r = lambda_r - Omega^2 + i (eta lambda_r + Omega c_r)`,  `c_r = phi_r^H C_k phi_r`,
//!
//! with `W_k = W T` and `R_k = W_k (K_k^{-1} - Phi Lambda^{-1} Phi^H) W_k^H` the residual
//! flexibility of the omitted modes. Modes are extracted once per nodal diameter, on first
//! use. `K_k` must be positive definite (a clamped or grounded sector).

use ewr_model::linalg_error::Sentence;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Accum, Mat, c64};

use super::cholesky::Cholesky;
use super::direct::{DirectHarmonic, Solver};
use super::lanczos::{block_size, lowest_modes};
use super::nd_modes::{NdModes, NdSolve, factor};
use super::{ReceptanceError, Structure};

/// Lanczos convergence, as the ordinary modal backend.
const LANCZOS_TOL: f64 = 1e-10;

/// The modal backend of a cyclic sector: modes per nodal diameter, extracted on first use.
pub(crate) struct CyclicModalBackend {
    /// Complex modes kept per nodal diameter.
    pub modes: usize,
    per_nd: Vec<OnceLock<Result<Arc<NdModes>, ReceptanceError>>>,
}

/// `E(A)` for the reduced complex triplets of a real matrix.
pub(crate) fn embed(triplets: &[(usize, usize, c64)], nr: usize) -> SparseColMat<usize, f64> {
    let mut t = Vec::with_capacity(4 * triplets.len());
    for &(i, j, v) in triplets {
        t.push(Triplet::new(i, j, v.re));
        t.push(Triplet::new(i + nr, j + nr, v.re));
        if v.im != 0.0 {
            t.push(Triplet::new(i, j + nr, -v.im));
            t.push(Triplet::new(i + nr, j, v.im));
        }
    }
    SparseColMat::try_new_from_triplets(2 * nr, 2 * nr, &t).expect("indices below 2 nr")
}

/// `T^H A T` as complex triplets on the independent DOFs, for phase `c`.
pub(crate) fn reduce_triplets(
    s: &Structure,
    a: &ewr_model::SparseMatrix,
    c: c64,
) -> Vec<(usize, usize, c64)> {
    let cm = s.cyclic.as_ref().expect("cyclic structure");
    a.triplet_iter()
        .map(|t| {
            let (ri, fi) = cm.of(t.row, c);
            let (rj, fj) = cm.of(t.col, c);
            (ri, rj, fi.conj() * *t.val * fj)
        })
        .collect()
}

/// `E(A) [Re x; Im x]` back to complex: `A x` for a Hermitian `A` given by its embedding.
fn apply_embedded(e: &SparseColMat<usize, f64>, x: &Mat<c64>) -> Mat<c64> {
    let nr = x.nrows();
    let xr = Mat::from_fn(2 * nr, x.ncols(), |i, j| {
        if i < nr {
            x[(i, j)].re
        } else {
            x[(i - nr, j)].im
        }
    });
    let mut y = Mat::zeros(2 * nr, x.ncols());
    sparse_dense_matmul(
        y.as_mut(),
        Accum::Replace,
        e.as_ref(),
        xr.as_ref(),
        1.0,
        super::par(),
    );
    Mat::from_fn(nr, x.ncols(), |i, j| c64::new(y[(i, j)], y[(i + nr, j)]))
}

impl CyclicModalBackend {
    pub fn new(s: &Structure, modes: usize) -> Result<Self, ReceptanceError> {
        let cm = s.cyclic.as_ref().expect("cyclic structure");
        if s.modal_zeta.is_some() {
            return Err(ReceptanceError::ModalDampingNeedsModal);
        }
        Ok(CyclicModalBackend {
            modes,
            per_nd: (0..cm.cyclic.sectors).map(|_| OnceLock::new()).collect(),
        })
    }

    /// This backend under another forcing: the diameters extracted so far shared (their
    /// forced static responses are kept per forcing), the others extracted on first use.
    pub fn with_forcing(&self) -> Self {
        CyclicModalBackend {
            modes: self.modes,
            per_nd: self.per_nd.iter().map(super::modal::copied).collect(),
        }
    }

    /// The modes of nodal diameter `nd`, extracted on first use.
    pub(crate) fn nd(&self, s: &Structure, nd: usize) -> Result<Arc<NdModes>, ReceptanceError> {
        let cell = &self.per_nd[nd];
        if let Some(modes) = cell.get() {
            return modes.clone();
        }
        // Extracted outside the cell's lock: the factorisation and the Lanczos run on the
        // thread pool, and a worker waiting inside `get_or_init` could take a task (another
        // curve, a study case) that asks for the same cell: a reentrant initialisation, a
        // deadlock. Two that race extract the same modes and the first kept; sweeps and
        // study cases extract what their curves and the work beside them reach before they
        // start (`Receptance::warm`, `warm_nodal_diameters`).
        let _ = cell.set(self.extract(s, nd).map(Arc::new));
        cell.get().expect("set above").clone()
    }

    fn extract(&self, s: &Structure, nd: usize) -> Result<NdModes, ReceptanceError> {
        let cm = s.cyclic.as_ref().expect("cyclic structure");
        let nr = cm.nr;
        let sectors = cm.cyclic.sectors;
        let a = 2.0 * std::f64::consts::PI * nd as f64 / sectors as f64;
        let c = c64::new(a.cos(), a.sin());
        let k2 = embed(&reduce_triplets(s, &s.k, c), nr);
        let m2 = embed(&reduce_triplets(s, &s.mass, c), nr);
        let c2 = embed(&reduce_triplets(s, &s.c, c), nr);
        let factor_span = crate::profile::span(crate::profile::Phase::Factor);
        let llt = factor(&k2);
        drop(factor_span);
        let llt = llt.map_err(|_| {
            ReceptanceError::Factorization(format!(
                "the sector's stiffness on nodal diameter {nd} is not positive definite: the \
                 cyclic modal receptance needs a clamped or grounded sector (use --receptance \
                 dense or sparse)"
            ))
        })?;
        let rank_bound = (0..2 * nr)
            .filter(|&j| {
                m2.as_ref()
                    .row_idx_of_col(j)
                    .zip(m2.as_ref().val_of_col(j))
                    .any(|(i, v)| i == j && *v != 0.0)
            })
            .count();
        // Each complex mode appears twice in the embedding.
        let _lanczos_span = crate::profile::span(crate::profile::Phase::Lanczos);
        let lm = lowest_modes(
            &|x| llt.solve_in_place(x),
            llt.entries(),
            m2.as_ref(),
            rank_bound,
            2 * self.modes,
            0.0,
            LANCZOS_TOL,
            block_size(llt.entries()),
        )?;
        drop(_lanczos_span);
        // Complex modes, M_k-orthonormal, repeats dropped.
        let mut phi_cols: Vec<Vec<c64>> = Vec::new();
        let mut mphi_cols: Vec<Vec<c64>> = Vec::new();
        let mut lambda = Vec::new();
        for (r, &l) in lm.lambda.iter().enumerate() {
            if phi_cols.len() == self.modes {
                break;
            }
            let mut v = Mat::from_fn(nr, 1, |i, _| c64::new(lm.phi[(i, r)], lm.phi[(i + nr, r)]));
            for _ in 0..2 {
                for (p, mp) in phi_cols.iter().zip(&mphi_cols) {
                    // <p, v>_M = p^H M v = (M p)^H v.
                    let dot: c64 = mp
                        .iter()
                        .zip(0..nr)
                        .map(|(a, i)| a.conj() * v[(i, 0)])
                        .sum();
                    for i in 0..nr {
                        v[(i, 0)] -= p[i] * dot;
                    }
                }
            }
            let mv = apply_embedded(&m2, &v);
            let norm2: f64 = (0..nr).map(|i| (v[(i, 0)].conj() * mv[(i, 0)]).re).sum();
            // A Lanczos vector has unit M-norm: what survives projection is a new mode, or
            // (about 0) the other copy of one already kept.
            if norm2 < 0.5 {
                continue;
            }
            let inv = 1.0 / norm2.sqrt();
            phi_cols.push((0..nr).map(|i| v[(i, 0)] * inv).collect());
            mphi_cols.push((0..nr).map(|i| mv[(i, 0)] * inv).collect());
            lambda.push(l);
        }
        let p = phi_cols.len();
        if p == 0 {
            return Err(ReceptanceError::Lanczos(format!(
                "no modes found on nodal diameter {nd}"
            )));
        }
        let phi = Mat::from_fn(nr, p, |i, r| phi_cols[r][i]);
        let cphi = apply_embedded(&c2, &phi);
        let damping: Vec<f64> = (0..p)
            .map(|r| {
                (0..nr)
                    .map(|i| (phi[(i, r)].conj() * cphi[(i, r)]).re)
                    .sum()
            })
            .collect();
        let wk = s.w_cyclic_phase(c);
        let mut wphi = Mat::zeros(s.m, p);
        sparse_dense_matmul(
            wphi.as_mut(),
            Accum::Replace,
            wk.as_ref(),
            phi.as_ref(),
            c64::new(1.0, 0.0),
            super::par(),
        );
        let mut this = NdModes {
            lambda,
            phi,
            wphi,
            damping,
            residual: Mat::zeros(0, 0),
            k2,
            columns: Mutex::new(HashMap::new()),
            forced_static: Mutex::new(HashMap::new()),
            wk,
        };
        // R_k = W_k (K^-1 - Phi Lambda^-1 Phi^H) W_k^H: `W_k K_k^{-1} W_k^H` from forward
        // solves of the contact rows (`gram.rs`) on the real embedding, where `E(W) E(K)^{-1}
        // E(W)^T = E(W K^{-1} W^H)`; else solved through the whole factor.
        let r = match inverse_between_complex(&llt, &this.wk, nr)? {
            Some(mut r) => {
                let mut wg = this.wphi.clone();
                for (col, &l) in this.lambda.iter().enumerate() {
                    wg.col_mut(col).iter_mut().for_each(|v| *v /= l);
                }
                faer::linalg::matmul::matmul(
                    r.as_mut(),
                    Accum::Add,
                    wg.as_ref(),
                    this.wphi.adjoint(),
                    c64::new(-1.0, 0.0),
                    super::par(),
                );
                r
            }
            None => {
                let mut wkh = Mat::zeros(nr, s.m);
                for t in this.wk.triplet_iter() {
                    wkh[(t.col, t.row)] += t.val.conj();
                }
                this.wk_times(&this.residual_solve(Some(&llt), &wkh))
            }
        };
        let half = c64::new(0.5, 0.0);
        this.residual = Mat::from_fn(s.m, s.m, |i, j| (r[(i, j)] + r[(j, i)].conj()) * half);
        // While the factor exists: the static response to the forcing of the harmonics on
        // this diameter, and the residual columns of the forced DOFs (what a sweep recovers
        // by default). Then the factor is dropped.
        {
            let mut fs = this.forced_static.lock().unwrap_or_else(|e| e.into_inner());
            for &h in s.forcing.keys() {
                if cm.cyclic.nodal_diameter(h) == nd {
                    let fr = s.reduce(h, s.force(h).expect("key of the forcing map"));
                    fs.insert(
                        s.forcing_key(h),
                        Arc::new(this.forced_static_of(Some(&llt), &fr)),
                    );
                }
            }
        }
        let mut forced_rows: Vec<usize> = s
            .forcing
            .values()
            .flatten()
            .map(|&(d, _)| cm.red[d])
            .collect();
        forced_rows.sort_unstable();
        forced_rows.dedup();
        {
            let mut cache = this.columns.lock().unwrap_or_else(|e| e.into_inner());
            this.fill_columns(Some(&llt), &forced_rows, &mut cache);
        }
        drop(llt);
        Ok(this)
    }

    /// The receptance data of harmonic `h` at `w`, in the form of the direct backends.
    pub fn harmonic(
        &self,
        s: &Structure,
        w: f64,
        h: usize,
    ) -> Result<DirectHarmonic, ReceptanceError> {
        let cm = s.cyclic.as_ref().expect("cyclic structure");
        let nd = self.nd(s, cm.cyclic.nodal_diameter(h))?;
        let om = h as f64 * w;
        let eta = s.eta_h(h);
        let scale = nd.lambda.iter().fold(om * om, |a, &l| a.max(l));
        let mut inv_d = Vec::with_capacity(nd.lambda.len());
        for (&l, &c) in nd.lambda.iter().zip(&nd.damping) {
            let d = c64::new(l - om * om, eta * l + om * c);
            if d.norm() <= 1e-13 * scale {
                return Err(ReceptanceError::Singular {
                    harmonic: h,
                    frequency: w,
                });
            }
            inv_d.push(d.inv());
        }
        let res = c64::new(1.0, eta + om * s.rayleigh_beta).inv();
        let m = s.m;
        let p = inv_d.len();
        let scaled = Mat::from_fn(m, p, |i, r| nd.wphi[(i, r)] * inv_d[r]);
        let mut g = &scaled * nd.wphi.adjoint();
        for j in 0..m {
            for i in 0..m {
                g[(i, j)] += res * nd.residual[(i, j)];
            }
        }
        for (i, c) in s.compliance.iter().enumerate() {
            g[(i, i)] += c64::new(*c, 0.0);
        }
        let forced = match s.force(h) {
            None => vec![c64::new(0.0, 0.0); m],
            Some(f) => {
                let fr = s.reduce(h, f);
                let lock = || nd.forced_static.lock().unwrap_or_else(|e| e.into_inner());
                let key = s.forcing_key(h);
                let cached = lock().get(&key).cloned();
                // Solved without the lock (a factorisation on the thread pool, see `nd`).
                let stat = cached.unwrap_or_else(|| {
                    let fresh = Arc::new(nd.forced_static_of(None, &fr));
                    Arc::clone(lock().entry(key).or_insert(fresh))
                });
                let pf = nd.phi.adjoint() * &fr;
                (0..m)
                    .map(|i| {
                        let modal: c64 = (0..p).map(|r| scaled[(i, r)] * pf[(r, 0)]).sum();
                        modal + res * stat[i]
                    })
                    .collect()
            }
        };
        Ok(DirectHarmonic {
            g,
            forced,
            solver: Solver::CyclicModal(NdSolve { nd, inv_d, res }),
        })
    }
}

/// `W K^{-1} W^H` for complex contact rows `W` (`m x nr`) and the factor `llt` of the real
/// embedding `E(K)`: `E(W) E(K)^{-1} E(W)^T = E(W K^{-1} W^H)`, whose first `m` columns hold
/// the real part above the imaginary one; `None` where the forward solves do not apply
/// ([`Cholesky::inverse_between`]).
fn inverse_between_complex(
    llt: &Cholesky,
    w: &SparseColMat<usize, c64>,
    nr: usize,
) -> Result<Option<Mat<c64>>, ReceptanceError> {
    let m = w.nrows();
    let ew = embed_rows(w, nr)?;
    Ok(llt
        .inverse_between(ew.as_ref(), llt.entries() / 2)
        .map(|g| Mat::from_fn(m, m, |i, j| c64::new(g[(i, j)], g[(m + i, j)]))))
}

/// The real embedding `E(W) = [[Re W, -Im W], [Im W, Re W]]` (`2m x 2nr`) of the complex
/// contact rows, the form in which `E(K_k)` is factored.
fn embed_rows(
    w: &SparseColMat<usize, c64>,
    nr: usize,
) -> Result<SparseColMat<usize, f64>, ReceptanceError> {
    let m = w.nrows();
    let mut t = Vec::new();
    for e in w.triplet_iter() {
        let (re, im) = (e.val.re, e.val.im);
        for (row, col, v) in [
            (e.row, e.col, re),
            (e.row, nr + e.col, -im),
            (m + e.row, e.col, im),
            (m + e.row, nr + e.col, re),
        ] {
            if v != 0.0 {
                t.push(Triplet::new(row, col, v));
            }
        }
    }
    SparseColMat::try_new_from_triplets(2 * m, 2 * nr, &t)
        .map_err(|e| ReceptanceError::BadInput(format!("contact rows: {}", e.sentence())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::prelude::Solve;

    /// `W K^{-1} W^H` through the embedding's forward solves, against a dense complex solve:
    /// a Hermitian positive definite mesh matrix whose couplings carry phases (as a
    /// travelling nodal diameter's do), complex rows with one and two entries.
    #[test]
    fn complex_gram_of_the_embedding_is_the_hermitian_solve_s() {
        let g = 14;
        let nr = g * g * g;
        let id = |x: usize, y: usize, z: usize| (x * g + y) * g + z;
        let mut k: Vec<(usize, usize, c64)> = Vec::new();
        for x in 0..g {
            for y in 0..g {
                for z in 0..g {
                    let i = id(x, y, z);
                    k.push((i, i, c64::new(6.5, 0.0)));
                    for (j, t) in [
                        (x + 1 < g).then(|| id(x + 1, y, z)),
                        (y + 1 < g).then(|| id(x, y + 1, z)),
                        (z + 1 < g).then(|| id(x, y, z + 1)),
                    ]
                    .into_iter()
                    .zip([0.3, 1.1, -0.7])
                    {
                        if let Some(j) = j {
                            let v = -c64::new((t * i as f64).cos(), (t * i as f64).sin());
                            k.push((i, j, v));
                            k.push((j, i, v.conj()));
                        }
                    }
                }
            }
        }
        let llt = factor(&embed(&k, nr)).unwrap();
        let m = 12;
        let mut wt = Vec::new();
        for r in 0..m {
            let d = (r * 2 + nr / 2) % nr;
            wt.push(Triplet::new(r, d, c64::new(1.0, 0.0)));
            if r % 2 == 0 {
                wt.push(Triplet::new(r, (d + 31) % nr, c64::new(-0.4, 0.9)));
            }
        }
        let w = SparseColMat::try_new_from_triplets(m, nr, &wt).unwrap();
        let got = inverse_between_complex(&llt, &w, nr)
            .unwrap()
            .expect("supernodal factor");
        // Dense reference: K as a complex matrix, solved for W^H.
        let mut kd = Mat::<c64>::zeros(nr, nr);
        for &(i, j, v) in &k {
            kd[(i, j)] += v;
        }
        let wd = w.to_dense();
        let x = kd.partial_piv_lu().solve(wd.adjoint().to_owned());
        let want = &wd * &x;
        let err = (&got - &want).norm_max() / want.norm_max();
        assert!(err < 1e-12, "relative error {err:e}");
        let im = (0..m)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .map(|(i, j)| want[(i, j)].im.abs())
            .fold(0.0, f64::max);
        assert!(im > 1e-2 * want.norm_max(), "the reference is complex");
    }

    /// `warm` extracts the modes of exactly the nodal diameters its harmonics fall on
    /// (`warm_nodal_diameters` those named, modulo the sectors), so that curves started after
    /// it find them (and none races to extract its own copy).
    #[test]
    fn warm_extracts_the_nodal_diameters_of_its_harmonics_and_no_others() {
        use crate::receptance::{Backend, Receptance, ReceptanceKind};
        use ewr_model::examples::{BladedDisk, bladed_disk};
        let sector = bladed_disk(&BladedDisk {
            sectors: 12,
            engine_order: 5,
        });
        let rec = Receptance::new(&sector, ReceptanceKind::Modal { modes: 4 }).unwrap();
        let Backend::CyclicModal(b) = &rec.backend else {
            panic!("a cyclic sector's modal receptance is the cyclic backend")
        };
        assert!(b.per_nd.iter().all(|c| c.get().is_none()), "nothing before");
        // Engine order 5 of 12: harmonics 0, 1 and 3 on diameters 0, 5 and 3.
        rec.warm(&[0, 1, 3], 1.2);
        let extracted: Vec<usize> = (0..12).filter(|&k| b.per_nd[k].get().is_some()).collect();
        assert_eq!(extracted, [0, 3, 5]);
        let before = Arc::clone(b.per_nd[5].get().unwrap().as_ref().unwrap());
        rec.prepare(1.2, &[1]).unwrap();
        let after = b.nd(&rec.s, 5).unwrap();
        assert!(
            Arc::ptr_eq(&before, &after),
            "a curve reuses the warmed modes"
        );
        rec.warm_nodal_diameters([13, 20]);
        let extracted: Vec<usize> = (0..12).filter(|&k| b.per_nd[k].get().is_some()).collect();
        assert_eq!(extracted, [0, 1, 3, 5, 8], "diameters modulo the sectors");
        rec.warm_nodal_diameters(0..12);
        assert!(b.per_nd.iter().all(|c| c.get().is_some()), "every diameter");
        let again = b.nd(&rec.s, 5).unwrap();
        assert!(Arc::ptr_eq(&before, &again), "none extracted again");
    }
}
