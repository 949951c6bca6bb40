//! A sweep's per-point work (stability, truncation estimates) runs beside the sweep on the
//! other threads: the caller must still see every point once, in the order solved, with its
//! work done, and the numbers must be those of one thread, to the bit.

use ewr_solve::setup::{SolveOptions, SweepOptions, resolve};
use ewr_solve::{FrcPoint, StopReason, SweepObserver, sweep};
use std::sync::Mutex;

/// A point as the caller saw it: its frequency, largest multiplier and estimate.
type Shown = (f64, Option<f64>, Option<f64>);

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
        ));
        Ok(())
    }
}

type Run = (Vec<Shown>, Vec<(f64, f64, f64)>);

/// A shipped model's curve on `harmonics` over `band` (start, end, step) with stability (of
/// every inter-sector phase with `all_phases`) and estimates at every point, on a pool of
/// `threads`: what the observer saw, and the refined peaks' frequencies, multipliers and
/// estimates.
fn run(
    threads: usize,
    model: &str,
    harmonics: &str,
    band: (f64, f64, f64),
    all_phases: bool,
) -> Run {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(model);
    let model = ewr_model::read(&path).unwrap().model;
    let options = SolveOptions {
        harmonics: harmonics.into(),
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
        (seen, peaks)
    })
}

/// The curve of [`run`] on one thread (every point's work in line) and on three (beside the
/// sweep) is the same to the bit; every point is classified (its largest multiplier in
/// `multipliers`) and estimated, in increasing frequency.
fn same_on_one_and_three_threads(
    model: &str,
    harmonics: &str,
    band: (f64, f64, f64),
    all_phases: bool,
    points: usize,
    multipliers: std::ops::Range<f64>,
) {
    faer::set_global_parallelism(ewr_hb::deterministic_parallelism());
    let (one, one_peaks) = run(1, model, harmonics, band, all_phases);
    let (three, three_peaks) = run(3, model, harmonics, band, all_phases);
    assert_eq!(one.len(), points);
    for w in one.windows(2) {
        assert!(w[1].0 > w[0].0, "{:?} then {:?}", w[0], w[1]);
    }
    for s in &one {
        let m = s.1.expect("every point's stability");
        assert!(multipliers.contains(&m), "w = {}: multiplier {m}", s.0);
        assert!(s.2.is_some(), "w = {}: no estimate", s.0);
    }
    assert!(!one_peaks.is_empty());
    let bits = |r: &[Shown]| {
        r.iter()
            .map(|s| (s.0.to_bits(), s.1.map(f64::to_bits), s.2.map(f64::to_bits)))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&one), bits(&three));
    assert_eq!(one_peaks, three_peaks);
}

#[test]
fn work_beside_the_sweep_changes_nothing_but_the_time() {
    let band = (1150.0, 1350.0, 10.0);
    same_on_one_and_three_threads(
        "blade-damper-blade-3d.h5",
        "all:7",
        band,
        false,
        21,
        0.5..1.0,
    );
}

/// A cyclic sector's work runs beside its sweep too, against every inter-sector phase.
#[test]
fn a_cyclic_sector_s_work_beside_the_sweep_changes_nothing_but_the_time() {
    let band = (1.0, 1.2, 0.02);
    same_on_one_and_three_threads("bladed-disk.h5", "odd:15", band, true, 11, 0.0..1.0);
}
