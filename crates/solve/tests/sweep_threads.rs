//! A sweep's per-point work (stability, truncation estimates) runs beside the sweep on the
//! other threads: the caller must still see every point once, in the order solved, with its
//! work done, and the numbers must be those of one thread, to the bit.

use ewr_solve::setup::{SolveOptions, SweepOptions, resolve};
use ewr_solve::{FrcPoint, StopReason, SweepObserver, sweep};
use std::sync::Mutex;

/// A point as the caller saw it: its frequency, largest multiplier, estimate, and each
/// inter-sector phase family's largest multiplier (cyclic sectors against every phase).
type Shown = (f64, Option<f64>, Option<f64>, Vec<Option<f64>>);

/// What the caller saw.
#[derive(Default)]
struct Seen(Mutex<Vec<Shown>>);

impl SweepObserver for Seen {
    fn point(&self, _: usize, _: Option<f64>, p: &FrcPoint) -> Result<(), StopReason> {
        let s = &p.solution;
        self.0.lock().unwrap().push((
            s.omega,
            s.stability.as_ref().map(|st| st.max_multiplier),
            s.estimate.as_ref().map(|e| e.amplitude),
            s.stability.as_ref().map_or(Vec::new(), |st| {
                st.phases.iter().map(|f| f.max_multiplier).collect()
            }),
        ));
        Ok(())
    }
}

/// What the observer saw, the refined peaks' frequencies, multipliers and estimates, and the
/// points whose work ran beside the sweep.
type Run = (Vec<Shown>, Vec<(f64, f64, f64)>, usize);

/// How a curve of [`run`] is computed.
struct Case {
    model: &'static str,
    harmonics: &'static str,
    receptance: &'static str,
    /// Start, end, step.
    band: (f64, f64, f64),
    /// Stability against every inter-sector phase (cyclic sectors).
    all_phases: bool,
}

/// A shipped model's curve with stability and estimates at every point, on a pool of
/// `threads`.
fn run(threads: usize, case: &Case) -> Run {
    let Case {
        model,
        harmonics,
        receptance,
        band,
        all_phases,
    } = *case;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(model);
    let model = ewr_model::read(&path).unwrap().model;
    let options = SolveOptions {
        harmonics: harmonics.into(),
        receptance: receptance.into(),
        ..SolveOptions::default()
    };
    let setup = resolve(model, &options).unwrap();
    let opts = SweepOptions {
        stability: true,
        all_phases,
        estimate_points: true,
        ..SweepOptions::new(band.0, band.1, band.2)
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let rec = setup.receptance().unwrap();
        let seen = Seen::default();
        let spec = ewr_solve::CurveSpec {
            mu_n: None,
            setup: &setup,
            resume: None,
        };
        let curves = sweep(&rec, &[spec], &opts, &seen);
        let curve = &curves[0];
        let seen = seen.0.into_inner().unwrap();
        // The caller saw the curve's points, each once, in its order.
        assert_eq!(seen.len(), curve.points.len());
        for (s, p) in seen.iter().zip(&curve.points) {
            assert_eq!(s.0.to_bits(), p.solution.omega.to_bits());
        }
        let peaks = curve
            .peaks
            .iter()
            .map(|pk| {
                let st = pk.solution.stability.as_ref().expect("a peak's stability");
                let e = pk.solution.estimate.as_ref().expect("a peak's estimate");
                (pk.omega, st.max_multiplier, e.amplitude)
            })
            .collect();
        (seen, peaks, curve.beside)
    })
}

/// The curve of [`run`] on one thread (every point's work in line) and on three (beside the
/// sweep, `beside_at_least` points or more) is the same to the bit; every point is classified
/// (its largest multiplier in `multipliers`) and estimated, in increasing frequency; at least
/// `peaks` peaks.
fn same_on_one_and_three_threads(
    case: &Case,
    points: usize,
    multipliers: std::ops::Range<f64>,
    peaks: usize,
    beside_at_least: usize,
) {
    faer::set_global_parallelism(ewr_hb::deterministic_parallelism());
    let (one, one_peaks, one_beside) = run(1, case);
    let (three, three_peaks, three_beside) = run(3, case);
    assert_eq!(one.len(), points);
    for w in one.windows(2) {
        assert!(w[1].0 > w[0].0, "{:?} then {:?}", w[0], w[1]);
    }
    for s in &one {
        let m = s.1.expect("every point's stability");
        assert!(multipliers.contains(&m), "w = {}: multiplier {m}", s.0);
        assert!(s.2.is_some(), "w = {}: no estimate", s.0);
        if case.all_phases {
            assert!(!s.3.is_empty(), "w = {}: no phase families", s.0);
        }
    }
    assert!(one_peaks.len() >= peaks, "{} peaks", one_peaks.len());
    assert_eq!(one_beside, 0, "one thread works in line");
    assert!(
        three_beside >= beside_at_least,
        "{three_beside} points' work beside the sweep"
    );
    let bits = |r: &[Shown]| {
        r.iter()
            .map(|s| {
                let phases: Vec<_> = s.3.iter().map(|m| m.map(f64::to_bits)).collect();
                (
                    s.0.to_bits(),
                    s.1.map(f64::to_bits),
                    s.2.map(f64::to_bits),
                    phases,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&one), bits(&three));
    assert_eq!(one_peaks, three_peaks);
}

#[test]
fn work_beside_the_sweep_changes_nothing_but_the_time() {
    let case = Case {
        model: "blade-damper-blade-3d.h5",
        harmonics: "all:7",
        receptance: "auto",
        band: (1150.0, 1350.0, 10.0),
        all_phases: false,
    };
    same_on_one_and_three_threads(&case, 21, 0.5..1.0, 1, 10);
}

/// A cyclic sector's work runs beside its sweep too, against every inter-sector phase: on
/// its modal receptance, whose modes are extracted per nodal diameter (those the estimates'
/// richer sets and the other phases reach are extracted before the curve starts), and on a
/// list of harmonics (no set below), whose estimates solve on `4H + 3` as well.
#[test]
fn a_cyclic_sector_s_work_beside_the_sweep_changes_nothing_but_the_time() {
    for (harmonics, receptance) in [
        ("odd:15", "modal:4"),
        ("1,3,7", "modal:4"),
        ("odd:15", "dense"),
    ] {
        let case = Case {
            model: "bladed-disk.h5",
            harmonics,
            receptance,
            band: (0.9, 2.4, 0.075),
            all_phases: true,
        };
        same_on_one_and_three_threads(&case, 21, 0.0..1.0, 2, 5);
    }
}
