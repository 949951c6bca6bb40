//! End-to-end tests of `ewr solve` and `ewr frc` on the shipped models: results as a user
//! reads them (JSON, CSV, HDF5, figures) and exit codes.

use std::path::Path;
use std::process::Output;

#[path = "common/mod.rs"]
mod common;
use common::ewr;

fn model(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(format!("{name}.h5"))
        .to_str()
        .unwrap()
        .to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp_path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

#[test]
fn solve_reports_the_paper_stick_phases_and_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let ts = tmp_path(&dir, "ts.csv");
    let h5 = tmp_path(&dir, "sub/result.h5");
    let fig = tmp_path(&dir, "fig.svg");
    let o = ewr(&[
        "solve",
        &model("oscillator-2d"),
        "--omega",
        "0.17",
        "--harmonics",
        "odd:159",
        "--json",
        "--timeseries",
        &ts,
        "-o",
        &h5,
        "--plot",
        &fig,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["converged"], true);
    assert_eq!(j["omega"], 0.17);
    for key in ["residual", "iterations", "elapsed_s"] {
        assert!(j[key].is_number(), "{key} missing in {j}");
    }
    let c = &j["contacts"][0];
    assert!(c["max_coulomb_violation"].as_f64().unwrap() < 0.05);
    // Seed 000 Fig. 7: stuck on about [18.4, 27.5] s.
    let iv = c["stick_intervals"].as_array().unwrap();
    assert!(
        iv.iter()
            .any(|i| (i[0].as_f64().unwrap() - 18.4).abs() < 0.3
                && (i[1].as_f64().unwrap() - 27.5).abs() < 0.3),
        "{iv:?}"
    );

    let csv = std::fs::read_to_string(&ts).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "t,w0_1,w0_2,v0_1,v0_2,r0_1,r0_2,state0,u0,u1"
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 2048);
    // The friction force never leaves the Coulomb disk by more than the Gibbs overshoot.
    assert!(rows.iter().all(|r| (r[5].hypot(r[6])) < 8.0 * 1.02));
    // The contact is the mass itself (to ground): the DOF histories are the contact's
    // displacement, and stuck samples (state 2) do not move.
    assert!(
        rows.iter()
            .all(|r| (r[8] - r[1]).abs() < 1e-9 && (r[9] - r[2]).abs() < 1e-9)
    );
    let stuck: Vec<&Vec<f64>> = rows.iter().filter(|r| r[7] == 2.0).collect();
    let fraction = stuck.len() as f64 / rows.len() as f64;
    assert!((0.45..0.52).contains(&fraction), "stuck {fraction}");
    let speed = rows.iter().map(|r| r[3].hypot(r[4])).fold(0.0, f64::max);
    assert!(stuck.iter().all(|r| r[3].hypot(r[4]) < 0.05 * speed));

    let f = hdf5::File::open(&h5).unwrap();
    let kind: hdf5::types::VarLenUnicode = f.attr("kind").unwrap().read_scalar().unwrap();
    assert_eq!(kind.as_str(), "solve");
    assert_eq!(f.dataset("friction").unwrap().shape(), vec![2, 160]);
    assert_eq!(f.dataset("time/r").unwrap().shape(), vec![2, 2048]);
    assert_eq!(f.dataset("time/u").unwrap().shape(), vec![2, 2048]);
    assert_eq!(f.dataset("time/stick").unwrap().shape(), vec![1, 2048]);
    let labels: Vec<hdf5::types::VarLenUnicode> = f
        .dataset("monitored_dof_labels")
        .unwrap()
        .read_raw()
        .unwrap();
    assert_eq!(labels[0].as_str(), "u1");
    let svg = std::fs::read_to_string(&fig).unwrap();
    assert!(svg.starts_with("<svg") && svg.len() > 10_000);
}

#[test]
fn one_dimensional_forcing_gives_no_motion_in_direction_2() {
    // Seed 000 Fig. 12: with f2 = 0 the response stays in direction 1. Built through the
    // model file: write oscillator-2d, then zero the second forcing term.
    let dir = tempfile::tempdir().unwrap();
    let m = tmp_path(&dir, "m.h5");
    assert!(
        ewr(&["model", "example", "oscillator-2d", "-o", &m])
            .status
            .success()
    );
    {
        let f = hdf5::File::open_rw(&m).unwrap();
        f.unlink("forcing/cos").unwrap();
        f.new_dataset_builder()
            .with_data(&[10.0, 0.0])
            .create("forcing/cos")
            .unwrap();
        f.close().unwrap();
    }
    let o = ewr(&[
        "solve",
        &m,
        "--omega",
        "0.1",
        "--harmonics",
        "odd:79",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let peaks = j["dofs"].as_array().unwrap();
    let u2 = peaks[1]["peak"].as_f64().unwrap();
    let u1 = peaks[0]["peak"].as_f64().unwrap();
    assert!(u1 > 1.0 && u2 < 1e-9 * u1, "u1 {u1}, u2 {u2}");
}

#[test]
fn non_convergence_exits_1_and_still_writes_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let h5 = tmp_path(&dir, "r.h5");
    let o = ewr(&[
        "solve",
        &model("oscillator-2d"),
        "--omega",
        "0.1",
        "--harmonics",
        "odd:59",
        "--max-iter",
        "1",
        "--no-ramp",
        "-o",
        &h5,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not converge"));
    let f = hdf5::File::open(&h5).unwrap();
    let conv: i64 = f.attr("converged").unwrap().read_scalar().unwrap();
    assert_eq!(conv, 0);
}

#[test]
fn frc_writes_rows_as_it_goes_and_one_curve_per_bound() {
    let dir = tempfile::tempdir().unwrap();
    let csv = tmp_path(&dir, "frc.csv");
    let h5 = tmp_path(&dir, "frc.h5");
    let png = tmp_path(&dir, "frc.png");
    let o = ewr(&[
        "frc",
        &model("two-mass-damper"),
        "--omega-start",
        "0.3",
        "--omega-end",
        "1.0",
        "--step",
        "0.05",
        "--harmonics",
        "odd:9",
        "--mu-n",
        "4,8",
        "--csv",
        &csv,
        "-o",
        &h5,
        "--plot",
        &png,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("mu_n,omega,converged,iterations,residual,amp_norm,amp_w0"));
    assert!(header.ends_with("stick0,energy0"), "{header}");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2 * 15, "{text}");
    assert!(rows.iter().all(|r| r.split(',').nth(2) == Some("1")));
    // The two curves run side by side and their points arrive interleaved; the finished
    // table holds each curve's rows together, in the order of --mu-n, each by frequency.
    let key = |r: &&str| -> (f64, f64) {
        let mut c = r.split(',').map(|x| x.parse::<f64>().unwrap());
        (c.next().unwrap(), c.next().unwrap())
    };
    let keys: Vec<(f64, f64)> = rows.iter().map(key).collect();
    assert!(keys[..15].iter().all(|k| k.0 == 4.0) && keys[15..].iter().all(|k| k.0 == 8.0));
    assert!(
        keys.windows(2).all(|w| w[0].0 < w[1].0 || w[0].1 < w[1].1),
        "{text}"
    );
    for r in &rows {
        let v: Vec<f64> = r.split(',').map(|x| x.parse().unwrap()).collect();
        let (stick, energy) = (v[v.len() - 2], v[v.len() - 1]);
        assert!((0.0..=1.0).contains(&stick) && energy >= 0.0, "{r}");
    }
    let f = hdf5::File::open(&h5).unwrap();
    for c in ["curve_0", "curve_1"] {
        assert_eq!(f.dataset(&format!("{c}/omega")).unwrap().shape(), vec![15]);
        for d in ["stick_fraction", "dissipated_energy"] {
            assert_eq!(f.dataset(&format!("{c}/{d}")).unwrap().shape(), vec![15, 1]);
        }
    }
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
}

#[test]
fn arclength_runs_from_the_command_line() {
    let o = ewr(&[
        "frc",
        &model("oscillator-2d"),
        "--omega-start",
        "0.9",
        "--omega-end",
        "1.1",
        "--step",
        "0.05",
        "--continuation",
        "arclength",
        "--harmonics",
        "odd:7",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["failed_points"], 0);
    assert!(j["points"].as_u64().unwrap() >= 3);
}

#[test]
fn linear_algebra_options_reach_the_solver_and_agree() {
    // The shipped chain (15 contacts) with a low --mu-n, so that contacts slip: the dense
    // and every matrix-free variant must give the same response, and say how they got it.
    let dir = tempfile::tempdir().unwrap();
    let run = |linear: &str, pre: &str| {
        let out = tmp_path(&dir, &format!("{linear}-{pre}.h5"));
        let o = ewr(&[
            "solve",
            &model("chain"),
            "--omega",
            "0.3",
            "--harmonics",
            "odd:5",
            "--mu-n",
            "0.02",
            "--linear",
            linear,
            "--preconditioner",
            pre,
            "-o",
            &out,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{linear} {pre}: {}", stderr(&o));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let f = hdf5::File::open(&out).unwrap();
        let attr = |n: &str| -> String {
            f.attr(n)
                .unwrap()
                .read_scalar::<hdf5::types::VarLenUnicode>()
                .unwrap()
                .to_string()
        };
        assert_eq!(attr("linear"), linear);
        assert_eq!(attr("preconditioner"), pre);
        let gmres = j["gmres_iterations"].as_u64().unwrap();
        // Linux reports the peak resident memory.
        assert!(j["peak_memory_mb"].as_f64().unwrap() > 1.0, "{j}");
        let peaks: Vec<f64> = j["dofs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["peak"].as_f64().unwrap())
            .collect();
        (gmres, peaks)
    };
    let (g_dense, dense) = run("dense", "two-level");
    assert_eq!(g_dense, 0);
    for pre in ["two-level", "harmonic", "contact"] {
        let (g, p) = run("matrix-free", pre);
        assert!(g > 0, "{pre}: no GMRES iterations reported");
        for (a, b) in p.iter().zip(&dense) {
            assert!(
                (a - b).abs() <= 1e-7 * b.abs().max(1e-12),
                "{pre}: {a} vs {b}"
            );
        }
    }
    refused(
        &[
            "solve",
            &model("chain"),
            "--omega",
            "1",
            "--preconditioner",
            "ilu",
        ],
        "--preconditioner",
    );
}

fn refused(args: &[&str], words: &str) {
    let o = ewr(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(words), "{args:?}: {err:?} lacks {words:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_exits_2() {
    let m = model("oscillator-2d");
    refused(&["solve", &m, "--omega", "-1"], "--omega -1");
    refused(&["solve", &m, "--omega", "NaN"], "--omega NaN");
    refused(
        &["solve", &m, "--omega", "1", "--harmonics", "odd:4"],
        "--harmonics",
    );
    refused(&["solve", &m, "--omega", "1", "--law", "coulomb"], "--law");
    refused(&["solve", &m, "--omega", "1", "--mu-n", "-8"], "--mu-n -8");
    refused(&["solve", &m, "--omega", "1", "--rho", "0"], "--rho 0");
    refused(
        &["solve", &m, "--omega", "1", "--rho", "fast"],
        "--rho fast",
    );
    refused(
        &["solve", &m, "--omega", "1", "--samples", "50"],
        "--samples 50",
    );
    refused(&["solve", &m, "--omega", "1", "--dofs", "u7"], "u7");
    refused(
        &["solve", &m, "--omega", "1", "--receptance", "modal:x"],
        "--receptance",
    );
    refused(&["solve", "/no/such.h5", "--omega", "1"], "No such file");
    refused(
        &[
            "frc",
            &m,
            "--omega-start",
            "1",
            "--omega-end",
            "2",
            "--step",
            "0",
        ],
        "--step 0",
    );
    refused(
        &[
            "frc",
            &m,
            "--omega-start",
            "1",
            "--omega-end",
            "2",
            "--step",
            "0.1",
            "--continuation",
            "natural",
        ],
        "arclength",
    );
    // A linear model has nothing for E-WR to solve.
    let dir = tempfile::tempdir().unwrap();
    let lin = tmp_path(&dir, "lin.h5");
    assert!(
        ewr(&["model", "example", "oscillator-2d", "-o", &lin])
            .status
            .success()
    );
    {
        let f = hdf5::File::open_rw(&lin).unwrap();
        f.unlink("contacts").unwrap();
        f.close().unwrap();
    }
    refused(&["solve", &lin, "--omega", "1"], "no friction contacts");
}

/// The text elements of an SVG figure.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_string())
        })
        .collect()
}

#[test]
fn frc_figures_of_fe_models_have_plain_tick_labels_and_units() {
    // An SI model whose amplitudes span decades below 1: the log axis's ticks used to read
    // "9999999e-5"; now every tick is a short number and the axes say their units.
    let dir = tempfile::tempdir().unwrap();
    let fig = tmp_path(&dir, "frc.svg");
    let model_path = model("blade-ccx");
    for hz in [false, true] {
        let mut a = vec![
            "frc",
            &model_path,
            "--omega-start",
            "1400",
            "--omega-end",
            "1600",
            "--step",
            "20",
            "--harmonics",
            "odd:7",
            "--mu-n",
            "0,0.05",
            "--plot",
            &fig,
        ];
        if hz {
            a.push("--hz");
        }
        let o = ewr(&a);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let texts = svg_texts(&std::fs::read_to_string(&fig).unwrap());
        let numbers: Vec<&String> = texts
            .iter()
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
            .collect();
        assert!(numbers.len() >= 8, "{texts:?}");
        for t in &numbers {
            assert!(t.parse::<f64>().is_ok() && t.len() <= 7, "tick label {t:?}");
        }
        let axis = if hz {
            "frequency f = w / 2 pi [Hz]"
        } else {
            "excitation frequency w [rad/s]"
        };
        assert!(texts.iter().any(|t| t == axis), "{texts:?}");
        assert!(
            texts.iter().any(|t| t.starts_with("units: SI")),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t.ends_with("[m]")), "{texts:?}");
    }
}

#[test]
fn rho_auto_scales_an_si_model_and_says_so() {
    // blade-ccx is SI (N, m) and was imported without rho, so it carries the automatic
    // scaling; `--rho 1` weighs velocities of micrometres per second against forces of
    // newtons instead. The zero set is the same, so both converge to the same response (to
    // the truncation level, small at odd:63), the automatic one in fewer iterations, and the
    // result file says which scaling was used.
    let dir = tempfile::tempdir().unwrap();
    let run = |rho: Option<&str>| {
        let out = tmp_path(&dir, &format!("{}.h5", rho.unwrap_or("model")));
        let m = model("blade-ccx");
        let mut args = vec![
            "solve",
            &m,
            "--omega",
            "8056",
            "--harmonics",
            "odd:63",
            "--mu-n",
            "5",
            // Neither is judged here; the truncation estimate (re-solves on odd:127 and
            // odd:31) and the Hill eigensolve were most of this test's time.
            "--no-estimate",
            "--no-stability",
            "-o",
            &out,
            "--json",
        ];
        if let Some(r) = rho {
            args.extend(["--rho", r]);
        }
        let o = ewr(&args);
        assert_eq!(o.status.code(), Some(0), "{rho:?}: {}", stderr(&o));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let f = hdf5::File::open(&out).unwrap();
        let mode = f
            .attr("rho_mode")
            .unwrap()
            .read_scalar::<hdf5::types::VarLenUnicode>()
            .unwrap()
            .to_string();
        let peak = j["dofs"][0]["peak"].as_f64().unwrap();
        (mode, peak, j["iterations"].as_u64().unwrap())
    };
    let (mode_model, model_peak, _) = run(None);
    let (mode_auto, auto, auto_it) = run(Some("auto"));
    let (mode_fixed, fixed, fixed_it) = run(Some("1"));
    assert_eq!(mode_model, "auto");
    assert_eq!(mode_auto, "auto");
    assert_eq!(mode_fixed, "fixed");
    assert_eq!(model_peak, auto);
    assert!(
        (auto - fixed).abs() < 1e-3 * fixed,
        "rho auto {auto} vs rho 1 {fixed}"
    );
    assert!(
        auto_it < fixed_it,
        "iterations: auto {auto_it}, rho 1 {fixed_it}"
    );
}

#[test]
fn the_modal_receptance_says_when_the_damping_matrix_couples_its_modes() {
    // A chain of three masses with a dashpot to ground at the first: the damping matrix is not
    // diagonal on the modes, and keeping its diagonal moves the third mode's response by
    // about 4.6 % (crates/hb/tests/receptance.rs checks that figure against a dense solve).
    let dir = tempfile::tempdir().unwrap();
    let model = common::dashpot_chain();
    let path = tmp_path(&dir, "dashpot.h5");
    ewr_model::write(&path, &model).unwrap();
    let run = |receptance: &str| {
        let o = ewr(&[
            "solve",
            &path,
            "--omega",
            "0.9",
            "--harmonics",
            "odd:7",
            "--receptance",
            receptance,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let modal = run("modal:3");
    assert!(
        modal.contains("couples them") && modal.contains("near mode 3") && modal.contains("4.6%"),
        "{modal}"
    );
    assert!(!run("dense").contains("couples them"));
}
