//! The matrix-free pieces of the E-WR Jacobian (J^T x, the per-contact diagonal blocks, the
//! receptance's diagonal blocks) against the assembled dense Jacobian.

use ewr_contact::{ContactParams, ContactSystem, EwrResidual, FrictionLaw};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_model::{Model, examples};
use faer::Mat;

fn rand(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_add(0x9E3779B97F4A7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

fn check(model: &Model, kind: ReceptanceKind, omega: f64, set: HarmonicSet, seed: u64) {
    check_with_samples(model, kind, omega, set, seed, 128);
}

/// [`check`] on `samples` instants a period.
fn check_with_samples(
    model: &Model,
    kind: ReceptanceKind,
    omega: f64,
    set: HarmonicSet,
    mut seed: u64,
    samples: usize,
) {
    let rec = Receptance::new(model, kind).unwrap();
    let at = rec.prepare(omega, set.harmonics()).unwrap();
    let params = ContactParams::of(&model.contacts);
    let (d, nc, nco) = (params.dim, params.len(), set.n_coeffs());
    let mut sys = EwrResidual::new(&at, set, samples, FrictionLaw::Exact, params).unwrap();
    let n = sys.len();
    let scale = model.contacts.mu_n.iter().copied().fold(0.0, f64::max);
    let r: Vec<f64> = (0..n).map(|_| 0.7 * scale * rand(&mut seed)).collect();
    let mut g = vec![0.0; n];
    let mut jac = Mat::<f64>::zeros(n, n);
    sys.residual_and_jacobian(&r, &mut g, jac.as_mut()).unwrap();
    let jmax = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| jac[(i, j)].abs())
        .fold(0.0, f64::max);
    assert!(jmax > 0.0);

    // The matrix-free evaluation keeps the same derivatives.
    let mut g2 = vec![0.0; n];
    sys.residual_keep_derivatives(&r, &mut g2).unwrap();
    assert_eq!(g, g2);

    // J^T x against the assembled transpose, for a few random x.
    for _ in 0..3 {
        let x: Vec<f64> = (0..n).map(|_| rand(&mut seed)).collect();
        let mut y = vec![0.0; n];
        sys.jacobian_transpose_product(&x, &mut y).unwrap();
        let xn = x.iter().map(|v| v.abs()).sum::<f64>();
        let mut worst = 0.0f64;
        for j in 0..n {
            let jtx: f64 = (0..n).map(|i| jac[(i, j)] * x[i]).sum();
            worst = worst.max((jtx - y[j]).abs() / (jmax * xn));
        }
        assert!(worst < 1e-12, "J^T x vs assembled J^T: {worst:e}");
        // And the product is not the untransposed one (the test can fail).
        let mut jx = vec![0.0; n];
        sys.jacobian_product(&x, &mut jx).unwrap();
        if n > 1 {
            let diff = jx
                .iter()
                .zip(&y)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                diff > 1e-8 * jmax,
                "J x == J^T x: J is not expected symmetric"
            );
        }
    }

    // J x against the assembled J.
    let x: Vec<f64> = (0..n).map(|_| rand(&mut seed)).collect();
    let mut jx = vec![0.0; n];
    sys.jacobian_product(&x, &mut jx).unwrap();
    let xn = x.iter().map(|v| v.abs()).sum::<f64>();
    let worst = (0..n)
        .map(|i| {
            let e: f64 = (0..n).map(|j| jac[(i, j)] * x[j]).sum();
            (e - jx[i]).abs() / (jmax * xn)
        })
        .fold(0.0, f64::max);
    assert!(worst < 1e-12, "J x vs assembled J: {worst:e}");

    // The product finished contact by contact is the product, then the finish on each
    // contact's unknowns, to the last bit (the system's own pass over the contacts).
    let finish = |c: usize, part: &mut [f64]| {
        for (k, p) in part.iter_mut().enumerate() {
            *p = 3.0 * *p - (c * 7 + k) as f64;
        }
    };
    let mut expected = jx.clone();
    for c in 0..nc {
        let idx = ContactSystem::contact_unknowns(&sys, c);
        assert_eq!(idx, (c * d * nco..(c + 1) * d * nco).collect::<Vec<_>>());
        for (k, &i) in idx.iter().enumerate() {
            expected[i] = 3.0 * jx[i] - (c * 7 + k) as f64;
        }
    }
    let mut fused = vec![0.0; n];
    sys.jacobian_product_then(&x, &mut fused, &finish).unwrap();
    assert_eq!(fused, expected, "J x finished in the product's own tasks");

    // Diagonal blocks per contact.
    let blocks = sys.contact_jacobian_blocks().unwrap();
    assert_eq!(blocks.len(), nc);
    let bs = d * nco;
    let mut worst = 0.0f64;
    for (c, b) in blocks.iter().enumerate() {
        assert_eq!((b.nrows(), b.ncols()), (bs, bs));
        for i in 0..bs {
            for j in 0..bs {
                worst = worst.max((b[(i, j)] - jac[(c * bs + i, c * bs + j)]).abs() / jmax);
            }
        }
    }
    assert!(worst < 1e-12, "contact blocks vs dense J: {worst:e}");
}

#[test]
fn chain_1d_odd() {
    check(
        &examples::chain(6),
        ReceptanceKind::Dense,
        0.3,
        HarmonicSet::odd(5).unwrap(),
        1,
    );
}

#[test]
fn two_mass_damper_2d_with_mean() {
    check(
        &examples::two_mass_damper(1.0),
        ReceptanceKind::Dense,
        0.303,
        HarmonicSet::all(4).unwrap(),
        2,
    );
}

#[test]
fn blade_damper_blade_modal() {
    let m = examples::blade_damper_blade(&Default::default());
    let nd = m.n_dofs();
    check(
        &m,
        ReceptanceKind::Modal { modes: nd.min(4) },
        2000.0,
        HarmonicSet::odd(3).unwrap(),
        3,
    );
}

#[test]
fn products_split_into_parallel_tasks_equal_the_dense_jacobian() {
    // PARALLEL_MIN_SAMPLES a signal: each contact and each signal's FFT is a task of its own
    // (`ewr_hb::fourier::PARALLEL_MIN_SAMPLES`), so the products run split among threads.
    let m = examples::blade_damper_blade(&Default::default());
    let nd = m.n_dofs();
    assert!(m.contacts.len() > 1);
    check_with_samples(
        &m,
        ReceptanceKind::Modal { modes: nd.min(4) },
        2000.0,
        HarmonicSet::odd(3).unwrap(),
        3,
        ewr_hb::fourier::PARALLEL_MIN_SAMPLES,
    );
}

#[test]
fn modal_diagonal_blocks_match_formed_receptance() {
    let m = examples::chain(12);
    let rec = Receptance::new(&m, ReceptanceKind::Modal { modes: 5 }).unwrap();
    let at = rec.prepare(0.4, &[1, 3]).unwrap();
    for h in [1, 3] {
        let g = at.contact_receptance(h).unwrap();
        for first in [0, 4, 9] {
            let b = at.diagonal_block(h, first, 3).unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    let e = (b[(i, j)] - g[(first + i, first + j)]).norm();
                    assert!(e < 1e-12 * g[(first, first)].norm(), "{e}");
                }
            }
        }
    }
    assert!(at.diagonal_block(1, 10, 3).is_err());
}

/// The period-averaged harmonic Jacobians against the assembled `J`: equal when every
/// contact sticks for the whole period (the law's derivatives are then constant), different
/// otherwise.
fn averaged_vs_dense(model: &Model, omega: f64, set: HarmonicSet, mu_n: f64) -> f64 {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let at = rec.prepare(omega, set.harmonics()).unwrap();
    let mut params = ContactParams::of(&model.contacts);
    params.mu_n.iter_mut().for_each(|m| *m = mu_n);
    let (m, nco) = (params.dim * params.len(), set.n_coeffs());
    let mut sys = EwrResidual::new(&at, set.clone(), 128, FrictionLaw::Exact, params).unwrap();
    let n = sys.len();
    let mut g = vec![0.0; n];
    let mut jac = Mat::<f64>::zeros(n, n);
    sys.residual_and_jacobian(&vec![0.0; n], &mut g, jac.as_mut())
        .unwrap();
    let ks = sys.averaged_harmonic_jacobians().unwrap();
    assert_eq!(ks.len(), set.harmonics().len());
    // Real form of K_h on (a, b) with Z = a - i b: [[Re k, Im k], [-Im k, Re k]]; zero
    // between different harmonics.
    let mut approx = Mat::<f64>::zeros(n, n);
    for (k, &h) in ks.iter().zip(set.harmonics()) {
        assert_eq!((k.nrows(), k.ncols()), (m, m));
        let p = set.coeff_index(h).unwrap();
        for s in 0..m {
            for j in 0..m {
                let z = k[(s, j)];
                approx[(s * nco + p, j * nco + p)] = z.re;
                if h > 0 {
                    approx[(s * nco + p, j * nco + p + 1)] = z.im;
                    approx[(s * nco + p + 1, j * nco + p)] = -z.im;
                    approx[(s * nco + p + 1, j * nco + p + 1)] = z.re;
                }
            }
        }
    }
    let jmax = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| jac[(i, j)].abs())
        .fold(0.0, f64::max);
    let mut worst = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            worst = worst.max((approx[(i, j)] - jac[(i, j)]).abs() / jmax);
        }
    }
    worst
}

#[test]
fn averaged_harmonic_jacobians_are_exact_in_full_stick() {
    // From zero force the contacts stick wherever rho |v| < mu N: a large bound makes that
    // the whole period.
    let tmd = examples::two_mass_damper(1.0);
    let e = averaged_vs_dense(&tmd, 0.303, HarmonicSet::all(4).unwrap(), 1e6);
    assert!(e < 1e-12, "full stick, 2-D with mean: {e:e}");
    let chain = examples::chain(6);
    let e = averaged_vs_dense(&chain, 0.3, HarmonicSet::odd(5).unwrap(), 1e6);
    assert!(e < 1e-12, "full stick, chain: {e:e}");
    // With a small bound the contacts slip: the averaged form is only an approximation.
    let e = averaged_vs_dense(&tmd, 0.303, HarmonicSet::all(4).unwrap(), 1e-3);
    assert!(e > 1e-3, "slip should break the averaged form: {e:e}");
}

#[test]
fn cyclic_sector_travelling_wave() {
    // G_h of a travelling wave is not symmetric: J^T x must use G_h^T (issue 16).
    for eo in [3, 7] {
        let m = examples::bladed_disk(&examples::BladedDisk {
            sectors: 12,
            engine_order: eo,
        });
        for kind in [ReceptanceKind::Dense, ReceptanceKind::Sparse] {
            check(&m, kind, 0.62, HarmonicSet::odd(5).unwrap(), 7);
        }
    }
}
