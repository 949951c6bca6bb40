//! The harmonic-balance solver against the independent time integration (seed 000 sec. 4.3
//! and 5.3, Figs. 13 and 22): `ewr solve` and `ewr simulate` on the same model and frequency
//! must give the same periodic steady state, compared with `ewr compare`.
//!
//! Tolerances (normalised by each column's largest value): displacements 1 %, velocities 3 %
//! (RMS), friction forces 3 % RMS; the largest force difference sits at the stick-slip jumps,
//! where a first-order time step and a truncated Fourier series both smear the
//! discontinuity, so it is only bounded by 30 %. Stick intervals agree to 0.2 time units.

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

fn json(o: &Output) -> serde_json::Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn intervals(j: &serde_json::Value) -> Vec<[f64; 2]> {
    j["contacts"][0]["stick_intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| [i[0].as_f64().unwrap(), i[1].as_f64().unwrap()])
        .collect()
}

fn cross_check(name: &str, omega: &str) {
    let dir = tempfile::tempdir().unwrap();
    let hb = dir.path().join("hb.csv");
    let td = dir.path().join("td.csv");
    let (hb, td) = (hb.to_str().unwrap(), td.to_str().unwrap());
    let m = model(name);
    let js = json(&ewr(&[
        "solve",
        &m,
        "--omega",
        omega,
        "--harmonics",
        "odd:159",
        "--timeseries",
        hb,
        "--json",
    ]));
    let jt = json(&ewr(&[
        "simulate",
        &m,
        "--omega",
        omega,
        "--dt",
        "1e-3",
        "--timeseries",
        td,
        "--json",
    ]));
    let diffs = json(&ewr(&["compare", td, hb, "--json"]));
    for d in diffs.as_array().unwrap() {
        let col = d["name"].as_str().unwrap();
        let (max, rms) = (
            d["max_rel_diff"].as_f64().unwrap(),
            d["rms_rel_diff"].as_f64().unwrap(),
        );
        let ok = match &col[..1] {
            "w" => max < 1e-2,
            "v" => rms < 3e-2,
            "r" => rms < 3e-2 && max < 0.3,
            _ => true,
        };
        assert!(
            ok,
            "{name} w = {omega}: column {col}: max {max:.3e}, rms {rms:.3e}"
        );
    }
    let (a, b) = (intervals(&js), intervals(&jt));
    assert_eq!(a.len(), b.len(), "{name}: solve {a:?} simulate {b:?}");
    let period = std::f64::consts::TAU / omega.parse::<f64>().unwrap();
    for i in &a {
        let close = |x: f64, y: f64| {
            let d = (x - y).rem_euclid(period);
            d.min(period - d) < 0.2
        };
        assert!(
            b.iter().any(|j| close(i[0], j[0]) && close(i[1], j[1])),
            "{name}: solve interval {i:?} not in simulate's {b:?}"
        );
    }
}

#[test]
fn fig13_oscillator_2d_at_w_0_1() {
    cross_check("oscillator-2d", "0.1");
}

#[test]
fn fig22_two_mass_damper_at_w_0_303() {
    cross_check("two-mass-damper", "0.303");
}

/// Per column of `ewr compare --json`: name, largest and RMS relative difference, largest
/// absolute difference and the column's scale.
fn diffs(a: &str, b: &str) -> Vec<(String, f64, f64, f64, f64)> {
    json(&ewr(&["compare", a, b, "--json"]))
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let f = |k: &str| d[k].as_f64().unwrap();
            (
                d["name"].as_str().unwrap().to_string(),
                f("max_rel_diff"),
                f("rms_rel_diff"),
                f("max_abs_diff"),
                f("scale"),
            )
        })
        .collect()
}

/// 3-D contacts (issue 13): seed 004's blade-damper-blade with its 2-D contact elements
/// (normal load that varies, lift-off), harmonic balance against the time integration at the
/// first resonance, where both faces slip and lift off part of the period, just above it,
/// where one face lifts off, and further up, where the normal load varies without lift-off
/// (each face slips somewhere in the period at all three: see docs/contact-3d.md, pitfall 3). Displacements, normal forces and gaps agree
/// to 1e-2 of their largest value; friction forces to 3 % RMS (their largest difference sits
/// at the stick-slip and lift-off jumps); the separated fraction to 3 % of the period (the
/// truncated series rings around lift-off, where the normal force is nearly zero).
#[test]
fn blade_damper_blade_3d_with_lift_off() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("bdb3.h5");
    let m = m.to_str().unwrap();
    let o = ewr(&["model", "example", "blade-damper-blade-3d", "-o", m]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Per frequency, which faces lift off: both at the peak, the left one just above it,
    // none further up.
    for (omega, separates) in [
        ("1240", [true, true]),
        ("1280", [true, false]),
        ("1350", [false, false]),
    ] {
        hb_against_time_3d(m, dir.path(), omega, separates, "all:63");
    }
}

/// One model with both kinds of contact (issue 13: the normal direction is optional per
/// contact): blade-damper-blade-3d whose right face has no normal direction but a fixed
/// normal force, its preload N0 = 50 N, next to the left face's unilateral contact, harmonic
/// balance against the time integration at the first resonance (the left face lifts off,
/// the right one cannot). Tolerances as above; at all:127, since the fixed face moves 15
/// times less than the other and its displacement, judged against its own largest value,
/// differs by 2.1 % at all:63, 0.75 % at all:127 and 0.52 % at all:255 (truncation at its
/// stick-slip kinks).
#[test]
fn blade_damper_blade_3d_with_one_face_at_a_fixed_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.h5");
    let mut model = ewr_model::examples::blade_damper_blade_3d(&Default::default());
    let normal = model.contacts.normal.as_mut().unwrap();
    normal.load = Some(vec![f64::NAN, 50.0]);
    ewr_model::write(&path, &model).unwrap();
    let m = path.to_str().unwrap();
    let info = ewr(&["model", "info", m]);
    let out = String::from_utf8_lossy(&info.stdout);
    assert!(out.contains("1 with a fixed normal load"), "{out}");
    hb_against_time_3d(m, dir.path(), "1240", [true, false], "all:127");
}

/// Harmonic balance (`harmonics`, all:63 unless said) against the time integration
/// (T / 131072) on a model with two 3-D contacts at `omega`, judged as documented above;
/// `separates` says which faces lift off. Returns the harmonic-balance time series.
fn hb_against_time_3d(
    m: &str,
    dir: &Path,
    omega: &str,
    separates: [bool; 2],
    harmonics: &str,
) -> String {
    let hb = dir.join(format!("hb{omega}.csv"));
    let td = dir.join(format!("td{omega}.csv"));
    let (hb, td) = (hb.to_str().unwrap(), td.to_str().unwrap());
    let js = json(&ewr(&[
        "solve",
        m,
        "--omega",
        omega,
        "--harmonics",
        harmonics,
        "--timeseries",
        hb,
        "--json",
        // Judged against the time integration alone: the truncation estimate (solves on
        // all:255 and the set below) and the stability were most of this test's time.
        "--no-estimate",
        "--no-stability",
    ]));
    let period = std::f64::consts::TAU / omega.parse::<f64>().unwrap();
    let dt = format!("{}", period / 131072.0);
    let jt = json(&ewr(&[
        "simulate",
        m,
        "--omega",
        omega,
        "--dt",
        &dt,
        "--timeseries",
        td,
        "--json",
    ]));
    let d = diffs(td, hb);
    // A gap is judged against the contact motion: it opens only briefly and by little.
    let motion = d
        .iter()
        .filter(|x| x.0.starts_with('w') || x.0.starts_with('g'))
        .map(|x| x.4)
        .fold(0.0, f64::max);
    for (col, max, rms, abs, _) in d {
        // Second tangential directions (w<c>_2, wedge-damper-3d's axial slip, 1-15 % of the
        // in-plane motion) have their largest difference, about 2 % of their own size at
        // all:127, where the face lands or lifts off (truncation of a kink), so 3 % there.
        let ok = match &col[..1] {
            "w" if col.ends_with("_2") => max < 3e-2 && rms < 1.5e-2,
            "w" | "n" => max < 1e-2,
            "g" => abs < 1e-2 * motion,
            "r" => rms < 3e-2,
            "v" => rms < 8e-2,
            _ => true,
        };
        assert!(
            ok,
            "w = {omega}: column {col}: max {max:.3e}, rms {rms:.3e}"
        );
    }
    for c in 0..2 {
        let frac = |iv: &serde_json::Value| -> f64 {
            iv.as_array().map_or(0.0, |a| {
                a.iter()
                    .map(|i| i[1].as_f64().unwrap() - i[0].as_f64().unwrap())
                    .sum::<f64>()
            }) / period
        };
        let hb_sep = frac(&js["contacts"][c]["separation_intervals"]);
        let td_sep = frac(&jt["contacts"][c]["separation_intervals"]);
        println!("w = {omega}, contact {c}: separated {hb_sep:.4} (HB), {td_sep:.4} (time)");
        assert_eq!(
            hb_sep > 0.0,
            separates[c],
            "w = {omega} contact {c}: HB separation"
        );
        assert!((hb_sep - td_sep).abs() < 0.03, "w = {omega} contact {c}");
    }
    hb.to_string()
}

/// The wedge damper with an axial direction (issue 13's wedge example): two tangential
/// directions per face and a varying normal load, harmonic balance against the time
/// integration where both faces lift off (w = 1240) and where one does (1300). Tolerances as
/// for blade-damper-blade-3d; the friction force must turn in the face plane (2-D friction,
/// not two 1-D laws).
#[test]
fn wedge_damper_3d_with_two_tangential_directions() {
    let m = model("wedge-damper-3d");
    let dir = tempfile::tempdir().unwrap();
    for (omega, separates) in [("1240", [true, true]), ("1300", [true, false])] {
        // all:127: the axial slip (second direction) converges to the time integration
        // at first order, at 1240 rad/s by max difference 4.1e-2, 2.0e-2, 0.9e-2 of its size
        // at all:63, 127, 255 (docs/contact-3d.md, section 3: the friction equality's
        // weights, 2.3e-2, 1.2e-2, 0.8e-2 with the paper's).
        let hb = hb_against_time_3d(&m, dir.path(), omega, separates, "all:127");
        let hb = hb.as_str();
        let d = diffs(
            &dir.path().join(format!("td{omega}.csv")).to_string_lossy(),
            hb,
        );
        assert!(
            d.iter().any(|x| x.0 == "r1_2"),
            "both tangential directions compared"
        );
        // The friction force of the left face turns through a wide angle while it slides.
        let text = std::fs::read_to_string(hb).unwrap();
        let mut lines = text.lines();
        let names: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |n: &str| names.iter().position(|x| *x == n).unwrap();
        let (r1, r2) = (col("r0_1"), col("r0_2"));
        let angles: Vec<f64> = lines
            .map(|l| {
                l.split(',')
                    .map(|x| x.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .filter(|v| v[r1].hypot(v[r2]) > 1.0)
            .map(|v| v[r2].atan2(v[r1]))
            .collect();
        let spread = angles.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b))
            - angles.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(
            spread > 0.5,
            "w = {omega}: the force direction spans {spread:.2} rad"
        );
    }
}

/// Cyclic symmetry (issue 16): one sector of the lumped bladed disk (N = 12, EO 3), harmonic
/// balance on the sector against the time integration of the whole disk (`ewr model
/// annulus`, 48 DOFs and 24 contacts, no cyclic code involved), near the friction-damped
/// resonance where both contacts of every sector stick and slip. Sector 0's contacts are
/// contacts 0 and 1 of the annulus. At odd:63 the displacements agree to 1 % of their
/// largest value and the friction forces to 1 % RMS; the differences halve from odd:15 to
/// odd:31 to odd:63 (truncation; simulate's own first-order error is below).
#[test]
fn bladed_disk_sector_against_the_simulated_annulus() {
    let dir = tempfile::tempdir().unwrap();
    let sector = model("bladed-disk");
    let disk = dir.path().join("disk.h5");
    let disk = disk.to_str().unwrap();
    let o = ewr(&["model", "annulus", &sector, "-o", disk]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let hb = dir.path().join("hb.csv");
    let td = dir.path().join("td.csv");
    let (hb, td) = (hb.to_str().unwrap(), td.to_str().unwrap());
    let js = json(&ewr(&[
        "solve",
        &sector,
        "--omega",
        "1.21",
        "--harmonics",
        "odd:63",
        "--timeseries",
        hb,
        "--json",
        "--no-estimate",
        "--no-stability",
    ]));
    let jt = json(&ewr(&[
        "simulate",
        disk,
        "--omega",
        "1.21",
        "--timeseries",
        td,
        "--json",
    ]));
    let d = diffs(td, hb);
    assert!(
        d.iter().any(|x| x.0 == "r1_2"),
        "sector 0's contacts compared"
    );
    for (col, max, rms, _, _) in d {
        let ok = match &col[..1] {
            "w" => max < 1e-2,
            "r" => rms < 1e-2,
            "v" => rms < 5e-2,
            _ => true,
        };
        assert!(ok, "column {col}: max {max:.3e}, rms {rms:.3e}");
    }
    // Both contacts stick part of the period, about as long in both computations, and every
    // sector of the annulus as long as the others (a travelling wave). The truncated series
    // finds the platform's stick intervals short: 22 % of the period at odd:15, 25 % at
    // odd:63, 28 % in time; hence 4 % of the period.
    let period = std::f64::consts::TAU / 1.21;
    let frac = |c: &serde_json::Value| -> f64 {
        c["stick_intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i[1].as_f64().unwrap() - i[0].as_f64().unwrap())
            .sum::<f64>()
            / period
    };
    for c in 0..2 {
        let fh = frac(&js["contacts"][c]);
        assert!(fh > 0.1 && fh < 0.9, "contact {c} sticks {fh}");
        let f0 = frac(&jt["contacts"][c]);
        assert!((fh - f0).abs() < 0.04, "contact {c}: {f0} vs {fh}");
        for j in 1..12 {
            let ft = frac(&jt["contacts"][2 * j + c]);
            assert!(
                (f0 - ft).abs() < 1e-3,
                "sector {j} contact {c}: {ft} vs {f0}"
            );
        }
    }
}
