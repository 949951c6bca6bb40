//! Careless and hostile input (issue 14): outputs that name an input or each other, outputs
//! onto non-regular files, files that declare absurd sizes, runaway grids and steps,
//! concurrent studies on one output, stale temporary files, NaN in comparisons, option errors
//! found before any work, a closed stdout, messages without debug text, and results that do
//! not depend on the thread count. Every case checks the exit code and that nothing the user
//! had was changed.

mod common;

use common::{ewr, s, shipped_model, text};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A scratch folder with a copy of the oscillator model as `m.h5`.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.h5");
    std::fs::copy(shipped_model("oscillator-2d"), &m).unwrap();
    (dir, m)
}

/// Runs `ewr args`, expects exit `code` and `needle` in stderr; returns stderr.
fn expect(args: &[&str], code: i32, needle: &str) -> String {
    let o = ewr(args);
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(code),
        "ewr {args:?}\nstdout: {out}\nstderr: {err}"
    );
    assert!(
        err.contains(needle),
        "ewr {args:?}: stderr lacks {needle:?}:\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn outputs_that_name_the_input_are_refused_before_any_work() {
    let (dir, m) = scratch();
    let d = dir.path();
    let before = std::fs::read(&m).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(&m, d.join("link.h5")).unwrap();
    let dotted = d.join("sub/../m.h5");
    let link = d.join("link.h5");
    let cases: Vec<Vec<&str>> = vec![
        vec!["solve", s(&m), "--omega", "0.5", "-o", s(&m)],
        vec!["solve", s(&m), "--omega", "0.5", "-o", s(&dotted)],
        vec!["solve", s(&m), "--omega", "0.5", "-o", s(&link)],
        vec!["solve", s(&m), "--omega", "0.5", "--timeseries", s(&m)],
        vec![
            "frc",
            s(&m),
            "--omega-start",
            "0.5",
            "--omega-end",
            "0.6",
            "--step",
            "0.05",
            "--csv",
            s(&m),
        ],
        vec!["simulate", s(&m), "--omega", "0.5", "-o", s(&m)],
        vec![
            "simulate",
            s(&m),
            "--omega",
            "0.5",
            "--timeseries",
            s(&link),
        ],
    ];
    for args in &cases {
        expect(args, 2, "never overwrites its input");
        assert_eq!(
            std::fs::read(&m).unwrap(),
            before,
            "{args:?} changed the model"
        );
    }
    // Two outputs of one command with the same path.
    let x = d.join("x.csv");
    expect(
        &[
            "solve",
            s(&m),
            "--omega",
            "0.5",
            "-o",
            s(&x),
            "--timeseries",
            s(&x),
        ],
        2,
        "are the same file",
    );
    assert!(!x.exists(), "nothing is written when the outputs clash");
}

#[test]
fn import_and_study_never_overwrite_their_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let k = d.join("K.mtx");
    let mm = d.join("M.mtx");
    std::fs::write(
        &k,
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 2 3\n",
    )
    .unwrap();
    std::fs::write(
        &mm,
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 1\n",
    )
    .unwrap();
    let before = std::fs::read(&mm).unwrap();
    expect(
        &[
            "import",
            "mtx",
            "--mass",
            s(&mm),
            "--stiffness",
            s(&k),
            "-o",
            s(&mm),
        ],
        2,
        "never overwrites its input",
    );
    assert_eq!(std::fs::read(&mm).unwrap(), before);

    // A study whose output is its own model.
    let (sdir, m) = scratch();
    let study = sdir.path().join("s.toml");
    std::fs::write(
        &study,
        "model = \"m.h5\"\n[frequency]\nstart = 0.5\nend = 0.6\nstep = 0.05\n[grid]\nmu_n = [1, 2]\n",
    )
    .unwrap();
    let before = std::fs::read(&m).unwrap();
    expect(
        &["study", s(&study), "-o", s(&m)],
        2,
        "never overwrites its input",
    );
    assert_eq!(std::fs::read(&m).unwrap(), before);
}

#[test]
fn outputs_onto_devices_and_folders_are_refused() {
    let (dir, m) = scratch();
    expect(
        &["solve", s(&m), "--omega", "0.5", "-o", "/dev/null"],
        2,
        "a device",
    );
    assert!(Path::new("/dev/null").exists());
    expect(
        &["model", "example", "two-dof-1d", "-o", s(dir.path())],
        2,
        "a directory",
    );
}

#[test]
fn option_errors_are_exit_2_before_any_output_is_written() {
    let (dir, m) = scratch();
    let d = dir.path();
    let out = d.join("r.h5");
    let ts = d.join("ts.csv");
    for (args, needle) in [
        (
            vec![
                "solve",
                s(&m),
                "--omega",
                "0.5",
                "--samples",
                "4000000000",
                "-o",
                s(&out),
            ],
            "--samples",
        ),
        (
            vec![
                "solve",
                s(&m),
                "--omega",
                "0.5",
                "-o",
                s(&out),
                "--timeseries",
                s(&ts),
                "--plot",
                "fig.txt",
            ],
            ".png or .svg",
        ),
        (
            vec!["solve", s(&m), "--omega", "0.5", "--rho", "-2"],
            "--rho -2",
        ),
    ] {
        expect(&args, 2, needle);
        assert!(!out.exists() && !ts.exists(), "{args:?} wrote an output");
    }
}

#[test]
fn a_step_far_too_small_is_refused_and_a_capped_curve_is_not_success() {
    let (_dir, m) = scratch();
    expect(
        &[
            "frc",
            s(&m),
            "--omega-start",
            "0.5",
            "--omega-end",
            "1.5",
            "--step",
            "1e-12",
        ],
        2,
        "more than the 100000",
    );
}

#[test]
fn a_curve_that_stops_keeps_its_points_in_every_output() {
    // Without damping the oscillator's structure is singular at its natural frequency w = 1,
    // which the sweep hits exactly: the curve stops there with an error, after two points.
    let (dir, m) = scratch();
    {
        let f = hdf5::File::open_rw(&m).unwrap();
        f.unlink("C").unwrap();
        f.close().unwrap();
    }
    let d = dir.path();
    let h5 = d.join("frc.h5");
    let csv = d.join("frc.csv");
    let o = ewr(&[
        "frc",
        s(&m),
        "--omega-start",
        "0.5",
        "--omega-end",
        "1.5",
        "--step",
        "0.25",
        "--harmonics",
        "odd:5",
        "-o",
        s(&h5),
        "--csv",
        s(&csv),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("stopped on an error"), "{err}");
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(rows, 2, "the CSV keeps the two points before w = 1");
    let f = hdf5::File::open(&h5).unwrap();
    let g = f.group("curve_0").unwrap();
    let omega: Vec<f64> = g.dataset("omega").unwrap().read_raw().unwrap();
    assert_eq!(omega, [0.5, 0.75], "the HDF5 file keeps them too");
    let status: hdf5::types::VarLenUnicode = g.attr("status").unwrap().read_scalar().unwrap();
    assert!(status.as_str().contains("singular"), "{status}");
}

#[test]
fn compare_fails_on_nan_and_infinity() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    std::fs::write(&a, "t,w0_1\n0,1\n1,2\n2,3\n").unwrap();
    std::fs::write(&b, "t,w0_1\n0,1\n1,NaN\n2,3\n").unwrap();
    expect(&["compare", s(&a), s(&b)], 1, "NaN or infinite");
    std::fs::write(&b, "t,w0_1\n0,inf\n1,2\n2,3\n").unwrap();
    expect(&["compare", s(&a), s(&b)], 1, "NaN or infinite");
    std::fs::write(&b, "t,w0_1\n0,1\n1,2\n2,3\n").unwrap();
    let o = ewr(&["compare", s(&a), s(&b)]);
    assert_eq!(o.status.code(), Some(0));
}

/// Writes an HDF5 model whose `/K/data` declares `n` entries but stores none (the dataset is
/// chunked and never written), with a matching CSR `indptr` only as an attribute claim.
fn hostile_h5(path: &Path, declared: usize, what: &str) {
    let f = hdf5::File::create(path).unwrap();
    let put = |loc: &hdf5::Location, name: &str, v: &str| {
        let v: hdf5::types::VarLenUnicode = v.parse().unwrap();
        loc.new_attr::<hdf5::types::VarLenUnicode>()
            .create(name)
            .unwrap()
            .write_scalar(&v)
            .unwrap();
    };
    put(&f, "format", "ewr-model");
    f.new_attr::<i64>()
        .create("version")
        .unwrap()
        .write_scalar(&1)
        .unwrap();
    for m in ["K", "M"] {
        let g = f.create_group(m).unwrap();
        let n = if what == "shape" || what == "coo" {
            declared
        } else {
            2
        };
        g.new_attr::<i64>()
            .shape([2])
            .create("shape")
            .unwrap()
            .write_raw(&[n as i64, n as i64])
            .unwrap();
        if what == "coo" {
            // Two entries, in a matrix of 1.5e9 DOFs: the size is refused before it is built.
            put(&g, "encoding-type", "coo_matrix");
            for name in ["row", "col"] {
                g.new_dataset_builder()
                    .with_data(&[0i64, 1])
                    .create(name)
                    .unwrap();
            }
            g.new_dataset_builder()
                .with_data(&[1.0f64, 1.0])
                .create("data")
                .unwrap();
            continue;
        }
        put(&g, "encoding-type", "csr_matrix");
        // Chunked datasets that are never written hold no bytes, whatever they declare.
        let len = |name: &str| if what == name { declared } else { 2 };
        let data = g
            .new_dataset::<f64>()
            .chunk(len("data").min(1 << 16))
            .shape([len("data")])
            .create("data")
            .unwrap();
        let indices = g
            .new_dataset::<i64>()
            .chunk(len("indices").min(1 << 16))
            .shape([len("indices")])
            .create("indices")
            .unwrap();
        if what != "data" {
            data.write_raw(&[1.0, 1.0]).unwrap();
            indices.write_raw(&[0i64, 1]).unwrap();
        }
        let ip_len = if what == "indptr" { declared } else { n + 1 };
        let ip = g
            .new_dataset::<i64>()
            .chunk(ip_len.min(1 << 16))
            .shape([ip_len])
            .create("indptr")
            .unwrap();
        if ip_len == 3 {
            ip.write_raw(&[0i64, 1, 2]).unwrap();
        }
    }
}

#[test]
fn files_declaring_absurd_sizes_are_refused_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    for what in ["data", "indptr", "shape", "coo"] {
        let p = dir.path().join(format!("{what}.h5"));
        hostile_h5(&p, 1_500_000_000, what);
        assert!(std::fs::metadata(&p).unwrap().len() < 100_000);
        let err = expect(&["model", "check", s(&p)], 2, "/K");
        let why = if what == "coo" {
            "every DOF needs a mass or a stiffness"
        } else {
            "stores only 0 bytes"
        };
        assert!(err.contains(why), "{what}: {err}");
    }
    // A 75-byte Matrix Market file declaring 2e8 rows, and one announcing 2e9 entries.
    let k = dir.path().join("K.mtx");
    let out = dir.path().join("x.h5");
    for (size_line, why) in [
        (
            "200000000 200000000 1",
            "every DOF needs a mass or a stiffness",
        ),
        ("2 2 2000000000", "truncated or corrupt"),
    ] {
        std::fs::write(
            &k,
            format!("%%MatrixMarket matrix coordinate real symmetric\n{size_line}\n1 1 1\n"),
        )
        .unwrap();
        let args = [
            "import",
            "mtx",
            "--mass",
            s(&k),
            "--stiffness",
            s(&k),
            "-o",
            s(&out),
        ];
        expect(&args, 2, why);
    }
}

#[test]
fn a_runaway_study_grid_is_refused_even_for_check() {
    let (dir, _m) = scratch();
    let study = dir.path().join("s.toml");
    // One range too long by itself; then two ranges whose product is too many cases.
    for (count, why) in [(1_000_000, "count"), (1000, "1000 x 1000 cases")] {
        std::fs::write(
            &study,
            format!(
                "model = \"m.h5\"\n[frequency]\nstart = 0.5\nend = 0.6\nstep = 0.05\n[grid]\n\
                 mu_n = {{ start = 1, end = 2, count = {count} }}\n\
                 forcing_scale = {{ start = 1, end = 2, count = {count} }}\n"
            ),
        )
        .unwrap();
        expect(&["study", s(&study), "--check"], 2, why);
    }
}

#[test]
fn a_second_study_on_the_same_output_is_refused_naming_the_holder() {
    let (dir, _m) = scratch();
    let d = dir.path();
    let study = d.join("s.toml");
    std::fs::write(
        &study,
        "model = \"m.h5\"\n[frequency]\nstart = 0.05\nend = 1.5\nstep = 0.002\n[grid]\n\
         mu_n = [1, 2, 3, 4, 5, 6, 7, 8]\n",
    )
    .unwrap();
    let out = d.join("out.h5");
    let mut first = common::ewr_command()
        .args([
            "study",
            s(&study),
            "-o",
            s(&out),
            "--jobs",
            "1",
            "--no-plot",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the first study holds its lock.
    let lock = d.join("out.h5.cases/lock");
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.contains("pid")) {
        assert!(t0.elapsed().as_secs() < 60, "the first study never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = ewr(&["study", s(&study), "-o", s(&out), "--no-plot"]);
    let still_running = first.try_wait().unwrap().is_none();
    let (_, err) = text(&o);
    if still_running {
        assert_eq!(o.status.code(), Some(2), "{err}");
        // The output file is claimed first (every command claims its outputs); the cases
        // folder's lock stays for runs that reach it.
        assert!(
            err.contains("another running") && err.contains(&format!("pid {}", first.id())),
            "{err}"
        );
    }
    assert!(first.wait().unwrap().success());
}

#[test]
fn stale_temporary_files_of_killed_runs_are_cleaned_up() {
    let (dir, m) = scratch();
    let d = dir.path();
    // A pid above the kernel's limit (2^22) never runs.
    let stale = d.join(".r.h5.99999999.partial");
    std::fs::write(&stale, b"half a file").unwrap();
    let out = d.join("r.h5");
    let o = ewr(&[
        "solve",
        s(&m),
        "--omega",
        "0.5",
        "--harmonics",
        "odd:5",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(out.exists());
    assert!(!stale.exists(), "the killed run's partial file is removed");
}

#[test]
fn a_closed_stdout_ends_quietly_without_a_panic() {
    let (_dir, m) = scratch();
    let mut child = common::ewr_command()
        .args(["model", "info", s(&m)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end at once, as `| head -0` would.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.status.code().is_some_and(|c| c == 0), "{:?}", o.status);
}

#[test]
fn model_check_lists_problems_of_every_part_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.h5");
    std::fs::copy(shipped_model("oscillator-2d"), &p).unwrap();
    {
        let f = hdf5::File::open_rw(&p).unwrap();
        // A structural problem (M's indptr is gone) and a semantic one (negative mu_n).
        f.group("M").unwrap().unlink("indptr").unwrap();
        let mu = f.dataset("contacts/mu_n").unwrap();
        let mut v: Vec<f64> = mu.read_raw().unwrap();
        v[0] = -1.0;
        mu.write_raw(&v).unwrap();
        f.close().unwrap();
    }
    let err = expect(&["model", "check", s(&p)], 2, "/M/indptr");
    assert!(err.contains("/contacts/mu_n"), "{err}");
}

#[test]
fn a_dof_without_mass_or_stiffness_and_an_indefinite_k_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.h5");
    std::fs::copy(shipped_model("two-dof-1d"), &p).unwrap();
    let set_k_diag = |value: f64| {
        let f = hdf5::File::open_rw(&p).unwrap();
        let g = f.group("K").unwrap();
        let data = g.dataset("data").unwrap();
        let indices: Vec<i64> = g.dataset("indices").unwrap().read_raw().unwrap();
        let indptr: Vec<i64> = g.dataset("indptr").unwrap().read_raw().unwrap();
        let mut v: Vec<f64> = data.read_raw().unwrap();
        // The first stored diagonal entry.
        let p0 = (indptr[0]..indptr[1])
            .find(|&q| indices[q as usize] == 0)
            .unwrap() as usize;
        v[p0] = value;
        data.write_raw(&v).unwrap();
        f.close().unwrap();
    };
    set_k_diag(-5.0);
    expect(&["model", "check", s(&p)], 2, "K is indefinite");
}

#[test]
fn modal_results_do_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("sector.h5");
    assert!(
        ewr(&["model", "example", "sector", "-o", s(&model)])
            .status
            .success()
    );
    let run = |threads: &str| -> Vec<f64> {
        let out = dir.path().join(format!("r{threads}.h5"));
        let o = common::ewr_command()
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "solve",
                s(&model),
                "--omega",
                "3400",
                "--harmonics",
                "odd:3",
                "--receptance",
                "modal:30",
                "-o",
                s(&out),
            ])
            .output()
            .unwrap();
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o).1);
        let f = hdf5::File::open(&out).unwrap();
        f.dataset("friction").unwrap().read_raw().unwrap()
    };
    let (a, b) = (run("1"), run("2"));
    assert_eq!(a, b, "bitwise equal with 1 and 2 threads");
}

#[test]
fn files_on_which_libhdf5_crashes_or_loops_are_refused() {
    // Found by tests/fuzz_inputs.rs: byte mutations of a shipped model whose variable-length
    // string attributes make HDF5 1.10 copy out of bounds (SIGSEGV) or loop forever.
    let fixtures = common::workspace().join("tests/fixtures/damaged");
    for (file, why) in [
        ("heap-segfault.h5", "crashed on it"),
        ("heap-loop.h5", "did not finish reading it"),
    ] {
        let p = fixtures.join(file);
        let o = common::ewr_command()
            .env("EWR_PROBE_SECONDS", "3")
            .args(["model", "check", s(&p)])
            .output()
            .unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{file}: {err}");
        assert!(
            err.contains(why) && err.contains("damaged"),
            "{file}: {err}"
        );
    }
}
