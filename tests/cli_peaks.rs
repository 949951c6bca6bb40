//! `ewr peaks` and the refined peaks of `ewr frc` (issue 15), against brute force: full
//! frequency response curves on a grid of the parameter.

mod common;

use common::{ewr, shipped_model, text};

fn json(args: &[&str]) -> serde_json::Value {
    let o = ewr(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "ewr {args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

const SOLVER: [&str; 4] = ["--harmonics", "odd:15", "--dofs", "u11,u12"];

/// The highest refined peak's amplitude of each `frc` curve, one curve per `mu_n`.
fn brute_force(mu: &[f64]) -> Vec<f64> {
    highest_peaks(mu).into_iter().map(|p| p.1).collect()
}

/// The highest refined peak `(omega, amplitude)` of each `frc` curve, one curve per `mu_n`.
fn highest_peaks(mu: &[f64]) -> Vec<(f64, f64)> {
    let model = shipped_model("two-mass-damper");
    let list: Vec<String> = mu.iter().map(|m| m.to_string()).collect();
    let list = list.join(",");
    let mut args = vec![
        "frc",
        model.to_str().unwrap(),
        "--omega-start",
        "0.2",
        "--omega-end",
        "2.6",
        "--step",
        "0.005",
        "--mu-n",
        &list,
        "--json",
    ];
    args.extend(SOLVER);
    let v = json(&args);
    v["peaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|curve| {
            curve
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p["omega"].as_f64().unwrap(),
                        p["amplitude"].as_f64().unwrap(),
                    )
                })
                .fold((f64::NAN, 0.0), |a, b| if b.1 > a.1 { b } else { a })
        })
        .collect()
}

#[test]
fn tracked_peaks_and_optimum_match_full_curves() {
    let model = shipped_model("two-mass-damper");
    let mut args = vec![
        "peaks",
        model.to_str().unwrap(),
        "--param",
        "mu_n",
        "--from",
        "10",
        "--to",
        "60",
        "--count",
        "6",
        "--omega-start",
        "0.2",
        "--omega-end",
        "2.6",
        "--step",
        "0.02",
        "--json",
    ];
    args.extend(SOLVER);
    let v = json(&args);
    let locus = v["locus"].as_array().unwrap();
    let at = |k: usize| {
        (
            locus[k]["value"].as_f64().unwrap(),
            locus[k]["amplitude"].as_f64().unwrap(),
        )
    };
    // The locus at three of its values against the largest point of a dense sweep (step
    // 2e-4, no refinement) around the tracked peak.
    let dir = tempfile::tempdir().unwrap();
    for k in [0, locus.len() / 2, locus.len() - 1] {
        let (m, a) = at(k);
        let w = locus[k]["omega"].as_f64().unwrap();
        let csv = dir.path().join(format!("dense-{k}.csv"));
        let (lo, hi, mu) = (
            format!("{}", w - 0.01),
            format!("{}", w + 0.01),
            m.to_string(),
        );
        let mut dense = vec![
            "frc",
            model.to_str().unwrap(),
            "--omega-start",
            &lo,
            "--omega-end",
            &hi,
            "--step",
            "2e-4",
            "--mu-n",
            &mu,
            "--no-refine",
            "--csv",
            csv.to_str().unwrap(),
        ];
        dense.extend(SOLVER);
        let o = ewr(&dense);
        assert!(o.status.success(), "{}", text(&o).1);
        let best = std::fs::read_to_string(&csv)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(5).unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        assert!(
            (a / best - 1.0).abs() < 1e-4,
            "mu_n = {m}: tracked {a} at w = {w}, dense sweep {best}"
        );
    }
    // The optimum against a brute-force grid around it: no grid value does better, and the
    // grid's best is next to it.
    let opt = v["optimum"]["value"].as_f64().unwrap();
    let opt_amp = v["optimum"]["amplitude"].as_f64().unwrap();
    let grid: Vec<f64> = (-4..=4).map(|i| opt * (1.0 + 0.01 * i as f64)).collect();
    let amps = brute_force(&grid);
    let (best_k, best) = amps
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .unwrap();
    assert!(
        opt_amp <= best * (1.0 + 1e-4),
        "optimum {opt_amp} at {opt}, grid best {best} at {}",
        grid[best_k]
    );
    assert!(
        (grid[best_k] / opt - 1.0).abs() <= 0.0101,
        "grid best at {} (peak {best}), optimum at {opt}",
        grid[best_k]
    );
}

#[test]
fn the_highest_peak_changes_resonance_where_full_curves_say() {
    // As the damper sticks, the highest peak moves from the slipping system's resonance
    // (0.618) to the stuck one's (1.6): the locus says between which values, and full curves
    // at those two values have their highest peaks on different resonances, where the locus
    // puts them. The figure marks it.
    let model = shipped_model("two-mass-damper");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("locus.svg");
    let mut args = vec![
        "peaks",
        model.to_str().unwrap(),
        "--param",
        "mu_n",
        "--from",
        "1",
        "--to",
        "20",
        "--count",
        "5",
        "--no-optimum",
        "--omega-start",
        "0.2",
        "--omega-end",
        "2.6",
        "--step",
        "0.02",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ];
    args.extend(SOLVER);
    let v = json(&args);
    let locus = v["locus"].as_array().unwrap();
    let get = |k: usize, f: &str| locus[k][f].as_f64().unwrap();
    let switched: Vec<usize> = (0..locus.len())
        .filter(|&k| locus[k]["switched"].as_bool().unwrap())
        .collect();
    assert_eq!(switched.len(), 1, "{locus:#?}");
    let k = switched[0];
    let full = highest_peaks(&[get(k - 1, "value"), get(k, "value")]);
    for (j, (w, a)) in [k - 1, k].into_iter().zip(&full) {
        assert!(
            (get(j, "omega") - w).abs() < 5e-3 && (get(j, "amplitude") / a - 1.0).abs() < 1e-3,
            "locus peak {} at w = {}, full curve's highest {a} at {w}",
            get(j, "amplitude"),
            get(j, "omega")
        );
    }
    assert!(
        full[0].0 < 0.7 && full[1].0 > 1.5,
        "no change of resonance between {:?} and {:?}",
        full[0],
        full[1]
    );
    // Elsewhere the peak frequency moves little.
    for w in locus.windows(2) {
        let dw = (w[1]["omega"].as_f64().unwrap() - w[0]["omega"].as_f64().unwrap()).abs();
        assert_eq!(dw > 0.5, w[1]["switched"].as_bool().unwrap(), "{w:#?}");
    }
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("two-mass-damper: resonance peak against mu_n"));
    assert!(svg.contains("highest peak changes resonance"));
}

#[test]
fn without_friction_the_peak_is_the_linear_resonance() {
    // mu N = 0 with the projection law: DOF u1 of the oscillator is m = 1, k = 1, c = 0.01
    // under 10 cos(w t); its FRF peaks at w^2 = 1 - c^2/2 with 10 / (c sqrt(1 - c^2/4)).
    let model = shipped_model("oscillator-2d");
    let v = json(&[
        "frc",
        model.to_str().unwrap(),
        "--omega-start",
        "0.5",
        "--omega-end",
        "1.5",
        "--step",
        "0.05",
        "--mu-n",
        "0",
        "--law",
        "projection",
        "--harmonics",
        "odd:1",
        "--samples",
        "4096",
        "--dofs",
        "u1",
        "--json",
    ]);
    let peaks = v["peaks"][0].as_array().unwrap();
    assert_eq!(peaks.len(), 1, "{peaks:?}");
    let c: f64 = 0.01;
    let w = peaks[0]["omega"].as_f64().unwrap();
    let a = peaks[0]["amplitude"].as_f64().unwrap();
    assert!((w / (1.0 - c * c / 2.0).sqrt() - 1.0).abs() < 1e-6, "{w}");
    assert!(
        (a * c * (1.0 - c * c / 4.0).sqrt() / 10.0 - 1.0).abs() < 1e-6,
        "{a}"
    );
}

/// `(omega, amplitude)` points.
type Points = Vec<(f64, f64)>;

/// `(omega, amplitude)` of the first curve's refined peaks and phase resonances.
fn peaks_and_phase(j: &serde_json::Value) -> (Points, Points) {
    let get = |key: &str| -> Points {
        j[key][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["omega"].as_f64().unwrap(),
                    p["amplitude"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    (get("peaks"), get("phase_resonances"))
}

#[test]
fn phase_resonance_is_the_linear_natural_frequency_and_parts_from_the_peak_with_friction() {
    // Linear limit (mu N = 0), u1 alone: phase resonance exactly at w_n = 1, amplitude peak at
    // w_n sqrt(1 - 2 zeta^2) with zeta = c / (2 sqrt(k m)) = 0.005.
    let osc = shipped_model("oscillator-2d");
    let dir = tempfile::tempdir().unwrap();
    let h5 = dir.path().join("frc.h5");
    let j = json(&[
        "frc",
        osc.to_str().unwrap(),
        "--mu-n",
        "0",
        "--omega-start",
        "0.953",
        "--omega-end",
        "1.05",
        "--step",
        "0.01",
        "--harmonics",
        "odd:1",
        "--dofs",
        "u1",
        "-o",
        h5.to_str().unwrap(),
        "--json",
    ]);
    let (peaks, phase) = peaks_and_phase(&j);
    assert_eq!(phase.len(), 1, "{j}");
    assert!((phase[0].0 - 1.0).abs() < 1e-8, "{phase:?}");
    // The result file has them too.
    let f = hdf5::File::open(&h5).unwrap();
    let stored = f
        .dataset("curve_0/phase_resonances/omega")
        .unwrap()
        .read_raw::<f64>()
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert!(
        (stored[0] - phase[0].0).abs() < 1e-14,
        "{stored:?} {phase:?}"
    );
    let zeta: f64 = 0.005;
    assert!(
        (peaks[0].0 - (1.0 - 2.0 * zeta * zeta).sqrt()).abs() < 1e-6,
        "{peaks:?}"
    );
    // Seed 004: on blade-damper-blade the two criteria agree while friction damps little
    // (mu N = 2) and part where it damps strongly (mu N = 15).
    let bdb = shipped_model("blade-damper-blade");
    let run = |mu: &str| {
        let j = json(&[
            "frc",
            bdb.to_str().unwrap(),
            "--mu-n",
            mu,
            "--omega-start",
            "1100",
            "--omega-end",
            "1400",
            "--step",
            "5",
            "--harmonics",
            "odd:15",
            "--dofs",
            "1",
            "--json",
        ]);
        let (peaks, phase) = peaks_and_phase(&j);
        (peaks[0], phase[0])
    };
    let (pk, pr) = run("2");
    assert!((pk.0 - pr.0).abs() < 1e-4 * pk.0, "mu N = 2: {pk:?} {pr:?}");
    let (pk, pr) = run("15");
    assert!(
        (pk.0 - pr.0).abs() > 1e-3 * pk.0,
        "mu N = 15: {pk:?} {pr:?}"
    );
    assert!(pr.1 < pk.1, "the peak is the maximum: {pk:?} {pr:?}");
}

#[test]
fn a_flat_optimum_is_reported_with_where_the_contact_starts_to_stick() {
    // oscillator-2d: a unit mass on springs to ground, a rigid 2-D friction contact to ground,
    // forced by 10 cos(w t) in both directions. From mu N = 10 sqrt(2) = 14.142 on, the
    // friction force balances the load at every instant and the mass does not move at any
    // frequency: every larger mu N gives the same (round-off) peak, and none below it does.
    let model = shipped_model("oscillator-2d");
    let args = [
        "peaks",
        model.to_str().unwrap(),
        "--param",
        "mu_n",
        "--from",
        "1",
        "--to",
        "30",
        "--count",
        "8",
        "--omega-start",
        "0.2",
        "--omega-end",
        "2.6",
        "--step",
        "0.05",
        "--harmonics",
        "odd:15",
    ];
    let o = ewr(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("the optimum is flat") && out.contains("every contact sticks"),
        "{out}"
    );
    let v = json(&[&args[..], &["--json"]].concat());
    let threshold = 10.0 * 2f64.sqrt();
    let plateau = &v["optimum"]["plateau"];
    let (from, to) = (plateau[0].as_f64().unwrap(), plateau[1].as_f64().unwrap());
    assert_eq!(to, 30.0, "{plateau}");
    // Located by bisection between grid values 4.1 apart: within 1 % of the closed form, and
    // never below it (there the mass slips and the peak is finite).
    assert!(
        from >= threshold && from <= 1.01 * threshold,
        "the flat optimum starts at {from}, the mass sticks from {threshold}"
    );
    let optimum = v["optimum"]["value"].as_f64().unwrap();
    assert!(
        (from..=to).contains(&optimum),
        "{optimum} outside {plateau}"
    );
    for p in v["locus"].as_array().unwrap() {
        let mu = p["value"].as_f64().unwrap();
        let amp = p["amplitude"].as_f64().unwrap();
        if mu < threshold {
            assert!(amp > 1e-3, "mu N = {mu} below the threshold: peak {amp}");
        } else {
            assert!(amp < 1e-9, "mu N = {mu} above the threshold: peak {amp}");
        }
    }
}

/// A locus condensed by modes that drop a damping matrix's coupling says so once, also where a
/// mass parameter builds a new condensation at every value (docs/receptance.md).
#[test]
fn a_locus_by_modes_says_once_when_the_damping_matrix_couples_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dashpot.h5");
    let model = common::dashpot_chain();
    ewr_model::write(&path, &model).unwrap();
    for (param, from, to) in [("mu_n", "0.05", "0.2"), ("mass:1", "1.1", "1.3")] {
        let o = ewr(&[
            "peaks",
            path.to_str().unwrap(),
            "--param",
            param,
            "--from",
            from,
            "--to",
            to,
            "--count",
            "4",
            "--omega-start",
            "0.2",
            "--omega-end",
            "0.7",
            "--step",
            "0.01",
            "--harmonics",
            "odd:7",
            "--receptance",
            "modal:3",
            "--no-optimum",
        ]);
        let (_, err) = text(&o);
        assert!(o.status.success(), "{param}: {err}");
        assert_eq!(err.matches("couples them").count(), 1, "{param}: {err}");
        assert_eq!(
            err.contains("more parameter value"),
            param.starts_with("mass"),
            "{param}: {err}"
        );
    }
}
