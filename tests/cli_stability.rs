//! Stability through the command line (docs/stability.md): `ewr solve` reports the Floquet
//! multipliers, equal to the closed form without friction; `ewr frc --stability` marks the
//! points past a fold unstable in its CSV, JSON, HDF5 and figure.

mod common;

use common::{ewr, s, shipped_model, text};

/// single-contact-3d's band through the fold near w = 6.48, at all:15.
const FOLD_BAND: [&str; 8] = [
    "--omega-start",
    "5.6",
    "--omega-end",
    "8",
    "--step",
    "0.05",
    "--harmonics",
    "all:15",
];

#[test]
fn solve_reports_the_multiplier_of_the_damped_linear_oscillator() {
    // oscillator-2d without friction: m = 1, c = 0.01, so both modes decay as exp(-0.005 t).
    let w = 0.8;
    let o = ewr(&[
        "solve",
        s(&shipped_model("oscillator-2d")),
        "--omega",
        "0.8",
        "--mu-n",
        "0",
        "--harmonics",
        "odd:9",
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let st = &v["stability"];
    assert_eq!(st["stable"], true, "{st}");
    let mu = st["max_multiplier"].as_f64().unwrap();
    let want = (-0.005 * std::f64::consts::TAU / w).exp();
    assert!((mu - want).abs() < 1e-8 * want, "{mu} against {want}");
    // --no-stability leaves it out.
    let o = ewr(&[
        "solve",
        s(&shipped_model("oscillator-2d")),
        "--omega",
        "0.8",
        "--harmonics",
        "odd:9",
        "--no-stability",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert!(v.get("stability").is_none_or(|x| x.is_null()));
}

#[test]
fn a_cyclic_sector_is_classified_and_says_against_which_perturbations() {
    // The lumped bladed disk (12 sectors, EO 3): each harmonic on its nodal diameter
    // (docs/stability.md, section 2); the sector's pencil against the annulus's is checked in
    // crates/solve/tests/cyclic.rs.
    let model = shipped_model("bladed-disk");
    let args = ["solve", s(&model), "--omega", "1.21"];
    let o = ewr(&[args.as_slice(), &["--json"]].concat());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let st = &v["stability"];
    assert_eq!(st["classified"], true, "{st}");
    assert_eq!(st["travelling_wave_only"], true, "{st}");
    let mu = st["max_multiplier"].as_f64().unwrap();
    assert!(mu > 0.0 && mu < 1.0, "{st}");
    let o = ewr(&args);
    let (out, _) = text(&o);
    assert!(out.contains("keep the travelling wave"), "{out}");
    // Every inter-sector phase (the annulus's nodal diameters): p = 0 (the travelling
    // wave's, as above) .. N/2; the summary is then the largest over them.
    let o = ewr(&[args.as_slice(), &["--all-phases", "--json"]].concat());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let all = &v["stability"];
    let phases = all["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 7, "{phases:?}");
    let mut largest: f64 = 0.0;
    for (k, ph) in phases.iter().enumerate() {
        assert_eq!(ph["p"], k);
        let m = ph["max_multiplier"].as_f64().unwrap();
        assert!(m > 0.0 && m < 1.0 && ph["stable"] == true, "{ph}");
        largest = largest.max(m);
    }
    assert_eq!(phases[0]["max_multiplier"].as_f64().unwrap(), mu);
    assert_eq!(all["max_multiplier"].as_f64().unwrap(), largest, "{all}");
    assert_eq!(
        all["travelling_wave_only"],
        serde_json::Value::Null,
        "{all}"
    );
    let o = ewr(&[args.as_slice(), &["--all-phases"]].concat());
    assert!(text(&o).0.contains("over every inter-sector phase"));
    // An ordinary model has no other phases: refused as bad input.
    let model = shipped_model("oscillator-2d");
    let o = ewr(&["solve", s(&model), "--omega", "1", "--all-phases"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("not a cyclic sector"));
}

#[test]
fn a_cyclic_sector_sweep_is_classified_against_every_inter_sector_phase() {
    // The union of the families p = 0 .. N/2 is the annulus's (crates/solve/tests/cyclic.rs):
    // per point, the curve's stability is the largest over them, each family in the file.
    let dir = tempfile::tempdir().unwrap();
    let model = shipped_model("bladed-disk");
    let h5 = |name: &str| dir.path().join(name);
    let band = [
        "frc",
        s(&model),
        "--omega-start",
        "1.15",
        "--omega-end",
        "1.25",
        "--step",
        "0.05",
        "--harmonics",
        "odd:15",
        "--stability",
        "--no-refine",
    ];
    let (all, wave) = (h5("all.h5"), h5("wave.h5"));
    let o = ewr(&[band.as_slice(), &["--all-phases", "-o", s(&all)]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let o = ewr(&[band.as_slice(), &["-o", s(&wave)]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let read_f = |path: &std::path::Path, name: &str| -> Vec<f64> {
        let f = hdf5::File::open(path).unwrap();
        f.dataset(&format!("curve_0/{name}"))
            .unwrap()
            .read_raw()
            .unwrap()
    };
    let read_i = |path: &std::path::Path, name: &str| -> Vec<i64> {
        let f = hdf5::File::open(path).unwrap();
        f.dataset(&format!("curve_0/{name}"))
            .unwrap()
            .read_raw()
            .unwrap()
    };
    assert_eq!(read_i(&wave, "travelling_wave_only"), vec![1, 1, 1]);
    assert_eq!(read_i(&all, "travelling_wave_only"), vec![0, 0, 0]);
    let families = read_f(&all, "phase_max_multiplier");
    assert_eq!(families.len(), 3 * 7);
    let wave_mu = read_f(&wave, "max_multiplier");
    let all_mu = read_f(&all, "max_multiplier");
    for (k, row) in families.chunks(7).enumerate() {
        assert!(row.iter().all(|m| *m > 0.0 && *m < 1.0), "{row:?}");
        // p = 0 is the travelling wave's own family.
        assert!((row[0] - wave_mu[k]).abs() < 1e-9, "{row:?} {wave_mu:?}");
        let largest = row.iter().copied().fold(0.0, f64::max);
        assert_eq!(all_mu[k], largest);
    }
    let f = hdf5::File::open(&wave).unwrap();
    assert!(f.dataset("curve_0/phase_max_multiplier").is_err());
    // A tracked peak too: its multiplier is the solution's over every family there.
    let peak = |extra: &[&str]| -> serde_json::Value {
        let base = [
            "peaks",
            s(&model),
            "--param",
            "mu_n",
            "--from",
            "0.5",
            "--to",
            "0.5",
            "--count",
            "1",
            "--omega-start",
            "1.0",
            "--omega-end",
            "1.5",
            "--step",
            "0.02",
            "--harmonics",
            "odd:7",
            "--stability",
            "--json",
        ];
        let o = ewr(&[base.as_slice(), extra].concat());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        serde_json::from_str(&text(&o).0).unwrap()
    };
    let (pw, pa) = (peak(&[]), peak(&["--all-phases"]));
    let (lw, la) = (&pw["locus"][0], &pa["locus"][0]);
    assert_eq!(lw["omega"], la["omega"]);
    let w = la["omega"].as_f64().unwrap().to_string();
    let o = ewr(&[
        "solve",
        s(&model),
        "--omega",
        &w,
        "--harmonics",
        "odd:7",
        "--mu-n",
        "0.5",
        "--all-phases",
        "--no-estimate",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    let phases = v["stability"]["phases"].as_array().unwrap();
    let at = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!((at(&phases[0]["max_multiplier"]) - at(&lw["max_multiplier"])).abs() < 1e-6);
    assert!((at(&v["stability"]["max_multiplier"]) - at(&la["max_multiplier"])).abs() < 1e-6);
    // --all-phases needs --stability, and a cyclic sector.
    let o = ewr(&[&band[..band.len() - 2], &["--no-refine", "--all-phases"]].concat());
    assert_eq!(o.status.code(), Some(2));
    let plain = shipped_model("oscillator-2d");
    let o = ewr(&[
        "frc",
        s(&plain),
        "--omega-start",
        "1",
        "--omega-end",
        "1.1",
        "--step",
        "0.05",
        "--stability",
        "--all-phases",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("not a cyclic sector"));
}

#[test]
fn frc_marks_the_branch_past_the_fold_unstable() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("f.csv");
    let png = dir.path().join("f.svg");
    let h5 = dir.path().join("f.h5");
    let model = shipped_model("single-contact-3d");
    let mut args = vec!["frc", s(&model)];
    args.extend(FOLD_BAND);
    args.extend([
        "--continuation",
        "arclength",
        "--stability",
        "--csv",
        s(&csv),
        "--plot",
        s(&png),
        "-o",
        s(&h5),
        "--json",
    ]);
    let o = ewr(&args);
    let (out, err) = text(&o);
    // The curve turns back at the fold and leaves the band at its start: exit 1, all written.
    assert_eq!(o.status.code(), Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let changes = v["stability_changes"][0].as_array().unwrap();
    assert!(!changes.is_empty(), "{v}");
    assert!(changes[0]["crossing"].as_str().unwrap().contains("+1"));
    assert_eq!(changes[0]["to_unstable"], true);
    let turn = v["turning_points"][0][0].as_f64().unwrap();
    let at = changes[0]["omega"].as_f64().unwrap();
    assert!((turn - at).abs() < 0.05, "fold at {turn}, change at {at}");
    let table = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "stable").unwrap();
    let flags: Vec<&str> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap())
        .collect();
    assert_eq!(flags[0], "1");
    assert!(flags.contains(&"0"));
    let svg = std::fs::read_to_string(&png).unwrap();
    assert!(svg.contains("unstable"));
    let f = hdf5::File::open(&h5).unwrap();
    let stable: Vec<i64> = f.dataset("curve_0/stable").unwrap().read_raw().unwrap();
    assert_eq!(
        stable.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
        flags
    );
    let crossing: Vec<i64> = f
        .dataset("curve_0/stability_changes/crossing")
        .unwrap()
        .read_raw()
        .unwrap();
    assert_eq!(crossing.first(), Some(&1));
}

#[test]
fn peaks_flags_a_maximum_past_the_fold_that_a_sweep_never_reaches() {
    // single-contact-3d at its own forcing: the sequential sweep (a stepped sine) turns at the
    // fold near w = 6.48 with every point stable; the refined maximum `ewr peaks` climbs to
    // lies higher, on the branch past the fold, where a multiplier is outside the unit circle.
    let dir = tempfile::tempdir().unwrap();
    let model = shipped_model("single-contact-3d");
    let csv = dir.path().join("frc.csv");
    let mut args = vec![
        "frc",
        s(&model),
        "--stability",
        "--no-refine",
        "--csv",
        s(&csv),
    ];
    args.extend(FOLD_BAND);
    // Past the fold the sweep loses points (exit 1, every point written with its status).
    let o = ewr(&args);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o).1);
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|c| *c == name).unwrap();
    let (mut swept_max, mut classified) = (0.0f64, 0);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f[col("converged")] != "1" {
            continue;
        }
        assert_ne!(
            f[col("stable")],
            "0",
            "the sweep has an unstable point: {line}"
        );
        classified += usize::from(f[col("stable")] == "1");
        swept_max = swept_max.max(f[col("amp_norm")].parse().unwrap());
    }
    assert!(classified > 10);
    let peaks_csv = dir.path().join("peaks.csv");
    let h5 = dir.path().join("peaks.h5");
    let mut args = vec![
        "peaks",
        s(&model),
        "--param",
        "forcing",
        "--from",
        "1",
        "--to",
        "1",
        "--count",
        "1",
        "--stability",
        "--csv",
        s(&peaks_csv),
        "-o",
        s(&h5),
    ];
    args.extend(FOLD_BAND);
    let o = ewr(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("peak(s) are unstable"), "{out}");
    let table = std::fs::read_to_string(&peaks_csv).unwrap();
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let f: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|c| *c == name).unwrap();
    let amp: f64 = f[col("amplitude")].parse().unwrap();
    let mu: f64 = f[col("max_multiplier")].parse().unwrap();
    assert_eq!(f[col("stable")], "0", "{table}");
    assert!(mu > 1.5, "{table}");
    assert!(
        amp > 1.02 * swept_max,
        "the peak {amp} is no higher than the sweep's {swept_max}"
    );
    let file = hdf5::File::open(&h5).unwrap();
    let stable: Vec<i64> = file.dataset("stable").unwrap().read_raw().unwrap();
    assert_eq!(stable, vec![0]);
}

#[test]
fn a_contact_holding_the_whole_structure_is_stable() {
    // oscillator-2d with a friction bound far above the forcing: its one mass is held by the
    // contact all period, no free motion is left (docs/stability.md, section 4).
    let o = ewr(&[
        "solve",
        s(&shipped_model("oscillator-2d")),
        "--omega",
        "1.0",
        "--mu-n",
        "30",
        "--harmonics",
        "odd:31",
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["stability"]["stable"], true, "{out}");
    assert_eq!(v["stability"]["max_multiplier"], 0.0, "{out}");
}

#[test]
fn a_cyclic_study_is_classified_against_every_inter_sector_phase() {
    // solver.all_phases: each case's points as `ewr frc --stability --all-phases` gives them.
    let dir = tempfile::tempdir().unwrap();
    let model = shipped_model("bladed-disk");
    let study = dir.path().join("disk.toml");
    let write = |solver: &str| {
        std::fs::write(
            &study,
            format!(
                "title = \"disk\"\nmodel = {:?}\n[frequency]\nstart = 1.15\nend = 1.25\n\
                 step = 0.05\n[solver]\nharmonics = \"odd:7\"\n{solver}\n[grid]\n\
                 forcing_scale = [1.0]\n",
                s(&model)
            ),
        )
        .unwrap();
    };
    write("stability = true\nall_phases = true");
    let out = dir.path().join("disk.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let f = hdf5::File::open(&out).unwrap();
    let g = f.group("cases/case_00000").unwrap();
    let omega: Vec<f64> = g.dataset("omega").unwrap().read_raw().unwrap();
    let mult: Vec<f64> = g.dataset("max_multiplier").unwrap().read_raw().unwrap();
    let frc = dir.path().join("frc.h5");
    let o = ewr(&[
        "frc",
        s(&model),
        "--omega-start",
        "1.15",
        "--omega-end",
        "1.25",
        "--step",
        "0.05",
        "--harmonics",
        "odd:7",
        "--no-refine",
        "--stability",
        "--all-phases",
        "-o",
        s(&frc),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let f = hdf5::File::open(&frc).unwrap();
    let w: Vec<f64> = f.dataset("curve_0/omega").unwrap().read_raw().unwrap();
    let m: Vec<f64> = f
        .dataset("curve_0/max_multiplier")
        .unwrap()
        .read_raw()
        .unwrap();
    let families: Vec<f64> = f
        .dataset("curve_0/phase_max_multiplier")
        .unwrap()
        .read_raw()
        .unwrap();
    assert_eq!(omega.len(), w.len());
    for k in 0..w.len() {
        assert!((omega[k] - w[k]).abs() < 1e-12);
        assert!((mult[k] - m[k]).abs() < 1e-9, "{mult:?} {m:?}");
        // Above the travelling wave's own family wherever another phase is less damped.
        assert!(mult[k] >= families[7 * k] - 1e-12);
    }
    // all_phases needs stability, and a cyclic sector.
    write("all_phases = true");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("solver.stability"), "{}", text(&o).1);
}

#[test]
fn a_study_classifies_its_points_and_the_fold_is_where_they_turn_unstable() {
    // `solver.stability = true`: the study's arclength curve through single-contact-3d's fold
    // is classified point by point; stable up to the turning point in frequency, unstable
    // on the branch past it (a multiplier crosses +1 at a fold), as `ewr frc --stability`.
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("fold.toml");
    let model = shipped_model("single-contact-3d");
    std::fs::write(
        &study,
        format!(
            "title = \"fold\"\nmodel = {:?}\n[frequency]\nstart = 5.6\nend = 8\nstep = 0.05\n\
             continuation = \"arclength\"\n[solver]\nharmonics = \"all:15\"\nstability = true\n\
             [grid]\nforcing_scale = [1.0]\n",
            s(&model)
        ),
    )
    .unwrap();
    let out = dir.path().join("fold.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o).1);
    let f = hdf5::File::open(&out).unwrap();
    let g = f.group("cases/case_00000").unwrap();
    let omega: Vec<f64> = g.dataset("omega").unwrap().read_raw().unwrap();
    let stable: Vec<i64> = g.dataset("stable").unwrap().read_raw().unwrap();
    let mult: Vec<f64> = g.dataset("max_multiplier").unwrap().read_raw().unwrap();
    assert_eq!((stable.len(), mult.len()), (omega.len(), omega.len()));
    assert_eq!(stable[0], 1);
    let turn = (1..omega.len())
        .find(|&i| omega[i] < omega[i - 1])
        .expect("the curve turns back at the fold");
    let first_unstable = stable
        .iter()
        .position(|&c| c == 0)
        .expect("unstable points");
    assert!(
        (omega[turn - 1] - omega[first_unstable]).abs() < 0.05,
        "fold at w = {}, first unstable point at w = {}",
        omega[turn - 1],
        omega[first_unstable]
    );
    for i in 0..omega.len() {
        assert_eq!(
            stable[i] == 0,
            mult[i] > 1.0,
            "point {i}: {} {}",
            stable[i],
            mult[i]
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("fold.csv")).unwrap();
    assert!(
        csv.lines().next().unwrap().ends_with(",peak_stable"),
        "{csv}"
    );
}
