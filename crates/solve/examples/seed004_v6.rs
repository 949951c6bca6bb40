//! Seed 004's comparison of three resonance backbones on its lumped blade-damper-blade with
//! 2-D contact elements (digest V6): the true peak of the driven DOF over the force level (the
//! ridge), the phase resonance (its first harmonic 90 degrees behind the force) and the damped
//! nonlinear mode (extended periodic motion), at the light damping `beta = 3e-6` where the
//! paper reports that the last two leave the forced peaks in the regime of maximum friction
//! damping, and at `beta = 1.5e-5` for contrast. Prints one table per `beta`
//! (docs/nonlinear-modes.md, section 5).
//!
//! cargo run --release -p ewr-solve --example seed004_v6 [SET]   (SET defaults to all:7)
//!
//! `V6_BACKBONE=1` also prints every backbone point; `V6_TOL` sets Newton's tolerance (1e-9).
use ewr_contact::ContactParams;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::examples::{BladeDamperBlade, BladeDamperBlade3d, blade_damper_blade_3d};
use ewr_solve::nonlinear_mode::{ModePoint, backbone, synthesise};
use ewr_solve::{
    Amplitude, Continuation, FrcSettings, NewtonOptions, PointSettings, frc, phase_resonances,
    refine_peaks,
};
use faer::c64;

/// The driven DOF: the left platform's `x2`.
const DRIVEN: usize = 1;

fn settings(set: &HarmonicSet) -> PointSettings {
    PointSettings {
        set: set.clone(),
        n_samples: default_samples(set),
        law: ewr_contact::FrictionLaw::Exact,
        newton: NewtonOptions {
            tol_residual: std::env::var("V6_TOL")
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(1e-9),
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: vec![DRIVEN],
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Amplitude::H1,
    }
}

/// The modal amplitude `sqrt(Q_1^H M Q_1)` of a forced solution with contact forces `x`.
fn modal_amplitude(
    rec: &Receptance,
    model: &ewr_model::Model,
    set: &HarmonicSet,
    w: f64,
    x: &[f64],
) -> f64 {
    let nco = set.n_coeffs();
    let p1 = set.coeff_index(1).expect("harmonic 1 in the set");
    let rows = x.len() / nco;
    let r1: Vec<c64> = (0..rows)
        .map(|s| c64::new(x[s * nco + p1], -x[s * nco + p1 + 1]))
        .collect();
    let at = rec.prepare(w, set.harmonics()).unwrap();
    let q = at.recover(1, &r1, None).unwrap();
    let m = model.mass.to_dense();
    let n = q.len();
    let mut e = 0.0;
    for i in 0..n {
        for j in 0..n {
            e += (q[i].conj() * q[j]).re * m[(i, j)];
        }
    }
    e.sqrt()
}

/// The backbone's frequency and damping ratio at modal amplitude `a` (log-linear
/// interpolation between the converged points).
fn on_backbone(pts: &[ModePoint], a: f64) -> Option<(f64, f64)> {
    let ok: Vec<&ModePoint> = pts.iter().filter(|p| p.converged).collect();
    ok.windows(2).find_map(|w| {
        let (p, q) = (w[0], w[1]);
        (p.amplitude <= a && a <= q.amplitude).then(|| {
            let t = (a / p.amplitude).ln() / (q.amplitude / p.amplitude).ln();
            (
                p.omega + t * (q.omega - p.omega),
                p.damping_ratio + t * (q.damping_ratio - p.damping_ratio),
            )
        })
    })
}

fn main() {
    let set: HarmonicSet = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "all:7".into())
        .parse()
        .expect("a harmonic set, e.g. all:7");
    let hz = |w: f64| w / std::f64::consts::TAU;
    let forces = [0.04, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0];
    for beta in [3e-6, 1.5e-5] {
        let mut p = BladeDamperBlade3d::default();
        p.base = BladeDamperBlade { beta, ..p.base };
        let model = blade_damper_blade_3d(&p);
        let params = ContactParams::of(&model.contacts);
        let s = settings(&set);
        let amps: Vec<f64> = (0..=120)
            .map(|i| 10f64.powf(-7.0 + 6.0 * i as f64 / 120.0))
            .collect();
        let mode_settings = PointSettings {
            ramp: false,
            ..s.clone()
        };
        let modes = backbone(&model, &params, &mode_settings, 1, &amps, &mut |_| true).unwrap();
        if std::env::var_os("V6_BACKBONE").is_some() {
            for p in &modes {
                println!(
                    "  a = {:.3e}: {:.4} Hz, zeta {:.5}, {} iterations{}",
                    p.amplitude,
                    hz(p.omega),
                    p.damping_ratio,
                    p.iterations,
                    if p.converged { "" } else { " NOT CONVERGED" }
                );
            }
        }
        let (imax, zmax) = modes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.converged)
            .max_by(|a, b| a.1.damping_ratio.total_cmp(&b.1.damping_ratio))
            .map(|(i, p)| (i, p.damping_ratio))
            .unwrap();
        println!(
            "\nbeta = {beta:e}, {set}: nonlinear mode 1 from {:.3} Hz (stuck, zeta {:.5}); \
             largest modal damping {zmax:.5} at modal amplitude {:.3e} ({:.3} Hz); {} of {} \
             amplitudes converged",
            hz(modes[0].omega),
            modes[0].damping_ratio,
            modes[imax].amplitude,
            hz(modes[imax].omega),
            modes.iter().filter(|p| p.converged).count(),
            modes.len()
        );
        println!(
            "{:>7} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
            "F [N]",
            "peak [Hz]",
            "|x2| peak",
            "modal a",
            "phase [Hz]",
            "mode [Hz]",
            "synth [Hz]",
            "zeta",
            "phase-pk",
            "mode-pk"
        );
        for &f in &forces {
            let mut m = model.clone();
            for t in m.forcing.iter_mut().filter(|t| t.harmonic == 1) {
                let scale = f / p.base.force;
                t.cos *= scale;
                t.sin *= scale;
            }
            let rec = Receptance::new(&m, ReceptanceKind::Dense).unwrap();
            let sweep = FrcSettings {
                omega_start: 1150.0,
                omega_end: 1450.0,
                step: 0.5,
                min_step: 0.5 / 64.0,
                max_step: 0.5,
                method: Continuation::Sequential,
                point: s.clone(),
                max_points: 10_000,
                adaptive: None,
                keep_histories: false,
            };
            let pts = frc(&rec, &params, &sweep, &mut |_| true).unwrap();
            let peaks = refine_peaks(&rec, &params, &s, &pts).unwrap();
            let Some(peak) = peaks
                .iter()
                .max_by(|a, b| a.amplitude.total_cmp(&b.amplitude))
            else {
                println!("{f:>7} no peak in the band");
                continue;
            };
            let force = m
                .forcing
                .iter()
                .find(|t| t.harmonic == 1)
                .map(|t| (t.cos, t.sin))
                .unwrap();
            let phase = phase_resonances(&rec, &params, &s, &pts, DRIVEN, force).unwrap();
            let quad = phase
                .iter()
                .min_by(|a, b| {
                    (a.omega - peak.omega)
                        .abs()
                        .total_cmp(&(b.omega - peak.omega).abs())
                })
                .map(|q| q.omega);
            let a = modal_amplitude(&rec, &m, &set, peak.omega, &peak.solution.friction);
            let on_mode = on_backbone(&modes, a);
            let syn = synthesise(&m, &modes).peak.map(|(_, w, _)| w);
            let show = |w: Option<f64>| w.map_or("-".to_string(), |w| format!("{:.3}", hz(w)));
            let diff = |w: Option<f64>| {
                w.map_or("-".to_string(), |w| {
                    format!("{:+.3}", hz(w) - hz(peak.omega))
                })
            };
            println!(
                "{f:>7} {:>10.3} {:>11.4e} {:>10.3e} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
                hz(peak.omega),
                peak.amplitude,
                a,
                show(quad),
                show(on_mode.map(|x| x.0)),
                show(syn),
                on_mode.map_or("-".into(), |x| format!("{:.5}", x.1)),
                diff(quad),
                diff(on_mode.map(|x| x.0)),
            );
        }
    }
}
