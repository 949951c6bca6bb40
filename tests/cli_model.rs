//! End-to-end tests of `ewr model ...`: the binary as a user runs it, exit codes included.

use std::path::Path;

#[path = "common/mod.rs"]
mod common;
use common::{ewr, text, workspace};

const EXAMPLES: [&str; 9] = [
    "oscillator-2d",
    "two-mass-damper",
    "two-dof-1d",
    "chain",
    "blade-damper-blade",
    "blade-damper-blade-3d",
    "single-contact-3d",
    "wedge-damper-3d",
    "bladed-disk",
];

fn info_json(file: &Path) -> serde_json::Value {
    let o = ewr(&["model", "info", "--json", file.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn examples_are_written_checked_and_summarised() {
    let dir = tempfile::tempdir().unwrap();
    for name in EXAMPLES {
        let f = dir.path().join(format!("{name}.h5"));
        let o = ewr(&["model", "example", name, "-o", f.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {:?}", text(&o));
        let o = ewr(&["model", "check", f.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {:?}", text(&o));
        assert!(text(&o).0.contains("valid ewr model"));
        let j = info_json(&f);
        assert!(j["n_dofs"].as_u64().unwrap() >= 2);
        assert!(j["contacts"]["count"].as_u64().unwrap() >= 1);
    }
    let j = info_json(&dir.path().join("two-mass-damper.h5"));
    let w: Vec<f64> = j["natural_frequencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    // Seed 000 sec. 5: 0.618, 0.874, 1.618, 2.288.
    for (a, b) in w.iter().zip([0.618, 0.874, 1.618, 2.288]) {
        assert!((a - b).abs() < 1e-3, "{w:?}");
    }
    // Damper stuck to ground: the blade mass on k11 + k21 = 2 and k12 + k22 = 4, i.e.
    // sqrt(2) and 2; the damper's own modes go far up (the stuck constraint).
    let stuck: Vec<f64> = j["stuck_frequencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(
        (stuck[0] - 2f64.sqrt()).abs() < 1e-5 * 2f64.sqrt(),
        "{stuck:?}"
    );
    assert!((stuck[1] - 2.0).abs() < 1e-5 * 2.0, "{stuck:?}");
    assert!(stuck[2] > 100.0, "{stuck:?}");
    // With contact stiffness, stuck means the springs k_t, k_n: blade-damper-blade-3d's
    // stuck frequencies lie above its free ones.
    let f = dir.path().join("bdb3d.h5");
    let o = ewr(&[
        "model",
        "example",
        "blade-damper-blade-3d",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let j = info_json(&f);
    let get = |k: &str| -> Vec<f64> {
        j[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (free, stuck) = (get("natural_frequencies"), get("stuck_frequencies"));
    assert_eq!(free.len(), stuck.len());
    assert!(
        free.iter().zip(&stuck).all(|(a, b)| b >= a),
        "{free:?} {stuck:?}"
    );
    assert!(
        stuck.iter().all(|w| *w < 1e5),
        "finite springs, no penalty: {stuck:?}"
    );
}

#[test]
fn shipped_models_match_the_built_in_examples() {
    let dir = tempfile::tempdir().unwrap();
    for name in EXAMPLES {
        let shipped = workspace().join("models").join(format!("{name}.h5"));
        assert!(shipped.exists(), "models/{name}.h5 is missing");
        let fresh = dir.path().join(format!("{name}.h5"));
        assert!(
            ewr(&["model", "example", name, "-o", fresh.to_str().unwrap()])
                .status
                .success()
        );
        let (mut a, mut b) = (info_json(&shipped), info_json(&fresh));
        a["file"] = serde_json::Value::Null;
        b["file"] = serde_json::Value::Null;
        assert_eq!(
            a, b,
            "models/{name}.h5 differs from `ewr model example {name}`"
        );
    }
}

/// Runs a command that must fail on bad input: exit code 2, a message, no panic.
fn refused(args: &[&str], words: &str) {
    let o = ewr(args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {out} {err}");
    assert!(
        err.contains(words),
        "{args:?}: stderr {err:?} lacks {words:?}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

#[test]
fn bad_files_exit_with_code_2_and_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    refused(&["model", "check", &p("missing.h5")], "No such file");
    std::fs::write(p("empty.h5"), b"").unwrap();
    refused(&["model", "info", &p("empty.h5")], "empty");
    std::fs::write(p("text.h5"), b"not hdf5").unwrap();
    refused(
        &["model", "check", &p("text.h5")],
        "not a readable HDF5 file",
    );

    // A valid file broken in two places: both problems are listed with their paths.
    let f = p("bad.h5");
    assert!(
        ewr(&["model", "example", "oscillator-2d", "-o", &f])
            .status
            .success()
    );
    {
        let h = hdf5::File::open_rw(&f).unwrap();
        h.unlink("contacts/mu_n").unwrap();
        h.new_dataset_builder()
            .with_data(&[-3.0])
            .create("contacts/mu_n")
            .unwrap();
        h.unlink("forcing/dof").unwrap();
        h.new_dataset_builder()
            .with_data(&[0i64, 17])
            .create("forcing/dof")
            .unwrap();
        h.close().unwrap();
    }
    refused(&["model", "check", &f], "/contacts/mu_n");
    refused(&["model", "check", &f], "/forcing/dof: term 1 loads DOF 17");
}

#[test]
fn bad_options_exit_with_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.h5");
    let out = out.to_str().unwrap();
    refused(
        &["model", "example", "nosuch", "-o", out],
        "available: oscillator-2d",
    );
    refused(
        &["model", "example", "chain", "-o", out, "--mu-n", "-1"],
        "--mu-n",
    );
    refused(
        &["model", "example", "chain", "-o", out, "--mu-n", "NaN"],
        "--mu-n",
    );
    refused(
        &[
            "model",
            "example",
            "oscillator-2d",
            "-o",
            out,
            "--contacts",
            "3",
        ],
        "chain",
    );
    refused(&["model", "frobnicate"], "unrecognized subcommand");
}

#[test]
fn help_explains_the_commands() {
    let o = ewr(&["--help"]);
    assert!(o.status.success());
    assert!(text(&o).0.contains("model"));
    let o = ewr(&["model", "--help"]);
    let s = text(&o).0;
    for cmd in ["info", "check", "example"] {
        assert!(s.contains(cmd), "{s}");
    }
    let o = ewr(&["model", "example", "--list"]);
    let s = text(&o).0;
    for name in EXAMPLES {
        assert!(s.contains(name), "{s}");
    }
}

#[test]
fn large_models_get_natural_frequencies_by_sparse_lanczos_on_request() {
    // chain --contacts 3000: 3010 unit masses and springs, fixed at one end (the contacts are
    // removed for the frequencies): omega_k = 2 sin((2k - 1) pi / (2 (2n + 1))).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("chain.h5");
    let o = ewr(&[
        "model",
        "example",
        "chain",
        "--contacts",
        "3000",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let j = info_json(&f);
    assert!(j["natural_frequencies"].is_null());
    let note = j["natural_frequencies_note"].as_str().unwrap();
    assert!(note.contains("--modes"), "{note}");
    let o = ewr(&[
        "model",
        "info",
        "--json",
        "--modes",
        "4",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w: Vec<f64> = j["natural_frequencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(w.len(), 4);
    let n = 3010.0;
    for (k, w) in w.iter().enumerate() {
        let exact =
            2.0 * ((2.0 * k as f64 + 1.0) * std::f64::consts::PI / (2.0 * (2.0 * n + 1.0))).sin();
        assert!(
            (w - exact).abs() < 1e-8 * exact,
            "mode {}: {w} vs {exact}",
            k + 1
        );
    }
}

/// Cyclic sectors (issue 16): `model info` lists nodal diameters and their frequencies,
/// `model annulus` expands the disk, and what cannot take a sector says so.
#[test]
fn cyclic_sector_info_annulus_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let sector = workspace().join("models").join("bladed-disk.h5");
    let j = info_json(&sector);
    let cy = &j["cyclic"];
    assert_eq!(cy["sectors"], 12);
    assert_eq!(cy["engine_order"], 3);
    let nd: Vec<u64> = cy["harmonic_nodal_diameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(&nd[..6], &[0, 3, 6, 9, 0, 3]);
    // Seven nodal diameters (0..=6); ND 3's lowest is the hand value sqrt((5.5 - sqrt(14.25)) / 2).
    let table = cy["nodal_diameter_frequencies"].as_array().unwrap();
    assert_eq!(table.len(), 7);
    let w3 = table[3][0].as_f64().unwrap();
    let expect = ((5.5 - 14.25f64.sqrt()) / 2.0).sqrt();
    assert!((w3 - expect).abs() < 1e-9 * expect, "{w3} vs {expect}");
    let disk = dir.path().join("disk.h5");
    let o = ewr(&[
        "model",
        "annulus",
        sector.to_str().unwrap(),
        "-o",
        disk.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let d = info_json(&disk);
    assert_eq!(d["n_dofs"], 48);
    assert_eq!(d["contacts"]["count"], 24);
    assert!(d.get("cyclic").is_none());
    // The annulus's spectrum contains ND 3's frequency (twice: ND 3 and ND 9).
    let w: Vec<f64> = d["natural_frequencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        w.iter().filter(|x| (*x - expect).abs() < 1e-9).count() == 2,
        "{w:?}"
    );
    // Solve results say how to expand sector 0 to the disk.
    let res = dir.path().join("s.h5");
    let o = ewr(&[
        "solve",
        sector.to_str().unwrap(),
        "--omega",
        "1.21",
        "--harmonics",
        "odd:7",
        "-o",
        res.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let f = hdf5::File::open(&res).unwrap();
    let nd = f
        .dataset("nodal_diameters")
        .unwrap()
        .read_raw::<i64>()
        .unwrap();
    assert_eq!(nd, vec![3, 9, 3, 9]);
    let plain = workspace().join("models").join("oscillator-2d.h5");
    refused(
        &[
            "model",
            "annulus",
            plain.to_str().unwrap(),
            "-o",
            dir.path().join("x.h5").to_str().unwrap(),
        ],
        "not a cyclic sector",
    );
    refused(
        &["simulate", sector.to_str().unwrap(), "--omega", "1"],
        "ewr model annulus",
    );
    refused(
        &[
            "model",
            "example",
            "oscillator-2d",
            "--sectors",
            "4",
            "-o",
            dir.path().join("y.h5").to_str().unwrap(),
        ],
        "bladed-disk and sector examples only",
    );
}
