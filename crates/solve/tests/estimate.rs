//! The truncation-error estimate (issue 29) against the true error: the same point on a much
//! richer harmonic set (odd:255), on the paper's two constant-bound models. Where the true
//! error of the amplitude exceeds 1e-3, the estimate is within a factor 3 of it.

use ewr_contact::ContactParams;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_solve::{
    EstimateMethod, NewtonOptions, PointSettings, PointSolution, from_below, solve_point,
    truncation_error,
};

fn settings(set: &str, n: usize) -> PointSettings {
    let set: HarmonicSet = set.parse().unwrap();
    PointSettings {
        n_samples: default_samples(&set),
        set,
        law: ewr_contact::FrictionLaw::Exact,
        newton: NewtonOptions::default(),
        ramp: true,
        monitor: (0..n).collect(),
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

/// The reported estimate against the true error on one shipped model file: at each of
/// `omegas`, the sets `1, 3, 7, 15` of the model's kind (odd, or all where it needs the
/// static term) solved from zero force, their estimates, and the reference `odd:255` or
/// `all:127`. The ratio estimate / true error of each case whose true error exceeds 1e-3 of
/// the amplitude, and the case printed.
fn shipped_ratios(name: &str, omegas: &[f64]) -> Vec<f64> {
    use ewr_solve::setup::{SolveOptions, resolve};
    let path = format!("{}/../../models/{name}.h5", env!("CARGO_MANIFEST_DIR"));
    let read = ewr_model::read(std::path::Path::new(&path)).unwrap();
    let all = ewr_solve::auto::start_set(&read.model).kind() == ewr_hb::HarmonicKind::All;
    let (kind, rich) = if all { ("all", 127) } else { ("odd", 255) };
    let options = SolveOptions {
        harmonics: format!("{kind}:1"),
        ..SolveOptions::default()
    };
    let setup = resolve(read.model, &options).unwrap();
    let rec = setup.receptance().unwrap();
    let params = setup.params();
    let on = |h: usize| {
        let set: HarmonicSet = format!("{kind}:{h}").parse().unwrap();
        PointSettings {
            n_samples: default_samples(&set),
            set,
            ..setup.point.clone()
        }
    };
    let mut ratios = Vec::new();
    for &w in omegas {
        let truth = solve_point(&rec, &params, w, &on(rich), None).unwrap();
        assert!(truth.status.converged(), "{name}: reference at {w}");
        for h in [1, 3, 7, 15] {
            let st = on(h);
            let sol = solve_point(&rec, &params, w, &st, None).unwrap();
            if !sol.status.converged() {
                // No solution to estimate (single-contact-3d on all:1 past its lift-off).
                eprintln!("{name:22} w = {w:<9.4} {kind}:{h:<3} not converged");
                continue;
            }
            let e = truncation_error(&rec, &params, &st, &sol).unwrap();
            let err = (sol.dofs.norm_peak - truth.dofs.norm_peak).abs() / truth.dofs.norm_peak;
            if err > 1e-3 {
                let ratio = e.relative / err;
                eprintln!(
                    "{name:22} w = {w:<9.4} {kind}:{h:<3} true {err:.2e} estimate {:.2e} ({ratio:.2}, {})",
                    e.relative,
                    e.method.name()
                );
                ratios.push(ratio);
            }
        }
    }
    ratios
}

/// `n` frequencies from `a` to `b`.
fn band(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| a + (b - a) * i as f64 / (n - 1) as f64)
        .collect()
}

#[test]
fn the_estimate_tracks_the_true_error_on_every_shipped_model() {
    // Issue 29: on every shipped example, over its resonances, the estimate within a factor 3
    // of the true error where that exceeds 1e-3. Measured (docs/accuracy.md, "The tail beyond
    // the richer set"): 198 of 208 cases within, the rest above (up to 7.5: a set below far
    // coarser than the set, or two sets that happen to agree) but one, 0.21 (two-dof-1d, odd:1
    // at 1.23, whose 2H + 1 and 4H + 3 both agree with it). The plain re-solve on 2H + 1 had 13
    // cases below a third, down to 0.08.
    let mut ratios = Vec::new();
    for (name, omegas) in [
        ("oscillator-2d", band(0.3, 1.6, 6)),
        ("two-mass-damper", band(0.4, 1.0, 6)),
        ("two-dof-1d", band(0.3, 1.6, 6)),
        ("chain", band(0.04, 0.2, 6)),
        ("blade-damper-blade", band(1150.0, 1400.0, 6)),
        ("blade-damper-blade-3d", band(1000.0, 1500.0, 6)),
        ("wedge-damper-3d", band(1150.0, 1400.0, 6)),
        ("single-contact-3d", band(1.0, 6.0, 5)),
        ("bladed-disk", band(0.9, 1.9, 6)),
        ("blade-ccx", vec![1400.0, 1500.0, 7500.0, 7800.0, 8100.0]),
    ] {
        ratios.extend(shipped_ratios(name, &omegas));
    }
    let within = ratios
        .iter()
        .filter(|r| (1.0 / 3.0..=3.0).contains(*r))
        .count();
    let lowest = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
    let highest = ratios.iter().cloned().fold(0.0f64, f64::max);
    eprintln!(
        "{within} of {} within a factor 3; ratios {lowest:.2} .. {highest:.2}",
        ratios.len()
    );
    assert!(ratios.len() >= 100, "{} cases above 1e-3", ratios.len());
    assert!(
        within as f64 >= 0.93 * ratios.len() as f64,
        "{within} of {} within a factor 3",
        ratios.len()
    );
    assert!(lowest >= 0.2 && highest <= 8.0, "{lowest} .. {highest}");
}

#[test]
fn odd_1_is_flagged_and_odd_59_is_not() {
    // Issue 29: oscillator-2d at w = 1, DOF 0 peak 64.8 with odd:1 against 34.70.
    let model = ewr_model::examples::oscillator_2d();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let est = |s: &str| {
        let st = settings(s, 2);
        let sol = solve_point(&rec, &params, 1.0, &st, None).unwrap();
        truncation_error(&rec, &params, &st, &sol).unwrap()
    };
    assert!(est("odd:1").relative > 0.3);
    assert!(est("odd:59").relative < 1e-3);
}

#[test]
fn auto_reaches_the_rich_answer_within_its_tolerance() {
    // Issue 29: oscillator-2d at w = 1, DOF 0 peak 34.70 (odd:255); odd:1 gives 64.8.
    let model = ewr_model::examples::oscillator_2d();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let truth = solve_point(&rec, &params, 1.0, &settings("odd:255", 2), None).unwrap();
    let auto = PointSettings {
        auto: Some(0.01),
        ..settings("odd:1", 2)
    };
    let sol = solve_point(&rec, &params, 1.0, &auto, None).unwrap();
    assert!(sol.status.converged());
    let e = sol
        .estimate
        .as_ref()
        .expect("auto solutions carry their estimate");
    assert!(e.relative <= 0.01, "{e:?}");
    // Its set has one below it: the re-solve with the tail beyond 2H + 1.
    assert_eq!(e.method, EstimateMethod::RicherWithTail);
    assert!(sol.set.h_max() > 1, "{}", sol.set);
    let rel = (sol.dofs.peak[0] - truth.dofs.peak[0]).abs() / truth.dofs.peak[0];
    assert!(
        rel < 0.01,
        "DOF 0 peak {} against {}",
        sol.dofs.peak[0],
        truth.dofs.peak[0]
    );
    // The set it grew to was first solved to the checks' looser tolerance (1e-5), then
    // polished: the answer is the fixed set's to the run's own tolerance.
    let tol = auto.newton.tol_residual;
    assert!(sol.residual <= tol, "residual {} above {tol}", sol.residual);
    let fixed = solve_point(&rec, &params, 1.0, &settings(&sol.set.to_string(), 2), None).unwrap();
    let scale = fixed.friction.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = sol
        .friction
        .iter()
        .zip(&fixed.friction)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(
        diff <= 1e-8 * scale,
        "{diff:e} of {scale:e} from the fixed set"
    );
}

#[test]
fn an_auto_sweep_follows_the_rich_curve() {
    // Seed 000 Fig. 5, mu N = 8: every point within auto's 1 % of odd:255, each on its own set
    // (measured 0.84 % at most; 1.01 % without the tail beyond the richer set, 1.3 % before
    // the check from below; a fixed odd:31 reaches 1.3 %).
    let (pts, rich) = fig5_auto_and_rich(8.0, (0.05, 1.5, 0.01), 0.08);
    let mut sets = std::collections::BTreeSet::new();
    for (a, r) in pts.iter().zip(&rich) {
        let (a, r) = (&a.solution, &r.solution);
        assert!(a.status.converged());
        assert_eq!(a.omega, r.omega);
        let rel = (a.dofs.norm_peak - r.dofs.norm_peak).abs() / r.dofs.norm_peak;
        assert!(
            rel < 0.01,
            "w = {}: {} on {} against {}",
            a.omega,
            a.dofs.norm_peak,
            a.set,
            r.dofs.norm_peak
        );
        sets.insert(a.set.h_max());
    }
    assert!(sets.len() > 1, "the set follows the curve: {sets:?}");
}

#[test]
fn an_auto_sweep_rechecks_where_the_force_spectrum_s_tail_grows() {
    // Seed 000 Fig. 5 at mu N = 12 far below the resonance: the oscillator's own frequency is
    // the 10th to 20th harmonic of the forcing, and which of them the set cuts changes from
    // one point to the next while the amplitude and the stick fraction hardly move. odd:63,
    // checked at the first point, was 2.1 % off at 0.062 and 1.1 % at 0.086 without a
    // check. The first two points are left out: the check at 0.05 sees 0.2 % where odd:63 is
    // 1.4 % off (a check from below cannot see a convergence that stalls above the set,
    // docs/accuracy.md, "Limits"), and 0.056 keeps its set.
    let (pts, rich) = fig5_auto_and_rich(12.0, (0.05, 0.2, 0.006), 0.006);
    for (a, r) in pts.iter().zip(&rich).skip(2) {
        let (a, r) = (&a.solution, &r.solution);
        assert!(a.status.converged() && a.omega == r.omega);
        let rel = (a.dofs.norm_peak - r.dofs.norm_peak).abs() / r.dofs.norm_peak;
        assert!(rel < 0.01, "w = {}: {} off on {}", a.omega, rel, a.set);
    }
}

/// Seed 000's Fig. 5 oscillator at the friction bound `mu_n`, swept over `band` (steps up to
/// `max_step`) with `auto` from odd:1 and with odd:255: the two curves, point for point.
fn fig5_auto_and_rich(
    mu_n: f64,
    band: (f64, f64, f64),
    max_step: f64,
) -> (Vec<ewr_solve::FrcPoint>, Vec<ewr_solve::FrcPoint>) {
    use ewr_solve::frc;
    let mut model = ewr_model::examples::oscillator_2d();
    model.contacts.set_mu_n(mu_n).unwrap();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let sweep = |point| sequential(band, max_step, point);
    let rich = frc(&rec, &params, &sweep(settings("odd:255", 2)), &mut |_| true).unwrap();
    let auto = PointSettings {
        auto: Some(0.01),
        ..settings("odd:1", 2)
    };
    let pts = frc(&rec, &params, &sweep(auto), &mut |_| true).unwrap();
    assert_eq!(pts.len(), rich.len());
    (pts, rich)
}

/// The cases of `model` at `omegas` whose true error (against `sets[3]`) exceeds 1e-3 of the
/// amplitude, each asserted to have its check from below (`sets[0]` against `sets[1]` and
/// `sets[2]`) at least a third of it.
fn check_from_below(model: &Model, omegas: &[f64], sets: [&str; 4]) -> usize {
    let [h, l1, l2, rich] = sets;
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let n = model.n_dofs();
    let mut checked = 0;
    for &w in omegas {
        let truth = solve_point(&rec, &params, w, &settings(rich, n), None).unwrap();
        let sol = solve_point(&rec, &params, w, &settings(h, n), None).unwrap();
        assert!(
            truth.status.converged() && sol.status.converged(),
            "w = {w}"
        );
        let start = Some((&sol.set, sol.friction.as_slice()));
        let below = |s: &str| {
            let b = solve_point(&rec, &params, w, &settings(s, n), start).unwrap();
            assert!(b.status.converged(), "{s} at {w}");
            b
        };
        let e = from_below(&sol, &below(l1), &below(l2));
        assert!(e.converged && e.method == EstimateMethod::FromBelow);
        assert_eq!(e.set.to_string(), l1);
        let err = (sol.dofs.norm_peak - truth.dofs.norm_peak).abs();
        if err > 1e-3 * truth.dofs.norm_peak {
            assert!(
                e.amplitude >= err / 3.0,
                "w = {w}, {h}: from below {:.3e}, true error {err:.3e}",
                e.amplitude
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_check_from_below_is_never_below_a_third_of_the_true_error() {
    // `auto` checks a set from h = 31 up on the two sets below it (docs/accuracy.md, "A check
    // from below"). On the 2-D oscillator, and on the 3-D contact with lift-off, whose slow
    // convergence makes the re-solve on 2H + 1 see about half the error (1.1-1.8 % here).
    let n = check_from_below(
        &ewr_model::examples::oscillator_2d(),
        &[0.3, 0.7, 1.0, 1.3],
        ["odd:31", "odd:15", "odd:7", "odd:255"],
    );
    let m = check_from_below(
        &ewr_model::examples::single_contact_3d(),
        &[3.5, 5.0, 6.0, 8.0],
        ["all:31", "all:15", "all:7", "all:127"],
    );
    assert!(n + m >= 4, "{} cases above 1e-3", n + m);
}

#[test]
fn an_auto_sweep_of_a_contact_that_lifts_off_meets_its_tolerance() {
    // single-contact-3d converges like 1 / H, where the re-solve on 2H + 1 sees half the
    // error, and at w = 3 all:1 and all:3 agree by chance. Before the tail beyond the richer
    // set and the start set's second comparison, auto from w = 3 kept all:1 to 3.3 rad/s (8-11 %
    // off all:127) and all:31 to 4.3 rad/s (1.1-1.5 %); now every point is within its 1 %
    // (measured 0.94 % at most, on all:31 at 3.3 rad/s).
    use ewr_solve::frc;
    let model = ewr_model::examples::single_contact_3d();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let n = model.n_dofs();
    let sweep = |point| sequential((3.0, 4.5, 0.1), 0.1, point);
    let rich = frc(&rec, &params, &sweep(settings("all:127", n)), &mut |_| true).unwrap();
    let auto = PointSettings {
        auto: Some(0.01),
        ..settings("all:1", n)
    };
    let pts = frc(&rec, &params, &sweep(auto), &mut |_| true).unwrap();
    assert_eq!(pts.len(), rich.len());
    let mut worst = 0.0f64;
    for (a, r) in pts.iter().zip(&rich) {
        let (a, r) = (&a.solution, &r.solution);
        assert!(a.status.converged() && r.status.converged());
        assert_eq!(a.omega, r.omega);
        let rel = (a.dofs.norm_peak - r.dofs.norm_peak).abs() / r.dofs.norm_peak;
        eprintln!("w = {:.2}: {} error {rel:.3e}", a.omega, a.set);
        worst = worst.max(rel);
    }
    assert!(worst < 0.01, "largest error {worst:.3e}");
}

#[test]
fn an_auto_point_s_estimate_is_the_change_on_its_own_2h_plus_1() {
    // Peaks and `--estimate` points of an `auto` curve are estimated by truncation_error with
    // the curve's settings: the re-solve is on 2H + 1, not itself automatic (it used to grow
    // past 2H + 1 until its own check passed, at the cost of most of a curve's peak estimates).
    let model = ewr_model::examples::oscillator_2d();
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let sol = solve_point(&rec, &params, 1.0, &settings("odd:3", 2), None).unwrap();
    let auto = PointSettings {
        auto: Some(1e-4),
        ..settings("odd:1", 2)
    };
    let e = truncation_error(&rec, &params, &auto, &sol).unwrap();
    assert_eq!(e.set.to_string(), "odd:7");
    assert_eq!(e.method, EstimateMethod::RicherWithTail);
    assert!(e.converged && e.relative > 1e-3, "{e:?}");
}

#[test]
fn the_set_below_keeps_the_forced_harmonics() {
    // Forced on the third harmonic only, odd:3's set below (odd:1) carries no load: comparing
    // with it would put the floor at a seventh of the amplitude. It is compared with odd:7 and
    // odd:15 instead, as a first set.
    let mut model = ewr_model::examples::oscillator_2d();
    model.forcing.iter_mut().for_each(|f| f.harmonic = 3);
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let w = 0.25;
    let truth = solve_point(&rec, &params, w, &settings("odd:255", 2), None).unwrap();
    let st = settings("odd:3", 2);
    let sol = solve_point(&rec, &params, w, &st, None).unwrap();
    assert!(truth.status.converged() && sol.status.converged());
    let e = truncation_error(&rec, &params, &st, &sol).unwrap();
    let err = (sol.dofs.norm_peak - truth.dofs.norm_peak).abs() / truth.dofs.norm_peak;
    eprintln!("estimate {e:?}, true error {err:.3e}");
    assert_eq!(e.method, EstimateMethod::Richer);
    assert!(
        e.relative <= 3.0 * err.max(1e-3),
        "{} against {err}",
        e.relative
    );
    assert!(
        err <= 3.0 * e.relative.max(1e-3),
        "{} against {err}",
        e.relative
    );
}

/// The largest relative error of an `auto` sweep of the shipped model `name` from `w0` to `w1`
/// by `step` against the same sweep on `rich`, both as `ewr frc` sets them up.
fn auto_sweep_error(name: &str, band: (f64, f64, f64), rich: &str) -> f64 {
    auto_sweep(name, band, rich).0
}

/// [`auto_sweep_error`], and the automatic sweep's solutions.
fn auto_sweep(
    name: &str,
    (w0, w1, step): (f64, f64, f64),
    rich: &str,
) -> (f64, Vec<PointSolution>) {
    use ewr_solve::frc;
    use ewr_solve::setup::{SolveOptions, resolve};
    let path = format!("{}/../../models/{name}.h5", env!("CARGO_MANIFEST_DIR"));
    let setup = |harmonics: &str| {
        let model = ewr_model::read(std::path::Path::new(&path)).unwrap().model;
        let options = SolveOptions {
            harmonics: harmonics.into(),
            ..SolveOptions::default()
        };
        resolve(model, &options).unwrap()
    };
    let (auto, fixed) = (setup("auto"), setup(rich));
    let rec = auto.receptance().unwrap();
    let sweep = |point| sequential((w0, w1, step), step, point);
    let params = auto.params();
    let a = frc(&rec, &params, &sweep(auto.point.clone()), &mut |_| true).unwrap();
    let r = frc(&rec, &params, &sweep(fixed.point.clone()), &mut |_| true).unwrap();
    assert_eq!(a.len(), r.len());
    let worst = a
        .iter()
        .zip(&r)
        .map(|(a, r)| {
            let (a, r) = (&a.solution, &r.solution);
            assert!(a.status.converged() && r.status.converged() && a.omega == r.omega);
            let e = (a.dofs.norm_peak - r.dofs.norm_peak).abs() / r.dofs.norm_peak;
            if e > 0.005 {
                eprintln!("{name} w = {:.4}: {} error {e:.3e}", a.omega, a.set);
            }
            e
        })
        .fold(0.0, f64::max);
    (worst, a.into_iter().map(|p| p.solution).collect())
}

#[test]
fn a_set_vouched_for_from_below_keeps_the_tolerance() {
    // blade-damper-blade-3d through its resonance: from h = 15 a set whose check from below
    // (all:7 and all:3, an eighth and less of a solve on all:15) is within half the tolerance
    // is kept without its re-solve on all:31. The sweep stays within 1 % of all:63 at every
    // point (0.52 % measured), and the shortcut is taken: of 35 checks on all:15, 16 were
    // settled from below and 19 needed the re-solve.
    let (worst, pts) = auto_sweep("blade-damper-blade-3d", (1000.0, 1500.0, 5.0), "all:63");
    assert!(worst < 0.01, "blade-damper-blade-3d: {worst}");
    let vouched = pts
        .iter()
        .filter(|p| {
            p.set.h_max() == 15
                && p.estimate
                    .as_ref()
                    .is_some_and(|e| e.method == EstimateMethod::FromBelow)
        })
        .count();
    assert!(vouched > 0, "no all:15 point kept from below");
}

#[test]
fn an_auto_sweep_rechecks_where_the_peaks_or_the_contact_state_change() {
    // two-mass-damper: from 0.30 to 0.34 the amplitude stays within 2 % while one DOF's peak
    // falls 5 % and another's rises 12 %, and odd:7's error grows from 0.3 to 1.5 %; the
    // amplitude alone did not call for a check there (1.47 % at 0.33).
    // blade-damper-blade: stuck all period below 1258 rad/s (a linear response, estimated at
    // zero error, on odd:1); the sliders begin to slip at 1260, where odd:1 is off by 1-8 %
    // within four steps (with the peaks' trigger alone, which checks and shrinks the set more
    // often in the stuck stretch).
    let tmd = auto_sweep_error("two-mass-damper", (0.3, 1.2, 0.01), "odd:255");
    let bdb = auto_sweep_error("blade-damper-blade", (1150.0, 1400.0, 2.0), "odd:127");
    assert!(
        tmd < 0.01 && bdb < 0.01,
        "two-mass-damper {tmd}, blade-damper-blade {bdb}"
    );
}

#[test]
fn an_auto_sweep_keeps_its_tolerance_on_other_grids() {
    // The grids of the test above, moved: each of these left 1 % before the recheck rules
    // of docs/accuracy.md, "When a sweep checks its set". blade-damper-blade by 1.3 rad/s from
    // 1230: the sliders begin to slip at 1260 and odd:1 was kept to 1262.5, 3.0 % off (the
    // stick fraction 1 -> 0.98 -> 0.95 never moved by 5 %). Downward by 2.5: odd:1 at
    // 1352.5, 2.1 % off, where the check at the onset of slip saw 0.74 % of a true 1.2 %
    // (the first set's estimate without its tail). two-mass-damper by 0.007: an estimate of
    // 0.07 % at 0.818, where the error changes sign, kept odd:1 to 0.832, 1.7 % off.
    let cases = [
        ("blade-damper-blade", (1230.0, 1300.0, 1.3), "odd:127"),
        ("blade-damper-blade", (1400.0, 1150.0, 2.5), "odd:127"),
        ("two-mass-damper", (0.3, 1.2, 0.007), "odd:255"),
    ];
    for (name, band, rich) in cases {
        let e = auto_sweep_error(name, band, rich);
        assert!(e < 0.01, "{name} {band:?}: {e}");
    }
}

#[test]
fn an_auto_sweep_rechecks_where_its_estimate_grows_fast() {
    // blade-damper-blade by 0.5 rad/s over the onset of slip: odd:1's estimate went from
    // 0.004 % at 1260 to 0.39 % at 1260.5 (true 0.59 %), and with its stick fraction still
    // and its amplitude within 2 % no rule checked 1261 and 1261.5, 1.2 % and 1.7 % off
    // odd:127. An estimate that at least doubles on the same set now checks the next point.
    // (odd:63 is within 0.03 % of odd:127 on this band.)
    let e = auto_sweep_error("blade-damper-blade", (1256.0, 1264.0, 0.5), "odd:63");
    assert!(e < 0.01, "{e}");
}

/// A sequential sweep from `w0` to `w1` by `step` (halved down to `step / 64` at a failed
/// point, up to `max_step`), every point on `point`'s settings.
fn sequential(
    (w0, w1, step): (f64, f64, f64),
    max_step: f64,
    point: PointSettings,
) -> ewr_solve::FrcSettings {
    ewr_solve::FrcSettings {
        omega_start: w0,
        omega_end: w1,
        step,
        min_step: step / 64.0,
        max_step,
        method: ewr_solve::Continuation::Sequential,
        point,
        max_points: 1000,
        adaptive: None,
        keep_histories: false,
    }
}

/// Off its resonance every contact of the 100-contact 3-D sector is held stuck all period,
/// and the samples where `|r - rho v|` exceeds the bound by less than the hold's margin (the
/// truncated law's rounding of a stuck contact) come and go from point to point: stick
/// fractions of 0.72-0.98 and back to 1. Read as stick-slip, they called for a check of the
/// set at every point (docs/accuracy.md, "Held contacts at the edges"). The rechecks now read
/// a contact the solver holds as stuck all period: the sweep keeps its tolerance against a
/// richer set (all:7 is within 1e-4 of all:15 here) and checks where the response changes.
#[test]
fn contacts_held_stuck_all_period_do_not_call_for_checks() {
    use ewr_model::examples::{Sector, sector};
    use ewr_solve::frc;
    use ewr_solve::setup::{SolveOptions, resolve};
    let setup = |harmonics: &str| {
        let model = sector(&Sector {
            contacts: 100,
            contact_3d: true,
            ..Sector::default()
        });
        let options = SolveOptions {
            harmonics: harmonics.into(),
            receptance: "modal:100".into(),
            ..SolveOptions::default()
        };
        resolve(model, &options).unwrap()
    };
    let (auto, fixed) = (setup("auto"), setup("all:7"));
    let rec = auto.receptance().unwrap();
    let params = auto.params();
    let sweep = |point| sequential((3900.0, 3937.5, 7.5), 7.5, point);
    let a = frc(&rec, &params, &sweep(auto.point.clone()), &mut |_| true).unwrap();
    let r = frc(&rec, &params, &sweep(fixed.point.clone()), &mut |_| true).unwrap();
    assert_eq!(a.len(), 6);
    let mut rounding = 0;
    for (a, r) in a.iter().zip(&r) {
        let (a, r) = (&a.solution, &r.solution);
        assert!(a.status.converged() && r.status.converged());
        let e = (a.dofs.norm_peak - r.dofs.norm_peak).abs() / r.dofs.norm_peak;
        println!(
            "w = {}: {} ({}), error {e:.2e} against all:7",
            a.omega,
            a.set,
            a.estimate
                .as_ref()
                .map_or("kept".into(), |e| format!("estimate {:.2e}", e.relative))
        );
        assert!(e < 0.01, "w = {}: {e}", a.omega);
        // The premise: contacts held stuck whose samples read partly as slip.
        rounding += a
            .stick_fractions()
            .iter()
            .zip(&a.contacts)
            .filter(|(s, c)| **s < 1.0 && c.least_stick_margin >= -ewr_contact::HOLD_MARGIN)
            .count();
    }
    assert!(rounding > 0, "no held contact read as partly slipping");
    let checked = a.iter().filter(|p| p.solution.estimate.is_some()).count();
    assert!(checked <= 2, "{checked} of 6 points checked");
}
