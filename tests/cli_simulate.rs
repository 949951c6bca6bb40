//! End-to-end tests of `ewr simulate` and `ewr compare`: outputs, exit codes, bad input.

use std::path::{Path, PathBuf};

#[path = "common/mod.rs"]
mod common;
use common::{ewr, s, text};

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
