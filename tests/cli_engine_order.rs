//! The engine order as a parameter of a cyclic sector model (issue 33): `--engine-order` on
//! one shipped sector equals a model built for that engine order, and an engine-order study
//! (the interference diagram) gives each engine order's peak as `ewr frc` does.

mod common;

use common::{ewr, s, shipped_model, text};
use std::path::Path;

const BAND: [&str; 8] = [
    "--omega-start",
    "0.8",
    "--omega-end",
    "2.4",
    "--step",
    "0.01",
    "--harmonics",
    "odd:7",
];

#[test]
fn engine_order_option_equals_a_model_per_engine_order() {
    let dir = tempfile::tempdir().unwrap();
    let sector = shipped_model("bladed-disk");
    for eo in ["1", "5", "-2"] {
        let model = dir.path().join(format!("eo{eo}.h5"));
        let o = ewr(&[
            "model",
            "example",
            "bladed-disk",
            "--engine-order",
            eo,
            "-o",
            s(&model),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        let csv = |m: &Path, extra: &[&str], name: &str| {
            let out = dir.path().join(name);
            let mut args = vec!["frc", s(m)];
            args.extend(BAND);
            args.extend(extra);
            args.extend(["--no-refine", "--csv", s(&out)]);
            let o = ewr(&args);
            assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
            std::fs::read_to_string(out).unwrap()
        };
        let own = csv(&model, &[], &format!("own{eo}.csv"));
        let over = csv(&sector, &["--engine-order", eo], &format!("over{eo}.csv"));
        assert_eq!(own, over, "EO {eo}");
    }
    // The shipped sector is EO 3: another engine order gives another curve.
    let o = ewr(&[
        "solve",
        s(&sector),
        "--omega",
        "1",
        "--harmonics",
        "odd:7",
        "--json",
    ]);
    let a: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    let o = ewr(&[
        "solve",
        s(&sector),
        "--omega",
        "1",
        "--harmonics",
        "odd:7",
        "--engine-order",
        "1",
        "--json",
    ]);
    let b: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_ne!(a["amplitude"], b["amplitude"]);
    // Not a cyclic model: refused, naming the option.
    let o = ewr(&[
        "solve",
        s(&shipped_model("oscillator-2d")),
        "--omega",
        "1",
        "--engine-order",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--engine-order"), "{}", text(&o).1);
}

#[test]
fn an_engine_order_study_gives_each_engine_orders_peak() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("eo.toml");
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/eo-study.toml"),
    )
    .unwrap()
    .replace(
        "model = \"bladed-disk.h5\"",
        &format!("model = {:?}", s(&shipped_model("bladed-disk"))),
    )
    .replace("[0, 1, 2, 3, 4, 5, 6]", "[1, 2, 4]");
    std::fs::write(&study, src).unwrap();
    let out = dir.path().join("eo.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{se}");
    assert!(so.contains("largest peak: case 0 [engine_order=1]"), "{so}");
    let sector = shipped_model("bladed-disk");
    let table = std::fs::read_to_string(dir.path().join("eo.csv")).unwrap();
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|c| *c == name).unwrap();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let eo = f[col("engine_order")];
        let peak: f64 = f[col("peak_amplitude")].parse().unwrap();
        let mut args = vec!["frc", s(&sector)];
        args.extend(BAND);
        args.extend(["--engine-order", eo, "--dofs", "blade_x,blade_y", "--json"]);
        let o = ewr(&args);
        let j: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
        let largest = j["peaks"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["amplitude"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert!(
            (peak - largest).abs() < 1e-5 * largest,
            "EO {eo}: study {peak}, frc {largest}"
        );
    }
}
