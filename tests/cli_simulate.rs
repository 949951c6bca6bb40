//! End-to-end tests of `ewr simulate` and `ewr compare`: outputs, exit codes, bad input.

use std::path::{Path, PathBuf};

#[path = "common/mod.rs"]
mod common;
use common::{csv_table as table, ewr, s, text};

fn model(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(format!("{name}.h5"))
}

#[test]
fn simulate_writes_csv_hdf5_plot_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let (ts, h5, png, svg) = (
        dir.path().join("ts.csv"),
        dir.path().join("out/sim.h5"),
        dir.path().join("fig.png"),
        dir.path().join("fig.svg"),
    );
    let m = model("oscillator-2d");
    let o = ewr(&[
        "simulate",
        s(&m),
        "--omega",
        "0.1",
        "--dt",
        "4e-3",
        "--json",
        "--timeseries",
        s(&ts),
        "-o",
        s(&h5),
        "--plot",
        s(&png),
        "--dofs",
        "u1,1",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["converged"], true);
    assert!(j["periods_run"].as_u64().unwrap() >= 2);
    assert_eq!(j["omega"], 0.1);
    let c = &j["contacts"][0];
    // Seed 000 Fig. 8: four stick phases per period (two long, two short).
    assert_eq!(c["stick_intervals"].as_array().unwrap().len(), 4, "{c}");
    assert!(c["max_coulomb_violation"].as_f64().unwrap() < 1e-12);
    let csv = std::fs::read_to_string(&ts).unwrap();
    assert!(
        csv.starts_with("t,w0_1,w0_2,v0_1,v0_2,r0_1,r0_2,state0,u0,u1\n"),
        "{}",
        &csv[..80]
    );
    assert_eq!(csv.lines().count(), 1 + 15708);
    assert!(h5.exists() && png.exists());
    // SVG too, and the text summary.
    let o = ewr(&[
        "simulate",
        s(&m),
        "--omega",
        "0.1",
        "--dt",
        "1e-2",
        "--plot",
        s(&svg),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("steady state: after") && out.contains("contact 0:"),
        "{out}"
    );
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
}

#[test]
fn compare_reports_differences_and_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let m = model("two-mass-damper");
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    for (f, dt) in [(&a, "2e-3"), (&b, "1e-3")] {
        let o = ewr(&[
            "simulate",
            s(&m),
            "--omega",
            "0.303",
            "--dt",
            dt,
            "--timeseries",
            s(f),
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let o = ewr(&["compare", s(&a), s(&b)]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(out.contains("r0_1") && out.contains("max rel"), "{out}");
    // Halving dt moves the solution by a first-order amount: under 10 % RMS, but not 1e-6.
    let o = ewr(&["compare", s(&a), s(&b), "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for c in j.as_array().unwrap() {
        assert!(c["rms_rel_diff"].as_f64().unwrap() < 0.1, "{c}");
    }
    assert_eq!(
        ewr(&["compare", s(&a), s(&b), "--tol", "1e-6"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        ewr(&["compare", s(&a), s(&a), "--tol", "1e-12"])
            .status
            .code(),
        Some(0)
    );
    // Missing file, not a CSV, bad tolerance: bad input.
    let junk = dir.path().join("junk.csv");
    std::fs::write(&junk, "t,x\n1,oops\n").unwrap();
    for args in [
        vec!["compare", s(&a), "/nonexistent.csv"],
        vec!["compare", s(&a), s(&junk)],
        vec!["compare", s(&a), s(&b), "--tol", "nan"],
    ] {
        let o = ewr(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {:?}", text(&o));
    }
}

#[test]
fn simulate_rejects_bad_input_with_exit_2() {
    let m = model("oscillator-2d");
    let dir = tempfile::tempdir().unwrap();
    let bad_plot = dir.path().join("fig.pdf");
    let cases: Vec<Vec<&str>> = vec![
        vec!["simulate", "/nonexistent/model.h5", "--omega", "1"],
        vec!["simulate", s(&m), "--omega", "0"],
        vec!["simulate", s(&m), "--omega", "-1"],
        vec!["simulate", s(&m), "--omega", "NaN"],
        vec!["simulate", s(&m), "--omega", "1", "--dt", "0"],
        vec!["simulate", s(&m), "--omega", "1", "--dt", "-1e-3"],
        vec!["simulate", s(&m), "--omega", "1", "--dt", "nan"],
        vec!["simulate", s(&m), "--omega", "1", "--dt", "1"],
        vec!["simulate", s(&m), "--omega", "1", "--tol", "0"],
        vec!["simulate", s(&m), "--omega", "1", "--mu-n", "-2"],
        vec!["simulate", s(&m), "--omega", "1", "--static-factor", "0.5"],
        vec!["simulate", s(&m), "--omega", "1", "--periods", "0"],
        vec!["simulate", s(&m), "--omega", "1", "--dofs", "u9"],
        vec!["simulate", s(&m), "--omega", "1", "--jenkins", "0"],
        vec!["simulate", s(&m), "--omega", "1", "--plot", s(&bad_plot)],
        vec!["simulate", s(&m)],
        // Stepped sines: the grid incomplete, out of range, or beside --omega.
        vec![
            "simulate",
            s(&m),
            "--omega-start",
            "0.1",
            "--omega-end",
            "0.2",
        ],
        vec!["simulate", s(&m), "--omega-start", "0.1", "--step", "0.1"],
        vec!["simulate", s(&m), "--omega-end", "0.2", "--step", "0.1"],
        vec![
            "simulate",
            s(&m),
            "--omega",
            "1",
            "--omega-start",
            "0.1",
            "--omega-end",
            "0.2",
            "--step",
            "0.1",
        ],
        vec![
            "simulate",
            s(&m),
            "--omega-start",
            "0",
            "--omega-end",
            "0.2",
            "--step",
            "0.1",
        ],
        vec![
            "simulate",
            s(&m),
            "--omega-start",
            "0.1",
            "--omega-end",
            "0.2",
            "--step",
            "-0.1",
        ],
        vec![
            "simulate",
            s(&m),
            "--omega-start",
            "0.1",
            "--omega-end",
            "NaN",
            "--step",
            "0.1",
        ],
        vec![
            "simulate",
            s(&m),
            "--omega-start",
            "0.1",
            "--omega-end",
            "100",
            "--step",
            "1e-6",
        ],
        vec!["simulate", s(&m), "--omega", "1", "--csv", "x.csv"],
        // A time step too coarse for the sweep's highest frequency, refused before any run.
        vec![
            "simulate",
            s(&m),
            "--omega-start",
            "0.5",
            "--omega-end",
            "40.5",
            "--step",
            "20",
            "--dt",
            "0.02",
        ],
    ];
    for args in cases {
        let o = ewr(&args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}\n{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn simulate_not_steady_is_exit_1_with_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("ts.csv");
    let m = model("two-mass-damper");
    let o = ewr(&[
        "simulate",
        s(&m),
        "--omega",
        "0.303",
        "--dt",
        "1e-2",
        "--periods",
        "2",
        "--timeseries",
        s(&ts),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("no periodic steady state"), "{err}");
    assert!(ts.exists());
}

#[test]
fn simulate_massless_damper_and_jenkins_option() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m0.h5");
    let o = ewr(&[
        "model",
        "example",
        "two-mass-damper",
        "--damper-mass",
        "0",
        "-o",
        s(&m),
    ]);
    assert!(o.status.success());
    let o = ewr(&[
        "simulate",
        s(&m),
        "--omega",
        "0.303",
        "--dt",
        "2e-3",
        "--json",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["contacts"][0]["stick_intervals"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Jenkins contacts on the rigid example: the contact now reports the slider.
    let o = ewr(&[
        "simulate",
        s(&model("two-mass-damper")),
        "--omega",
        "0.303",
        "--dt",
        "2e-3",
        "--jenkins",
        "50",
        "--json",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["contacts"][0]["stick_intervals"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(j["contacts"][0]["max_coulomb_violation"].as_f64().unwrap() < 1e-10);
    // Static bound above the sliding force on the rigid contact.
    let o = ewr(&[
        "simulate",
        s(&model("oscillator-2d")),
        "--omega",
        "0.1",
        "--dt",
        "4e-3",
        "--static-factor",
        "1.2",
        "--json",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["static_factor"], 1.2);
    assert_eq!(j["contacts"][0]["static_bound"].as_f64().unwrap(), 9.6);
}

/// A model-format-v2 file with a 3-D contact: a mass pressed on a rigid ground by a static
/// force and pulled off once per period (the `lifting` case of
/// crates/simulate/tests/contact3d.rs), 1-D friction on a second DOF.
fn lifting_model(path: &Path, k_t: bool) {
    use ewr_model::{Contacts, Kinematics, ModelBuilder, NormalContacts};
    let mut contacts = Contacts::to_ground(1, vec![0], vec![0.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Dofs {
            dofs: vec![1],
            other: None,
        },
        g0: vec![0.0],
        mu: vec![0.5],
        k_n: None,
        load: None,
    });
    if k_t {
        contacts.k_t = Some(vec![50.0]);
    }
    let model = ModelBuilder::new(2)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .spring_to_ground(0, 4.0)
        .damper_to_ground(0, 0.1)
        .contacts(contacts)
        .force(0, 1, 3.0, 0.0)
        .force(1, 0, -1.0, 0.0)
        .force(1, 1, 2.0, 0.0)
        .build()
        .unwrap();
    ewr_model::write(path, &model).unwrap();
}

#[test]
fn simulate_3d_contact_reports_normal_force_gap_and_separation() {
    let dir = tempfile::tempdir().unwrap();
    let (m, ts, h5) = (
        dir.path().join("lift.h5"),
        dir.path().join("ts.csv"),
        dir.path().join("sim.h5"),
    );
    lifting_model(&m, false);
    let args = ["simulate", s(&m), "--omega", "1", "--dt", "2e-3"];
    let o = ewr(&[&args[..], &["--json", "--timeseries", s(&ts), "-o", s(&h5)]].concat());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let c = &j["contacts"][0];
    assert_eq!(
        c["separation_intervals"].as_array().unwrap().len(),
        1,
        "{c}"
    );
    assert!(c["max_loaded_gap"].as_f64().unwrap() < 1e-12, "{c}");
    assert!(j["energy"]["impact"].as_f64().unwrap() > 0.0, "{j}");
    let csv = std::fs::read_to_string(&ts).unwrap();
    assert!(
        csv.starts_with("t,w0_1,v0_1,r0_1,n0,g0,state0\n"),
        "{}",
        &csv[..60]
    );
    let f = hdf5::File::open(&h5).unwrap();
    let lambda = f.dataset("time/lambda").unwrap().read_2d::<f64>().unwrap();
    let state = f.dataset("time/state").unwrap().read_2d::<u8>().unwrap();
    assert_eq!(lambda.shape(), state.shape());
    assert!((0..3u8).all(|s| state.iter().any(|&x| x == s)));
    let sep = f
        .dataset("contacts/separation_intervals")
        .unwrap()
        .read_2d::<f64>()
        .unwrap();
    assert_eq!(sep.shape(), [1, 2]);
    // The text summary names the separation; --mu-n has no meaning for such contacts.
    let o = ewr(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("separated") && out.contains("impacts"),
        "{out}"
    );
    let o = ewr(&[&args[..], &["--mu-n", "1"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--mu-n"), "{:?}", text(&o));
    // Contact stiffness k_t in the file: sliders are built, --jenkins on top is refused.
    lifting_model(&m, true);
    let o = ewr(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{:?}", text(&o));
    let o = ewr(&[&args[..], &["--jenkins", "10"]].concat());
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

#[test]
fn a_stepped_sine_measures_the_curve_that_frc_computes() {
    // two-mass-damper through its two resonances (0.6 and 0.9 rad/s), one frequency from the
    // last one's state: the time integration and the harmonic balance are independent
    // methods, which agree within 0.3 % at dt = T / 65536 (the integrator's first order in dt
    // at T / 4096 here: 1 %).
    let dir = tempfile::tempdir().unwrap();
    let (sim, frc, png) = (
        dir.path().join("stepped.csv"),
        dir.path().join("frc.csv"),
        dir.path().join("stepped.png"),
    );
    let m = model("two-mass-damper");
    let grid = [
        "--omega-start",
        "0.3",
        "--omega-end",
        "1.2",
        "--step",
        "0.3",
    ];
    let mut args = vec!["simulate", s(&m), "--csv", s(&sim), "--plot", s(&png)];
    args.extend(grid);
    let o = ewr(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("amp_norm") && out.lines().count() == 5,
        "{out}"
    );
    let mut args = vec!["frc", s(&m), "--harmonics", "odd:63", "--no-refine"];
    args.extend(grid);
    args.extend(["--csv", s(&frc)]);
    let o = ewr(&args);
    assert!(o.status.success(), "{}", text(&o).1);
    let (a, b) = (table(&sim), table(&frc));
    assert_eq!(a.len(), 4);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["omega"], y["omega"]);
        assert_eq!(x["converged"], 1.0);
        for col in ["amp_norm", "peak_u0", "peak_u3", "amp_w0"] {
            let rel = (x[col] - y[col]).abs() / y[col];
            assert!(
                rel < 3e-3,
                "w = {}: {col} {} against frc's {}",
                x["omega"],
                x[col],
                y[col]
            );
        }
        // No static load: the mean is round-off of the amplitude.
        assert!(x["mean_u0"].abs() < 1e-3 * x["peak_u0"], "{}", x["mean_u0"]);
    }
    // The first harmonic, against frc's in that measure (the same column name).
    let h1 = dir.path().join("h1.csv");
    let mut args = vec!["frc", s(&m), "--harmonics", "odd:63", "--no-refine"];
    args.extend(grid);
    args.extend(["--amplitude", "h1", "--csv", s(&h1)]);
    let o = ewr(&args);
    assert!(o.status.success(), "{}", text(&o).1);
    for (x, y) in a.iter().zip(&table(&h1)) {
        for col in ["h1_u0", "h1_u3"] {
            let rel = (x[col] - y[col]).abs() / y[col];
            assert!(
                rel < 3e-3,
                "w = {}: {col} {} against frc's {}",
                x["omega"],
                x[col],
                y[col]
            );
        }
    }
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn a_stepped_sine_that_misses_a_steady_state_goes_on_and_exits_1() {
    // Two periods are not enough to settle: every frequency is reported (not converged),
    // each started from the last one's state, and the table keeps them all.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("stepped.csv");
    let m = model("two-mass-damper");
    let o = ewr(&[
        "simulate",
        s(&m),
        "--omega-start",
        "0.5",
        "--omega-end",
        "0.3",
        "--step",
        "0.1",
        "--dt",
        "1e-2",
        "--periods",
        "2",
        "--csv",
        s(&csv),
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("no periodic steady state") && err.contains("3 of 3"),
        "{err}"
    );
    let rows = table(&csv);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2]["omega"], 0.3);
    assert!(
        rows.iter()
            .all(|r| r["converged"] == 0.0 && r["periods"] == 2.0)
    );
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["points"].as_array().unwrap().len(), 3);
    assert_eq!(j["dofs"].as_array().unwrap().len(), 4);
}

#[test]
fn a_stepped_sine_keeps_the_held_stuck_contact_where_frc_holds_it() {
    // wedge-damper-3d past its resonance: its second contact slips at 1355 and re-sticks for
    // good before 1380, where `ewr frc` holds its mean slip position (docs/stuck-contacts.md)
    // after locating the re-stick inside its step of 25. A rig stepping by 5 (from rest at
    // 1355, where the contact slips and the start does not matter) leaves it there too: every
    // DOF's peak within 0.5 % of itself, the wedge's own DOFs included, whose peaks the held
    // offset sets (a rig stepping by 25 leaves them 7 % away: docs/simulate.md).
    let dir = tempfile::tempdir().unwrap();
    let (sim, frc) = (dir.path().join("stepped.csv"), dir.path().join("frc.csv"));
    let m = model("wedge-damper-3d");
    let o = ewr(&[
        "simulate",
        s(&m),
        "--omega-start",
        "1355",
        "--omega-end",
        "1380",
        "--step",
        "5",
        "--dt",
        "2.9e-7",
        "--csv",
        s(&sim),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = ewr(&[
        "frc",
        s(&m),
        "--omega-start",
        "1355",
        "--omega-end",
        "1380",
        "--step",
        "25",
        "--harmonics",
        "all:31",
        "--no-refine",
        "--csv",
        s(&frc),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let (a, b) = (table(&sim), table(&frc));
    assert_eq!((a.len(), b.len()), (6, 2));
    for (x, y) in [(&a[0], &b[0]), (&a[5], &b[1])] {
        assert_eq!(x["omega"], y["omega"]);
        for (col, v) in x {
            if col.starts_with("peak_u") {
                let rel = (v - y[col]).abs() / y[col];
                assert!(
                    rel < 5e-3,
                    "w = {}: {col} {v} against frc's {}",
                    x["omega"],
                    y[col]
                );
            }
        }
        let stuck = x["omega"] == 1380.0;
        assert_eq!(
            x["stick1"] == 1.0,
            stuck,
            "w = {}: stick1 {}",
            x["omega"],
            x["stick1"]
        );
        assert_eq!(
            y["stick1"] == 1.0,
            stuck,
            "w = {}: frc's {}",
            x["omega"],
            y["stick1"]
        );
    }
}
