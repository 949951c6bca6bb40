//! End-to-end tests of `ewr study` and `ewr study merge`: validation before work, results
//! and figures, failed cases recorded, resume after a real SIGKILL, shards merged equal to a
//! single run (byte for byte), and merge refusing missing or duplicated cases.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{ewr, s, shipped_model, text};

/// A small study on oscillator-2d: 12 cases (3 mu_n x 4 forcing scales), few harmonics.
fn small_study(dir: &Path, extra: &str) -> PathBuf {
    let model = shipped_model("oscillator-2d");
    let src = format!(
        "title = \"test study\"\nmodel = {:?}\n[frequency]\nstart = 0.6\nend = 1.6\nstep = \
         0.01\n[solver]\nharmonics = \"odd:7\"\n{extra}[grid]\nmu_n = [2, 6, 10]\n\
         forcing_scale = {{ start = 0.5, end = 2.0, count = 4 }}\n",
        model.to_str().unwrap()
    );
    let p = dir.join("study.toml");
    std::fs::write(&p, src).unwrap();
    p
}

fn same_bytes(a: &Path, b: &Path) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(x == y, "{} and {} differ", a.display(), b.display());
}

#[test]
fn study_writes_results_summary_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), "");
    let out = dir.path().join("res/one.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--jobs", "2"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    // One line per finished case, and the optimum.
    assert_eq!(so.matches("] case ").count(), 12, "{so}");
    assert!(so.contains("12 cases: 12 ok"), "{so}");
    assert!(so.contains("optimum: case"), "{so}");
    for suffix in [
        "one.h5",
        "one.csv",
        "one.frc.png",
        "one.peaks.png",
        "one.map.png",
    ] {
        let p = dir.path().join("res").join(suffix);
        assert!(
            p.metadata().map(|m| m.len() > 0).unwrap_or(false),
            "{suffix} missing"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("res/one.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "case,mu_n,forcing_scale,status,peak_omega,peak_amplitude,points,unconverged,iterations,reason"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 12);
    // Grid order: mu_n slowest; peaks grow with the forcing at fixed mu_n.
    assert_eq!(&rows[5][..3], &["5", "6", "1"]);
    for r in &rows {
        assert_eq!(r[3], "ok");
    }
    let peak = |i: usize| rows[i][5].parse::<f64>().unwrap();
    assert!(peak(4) < peak(5) && peak(5) < peak(6) && peak(6) < peak(7));
    // The HDF5 file holds every case's curve.
    let f = ewr_study::read_study_file(&out).unwrap();
    assert_eq!(f.results.len(), 12);
    assert!(f.shard.is_none());
    assert!(
        f.results
            .iter()
            .all(|r| r.omega.len() > 50 && r.peak_amplitude > 0.0)
    );
    assert_eq!(f.results[7].peak_amplitude, peak(7));
}

#[test]
fn invalid_study_is_rejected_before_any_work_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), "tolerance = 1e-9\n");
    let out = dir.path().join("bad.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out)]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(se.contains("line 9") && se.contains("tolerance"), "{se}");
    assert!(!out.exists() && !dir.path().join("bad.h5.cases").exists());
    let study = small_study(dir.path(), "law = \"coulomb\"\n");
    let o = ewr(&["study", s(&study), "-o", s(&out)]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(se.contains("line 9") && se.contains("solver.law"), "{se}");
    let o = ewr(&["study", s(&study), "--shard", "4/3"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn failed_cases_are_recorded_and_the_study_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // One Newton iteration per point: mu_n = 0 (linear) converges, the others cannot.
    let model = shipped_model("oscillator-2d");
    let src = format!(
        "model = {:?}\n[frequency]\nstart = 0.5\nend = 1.5\nstep = 0.05\n[solver]\n\
         harmonics = \"odd:7\"\nmax_iter = 1\n[grid]\nmu_n = [0, 8]\n",
        model.to_str().unwrap()
    );
    let study = dir.path().join("f.toml");
    std::fs::write(&study, src).unwrap();
    let out = dir.path().join("f.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{so}\n{se}");
    assert!(so.contains("1 ok") && so.contains("1 failed"), "{so}");
    let csv = std::fs::read_to_string(dir.path().join("f.csv")).unwrap();
    assert!(
        csv.contains(",failed,NaN,NaN,") && csv.contains("none of the 21 points converged"),
        "{csv}"
    );
    assert!(!dir.path().join("f.peaks.png").exists());
}

/// Runs a study in a child process, kills it (SIGKILL) once `after` case files exist, and
/// returns how many there were when it died.
fn run_and_kill(study: &Path, out: &Path, after: usize) -> usize {
    let cases = PathBuf::from(format!("{}.cases", out.display()));
    let mut child = common::ewr_command()
        .args(["study", s(study), "-o", s(out), "--jobs", "1", "--no-plot"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let count = || {
        std::fs::read_dir(&cases)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("case-"))
                    .count()
            })
            .unwrap_or(0)
    };
    let t0 = Instant::now();
    while count() < after && t0.elapsed() < Duration::from_secs(60) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    count()
}

#[test]
fn killed_study_resumes_to_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), "");
    let whole = dir.path().join("whole.h5");
    let o = ewr(&[
        "study",
        s(&study),
        "-o",
        s(&whole),
        "--no-plot",
        "--jobs",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));

    let resumed = dir.path().join("resumed.h5");
    let done = run_and_kill(&study, &resumed, 3);
    assert!(
        (1..12).contains(&done),
        "the kill should land mid-study ({done} cases finished)"
    );
    assert!(
        !resumed.exists(),
        "killed before the end: no final file yet"
    );
    // Every finished case file is complete and readable.
    let o = ewr(&["study", s(&study), "-o", s(&resumed), "--no-plot"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    assert!(
        so.contains(&format!("{done} cases already finished")),
        "{so}"
    );
    assert_eq!(so.matches("] case ").count(), 12 - done, "{so}");
    same_bytes(&whole, &resumed);
    same_bytes(
        &dir.path().join("whole.csv"),
        &dir.path().join("resumed.csv"),
    );

    // A rerun with nothing left to do computes nothing and writes the same file again.
    let o = ewr(&["study", s(&study), "-o", s(&resumed), "--no-plot"]);
    assert!(text(&o).0.contains("all 12 cases already finished"));
    same_bytes(&whole, &resumed);

    // Changed settings: the finished cases are not silently mixed in.
    let changed = small_study(dir.path(), "tol = 1e-8\n");
    let o = ewr(&["study", s(&changed), "-o", s(&resumed), "--no-plot"]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{se}");
    assert!(se.contains("another study"), "{se}");
}

#[test]
fn shards_in_separate_processes_merge_to_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), "");
    let single = dir.path().join("single.h5");
    let o = ewr(&[
        "study",
        s(&study),
        "-o",
        s(&single),
        "--no-plot",
        "--jobs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));

    let out = dir.path().join("sharded.h5");
    // Three shards at once, as separate processes (one of them through the Slurm variables).
    let children: Vec<_> = (1..=3)
        .map(|i| {
            let mut c = common::ewr_command();
            c.args(["study", s(&study), "-o", s(&out), "--jobs", "1"]);
            if i == 3 {
                c.env("SLURM_ARRAY_TASK_ID", "2")
                    .env("SLURM_ARRAY_TASK_COUNT", "3")
                    .env("SLURM_ARRAY_TASK_MIN", "0");
            } else {
                c.arg("--shard").arg(format!("{i}/3"));
            }
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    }
    let shard = |i: usize| dir.path().join(format!("sharded.shard-{i}-of-3.h5"));
    let shards: Vec<String> = (1..=3).map(|i| s(&shard(i)).to_string()).collect();
    let f = ewr_study::read_study_file(&shard(2)).unwrap();
    assert_eq!(
        f.results.iter().map(|r| r.index).collect::<Vec<_>>(),
        [1, 4, 7, 10]
    );

    let merged = dir.path().join("merged.h5");
    let mut args = vec!["study", "merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["-o", s(&merged), "--no-plot"]);
    let o = ewr(&args);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    same_bytes(&single, &merged);
    same_bytes(
        &dir.path().join("single.csv"),
        &dir.path().join("merged.csv"),
    );

    // A missing shard and a duplicated one are refused.
    let o = ewr(&["study", "merge", &shards[0], &shards[2], "-o", s(&merged)]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(
        se.contains("4 of 12 cases missing") && se.contains("1, 4, 7, 10"),
        "{se}"
    );
    let o = ewr(&[
        "study",
        "merge",
        &shards[0],
        &shards[1],
        &shards[2],
        &shards[1],
        "-o",
        s(&merged),
    ]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(se.contains("duplicated"), "{se}");
}

/// A study on two-mass-damper (damper mass swept in `grid`), with `tail` appended.
fn damper_study(dir: &Path, name: &str, grid: &str, tail: &str) -> PathBuf {
    let model = shipped_model("two-mass-damper");
    let src = format!(
        "model = {:?}\n[frequency]\nstart = 0.2\nend = 2.6\nstep = 0.02\nadaptive = 0.01\n\
         [solver]\nharmonics = \"odd:15\"\ndofs = [\"u11\", \"u12\"]\n[targets]\n\
         mass_dofs = [\"u21\", \"u22\"]\n[grid]\n{grid}\n{tail}",
        model.to_str().unwrap()
    );
    let p = dir.join(name);
    std::fs::write(&p, src).unwrap();
    p
}

/// (mu_n, peak) of every case of a curve study, read from its summary CSV.
fn peaks_by_mu(csv: &Path) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (m, a, st) = (col("mu_n"), col("peak_amplitude"), col("status"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .inspect(|r| assert_eq!(r[st], "ok", "{r:?}"))
        .map(|r| (r[m].parse().unwrap(), r[a].parse().unwrap()))
        .collect()
}

#[test]
fn optimize_finds_the_optimum_of_brute_force_grids_of_full_curves() {
    // The optimum friction bound per damper mass, tracked without full curves, against
    // brute force: every case a full frequency response curve whose peak is refined, first
    // on a grid over the whole range, then on a fine one (spacing 0.01) around the optimum.
    // At mass 0.5 the optimum is where the highest peak changes resonance (w 0.86 -> 1.64),
    // a kink that a tracker following one peak misses (it once reported 13.4 instead of 16.4).
    let dir = tempfile::tempdir().unwrap();
    let study = damper_study(
        dir.path(),
        "opt.toml",
        "mass = [0.5, 1.0]",
        "[optimize]\nparameter = \"mu_n\"\nfrom = 1\nto = 30\ncount = 8\n",
    );
    let out = dir.path().join("opt.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--jobs", "1"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("optimum mu_n = "), "{so}");
    assert!(dir.path().join("opt.peaks.png").exists());
    let csv = std::fs::read_to_string(dir.path().join("opt.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "case,mass,status,optimum_mu_n,peak_omega,peak_amplitude,values,solves,plateau_from,\
         plateau_to,reason"
    );
    let f = ewr_study::read_study_file(&out).unwrap();
    assert_eq!(f.info.optimize, Some(ewr_study::ParamKind::MuN));
    for r in &f.results {
        let mass = r.values[0].num();
        assert_eq!(r.status, ewr_study::CaseStatus::Ok, "{}", r.reason);
        assert!(r.locus_value.len() > 8 && r.omega.is_empty());
        // A sharp minimum (where two peaks cross), not a flat one.
        assert!(r.optimum_plateau.iter().all(|v| v.is_nan()), "{r:?}");
        let (v, peak) = (r.optimum_value, r.peak_amplitude);
        // The locus's smallest point is the optimum.
        let k = r.locus_value.iter().position(|x| *x == v).unwrap();
        assert_eq!(r.locus_amplitude[k], peak);
        // Coarse brute force: the best of 30 values is a neighbour of the optimum.
        let grid = format!("mass = [{mass}]\nmu_n = {{ start = 1, end = 30, count = 30 }}");
        let coarse = damper_study(dir.path(), "coarse.toml", &grid, "");
        let co = dir.path().join("coarse.h5");
        let o = ewr(&["study", s(&coarse), "-o", s(&co), "--no-plot"]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        let pts = peaks_by_mu(&dir.path().join("coarse.csv"));
        let best = pts.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert!(
            (best.0 - v).abs() <= 1.0,
            "mass {mass}: grid {best:?}, tracked {v}"
        );
        assert!(
            peak <= best.1 * (1.0 + 1e-6),
            "mass {mass}: {peak} vs {best:?}"
        );
        // Fine brute force around it: the tracked optimum is within a grid spacing of the
        // grid's best and its peak within what the spacing allows.
        let lo = (v - 0.1).max(1.0);
        let grid = format!(
            "mass = [{mass}]\nmu_n = {{ start = {lo}, end = {}, count = 21 }}",
            lo + 0.2
        );
        let fine = damper_study(dir.path(), "fine.toml", &grid, "");
        let fo = dir.path().join("fine.h5");
        let o = ewr(&["study", s(&fine), "-o", s(&fo), "--no-plot"]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        let pts = peaks_by_mu(&dir.path().join("fine.csv"));
        let best = pts.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert!(
            (best.0 - v).abs() <= 0.0101,
            "mass {mass}: fine grid {best:?}, tracked {v}"
        );
        assert!(
            peak <= best.1 * (1.0 + 1e-6) && peak >= best.1 * (1.0 - 5e-3),
            "mass {mass}: {peak} vs {best:?}"
        );
    }
    // Shards of an optimisation merge to the single run, byte for byte.
    let sharded = dir.path().join("sh.h5");
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let o = ewr(&[
            "study",
            s(&study),
            "-o",
            s(&sharded),
            "--shard",
            &shard,
            "--no-plot",
        ]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    }
    let merged = dir.path().join("merged.h5");
    let a = dir.path().join("sh.shard-1-of-2.h5");
    let b = dir.path().join("sh.shard-2-of-2.h5");
    let o = ewr(&[
        "study",
        "merge",
        s(&a),
        s(&b),
        "-o",
        s(&merged),
        "--no-plot",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    same_bytes(&out, &merged);
}

#[test]
fn a_flat_optimum_is_tabled_with_the_friction_bound_from_which_the_mass_sticks() {
    // oscillator-2d: a unit mass, springs to ground and a rigid 2-D friction contact, forced
    // by s 10 cos(w t) in both directions. From mu N = s 10 sqrt(2) on, friction balances the
    // load at every instant and the mass does not move: every larger mu N is as good, and the
    // flat optimum starts there, proportional to the forcing (closed form, per case).
    let dir = tempfile::tempdir().unwrap();
    let model = shipped_model("oscillator-2d");
    let study = dir.path().join("flat.toml");
    std::fs::write(
        &study,
        format!(
            "model = {:?}\n[frequency]\nstart = 0.2\nend = 2.6\nstep = 0.05\n\
             [solver]\nharmonics = \"odd:15\"\n[grid]\nforcing_scale = [0.5, 1.0]\n\
             [optimize]\nparameter = \"mu_n\"\nfrom = 1\nto = 30\ncount = 8\n",
            model.to_str().unwrap()
        ),
    )
    .unwrap();
    let out = dir.path().join("flat.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    // The summary names the range, not only the round-off pick inside it.
    assert!(
        so.lines()
            .any(|l| l.starts_with("optimum: ") && l.contains(", flat from ")),
        "{so}"
    );
    let csv = std::fs::read_to_string(dir.path().join("flat.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let f = ewr_study::read_study_file(&out).unwrap();
    assert_eq!(rows.len(), 2);
    for (row, r) in rows.iter().zip(&f.results) {
        let scale: f64 = row[col("forcing_scale")].parse().unwrap();
        let threshold = scale * 10.0 * 2f64.sqrt();
        let from: f64 = row[col("plateau_from")].parse().unwrap();
        let to: f64 = row[col("plateau_to")].parse().unwrap();
        // Bisected between grid values 4.1 apart: within 1 % above the closed form, never
        // below it (there the mass slips and its peak is finite).
        assert!(
            from >= threshold && from <= 1.01 * threshold && to == 30.0,
            "forcing scale {scale}: flat from {from} to {to}, the mass sticks from {threshold}"
        );
        // The result file holds the same range as the table.
        assert_eq!(r.optimum_plateau, [from, to], "forcing scale {scale}");
    }
    // Case files written before the range was recorded have none: a rerun keeps them (no
    // case is computed again) and tables NaN.
    let cases = dir.path().join("flat.h5.cases");
    for e in std::fs::read_dir(&cases).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "h5") {
            hdf5::File::open_rw(e.path())
                .unwrap()
                .unlink("optimum_plateau")
                .unwrap();
        }
    }
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    assert!(
        so.contains("already finished") && so.contains("kept"),
        "{so}"
    );
    let csv = std::fs::read_to_string(dir.path().join("flat.csv")).unwrap();
    for row in csv.lines().skip(1) {
        let row: Vec<&str> = row.split(',').collect();
        assert_eq!(
            (row[col("plateau_from")], row[col("plateau_to")]),
            ("NaN", "NaN")
        );
    }
}

#[test]
fn optimize_settings_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "mu_n = [1, 2]",
            "parameter = \"mu_n\"\nfrom = 1\nto = 30\n",
            "also swept",
        ),
        (
            "mass = [1]",
            "parameter = \"rho\"\nfrom = 1\nto = 30\n",
            "optimize.parameter",
        ),
        (
            "mass = [1]",
            "parameter = \"mu_n\"\nfrom = -1\nto = 30\n",
            ">= 0",
        ),
        (
            "mass = [1]",
            "parameter = \"mu\"\nfrom = 0.1\nto = 0.5\n",
            "3-D contacts",
        ),
        (
            "mass = [1]",
            "parameter = \"mu_n\"\nfrom = 1\nto = 3\ncount = 0\n",
            "optimize.count",
        ),
    ];
    for (grid, opt, expect) in cases {
        let study = damper_study(dir.path(), "bad.toml", grid, &format!("[optimize]\n{opt}"));
        let out = dir.path().join("bad.h5");
        let o = ewr(&["study", s(&study), "-o", s(&out)]);
        let (_, se) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{opt}: {se}");
        assert!(se.contains(expect), "{opt}: {se}");
        assert!(!out.exists());
    }
}

#[test]
fn peak_objective_finds_the_peaks_of_fine_curves_with_fewer_points() {
    // objective = "peak": a coarse adaptive sweep (step 0.05) whose local maxima are refined,
    // against curves on a fixed step 0.005 (ten times finer) refined the same way.
    let dir = tempfile::tempdir().unwrap();
    let grid = "mu_n = [4, 16]\nmass = [0.5, 1.0]";
    let fine = damper_study(dir.path(), "fine.toml", grid, "");
    let text_of = |p: &Path| std::fs::read_to_string(p).unwrap();
    let src = text_of(&fine).replace("step = 0.02\nadaptive = 0.01\n", "step = 0.005\n");
    std::fs::write(&fine, src).unwrap();
    let peak = damper_study(dir.path(), "peak.toml", grid, "");
    let src = format!(
        "objective = \"peak\"\n{}",
        text_of(&peak).replace("step = 0.02\nadaptive = 0.01\n", "step = 0.05\n")
    );
    std::fs::write(&peak, src).unwrap();
    let run = |study: &Path, out: &str| {
        let out = dir.path().join(out);
        let o = ewr(&["study", s(study), "-o", s(&out), "--no-plot"]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        ewr_study::read_study_file(&out).unwrap()
    };
    let (f, p) = (run(&fine, "fine.h5"), run(&peak, "peak.h5"));
    assert!(p.info.peaks && !f.info.peaks);
    for (a, b) in f.results.iter().zip(&p.results) {
        let rel = (a.peak_amplitude - b.peak_amplitude).abs() / a.peak_amplitude;
        assert!(
            rel < 1e-6,
            "{}: fine {} at {}, peak objective {} at {}",
            a.key,
            a.peak_amplitude,
            a.peak_omega,
            b.peak_amplitude,
            b.peak_omega
        );
        assert!(
            b.omega.len() * 2 < a.omega.len(),
            "{} vs {} points",
            b.omega.len(),
            a.omega.len()
        );
        // Every local maximum is kept, the highest among them.
        assert!(!b.peaks_omega.is_empty());
        let top = b.peaks_amplitude.iter().copied().fold(0.0, f64::max);
        assert_eq!(top, b.peak_amplitude);
    }
}

#[test]
fn the_shipped_optimisation_study_is_valid() {
    let study = common::workspace().join("models/damper-optimum.toml");
    let o = ewr(&["study", s(&study), "--check"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("3 cases"), "{so}");
}

#[test]
fn adding_an_optimisation_to_a_study_does_not_overwrite_its_finished_cases() {
    // The case files of the curve study have another layout and fingerprint: the run must
    // stop naming the folder, not read them as broken and compute over them.
    let dir = tempfile::tempdir().unwrap();
    let study = damper_study(dir.path(), "s.toml", "mass = [0.5]", "");
    let out = dir.path().join("s.h5");
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let cases = dir.path().join("s.h5.cases");
    let case_files = || -> Vec<Vec<u8>> {
        let mut files: Vec<_> = std::fs::read_dir(&cases)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".h5"))
            .collect();
        files.sort();
        files.iter().map(|p| std::fs::read(p).unwrap()).collect()
    };
    let before = case_files();
    let opt = "[optimize]\nparameter = \"mu_n\"\nfrom = 1\nto = 30\ncount = 4\n";
    let study = damper_study(dir.path(), "s.toml", "mass = [0.5]", opt);
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{se}");
    assert!(se.contains("another study"), "{se}");
    let after = case_files();
    assert!(
        !before.is_empty() && before == after,
        "a finished case file changed"
    );
}

/// A case condensed by modes from a damping matrix that couples them (a dashpot mid-chain, as
/// in `cli_modes`) is warned of, as `ewr frc` warns: once for the study, naming the cases, and
/// kept in each case's file so that a rerun that only reuses the cases says it again. A
/// Rayleigh-damped chain says nothing.
#[test]
fn a_study_warns_once_where_the_modes_drop_the_damping_coupling() {
    let dir = tempfile::tempdir().unwrap();
    for dashpot in [true, false] {
        let model = dir.path().join(format!("chain-{dashpot}.h5"));
        ewr_model::write(&model, &common::long_chain(dashpot)).unwrap();
        let study = dir.path().join(format!("study-{dashpot}.toml"));
        std::fs::write(
            &study,
            format!(
                "model = {:?}\n[frequency]\nstart = 0.25\nend = 0.35\nstep = 0.05\n\
                 [solver]\nharmonics = \"odd:3\"\nreceptance = \"modal:10\"\n\
                 [grid]\nmu_n = [0.5, 2]\n",
                model.to_str().unwrap()
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("res-{dashpot}/s.h5"));
        for run in ["computed", "reused"] {
            let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
            let (so, se) = text(&o);
            assert_eq!(o.status.code(), Some(0), "{run}: {so}\n{se}");
            assert_eq!(
                se.matches("couples them").count(),
                usize::from(dashpot),
                "{run}: {se}"
            );
            if dashpot {
                assert!(se.contains("(every case)"), "{run}: {se}");
            }
        }
        let f = ewr_study::read_study_file(&out).unwrap();
        assert_eq!(f.results.len(), 2);
        for r in &f.results {
            assert_eq!(r.warnings.len(), usize::from(dashpot), "{:?}", r.warnings);
        }
        // A case without a warning has no dataset for it: its file is as it was before.
        let cases = ewr_study::cases_dir_for(&out);
        for e in std::fs::read_dir(&cases).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "h5") {
                let file = hdf5::File::open(e.path()).unwrap();
                assert_eq!(
                    file.link_exists("warnings"),
                    dashpot,
                    "{}",
                    e.path().display()
                );
            }
        }
    }
}
