//! Seed 000 (Pierre & Legrand, JSD 2025) periodic solutions: the stick intervals the paper
//! quotes in its text, for the one-mass oscillator with 2-D friction.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::{Model, examples};
use ewr_solve::{NewtonOptions, PointSettings, PointSolution, solve_point};

fn solve(omega: f64, h_max: usize) -> PointSolution {
    solve_model(&examples::oscillator_2d(), omega, h_max, 1.0, true)
}

fn solve_model(
    model: &Model,
    omega: f64,
    h_max: usize,
    rho: f64,
    retry_rho: bool,
) -> PointSolution {
    let model = model.clone();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let set = HarmonicSet::odd(h_max).unwrap();
    let settings = PointSettings {
        n_samples: default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        // Table 1 of the paper needs up to 790 iterations at rho = 1e-3.
        newton: NewtonOptions {
            max_iterations: 1000,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: (0..model.n_dofs()).collect(),
        retry_rho,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    };
    let mut p = ContactParams::of(&model.contacts);
    p.rho.iter_mut().for_each(|r| *r = rho);
    let s = solve_point(&rec, &p, omega, &settings, None).unwrap();
    assert!(
        s.status.converged(),
        "w {omega} rho {rho}: {:?} residual {}",
        s.status,
        s.residual
    );
    s
}

/// The interval of `s` that starts nearest to `t0` on the circle of one period, shifted by
/// whole periods to start within half a period of `t0`.
fn near(s: &PointSolution, t0: f64) -> [f64; 2] {
    let period = std::f64::consts::TAU / s.omega;
    let shift = |t: f64| t - period * ((t - t0) / period).round();
    let iv = s.contacts[0]
        .stick_intervals
        .iter()
        .min_by(|a, b| {
            (shift(a[0]) - t0)
                .abs()
                .total_cmp(&(shift(b[0]) - t0).abs())
        })
        .expect("some stick interval");
    let d = shift(iv[0]) - iv[0];
    [iv[0] + d, iv[1] + d]
}

#[test]
fn fig7_w017_sticks_twice_per_period_as_quoted() {
    // "stuck for approximately the first 9.1 seconds of the period ... Another sticking phase
    // is seen from t = 18.4 s to 27.5 s" (N_phi = 160). Odd harmonics make the two phases
    // half a period apart; we check both against the quoted times to 0.3 s.
    let s = solve(0.17, 159);
    let iv = &s.contacts[0].stick_intervals;
    let long: Vec<_> = iv.iter().filter(|i| i[1] - i[0] > 1.0).collect();
    assert_eq!(long.len(), 2, "{iv:?}");
    let b = near(&s, 18.4);
    assert!(
        (b[0] - 18.4).abs() < 0.3 && (b[1] - 27.5).abs() < 0.3,
        "{iv:?}"
    );
    let a = near(&s, 0.0);
    assert!(a[0].abs() < 0.3 && (a[1] - 9.1).abs() < 0.3, "{iv:?}");
    assert!(
        s.contacts[0].max_coulomb_violation < 0.05,
        "{:?}",
        s.contacts[0]
    );
}

#[test]
fn fig6_w1_slides_all_the_time_on_the_circle() {
    let s = solve(1.0, 39);
    let c = &s.contacts[0];
    assert!(c.stick_intervals.is_empty(), "{:?}", c.stick_intervals);
    assert!(c.max_coulomb_violation < 1e-3, "{c:?}");
    assert!((c.force_amplitude - 8.0).abs() < 1e-2, "{c:?}");
}

#[test]
fn fig8_w01_has_two_long_and_two_brief_stick_phases() {
    // "two long lasting ones from t = 0 to 16 s and t = 31 to 47.7 s, and two brief ones from
    // t = 26.1 to 27 s and from t = 57.5 to 58.5 s" (N_phi = 160).
    let s = solve(0.1, 159);
    let iv = &s.contacts[0].stick_intervals;
    assert_eq!(iv.len(), 4, "{iv:?}");
    for (t0, t1) in [(0.0, 16.0), (31.0, 47.7), (26.1, 27.0), (57.5, 58.5)] {
        let a = near(&s, t0);
        assert!(
            (a[0] - t0).abs() < 0.4 && (a[1] - t1).abs() < 0.4,
            "[{t0}, {t1}] vs {a:?} in {iv:?}"
        );
    }
}

#[test]
fn fig9_phase_shifted_forcing_never_sticks() {
    // f1 = 10 cos(w t), f2 = 10 sin(w t) at w = 0.1: "the mass slides during the entire
    // period".
    let mut m = examples::oscillator_2d();
    m.forcing[1].cos = 0.0;
    m.forcing[1].sin = 10.0;
    let s = solve_model(&m, 0.1, 159, 1.0, true);
    assert!(s.status.converged());
    assert!(
        s.contacts[0].stick_intervals.is_empty(),
        "{:?}",
        s.contacts[0].stick_intervals
    );
}

#[test]
fn two_mass_damper_fig_22_and_pure_sliding_at_0618() {
    // Seed 000 sec. 5.2: w = 0.303 stuck on about [0.8, 3.1] and [11.1, 13.5] s.
    let m = examples::two_mass_damper(1.0);
    let s = solve_model(&m, 0.303, 159, 1.0, true);
    assert!(s.status.converged());
    for (t0, t1) in [(0.8, 3.1), (11.1, 13.5)] {
        let a = near(&s, t0);
        assert!(
            (a[0] - t0).abs() < 0.3 && (a[1] - t1).abs() < 0.3,
            "[{t0}, {t1}] vs {:?}",
            s.contacts[0].stick_intervals
        );
    }
    let s = solve_model(&m, 0.618, 79, 1.0, true);
    assert!(s.status.converged());
    assert!(
        s.contacts[0].stick_intervals.is_empty(),
        "{:?}",
        s.contacts[0].stick_intervals
    );
}

#[test]
fn massless_damper_converges() {
    // Seed 000 Fig. 23: m2 = 0.
    let m = examples::two_mass_damper(0.0);
    for w in [0.303, 0.618, 1.2] {
        let s = solve_model(&m, w, 79, 1.0, true);
        assert!(s.status.converged(), "w {w}: {:?}", s.status);
        assert!(
            s.contacts[0].max_coulomb_violation < 0.1,
            "{:?}",
            s.contacts[0]
        );
    }
}

#[test]
fn table1_converges_for_rho_from_1e_3_to_1e2() {
    // Seed 000 Table 1 case (f2 = 10 cos 3wt, w = 0.1, mu N = 8), with N_phi = 60 to keep
    // the debug-build test short. rho = 1e-3 .. 10 converge on their own; rho = 100 stalls in
    // a local minimum from our ramp and is rescued by the rho retry, after which the final
    // solve with rho = 100 itself converges (rho_factor = 1). The pointwise law's zero set
    // does not depend on rho, but its Galerkin projection on a finite harmonic set does,
    // slightly: the solutions agree to the truncation error.
    let mut m = examples::oscillator_2d();
    m.forcing[1].harmonic = 3;
    let reference = solve_model(&m, 0.1, 59, 1.0, false);
    assert!(reference.status.converged());
    for rho in [1e-3, 1e-2, 1e-1, 10.0, 100.0] {
        let s = solve_model(&m, 0.1, 59, rho, rho == 100.0);
        assert_eq!(s.rho_factor, 1.0, "rho {rho}");
        assert!(
            s.status.converged(),
            "rho {rho}: {:?} {}",
            s.status,
            s.residual
        );
        for (a, b) in s.dofs.peak.iter().zip(&reference.dofs.peak) {
            assert!(
                (a - b).abs() < 1e-2 * b,
                "rho {rho}: peak {a} vs {b} at rho = 1"
            );
        }
    }
}

#[test]
fn coulomb_violation_decreases_with_harmonics() {
    let v: Vec<f64> = [39, 79, 159]
        .iter()
        .map(|&h| solve(0.17, h).contacts[0].max_coulomb_violation)
        .collect();
    // The smoothed measure (docs/results-format.md) is not monotone between neighbouring
    // sets (0.011, 0.013, 0.0045): it converges, and the richest set is well below 1 %.
    println!("violations at odd:39, 79, 159: {v:?}");
    assert!(v[2] < v[0].min(v[1]) && v[2] < 0.01, "{v:?}");
}

#[test]
fn fig21_multiharmonic_forcing_sticks_six_times() {
    // Two-mass damper, w = 0.115, f11 = 20 cos wt, f12 = 20 cos 3wt: "six sticking phases per
    // cycle" (paper with N_phi = 1800; the count is already right with 400).
    let mut m = examples::two_mass_damper(1.0);
    m.forcing[1].harmonic = 3;
    let s = solve_model(&m, 0.115, 399, 1.0, true);
    let iv = &s.contacts[0].stick_intervals;
    assert_eq!(iv.len(), 6, "{iv:?}");
}
