//! Exact periodic solutions of dry-friction oscillators (seed 001, digest
//! `seeds-001-002.md`, "Validation cases"): rigid 2-D Coulomb under circular forcing (V5-V7,
//! with the digest's corrected formula) and Den Hartog's 1-D solution (V8).

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::{Contacts, Model, ModelBuilder};
use ewr_solve::{NewtonOptions, PointSettings, PointSolution, solve_point};

fn solve(model: &Model, omega: f64, set: HarmonicSet) -> PointSolution {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let settings = PointSettings {
        n_samples: default_samples(&set).max(1024),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions::default(),
        ramp: true,
        monitor: (0..model.n_dofs()).collect(),
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    };
    let s = solve_point(
        &rec,
        &ContactParams::of(&model.contacts),
        omega,
        &settings,
        None,
    )
    .unwrap();
    assert!(s.status.converged(), "{:?} {}", s.status, s.residual);
    s
}

/// One mass in the plane on springs k, dampers c, rigid 2-D Coulomb contact r_y, circular
/// force p0 (cos, sin).
fn circular(m: f64, c: f64, k: f64, r_y: f64, p0: f64) -> Model {
    ModelBuilder::new(2)
        .mass(0, m)
        .mass(1, m)
        .spring_to_ground(0, k)
        .spring_to_ground(1, k)
        .damper_to_ground(0, c)
        .damper_to_ground(1, c)
        .contacts(Contacts::to_ground(2, vec![0, 1], vec![r_y]))
        .force(0, 1, p0, 0.0)
        .force(1, 1, 0.0, p0)
        .build()
        .unwrap()
}

/// Radius of the steady circular orbit.
fn radius(s: &PointSolution) -> f64 {
    s.dofs.norm_peak
}

#[test]
fn v5_rigid_circular_dimensional_case_matches_the_corrected_formula() {
    // 001 Fig. 11: m = 1000/(4 pi)^2, c = 10/pi, k = 1000, r_y = 30, p0 = 60, w = 8 pi.
    // Corrected x0 = 0.01704993 m (the paper's own formula (103) gives 0.0175829: erratum A).
    let pi = std::f64::consts::PI;
    let model = circular(1000.0 / (4.0 * pi).powi(2), 10.0 / pi, 1000.0, 30.0, 60.0);
    for set in [HarmonicSet::odd(1).unwrap(), HarmonicSet::odd(9).unwrap()] {
        let s = solve(&model, 8.0 * pi, set);
        let x0 = radius(&s);
        assert!(
            (x0 - 0.01704993).abs() < 1e-6 * 0.01704993 + 1e-10,
            "x0 = {x0}"
        );
        // Pure sliding on the circle: never stuck, friction magnitude constant.
        let c = &s.contacts[0];
        assert!(c.stick_intervals.is_empty());
        assert!((c.force_amplitude - 30.0).abs() < 1e-9 * 30.0, "{c:?}");
    }
}

#[test]
fn v6_v7_nondimensional_rigid_circles() {
    // m = k = r_y = 1, p0 = r_f, w = r_w, c = 2 zeta; x_hat = x0 k / p0.
    let cases = [
        // (zeta, r_f, r_w, x_hat)
        (0.0, 2.0, 2.0, 0.2886751),
        (0.0, 5.0, 2.0, 0.3265986),
        (0.05, 2.0, 2.0, 0.277186),
        (0.05, 5.0, 0.5, 1.285922),
        (0.05, 5.0, 1.2, 2.036056),
        (0.05, 10.0, 2.0, 0.328723),
        (0.05, 5.0, 3.0, 0.121456),
    ];
    for (zeta, r_f, r_w, x_hat) in cases {
        let model = circular(1.0, 2.0 * zeta, 1.0, 1.0, r_f);
        let s = solve(&model, r_w, HarmonicSet::odd(5).unwrap());
        let got = radius(&s) / r_f;
        // The digest prints 6 to 7 significant digits.
        assert!(
            (got - x_hat).abs() < 2e-6 * x_hat.max(1.0),
            "zeta {zeta} r_f {r_f} r_w {r_w}: {got} vs {x_hat}"
        );
    }
}

/// Den Hartog's oscillator: m = k = 1, no damping, 1-D Coulomb f = 1, force p0 sin(w t).
fn den_hartog(p0: f64) -> Model {
    ModelBuilder::new(1)
        .mass(0, 1.0)
        .spring_to_ground(0, 1.0)
        .contacts(Contacts::to_ground(1, vec![0], vec![1.0]))
        .force(0, 1, 0.0, p0)
        .build()
        .unwrap()
}

#[test]
fn v8_den_hartog_harmonics_converge_to_the_exact_solution() {
    // (w, p0) -> exact max|x| k/p0, H1 and H3 amplitudes / p0 (digest V8).
    let cases = [
        (2.0, 2.0, 0.2204793, 0.22369, 0.00606),
        (1.5, 2.0, 0.5537749, 0.55794, 0.01102),
        (3.0, 2.0, 0.0797856, 0.08150, 0.00265),
        (2.0, 5.0, 0.3179797, 0.31834, 0.00243),
    ];
    for (w, p0, max_x, h1, h3) in cases {
        let model = den_hartog(p0);
        let mut errors = Vec::new();
        for h_max in [3, 9, 27, 81] {
            let s = solve(&model, w, HarmonicSet::odd(h_max).unwrap());
            let c = &s.dofs.coeffs;
            let amp = |p: usize| c[p].hypot(c[p + 1]) / p0;
            errors.push(((s.dofs.peak[0] / p0 - max_x).abs(), amp(0), amp(2)));
        }
        // Peak displacement approaches the exact one as harmonics are added.
        let e: Vec<f64> = errors.iter().map(|x| x.0).collect();
        assert!(
            e.windows(2).all(|p| p[1] <= p[0] + 1e-9),
            "w {w} p0 {p0}: {e:?}"
        );
        // The friction force is a square wave, so the error falls like 1 / H.
        assert!(e[3] < 2e-2 * max_x, "w {w} p0 {p0}: {e:?}");
        // The first and third harmonic amplitudes approach the exact solution's, at the same
        // 1 / H rate (a Galerkin solution is not the truncated exact series).
        let d1: Vec<f64> = errors.iter().map(|x| (x.1 - h1).abs()).collect();
        let d3: Vec<f64> = errors.iter().map(|x| (x.2 - h3).abs()).collect();
        assert!(
            d1.windows(2).all(|p| p[1] < p[0]),
            "w {w} p0 {p0}: H1 errors {d1:?}"
        );
        assert!(d1[3] < 2e-2 * h1, "w {w} p0 {p0}: H1 errors {d1:?}");
        assert!(d3[3] < 0.1 * h3, "w {w} p0 {p0}: H3 errors {d3:?}");
    }
}
