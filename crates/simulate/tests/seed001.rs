//! Seed 001 (Liu et al., JSV 2003): exact circular periodic solutions of a mass with 2-D
//! friction, elastic (Jenkins) and rigid support. References and errata:
//! `shared/notes/seeds-001-002.md`, "Validation cases we can use" V1, V2, V4, V5.
//!
//! Backward Euler is first order, so each case runs at `dt` and `dt / 2`: the error at `dt`
//! must be of the size expected from first order, and the Richardson extrapolation
//! `2 x(dt/2) - x(dt)` must match the exact value much more closely.

mod common;

use common::*;

/// Checks amplitude and phase of `x1` (DOF 0) against the exact circle, at two steps:
/// at `dt` within `tol_dt` (relative amplitude, phase in rad), extrapolated within
/// `tol_extrapolated`.
fn check_circle(
    name: &str,
    model: &ewr_model::Model,
    omega: f64,
    dt: f64,
    (x0, phi): (f64, f64),
    (tol_dt, tol_extrapolated): (f64, f64),
) -> Vec<ewr_simulate::Simulation> {
    let sims: Vec<_> = [dt, dt / 2.0]
        .iter()
        .map(|&h| run(model, omega, h, &[0, 1], |o| o.max_periods = 3000))
        .collect();
    let mut amp = Vec::new();
    let mut ph = Vec::new();
    for s in &sims {
        assert!(
            s.converged,
            "{name}: not converged in {} periods",
            s.periods_run
        );
        let x1 = s.dof_history(0).unwrap();
        let x2 = s.dof_history(1).unwrap();
        let (a, p) = amplitude_phase(&x1);
        // x2 = x0 sin(wt - phi): the orbit is a circle.
        let (a2, b2) = harmonic(&x2, 1);
        assert!((b2 - a * p.cos()).abs() < 1e-2 * a && (a2 + a * p.sin()).abs() < 1e-2 * a);
        amp.push(a);
        ph.push(p);
    }
    let (ea, ep) = (richardson(amp[0], amp[1]), richardson(ph[0], ph[1]));
    println!(
        "{name}: x0 = {:.8e} (dt) {:.8e} (dt/2) {ea:.8e} (extrapolated), exact {x0:.8e}, \
         rel. errors {:.1e} {:.1e} {:.1e}; phi = {:.6} {:.6} {ep:.6}, exact {phi:.6}; periods {} {}",
        amp[0],
        amp[1],
        (amp[0] - x0).abs() / x0,
        (amp[1] - x0).abs() / x0,
        (ea - x0).abs() / x0,
        ph[0],
        ph[1],
        sims[0].periods_run,
        sims[1].periods_run
    );
    assert!(
        (amp[0] - x0).abs() < tol_dt * x0,
        "{name}: x0 {} vs {x0}",
        amp[0]
    );
    assert!(
        (ph[0] - phi).abs() < tol_dt,
        "{name}: phi {} vs {phi}",
        ph[0]
    );
    assert!(
        (ea - x0).abs() < tol_extrapolated * x0,
        "{name}: extrapolated x0 {ea} vs {x0}"
    );
    assert!(
        (ep - phi).abs() < tol_extrapolated,
        "{name}: extrapolated phi {ep} vs {phi}"
    );
    // First order: halving dt roughly halves the error.
    let (e1, e2) = ((amp[0] - x0).abs(), (amp[1] - x0).abs());
    assert!(
        e2 < 0.7 * e1 && e2 > 0.3 * e1,
        "{name}: errors {e1:e} {e2:e} are not first order"
    );
    sims
}

#[test]
fn v1_jenkins_fig8_data() {
    // m = k = k_d = r_y = 1, c = 0.04, p0 = 10, w = 2: x0 = 3.4059559, phi = 3.018441.
    let model = circular_jenkins(1.0, 0.04, 1.0, 1.0, 1.0, 10.0);
    let sims = check_circle("V1", &model, 2.0, 2e-3, (3.4059559, 3.018441), (1e-2, 1e-5));
    // Always sliding, the friction force on the circle |r| = r_y.
    for s in &sims {
        let c = &s.contact_summaries()[0];
        assert!(c.stick_intervals.is_empty(), "{:?}", c.stick_intervals);
        assert!(c.max_coulomb_violation < 1e-12);
        assert!((c.force_amplitude - 1.0).abs() < 1e-12);
    }
}

#[test]
fn v2_jenkins_case2_dimensional() {
    // kN, m, s: m = 22500/pi^2, c = 600/pi, k = 1e4, k_d = 5e4, r_y = 50, p0 = 500, w = 4 pi.
    let pi = std::f64::consts::PI;
    let model = circular_jenkins(22500.0 / (pi * pi), 600.0 / pi, 1e4, 5e4, 50.0, 500.0);
    check_circle(
        "V2",
        &model,
        4.0 * pi,
        2.5e-4,
        (1.5178198e-3, 3.058985),
        (5e-3, 1e-5),
    );
}

#[test]
fn v4_sliding_threshold_stuck_and_sliding() {
    // m = k = r_y = 1, k_d = 0.1, c = 0.1, w = 1 (r_k = 10, r_w = 1, zeta = 0.05).
    // r_f = 2 slides on x^0 = 1.2393137 (x0 = x^0 r_y / k_d), phi = atan2 form of (82).
    let slide = circular_jenkins(1.0, 0.1, 1.0, 0.1, 1.0, 2.0);
    // At resonance the amplitude is set by damping, and backward Euler adds about
    // w dt / 2 = 5e-4 to zeta = 0.05: a 1 % error at dt, removed by extrapolation.
    let sims = check_circle(
        "V4 r_f=2",
        &slide,
        1.0,
        1e-3,
        (12.393137, 1.155513),
        (1e-2, 1e-4),
    );
    assert!(sims[1].contact_summaries()[0].stick_intervals.is_empty());
    // r_f = 1.3 < r_f* = sqrt(2): fully stuck, linear response with stiffness k + k_d:
    // x0 = 1.3 / |k + k_d - m w^2 + i c w| = 9.1924 (x^0 = 0.91924), phi = atan2(c w, k_d).
    let stuck = circular_jenkins(1.0, 0.1, 1.0, 0.1, 1.0, 1.3);
    let mut res = Vec::new();
    for dt in [1e-3, 5e-4] {
        let s = run(&stuck, 1.0, dt, &[0, 1], |o| o.max_periods = 3000);
        assert!(s.converged);
        let c = &s.contact_summaries()[0];
        assert_eq!(c.stick_fraction, 1.0, "{c:?}");
        res.push(amplitude_phase(&s.dof_history(0).unwrap()));
    }
    let (x0, phi) = (
        richardson(res[0].0, res[1].0),
        richardson(res[0].1, res[1].1),
    );
    println!(
        "V4 r_f=1.3: x0 = {:.6} (dt) {x0:.6} (extrapolated), exact 9.192388; phi = {:.6} \
         {phi:.6}, exact 0.785398",
        res[0].0, res[0].1
    );
    assert!((res[0].0 - 9.192388).abs() < 1e-2 * 9.192388);
    assert!((x0 - 9.192388).abs() < 1e-4 * 9.192388);
    assert!((phi - std::f64::consts::FRAC_PI_4).abs() < 1e-4);
}

#[test]
fn v5_rigid_fig11_corrected() {
    // m = 1000/(4 pi)^2, c = 10/pi, k = 1000, r_y = 30, p0 = 60, w = 8 pi: corrected
    // x0 = 0.01704993 (the paper's formula (103) gives 0.0175829, erratum A), phi = 2.591539.
    let pi = std::f64::consts::PI;
    let model = circular(1000.0 / (16.0 * pi * pi), 10.0 / pi, 1000.0, 30.0, 60.0);
    let sims = check_circle(
        "V5",
        &model,
        8.0 * pi,
        1e-4,
        (0.01704993, 2.591539),
        (5e-3, 1e-5),
    );
    let c = &sims[1].contact_summaries()[0];
    assert!(c.stick_intervals.is_empty() && c.max_coulomb_violation < 1e-12);
}
