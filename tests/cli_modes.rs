//! `ewr modes` (docs/nonlinear-modes.md): the backbone of a friction-damped mode from the stuck
//! to the free structure, its files and figure, and bad input refused with exit 2.

mod common;

use common::{ewr, s, shipped_model, text};

#[test]
fn two_mass_damper_backbone_from_stuck_to_free_with_files() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, h5, png) = (
        dir.path().join("m.csv"),
        dir.path().join("m.h5"),
        dir.path().join("m.png"),
    );
    let o = ewr(&[
        "modes",
        s(&shipped_model("two-mass-damper")),
        "--from",
        "0.1",
        "--to",
        "1e4",
        "--points",
        "21",
        "--harmonics",
        "odd:31",
        "--csv",
        s(&csv),
        "-o",
        s(&h5),
        "--plot",
        s(&png),
        "--json",
        "--profile",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // --profile was accepted and ignored before: the backbone's phases, in the JSON and on
    // stderr.
    let phases = v["profile"].as_array().expect("a profile");
    assert!(
        phases.iter().any(|p| p.to_string().contains("jacobian")),
        "{phases:?}"
    );
    assert!(err.contains("jacobian + LU"), "{err}");
    let bb = v["backbone"].as_array().unwrap();
    assert_eq!(bb.len(), 21);
    // Stuck (mass 2 held): sqrt(2), damping 0.04 / (2 sqrt 2); free, mass 1 leading: the
    // golden ratio (K = [[2, -1], [-1, 1]] in direction 1).
    let w = |i: usize| bb[i]["omega"].as_f64().unwrap();
    assert!((w(0) - 2f64.sqrt()).abs() < 1e-5, "{}", w(0));
    let z0 = bb[0]["damping_ratio"].as_f64().unwrap();
    assert!((z0 - 0.02 / 2f64.sqrt()).abs() < 1e-6, "{z0}");
    let golden = (1.0 + 5f64.sqrt()) / 2.0;
    assert!((w(20) - golden).abs() < 1e-4 * golden, "{}", w(20));
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 22);
    assert!(table.starts_with("amplitude,omega,damping_ratio"));
    assert!(table.lines().next().unwrap().ends_with(",no_oscillation"));
    let f = hdf5::File::open(&h5).unwrap();
    let omega: Vec<f64> = f.dataset("omega").unwrap().read_raw().unwrap();
    assert_eq!(omega.len(), 21);
    // Every amplitude is a free oscillation here: the file says so per point, as --json does.
    let no_osc: Vec<i64> = f.dataset("no_oscillation").unwrap().read_raw().unwrap();
    assert_eq!(no_osc.len(), 21);
    for (p, flag) in bb.iter().zip(&no_osc) {
        assert_eq!(p["no_oscillation"].as_bool().unwrap(), *flag == 1);
    }
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn bad_mode_and_amplitudes_exit_2() {
    let m = shipped_model("two-mass-damper");
    for args in [
        vec!["--mode", "9", "--from", "0.1", "--to", "1"],
        vec!["--mode", "0", "--from", "0.1", "--to", "1"],
        vec!["--from", "-1", "--to", "1"],
        vec!["--from", "2", "--to", "1"],
        vec!["--from", "1", "--to", "2", "--points", "0"],
    ] {
        let mut a = vec!["modes", s(&m)];
        a.extend(args.iter());
        let o = ewr(&a);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

#[test]
fn the_resonance_synthesised_from_an_isolated_mode_is_frcs_peak() {
    // Seed 003's two-DOF system: one stuck mode, friction 9 against a force 20.
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("m.svg");
    let o = ewr(&[
        "modes",
        s(&shipped_model("two-dof-1d")),
        "--from",
        "0.1",
        "--to",
        "1e4",
        "--points",
        "41",
        "--harmonics",
        "odd:31",
        "--frc",
        "--plot",
        s(&png),
        "--json",
        "--profile",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // --profile was accepted and ignored before: the backbone's phases, in the JSON and on
    // stderr.
    let phases = v["profile"].as_array().expect("a profile");
    assert!(
        phases.iter().any(|p| p.to_string().contains("jacobian")),
        "{phases:?}"
    );
    assert!(err.contains("jacobian + LU"), "{err}");
    let syn = v["synthesis_peak"]["forced_dof_amplitudes"][0]
        .as_f64()
        .unwrap();
    let frc = v["frc_peak"]["amplitude"].as_f64().unwrap();
    assert!((syn - frc).abs() < 0.02 * frc, "synthesis {syn}, frc {frc}");
    let svg = std::fs::read_to_string(&png).unwrap();
    assert!(svg.contains("ewr frc (all modes)"));
}

/// A mass on a rigid friction contact (oscillator-2d) has no stuck motion: the stuck
/// structure's mode is the penalty that stands for `w . u = 0` (1414 rad/s against the
/// structure's 1), and below the onset of slip (`mu N / k = 8`) no amplitude converges. The
/// failure says why; a stuck mode the structure carries (two-mass-damper's, the damper held)
/// is not called the penalty's.
#[test]
fn a_backbone_on_a_rigid_contact_s_penalty_mode_says_why_it_fails() {
    let o = ewr(&[
        "modes",
        s(&shipped_model("oscillator-2d")),
        "--from",
        "1",
        "--to",
        "100",
        "--points",
        "5",
        "--harmonics",
        "odd:31",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("held by rigid contact rows"), "{err}");
    assert!(err.contains("w = 1.414"), "{err}");
    let pen = |name: &str, mode: usize| {
        let model = ewr_model::read(shipped_model(name)).unwrap().model;
        ewr_solve::nonlinear_mode::penalty_mode(&model, mode).unwrap()
    };
    let (w0, share) = pen("oscillator-2d", 1).expect("oscillator-2d's stuck mode is the penalty's");
    assert!(w0 > 1000.0 && share > 0.999_999, "{w0} {share}");
    assert_eq!(pen("two-mass-damper", 1), None);
    assert_eq!(pen("blade-damper-blade-3d", 1), None);
    // two-mass-damper's third stuck mode is its damper mass on the penalty.
    assert!(pen("two-mass-damper", 3).is_some());
}

/// A mass on `k = 1` held by a Jenkins element (`k_t = 3`, `mu N = 1`): stuck `w = 2`, free
/// `w = 1`. Its mode softens past its resonance's width, so `--frc` also sweeps down from
/// above the stuck resonance (an upward sweep misses a peak on an upper branch past a fold:
/// the CalculiX area contact, docs/nonlinear-modes.md, section 4). Here the friction damps the
/// transition enough that no fold forms: both sweeps find the peak, deep in slip (`w` 1.25
/// against 2 stuck), and it is the synthesised one.
#[test]
fn a_jenkins_mode_s_forced_peak_deep_in_slip_is_the_synthesised_one() {
    use ewr_model::{Contacts, ModelBuilder};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jenkins.h5");
    let model = ModelBuilder::new(2)
        .mass(0, 1.0)
        .spring_to_ground(0, 1.0)
        .spring(0, 1, 3.0)
        .damper_to_ground(0, 0.01)
        .contacts(Contacts::to_ground(1, vec![1], vec![1.0]))
        .force(0, 1, 1.0, 0.0)
        .build()
        .unwrap();
    ewr_model::write(&path, &model).unwrap();
    let o = ewr(&[
        "modes",
        s(&path),
        "--from",
        "0.01",
        "--to",
        "100",
        "--points",
        "61",
        "--harmonics",
        "odd:15",
        "--frc",
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w_syn = v["synthesis_peak"]["omega"].as_f64().unwrap();
    let syn = v["synthesis_peak"]["forced_dof_amplitudes"][0]
        .as_f64()
        .unwrap();
    let (w_frc, frc) = (
        v["frc_peak"]["omega"].as_f64().unwrap(),
        v["frc_peak"]["amplitude"].as_f64().unwrap(),
    );
    println!("synthesis {syn} at {w_syn}, frc {frc} at {w_frc}");
    assert!(w_syn < 1.7, "the peak is not in slip: {w_syn}");
    assert!((syn - frc).abs() < 0.03 * frc, "synthesis {syn}, frc {frc}");
    assert!(
        (w_syn - w_frc).abs() < 0.02 * w_frc,
        "{w_syn} against {w_frc}"
    );
}

/// The forced response is read where the mode moves: single-contact-3d's mode is its normal
/// motion (DOF 2), and its forcing starts with a tangential DOF (0), where the synthesis is
/// zero. Before, `--frc` swept and drew DOF 0.
#[test]
fn the_forced_response_is_read_at_the_forced_dof_the_mode_moves_most() {
    let o = ewr(&[
        "modes",
        s(&shipped_model("single-contact-3d")),
        "--from",
        "1e-3",
        "--to",
        "1e7",
        "--points",
        "31",
        "--harmonics",
        "all:7",
        "--frc",
        "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["synthesis_peak"]["forced_dofs"],
        serde_json::json!([0, 1, 2])
    );
    assert_eq!(v["frc_peak"]["forced_dof"], 2);
    assert!(v["frc_peak"]["amplitude"].as_f64().unwrap() > 0.1);
}

/// `ewr modes MODEL` at two amplitudes (1e-3, 1e-2) on odd:3, and `extra`.
fn two_amplitudes(model: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "modes",
        s(model),
        "--from",
        "1e-3",
        "--to",
        "1e-2",
        "--points",
        "2",
        "--harmonics",
        "odd:3",
    ];
    args.extend_from_slice(extra);
    ewr(&args)
}

/// Above 500 DOFs a backbone condenses by modes, the only path it has there, and a damping
/// matrix that couples the modes (a dashpot mid-chain) is dropped to its diagonal: the run says
/// so (docs/receptance.md, "Non-proportional damping"). A Rayleigh-damped chain does not.
#[test]
fn a_backbone_by_modes_says_when_the_damping_matrix_couples_them() {
    let dir = tempfile::tempdir().unwrap();
    for dashpot in [true, false] {
        let path = dir.path().join(format!("chain-{dashpot}.h5"));
        ewr_model::write(&path, &common::long_chain(dashpot)).unwrap();
        let o = two_amplitudes(&path, &[]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert_eq!(err.contains("couples them"), dashpot, "{err}");
    }
}

/// Nonlinear modes of a cyclic sector are refused, and the refusal names the way round: the
/// full annulus, an ordinary model whose backbone starts from the stuck disk's lowest mode.
#[test]
fn a_cyclic_sector_is_refused_with_the_annulus_as_the_way_round() {
    let dir = tempfile::tempdir().unwrap();
    let sector = shipped_model("bladed-disk");
    let o = two_amplitudes(&sector, &["--json"]);
    let (_, err) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("ewr model annulus"), "{err}");
    let annulus = dir.path().join("annulus.h5");
    let o = ewr(&["model", "annulus", s(&sector), "-o", s(&annulus)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let o = two_amplitudes(&annulus, &["--json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["backbone"].as_array().is_some_and(|b| b.len() == 2),
        "{out}"
    );
}
