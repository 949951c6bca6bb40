//! Truncation-error estimates and automatic harmonic sets through the binary (issue 29):
//! the warning at a set far too small, `--harmonics auto` reaching the rich answer, its
//! per-point sets in the result files, resuming such a sweep, and the options it refuses.

mod common;

use common::{ewr, s, shipped_model, text};
use std::path::Path;

fn json(args: &[&str]) -> serde_json::Value {
    let o = ewr(args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    serde_json::from_str(&text(&o).0).unwrap()
}

#[test]
fn a_set_far_too_small_is_flagged_and_auto_fixes_it() {
    let m = shipped_model("oscillator-2d");
    let o = ewr(&[
        "solve",
        s(&m),
        "--omega",
        "1",
        "--harmonics",
        "odd:1",
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The set named is the first whose error the rate of the two changes measured (odd:1 to
    // odd:3 to odd:7) predicts within 1 %: odd:15. Checked below against odd:255. The
    // estimate is odd:7's change with the tail beyond it at that rate (83 % without it).
    assert!(
        err.contains("truncation error is 84")
            && err.contains("--harmonics odd:15")
            && err.contains("auto"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The true error is 85 % (odd:255's amplitude). odd:1 has no set below: it is compared
    // with odd:3 and odd:7, the larger change (odd:7's) counts, and the tail beyond odd:7 is
    // added at the rate of the two changes (84.7 %; 83 % without it).
    assert!(j["estimate"]["relative"].as_f64().unwrap() > 0.8);
    assert_eq!(j["estimate"]["harmonics"], "odd:7");
    let rich = json(&[
        "solve",
        s(&m),
        "--omega",
        "1",
        "--harmonics",
        "odd:255",
        "--json",
    ]);
    let auto = json(&[
        "solve",
        s(&m),
        "--omega",
        "1",
        "--harmonics",
        "auto",
        "--json",
    ]);
    // The named set meets 1 %; the one the estimate came from (odd:7, named before the rate
    // was used) does not, nor does 2H + 1 (odd:3, 11 % off).
    let amplitude = |set: &str| {
        json(&[
            "solve",
            s(&m),
            "--omega",
            "1",
            "--harmonics",
            set,
            "--json",
            "--no-estimate",
        ])["amplitude"]
            .as_f64()
            .unwrap()
    };
    let truth = rich["amplitude"].as_f64().unwrap();
    let error = |set: &str| (amplitude(set) - truth).abs() / truth;
    assert!(error("odd:15") < 0.01, "odd:15: {}", error("odd:15"));
    // From odd:3 the rate comes from the set below (odd:1 -> odd:3 -> odd:7): 11.8 % falling
    // by 0.14 a doubling names odd:15 too (a rate read upside down would name odd:7).
    let o = ewr(&["solve", s(&m), "--omega", "1", "--harmonics", "odd:3"]);
    let err = text(&o).1;
    assert!(err.contains("--harmonics odd:15"), "{err}");
    assert!(error("odd:7") > 0.01, "odd:7: {}", error("odd:7"));
    assert_ne!(auto["harmonics"], "odd:1");
    assert!(auto["estimate"]["relative"].as_f64().unwrap() <= 0.01);
    let peak = |j: &serde_json::Value| j["dofs"][0]["peak"].as_f64().unwrap();
    assert!((peak(&auto) - peak(&rich)).abs() < 0.01 * peak(&rich));
    // The tolerance is a fraction of the amplitude.
    let o = ewr(&["solve", s(&m), "--omega", "1", "--harmonics", "auto:2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    assert!(text(&o).1.contains("between 0 and 1"), "{}", text(&o).1);
}

#[test]
fn an_auto_sweep_records_each_points_set_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let m = shipped_model("oscillator-2d");
    let (h5, csv) = (dir.path().join("frc.h5"), dir.path().join("frc.csv"));
    let args = |end: &'static str| -> Vec<String> {
        [
            "frc",
            s(&m),
            "--omega-start",
            "0.3",
            "--omega-end",
            end,
            "--step",
            "0.02",
            "--harmonics",
            "auto",
            "--no-refine",
            "-o",
            s(&h5),
        ]
        .iter()
        .map(|a| a.to_string())
        .collect()
    };
    let run = |a: &[String]| {
        let v: Vec<&str> = a.iter().map(String::as_str).collect();
        ewr(&v)
    };
    let mut full = args("1.2");
    full.extend(["--csv".to_string(), s(&csv).to_string()]);
    let o = run(&full);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let f = hdf5::File::open(&h5).unwrap();
    assert_eq!(
        f.attr("harmonics")
            .unwrap()
            .read_scalar::<hdf5::types::VarLenUnicode>()
            .unwrap()
            .as_str(),
        "auto:0.01"
    );
    let g = f.group("curve_0").unwrap();
    let fset: ewr_hb::HarmonicSet = g
        .attr("friction_harmonics")
        .unwrap()
        .read_scalar::<hdf5::types::VarLenUnicode>()
        .unwrap()
        .as_str()
        .parse()
        .unwrap();
    let hmax = g
        .dataset("harmonics_h_max")
        .unwrap()
        .read_raw::<i64>()
        .unwrap();
    let friction = g.dataset("friction").unwrap();
    assert_eq!(friction.shape(), vec![hmax.len(), 2 * fset.n_coeffs()]);
    assert!(hmax.iter().all(|&h| h as usize <= fset.h_max()));
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .ends_with(",amp_error,amp_error_method,h_max")
    );
    // Each point checked by auto says how, in the CSV and in the file (codes 0 richer, 1 with
    // the tail, 2 from below, -1 none): from below on every set from h = 31, and on sets from
    // h = 15 that the check from below vouched for (docs/accuracy.md, "A check from below
    // first").
    let methods = g
        .dataset("amp_error_method")
        .unwrap()
        .read_raw::<i64>()
        .unwrap();
    let errors = g.dataset("amp_error").unwrap().read_raw::<f64>().unwrap();
    assert!(errors.iter().any(|e| !e.is_nan()));
    for (row, (&code, e)) in table.lines().skip(1).zip(methods.iter().zip(&errors)) {
        let cells: Vec<&str> = row.split(',').collect();
        let name = cells[cells.len() - 2];
        assert_eq!(e.is_nan(), code == -1, "{row}");
        let expected = ["", "richer", "richer-with-tail", "from-below"][(code + 1) as usize];
        assert_eq!(name, expected, "{row}");
        let h: usize = cells[cells.len() - 1].parse().unwrap();
        if code >= 0 {
            assert!(h < 31 || code == 2, "{row}");
            assert!(code != 2 || h >= 15, "{row}");
        }
    }
    // The resonance needs h = 31 here: both kinds of check are on the curve.
    assert!(methods.contains(&2) && methods.contains(&1));
    let points = hmax.len();
    drop(f);
    // Cut short, then resumed to the same end: the same number of points.
    std::fs::remove_file(&h5).unwrap();
    let o = run(&args("0.7"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let mut resumed = args("1.2");
    resumed.push("--resume".to_string());
    let o = run(&resumed);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let f = hdf5::File::open(&h5).unwrap();
    let n = f
        .group("curve_0")
        .unwrap()
        .dataset("omega")
        .unwrap()
        .read_raw::<f64>()
        .unwrap()
        .len();
    assert_eq!(n, points);
    // Arclength follows a fixed set of unknowns.
    let o = ewr(&[
        "frc",
        s(&m),
        "--omega-start",
        "0.3",
        "--omega-end",
        "1.2",
        "--step",
        "0.02",
        "--harmonics",
        "auto",
        "--continuation",
        "arclength",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    assert!(text(&o).1.contains("arclength"), "{}", text(&o).1);
}

/// Counts the marks of inaccurate points in an FRC figure: the legend entry names them.
fn marked(svg: &Path) -> bool {
    std::fs::read_to_string(svg)
        .unwrap()
        .contains("truncation error &gt; 1%")
}

#[test]
fn figures_mark_the_points_whose_estimate_exceeds_one_percent() {
    let m = shipped_model("oscillator-2d");
    let dir = tempfile::tempdir().unwrap();
    let frc = |set: &str, name: &str| {
        let svg = dir.path().join(name);
        let o = ewr(&[
            "frc",
            s(&m),
            "--omega-start",
            "0.9",
            "--omega-end",
            "1.1",
            "--step",
            "0.05",
            "--harmonics",
            set,
            "--estimate",
            "--plot",
            s(&svg),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        svg
    };
    // odd:1 is tens of per cent off near w = 1 (issue 29); odd:59 is within 1 %.
    assert!(marked(&frc("odd:1", "coarse.svg")));
    assert!(!marked(&frc("odd:59", "fine.svg")));
}

#[test]
fn the_amplitude_measure_names_its_columns_and_drops_the_static_part() {
    // single-contact-3d: a static load of 20 presses the mass on the ground (z), so `max`
    // carries the static deflection and `dynamic` does not.
    let m = shipped_model("single-contact-3d");
    let dir = tempfile::tempdir().unwrap();
    let csv = |measure: &str| {
        let p = dir.path().join(format!("{measure}.csv"));
        let o = ewr(&[
            "frc",
            s(&m),
            "--omega-start",
            "2",
            "--omega-end",
            "2.2",
            "--step",
            "0.1",
            "--harmonics",
            "all:7",
            "--no-refine",
            "--amplitude",
            measure,
            "--csv",
            s(&p),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        let t = std::fs::read_to_string(&p).unwrap();
        let mut lines = t.lines();
        let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
        let col = head
            .iter()
            .position(|c| c.starts_with("amp_") && !c.starts_with("amp_w"));
        let col = col.unwrap();
        let amps: Vec<f64> = lines
            .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
            .collect();
        (head, amps)
    };
    let (hmax, max) = csv("max");
    let (hdyn, dynamic) = csv("dynamic");
    assert!(hmax.contains(&"amp_norm".to_string()) && hmax.contains(&"peak_u0".to_string()));
    assert!(hdyn.contains(&"amp_dynamic".to_string()) && hdyn.contains(&"dynamic_u0".to_string()));
    assert_eq!(max.len(), dynamic.len());
    for (a, d) in max.iter().zip(&dynamic) {
        assert!(d < a, "dynamic {d} is not below max {a}");
    }
    let o = ewr(&[
        "solve",
        s(&m),
        "--omega",
        "2",
        "--harmonics",
        "all:7",
        "--amplitude",
        "rms",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--amplitude"), "{}", text(&o).1);
}

#[test]
fn profile_reports_each_phase_with_its_wall_and_cpu_time() {
    let m = shipped_model("oscillator-2d");
    let o = ewr(&[
        "solve",
        s(&m),
        "--omega",
        "1",
        "--harmonics",
        "odd:15",
        "--profile",
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("cpu/wall") && err.contains("jacobian + LU"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let phases = j["profile"].as_array().unwrap();
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    for want in [
        "read model",
        "receptance setup",
        "condensation",
        "jacobian + LU",
    ] {
        assert!(names.contains(&want), "{names:?}");
    }
    for p in phases {
        assert!(p["calls"].as_u64().unwrap() >= 1);
        assert!(p["wall_s"].as_f64().unwrap() >= 0.0 && p["cpu_s"].as_f64().unwrap() >= 0.0);
    }
    // Without the option: no profile.
    let o = ewr(&[
        "solve",
        s(&m),
        "--omega",
        "1",
        "--harmonics",
        "odd:15",
        "--json",
    ]);
    let j: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert!(j.get("profile").is_none());
}
