//! Interrupted sweeps: SIGINT or SIGTERM during `ewr frc` keeps every computed point in the
//! CSV, the HDF5 file and the figure, and `--resume` continues to the same curve an
//! uninterrupted run gives.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{ewr, shipped_model, text};

fn curve(path: &str, i: usize) -> (Vec<f64>, Vec<f64>, String) {
    let f = hdf5::File::open(path).unwrap();
    let g = f.group(&format!("curve_{i}")).unwrap();
    let w: Vec<f64> = g.dataset("omega").unwrap().read_raw().unwrap();
    let a: Vec<f64> = g.dataset("amp_norm").unwrap().read_raw().unwrap();
    let status: hdf5::types::VarLenUnicode = g.attr("status").unwrap().read_scalar().unwrap();
    (w, a, status.as_str().to_string())
}

fn csv_rows(path: &str) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count() - 1
}

/// The same answer at the same frequencies, to the solver's tolerance.
fn same_curve(a: &(Vec<f64>, Vec<f64>, String), b: &(Vec<f64>, Vec<f64>, String)) {
    assert_eq!(a.0.len(), b.0.len(), "point counts differ");
    for ((wa, aa), (wb, ab)) in a.0.iter().zip(&a.1).zip(b.0.iter().zip(&b.1)) {
        assert!((wa - wb).abs() < 1e-12, "w {wa} vs {wb}");
        assert!(
            (aa - ab).abs() <= 1e-7 * aa.abs(),
            "at w = {wa}: {aa} vs {ab}"
        );
    }
}

const SWEEP: [&str; 8] = [
    "--omega-start",
    "0.05",
    "--omega-end",
    "1.5",
    "--step",
    "0.005",
    "--mu-n",
    "5,8",
];

#[test]
fn resume_after_a_partial_run_gives_the_uninterrupted_curves() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let model = shipped_model("oscillator-2d");
    let model = model.to_str().unwrap();
    let (full, part, part_csv) = (p("full.h5"), p("part.h5"), p("part.csv"));
    let mut args = vec!["frc", model];
    args.extend(SWEEP);
    args.extend(["--no-refine", "-o", &full]);
    let o = ewr(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    // The first part of the same sweep, as a run stopped at w = 0.6 leaves it.
    let mut first = args.clone();
    first[5] = "0.6";
    first.truncate(first.len() - 1);
    first.extend([part.as_str(), "--csv", &part_csv]);
    let o = ewr(&first);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let before = curve(&part, 0).0.len();
    let mut resumed = args.clone();
    resumed.truncate(resumed.len() - 1);
    resumed.extend([part.as_str(), "--csv", &part_csv, "--resume"]);
    let o = ewr(&resumed);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    for i in 0..2 {
        let (a, b) = (curve(&full, i), curve(&part, i));
        assert!(b.0.len() > before);
        same_curve(&a, &b);
        assert_eq!(b.2, "complete");
    }
    // The CSV holds every point of both curves again.
    assert_eq!(csv_rows(&part_csv), 2 * curve(&full, 0).0.len());
    // A file from other options is refused before any work.
    let mut wrong = resumed.clone();
    wrong.extend(["--harmonics", "odd:21"]);
    let o = ewr(&wrong);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("harmonics"), "{}", text(&o).1);
}

fn interrupt_and_resume(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let model = shipped_model("two-mass-damper");
    let (h5, csv, fig) = (p("frc.h5"), p("frc.csv"), p("frc.svg"));
    // About 30 s of work: the signal comes well before the end.
    let args = [
        "frc",
        model.to_str().unwrap(),
        "--omega-start",
        "0.2",
        "--omega-end",
        "2.5",
        "--step",
        "0.0005",
        "--harmonics",
        "odd:199",
        "--no-refine",
        "-o",
        &h5,
        "--csv",
        &csv,
        "--plot",
        &fig,
    ];
    let child = common::ewr_command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first points, then interrupt.
    let t0 = Instant::now();
    while std::fs::read_to_string(&csv).map_or(0, |s| s.lines().count()) < 20 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no points written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("--resume"),
        "{err}"
    );
    let (w, _, status) = curve(&h5, 0);
    assert!(
        w.len() >= 19 && w.last().unwrap() < &2.5,
        "{} points",
        w.len()
    );
    assert!(status.starts_with("interrupted at w ="), "{status}");
    assert_eq!(csv_rows(&csv), w.len(), "CSV and HDF5 hold the same points");
    assert!(std::fs::metadata(&fig).unwrap().len() > 0);
    // Resume a bit of it: the same command over a shorter range finishes at once.
    let mut again: Vec<&str> = args.to_vec();
    let stop = format!("{}", w.last().unwrap() + 0.01);
    again[5] = &stop;
    again.push("--resume");
    let o = ewr(&again);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let (w2, a2, status2) = curve(&h5, 0);
    assert_eq!(status2, "complete");
    assert!(w2.len() > w.len() && w2[..w.len()] == w[..]);
    assert!(w2.last().unwrap() + 1e-9 >= w.last().unwrap() + 0.0095);
    assert!(a2.iter().all(|a| a.is_finite() && *a > 0.0));
}

#[test]
fn sigint_keeps_every_point_and_resume_continues() {
    interrupt_and_resume("-INT");
}

#[test]
fn sigterm_keeps_every_point_and_resume_continues() {
    interrupt_and_resume("-TERM");
}
