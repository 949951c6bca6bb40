//! Reliability, second round (issue 34): a full disk, a failed or pointless resume, two runs on
//! one output, an interrupted peak tracking, an output that cannot be written, and sizes
//! beyond the machine's memory. Every case checks the exit code, the message, and that what
//! the user already had is unchanged.

mod common;

use common::{ewr, s, shipped_model, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `ewr args` under bash with `limits` (e.g. `ulimit -f 40`) and SIGXFSZ ignored, so
/// that a write past the file-size limit fails with EFBIG as on a full disk.
fn ewr_limited(limits: &str, args: &[&str]) -> Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; {limits}; HDF5_USE_FILE_LOCKING=FALSE exec '{}' {}",
            env!("CARGO_BIN_EXE_ewr"),
            quoted.join(" ")
        ))
        .output()
        .expect("bash runs")
}

fn frc_args<'a>(model: &'a str, end: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "frc",
        model,
        "--omega-start",
        "0.3",
        "--omega-end",
        end,
        "--step",
        "0.02",
        "--harmonics",
        "odd:15",
        "--no-refine",
        "-o",
        out,
    ]
}

fn omegas(path: &Path) -> Vec<f64> {
    let f = hdf5::File::open(path).unwrap();
    f.group("curve_0")
        .unwrap()
        .dataset("omega")
        .unwrap()
        .read_raw::<f64>()
        .unwrap()
}

#[test]
fn a_full_disk_fails_and_keeps_the_previous_result() {
    let dir = tempfile::tempdir().unwrap();
    let model = shipped_model("two-mass-damper");
    let out = dir.path().join("frc.h5");
    let o = ewr(&frc_args(s(&model), "0.5", s(&out)));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let before = std::fs::read(&out).unwrap();
    // 16 KiB per file: far less than the longer sweep's result.
    let o = ewr_limited("ulimit -f 16", &frc_args(s(&model), "2.5", s(&out)));
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("frc.h5"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the old result is intact"
    );
    // One periodic solution likewise.
    let sol = dir.path().join("sol.h5");
    let args = [
        "solve",
        s(&model),
        "--omega",
        "0.5",
        "--harmonics",
        "odd:63",
        "-o",
        s(&sol),
    ];
    let o = ewr_limited("ulimit -f 16", &args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).1);
    assert!(!sol.exists(), "no damaged file is left behind");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial") || n.ends_with(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_resume_that_cannot_continue_leaves_the_stored_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frc.h5");
    let tmd = shipped_model("two-mass-damper");
    let o = ewr(&frc_args(s(&tmd), "0.5", s(&out)));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let before = std::fs::read(&out).unwrap();
    // Another model with one contact and the same harmonics: its unknowns do not fit.
    let other = shipped_model("two-dof-1d");
    let mut args = frc_args(s(&other), "0.9", s(&out));
    args.push("--resume");
    let o = ewr(&args);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--resume") && err.contains("left as it was"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the stored sweep is intact"
    );
}

#[test]
fn resuming_a_finished_sweep_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frc.h5");
    let model = shipped_model("two-mass-damper");
    for (from, to) in [("0.3", "0.5"), ("0.5", "0.3")] {
        let mut args = frc_args(s(&model), to, s(&out));
        args[3] = from;
        let o = ewr(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        let first = omegas(&out);
        assert_eq!(first.len(), 11);
        args.push("--resume");
        let o = ewr(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        assert_eq!(
            omegas(&out),
            first,
            "{from} -> {to}: the same points, none added"
        );
    }
}

#[test]
fn a_second_writer_of_the_same_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frc.h5");
    let csv = dir.path().join("frc.csv");
    let model = shipped_model("two-mass-damper");
    // A few seconds of work, so that the second run starts while the first writes.
    let args = [
        "frc",
        s(&model),
        "--omega-start",
        "0.2",
        "--omega-end",
        "2.5",
        "--step",
        "0.001",
        "--harmonics",
        "odd:99",
        "--no-refine",
        "-o",
        s(&out),
        "--csv",
        s(&csv),
    ];
    let mut first = common::ewr_command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !csv.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the first run wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = ewr(&args);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("another running ewr"), "{err}");
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    // A study merge into a file a command is writing is refused the same way.
    let o = ewr(&["study", "merge", s(&csv), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    let _ = first.kill();
    let _ = first.wait();
}

#[test]
fn interrupted_peak_tracking_writes_the_locus_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("peaks.h5");
    let model = shipped_model("two-mass-damper");
    let child = common::ewr_command()
        .args([
            "peaks",
            s(&model),
            "--param",
            "mu_n",
            "--from",
            "1",
            "--to",
            "30",
            "--count",
            "200",
            "--omega-start",
            "0.2",
            "--omega-end",
            "2.6",
            "--step",
            "0.002",
            "--harmonics",
            "odd:63",
            "-o",
            s(&out),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let f = hdf5::File::open(&out).unwrap();
    let status = f
        .attr("status")
        .unwrap()
        .read_scalar::<hdf5::types::VarLenUnicode>()
        .unwrap();
    assert_eq!(status.as_str(), "interrupted");
}

#[test]
fn an_output_that_cannot_be_written_is_found_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let model = shipped_model("two-mass-damper");
    // 251 bytes: a valid name, but its temporary file's name is too long.
    let long = dir.path().join(format!("{}.h5", "r".repeat(248)));
    let mut args = frc_args(s(&model), "2.5", s(&long));
    args[7] = "0.0005";
    let t0 = Instant::now();
    let o = ewr(&args);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("-o") && err.contains("cannot write"), "{err}");
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "refused before the 4600-point sweep, not after it"
    );
}

#[test]
fn sizes_beyond_memory_or_reason_are_refused_not_aborted() {
    let model = shipped_model("oscillator-2d");
    // A dense Jacobian of 200 000 unknowns: 1 TB.
    let o = ewr(&[
        "solve",
        s(&model),
        "--omega",
        "0.5",
        "--harmonics",
        "odd:100001",
        "--no-ramp",
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("GB") && !err.contains("panicked"), "{err}");
    // The largest sample count accepted, under a 4 GB address space.
    let o = ewr_limited(
        "ulimit -v 4000000",
        &[
            "solve",
            s(&model),
            "--omega",
            "0.5",
            "--samples",
            "268435456",
        ],
    );
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("GB"), "{err}");
    let peaks = |count: &str, step: &str| {
        ewr(&[
            "peaks",
            s(&model),
            "--param",
            "mu_n",
            "--from",
            "5",
            "--to",
            "10",
            "--count",
            count,
            "--omega-start",
            "0.9",
            "--omega-end",
            "1.1",
            "--step",
            step,
            "--harmonics",
            "odd:7",
        ])
    };
    let o = peaks("10000000", "0.05");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    assert!(text(&o).1.contains("at most 1000"), "{}", text(&o).1);
    // A step far too small for the band: refused as `ewr frc` refuses it.
    let o = peaks("2", "1e-12");
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("more than the 100000"), "{err}");
}

#[test]
fn negative_numbers_in_scientific_notation_and_fifos_are_named() {
    let model = shipped_model("oscillator-2d");
    for args in [
        vec!["solve", s(&model), "--omega", "0.5", "--tol", "-1e-10"],
        vec!["simulate", s(&model), "--omega", "0.5", "--tol", "-1e-10"],
    ] {
        let o = ewr(&args);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--tol -0.0000000001: must be finite"), "{err}");
    }
    // Options with an optional value (--adaptive) still stop at the next option.
    let o = ewr(&[
        "frc",
        s(&model),
        "--omega-start",
        "0.9",
        "--omega-end",
        "1.0",
        "--step",
        "0.05",
        "--harmonics",
        "odd:7",
        "--adaptive",
        "--mu-n",
        "4",
        "--no-refine",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    // A model that is a FIFO is named as such, not read until a timeout calls it damaged.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("m.h5");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let t0 = Instant::now();
    let o = ewr(&["solve", s(&fifo), "--omega", "0.5"]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let study = dir.path().join("s.toml");
    std::fs::write(
        &study,
        "model = \"m.h5\"\n[frequency]\nstart = 0.5\nend = 1\nstep = 0.1\n",
    )
    .unwrap();
    let o = ewr(&["study", s(&study), "--check"]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a regular file") && err.contains("m.h5"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(20), "found at once");
}

#[test]
fn absurd_sector_counts_are_refused_by_model_check() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("disk.h5");
    std::fs::copy(shipped_model("bladed-disk"), &m).unwrap();
    {
        let f = hdf5::File::open_rw(&m).unwrap();
        f.dataset("cyclic/sectors")
            .unwrap()
            .write_scalar(&(1i64 << 62))
            .unwrap();
    }
    for cmd in [
        &["model", "check"][..],
        &["model", "info"],
        &["model", "annulus"],
    ] {
        let mut args: Vec<&str> = cmd.to_vec();
        args.push(s(&m));
        let out = dir.path().join("annulus.h5");
        if cmd[1] == "annulus" {
            args.extend(["-o", s(&out)]);
        }
        let o = ewr(&args);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("at most 10000"), "{args:?}: {err}");
    }
}

/// Sends SIGINT to `child` once `ready` holds (or after `wait`), and returns its output.
fn interrupt(child: std::process::Child, ready: impl Fn() -> bool, wait: Duration) -> Output {
    let t0 = Instant::now();
    while !ready() && t0.elapsed() < wait {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    child.wait_with_output().unwrap()
}

#[test]
fn interrupted_studies_and_simulations_keep_their_work() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(shipped_model("two-mass-damper"), dir.path().join("m.h5")).unwrap();
    let study = dir.path().join("s.toml");
    std::fs::write(
        &study,
        "model = \"m.h5\"\n[frequency]\nstart = 0.2\nend = 2.6\nstep = 0.002\n[solver]\n\
         harmonics = \"odd:31\"\n[grid]\nmu_n = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n",
    )
    .unwrap();
    let out = dir.path().join("out.h5");
    let args = [
        "study",
        s(&study),
        "-o",
        s(&out),
        "--jobs",
        "1",
        "--no-plot",
    ];
    let cases = dir.path().join("out.h5.cases");
    let child = common::ewr_command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let finished = || {
        std::fs::read_dir(&cases).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("case-"))
                .count()
        })
    };
    let o = interrupt(child, || finished() >= 1, Duration::from_secs(60));
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted after") && err.contains("rerun"),
        "{err}"
    );
    let kept = finished();
    assert!((1..12).contains(&kept), "{kept} cases kept");
    assert!(!out.exists(), "no partial study file");
    let o = ewr(&args);
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        stdout.contains(&format!("{kept} cases already finished")),
        "{stdout}"
    );
    // A simulation reports its last period, marked interrupted.
    let sim = dir.path().join("sim.h5");
    let child = common::ewr_command()
        .args([
            "simulate",
            s(&shipped_model("two-mass-damper")),
            "--omega",
            "0.5",
            "--periods",
            "100000",
            "--tol",
            "1e-300",
            "-o",
            s(&sim),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = interrupt(child, || false, Duration::from_secs(2));
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted after"), "{err}");
    let f = hdf5::File::open(&sim).unwrap();
    let status = f
        .attr("status")
        .unwrap()
        .read_scalar::<hdf5::types::VarLenUnicode>()
        .unwrap();
    assert_eq!(status.as_str(), "interrupted");
}

#[test]
fn damaged_resume_and_case_files_are_named_not_crashed_on() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = common::workspace().join("tests/fixtures/damaged/heap-segfault.h5");
    let out = dir.path().join("frc.h5");
    std::fs::copy(&damaged, &out).unwrap();
    let before = std::fs::read(&out).unwrap();
    let model = shipped_model("two-mass-damper");
    let mut args = frc_args(s(&model), "0.5", s(&out));
    args.push("--resume");
    let o = common::ewr_command()
        .env("EWR_PROBE_SECONDS", "3")
        .args(&args)
        .output()
        .unwrap();
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("damaged") && err.contains("frc.h5"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // A study whose cases folder holds a damaged case file: named, set aside, recomputed.
    std::fs::copy(&model, dir.path().join("m.h5")).unwrap();
    let study = dir.path().join("s.toml");
    std::fs::write(
        &study,
        "model = \"m.h5\"\n[frequency]\nstart = 0.3\nend = 0.6\nstep = 0.02\n[solver]\n\
         harmonics = \"odd:15\"\n[grid]\nmu_n = [2, 8]\n",
    )
    .unwrap();
    let res = dir.path().join("st.h5");
    let run = || {
        common::ewr_command()
            .env("EWR_PROBE_SECONDS", "3")
            .args(["study", s(&study), "-o", s(&res), "--no-plot"])
            .output()
            .unwrap()
    };
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let first = std::fs::read_dir(dir.path().join("st.h5.cases"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "h5"))
        .unwrap();
    std::fs::copy(&damaged, &first).unwrap();
    let o = run();
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("damaged") && err.contains("set aside"),
        "{err}"
    );
    assert!(stdout.contains("1 cases already finished"), "{stdout}");
}

#[test]
fn curves_and_loci_that_stop_short_say_so() {
    // Arclength on the 3-D contact turns back at w = 6.45 and leaves the band at its start:
    // not "complete" (issue 29).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("arc.h5");
    let model = shipped_model("single-contact-3d");
    let o = ewr(&[
        "frc",
        s(&model),
        "--omega-start",
        "1",
        "--omega-end",
        "20",
        "--step",
        "0.05",
        "--harmonics",
        "all:15",
        "--continuation",
        "arclength",
        "--no-refine",
        "-o",
        s(&out),
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("without reaching 20"), "{err}");
    let f = hdf5::File::open(&out).unwrap();
    let status = f
        .group("curve_0")
        .unwrap()
        .attr("status")
        .unwrap()
        .read_scalar::<hdf5::types::VarLenUnicode>()
        .unwrap();
    assert!(
        status.as_str().contains("turned back"),
        "{}",
        status.as_str()
    );
    // A tracked peak that leaves the band is not followed out of it.
    let o = ewr(&[
        "peaks",
        s(&shipped_model("two-mass-damper")),
        "--param",
        "mu_n",
        "--from",
        "2",
        "--to",
        "20",
        "--count",
        "6",
        "--omega-start",
        "0.3",
        "--omega-end",
        "1.2",
        "--step",
        "0.02",
        "--harmonics",
        "odd:15",
        "--json",
    ]);
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("left the frequency band 0.3..1.2"), "{err}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for p in j["locus"].as_array().unwrap() {
        let w = p["omega"].as_f64().unwrap();
        assert!((0.3..=1.2).contains(&w), "a peak outside the band: {p}");
    }
}
