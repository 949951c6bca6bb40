//! Nonlinear modes by the extended periodic motion concept (docs/nonlinear-modes.md) against
//! the closed forms of their two linear limits: at small amplitude the structure with its
//! contacts stuck, at large amplitude the structure without friction.

mod common;

use ewr_contact::ContactParams;
use ewr_model::Model;
use ewr_solve::PointSettings;
use ewr_solve::nonlinear_mode::backbone;

/// The shared settings without the ramp (the backbone starts from its own state).
fn settings(set: &str) -> PointSettings {
    PointSettings {
        ramp: false,
        ..common::exact_settings(set)
    }
}

/// Frequencies, damping ratios and shapes of the modes of `M u'' + C u' + K u = 0` on
/// `dofs`, from the matrices alone (undamped modes, modal damping `phi^T C phi / 2 w`).
fn linear_modes(model: &Model, dofs: &[usize]) -> Vec<(f64, f64, Vec<f64>)> {
    let n = dofs.len();
    let pick = |a: &ewr_model::SparseMatrix| {
        let d = a.to_dense();
        faer::Mat::from_fn(n, n, |i, j| d[(dofs[i], dofs[j])])
    };
    let (k, m, c) = (
        pick(&model.stiffness),
        pick(&model.mass),
        pick(&model.viscous_damping()),
    );
    // Lumped unit masses in these examples: K phi = w^2 phi.
    for i in 0..n {
        assert_eq!(m[(i, i)], 1.0);
    }
    let evd = k.self_adjoint_eigen(faer::Side::Lower).unwrap();
    (0..n)
        .map(|j| {
            let w = evd.S()[j].sqrt();
            let phi = evd.U().col(j).to_owned();
            let cm = (phi.transpose() * &c * &phi) / (phi.transpose() * &phi);
            (w, cm / (2.0 * w), phi.iter().copied().collect())
        })
        .collect()
}

#[test]
fn two_mass_damper_goes_from_the_stuck_to_the_free_mode_with_a_damping_maximum() {
    let model = ewr_model::examples::two_mass_damper(1.0);
    let params = ContactParams::of(&model.contacts);
    let amps: Vec<f64> = (0..=24)
        .map(|i| 10f64.powf(-1.0 + 5.0 * i as f64 / 24.0))
        .collect();
    let pts = backbone(&model, &params, &settings("odd:31"), 1, &amps, &mut |p| {
        println!(
            "a = {:.4e}: w = {:.6}, zeta = {:.6}, {} iterations{}",
            p.amplitude,
            p.omega,
            p.damping_ratio,
            p.iterations,
            if p.converged { "" } else { " NOT CONVERGED" }
        );
        true
    })
    .unwrap();
    assert!(pts.iter().all(|p| p.converged));
    // Stuck: mass 2 held, mass 1 in direction 1 on springs 1 + 1, dampers 0.02 + 0.02.
    let (w_stuck, z_stuck) = (2f64.sqrt(), 0.04 / (2.0 * 2f64.sqrt()));
    let first = &pts[0];
    assert!(
        (first.omega - w_stuck).abs() < 1e-4 * w_stuck,
        "{}",
        first.omega
    );
    assert!(
        (first.damping_ratio - z_stuck).abs() < 1e-3 * z_stuck,
        "{}",
        first.damping_ratio
    );
    // Free: direction 1 of both masses (DOFs 0 and 2). The stuck mode moves mass 1 alone; it
    // ends on the free mode where mass 1 leads (1.618, the damper out of phase at -0.618),
    // not on the one the damper leads (0.618), which has no stuck counterpart: the
    // constrained frequency 1.414 lies between the two.
    let modes = linear_modes(&model, &[0, 2]);
    let (w_free, z_free, shape) = modes
        .iter()
        .max_by(|a, b| a.2[0].abs().total_cmp(&b.2[0].abs()))
        .unwrap()
        .clone();
    let last = pts.last().unwrap();
    assert!(
        (last.omega - w_free).abs() < 1e-4 * w_free,
        "{} against {w_free}",
        last.omega
    );
    assert!(
        (last.damping_ratio - z_free).abs() < 0.02 * z_free,
        "{} against {z_free}",
        last.damping_ratio
    );
    let ratio = last.shape[2].re / last.shape[0].re;
    let want = shape[1] / shape[0];
    assert!(
        (ratio - want).abs() < 1e-3,
        "damper/blade {ratio} against {want}"
    );
    // Friction damping peaks in between, well above both linear limits.
    let (imax, peak) = pts
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.damping_ratio.total_cmp(&b.1.damping_ratio))
        .map(|(i, p)| (i, p.damping_ratio))
        .unwrap();
    assert!(
        imax > 0 && imax + 1 < pts.len(),
        "maximum at the end of the range"
    );
    assert!(peak > 4.0 * z_stuck.max(z_free), "{peak}");
    // The frequency goes monotonically from stuck to free: up here, as the slipping damper
    // swings out of phase with the blade and stretches their spring more.
    assert!(pts.windows(2).all(|w| w[1].omega >= w[0].omega - 1e-9));
}

/// The forced response's largest first harmonic at `dof` over `w0..w1` (fine fixed steps).
fn frc_peak(
    model: &Model,
    s: &PointSettings,
    dof: usize,
    (w0, w1, step): (f64, f64, f64),
) -> (f64, f64) {
    use ewr_solve::{Amplitude, Continuation, FrcSettings, frc};
    let rec = ewr_hb::Receptance::new(model, ewr_hb::ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let mut point = s.clone();
    point.monitor = vec![dof];
    point.amplitude = Amplitude::H1;
    let f = FrcSettings {
        omega_start: w0,
        omega_end: w1,
        step,
        min_step: step / 64.0,
        max_step: step,
        method: Continuation::Sequential,
        point,
        max_points: 2000,
        adaptive: None,
        keep_histories: false,
    };
    let curve = frc(&rec, &params, &f, &mut |_| true).unwrap();
    assert!(curve.iter().all(|p| p.solution.status.converged()));
    curve
        .iter()
        .map(|p| (p.solution.omega, p.solution.dofs.peak[0]))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap()
}

#[test]
fn one_mode_synthesis_gives_the_forced_peak_of_an_isolated_mode() {
    // Seed 003's 1-D two-DOF system: one stuck mode (1.414), friction 9 against a force 20.
    let model = ewr_model::examples::two_dof_1d();
    let params = ContactParams::of(&model.contacts);
    let s = settings("odd:31");
    let amps: Vec<f64> = (0..=40)
        .map(|i| 10f64.powf(-1.0 + 4.0 * i as f64 / 40.0))
        .collect();
    let pts = backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap();
    assert!(pts.iter().all(|p| p.converged));
    let syn = ewr_solve::nonlinear_mode::synthesise(&model, &pts);
    let (a, w, dofs) = syn.peak.expect("the resonance is within the amplitudes");
    let (w_frc, a_frc) = frc_peak(&model, &s, 0, (1.4, 1.8, 0.001));
    println!(
        "synthesis: a = {a:.4e} at w = {w:.4}, DOF 0 {:.4e}; frc {a_frc:.4e} at {w_frc:.4}",
        dofs[0]
    );
    assert!(
        (dofs[0] - a_frc).abs() < 0.02 * a_frc,
        "{} against {a_frc}",
        dofs[0]
    );
    assert!((w - w_frc).abs() < 0.01 * w_frc, "{w} against {w_frc}");
}

#[test]
fn blade_damper_blade_3d_starts_at_the_stuck_structure_and_its_close_modes_share_the_peak() {
    let model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:15");
    s.newton.tol_residual = 1e-9;
    let amps: Vec<f64> = (0..=32)
        .map(|i| 10f64.powf(-6.0 + 4.0 * i as f64 / 32.0))
        .collect();
    let pts = backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap();
    assert!(pts.iter().all(|p| p.converged));
    // Small amplitude: the structure with its contacts stuck (contact stiffnesses k_t, k_n).
    let stuck =
        ewr_hb::modes::natural_frequencies(&model.stuck_default().unwrap().unwrap()).unwrap();
    assert!(
        (pts[0].omega - stuck[0]).abs() < 1e-4 * stuck[0],
        "{} against {}",
        pts[0].omega,
        stuck[0]
    );
    // The two blades' in- and out-of-phase modes are 4 % apart (1280, 1328 stuck): the force
    // on one blade drives both, and one mode carries about half of the forced peak.
    let syn = ewr_solve::nonlinear_mode::synthesise(&model, &pts);
    let (_, _, dofs) = syn.peak.expect("the resonance is within the amplitudes");
    let (_, a_frc) = frc_peak(&model, &s, 1, (1200.0, 1280.0, 0.5));
    let share = dofs[1] / a_frc;
    println!("one mode gives {share:.3} of the forced peak");
    assert!(share > 0.3 && share < 0.7, "{share}");
}

/// Seed 004's comparison of the three backbones at their small-excitation limit on its lumped
/// blade-damper-blade (digest V5, beta = 1.5e-5, force on the left platform x2): the true
/// peak of the driven DOF at 203.440 Hz, the phase resonance (quadrature) at 204.259 Hz, on
/// the unexcited blade's peak, and the damped nonlinear mode at 203.763 Hz between them.
#[test]
fn seed_004_peak_phase_resonance_and_nonlinear_mode_at_small_excitation() {
    use ewr_solve::{Amplitude, Continuation, FrcSettings, frc, phase_resonances, refine_peaks};
    let hz = |w: f64| w / std::f64::consts::TAU;
    let mut model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    // A thousandth of the force: every contact stuck, the linear limit of the backbones.
    let forced: Vec<usize> = model
        .forcing
        .iter()
        .filter(|t| t.harmonic == 1)
        .map(|t| t.dof)
        .collect();
    assert_eq!(forced, vec![1]);
    for t in model.forcing.iter_mut().filter(|t| t.harmonic == 1) {
        t.cos *= 1e-3;
        t.sin *= 1e-3;
    }
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:3");
    s.newton.tol_residual = 1e-9;
    let modes = backbone(&model, &params, &s, 1, &[1e-7], &mut |_| true).unwrap();
    let dnnm = hz(modes[0].omega);
    let rec = ewr_hb::Receptance::new(&model, ewr_hb::ReceptanceKind::Dense).unwrap();
    let mut point = s.clone();
    point.monitor = vec![1];
    point.amplitude = Amplitude::H1;
    let f = FrcSettings {
        omega_start: 1270.0,
        omega_end: 1290.0,
        step: 0.25,
        min_step: 0.25 / 64.0,
        max_step: 0.25,
        method: Continuation::Sequential,
        point: point.clone(),
        max_points: 1000,
        adaptive: None,
        keep_histories: false,
    };
    let pts = frc(&rec, &params, &f, &mut |_| true).unwrap();
    let peak = refine_peaks(&rec, &params, &point, &pts).unwrap();
    let force = model
        .forcing
        .iter()
        .find(|t| t.harmonic == 1)
        .map(|t| (t.cos, t.sin))
        .unwrap();
    let phase = phase_resonances(&rec, &params, &point, &pts, 1, force).unwrap();
    let peak = hz(peak[0].omega);
    let quad = hz(phase[0].omega);
    println!("peak {peak:.3} Hz, phase resonance {quad:.3} Hz, nonlinear mode {dnnm:.3} Hz");
    assert!((peak - 203.440).abs() < 0.005, "{peak}");
    assert!((quad - 204.259).abs() < 0.005, "{quad}");
    assert!((dnnm - 203.763).abs() < 0.005, "{dnnm}");
}

#[test]
fn a_mode_s_motion_balances_the_energy_its_negative_damping_puts_in() {
    // Over one period of the autonomous motion `M u'' + (C - xi M) u' + K u = W^T r`, the
    // work of `(C - xi M)` equals that of the friction forces (`K`, `M` and static loads do
    // none): checks every stored harmonic of every DOF against the forces and `xi`, with the
    // model's own matrices (no receptance), on stuck, partly slipping and slipping points.
    let model = ewr_model::examples::two_mass_damper(1.0);
    let params = ContactParams::of(&model.contacts);
    let s = settings("odd:15");
    let pts = backbone(
        &model,
        &params,
        &s,
        1,
        &[0.5, 3.0, 10.0, 100.0],
        &mut |_| true,
    )
    .unwrap();
    let n = model.n_dofs();
    let (c, m) = (model.viscous_damping().to_dense(), model.mass.to_dense());
    let w_map = model.contacts.w_matrix(n).unwrap().to_dense();
    let rows = w_map.nrows();
    let mut third_share = Vec::new();
    for p in &pts {
        assert!(p.converged);
        let nco = p.set.n_coeffs();
        assert_eq!(p.displacement.len(), n * nco);
        let (mut structure, mut friction, mut first, mut third) = (0.0, 0.0, 0.0, 0.0);
        for &h in p.set.harmonics().iter().filter(|&&h| h > 0) {
            let k = p.set.coeff_index(h).unwrap();
            let u: Vec<faer::c64> = (0..n)
                .map(|i| {
                    faer::c64::new(
                        p.displacement[i * nco + k],
                        -p.displacement[i * nco + k + 1],
                    )
                })
                .collect();
            let hw = h as f64 * p.omega;
            for i in 0..n {
                for j in 0..n {
                    let a = c[(i, j)] - p.xi * m[(i, j)];
                    structure += hw * hw * (u[i].conj() * u[j]).re * a;
                }
            }
            for r in 0..rows {
                let wu: faer::c64 = (0..n).map(|i| u[i] * w_map[(r, i)]).sum();
                let v = faer::c64::new(0.0, hw) * wu;
                let rh = faer::c64::new(p.friction[r * nco + k], -p.friction[r * nco + k + 1]);
                friction += (v.conj() * rh).re;
            }
            let size: f64 = u.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
            if h == 1 {
                first = size;
                // The fundamental is the shape reported beside it.
                for (ui, qi) in u.iter().zip(&p.shape) {
                    assert!((ui - qi).norm() < 1e-9 * size, "{ui} {qi}");
                }
            } else if h == 3 {
                third = size;
            }
        }
        assert!(
            (structure - friction).abs() < 1e-6 * structure.abs().max(1e-300),
            "a = {}: (C - xi M) work {structure:e}, friction work {friction:e}",
            p.amplitude
        );
        third_share.push(third / first);
    }
    // Stuck, the motion is the linear mode's: no third harmonic; slipping, there is one.
    assert!(third_share[0] < 1e-8, "{third_share:?}");
    assert!(
        third_share.iter().skip(1).any(|&s| s > 1e-3),
        "{third_share:?}"
    );
}

#[test]
fn a_lightly_damped_mode_is_followed_through_the_onset_of_slip() {
    // blade-damper-blade-3d at seed 004's lightest damping (beta = 3e-6): from the stuck
    // state, Newton on all:15 did not converge at any amplitude through the onset of slip
    // (12 in a row, intermediate amplitudes included); the harmonic ramp at each amplitude
    // carries it there. The damping it finds is the truncated problem's, close to all:7's.
    let mut p = ewr_model::examples::BladeDamperBlade3d::default();
    p.base.beta = 3e-6;
    let model = ewr_model::examples::blade_damper_blade_3d(&p);
    let params = ContactParams::of(&model.contacts);
    let amps = [1e-4, 1.259e-4, 1.585e-4, 1.995e-4, 2.512e-4];
    let mut s = settings("all:15");
    s.newton.tol_residual = 1e-9;
    let fine = backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap();
    let mut s7 = settings("all:7");
    s7.newton.tol_residual = 1e-9;
    let coarse = backbone(&model, &params, &s7, 1, &amps, &mut |_| true).unwrap();
    let stuck = fine[0].damping_ratio;
    for (f, c) in fine.iter().zip(&coarse).skip(1) {
        assert!(f.converged && c.converged, "a = {}", f.amplitude);
        assert!(
            f.damping_ratio > 2.0 * stuck,
            "a = {}: {}",
            f.amplitude,
            f.damping_ratio
        );
        assert!(
            (f.damping_ratio - c.damping_ratio).abs() < 0.25 * c.damping_ratio,
            "a = {}: all:15 {} against all:7 {}",
            f.amplitude,
            f.damping_ratio,
            c.damping_ratio
        );
        assert!((f.omega - c.omega).abs() < 2e-3 * c.omega);
    }
}

#[test]
fn coarse_amplitude_steps_are_subdivided_through_the_onset_of_slip() {
    // blade-damper-blade-3d, 10 amplitudes over four decades (a step of 2.8 times) on all:7:
    // near the onset of slip (a = 1.2e-4) every grid of 2 to 16 intermediate amplitudes had
    // one that failed, and 3 of the 10 were reported not converged, where 100 amplitudes all
    // converge. The steps in amplitude that adapt from the last one reached carry it through.
    let model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:7");
    s.newton.tol_residual = 1e-9;
    let amps: Vec<f64> = (0..10)
        .map(|i| 10f64.powf(-6.0 + 4.0 * i as f64 / 9.0))
        .collect();
    let pts = backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap();
    let failed: Vec<f64> = pts
        .iter()
        .filter(|p| !p.converged)
        .map(|p| p.amplitude)
        .collect();
    assert!(failed.is_empty(), "not converged at {failed:?}");
    // The same backbone as on a fine grid: the frequency and the modal damping at 1e-2.
    let fine: Vec<f64> = (0..=40)
        .map(|i| 10f64.powf(-6.0 + 4.0 * i as f64 / 40.0))
        .collect();
    let reference = backbone(&model, &params, &s, 1, &fine, &mut |_| true).unwrap();
    let (p, q) = (pts.last().unwrap(), reference.last().unwrap());
    assert!(q.converged);
    assert!(
        (p.omega - q.omega).abs() < 1e-6 * q.omega,
        "{} {}",
        p.omega,
        q.omega
    );
    assert!(
        (p.damping_ratio - q.damping_ratio).abs() < 1e-4 * q.damping_ratio,
        "{} {}",
        p.damping_ratio,
        q.damping_ratio
    );
}

/// The free motion of single-contact-3d's mass normal to its contact, in closed form: with
/// `xi M` cancelling its damping `0.01 M`, `z'' + 3 z + 100 min(z, 0) = -20` (unit mass,
/// spring 3, contact stiffness 100 behind a rigid ground, static load 20; the tangential
/// DOFs stay at rest). Started at `z = 0` with speed `v0`, it rings about `-20/103` at
/// `sqrt 103` while pressed and flies about `-20/3` at `sqrt 3` while lifted off. Returns
/// the frequency and the amplitude of the fundamental (midpoint rule; `z` is `C^1`).
fn bilinear_orbit(v0: f64) -> (f64, f64) {
    let (wc, wf) = (103f64.sqrt(), 3f64.sqrt());
    let (zs, zo): (f64, f64) = (-20.0 / 103.0, -20.0 / 3.0);
    let a = zs.hypot(v0 / wc);
    let b = zo.hypot(v0 / wf);
    // The angles of the pressed phase's cosine at lift-off, and the flight's half angle.
    let th = (-zs / a).clamp(-1.0, 1.0).acos();
    let (tc, tf) = (
        (2.0 * std::f64::consts::PI - 2.0 * th) / wc,
        2.0 * (-zo / b).clamp(-1.0, 1.0).acos() / wf,
    );
    let t_period = tc + tf;
    let w = 2.0 * std::f64::consts::PI / t_period;
    let n = 20_000;
    let (mut re, mut im) = (0.0, 0.0);
    for k in 0..n {
        // The flight centred on t = 0, then the pressed phase.
        let t = (k as f64 + 0.5) / n as f64 * t_period - tf / 2.0;
        let z = if t < tf / 2.0 {
            zo + b * (wf * t).cos()
        } else {
            zs + a * (th + wc * (t - tf / 2.0)).cos()
        };
        re += z * (w * t).cos();
        im -= z * (w * t).sin();
    }
    (w, 2.0 * re.hypot(im) / n as f64)
}

/// The frequency of [`bilinear_orbit`] whose fundamental has amplitude `a` (above lift-off,
/// `a > 20/103`), by bisection on the speed at `z = 0`.
fn bilinear_frequency(a: f64) -> f64 {
    let (mut lo, mut hi) = (1e-9f64, 1e4f64);
    for _ in 0..80 {
        let mid = (lo * hi).sqrt();
        if bilinear_orbit(mid).1 < a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    bilinear_orbit((lo * hi).sqrt()).0
}

/// single-contact-3d's first mode is its mass ringing on the contact's normal stiffness: below
/// lift-off the linear stuck structure, above it the bilinear oscillator whose frequency falls
/// from `sqrt 103` towards `sqrt 3`. Both limits and the whole branch between against the
/// closed form, and a damping that stays the structure's own: the contact stores energy and
/// gives it back. Before the scalings were fixed per backbone (docs/nonlinear-modes.md,
/// pitfall 6), every amplitude below lift-off failed to converge.
#[test]
fn single_contact_3d_rings_on_its_contact_as_the_bilinear_oscillator() {
    let model = ewr_model::examples::single_contact_3d();
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:31");
    s.newton.tol_residual = 1e-9;
    let amps: Vec<f64> = (0..=16)
        .map(|i| 10f64.powf(-3.0 + 4.0 * i as f64 / 16.0))
        .collect();
    let pts = backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap();
    let lift_off = 20.0 / 103.0;
    for p in &pts {
        let exact = if p.amplitude < lift_off {
            103f64.sqrt()
        } else {
            bilinear_frequency(p.amplitude)
        };
        println!(
            "a = {:.4e}: w = {:.7} (closed form {exact:.7}), xi = {:.8}, {}",
            p.amplitude,
            p.omega,
            p.xi,
            if p.converged {
                "converged"
            } else {
                "NOT converged"
            }
        );
        assert!(p.converged, "a = {}", p.amplitude);
        // all:31 truncates the contact force's kinks at lift-off: 3.3e-5 at most measured.
        let tol = if p.amplitude < lift_off { 1e-6 } else { 1e-4 };
        assert!(
            (p.omega - exact).abs() < tol * exact,
            "a = {}: {} against {exact}",
            p.amplitude,
            p.omega
        );
        assert!((p.xi - 0.01).abs() < 1e-5 * 0.01, "xi = {}", p.xi);
    }
    assert!(pts.iter().filter(|p| p.amplitude > lift_off).count() >= 6);
}

/// A backbone asked to start beyond the onset of slip (blade-damper-blade-3d from `a = 1e-3`,
/// where its contacts slip over much of the period) follows the mode there from the stuck
/// state below, and finds the points a backbone from the stuck limit passes through. Started
/// from the stuck mode scaled to `1e-3` itself, its first amplitude failed to converge (and
/// reported a negative damping ratio).
#[test]
fn a_backbone_that_starts_beyond_the_onset_of_slip_finds_the_same_mode() {
    let model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:15");
    s.newton.tol_residual = 1e-9;
    let grid = |from: f64, n: usize| -> Vec<f64> {
        (0..n)
            .map(|i| 10f64.powf(from + (-2.0 - from) * i as f64 / (n - 1) as f64))
            .collect()
    };
    // 1e-7 .. 1e-2 by 1/8 of a decade holds 1e-3 .. 1e-2 by the same steps.
    let full = backbone(&model, &params, &s, 1, &grid(-7.0, 41), &mut |_| true).unwrap();
    let late = backbone(&model, &params, &s, 1, &grid(-3.0, 9), &mut |_| true).unwrap();
    for p in &late {
        let q = full
            .iter()
            .find(|q| (q.amplitude / p.amplitude - 1.0).abs() < 1e-9)
            .expect("the same amplitude on the full backbone");
        println!(
            "a = {:.4e}: w = {:.6} / {:.6}, zeta = {:.6} / {:.6}",
            p.amplitude, p.omega, q.omega, p.damping_ratio, q.damping_ratio
        );
        assert!(p.converged && q.converged, "a = {}", p.amplitude);
        assert!((p.omega - q.omega).abs() < 1e-8 * q.omega);
        assert!((p.damping_ratio - q.damping_ratio).abs() < 1e-6 * q.damping_ratio);
    }
}

/// The nonlinear mode of a unit mass on a unit spring with Coulomb friction `mu N` (seed
/// 000's oscillator-2d along its first direction: `k = 1`, `c = 0.01`, `mu N = 8`), in closed
/// form. With `delta = xi - c`, the motion between reversals is the growing spiral of
/// `z'' - delta z' + z = -/+ mu N` about `-/+ mu N`: reversals every `pi / w_d`, `w_d =
/// sqrt(1 - delta^2 / 4)`, and a periodic orbit of peak `A = mu N coth(q / 2)`, `q = delta pi /
/// (2 w_d)`. Returns the frequency and damping ratio whose orbit's fundamental is `a`
/// (bisection on `delta`; the fundamental by the midpoint rule over the first half period).
fn coulomb_mode(a: f64) -> (f64, f64) {
    let (mu_n, c) = (8.0f64, 0.01f64);
    let fundamental = |d: f64| -> (f64, f64) {
        let w = (1.0 - d * d / 4.0).sqrt();
        let q = d * std::f64::consts::PI / (2.0 * w);
        let peak = mu_n * (q.exp() + 1.0) / (q.exp() - 1.0);
        let half = std::f64::consts::PI / w;
        let n = 20_000;
        let (mut re, mut im) = (0.0, 0.0);
        for k in 0..n {
            let t = (k as f64 + 0.5) / n as f64 * half;
            let z = -mu_n
                + (mu_n - peak)
                    * (d * t / 2.0).exp()
                    * ((w * t).cos() - d / (2.0 * w) * (w * t).sin());
            re += z * (w * t).cos();
            im -= z * (w * t).sin();
        }
        // The second half is the first's negative: the fundamental is twice the half's.
        (w, 4.0 / (2.0 * half) * re.hypot(im) * half / n as f64)
    };
    let (mut lo, mut hi) = (1e-12, 2.0 - 1e-12);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if fundamental(mid).1 > a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let d = 0.5 * (lo + hi);
    let w = fundamental(d).0;
    (w, (c + d) / (2.0 * w))
}

/// A rigid friction contact has no stuck free motion: oscillator-2d's mass moves only where
/// its peak exceeds `mu N / k = 8`, and then slips all period. There the backbone against the
/// closed form ([`coulomb_mode`]); below it no amplitude is a point of the backbone. Before
/// the check of [`ewr_solve::nonlinear_mode::is_oscillation`], `a = 1` and `3.16` "converged"
/// to damping ratios of 186 and 61, which started the next amplitudes, and every amplitude
/// from 10 to 1e4 failed (7 of 9).
#[test]
fn a_mass_on_a_rigid_friction_contact_has_the_closed_form_coulomb_mode() {
    let model = ewr_model::examples::oscillator_2d();
    let params = ContactParams::of(&model.contacts);
    let amps = [1.0, 3.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0];
    let pts = backbone(&model, &params, &settings("odd:63"), 1, &amps, &mut |_| {
        true
    })
    .unwrap();
    for p in &pts {
        println!(
            "a = {:.4e}: w = {:.6}, zeta = {:.6}, converged {}, no oscillation {}",
            p.amplitude, p.omega, p.damping_ratio, p.converged, p.no_oscillation
        );
        if p.amplitude < 8.0 {
            assert!(!p.converged, "a = {}", p.amplitude);
            continue;
        }
        let (w, zeta) = coulomb_mode(p.amplitude);
        println!("  closed form: w = {w:.6}, zeta = {zeta:.6}");
        assert!(p.converged, "a = {}", p.amplitude);
        // odd:63 truncates the square wave of the friction force: 9.6e-4 in w and 1.6e-3 in
        // zeta measured at a = 30, falling as the amplitude grows.
        assert!((p.omega - w).abs() < 1.5e-3 * w, "a = {}", p.amplitude);
        assert!(
            (p.damping_ratio - zeta).abs() < 5e-3 * zeta,
            "a = {}",
            p.amplitude
        );
    }
}

/// Far into gross slip blade-damper-blade-3d's contacts do not fade: their normal forces are
/// the preload plus `k_n` times the normal motion, so the friction bound grows with the
/// amplitude and the system tends to one homogeneous of degree one (no preload), whose mode
/// does not depend on the amplitude. The preload's share falls as `1 / a`: each half decade
/// of amplitude divides what is left of `w` and `zeta`'s drift by `sqrt 10`. Up to `a = 1e4`,
/// eight decades above the onset of slip, every amplitude converges; before the friction rows
/// were scaled by the slip velocity (docs/nonlinear-modes.md, pitfall 8), `a = 10` stalled at
/// the rounding floor of `1 / F^2`, and before the finite differences followed the distance
/// to the resonance (pitfall 9), `a = 316` failed.
#[test]
fn a_3d_contact_mode_in_gross_slip_tends_to_its_homogeneous_limit_as_one_over_a() {
    let model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:15");
    s.newton.tol_residual = 1e-9;
    let amps: Vec<f64> = (0..=20)
        .map(|i| 10f64.powf(-6.0 + 10.0 * i as f64 / 20.0))
        .collect();
    let pts = backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap();
    for p in &pts {
        println!(
            "a = {:.3e}: w = {:.9}, zeta = {:.9e}, converged {}",
            p.amplitude, p.omega, p.damping_ratio, p.converged
        );
        assert!(p.converged, "a = {}", p.amplitude);
    }
    // From a = 0.1 on: successive changes shrink by sqrt 10 per half decade.
    let tail: Vec<&ewr_solve::nonlinear_mode::ModePoint> =
        pts.iter().filter(|p| p.amplitude >= 0.099).collect();
    assert!(tail.len() >= 5);
    for f in [
        |p: &ewr_solve::nonlinear_mode::ModePoint| p.omega,
        |p: &ewr_solve::nonlinear_mode::ModePoint| p.damping_ratio,
    ] {
        let d: Vec<f64> = tail.windows(2).map(|w| f(w[0]) - f(w[1])).collect();
        for pair in d.windows(2) {
            let ratio = pair[0] / pair[1];
            println!("ratio of successive changes {ratio:.4}");
            assert!((ratio / 10f64.sqrt() - 1.0).abs() < 0.02, "{ratio}");
        }
    }
}

/// The modal path of a backbone (modes extracted once, `-xi` on each modal damping) against
/// the dense one (a dense receptance of `K - h^2 w^2 M + i h w (C - xi M)` at every
/// evaluation): with every mode retained nothing is left to the residual flexibility, and
/// the two must agree through the onset of slip to the solver's tolerance.
#[test]
fn the_modal_backbone_equals_the_dense_one_with_every_mode() {
    use ewr_hb::receptance::ReceptanceKind;
    use ewr_solve::nonlinear_mode::backbone_with;
    let model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    let params = ContactParams::of(&model.contacts);
    let mut s = settings("all:7");
    s.newton.tol_residual = 1e-10;
    let amps: Vec<f64> = (0..=12)
        .map(|i| 10f64.powf(-6.0 + 4.0 * i as f64 / 12.0))
        .collect();
    let modes = model.n_dofs();
    let dense = backbone_with(
        &model,
        &params,
        &s,
        1,
        &amps,
        ReceptanceKind::Dense,
        &mut |_| true,
    )
    .unwrap();
    let modal = backbone_with(
        &model,
        &params,
        &s,
        1,
        &amps,
        ReceptanceKind::Modal { modes },
        &mut |_| true,
    )
    .unwrap();
    // One mode asked: doubled until the highest reaches 7 w0 / 0.25, which is beyond this
    // structure's highest mode, so every mode is kept, and so are the bits.
    let doubled = backbone_with(
        &model,
        &params,
        &s,
        1,
        &amps,
        ReceptanceKind::Modal { modes: 1 },
        &mut |_| true,
    )
    .unwrap();
    for (m, d) in modal.iter().zip(&doubled) {
        assert_eq!((m.omega, m.damping_ratio), (d.omega, d.damping_ratio));
    }
    for (d, m) in dense.iter().zip(&modal) {
        println!(
            "a = {:.3e}: w = {:.9} / {:.9}, zeta = {:.9e} / {:.9e}",
            d.amplitude, d.omega, m.omega, d.damping_ratio, m.damping_ratio
        );
        assert!(d.converged && m.converged, "a = {}", d.amplitude);
        assert!(
            (d.omega - m.omega).abs() < 1e-8 * d.omega,
            "a = {}",
            d.amplitude
        );
        assert!(
            (d.damping_ratio - m.damping_ratio).abs() < 1e-6 * d.damping_ratio,
            "a = {}",
            d.amplitude
        );
    }
}

/// The shipped CalculiX blade (570 DOFs, two tip-shroud friction contacts, Rayleigh damping)
/// is above the dense path's size: its backbone condenses by all its modes. It starts at the
/// structure with its shrouds stuck and ends at the structure without friction (its second
/// mode, 8066.05 rad/s: the shrouds' first mode in the stuck structure is the blade's second
/// with its tip held), every amplitude converged. Before, `ewr modes` refused the model.
#[test]
fn the_calculix_blade_s_mode_goes_from_its_stuck_to_its_free_structure() {
    let path = format!("{}/../../models/blade-ccx.h5", env!("CARGO_MANIFEST_DIR"));
    let model = ewr_model::read(std::path::Path::new(&path)).unwrap().model;
    let params = ContactParams::of(&model.contacts);
    let amps: Vec<f64> = (0..=8)
        .map(|i| 10f64.powf(-7.0 + 5.0 * i as f64 / 8.0))
        .collect();
    let pts = backbone(&model, &params, &settings("odd:7"), 1, &amps, &mut |_| true).unwrap();
    let stuck =
        ewr_hb::modes::natural_frequencies(&model.stuck_default().unwrap().unwrap()).unwrap();
    let free = ewr_hb::modes::natural_frequencies(&model).unwrap();
    for p in &pts {
        println!(
            "a = {:.3e}: w = {:.4}, zeta = {:.4e}, converged {}",
            p.amplitude, p.omega, p.damping_ratio, p.converged
        );
        assert!(p.converged, "a = {}", p.amplitude);
    }
    let (first, last) = (&pts[0], pts.last().unwrap());
    println!("stuck {:.4}, free {:.4}", stuck[0], free[1]);
    // The stuck structure holds its rigid shroud rows by penalty springs: 8e-7 below the
    // rigid stick the backbone holds exactly.
    assert!((first.omega - stuck[0]).abs() < 1e-5 * stuck[0]);
    assert!((last.omega - free[1]).abs() < 1e-5 * free[1]);
}

/// Modal damping ratios (`/damping/zeta`) live only in the modal receptance. Before, a model
/// with them and at most 500 DOFs went to the dense receptance, which cannot represent them,
/// and `ewr modes` failed. Now such a model is condensed by its modes, and its backbone is
/// that of the same structure with the viscous matrix those ratios stand for, `C = M Psi
/// diag(2 zeta_r omega_r) Psi^T M` (here `M = I`, the modes `Psi` from faer's eigensolver)
/// given explicitly and condensed densely. Both ends against their closed forms: stuck, the
/// blade mass alone on `k = 2` with damping `C_00 / (2 sqrt 2)`; far into slip, the free
/// structure's mode at the golden ratio with its own ratio.
#[test]
fn modal_damping_ratios_give_the_backbone_of_the_viscous_matrix_they_stand_for() {
    let viscous = ewr_model::examples::two_mass_damper(1.0);
    let n = viscous.n_dofs();
    let k = viscous.stiffness.to_dense();
    let evd = k.self_adjoint_eigen(faer::Side::Lower).unwrap();
    let zeta = [0.01, 0.02, 0.03, 0.04];
    let omega: Vec<f64> = (0..n).map(|r| evd.S()[r].sqrt()).collect();
    let c = faer::Mat::from_fn(n, n, |i, j| {
        (0..n)
            .map(|r| 2.0 * zeta[r] * omega[r] * evd.U()[(i, r)] * evd.U()[(j, r)])
            .sum::<f64>()
    });
    let mut explicit = viscous.clone();
    let trips: Vec<faer::sparse::Triplet<usize, usize, f64>> = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| faer::sparse::Triplet::new(i, j, c[(i, j)]))
        .collect();
    explicit.damping_matrix =
        Some(ewr_model::SparseMatrix::try_new_from_triplets(n, n, &trips).unwrap());
    let mut ratios = viscous.clone();
    ratios.damping_matrix = None;
    ratios.damping.modal_zeta = Some(zeta.to_vec());
    let params = ContactParams::of(&viscous.contacts);
    let amps: Vec<f64> = (0..=12)
        .map(|i| 10f64.powf(-1.0 + 5.0 * i as f64 / 12.0))
        .collect();
    let run = |m: &Model| backbone(m, &params, &settings("odd:31"), 1, &amps, &mut |_| true);
    let by_ratios = run(&ratios).expect("a model with modal damping ratios has its backbone");
    let by_matrix = run(&explicit).unwrap();
    for (p, q) in by_ratios.iter().zip(&by_matrix) {
        println!(
            "a = {:.3e}: w = {:.8} / {:.8}, zeta = {:.8} / {:.8}",
            p.amplitude, p.omega, q.omega, p.damping_ratio, q.damping_ratio
        );
        assert!(p.converged && q.converged, "a = {}", p.amplitude);
        assert!(
            (p.omega - q.omega).abs() < 1e-7 * q.omega,
            "a = {}",
            p.amplitude
        );
        assert!(
            (p.damping_ratio - q.damping_ratio).abs() < 1e-6 * q.damping_ratio,
            "a = {}",
            p.amplitude
        );
    }
    let (first, last) = (&by_ratios[0], &by_ratios[12]);
    assert!((first.omega - 2f64.sqrt()).abs() < 1e-5, "{}", first.omega);
    let stuck_zeta = c[(0, 0)] / (2.0 * 2f64.sqrt());
    assert!(
        (first.damping_ratio - stuck_zeta).abs() < 1e-4 * stuck_zeta,
        "{} against {stuck_zeta}",
        first.damping_ratio
    );
    // The blade-leading free mode is the third (0.618, 0.874, 1.618, 2.288); at a = 1e4
    // friction adds about mu N / a to its ratio.
    let golden = (1.0 + 5f64.sqrt()) / 2.0;
    assert!((omega[2] - golden).abs() < 1e-12);
    assert!(
        (last.omega - golden).abs() < 1e-4 * golden,
        "{}",
        last.omega
    );
    assert!(
        (last.damping_ratio - zeta[2]).abs() < 0.05 * zeta[2],
        "{}",
        last.damping_ratio
    );
}

/// Far into gross slip a constant-bound contact's friction force stays bounded while the
/// motion grows, so blade-damper-blade's mode tends to the free structure's (contacts
/// removed), the friction's share of the damping falling as `1 / a` (Coulomb's equivalent
/// damping: `4 mu N X` a cycle against an energy of order `a^2`). The free structure's mode
/// comes from `K phi = w^2 M phi` of the model's own matrices and its damping from `phi^T C
/// phi / 2 w` (first order: `C` is not proportional, the contact's normal springs are
/// undamped), and exactly from the free structure's own EPMC (the `xi` that puts an eigenvalue
/// of its state matrix on the imaginary axis). There `(w, xi)` lies within about `1 / a` of
/// that resonance (relative): before the finite differences' step followed it
/// (docs/nonlinear-modes.md, pitfall 9), the step of `1e-7` crossed it from `a` = 316, Newton
/// stalled at residuals of 0.5-1, and from `a` = 31.6 every amplitude was "not converged" at
/// the rounding floor.
#[test]
fn far_into_gross_slip_the_mode_is_the_free_structure_s_with_friction_damping_as_one_over_a() {
    let model = ewr_model::examples::blade_damper_blade(&Default::default());
    let params = ContactParams::of(&model.contacts);
    let amps: Vec<f64> = (0..=12)
        .map(|i| 10f64.powf(-2.0 + 0.5 * i as f64))
        .collect();
    let pts = backbone(&model, &params, &settings("odd:15"), 1, &amps, &mut |_| {
        true
    })
    .unwrap();
    for p in &pts {
        println!(
            "a = {:.3e}: w = {:.9}, zeta = {:.9e}, {} iterations, sensitivity {:.2e}",
            p.amplitude, p.omega, p.damping_ratio, p.iterations, p.sensitivity
        );
        assert!(p.converged, "a = {}", p.amplitude);
    }
    // The free structure (no contact forces). The shipped variant's sliders (the Jenkins
    // elements' massless DOFs) carry only their tangential springs, which then hold nothing:
    // condensed out, `K_mm - K_ms K_ss^{-1} K_sm`. Lumped masses: `M^{-1/2} K M^{-1/2}`.
    let (k, m, c) = (
        model.stiffness.to_dense(),
        model.mass.to_dense(),
        model.viscous_damping().to_dense(),
    );
    let all = model.n_dofs();
    let massive: Vec<usize> = (0..all).filter(|&i| m[(i, i)] > 0.0).collect();
    let massless: Vec<usize> = (0..all).filter(|&i| m[(i, i)] == 0.0).collect();
    let n = massive.len();
    let kss = faer::Mat::from_fn(massless.len(), massless.len(), |i, j| {
        k[(massless[i], massless[j])]
    });
    let ksm = faer::Mat::from_fn(massless.len(), n, |i, j| k[(massless[i], massive[j])]);
    let x = faer::prelude::Solve::solve(&kss.partial_piv_lu(), &ksm);
    let condensed = faer::Mat::from_fn(n, n, |i, j| {
        k[(massive[i], massive[j])]
            - (0..massless.len())
                .map(|l| k[(massive[i], massless[l])] * x[(l, j)])
                .sum::<f64>()
    });
    let s: Vec<f64> = massive.iter().map(|&i| 1.0 / m[(i, i)].sqrt()).collect();
    let a = faer::Mat::from_fn(n, n, |i, j| s[i] * condensed[(i, j)] * s[j]);
    let evd = a.self_adjoint_eigen(faer::Side::Lower).unwrap();
    let last = pts.last().unwrap();
    let r = (0..n)
        .min_by(|&i, &j| {
            (evd.S()[i].sqrt() - last.omega)
                .abs()
                .total_cmp(&(evd.S()[j].sqrt() - last.omega).abs())
        })
        .unwrap();
    let w_free = evd.S()[r].sqrt();
    let phi: Vec<f64> = (0..n).map(|i| s[i] * evd.U()[(i, r)]).collect();
    let mut cm = 0.0;
    for i in 0..n {
        for j in 0..n {
            cm += phi[i] * c[(massive[i], massive[j])] * phi[j];
        }
    }
    // The free structure's own EPMC: the `xi` at which the state matrix of `M q'' + (C - xi M)
    // q' + K q = 0` has an eigenvalue `i w` on the imaginary axis (`C` is not proportional,
    // so first order, `phi^T C phi / 2 w`, is off by about `zeta^2`). A secant on `xi`.
    for &i in &massless {
        assert!((0..all).all(|j| c[(i, j)] == 0.0), "a damped slider");
    }
    let root = |xi: f64| -> faer::c64 {
        let state = faer::Mat::from_fn(2 * n, 2 * n, |i, j| match (i < n, j < n) {
            (true, true) => 0.0,
            (true, false) => f64::from(u8::from(j - n == i)),
            (false, true) => -condensed[(i - n, j)] / m[(massive[i - n], massive[i - n])],
            (false, false) => {
                let (i, j) = (i - n, j - n);
                -(c[(massive[i], massive[j])]
                    - if i == j {
                        xi * m[(massive[i], massive[i])]
                    } else {
                        0.0
                    })
                    / m[(massive[i], massive[i])]
            }
        });
        state
            .eigenvalues()
            .unwrap()
            .into_iter()
            .min_by(|a, b| (a.im - w_free).abs().total_cmp(&(b.im - w_free).abs()))
            .unwrap()
    };
    let (mut x0, mut x1) = (cm, 1.01 * cm);
    let (mut f0, mut f1) = (root(x0).re, root(x1).re);
    for _ in 0..20 {
        if f1 == f0 || f1.abs() < 1e-13 * w_free {
            break;
        }
        let x2 = x1 - f1 * (x1 - x0) / (f1 - f0);
        (x0, f0, x1) = (x1, f1, x2);
        f1 = root(x1).re;
    }
    let w_epmc = root(x1).im;
    let zeta_free = x1 / (2.0 * w_epmc);
    println!(
        "free structure: undamped w = {w_free:.9}, first order zeta = {:.9e}; EPMC w = \
         {w_epmc:.9}, zeta = {zeta_free:.9e}",
        cm / (2.0 * w_free)
    );
    assert!(
        (last.omega - w_epmc).abs() < 1e-9 * w_epmc,
        "{} against {w_epmc}",
        last.omega
    );
    // The friction's share of zeta falls tenfold per decade of amplitude from a = 1.
    let zeta = |a: f64| {
        pts.iter()
            .find(|p| (p.amplitude / a - 1.0).abs() < 1e-9)
            .unwrap()
            .damping_ratio
    };
    for a in [1.0, 10.0, 100.0] {
        let ratio = (zeta(a) - zeta(10.0 * a)) / (zeta(10.0 * a) - zeta(100.0 * a));
        println!("a = {a}: decade ratio {ratio:.4}");
        assert!((ratio - 10.0).abs() < 0.05, "a = {a}: {ratio}");
    }
    let limit = zeta(1e4) - (zeta(1e3) - zeta(1e4)) / 9.0;
    println!("zeta extrapolated to infinite amplitude: {limit:.9e}");
    assert!(
        (limit - zeta_free).abs() < 1e-8 * zeta_free,
        "{limit} against {zeta_free}"
    );
}

/// Above 500 DOFs the stuck mode comes from a sparse Lanczos and the backbone condenses by as
/// many modes as cover its harmonics (docs/nonlinear-modes.md, pitfall 4). On the generated
/// FE sector (hex8, 2187 DOFs, 20 under-platform 3-D contacts, preloaded) the small-amplitude
/// backbone is the stuck structure's linear mode. Reference: a dense eigensolve of the stuck
/// structure (no Lanczos, no modal truncation, no condensation) and its modal damping `phi^T
/// C phi / 2 w` (first order: the contacts' springs are undamped, so `C` is not proportional
/// to the stuck stiffness). Before, every mode of the structure was extracted (23.8 s for 5
/// amplitudes from the CLI against 0.7 s now), and above 3000 DOFs the model was refused.
#[test]
fn an_fe_sector_s_truncated_backbone_starts_at_its_stuck_linear_mode() {
    use ewr_model::examples::{Sector, sector};
    let model = sector(&Sector {
        contacts: 20,
        contact_3d: true,
        ..Sector::default()
    });
    assert!(model.n_dofs() > 2000, "{}", model.n_dofs());
    let params = ContactParams::of(&model.contacts);
    let amps = [1e-9, 1e-8];
    let pts = backbone(&model, &params, &settings("all:3"), 1, &amps, &mut |_| true).unwrap();
    let stuck = model.stuck_default().unwrap().unwrap();
    let (w, phi) = ewr_hb::modes::natural_modes(&stuck.stiffness, &stuck.mass).unwrap();
    let shape: Vec<f64> = (0..phi.nrows()).map(|i| phi[(i, 0)]).collect();
    let c = model.viscous_damping();
    let c_modal: f64 = c
        .triplet_iter()
        .map(|t| shape[t.row] * t.val * shape[t.col])
        .sum();
    let zeta = c_modal / (2.0 * w[0]);
    for p in &pts {
        println!(
            "a = {:.1e}: w = {:.9} against {:.9}, zeta = {:.9e} against {zeta:.9e}",
            p.amplitude, p.omega, w[0], p.damping_ratio
        );
        assert!(p.converged);
        assert!((p.omega - w[0]).abs() < 1e-7 * w[0]);
        assert!((p.damping_ratio - zeta).abs() < 1e-6 * zeta);
    }
}

/// The bordered Newton steps may be matrix-free: GMRES on the contacts' Jacobian products,
/// the finite differences in `w` and `xi` and the normalisations' rows, preconditioned by
/// block elimination on the forced solves' preconditioner (docs/nonlinear-modes.md, section
/// 6). They solve the same equations as the dense steps, which the other tests validate: on
/// the generated FE sector (2187 DOFs, condensed by modes) with 20 3-D contacts (420 force
/// unknowns at all:3) and with 20 constant-bound ones, through the onset of slip, both to a
/// residual of 1e-13, the two backbones agree to rounding, and the matrix-free one did take
/// GMRES steps.
#[test]
fn matrix_free_bordered_steps_reach_the_dense_steps_backbone() {
    for contact_3d in [true, false] {
        matrix_free_against_dense(contact_3d);
    }
}

fn matrix_free_against_dense(contact_3d: bool) {
    use ewr_model::examples::{Sector, sector};
    use ewr_solve::newton::LinearSolve;
    let model = sector(&Sector {
        contacts: 20,
        contact_3d,
        ..Sector::default()
    });
    let params = ContactParams::of(&model.contacts);
    // 3-D: stuck at 1e-4, slipping from about 2e-4 (4113.8 rad/s and 0.51 % at 3.2e-4);
    // constant bounds: slipping from below 1e-4.
    let amps = [1e-4, 3.16e-4, 1e-3];
    let run = |linear: LinearSolve| {
        let mut s = settings(if contact_3d { "all:3" } else { "odd:7" });
        s.newton.linear = linear;
        s.newton.tol_residual = 1e-13;
        backbone(&model, &params, &s, 1, &amps, &mut |_| true).unwrap()
    };
    let (dense, free) = (run(LinearSolve::Dense), run(LinearSolve::MatrixFree));
    for (d, f) in dense.iter().zip(&free) {
        println!(
            "3-D {contact_3d}, a = {:.2e}: w {:.12} / {:.12}, zeta {:.12e} / {:.12e}, GMRES {} / {}",
            d.amplitude,
            d.omega,
            f.omega,
            d.damping_ratio,
            f.damping_ratio,
            d.krylov_iterations,
            f.krylov_iterations
        );
        assert!(d.converged && f.converged);
        assert_eq!(d.krylov_iterations, 0);
        assert!((d.omega - f.omega).abs() < 1e-11 * d.omega);
        assert!((d.damping_ratio - f.damping_ratio).abs() < 1e-9 * d.damping_ratio);
    }
    // The slipping amplitudes move the forces, so their Newton steps are GMRES solves.
    assert!(free[1..].iter().all(|p| p.krylov_iterations > 0));
    // Slip has lowered the frequency: the amplitudes span the onset of slip.
    assert!(dense[1].omega < dense[0].omega * (1.0 - 1e-4));
}
