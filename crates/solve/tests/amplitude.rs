//! The amplitude measures (`--amplitude`) against closed forms on a linear oscillator (a
//! contact with a zero friction bound): with one harmonic, `h1` is `max`; a static load alone
//! has no dynamic amplitude; peak to peak is twice the harmonic's amplitude.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_model::{Contacts, Model, ModelBuilder};
use ewr_solve::newton::NewtonOptions;
use ewr_solve::{Amplitude, PointSettings, Preconditioner, solve_point};

/// `m = 1, k = 1, c = 0.1` with `f0 + f1 cos(w t)` and a contact whose bound is zero.
fn oscillator(f0: f64, f1: f64) -> Model {
    let mut b = ModelBuilder::new(1)
        .mass(0, 1.0)
        .spring_to_ground(0, 1.0)
        .damper_to_ground(0, 0.1)
        .contacts(Contacts::to_ground(1, vec![0], vec![0.0]));
    if f0 != 0.0 {
        b = b.force(0, 0, f0, 0.0);
    }
    if f1 != 0.0 {
        b = b.force(0, 1, f1, 0.0);
    }
    b.build().unwrap()
}

fn amplitude(model: &Model, w: f64, measure: Amplitude) -> f64 {
    let set: HarmonicSet = "all:3".parse().unwrap();
    let s = PointSettings {
        n_samples: ewr_hb::default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions::default(),
        ramp: true,
        monitor: vec![0],
        retry_rho: true,
        preconditioner: Preconditioner::default(),
        auto: None,
        amplitude: measure,
    };
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let sol = solve_point(&rec, &ContactParams::of(&model.contacts), w, &s, None).unwrap();
    assert!(sol.status.converged());
    assert!((sol.dofs.peak[0] - sol.dofs.norm_peak).abs() <= 1e-14 * sol.dofs.norm_peak);
    sol.dofs.norm_peak
}

/// `|U| = f1 / |1 - w^2 + i 0.1 w|`.
fn harmonic(f1: f64, w: f64) -> f64 {
    f1 / ((1.0 - w * w).powi(2) + (0.1 * w).powi(2)).sqrt()
}

#[test]
fn measures_equal_their_closed_forms() {
    let w = 0.8;
    let u = harmonic(2.0, w);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1e-12);
    // One harmonic: every measure but peak to peak is |U|.
    let m = oscillator(0.0, 2.0);
    for (measure, expect) in [
        (Amplitude::Max, u),
        (Amplitude::Dynamic, u),
        (Amplitude::H1, u),
        (Amplitude::PeakToPeak, 2.0 * u),
    ] {
        let a = amplitude(&m, w, measure);
        assert!(close(a, expect), "{measure}: {a} against {expect}");
    }
    // A static load 3 on top: only max sees it.
    let m = oscillator(3.0, 2.0);
    for (measure, expect) in [
        (Amplitude::Max, 3.0 + u),
        (Amplitude::Dynamic, u),
        (Amplitude::H1, u),
        (Amplitude::PeakToPeak, 2.0 * u),
    ] {
        let a = amplitude(&m, w, measure);
        assert!(
            close(a, expect),
            "{measure} with a static load: {a} against {expect}"
        );
    }
    // A static load alone: no vibration.
    let m = oscillator(3.0, 0.0);
    assert!(close(amplitude(&m, w, Amplitude::Max), 3.0));
    for measure in [Amplitude::Dynamic, Amplitude::H1, Amplitude::PeakToPeak] {
        let a = amplitude(&m, w, measure);
        assert!(a.abs() < 1e-12, "{measure} of a static load alone: {a}");
    }
}

#[test]
fn measures_parse_by_name_and_refuse_others() {
    for a in Amplitude::ALL {
        assert_eq!(a.name().parse::<Amplitude>().unwrap(), a);
    }
    let e = "rms".parse::<Amplitude>().unwrap_err();
    assert!(e.contains("rms") && e.contains("dynamic"), "{e}");
}
