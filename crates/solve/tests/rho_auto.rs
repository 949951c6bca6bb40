//! `rho_auto` for constant-bound contacts: the E-WR scaling taken from the structure makes the
//! solve independent of the model's units, and still converges to the exact solution
//! (Den Hartog's stick-slip oscillator, digest `seeds-001-002.md` V8).

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::{Contacts, Model, ModelBuilder};
use ewr_solve::{
    Continuation, FrcSettings, NewtonOptions, PointSettings, PointSolution, frc, solve_point,
};

/// Den Hartog's oscillator (m = k = mu N = 1, force p0 sin(w t)) written in other units:
/// lengths times `a`, forces times `b` (mass and stiffness times `b / a`).
fn den_hartog(p0: f64, a: f64, b: f64, rho_auto: bool) -> Model {
    let mut m = ModelBuilder::new(1)
        .mass(0, b / a)
        .spring_to_ground(0, b / a)
        .contacts(Contacts::to_ground(1, vec![0], vec![b]))
        .force(0, 1, 0.0, p0 * b)
        .build()
        .unwrap();
    m.contacts.rho_auto = rho_auto;
    m
}

fn settings(set: HarmonicSet, max_iterations: usize) -> PointSettings {
    PointSettings {
        n_samples: default_samples(&set).max(1024),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            max_iterations,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: vec![0],
        retry_rho: false,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

fn solve(model: &Model, w: f64, set: HarmonicSet, max_iterations: usize) -> PointSolution {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    solve_point(
        &rec,
        &ContactParams::of(&model.contacts),
        w,
        &settings(set, max_iterations),
        None,
    )
    .unwrap()
}

#[test]
fn automatic_rho_is_unit_free_and_converges_to_den_hartog() {
    // (w, p0, exact max|x| k / p0), digest V8.
    let cases = [(2.0, 2.0, 0.2204793), (1.5, 2.0, 0.5537749)];
    let set = HarmonicSet::odd(81).unwrap();
    // Non-dimensional, then "micrometres and kN read as m and N" (lengths 1e-6, forces 1e3),
    // then the other way round.
    let units = [(1.0, 1.0), (1e-6, 1e3), (1e4, 1e-5)];
    for (w, p0, max_x) in cases {
        let reference = solve(&den_hartog(p0, 1.0, 1.0, true), w, set.clone(), 200);
        assert!(reference.status.converged());
        for (a, b) in units {
            let s = solve(&den_hartog(p0, a, b, true), w, set.clone(), 200);
            assert!(
                s.status.converged(),
                "units ({a}, {b}): {:?} {}",
                s.status,
                s.residual
            );
            // The same Newton path in any units, up to rounding at the law's kinks: about
            // the same iterations, and the same solution.
            let d = s.iterations.abs_diff(reference.iterations);
            assert!(
                d <= 3.max(reference.iterations / 10),
                "units ({a}, {b}): {} iterations, {} in model units",
                s.iterations,
                reference.iterations
            );
            let x = s.dofs.peak[0] / a / p0;
            let x_ref = reference.dofs.peak[0] / p0;
            assert!(
                (x - x_ref).abs() < 1e-7 * x_ref,
                "units ({a}, {b}): {x} {x_ref}"
            );
            for (r, r_ref) in s.friction.iter().zip(&reference.friction) {
                assert!((r / b - r_ref).abs() < 1e-7, "units ({a}, {b})");
            }
            // And it is Den Hartog's solution (friction is a square wave: error ~ 1 / H).
            assert!(
                (x - max_x).abs() < 2e-2 * max_x,
                "w {w} p0 {p0}: {x} vs {max_x}"
            );
        }
        // rho = 1 in the rescaled units is rho = 1e-9 in the original ones: the law's stick
        // branch nearly vanishes. Whatever it does, its Galerkin solution is the same problem:
        // when it converges, it agrees with the automatic one to the truncation level.
        let fixed = solve(&den_hartog(p0, 1e-6, 1e3, false), w, set.clone(), 200);
        eprintln!(
            "w {w} p0 {p0}: rho auto {} iterations, fixed rho = 1 in (1e-6, 1e3) units: {:?} after {}",
            reference.iterations, fixed.status, fixed.iterations
        );
        if fixed.status.converged() {
            let x = fixed.dofs.peak[0] / 1e-6 / p0;
            assert!(
                (x - max_x).abs() < 2e-2 * max_x,
                "fixed rho: {x} vs {max_x}"
            );
        }
    }
}

#[test]
fn arclength_fixes_the_automatic_rho_of_its_first_frequency() {
    // An arclength sweep in SI-like units with rho_auto keeps the rho of its first frequency;
    // each of its points equals a single-point solve with that frequency's own rho to the
    // truncation level (the zero set does not depend on rho).
    let model = den_hartog(2.0, 1e-6, 1e3, true);
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let point = settings(HarmonicSet::odd(63).unwrap(), 200);
    let s = FrcSettings {
        omega_start: 1.2,
        omega_end: 2.5,
        step: 0.05,
        min_step: 1e-4,
        max_step: 0.2,
        method: Continuation::Arclength,
        max_points: 2000,
        adaptive: None,
        keep_histories: false,
        point: point.clone(),
    };
    let arc = frc(&rec, &params, &s, &mut |_| true).unwrap();
    assert!(arc.len() > 5);
    for p in &arc {
        assert!(p.solution.status.converged());
        let w = p.solution.omega;
        let single = solve_point(&rec, &params, w, &point, None).unwrap();
        assert!(single.status.converged());
        let (a, b) = (p.solution.dofs.peak[0], single.dofs.peak[0]);
        assert!(
            (a - b).abs() < 1e-2 * b,
            "w {w}: arclength {a}, single point {b}"
        );
    }
}
