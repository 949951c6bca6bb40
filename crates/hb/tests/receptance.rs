//! Receptance at the contacts: closed forms, backend agreement, modal convergence and static
//! exactness, massless DOFs, response recovery and free-free structures.

use ewr_hb::{Receptance, ReceptanceError, ReceptanceKind};
use ewr_model::examples::{self, BladeDamperBlade};
use ewr_model::{Contacts, Model, ModelBuilder};
use faer::linalg::solvers::Solve;
use faer::{Mat, MatRef, c64};

fn c(re: f64, im: f64) -> c64 {
    c64::new(re, im)
}

/// `||a - b||_F / ||b||_F`.
fn rel(a: MatRef<'_, c64>, b: MatRef<'_, c64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2()
}

fn relv(a: &[c64], b: &[c64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (num / den).sqrt()
}

/// Reference `Z_h` built densely in the test, independently of the crate.
fn z_dense(model: &Model, w: f64, h: usize) -> Mat<c64> {
    let om = h as f64 * w;
    let eta = if h == 0 {
        0.0
    } else {
        model.damping.hysteretic_eta.unwrap_or(0.0)
    };
    let k = model.stiffness.to_dense();
    let m = model.mass.to_dense();
    let cc = model.viscous_damping().to_dense();
    let n = model.n_dofs();
    Mat::from_fn(n, n, |i, j| {
        c(
            k[(i, j)] - om * om * m[(i, j)],
            eta * k[(i, j)] + om * cc[(i, j)],
        )
    })
}

fn w_dense(model: &Model) -> Mat<c64> {
    let w = model.contacts.w_matrix(model.n_dofs()).unwrap().to_dense();
    Mat::from_fn(w.nrows(), w.ncols(), |i, j| c(w[(i, j)], 0.0))
}

/// Reference `G_h = W Z_h^{-1} W^T`.
fn g_ref(model: &Model, w: f64, h: usize) -> Mat<c64> {
    let wd = w_dense(model);
    let x = z_dense(model, w, h)
        .partial_piv_lu()
        .solve(wd.transpose().to_owned());
    &wd * &x
}

fn g_of(model: &Model, kind: ReceptanceKind, w: f64, h: usize) -> Mat<c64> {
    let r = Receptance::new(model, kind).unwrap();
    let at = r.prepare(w, &[h]).unwrap();
    at.contact_receptance(h).unwrap().to_owned()
}

fn sdof(m: f64, k: f64, cd: f64, eta: Option<f64>) -> Model {
    let mut b = ModelBuilder::new(1)
        .mass(0, m)
        .spring_to_ground(0, k)
        .damper_to_ground(0, cd)
        .contacts(Contacts::to_ground(1, vec![0], vec![1.0]))
        .force(0, 1, 2.0, 1.0);
    if let Some(e) = eta {
        b = b.hysteretic(e);
    }
    b.build().unwrap()
}

const ALL_EXACT: [ReceptanceKind; 2] = [ReceptanceKind::Dense, ReceptanceKind::Sparse];

#[test]
fn single_dof_closed_form_every_backend() {
    let (m, k, cd, eta) = (2.0, 3.0, 0.1, 0.05);
    for with_eta in [None, Some(eta)] {
        let model = sdof(m, k, cd, with_eta);
        let kinds = [
            ReceptanceKind::Dense,
            ReceptanceKind::Sparse,
            ReceptanceKind::Modal { modes: 1 },
        ];
        for kind in kinds {
            let r = Receptance::new(&model, kind).unwrap();
            for w in [0.0, 0.3, 1.2247, 2.5] {
                let hs = [0, 1, 2, 5];
                let at = r.prepare(w, &hs).unwrap();
                for h in hs {
                    let om = h as f64 * w;
                    let e = if h == 0 { 0.0 } else { with_eta.unwrap_or(0.0) };
                    let expect = c(k - om * om * m, e * k + om * cd).inv();
                    let g = at.contact_receptance(h).unwrap()[(0, 0)];
                    assert!(
                        (g - expect).norm() <= 1e-12 * expect.norm(),
                        "{kind:?} w={w} h={h}: {g} vs {expect}"
                    );
                    // Forcing 2 cos + 1 sin at h = 1 has amplitude 2 - i.
                    let f = if h == 1 { c(2.0, -1.0) } else { c(0.0, 0.0) };
                    let fr = at.forced_contact_response(h).unwrap()[0];
                    assert!((fr - expect * f).norm() <= 1e-12 * expect.norm() * 3.0);
                }
            }
        }
    }
}

#[test]
fn oscillator_2d_is_diagonal_closed_form() {
    let model = examples::oscillator_2d();
    for kind in [
        ReceptanceKind::Dense,
        ReceptanceKind::Sparse,
        ReceptanceKind::Modal { modes: 2 },
    ] {
        let r = Receptance::new(&model, kind).unwrap();
        let at = r.prepare(0.7, &[1, 3]).unwrap();
        for h in [1, 3] {
            let om = 0.7 * h as f64;
            let g = at.contact_receptance(h).unwrap();
            let g1 = c(1.0 - om * om, 0.01 * om).inv();
            let g2 = c(2.0 - om * om, 0.01 * om).inv();
            let expect = Mat::from_fn(2, 2, |i, j| match (i, j) {
                (0, 0) => g1,
                (1, 1) => g2,
                _ => c(0.0, 0.0),
            });
            assert!(rel(g, expect.as_ref()) < 1e-12, "{kind:?} h={h}");
            let fr = at.forced_contact_response(h).unwrap();
            let fe = if h == 1 {
                [g1 * 10.0, g2 * 10.0]
            } else {
                [c(0.0, 0.0); 2]
            };
            for (a, b) in fr.iter().zip(fe) {
                assert!((a - b).norm() <= 1e-12 * 10.0 * g1.norm().max(g2.norm()));
            }
        }
    }
}

/// Hand-made receptance of the two-mass chain at the damper mass: per direction the chain
/// `[[k1 + k2, -k2], [-k2, k2]]` (k1 = k2 = 1 in direction 1, 2 in direction 2), dampers
/// 0.02 in both, unit masses; G is diagonal, `(Z^{-1})_{22} = Z_11 / det Z`.
fn two_mass_hand(w: f64) -> [c64; 2] {
    [1.0, 2.0].map(|s| {
        let i = c(0.0, w);
        let z11 = c(2.0 * s - w * w, 0.0) + i * 0.04;
        let z12 = c(-s, 0.0) - i * 0.02;
        let z22 = c(s - w * w, 0.0) + i * 0.02;
        z11 / (z11 * z22 - z12 * z12)
    })
}

#[test]
fn two_mass_damper_matches_hand_inverse_and_peaks_at_resonances() {
    let model = examples::two_mass_damper(1.0);
    for kind in ALL_EXACT
        .into_iter()
        .chain([ReceptanceKind::Modal { modes: 4 }])
    {
        let r = Receptance::new(&model, kind).unwrap();
        for w in [0.3, 0.618, 1.0, 2.0] {
            let at = r.prepare(w, &[1]).unwrap();
            let g = at.contact_receptance(1).unwrap();
            let [a, b] = two_mass_hand(w);
            let expect = Mat::from_fn(2, 2, |i, j| match (i, j) {
                (0, 0) => a,
                (1, 1) => b,
                _ => c(0.0, 0.0),
            });
            assert!(rel(g, expect.as_ref()) < 1e-11, "{kind:?} w={w}");
        }
    }
    let r = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let amp = |w: f64, d: usize| {
        r.prepare(w, &[1]).unwrap().contact_receptance(1).unwrap()[(d, d)].norm()
    };
    let r5 = 5f64.sqrt();
    for (d, s) in [(0, 1.0), (1, 2.0)] {
        for wr in [(s * (3.0 - r5) / 2.0).sqrt(), (s * (3.0 + r5) / 2.0).sqrt()] {
            // Light damping (zeta = 0.01 omega_r here): a sharp, local maximum.
            let peak = amp(wr, d);
            for off in [0.9, 1.1] {
                assert!(peak > 3.0 * amp(wr * off, d), "dir {d} at {wr}: {peak}");
            }
            for off in [0.995, 1.005] {
                assert!(peak > amp(wr * off, d), "dir {d} at {wr}: not a maximum");
            }
        }
    }
    // The published values: 0.618, 1.618 (direction 1), 0.874, 2.288 (direction 2).
    let printed = [(0, 0.618), (0, 1.618), (1, 0.874), (1, 2.288)];
    for (d, wr) in printed {
        assert!(amp(wr, d) > 3.0 * amp(wr * 0.9, d));
    }
}

#[test]
fn dense_equals_sparse_on_examples() {
    let models = [
        examples::oscillator_2d(),
        examples::two_mass_damper(1.0),
        examples::two_mass_damper(0.0),
        examples::two_dof_1d(),
        examples::chain(15),
        examples::blade_damper_blade(&BladeDamperBlade::default()),
    ];
    for model in &models {
        let wscale = if model.n_dofs() == 10 { 2000.0 } else { 1.0 };
        let d = Receptance::new(model, ReceptanceKind::Dense).unwrap();
        let s = Receptance::new(model, ReceptanceKind::Sparse).unwrap();
        for w in [0.2, 0.9, 1.7].map(|w| w * wscale) {
            let hs = [0, 1, 3, 5];
            let (ad, as_) = (d.prepare(w, &hs).unwrap(), s.prepare(w, &hs).unwrap());
            for h in hs {
                let gd = ad.contact_receptance(h).unwrap();
                let gs = as_.contact_receptance(h).unwrap();
                assert!(rel(gs, gd) < 1e-10, "{:?} w={w} h={h}", model.title);
                let gr = g_ref(model, w, h);
                assert!(rel(gd, gr.as_ref()) < 1e-10);
                let (fd, fs) = (
                    ad.forced_contact_response(h).unwrap(),
                    as_.forced_contact_response(h).unwrap(),
                );
                if fd.iter().any(|v| v.norm() > 0.0) {
                    assert!(relv(&fs, &fd) < 1e-10);
                }
            }
        }
    }
}

/// A 2-D lattice of `nx * ny` nodes with two DOFs each: axial and shear springs to the four
/// neighbours, diagonal springs coupling the directions, a consistent-like mass (neighbour
/// coupling 1/12), Rayleigh damping, `nc` 2-D contacts to ground on the top row, forcing at a
/// corner. `clamped` adds springs to ground on the left edge; otherwise the lattice is free.
fn lattice(nx: usize, ny: usize, nc: usize, clamped: bool) -> Model {
    let n = 2 * nx * ny;
    let dof = |ix: usize, iy: usize, d: usize| 2 * (iy * nx + ix) + d;
    let mut b = ModelBuilder::new(n).rayleigh(0.01, 1e-3);
    let s = std::f64::consts::FRAC_1_SQRT_2;
    for iy in 0..ny {
        for ix in 0..nx {
            let mass = 1.0 + 0.3 * ((ix * 7 + iy * 3) as f64).sin();
            for d in 0..2 {
                b = b.mass(dof(ix, iy, d), mass);
                if clamped && ix == 0 {
                    b = b.spring_to_ground(dof(ix, iy, d), 5.0);
                }
            }
            let link = |b: ModelBuilder, jx: usize, jy: usize, axial: usize| {
                let mut b = b;
                for d in 0..2 {
                    let k = if d == axial { 1.0 } else { 0.3 };
                    b = b.spring(dof(ix, iy, d), dof(jx, jy, d), k).mass_entry(
                        dof(ix, iy, d),
                        dof(jx, jy, d),
                        1.0 / 12.0,
                    );
                }
                b
            };
            if ix + 1 < nx {
                b = link(b, ix + 1, iy, 0);
            }
            if iy + 1 < ny {
                b = link(b, ix, iy + 1, 1);
            }
            if ix + 1 < nx && iy + 1 < ny {
                let (a, c2) = ((ix, iy), (ix + 1, iy + 1));
                b = b.spring_along(
                    &[
                        (dof(a.0, a.1, 0), s),
                        (dof(a.0, a.1, 1), s),
                        (dof(c2.0, c2.1, 0), -s),
                        (dof(c2.0, c2.1, 1), -s),
                    ],
                    0.2,
                );
            }
        }
    }
    let mut cdofs = Vec::new();
    for i in 0..nc {
        let ix = (i + 1) * nx / (nc + 1);
        cdofs.extend([dof(ix, ny - 1, 0), dof(ix, ny - 1, 1)]);
    }
    b.contacts(Contacts::to_ground(2, cdofs, vec![1.0; nc]))
        .force(dof(nx - 1, 0, 0), 1, 1.0, 0.5)
        .force(dof(nx - 1, 0, 1), 3, 0.0, 2.0)
        .build()
        .unwrap()
}

#[test]
fn auto_extracts_modes_above_500_dofs_and_condenses_uncovered_harmonics_exactly() {
    // 2 * 40 * 30 = 2400 DOFs, Rayleigh damping: Auto extracts 100 modes once. At a
    // frequency the modes cover, G_h is the modal sum with residual flexibility (close to the
    // sparse LU's); a harmonic above a quarter of the 100th mode goes through the sparse LU
    // and equals it to rounding.
    // Every model the dense backend does not take (here 2 * 20 * 15 = 600 DOFs) goes modal.
    for (nx, ny, kind) in [
        (15, 15, ReceptanceKind::Dense),
        (20, 15, ReceptanceKind::Modal { modes: 100 }),
    ] {
        let small = Receptance::new(&lattice(nx, ny, 4, true), ReceptanceKind::Auto).unwrap();
        assert_eq!(small.kind(), kind, "{nx} x {ny}");
    }
    let model = lattice(40, 30, 4, true);
    let auto = Receptance::new(&model, ReceptanceKind::Auto).unwrap();
    assert_eq!(auto.kind(), ReceptanceKind::Modal { modes: 100 });
    let limit = auto.modal_coverage().unwrap();
    let top = *auto.modes().unwrap().omega.last().unwrap();
    assert!((limit - 0.25 * top).abs() <= 1e-12 * top, "{limit} {top}");
    let sparse = Receptance::new(&model, ReceptanceKind::Sparse).unwrap();
    let w1 = auto.modes().unwrap().omega[0];
    // h = 1 just above the first mode (covered, 1e-4 here); the first harmonic above the
    // limit (not covered: the modal sum is 1e-2 off there).
    let w = 1.1 * w1;
    let h_far = (limit / w).floor() as usize + 1;
    let hs = [0, 1, h_far];
    let (a, s) = (
        auto.prepare(w, &hs).unwrap(),
        sparse.prepare(w, &hs).unwrap(),
    );
    for h in [0, 1] {
        let e = rel(
            a.contact_receptance(h).unwrap(),
            s.contact_receptance(h).unwrap(),
        );
        assert!(e < 1e-3, "h = {h}: modal against sparse {e}");
    }
    let e = rel(
        a.contact_receptance(h_far).unwrap(),
        s.contact_receptance(h_far).unwrap(),
    );
    assert!(e < 1e-10, "h = {h_far} above the coverage: {e}");
    // An explicit modal:100 has no such fallback: its G_h there is the modal sum.
    let explicit = Receptance::new(&model, ReceptanceKind::Modal { modes: 100 }).unwrap();
    assert!(explicit.modal_coverage().is_none());
    let m = explicit.prepare(w, &hs).unwrap();
    let e_modal = rel(
        m.contact_receptance(h_far).unwrap(),
        s.contact_receptance(h_far).unwrap(),
    );
    assert!(e_modal > 1e-3, "modal sum at h = {h_far}: {e_modal}");
}

#[test]
fn dense_equals_sparse_on_a_generated_lattice() {
    // 2 * 30 * 30 = 1800 DOFs: a dense complex LU takes about a second here.
    let model = lattice(30, 30, 4, true);
    let d = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let s = Receptance::new(&model, ReceptanceKind::Sparse).unwrap();
    let hs = [1, 3];
    let (ad, as_) = (d.prepare(0.05, &hs).unwrap(), s.prepare(0.05, &hs).unwrap());
    for h in hs {
        let (gd, gs) = (
            ad.contact_receptance(h).unwrap(),
            as_.contact_receptance(h).unwrap(),
        );
        assert!(rel(gs, gd) < 1e-10, "h={h}: {}", rel(gs, gd));
        let (fd, fs) = (
            ad.forced_contact_response(h).unwrap(),
            as_.forced_contact_response(h).unwrap(),
        );
        assert!(relv(&fs, &fd) < 1e-10);
    }
}

#[test]
fn modal_on_a_mesh_ordered_by_nested_dissection_is_statically_exact() {
    // 2 * 40 * 40 = 3200 DOFs: large enough for the modal backend's Cholesky factor to be
    // ordered by the better of AMD and nested dissection and solved over subtrees in parallel
    // (receptance/cholesky.rs, tree_solve.rs). The sparse backend (faer's LU, its own
    // ordering and solve) is the reference: with the residual flexibility, the modal
    // receptance is exact at the static harmonic.
    let model = lattice(40, 40, 4, true);
    let modal = Receptance::new(&model, ReceptanceKind::Modal { modes: 12 }).unwrap();
    let om = modal.modes().unwrap().omega.clone();
    assert_eq!(om.len(), 12);
    assert!(om.windows(2).all(|p| p[0] <= p[1]) && om[0] > 0.0);
    let w = 0.5 * (om[2] + om[3]);
    let g0_ex = g_of(&model, ReceptanceKind::Sparse, w, 0);
    let at = modal.prepare(w, &[0]).unwrap();
    let e0 = rel(at.contact_receptance(0).unwrap(), g0_ex.as_ref());
    assert!(e0 < 1e-9, "static error {e0}");
}

#[test]
fn the_modal_product_of_all_harmonics_at_once_is_each_g_h_times_its_column() {
    // Column j by G_{h_j}, from the factors without forming G_h: against the formed G_h of
    // each harmonic, and at h = 0 against the reference W K^-1 W^T (the modal receptance is
    // statically exact with its residual flexibility). Series compliance included.
    let mut model = lattice(16, 16, 4, true);
    let m = model.contacts.rows();
    model.contacts.k_t = Some(vec![1e3; model.contacts.len()]);
    let modal = Receptance::new(&model, ReceptanceKind::Modal { modes: 10 }).unwrap();
    let om = modal.modes().unwrap().omega.clone();
    let w = 0.37 * (om[1] + om[2]);
    let hs = [0, 1, 3, 5];
    let at = modal.prepare(w, &hs).unwrap();
    let product = at.modal_product(&hs).expect("every harmonic is modal");
    assert_eq!((product.rows(), product.columns()), (m, hs.len()));
    let x = Mat::from_fn(m, hs.len(), |i, j| {
        c(
            ((i * 7 + j * 3) % 11) as f64 - 5.0,
            ((i * 5 + j) % 7) as f64 - 3.0,
        )
    });
    let mut y = Mat::zeros(m, hs.len());
    product.apply(x.as_ref(), y.as_mut());
    for (j, &h) in hs.iter().enumerate() {
        let g = at.contact_receptance(h).unwrap();
        let want = g * x.col(j).as_mat();
        let e = rel(y.col(j).as_mat(), want.as_ref());
        assert!(e < 1e-12, "h = {h}: {e}");
    }
    let mut rigid = model.clone();
    rigid.contacts.k_t = None;
    let g0 = g_ref(&rigid, w, 0);
    let want = &g0 * x.col(0).as_mat();
    let got = Mat::from_fn(m, 1, |i, _| y[(i, 0)] - x[(i, 0)] * 1e-3);
    let e = rel(got.as_ref(), want.as_ref());
    assert!(e < 1e-9, "static: {e}");
    // Not offered where a harmonic was not prepared, nor by another backend.
    assert!(at.modal_product(&[7]).is_none());
    let sparse = Receptance::new(&model, ReceptanceKind::Sparse).unwrap();
    assert!(sparse.prepare(w, &hs).unwrap().modal_product(&hs).is_none());
}

#[test]
fn modal_converges_with_modes_and_is_statically_exact() {
    // 2 * 16 * 16 = 512 DOFs (faer's generics are instantiated unoptimised in a debug test).
    let model = lattice(16, 16, 4, true);
    let exact = Receptance::new(&model, ReceptanceKind::Sparse).unwrap();
    let m10 = Receptance::new(&model, ReceptanceKind::Modal { modes: 10 }).unwrap();
    let om = m10.modes().unwrap().omega.clone();
    assert_eq!(om.len(), 10);
    // Between the 3rd and 4th natural frequencies: inside every retained band.
    let w = 0.5 * (om[2] + om[3]);
    let g_ex = exact
        .prepare(w, &[1])
        .unwrap()
        .contact_receptance(1)
        .unwrap()
        .to_owned();
    let g0_ex = exact
        .prepare(w, &[0])
        .unwrap()
        .contact_receptance(0)
        .unwrap()
        .to_owned();
    let mut errs = Vec::new();
    for modes in [10, 40, 160] {
        let r = if modes == 10 {
            None
        } else {
            Some(Receptance::new(&model, ReceptanceKind::Modal { modes }).unwrap())
        };
        let r = r.as_ref().unwrap_or(&m10);
        // Retained frequencies agree with the 10-mode run (Lanczos convergence).
        let o = &r.modes().unwrap().omega;
        for i in 0..10 {
            assert!(
                (o[i] - om[i]).abs() <= 1e-9 * om[i],
                "mode {i}: {} vs {}",
                o[i],
                om[i]
            );
        }
        let at = r.prepare(w, &[0, 1]).unwrap();
        errs.push(rel(at.contact_receptance(1).unwrap(), g_ex.as_ref()));
        // Static: exact thanks to the residual flexibility.
        let e0 = rel(at.contact_receptance(0).unwrap(), g0_ex.as_ref());
        assert!(e0 < 1e-9, "{modes} modes static error {e0}");
        // apply() without forming G agrees with G.
        let x = Mat::from_fn(8, 2, |i, j| c(i as f64 - 3.0, j as f64 + 0.5));
        let mut y = Mat::zeros(8, 2);
        at.apply(1, x.as_ref(), y.as_mut()).unwrap();
        let gx = at.contact_receptance(1).unwrap() * &x;
        assert!(rel(y.as_ref(), gx.as_ref()) < 1e-12);
    }
    assert!(errs[0] > errs[1] && errs[1] > errs[2], "errors {errs:?}");
    assert!(errs[2] < 1e-3, "errors {errs:?}");
}

#[test]
fn massless_dofs_all_backends_agree() {
    // Stiffness-proportional damping so that the modal backend with every finite mode is
    // exact (the explicit dampers of these examples are not proportional: see below).
    let mut tmd = examples::two_mass_damper(0.0);
    tmd.damping_matrix = None;
    tmd.damping.rayleigh = Some((0.0, 0.01));
    let mut bdb = examples::blade_damper_blade(&BladeDamperBlade::default());
    bdb.damping_matrix = None;
    bdb.damping.rayleigh = Some((0.0, 1.5e-5));
    for (model, modes, ws) in [(&tmd, 2, [0.0, 0.5, 1.3]), (&bdb, 8, [0.0, 1300.0, 2100.0])] {
        for w in ws {
            let gr = g_ref(model, w, 1);
            for kind in [
                ReceptanceKind::Dense,
                ReceptanceKind::Sparse,
                ReceptanceKind::Modal { modes },
            ] {
                let g = g_of(model, kind, w, 1);
                assert!(rel(g.as_ref(), gr.as_ref()) < 1e-9, "{kind:?} w={w}");
            }
            // Truncated to two modes, the statics stay exact.
            if w == 0.0 {
                let g = g_of(model, ReceptanceKind::Modal { modes: 1 }, w, 1);
                assert!(rel(g.as_ref(), gr.as_ref()) < 1e-9);
            }
        }
    }
    // With the published (non-proportional) dampers, the modal backend keeps only the
    // diagonal of the projected damping and no damping in the residual: close, not exact.
    let bdb = examples::blade_damper_blade(&BladeDamperBlade::default());
    let w = 1300.0;
    let gr = g_ref(&bdb, w, 1);
    for kind in ALL_EXACT {
        assert!(rel(g_of(&bdb, kind, w, 1).as_ref(), gr.as_ref()) < 1e-10);
    }
    let gm = g_of(&bdb, ReceptanceKind::Modal { modes: 8 }, w, 1);
    assert!(rel(gm.as_ref(), gr.as_ref()) < 0.05);
}

#[test]
fn recover_matches_a_dense_solve() {
    let model = lattice(6, 5, 3, true);
    let m = 6;
    let r_h: Vec<c64> = (0..m)
        .map(|i| c(0.3 * i as f64 - 0.4, 0.1 * i as f64))
        .collect();
    let wd = w_dense(&model);
    let n = model.n_dofs();
    let modes_all = Receptance::new(&model, ReceptanceKind::Modal { modes: n })
        .unwrap()
        .modes()
        .unwrap()
        .omega
        .len();
    assert_eq!(modes_all, n);
    for kind in [
        ReceptanceKind::Dense,
        ReceptanceKind::Sparse,
        ReceptanceKind::Modal { modes: n },
    ] {
        let rec = Receptance::new(&model, kind).unwrap();
        for (w, h) in [(0.4, 1), (0.4, 3), (0.9, 0)] {
            let at = rec.prepare(w, &[0, 1, 3]).unwrap();
            let mut b = Mat::from_fn(n, 1, |i, _| {
                (0..m).map(|k| wd[(k, i)] * r_h[k]).sum::<c64>()
            });
            for t in &model.forcing {
                if t.harmonic == h {
                    b[(t.dof, 0)] += c(t.cos, -t.sin);
                }
            }
            let u_ref = z_dense(&model, w, h).partial_piv_lu().solve(&b);
            let u_ref: Vec<c64> = (0..n).map(|i| u_ref[(i, 0)]).collect();
            let u = at.recover(h, &r_h, None).unwrap();
            assert!(
                relv(&u, &u_ref) < 1e-9,
                "{kind:?} h={h}: {}",
                relv(&u, &u_ref)
            );
            let pick = [5, 0, n - 1];
            let us = at.recover(h, &r_h, Some(&pick)).unwrap();
            let umax = u.iter().map(|v| v.norm()).fold(0.0, f64::max);
            for (k, &i) in pick.iter().enumerate() {
                assert!((us[k] - u[i]).norm() <= 1e-12 * umax, "{kind:?} DOF {i}");
            }
            // Truncated modal basis: the picked DOFs go through the cached static residual
            // columns, the full recovery through a solve; both must agree.
            if matches!(kind, ReceptanceKind::Modal { .. }) {
                let trunc = Receptance::new(&model, ReceptanceKind::Modal { modes: 3 }).unwrap();
                let at = trunc.prepare(w, &[0, 1, 3]).unwrap();
                let u = at.recover(h, &r_h, None).unwrap();
                let umax = u.iter().map(|v| v.norm()).fold(0.0, f64::max);
                for _ in 0..2 {
                    let us = at.recover(h, &r_h, Some(&pick)).unwrap();
                    for (k, &i) in pick.iter().enumerate() {
                        assert!((us[k] - u[i]).norm() <= 1e-12 * umax, "3 modes, DOF {i}");
                    }
                }
            }
            // W U = G R + W Z^-1 F.
            let wu: Vec<c64> = (0..m)
                .map(|k| (0..n).map(|i| wd[(k, i)] * u[i]).sum())
                .collect();
            let gr = at.apply_vec(h, &r_h).unwrap();
            let fr = at.forced_contact_response(h).unwrap();
            let rhs: Vec<c64> = gr.iter().zip(&fr).map(|(a, b)| a + b).collect();
            assert!(relv(&wu, &rhs) < 1e-10);
        }
    }
}

/// A free chain of `n` unit masses (no ground spring), 1-D contact to ground on mass 0,
/// Rayleigh damping, forcing on the last mass.
fn free_chain(n: usize) -> Model {
    let mut b = ModelBuilder::new(n).rayleigh(0.02, 1e-3);
    for i in 0..n {
        b = b.mass(i, 1.0 + 0.1 * (i % 3) as f64);
        if i + 1 < n {
            b = b.spring(i, i + 1, 1.0 + 0.5 * (i % 2) as f64);
        }
    }
    b.contacts(Contacts::to_ground(1, vec![0], vec![1.0]))
        .force(n - 1, 1, 1.0, 0.0)
        .build()
        .unwrap()
}

#[test]
fn free_free_structure() {
    let model = free_chain(200);
    let dense = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let sparse = Receptance::new(&model, ReceptanceKind::Sparse).unwrap();
    let modal_all = Receptance::new(&model, ReceptanceKind::Modal { modes: 200 }).unwrap();
    let modal = Receptance::new(&model, ReceptanceKind::Modal { modes: 20 }).unwrap();
    let modal60 = Receptance::new(&model, ReceptanceKind::Modal { modes: 60 }).unwrap();
    let md = modal.modes().unwrap();
    assert_eq!(md.rigid_body_modes, 1);
    assert_eq!(md.omega[0], 0.0);
    let w = 0.5 * (md.omega[3] + md.omega[4]);
    let hs = [1, 2];
    let gd = dense.prepare(w, &hs).unwrap();
    let gs = sparse.prepare(w, &hs).unwrap();
    let ga = modal_all.prepare(w, &hs).unwrap();
    let gm = modal.prepare(w, &hs).unwrap();
    let gm60 = modal60.prepare(w, &hs).unwrap();
    for h in hs {
        let d = gd.contact_receptance(h).unwrap();
        assert!(rel(gs.contact_receptance(h).unwrap(), d) < 1e-10);
        // Every mode retained: exact.
        assert!(
            rel(ga.contact_receptance(h).unwrap(), d) < 1e-8,
            "all modes h={h}"
        );
        // 20 and 60 of 200 modes plus the elastic residual flexibility: close, and closer
        // with more modes.
        let e = rel(gm.contact_receptance(h).unwrap(), d);
        let e60 = rel(gm60.contact_receptance(h).unwrap(), d);
        assert!(
            e < 2e-2 && e60 < e / 10.0,
            "h={h}: 20 modes {e}, 60 modes {e60}"
        );
        let (fd, fm) = (
            gd.forced_contact_response(h).unwrap(),
            gm.forced_contact_response(h).unwrap(),
        );
        if h == 1 {
            assert!(relv(&fm, &fd) < 1e-2);
        }
    }
    // h = 0 (or w = 0): K is singular, no static receptance exists; every backend says so.
    for r in [&dense, &sparse, &modal] {
        assert!(matches!(
            r.prepare(w, &[0, 1]).err(),
            Some(ReceptanceError::Singular { harmonic: 0, .. })
        ));
    }
}

#[test]
fn errors_are_reported_not_panicked() {
    let model = examples::oscillator_2d();
    let r = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let at = r.prepare(0.5, &[1, 1, 3]).unwrap();
    assert_eq!(at.harmonics(), &[1, 3]);
    assert_eq!(
        at.contact_receptance(2).err(),
        Some(ReceptanceError::NotPrepared { harmonic: 2 })
    );
    assert!(matches!(
        at.recover(1, &[c(1.0, 0.0)], None),
        Err(ReceptanceError::BadSize { .. })
    ));
    assert!(matches!(
        at.recover(1, &[c(1.0, 0.0); 2], Some(&[7])),
        Err(ReceptanceError::BadInput(_))
    ));
    assert!(matches!(
        r.prepare(f64::NAN, &[1]),
        Err(ReceptanceError::BadInput(_))
    ));
    // Undamped, exactly at resonance: singular.
    let mut und = examples::oscillator_2d();
    und.damping_matrix = None;
    for kind in [
        ReceptanceKind::Dense,
        ReceptanceKind::Sparse,
        ReceptanceKind::Modal { modes: 2 },
    ] {
        let r = Receptance::new(&und, kind).unwrap();
        assert!(
            matches!(
                r.prepare(1.0, &[1]).err(),
                Some(ReceptanceError::Singular { .. })
            ),
            "{kind:?}"
        );
    }
    let e = ReceptanceError::Singular {
        harmonic: 1,
        frequency: 1.0,
    };
    assert!(e.to_string().contains("singular"));
}

/// `solve_load` is `Z_h^{-1} b` for any load on every DOF: against a dense solve built here,
/// on every backend (the modal one with every mode, exact for proportional damping), and the
/// symmetry a
/// nonlinear mode's Jacobian relies on: `(W Z^{-1} a)_s = a^T Z^{-1} W^T e_s` for the response
/// `recover` gives to a unit force on contact row `s`.
#[test]
fn solve_load_is_the_dynamic_stiffness_inverse_and_symmetric() {
    // Rayleigh damping: the modal backend with every mode is exact only for proportional C.
    let model = lattice(5, 3, 3, true);
    let n = model.n_dofs();
    let (w, h) = (1.3, 2);
    let z = z_dense(&model, w, h);
    let b: Vec<c64> = (0..n)
        .map(|i| c((i as f64 * 0.37).sin(), (i as f64 * 0.61).cos()))
        .collect();
    let reference = z.partial_piv_lu().solve(Mat::from_fn(n, 1, |i, _| b[i]));
    let reference: Vec<c64> = (0..n).map(|i| reference[(i, 0)]).collect();
    let wm = w_dense(&model);
    for kind in [
        ReceptanceKind::Dense,
        ReceptanceKind::Sparse,
        ReceptanceKind::Modal { modes: n },
    ] {
        let rec = Receptance::new(&model, kind).unwrap();
        let at = rec.prepare(w, &[h]).unwrap();
        let u = at.solve_load(h, &b).unwrap();
        assert!(
            relv(&u, &reference) < 1e-9,
            "{kind:?}: {}",
            relv(&u, &reference)
        );
        let m = wm.nrows();
        // `recover` adds the model's forcing: taken off.
        let forced = at.recover(h, &vec![c(0.0, 0.0); m], None).unwrap();
        for s in 0..m {
            let mut e = vec![c(0.0, 0.0); m];
            e[s] = c(1.0, 0.0);
            let us: Vec<c64> = (at.recover(h, &e, None).unwrap().iter())
                .zip(&forced)
                .map(|(a, f)| a - f)
                .collect();
            let lhs: c64 = (0..n).map(|j| wm[(s, j)] * u[j]).sum();
            let rhs: c64 = (0..n).map(|j| b[j] * us[j]).sum();
            assert!(
                (lhs - rhs).norm() < 1e-9 * lhs.norm().max(1e-30),
                "{kind:?}, row {s}"
            );
        }
        assert!(at.solve_load(h, &b[1..]).is_err());
    }
}

/// A chain of three masses with one dashpot to ground at the first (damping the modes do not
/// diagonalise), a light Rayleigh damping, the contact at the last mass.
fn chain_with_a_dashpot(c0: f64, k12: f64) -> Model {
    ModelBuilder::new(3)
        .rayleigh(0.0, 1e-4)
        .mass(0, 1.0)
        .mass(1, 1.2)
        .mass(2, 0.9)
        .spring_to_ground(0, 1.0)
        .spring(0, 1, k12)
        .spring(1, 2, 1.3)
        .damper_to_ground(0, c0)
        .contacts(Contacts::to_ground(1, vec![2], vec![1.0]))
        .force(2, 1, 1.0, 0.0)
        .build()
        .unwrap()
}

#[test]
fn the_damping_coupling_predicts_what_the_modal_sum_s_diagonal_damping_misses() {
    // The modal sum keeps the diagonal of Phi^T C Phi. Its estimate of what that misses,
    // mode by mode, against the response to the load M phi_r at omega_r from a dense solve
    // of the full Z = K - w^2 M + i w C (its change from the diagonal modal response
    // phi_r / (i omega_r c_r), in the M-norm): within 5 % where it matters (above 1e-3; it
    // is first order in the coupling, 4 digits here), and nothing to report for Rayleigh
    // damping.
    let mut seen = 0;
    for (c0, k12) in [(0.004, 0.8), (0.01, 0.8), (0.02, 0.3), (0.05, 0.3)] {
        let model = chain_with_a_dashpot(c0, k12);
        let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 3 }).unwrap();
        let modes = rec.modes().unwrap();
        let (omega, damping, phi) = (&modes.omega, &modes.damping, &modes.phi);
        let coupling = rec.damping_coupling().expect("an explicit damping matrix");
        let m = model.mass.to_dense();
        let cd = model.viscous_damping().to_dense();
        let d = phi.transpose() * &cd * phi;
        let mut largest = 0.0f64;
        for r in 0..3 {
            let est =
                ewr_hb::receptance::damping_coupling_errors(omega, damping, d.as_ref(), 0.0, None)
                    [r];
            let w = omega[r];
            let load = Mat::from_fn(3, 1, |i, _| {
                c((0..3).map(|j| m[(i, j)] * phi[(j, r)]).sum(), 0.0)
            });
            let exact = z_dense(&model, w, 1).partial_piv_lu().solve(&load);
            let diag = Mat::from_fn(3, 1, |i, _| c(phi[(i, r)], 0.0) / c(0.0, w * damping[r]));
            let m_norm = |v: &Mat<c64>| {
                let mut s = 0.0;
                for i in 0..3 {
                    for j in 0..3 {
                        s += (v[(i, 0)].conj() * v[(j, 0)]).re * m[(i, j)];
                    }
                }
                s.sqrt()
            };
            let measured = m_norm(&(&exact - &diag)) / m_norm(&diag);
            largest = largest.max(est);
            if measured > 1e-3 {
                assert!(
                    (est / measured - 1.0).abs() < 0.05,
                    "c0 {c0}, k12 {k12}, mode {r}: estimate {:.3e}, measured {measured:.3e}",
                    est
                );
                seen += 1;
            }
        }
        assert!((coupling.error - largest).abs() <= 1e-9 * largest);
        // Up to a frequency: the modes below it only.
        let first = rec.damping_coupling_below(1.001 * omega[0]).unwrap();
        let errors =
            ewr_hb::receptance::damping_coupling_errors(omega, damping, d.as_ref(), 0.0, None);
        assert_eq!((first.mode, first.error), (0, errors[0]));
        assert_eq!(
            rec.damping_coupling_below(0.5 * omega[0]).unwrap().error,
            0.0
        );
    }
    assert!(seen >= 6, "{seen} modes with a change above 1e-3");
    // Rayleigh damping alone: nothing to report.
    let rayleigh = ModelBuilder::new(3)
        .rayleigh(0.01, 1e-3)
        .mass(0, 1.0)
        .mass(1, 1.2)
        .mass(2, 0.9)
        .spring_to_ground(0, 1.0)
        .spring(0, 1, 0.8)
        .spring(1, 2, 1.3)
        .contacts(Contacts::to_ground(1, vec![2], vec![1.0]))
        .force(2, 1, 1.0, 0.0)
        .build()
        .unwrap();
    let rec = Receptance::new(&rayleigh, ReceptanceKind::Modal { modes: 3 }).unwrap();
    assert_eq!(rec.damping_coupling(), None);
}

#[test]
fn a_repeated_mode_damped_by_a_dashpot_is_condensed_exactly_by_its_modes() {
    // Two equal masses on equal springs, joined by a dashpot only: one repeated eigenvalue,
    // whose basis the Lanczos may return in any orientation, while the damping acts on the
    // out-of-phase motion alone. The modal sum keeps the diagonal of Phi^T C Phi, so it is
    // right only in the basis that diagonalises it; the backend turns the pair to it. With
    // both modes retained the modal receptance is then the exact one, and nothing couples.
    let model = ModelBuilder::new(2)
        .rayleigh(0.01, 0.0)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .spring_to_ground(0, 4.0)
        .spring_to_ground(1, 4.0)
        .damper(0, 1, 0.3)
        .contacts(Contacts::to_ground(1, vec![0], vec![1.0]))
        .force(0, 1, 1.0, 0.0)
        .build()
        .unwrap();
    let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 2 }).unwrap();
    for w in [1.5, 1.99, 2.0, 2.005, 2.5] {
        let at = rec.prepare(w, &[1]).unwrap();
        let modal = at.contact_receptance(1).unwrap().to_owned();
        let exact = g_ref(&model, w, 1);
        assert!(rel(modal.as_ref(), exact.as_ref()) < 1e-10, "w = {w}");
    }
    let c = rec.damping_coupling().expect("an explicit damping matrix");
    assert_eq!(c.error, 0.0);
}

#[test]
fn the_damping_coupling_counts_the_modes_the_basis_leaves_out() {
    // Twelve masses in a chain, a dashpot to ground at the first, four modes retained: the
    // eight omitted ones couple to the retained through the dashpot as well, and the estimate
    // takes them from the static residual operator (within 20 % here). Against the response to M phi_r at
    // omega_r from a dense solve of the full Z (which the load drives through mode r alone,
    // so the residual flexibility adds nothing to the diagonal modal response).
    let n = 12;
    let mut b = ModelBuilder::new(n).rayleigh(0.0, 1e-4);
    for i in 0..n {
        b = b.mass(i, 1.0 + 0.05 * i as f64);
        if i + 1 < n {
            b = b.spring(i, i + 1, 3.0);
        }
    }
    let model = b
        .spring_to_ground(0, 3.0)
        .damper_to_ground(0, 0.05)
        .contacts(Contacts::to_ground(1, vec![n - 1], vec![1.0]))
        .force(n - 1, 1, 1.0, 0.0)
        .build()
        .unwrap();
    let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 4 }).unwrap();
    let modes = rec.modes().unwrap();
    let (omega, damping, phi) = (&modes.omega, &modes.damping, &modes.phi);
    let m = model.mass.to_dense();
    let cd = model.viscous_damping().to_dense();
    let d = phi.transpose() * &cd * phi;
    let m_norm = |v: &Mat<c64>| {
        let mut s = 0.0;
        for i in 0..n {
            for j in 0..n {
                s += (v[(i, 0)].conj() * v[(j, 0)]).re * m[(i, j)];
            }
        }
        s.sqrt()
    };
    let measured: Vec<f64> = (0..4)
        .map(|r| {
            let w = omega[r];
            let load = Mat::from_fn(n, 1, |i, _| {
                c((0..n).map(|j| m[(i, j)] * phi[(j, r)]).sum(), 0.0)
            });
            let exact = z_dense(&model, w, 1).partial_piv_lu().solve(&load);
            let diag = Mat::from_fn(n, 1, |i, _| c(phi[(i, r)], 0.0) / c(0.0, w * damping[r]));
            m_norm(&(&exact - &diag)) / m_norm(&diag)
        })
        .collect();
    let retained_only =
        ewr_hb::receptance::damping_coupling_errors(omega, damping, d.as_ref(), 0.0, None);
    let c = rec.damping_coupling().expect("an explicit damping matrix");
    let worst = measured.iter().cloned().fold(0.0f64, f64::max);
    // Measured 1.55 % at mode 4; estimated 1.37 %, against 0.57 % from the retained modes'
    // coupling alone (the omitted ones' closure is exact for one omitted mode; here the
    // nearest omitted modes lie close above the basis).
    assert!(worst > 1e-3, "{worst}");
    assert_eq!(measured[c.mode], worst);
    assert!(
        (c.error / worst - 1.0).abs() < 0.2,
        "estimate {c:?}, measured {measured:?}"
    );
    assert!(retained_only[c.mode] < 0.5 * worst);
}

/// `ReceptanceAt::response_norm` reads a nonlinear mode's normalisation (`Q^H M Q` of the
/// response to contact forces and `Q` at one DOF) from the modal coordinates and the Gram
/// matrix of the modes and the static residual, without recovering every DOF. Against the
/// response recovered at every DOF and the mass matrix, on the lattice with a truncated basis
/// (clamped, so the static operator is unshifted) and free (rigid modes: the shifted,
/// truncated static series); the derivatives against central differences of the recovered
/// norm (exact for a quadratic, to rounding) and the recovered DOF (linear). The dense
/// backend has no such shortcut.
#[test]
fn the_response_norm_from_modes_is_the_recovered_response_s() {
    for clamped in [true, false] {
        let mut model = lattice(6, 4, 4, clamped);
        model.forcing.clear();
        let n = model.n_dofs();
        let mass = model.mass.to_dense();
        let (w, h, dof) = (0.9, 1, 17);
        let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: n / 3 }).unwrap();
        let at = rec.prepare_damped(w, &[h], 0.02).unwrap();
        let m = w_dense(&model).nrows();
        let r: Vec<c64> = (0..m)
            .map(|i| c((i as f64 * 0.7).cos(), (i as f64 * 1.3).sin()))
            .collect();
        let recovered = |r: &[c64]| {
            let q = at.recover(h, r, None).unwrap();
            let norm2: f64 = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| (q[i].conj() * mass[(i, j)] * q[j]).re)
                        .sum::<f64>()
                })
                .sum();
            (norm2, q[dof])
        };
        let (norm2, at_dof) = recovered(&r);
        let rn = at
            .response_norm(h, &r, dof)
            .unwrap()
            .expect("modal backend");
        println!(
            "clamped {clamped}: |Q|_M^2 {norm2:.12e} against {:.12e}, Q[{dof}] {at_dof} against {}",
            rn.norm2, rn.at_dof
        );
        assert!((rn.norm2 - norm2).abs() < 1e-10 * norm2);
        assert!((rn.at_dof - at_dof).norm() < 1e-10 * at_dof.norm());
        let eps = 1e-3;
        for s in 0..m {
            for dir in [c(1.0, 0.0), c(0.0, 1.0)] {
                let shifted = |sign: f64| {
                    let mut rs = r.clone();
                    rs[s] += dir * (sign * eps);
                    recovered(&rs)
                };
                let ((np, qp), (nm, qm)) = (shifted(1.0), shifted(-1.0));
                let d_norm2 = (np - nm) / (2.0 * eps);
                let d_at = (qp - qm) / (2.0 * eps);
                let (want_n, want_q) = (2.0 * (rn.d_norm2[s] * dir).re, rn.d_at_dof[s] * dir);
                assert!(
                    (d_norm2 - want_n).abs() < 1e-7 * norm2,
                    "row {s}: {d_norm2} against {want_n}"
                );
                assert!((d_at - want_q).norm() < 1e-7 * at_dof.norm().max(1e-30));
            }
        }
        let dense = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
        let at = dense.prepare(w, &[h]).unwrap();
        assert!(at.response_norm(h, &r, dof).unwrap().is_none());
        assert!(at.response_norm(h, &r[1..], dof).is_err());
        assert!(at.response_norm(h, &r, n).is_err());
        // A forced harmonic's response is not the contact forces' alone: no shortcut.
        let forced = lattice(6, 4, 4, clamped);
        let rec = Receptance::new(&forced, ReceptanceKind::Modal { modes: n / 3 }).unwrap();
        let at = rec.prepare(w, &[1, 2]).unwrap();
        assert!(at.response_norm(1, &r, dof).unwrap().is_none());
        assert!(at.response_norm(2, &r, dof).unwrap().is_some());
    }
}

/// `ReceptanceAt::recover_every` (every DOF of several harmonics, one static solve for all on
/// the modal backend) against `recover` harmonic by harmonic, forcing included (the lattice is
/// forced on harmonics 1 and 3), on the modal backend with a truncated basis, clamped and free,
/// and on the dense one.
#[test]
fn recovering_every_harmonic_at_once_is_recovering_each() {
    for clamped in [true, false] {
        let model = lattice(6, 4, 4, clamped);
        let n = model.n_dofs();
        let m = w_dense(&model).nrows();
        let harmonics = [1, 2, 3];
        let forces: Vec<Vec<c64>> = harmonics
            .iter()
            .map(|&h| {
                (0..m)
                    .map(|i| c((i as f64 * 0.7 + h as f64).cos(), (i as f64 * 1.3).sin()))
                    .collect()
            })
            .collect();
        for kind in [
            ReceptanceKind::Modal { modes: n / 3 },
            ReceptanceKind::Dense,
        ] {
            let rec = Receptance::new(&model, kind).unwrap();
            let at = rec.prepare(0.9, &harmonics).unwrap();
            let loads: Vec<(usize, &[c64])> = harmonics
                .iter()
                .zip(&forces)
                .map(|(&h, r)| (h, r.as_slice()))
                .collect();
            let all = at.recover_every(&loads).unwrap();
            for ((&h, r), u) in harmonics.iter().zip(&forces).zip(&all) {
                let one = at.recover(h, r, None).unwrap();
                assert_eq!(u.len(), n);
                assert!(relv(u, &one) < 1e-12, "{kind:?} h = {h}: {}", relv(u, &one));
            }
            assert!(at.recover_every(&[(1, &forces[0][1..])]).is_err());
        }
    }
}

/// The static harmonic of the modal receptance depends on neither the frequency nor a
/// damping shift (`d_r = lambda_r` at `h = 0`): it is formed once and shared by
/// every prepared frequency, and it stays the exact static flexibility (against the sparse
/// backend's `W K^-1 W^T`), while the first harmonic moves with both.
#[test]
fn the_static_harmonic_is_the_same_exact_flexibility_at_every_frequency_and_shift() {
    let model = lattice(8, 8, 4, true);
    let modal = Receptance::new(&model, ReceptanceKind::Modal { modes: 6 }).unwrap();
    let om = modal.modes().unwrap().omega.clone();
    let (w1, w2) = (0.5 * om[0], 0.5 * (om[1] + om[2]));
    let a = modal.prepare(w1, &[0, 1]).unwrap();
    let b = modal.prepare_damped(w2, &[0, 1], 0.3 * om[0]).unwrap();
    let (a0, b0) = (
        a.contact_receptance(0).unwrap(),
        b.contact_receptance(0).unwrap(),
    );
    assert!(a0 == b0, "G_0 moved with w or xi");
    let exact = g_of(&model, ReceptanceKind::Sparse, w1, 0);
    let e0 = rel(a0, exact.as_ref());
    assert!(e0 < 1e-9, "static error {e0}");
    let e1 = rel(
        a.contact_receptance(1).unwrap(),
        b.contact_receptance(1).unwrap(),
    );
    assert!(e1 > 1e-3, "G_1 did not move: {e1}");
}

/// A receptance derived for another forcing ([`Receptance::with_forcing`]: a study's forcing
/// scale or preload) equals one built anew for that model, to the bit, with every backend:
/// the contact receptance, the forced response at the contacts and the response recovered
/// at the DOFs, after the first receptance's caches were filled, and with a static load the
/// first model lacks. The forced response is the old one scaled (to rounding); a model with
/// another mass or other contacts is refused.
#[test]
fn a_receptance_for_another_forcing_equals_one_built_anew() {
    let model = lattice(8, 6, 3, true);
    let mut scaled = model.clone();
    for f in &mut scaled.forcing {
        (f.cos, f.sin) = (2.5 * f.cos, 2.5 * f.sin);
    }
    // A static load the first model lacks (a preload's harmonic 0).
    scaled.forcing.push(ewr_model::ForcingTerm {
        dof: 7,
        harmonic: 0,
        cos: 0.8,
        sin: 0.0,
    });
    let bits = |v: &[c64]| -> Vec<(u64, u64)> {
        v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
    };
    let m = model.contacts.rows();
    let r: Vec<c64> = (0..m).map(|i| c(0.2 * i as f64 - 0.3, 0.05)).collect();
    for kind in [
        ReceptanceKind::Dense,
        ReceptanceKind::Sparse,
        ReceptanceKind::Modal { modes: 12 },
    ] {
        let base = Receptance::new(&model, kind).unwrap();
        // What the first model's use leaves in the backend's caches (`G_0`, the static
        // columns of recovered DOFs) is carried over.
        let used = base.prepare(0.4, &[0, 1, 3]).unwrap();
        used.contact_receptance(0).unwrap();
        used.recover(1, &r, Some(&[0, 5, 17])).unwrap();
        drop(used);
        let derived = base.with_forcing(&scaled).unwrap();
        assert_eq!(
            derived.keeps_modes_for_other_forcing(),
            matches!(kind, ReceptanceKind::Modal { .. })
        );
        let fresh = Receptance::new(&scaled, kind).unwrap();
        for w in [0.4, 0.9] {
            let hs = [0, 1, 3];
            let (a, b, old) = (
                derived.prepare(w, &hs).unwrap(),
                fresh.prepare(w, &hs).unwrap(),
                base.prepare(w, &hs).unwrap(),
            );
            for h in hs {
                let ga = a.contact_receptance(h).unwrap().to_owned();
                let gb = b.contact_receptance(h).unwrap().to_owned();
                assert!(
                    (0..m).all(|j| bits(&(0..m).map(|i| ga[(i, j)]).collect::<Vec<_>>())
                        == bits(&(0..m).map(|i| gb[(i, j)]).collect::<Vec<_>>())),
                    "{kind:?}, w = {w}, h = {h}: G_h"
                );
                let (qa, qb) = (
                    a.forced_contact_response(h).unwrap(),
                    b.forced_contact_response(h).unwrap(),
                );
                assert_eq!(bits(&qa), bits(&qb), "{kind:?}, w = {w}, h = {h}: Q_h");
                let q_old: Vec<c64> = old
                    .forced_contact_response(h)
                    .unwrap()
                    .iter()
                    .map(|q| q * 2.5)
                    .collect();
                if h > 0 {
                    assert!(relv(&qa, &q_old) < 1e-12, "{kind:?}, h = {h}: scaled");
                } else {
                    assert!(
                        qa.iter().any(|q| q.norm() > 0.0),
                        "{kind:?}: the static load"
                    );
                }
                let (ua, ub) = (
                    a.recover(h, &r, Some(&[0, 5, 17])).unwrap(),
                    b.recover(h, &r, Some(&[0, 5, 17])).unwrap(),
                );
                assert_eq!(bits(&ua), bits(&ub), "{kind:?}, w = {w}, h = {h}: DOFs");
            }
        }
        let mut heavier = model.clone();
        heavier.set_mass(&[4], 3.0).unwrap();
        assert!(
            matches!(
                base.with_forcing(&heavier),
                Err(ReceptanceError::BadInput(_))
            ),
            "{kind:?}: another mass"
        );
        let moved = lattice(8, 6, 2, true);
        assert!(
            matches!(base.with_forcing(&moved), Err(ReceptanceError::BadInput(_))),
            "{kind:?}: other contacts"
        );
    }
}
