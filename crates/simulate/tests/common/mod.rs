//! Shared helpers of the validation tests: model builders for the seed papers and Fourier
//! coefficients of sampled periodic signals.
#![allow(dead_code)]

use ewr_model::{Contacts, Model, ModelBuilder};
use ewr_simulate::{Options, Simulation, simulate};

/// Seed 001: one mass in the plane, spring `k` and damper `c` to ground in both directions,
/// circular force `p0 (cos wt, sin wt)`, 2-D friction `r_y` (rigid contact to ground).
pub fn circular(m: f64, c: f64, k: f64, r_y: f64, p0: f64) -> Model {
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
        .expect("valid model")
}

/// Seed 001 with elastic support: the contact of [`circular`] behind a Jenkins spring `k_d`.
pub fn circular_jenkins(m: f64, c: f64, k: f64, k_d: f64, r_y: f64, p0: f64) -> Model {
    ewr_simulate::with_jenkins(&circular(m, c, k, r_y, p0), &[k_d]).expect("valid Jenkins model")
}

/// Cosine and sine coefficients `(a_h, b_h)` of `x(t) = sum a_h cos(h w t) + b_h sin(h w t)`
/// from uniform samples over one period.
pub fn harmonic(x: &[f64], h: usize) -> (f64, f64) {
    let n = x.len() as f64;
    let (mut a, mut b) = (0.0, 0.0);
    for (j, &xj) in x.iter().enumerate() {
        let ph = std::f64::consts::TAU * (h * j) as f64 / n;
        a += xj * ph.cos();
        b += xj * ph.sin();
    }
    let s = if h == 0 { 1.0 / n } else { 2.0 / n };
    (s * a, s * b)
}

/// Amplitude and phase lag `phi` of harmonic 1 (`x = x0 cos(w t - phi)`).
pub fn amplitude_phase(x: &[f64]) -> (f64, f64) {
    let (a, b) = harmonic(x, 1);
    (a.hypot(b), b.atan2(a))
}

/// Runs to steady state with time step `dt`, recording `dofs`.
pub fn run(
    model: &Model,
    omega: f64,
    dt: f64,
    dofs: &[usize],
    tweak: impl Fn(&mut Options),
) -> Simulation {
    let mut o = Options::new(omega);
    o.dt = Some(dt);
    o.record_dofs = dofs.to_vec();
    tweak(&mut o);
    simulate(model, &o, &mut |_| {}).expect("simulation runs")
}

/// First-order Richardson extrapolation from step `h` and `h / 2`.
pub fn richardson(coarse: f64, fine: f64) -> f64 {
    2.0 * fine - coarse
}
