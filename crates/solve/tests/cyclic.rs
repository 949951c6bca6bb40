//! Cyclic symmetry (issue 16): one sector of a tuned bladed disk under engine-order excitation
//! against the same disk computed whole (`Model::annulus`, an ordinary model solved without
//! any cyclic code), and against the linear cyclic FRF written by hand.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_model::examples::{BladedDisk, bladed_disk};
use ewr_solve::{LinearSolve, NewtonOptions, PointSettings, PointSolution, solve_point};
use faer::c64;
use std::f64::consts::PI;

const N: usize = 12;

fn disk(eo: i64) -> Model {
    bladed_disk(&BladedDisk {
        sectors: N,
        engine_order: eo,
    })
}

fn zero(m: usize) -> Vec<c64> {
    vec![c64::new(0.0, 0.0); m]
}

/// The largest entry of `|a - b|`, and of `|a|`.
fn largest_difference(a: faer::MatRef<'_, c64>, b: faer::MatRef<'_, c64>) -> (f64, f64) {
    let mut d: f64 = 0.0;
    let mut s: f64 = 0.0;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            d = d.max((a[(i, j)] - b[(i, j)]).norm());
            s = s.max(a[(i, j)].norm());
        }
    }
    (d, s)
}

fn rel(a: &[c64], b: &[c64]) -> f64 {
    let d: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max);
    let s: f64 = b.iter().map(|y| y.norm()).fold(0.0, f64::max);
    // Both zero (a shroud column at nodal diameter 0) is agreement.
    if d == 0.0 { 0.0 } else { d / s }
}

/// Phase of sector `j` at harmonic `h` relative to sector 0.
fn sector_phase(eo: i64, h: usize, j: usize) -> c64 {
    let a = 2.0 * PI * (h as f64) * (eo as f64) * (j as f64) / N as f64;
    c64::new(a.cos(), a.sin())
}

/// The linear response of the four sector DOFs of the lumped disk, by hand: nodal diameter
/// `k` adds `2 k_c (1 - cos(2 pi k / N))` to each disk direction (its two coupling springs),
/// Rayleigh `0.005 K`.
fn by_hand(eo: i64, h: usize, w: f64) -> Vec<c64> {
    let theta = 2.0 * PI * (h as f64) * (eo as f64) / N as f64;
    let om = h as f64 * w;
    let mut u = Vec::new();
    // (ground, coupling, blade) springs and the blade's force per direction.
    for (kg, kc, kb, f) in [
        (4.0, 2.0, 1.0, c64::new(1.0, 0.0)),
        (6.0, 1.0, 1.5, c64::new(0.0, -0.5)),
    ] {
        let k = [[kg + 2.0 * kc * (1.0 - theta.cos()) + kb, -kb], [-kb, kb]];
        let m = [2.0, 1.0];
        let z = |i: usize, j: usize| {
            let mass = if i == j { m[i] } else { 0.0 };
            c64::new(k[i][j] - om * om * mass, om * 0.005 * k[i][j])
        };
        let det = z(0, 0) * z(1, 1) - z(0, 1) * z(1, 0);
        // Forced blade only: u = Z^{-1} (0, f).
        u.push(-z(0, 1) * f / det);
        u.push(z(0, 0) * f / det);
    }
    // Sector DOF order: disk x, disk y, blade x, blade y.
    vec![u[0], u[2], u[1], u[3]]
}

#[test]
fn linear_sector_equals_hand_cyclic_frf_and_the_annulus() {
    for eo in [0i64, 3, 6, 7, -2] {
        let sector = disk(eo);
        let annulus = sector.annulus().unwrap();
        assert_eq!(annulus.n_dofs(), N * 4);
        for kind in [ReceptanceKind::Dense, ReceptanceKind::Sparse] {
            let rs = Receptance::new(&sector, kind).unwrap();
            let ra = Receptance::new(&annulus, ReceptanceKind::Dense).unwrap();
            for w in [0.35, 0.62, 1.3, 1.81] {
                let at = rs.prepare(w, &[1, 3]).unwrap();
                let aa = ra.prepare(w, &[1, 3]).unwrap();
                // No friction force: the linear forced response.
                let us = at.recover(1, &zero(rs.n_contact_rows()), None).unwrap();
                let hand = by_hand(eo, 1, w);
                assert!(
                    rel(&us[..4], &hand) < 1e-10,
                    "EO {eo} w {w}: {us:?} {hand:?}"
                );
                // The right DOFs are the next sector's.
                let c = sector_phase(eo, 1, 1);
                let next: Vec<c64> = us[..4].iter().map(|u| u * c).collect();
                assert!(rel(&us[4..], &next) < 1e-12);
                let ua = aa.recover(1, &zero(ra.n_contact_rows()), None).unwrap();
                for j in 0..N {
                    let shifted: Vec<c64> =
                        us[..4].iter().map(|u| u * sector_phase(eo, 1, j)).collect();
                    assert!(rel(&ua[4 * j..4 * j + 4], &shifted) < 1e-10, "sector {j}");
                }
                // Contact receptance: a unit shroud force of sector 0 (all sectors in
                // travelling-wave phase) moves the contacts as in the annulus.
                for h in [1, 3] {
                    let gs = at.contact_receptance(h).unwrap();
                    let ga = aa.contact_receptance(h).unwrap();
                    let m = rs.n_contact_rows();
                    for col in 0..m {
                        let mut x = zero(ra.n_contact_rows());
                        for j in 0..N {
                            x[j * m + col] = sector_phase(eo, h, j);
                        }
                        let ya = aa.apply_vec(h, &x).unwrap();
                        let ys: Vec<c64> = (0..m).map(|row| gs[(row, col)]).collect();
                        let scale = (0..ga.ncols())
                            .flat_map(|j| (0..ga.nrows()).map(move |i| (i, j)))
                            .map(|(i, j)| ga[(i, j)].norm())
                            .fold(0.0, f64::max);
                        let d = ys
                            .iter()
                            .zip(&ya)
                            .map(|(a, b)| (a - b).norm())
                            .fold(0.0, f64::max);
                        assert!(d < 1e-10 * scale, "EO {eo} h {h} col {col}: {d:e}");
                    }
                }
            }
        }
    }
}

fn settings(set: HarmonicSet, linear: LinearSolve) -> PointSettings {
    // The annulus is invariant under the shift by one sector (sector j + 1's samples are
    // sector j's, shifted by 2 pi h EO / N) only when that shift is a whole number of
    // samples: N_t a multiple of N. Otherwise the annulus's sampled Galerkin integrals
    // alias differently on each sector and its solution departs from a travelling wave by
    // the aliasing error (1e-3 at EO 7, N_t = 64); the sector's is exact for any N_t.
    let n_samples = default_samples(&set).div_ceil(N) * N;
    PointSettings {
        n_samples,
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            linear,
            tol_residual: 1e-13,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: vec![0, 1, 2, 3],
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

fn solve(model: &Model, w: f64, set: &HarmonicSet, linear: LinearSolve) -> PointSolution {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let p = ContactParams::of(&model.contacts);
    let s = solve_point(&rec, &p, w, &settings(set.clone(), linear), None).unwrap();
    assert!(s.status.converged(), "w {w}: {:?}", s.status);
    s
}

/// Complex amplitude of harmonic `h` of signal `s` in hb block layout (`cos - i sin`).
fn harmonic(set: &HarmonicSet, x: &[f64], s: usize, h: usize) -> c64 {
    let nco = set.n_coeffs();
    let p = set.coeff_index(h).unwrap();
    c64::new(x[s * nco + p], -x[s * nco + p + 1])
}

#[test]
fn friction_sector_equals_the_full_annulus() {
    let set = HarmonicSet::odd(7).unwrap();
    // EO 3 (ND 3), EO 7 > N/2 (ND 7 = ND 5 backwards, aliasing), EO 6 (ND N/2: standing,
    // real phase -1), EO -2 (the other direction); w at the first resonance, between, and
    // above. A shroud stuck all period would leave the annulus's forces undetermined (a
    // constant force around the ring, nodal diameter 0, can be added), so every case has
    // slip; a lower shroud bound gives more.
    for (eo, w, shroud) in [
        (3, 1.21, 0.5),
        (3, 1.0, 0.2),
        (7, 2.29, 0.5),
        (6, 1.6045, 0.5),
        (-2, 1.96, 0.3),
    ] {
        let mut sector = disk(eo);
        sector.contacts.mu_n[0] = shroud;
        let annulus = sector.annulus().unwrap();
        let ss = solve(&sector, w, &set, LinearSolve::Dense);
        let sa = solve(&annulus, w, &set, LinearSolve::Dense);
        let stick = ss.stick_fractions();
        assert!(stick[0] < 0.95, "EO {eo} w {w}: shroud stuck {stick:?}");
        let stick_a = sa.stick_fractions();
        for (j, s) in stick_a.iter().enumerate() {
            assert!(
                (s - stick[j % 2]).abs() < 1e-9,
                "stick fractions {stick_a:?}"
            );
        }
        let nc = sector.contacts.len();
        let d = sector.contacts.dim;
        let mut worst: f64 = 0.0;
        let mut biggest: f64 = 0.0;
        for j in 0..N {
            for s in 0..nc * d {
                for &h in set.harmonics() {
                    let r = harmonic(&set, &ss.friction, s, h) * sector_phase(eo, h, j);
                    let ra = harmonic(&set, &sa.friction, j * nc * d + s, h);
                    worst = worst.max((r - ra).norm());
                    biggest = biggest.max(ra.norm());
                }
            }
        }
        assert!(
            worst < 1e-6 * biggest,
            "EO {eo} w {w}: friction differs by {worst:e} (max {biggest:e})"
        );
        // Displacements of sector 0's DOFs.
        let rel_u = ss
            .dofs
            .coeffs
            .iter()
            .zip(&sa.dofs.coeffs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
            / sa.dofs.coeffs.iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!(rel_u < 1e-6, "EO {eo} w {w}: displacement {rel_u:e}");
        // Both contacts slip during part of the period somewhere in this set of cases.
        assert!(
            biggest > 0.1,
            "friction too small to test anything: {biggest}"
        );
    }
}

#[test]
fn engine_order_zero_matches_the_annulus_displacements() {
    // All sectors in phase: the shroud never moves and its force, which cancels on each
    // blade, is undetermined (any force inside the disc); it is given no friction here so
    // that both computations are well posed. The platform contact carries the friction.
    let set = HarmonicSet::odd(5).unwrap();
    let mut sector = disk(0);
    sector.contacts.mu_n[0] = 0.0;
    let annulus = sector.annulus().unwrap();
    for w in [0.5, 1.0] {
        let ss = solve(&sector, w, &set, LinearSolve::Dense);
        let sa = solve(&annulus, w, &set, LinearSolve::Dense);
        let d = ss
            .dofs
            .coeffs
            .iter()
            .zip(&sa.dofs.coeffs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let s = sa.dofs.coeffs.iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!(d < 1e-6 * s, "w {w}: {d:e} of {s:e}");
        // The platform friction force equals the annulus's on sector 0.
        for c in 2..4 {
            for &h in set.harmonics() {
                let a = harmonic(&set, &ss.friction, c, h);
                let b = harmonic(&set, &sa.friction, c, h);
                assert!((a - b).norm() < 1e-6, "w {w} signal {c} h {h}: {a} {b}");
            }
        }
    }
}

#[test]
fn matrix_free_newton_on_a_sector_uses_the_transposed_receptance() {
    // G_h of a travelling wave is not symmetric: the matrix-free path's J^T products (its
    // Cauchy steps) must use G_h^T. The dense and matrix-free solutions agree.
    let set = HarmonicSet::odd(7).unwrap();
    for (eo, w) in [(3, 1.21), (7, 2.29)] {
        let sector = disk(eo);
        let dense = solve(&sector, w, &set, LinearSolve::Dense);
        let mf = solve(&sector, w, &set, LinearSolve::MatrixFree);
        assert!(mf.krylov_iterations > 0);
        let d = dense
            .friction
            .iter()
            .zip(&mf.friction)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(d < 1e-7, "EO {eo}: {d:e}");
    }
}

/// The generated FE sector (hex8, about 2 200 DOFs with its snubber DOFs) closed into a
/// disk of 4 sectors: the sparse receptance of one sector against the whole disk (7 600
/// DOFs, 16 inter-sector contacts, no cyclic code), linear and with friction where the
/// snubbers stick and slip.
#[test]
fn fe_sector_disk_equals_its_annulus() {
    use ewr_model::examples::{Sector, sector_disk};
    let sector = sector_disk(
        &Sector {
            contacts: 4,
            ..Sector::default()
        },
        4,
        1,
    );
    let annulus = sector.annulus().unwrap();
    assert!(annulus.n_dofs() > 7000 && annulus.contacts.len() == 16);
    let set = HarmonicSet::odd(3).unwrap();
    // Sector 0's DOF i is the annulus's red[i] (its index among the non-right DOFs).
    let tip = sector.forcing[0].dof;
    let red = sector.cyclic.as_ref().unwrap().reduction(sector.n_dofs()).0;
    let settings = |set: &HarmonicSet, dof: usize| PointSettings {
        monitor: vec![dof],
        ..settings(set.clone(), LinearSolve::Dense)
    };
    let rs = Receptance::new(&sector, ReceptanceKind::Sparse).unwrap();
    let ra = Receptance::new(&annulus, ReceptanceKind::Sparse).unwrap();
    let (ps, pa) = (
        ContactParams::of(&sector.contacts),
        ContactParams::of(&annulus.contacts),
    );
    let w = 4128.0;
    let ss = solve_point(&rs, &ps, w, &settings(&set, tip), None).unwrap();
    let sa = solve_point(&ra, &pa, w, &settings(&set, red[tip]), None).unwrap();
    assert!(ss.status.converged() && sa.status.converged());
    let stick = ss.stick_fractions();
    assert!(stick.iter().all(|&s| s < 0.9), "snubbers stuck: {stick:?}");
    let m = sector.contacts.len() * 2;
    let d = ss
        .friction
        .iter()
        .zip(&sa.friction[..m * set.n_coeffs()])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let s = sa.friction.iter().map(|v| v.abs()).fold(0.0, f64::max);
    assert!(d < 1e-6 * s, "friction differs by {d:e} of {s:e}");
    // The forced blade tip of sector 0.
    let du = (ss.dofs.peak[0] - sa.dofs.peak[0]).abs();
    assert!(
        du < 1e-6 * sa.dofs.peak[0],
        "{} vs {}",
        ss.dofs.peak[0],
        sa.dofs.peak[0]
    );
}

/// The modal receptance of a sector (modes per nodal diameter, issue 16): with every mode
/// kept it is the dense one; on the FE sector disk, 20 modes per diameter give the sparse
/// backend's friction solution near the resonance to 1 %.
#[test]
fn modal_receptance_per_nodal_diameter() {
    for eo in [3, 7] {
        let sector = disk(eo);
        let dense = Receptance::new(&sector, ReceptanceKind::Dense).unwrap();
        let modal = Receptance::new(&sector, ReceptanceKind::Modal { modes: 4 }).unwrap();
        for w in [0.5, 1.21, 2.0] {
            let (a, b) = (
                dense.prepare(w, &[1, 3]).unwrap(),
                modal.prepare(w, &[1, 3]).unwrap(),
            );
            for h in [1, 3] {
                let (ga, gb) = (
                    a.contact_receptance(h).unwrap(),
                    b.contact_receptance(h).unwrap(),
                );
                let m = ga.nrows();
                let (d, s) = largest_difference(ga, gb);
                assert!(d < 1e-9 * s, "EO {eo} w {w} h {h}: {d:e} of {s:e}");
                let fa = a.forced_contact_response(h).unwrap();
                let fb = b.forced_contact_response(h).unwrap();
                assert!(rel(&fb, &fa) < 1e-9 || h == 3, "forced h {h}");
                let r: Vec<c64> = (0..m).map(|i| c64::new(0.1 * i as f64, -0.05)).collect();
                let ua = a.recover(h, &r, None).unwrap();
                let ub = b.recover(h, &r, None).unwrap();
                assert!(rel(&ub, &ua) < 1e-9, "recover EO {eo} w {w} h {h}");
                // A few DOFs (one a right DOF) from cached static columns.
                let ub = b.recover(h, &r, Some(&[2, 6, 1])).unwrap();
                let want = [ua[2], ua[6], ua[1]];
                assert!(rel(&ub, &want) < 1e-9, "recover_at EO {eo} w {w} h {h}");
            }
        }
    }
    use ewr_model::examples::{Sector, sector_disk};
    let sector = sector_disk(
        &Sector {
            contacts: 4,
            ..Sector::default()
        },
        4,
        1,
    );
    let p = ContactParams::of(&sector.contacts);
    let set = HarmonicSet::odd(3).unwrap();
    let tip = sector.forcing[0].dof;
    let st = PointSettings {
        monitor: vec![tip],
        ..settings(set.clone(), LinearSolve::Dense)
    };
    let sparse = Receptance::new(&sector, ReceptanceKind::Sparse).unwrap();
    let modal = Receptance::new(&sector, ReceptanceKind::Modal { modes: 20 }).unwrap();
    let a = solve_point(&sparse, &p, 4128.0, &st, None).unwrap();
    let b = solve_point(&modal, &p, 4128.0, &st, None).unwrap();
    assert!(a.status.converged() && b.status.converged());
    let rel_u = (a.dofs.peak[0] - b.dofs.peak[0]).abs() / a.dofs.peak[0];
    assert!(
        rel_u < 1e-2,
        "tip peak {} vs {}",
        a.dofs.peak[0],
        b.dofs.peak[0]
    );
}

/// The cyclic modal receptance is statically exact on every nodal diameter: far below the
/// first mode, with a few modes per diameter, its residual flexibility carries the rest of
/// `W_k K_k^{-1} W_k^H`, on a travelling diameter (h = 1 on 4 sectors at EO 1) and a
/// standing one (h = 2). The FE sector's embedded stiffness (about 3800 unknowns)
/// is factored by supernodes, so the residual is the Gram matrix of forward solves.
#[test]
fn modal_sector_is_statically_exact_on_every_nodal_diameter() {
    use ewr_model::examples::{Sector, sector_disk};
    let sector = sector_disk(
        &Sector {
            contacts: 4,
            ..Sector::default()
        },
        4,
        1,
    );
    let sparse = Receptance::new(&sector, ReceptanceKind::Sparse).unwrap();
    let modal = Receptance::new(&sector, ReceptanceKind::Modal { modes: 6 }).unwrap();
    let w = 5.0;
    let (a, b) = (
        sparse.prepare(w, &[1, 2]).unwrap(),
        modal.prepare(w, &[1, 2]).unwrap(),
    );
    for h in [1, 2] {
        let (ga, gb) = (
            a.contact_receptance(h).unwrap(),
            b.contact_receptance(h).unwrap(),
        );
        let (d, s) = largest_difference(ga, gb);
        assert!(d < 1e-7 * s, "h {h}: modal differs by {d:e} of {s:e}");
    }
}

/// A converged solution of `model` at `w` on `set`, with what its stability needs.
fn solved(
    model: &Model,
    kind: ReceptanceKind,
    set: &HarmonicSet,
    w: f64,
) -> (
    Receptance,
    ewr_hb::ContactDynamics,
    ContactParams,
    PointSettings,
    PointSolution,
) {
    let rec = Receptance::new(model, kind).unwrap();
    let p = ContactParams::of(&model.contacts);
    let st = settings(set.clone(), LinearSolve::Dense);
    let sol = solve_point(&rec, &p, w, &st, None).unwrap();
    assert!(sol.status.converged());
    let dynamics = rec.dynamics().unwrap();
    (rec, dynamics, p, st, sol)
}

/// The lumped disk with a spring from the blade's `x` to the next sector's disk `y` (DOF 2 to
/// DOF 5): a coupling that is not symmetric under reversing the wave, so that a nodal
/// diameter `k` and `-k` (the conjugate phase) respond differently at the contacts.
fn with_chiral_spring(mut model: ewr_model::Model) -> ewr_model::Model {
    use faer::sparse::{SparseColMat, Triplet};
    let n = model.n_dofs();
    let mut t: Vec<Triplet<usize, usize, f64>> = model
        .stiffness
        .triplet_iter()
        .map(|t| Triplet::new(t.row, t.col, *t.val))
        .collect();
    let k = 0.4;
    for (i, j, v) in [(2, 2, k), (5, 5, k), (2, 5, -k), (5, 2, -k)] {
        t.push(Triplet::new(i, j, v));
    }
    model.stiffness = SparseColMat::try_new_from_triplets(n, n, &t).unwrap();
    model
}

/// Stability of a travelling wave from one sector (Hill's method with each harmonic on its own
/// nodal diameter, docs/stability.md) against the same disk computed whole. The sector's
/// perturbations are the annulus's that keep the travelling-wave symmetry: every eigenvalue of
/// the sector's Hill pencil is one of the annulus's, and the annulus's largest Floquet
/// multiplier is at least the sector's (its other nodal diameters may be less damped). The
/// sector's modal backend (every mode of each diameter) gives the dense one's multipliers. A
/// chiral spring makes the check see the direction of the wave (a conjugated phase fails it).
#[test]
fn sector_stability_is_the_annulus_stability_on_travelling_waves() {
    use ewr_solve::{EigenMethod, hill_eigenvalues, stability_by};
    let set = HarmonicSet::odd(7).unwrap();
    let solved = |model: &Model, kind: ReceptanceKind, w: f64| solved(model, kind, &set, w);
    for (eo, w, shroud) in [(3, 1.21, 0.5), (7, 2.29, 0.5), (-2, 1.96, 0.3)] {
        let mut sector = with_chiral_spring(disk(eo));
        sector.contacts.mu_n[0] = shroud;
        let annulus = sector.annulus().unwrap();
        let (rec, dy, p, st, sol) = solved(&sector, ReceptanceKind::Dense, w);
        let s_all = hill_eigenvalues(&rec, &dy, &p, &st, &sol).unwrap();
        let s = stability_by(&rec, &dy, &p, &st, &sol, EigenMethod::Dense).unwrap();
        let (rec, dy, p, st, sol) = solved(&annulus, ReceptanceKind::Dense, w);
        let a_all = hill_eigenvalues(&rec, &dy, &p, &st, &sol).unwrap();
        let a = stability_by(&rec, &dy, &p, &st, &sol, EigenMethod::Dense).unwrap();
        // Within the band the harmonics resolve (beyond it the stuck constraints' huge
        // eigenvalues depend on rounding: docs/stability.md, pitfall 1).
        let band = 2.0 * 8.0 * w;
        let mut matched = 0;
        for l in s_all.iter().filter(|l| l.norm() < band) {
            let near = a_all
                .iter()
                .map(|b| (l - b).norm())
                .fold(f64::MAX, f64::min);
            assert!(
                near < 1e-7 * l.norm().max(w),
                "EO {eo}: sector eigenvalue {l:?} ({near:e})"
            );
            matched += 1;
        }
        assert!(matched >= 20, "EO {eo}: {matched} eigenvalues in the band");
        assert!(
            a.max_multiplier >= s.max_multiplier - 1e-9,
            "EO {eo}: {a:?}\n{s:?}"
        );
        let (rec, dy, p, st, sol) = solved(&sector, ReceptanceKind::Modal { modes: 6 }, w);
        let modal = stability_by(&rec, &dy, &p, &st, &sol, EigenMethod::Dense).unwrap();
        assert!(
            (modal.max_multiplier - s.max_multiplier).abs() < 1e-6,
            "EO {eo}: modal {} dense {}",
            modal.max_multiplier,
            s.max_multiplier
        );
        eprintln!(
            "EO {eo} w {w}: sector {} ({} eigenvalues in the band), annulus {}",
            s.max_multiplier, matched, a.max_multiplier
        );
    }
}

/// The perturbations of every other inter-sector phase: the sector's pencils of the families
/// `p = 0 ..= N / 2` (each harmonic's two components on diameters `h EO + p` and
/// `-h EO + p`) together have the annulus's eigenvalues, each of theirs one of the
/// annulus's and each of the annulus's in one of them, and the largest multiplier over the
/// families is the annulus's.
#[test]
fn every_inter_sector_phase_together_is_the_annulus() {
    use ewr_solve::stability_family;
    use ewr_solve::{EigenMethod, hill_eigenvalues, hill_eigenvalues_family, stability_by};
    let set = HarmonicSet::odd(5).unwrap();
    let solved = |model: &Model, w: f64| solved(model, ReceptanceKind::Dense, &set, w);
    let (eo, w) = (3, 1.21);
    let mut sector = with_chiral_spring(disk(eo));
    sector.contacts.mu_n[0] = 0.5;
    let annulus = sector.annulus().unwrap();
    let (rec, dy, p, st, sol) = solved(&annulus, w);
    let a_all = hill_eigenvalues(&rec, &dy, &p, &st, &sol).unwrap();
    let a = stability_by(&rec, &dy, &p, &st, &sol, EigenMethod::Dense).unwrap();
    let (rec, dy, p, st, sol) = solved(&sector, w);
    let band = 2.0 * 6.0 * w;
    let near = |l: &c64, set: &[c64]| set.iter().map(|b| (l - b).norm()).fold(f64::MAX, f64::min);
    let mut families = Vec::new();
    let mut worst: f64 = 0.0;
    for fam in 0..=N / 2 {
        let eig = hill_eigenvalues_family(&rec, &dy, &p, &st, &sol, fam).unwrap();
        for l in eig.iter().filter(|l| l.norm() < band) {
            let d = near(l, &a_all);
            assert!(
                d < 1e-7 * l.norm().max(w),
                "p = {fam}: {l:?} is not the annulus's ({d:e})"
            );
        }
        let s = stability_family(&rec, &dy, &p, &st, &sol, fam).unwrap();
        worst = worst.max(s.max_multiplier);
        families.extend(eig);
    }
    let mut missing = 0;
    for l in a_all.iter().filter(|l| l.norm() < 0.9 * band) {
        if near(l, &families) > 1e-7 * l.norm().max(w) {
            missing += 1;
        }
    }
    assert_eq!(missing, 0, "annulus eigenvalues in no family");
    assert!(
        (worst - a.max_multiplier).abs() < 1e-6,
        "families {worst}, annulus {}",
        a.max_multiplier
    );
}
