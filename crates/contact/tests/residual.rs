//! The E-WR residual's Jacobian and J x against finite differences, on the example models.

use ewr_contact::{ContactParams, EwrResidual, FrictionLaw};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_model::{Model, examples};
use faer::Mat;

/// Deterministic pseudo-random numbers in [-1, 1).
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Checks the dense Jacobian column by column against central differences of g, and J x
/// against the assembled J, at random friction coefficients of the size of mu N (so that
/// the samples fall on both the stick and the slip pieces of the law).
fn check(model: &Model, omega: f64, set: HarmonicSet, law: FrictionLaw, seed: u64) {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let at = rec.prepare(omega, set.harmonics()).unwrap();
    let nt = 256;
    let mut sys = EwrResidual::new(&at, set, nt, law, ContactParams::of(&model.contacts)).unwrap();
    let n = sys.len();
    let mut rng = SplitMix(seed);
    let scale = model.contacts.mu_n.iter().copied().fold(0.0, f64::max);
    let r: Vec<f64> = (0..n).map(|_| 0.7 * scale * rng.next()).collect();
    let mut g = vec![0.0; n];
    let mut jac = Mat::<f64>::zeros(n, n);
    sys.residual_and_jacobian(&r, &mut g, jac.as_mut()).unwrap();
    let mut g2 = vec![0.0; n];
    sys.residual(&r, &mut g2).unwrap();
    assert_eq!(g, g2, "residual with and without Jacobian differ");

    let jmax = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| jac[(i, j)].abs())
        .fold(0.0, f64::max);
    assert!(jmax > 0.0);
    let eps = 1e-6 * scale;
    let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
    let mut worst = 0.0f64;
    for j in 0..n {
        let mut rp = r.clone();
        rp[j] += eps;
        sys.residual(&rp, &mut gp).unwrap();
        rp[j] -= 2.0 * eps;
        sys.residual(&rp, &mut gm).unwrap();
        for i in 0..n {
            let fd = (gp[i] - gm[i]) / (2.0 * eps);
            worst = worst.max((fd - jac[(i, j)]).abs() / jmax);
        }
    }
    assert!(worst < 1e-5, "Jacobian vs finite differences: {worst:e}");

    // J x at the point of the last evaluation with derivatives.
    sys.residual_and_jacobian(&r, &mut g, jac.as_mut()).unwrap();
    let x: Vec<f64> = (0..n).map(|_| rng.next()).collect();
    let mut y = vec![0.0; n];
    sys.jacobian_product(&x, &mut y).unwrap();
    let mut worst = 0.0f64;
    for i in 0..n {
        let jx: f64 = (0..n).map(|j| jac[(i, j)] * x[j]).sum();
        worst = worst.max((jx - y[i]).abs() / (jmax * n as f64));
    }
    assert!(worst < 1e-13, "J x vs assembled J: {worst:e}");
}

#[test]
fn oscillator_2d_odd_set() {
    check(
        &examples::oscillator_2d(),
        0.6,
        HarmonicSet::odd(7).unwrap(),
        FrictionLaw::Exact,
        1,
    );
}

#[test]
fn oscillator_2d_full_set_projection_law() {
    check(
        &examples::oscillator_2d(),
        0.17,
        HarmonicSet::all(6).unwrap(),
        FrictionLaw::Projection,
        2,
    );
}

#[test]
fn two_mass_damper_2d() {
    check(
        &examples::two_mass_damper(1.0),
        0.303,
        HarmonicSet::odd(5).unwrap(),
        FrictionLaw::Exact,
        3,
    );
}

#[test]
fn massless_damper_2d() {
    check(
        &examples::two_mass_damper(0.0),
        0.8,
        HarmonicSet::odd(5).unwrap(),
        FrictionLaw::Exact,
        4,
    );
}

#[test]
fn two_dof_1d_full_set() {
    check(
        &examples::two_dof_1d(),
        0.308,
        HarmonicSet::all(7).unwrap(),
        FrictionLaw::Exact,
        5,
    );
}

#[test]
fn chain_with_several_1d_contacts() {
    check(
        &examples::chain(4),
        0.5,
        HarmonicSet::odd(5).unwrap(),
        FrictionLaw::Exact,
        6,
    );
}

#[test]
fn blade_damper_blade_jenkins_contacts_smooth_laws() {
    let m = examples::blade_damper_blade(&Default::default());
    let w = 2.0 * std::f64::consts::PI * 200.0;
    check(&m, w, HarmonicSet::odd(3).unwrap(), FrictionLaw::Exact, 7);
    check(
        &m,
        w,
        HarmonicSet::odd(3).unwrap(),
        FrictionLaw::MaxEps { eps: 1e-2 },
        8,
    );
    check(
        &m,
        w,
        HarmonicSet::odd(3).unwrap(),
        FrictionLaw::Tanh { alpha: 50.0 },
        9,
    );
}

#[test]
fn zero_friction_force_gives_the_linear_velocity() {
    // At R = 0 the velocity is the forced response: v = w d/dtau (W Z^-1 F). For the
    // oscillator, direction 1 at w: |V| = w * 10 / |1 - w^2 + 0.01 i w|.
    let model = examples::oscillator_2d();
    let w = 0.7;
    let set = HarmonicSet::odd(3).unwrap();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let at = rec.prepare(w, set.harmonics()).unwrap();
    let mut sys = EwrResidual::new(
        &at,
        set,
        64,
        FrictionLaw::Exact,
        ContactParams::of(&model.contacts),
    )
    .unwrap();
    let zero = vec![0.0; sys.len()];
    let h = sys.histories(&zero).unwrap();
    let amp = h.velocity[..64].iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let z = num_complex_abs(1.0 - w * w, 0.01 * w);
    let expect = w * 10.0 / z;
    assert!((amp - expect).abs() < 2e-3 * expect, "{amp} vs {expect}");
    // And the displacement is its integral: amplitude 10 / |Z|.
    let damp = h.displacement[..64]
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!((damp - 10.0 / z).abs() < 2e-3 * 10.0 / z, "{damp}");
}

fn num_complex_abs(re: f64, im: f64) -> f64 {
    (re * re + im * im).sqrt()
}

#[test]
fn bad_sizes_are_errors() {
    let model = examples::oscillator_2d();
    let set = HarmonicSet::odd(3).unwrap();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let at = rec.prepare(1.0, set.harmonics()).unwrap();
    let mut sys = EwrResidual::new(
        &at,
        set,
        64,
        FrictionLaw::Exact,
        ContactParams::of(&model.contacts),
    )
    .unwrap();
    let mut g = vec![0.0; sys.len()];
    assert!(sys.residual(&[0.0; 3], &mut g).is_err());
    let nan = vec![f64::NAN; sys.len()];
    let err = sys.residual(&nan, &mut g).unwrap_err();
    assert!(err.to_string().contains("contact 0"), "{err}");
}
