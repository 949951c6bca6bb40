//! 3-D contacts on whole models: the constant-normal-load limit equals today's contacts.

use ewr_contact::{CondensedContacts, ContactParams, FrictionLaw};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_model::{Contacts, Kinematics, Model, ModelBuilder, NormalContacts, examples};
use ewr_solve::newton::NewtonOptions;
use ewr_solve::{PointSettings, Preconditioner, solve_point};

fn settings(set: &str) -> PointSettings {
    let set: HarmonicSet = set.parse().unwrap();
    PointSettings {
        n_samples: ewr_hb::default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            tol_residual: 1e-12,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: vec![0, 1],
        retry_rho: true,
        preconditioner: Preconditioner::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

/// Seed 000's oscillator with a third DOF `z` (mass 1, spring 3) pressed against the ground
/// by a static force `f0`: a rigid unilateral contact on `z` whose friction coefficient is
/// `mu`. Rigid and decoupled from the tangential DOFs, it keeps `lambda = f0` at all times,
/// so the friction bound is the constant `mu f0`.
fn pressed_oscillator(mu: f64, f0: f64) -> Model {
    let mut contacts = Contacts::to_ground(2, vec![0, 1], vec![0.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Dofs {
            dofs: vec![2],
            other: None,
        },
        g0: vec![0.0],
        mu: vec![mu],
        k_n: None,
        load: None,
    });
    ModelBuilder::new(3)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .mass(2, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 2.0)
        .spring_to_ground(2, 3.0)
        .damper_to_ground(0, 0.01)
        .damper_to_ground(1, 0.01)
        .damper_to_ground(2, 0.01)
        .contacts(contacts)
        .force(0, 1, 10.0, 0.0)
        .force(1, 1, 10.0, 0.0)
        .force(2, 0, -f0, 0.0)
        .build()
        .unwrap()
}

/// Solves the 3-D model `m3` (one contact, normal force `f0`, bound `mu f0`) and the
/// constant-bound oscillator_2d (`mu_n = 8 = mu f0`) below resonance (stick-slip), near it
/// (slip) and far above (stuck), and asserts the same friction coefficients and peaks to
/// round-off, and a normal force that stays `f0`.
fn assert_equals_the_constant_bound_oscillator(m3: &Model, f0: f64) {
    let m2 = examples::oscillator_2d();
    let r3 = Receptance::new(m3, ReceptanceKind::Dense).unwrap();
    let r2 = Receptance::new(&m2, ReceptanceKind::Dense).unwrap();
    let (p3, p2) = (
        ContactParams::of(&m3.contacts),
        ContactParams::of(&m2.contacts),
    );
    let bound = m2.contacts.mu_n[0];
    let s = settings("all:15");
    let nco = s.set.n_coeffs();
    for omega in [0.6, 1.2, 3.0] {
        // The Galerkin solution depends on rho through the truncation error only, so the
        // constant-bound contact is given the tangential rho the 3-D contact chooses.
        let at = r3.prepare(omega, s.set.harmonics()).unwrap();
        let cond = CondensedContacts::from_receptance(&at, &s.set).unwrap();
        let mut p2 = p2.clone();
        p2.rho = ewr_solve::unilateral::auto_params(&p3, &cond).rho_t;
        let a = solve_point(&r3, &p3, omega, &s, None).unwrap();
        let b = solve_point(&r2, &p2, omega, &s, None).unwrap();
        assert!(a.status.converged() && b.status.converged());
        let worst = (0..2 * nco)
            .map(|i| (a.friction[i] - b.friction[i]).abs())
            .fold(0.0, f64::max);
        let p0 = s.set.coeff_index(0).unwrap();
        let lambda = &a.friction[2 * nco..3 * nco];
        let dynamic = (0..nco)
            .filter(|&i| i != p0)
            .map(|i| lambda[i].abs())
            .fold(0.0, f64::max);
        println!(
            "w = {omega}: |R_3d - R_2d| = {worst:.1e}, lambda mean {:.12}, dynamic {dynamic:.1e}, peak {} vs {}",
            lambda[p0], a.dofs.norm_peak, b.dofs.norm_peak
        );
        assert!(worst < 1e-7 * bound, "w = {omega}: {worst}");
        assert!((lambda[p0] - f0).abs() < 1e-9 * f0);
        assert!(dynamic < 1e-9 * f0);
        assert!((a.dofs.norm_peak - b.dofs.norm_peak).abs() < 1e-8 * b.dofs.norm_peak);
        assert!(a.contacts[0].separation_intervals.is_empty());
    }
}

#[test]
fn constant_normal_load_limit_equals_the_constant_bound_contact() {
    let (mu, f0) = (0.4, 20.0);
    assert_eq!(examples::oscillator_2d().contacts.mu_n, vec![mu * f0]);
    assert_equals_the_constant_bound_oscillator(&pressed_oscillator(mu, f0), f0);
}

#[test]
fn a_contact_with_a_fixed_normal_load_is_the_constant_bound_contact() {
    // Seed 000's oscillator as a 3-D model whose only contact has no normal direction but a
    // fixed normal force 20 and mu = 0.4: the friction law with the bound mu N = 8.
    let mut m3 = examples::oscillator_2d();
    m3.contacts.mu_n = vec![0.0];
    m3.contacts.normal = Some(NormalContacts {
        // Not used: a contact with a fixed load has no normal direction.
        kinematics: Kinematics::Dofs {
            dofs: vec![0],
            other: None,
        },
        g0: vec![-1.0],
        mu: vec![0.4],
        k_n: Some(vec![1.0]),
        load: Some(vec![20.0]),
    });
    assert!(!ewr_model::has_errors(&ewr_model::validate(&m3)));
    assert_equals_the_constant_bound_oscillator(&m3, 20.0);
}

#[test]
fn an_odd_harmonic_set_is_refused_with_a_hint() {
    let m3 = pressed_oscillator(0.4, 20.0);
    let r3 = Receptance::new(&m3, ReceptanceKind::Dense).unwrap();
    let p3 = ContactParams::of(&m3.contacts);
    let e = solve_point(&r3, &p3, 1.0, &settings("odd:7"), None).unwrap_err();
    assert!(e.to_string().contains("all:7"), "{e}");
}

#[test]
fn arclength_follows_the_3d_curve_through_a_contact_stuck_all_period() {
    // blade-damper-blade-3d from 1000 to 1600 rad/s: one damper face sticks all period over
    // about 1180-1195 rad/s, where no equation fixes its mean friction force and the
    // Jacobian is singular. The tangent of smallest norm keeps that force where it is, so
    // the curve goes on in w; the sequential sweep is the reference where both faces slip.
    use ewr_solve::{Continuation, FrcPoint, FrcSettings, frc};
    let model = examples::blade_damper_blade_3d(&Default::default());
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let mut point = settings("all:15");
    point.newton.tol_residual = 1e-10;
    point.monitor = (0..model.n_dofs()).collect();
    let sweep = |method, step: f64| {
        let s = FrcSettings {
            omega_start: 1000.0,
            omega_end: 1600.0,
            step,
            min_step: step / 64.0,
            max_step: step * 8.0,
            method,
            point: point.clone(),
            max_points: 20_000,
            adaptive: None,
            keep_histories: false,
        };
        frc(&rec, &params, &s, &mut |_| true).unwrap()
    };
    let arc = sweep(Continuation::Arclength, 1.2);
    let seq = sweep(Continuation::Sequential, 1.2);
    assert!(arc.iter().all(|p| p.solution.status.converged()));
    let ws: Vec<f64> = arc.iter().map(|p| p.solution.omega).collect();
    assert!(
        *ws.last().unwrap() >= 1600.0,
        "the curve was lost at {ws:?}"
    );
    assert!(ws.windows(2).all(|w| w[1] > w[0]), "no fold here: {ws:?}");
    let stuck = |p: &FrcPoint| p.solution.stick_fractions().iter().any(|f| *f > 0.95);
    assert!(
        arc.iter().any(stuck),
        "the example should stick all period somewhere"
    );
    // Where both faces slip, each arclength point is the solution the sequential sweep
    // continues to at that frequency.
    let mut compared = 0;
    for p in arc.iter().filter(|p| !stuck(p)) {
        let w = p.solution.omega;
        let near = seq
            .iter()
            .min_by(|a, b| {
                (a.solution.omega - w)
                    .abs()
                    .total_cmp(&(b.solution.omega - w).abs())
            })
            .unwrap();
        let again = solve_point(
            &rec,
            &params,
            w,
            &point,
            Some((&near.solution.set, &near.solution.friction)),
        )
        .unwrap();
        assert!(again.status.converged());
        let rel = (again.dofs.norm_peak / p.solution.dofs.norm_peak - 1.0).abs();
        assert!(rel < 1e-6, "w = {w}: {rel}");
        compared += 1;
    }
    assert!(compared > 20, "{compared}");
}
