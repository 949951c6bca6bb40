//! Natural frequencies of the linear structure (friction removed), for small models.
//!
//! Dense and exact: massless DOFs (zero rows of `M`, e.g. Jenkins sliders or massless
//! dampers) are condensed statically first, so that `M` is positive definite on what remains,
//! then the symmetric-definite problem is reduced with a Cholesky factor of `M`.

use ewr_model::{Model, SparseMatrix};
use faer::{Mat, Par, Side};

/// Largest model [`natural_frequencies`] accepts: a dense eigensolve is O(n^3).
pub const DENSE_MODES_MAX_DOFS: usize = 3000;

/// Why the natural frequencies could not be computed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModesError {
    /// The model has more DOFs than the dense solver takes.
    #[error("{n} DOFs is more than the dense eigensolver takes ({DENSE_MODES_MAX_DOFS})")]
    TooLarge {
        /// DOFs of the model.
        n: usize,
    },
    /// A row of `M` with a zero diagonal has off-diagonal entries (M is indefinite).
    #[error("M[{dof},{dof}] is 0 but row {dof} of M is not: M is not positive semi-definite")]
    MassNotSemiDefinite {
        /// The offending DOF.
        dof: usize,
    },
    /// The stiffness on the massless DOFs is singular (a massless DOF with no spring).
    #[error("some massless DOFs have no stiffness of their own (K singular on them)")]
    MasslessDofsUnrestrained,
    /// `M` on the DOFs with mass is not positive definite.
    #[error("M is not positive definite on the DOFs that carry mass")]
    MassNotDefinite,
    /// The eigensolver did not converge.
    #[error("the eigensolver did not converge")]
    NoConvergence,
}

/// Undamped natural circular frequencies `omega` (rad per time unit), ascending, of (K, M).
///
/// There are as many as DOFs with mass. Rigid-body modes give 0 (tiny negative eigenvalues
/// from rounding are clamped).
pub fn natural_frequencies(model: &Model) -> Result<Vec<f64>, ModesError> {
    natural_frequencies_of(&model.stiffness, &model.mass)
}

/// [`natural_frequencies`] for a bare pair of matrices.
pub fn natural_frequencies_of(k: &SparseMatrix, m: &SparseMatrix) -> Result<Vec<f64>, ModesError> {
    let r = Reduced::of(k, m)?;
    let lambda =
        r.a.self_adjoint_eigenvalues(Side::Lower)
            .map_err(|_| ModesError::NoConvergence)?;
    Ok(lambda.into_iter().map(|l| l.max(0.0).sqrt()).collect())
}

/// Undamped natural modes of `(K, M)`: circular frequencies ascending and `M`-orthonormal
/// shapes (`n x modes`, one per DOF with mass; massless DOFs follow statically).
pub fn natural_modes(
    k: &SparseMatrix,
    m: &SparseMatrix,
) -> Result<(Vec<f64>, Mat<f64>), ModesError> {
    let r = Reduced::of(k, m)?;
    let (lambda, y) = symmetric_eigen(r.a.as_ref(), Par::Seq).ok_or(ModesError::NoConvergence)?;
    // A = L^-1 K L^-T: phi_a = L^-T y.
    let mut phi_a = y;
    faer::linalg::triangular_solve::solve_upper_triangular_in_place(
        r.l.transpose(),
        phi_a.as_mut(),
        Par::Seq,
    );
    let nm = r.massive.len();
    let phi_b = &r.follow * &phi_a;
    let mut phi = Mat::<f64>::zeros(k.nrows(), nm);
    for (rows, part) in [(&r.massive, &phi_a), (&r.massless, &phi_b)] {
        for (row, &i) in rows.iter().enumerate() {
            for j in 0..nm {
                phi[(i, j)] = part[(row, j)];
            }
        }
    }
    let omega = lambda.iter().map(|l| l.max(0.0).sqrt()).collect();
    Ok((omega, phi))
}

/// Eigenvalues (ascending) and orthonormal eigenvectors of the symmetric `a` (its lower
/// triangle), by faer's QR algorithm; `None` if it does not converge.
///
/// faer 0.24's default switches to divide and conquer from 128 rows, whose eigenvectors came
/// out with residuals `|A y - lambda y|` of `1e-9 ||A||` on the graded, clustered matrices of
/// shift-invert Lanczos (docs/performance.md, "Block Lanczos"); the QR algorithm gives
/// rounding (`1e-16 ||A||`) at a cost that is small beside what the eigenvectors are used for.
pub(crate) fn symmetric_eigen(a: faer::MatRef<'_, f64>, par: Par) -> Option<(Vec<f64>, Mat<f64>)> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::{self, ComputeEigenvectors, SelfAdjointEvdParams};
    let n = a.nrows();
    let mut params = <SelfAdjointEvdParams as faer::Auto<f64>>::auto();
    params.recursion_threshold = usize::MAX;
    let scratch =
        evd::self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::Yes, par, params.into());
    let mut buf = MemBuffer::try_new(scratch).ok()?;
    let mut s = faer::diag::Diag::<f64>::zeros(n);
    let mut u = Mat::<f64>::zeros(n, n);
    evd::self_adjoint_evd(
        a,
        s.as_mut(),
        Some(u.as_mut()),
        par,
        MemStack::new(&mut buf),
        params.into(),
    )
    .ok()?;
    Some(((0..n).map(|i| s[i]).collect(), u))
}

/// `(K, M)` on the DOFs with mass, the massless ones condensed statically, as the symmetric
/// `A = L^-1 K L^-T` (`M = L L^T`), with what it takes to go back to every DOF.
struct Reduced {
    massive: Vec<usize>,
    massless: Vec<usize>,
    a: Mat<f64>,
    l: Mat<f64>,
    /// `u_b = follow u_a` for the massless DOFs: `-K_bb^-1 K_ba`.
    follow: Mat<f64>,
}

impl Reduced {
    fn of(k: &SparseMatrix, m: &SparseMatrix) -> Result<Self, ModesError> {
        let n = k.nrows();
        if n > DENSE_MODES_MAX_DOFS {
            return Err(ModesError::TooLarge { n });
        }
        let kd = k.to_dense();
        let md = m.to_dense();
        let mut massive = Vec::new();
        let mut massless = Vec::new();
        for i in 0..n {
            if md[(i, i)] != 0.0 {
                massive.push(i);
            } else if (0..n).any(|j| md[(i, j)] != 0.0) {
                return Err(ModesError::MassNotSemiDefinite { dof: i });
            } else {
                massless.push(i);
            }
        }
        let pick = |a: &Mat<f64>, r: &[usize], c: &[usize]| {
            Mat::from_fn(r.len(), c.len(), |i, j| a[(r[i], c[j])])
        };
        let mut k_red = pick(&kd, &massive, &massive);
        let mut follow = Mat::<f64>::zeros(massless.len(), massive.len());
        if !massless.is_empty() {
            // Exact static condensation: K_aa - K_ab K_bb^-1 K_ba.
            let k_bb = pick(&kd, &massless, &massless);
            let k_ba = pick(&kd, &massless, &massive);
            let llt = k_bb
                .llt(Side::Lower)
                .map_err(|_| ModesError::MasslessDofsUnrestrained)?;
            let x = faer::linalg::solvers::Solve::solve(&llt, &k_ba);
            k_red -= k_ba.transpose() * &x;
            follow = -x;
        }
        let m_red = pick(&md, &massive, &massive);
        let llt = m_red
            .llt(Side::Lower)
            .map_err(|_| ModesError::MassNotDefinite)?;
        let l = llt.L().to_owned();
        // A = L^-1 K L^-T, symmetric with the same eigenvalues as (K, M).
        let mut x = k_red;
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(
            l.as_ref(),
            x.as_mut(),
            Par::Seq,
        );
        let mut a = x.transpose().to_owned();
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(
            l.as_ref(),
            a.as_mut(),
            Par::Seq,
        );
        Ok(Reduced {
            massive,
            massless,
            a,
            l,
            follow,
        })
    }
}

/// Undamped natural circular frequencies of a cyclic sector model on nodal diameter `nd`
/// (the sector's `(T^H K T, T^H M T)` with `u_R = exp(i 2 pi nd / N) u_L`), ascending.
///
/// The Hermitian pair is solved through its real symmetric embedding
/// `[[Re A, -Im A], [Im A, Re A]]`, which has every eigenvalue twice; one of each pair is
/// returned. The union over `nd = 0 .. N` is the spectrum of the full annulus.
pub fn cyclic_natural_frequencies(model: &Model, nd: usize) -> Result<Vec<f64>, ModesError> {
    let Some(cy) = &model.cyclic else {
        return natural_frequencies(model);
    };
    let nr = model.n_dofs() - cy.right.len();
    if 2 * nr > DENSE_MODES_MAX_DOFS {
        return Err(ModesError::TooLarge { n: 2 * nr });
    }
    let (k2, m2) =
        crate::receptance::embedded_pair(model, nd).map_err(|_| ModesError::MassNotDefinite)?;
    let w = natural_frequencies_of(&k2, &m2)?;
    Ok(w.into_iter().step_by(2).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ewr_model::examples;

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * y.abs())
    }

    #[test]
    fn natural_modes_are_m_orthonormal_and_satisfy_k_phi_equals_m_phi_omega2() {
        let model = examples::two_mass_damper(1.0);
        let (w, phi) = natural_modes(&model.stiffness, &model.mass).unwrap();
        let (k, m) = (model.stiffness.to_dense(), model.mass.to_dense());
        let gram = phi.transpose() * &m * &phi;
        for i in 0..w.len() {
            for j in 0..w.len() {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((gram[(i, j)] - want).abs() < 1e-12);
            }
            let r = &k * phi.col(i) - w[i] * w[i] * (&m * phi.col(i));
            assert!(r.norm_l2() < 1e-12, "mode {i}");
        }
        assert!(close(&w, &natural_frequencies(&model).unwrap(), 1e-12));
    }

    #[test]
    fn natural_modes_of_a_graded_clustered_matrix_are_exact_to_rounding() {
        // The projected operator of a shift-invert Lanczos run on the 100-contact sector
        // (the fixture of lanczos.rs), as a stiffness with unit mass: faer's default
        // eigensolver (divide and conquer) leaves residuals of 3.8e-9 ||K|| on it.
        let text = include_str!("../tests/data/lanczos-projected-operator.txt");
        let mut trip = Vec::new();
        let mut n = 0;
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let mut f = l.split_whitespace();
            let r: usize = f.next().unwrap().parse().unwrap();
            let c: usize = f.next().unwrap().parse().unwrap();
            let v: f64 = f.next().unwrap().parse().unwrap();
            trip.push(faer::sparse::Triplet::new(r, c, v));
            if r != c {
                trip.push(faer::sparse::Triplet::new(c, r, v));
            }
            n = n.max(r + 1);
        }
        let k = SparseMatrix::try_new_from_triplets(n, n, &trip).unwrap();
        let ones: Vec<_> = (0..n)
            .map(|i| faer::sparse::Triplet::new(i, i, 1.0))
            .collect();
        let m = SparseMatrix::try_new_from_triplets(n, n, &ones).unwrap();
        let (w, phi) = natural_modes(&k, &m).unwrap();
        let kd = k.to_dense();
        let norm = (0..n).map(|i| kd[(i, i)].abs()).fold(0.0, f64::max);
        let mut worst = 0.0f64;
        for (j, wj) in w.iter().enumerate() {
            let r = &kd * phi.col(j) - wj * wj * phi.col(j);
            worst = worst.max(r.norm_max());
        }
        assert!(
            worst <= 1e-13 * norm,
            "|K phi - w^2 phi| = {:e} ||K||",
            worst / norm
        );
    }

    #[test]
    fn oscillator_2d_has_uncoupled_frequencies_1_and_sqrt2() {
        let w = natural_frequencies(&examples::oscillator_2d()).unwrap();
        assert!(close(&w, &[1.0, 2f64.sqrt()], 1e-12), "{w:?}");
    }

    #[test]
    fn two_mass_chain_matches_seed_000_section_5() {
        // Seed 000 sec. 5: 0.618 and 1.618 in direction 1, 0.874 and 2.288 in direction 2,
        // i.e. sqrt(s (3 -+ sqrt 5) / 2) with s = 1 and 2.
        let w = natural_frequencies(&examples::two_mass_damper(1.0)).unwrap();
        let r5 = 5f64.sqrt();
        let mut expect: Vec<f64> = [1.0, 2.0]
            .iter()
            .flat_map(|s| [(s * (3.0 - r5) / 2.0).sqrt(), (s * (3.0 + r5) / 2.0).sqrt()])
            .collect();
        expect.sort_by(f64::total_cmp);
        assert!(close(&w, &expect, 1e-12), "{w:?} vs {expect:?}");
        let printed = [0.618, 0.874, 1.618, 2.288];
        assert!(close(&w, &printed, 1e-3), "{w:?} vs paper {printed:?}");
    }

    #[test]
    fn cyclic_frequencies_over_all_nodal_diameters_are_the_annulus_spectrum() {
        for eo in [1, 5] {
            let sector = examples::bladed_disk(&examples::BladedDisk {
                sectors: 7,
                engine_order: eo,
            });
            let mut union: Vec<f64> = (0..7)
                .flat_map(|k| cyclic_natural_frequencies(&sector, k).unwrap())
                .collect();
            union.sort_by(f64::total_cmp);
            let annulus = natural_frequencies(&sector.annulus().unwrap()).unwrap();
            assert_eq!(union.len(), annulus.len());
            assert!(close(&union, &annulus, 1e-10), "{union:?} vs {annulus:?}");
        }
    }

    #[test]
    fn massless_damper_is_condensed() {
        // m2 = 0: the damper DOFs are condensed; mass 1 sees k11 + k21 in series with the
        // grounded... nothing: the damper is free, so K_red = K11 + K21 - K21 = K11.
        let w = natural_frequencies(&examples::two_mass_damper(0.0)).unwrap();
        assert!(close(&w, &[1.0, 2f64.sqrt()], 1e-12), "{w:?}");
    }

    /// Removes the DOFs `drop` from a square sparse matrix.
    fn without(a: &SparseMatrix, drop: &[usize]) -> SparseMatrix {
        let keep: Vec<usize> = (0..a.nrows()).filter(|i| !drop.contains(i)).collect();
        let d = a.to_dense();
        let trip: Vec<_> = (0..keep.len())
            .flat_map(|i| (0..keep.len()).map(move |j| (i, j)))
            .map(|(i, j)| faer::sparse::Triplet::new(i, j, d[(keep[i], keep[j])]))
            .collect();
        SparseMatrix::try_new_from_triplets(keep.len(), keep.len(), &trip).unwrap()
    }

    #[test]
    fn blade_damper_blade_stuck_modes_match_seed_004_v5() {
        // Stuck contacts: the Jenkins sliders (DOFs 8, 9) held fixed. Seed 004 digest V5
        // lists the undamped stuck modes in Hz (k_t = k_n, so independent of the angles).
        let m = examples::blade_damper_blade(&examples::BladeDamperBlade::default());
        let k = without(&m.stiffness, &[8, 9]);
        let mm = without(&m.mass, &[8, 9]);
        let f: Vec<f64> = natural_frequencies_of(&k, &mm)
            .unwrap()
            .iter()
            .map(|w| w / std::f64::consts::TAU)
            .collect();
        let v5 = [
            203.762, 211.362, 327.687, 354.097, 519.615, 529.925, 1321.012, 1522.081,
        ];
        assert!(close(&f, &v5, 5e-6), "{f:?} vs {v5:?}");
    }
}
