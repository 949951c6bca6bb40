//! End-to-end tests of `ewr import ...` on real CalculiX output and on bad input.
//!
//! (a) always: the committed CalculiX export of `tests/ccx/plate*` and the shipped
//!     `models/blade-ccx.h5` must reproduce CalculiX's own eigenfrequencies (`*-freq.dat`).
//! (b) when `ccx` is on PATH: CalculiX is rerun on the committed inputs in a temporary folder
//!     and the fresh export is checked the same way. With `EWR_REQUIRE_CCX=1` (set by CI) a
//!     missing `ccx` is a failure, not a skip.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/mod.rs"]
mod common;
use common::{csv_table, ewr, s, text, workspace};

#[track_caller]
fn ok(args: &[&str]) -> String {
    let o = ewr(args);
    assert!(o.status.success(), "ewr {args:?}: {:?}", text(&o));
    text(&o).0
}

/// Runs ewr and expects bad-input exit code 2 with `words` in the message.
#[track_caller]
fn bad(args: &[&str], words: &str) {
    let o = ewr(args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "ewr {args:?}: {out} {err}");
    assert!(err.contains(words), "expected `{words}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn info_json(file: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["model", "info", "--json", s(file)])).unwrap()
}

fn frequencies_hz(info: &serde_json::Value) -> Vec<f64> {
    info["natural_frequencies"]
        .as_array()
        .expect("natural frequencies computed")
        .iter()
        .map(|w| w.as_f64().unwrap() / std::f64::consts::TAU)
        .collect()
}

/// Frequencies (cycles per time unit) of the eigenvalue table of a CalculiX `.dat` file.
fn dat_frequencies(dat: &Path) -> Vec<f64> {
    ewr_import::calculix::read_dat_eigenvalues(dat)
        .unwrap()
        .iter()
        .map(|m| m.frequency)
        .collect()
}

/// CalculiX prints 7 significant digits: agreement to 1e-6 relative is all the .dat allows.
#[track_caller]
fn assert_matches_ccx(ours: &[f64], ccx: &[f64]) {
    assert!(
        ccx.len() >= 6 && ours.len() >= ccx.len(),
        "{ours:?} {ccx:?}"
    );
    for (k, (a, b)) in ours.iter().zip(ccx).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6 * b,
            "mode {}: ewr {a} Hz, CalculiX {b} Hz",
            k + 1
        );
    }
}

/// Imports the plate job `dir/plate` with its contacts and forcing and checks it against
/// `dir/plate-freq.dat`; returns the model's summary.
fn check_plate(dir: &Path, out: &Path) -> serde_json::Value {
    let fixture = workspace().join("tests/ccx");
    let msg = ok(&[
        "import",
        "calculix",
        s(&dir.join("plate")),
        "-o",
        s(out),
        "--contacts",
        s(&fixture.join("plate-contacts.csv")),
        "--forcing",
        s(&fixture.join("plate-forcing.csv")),
        "--rayleigh",
        "0,1e-6",
    ]);
    assert!(
        msg.contains("342 DOFs, 1 contacts of dim 2, 1 forcing terms"),
        "{msg}"
    );
    assert!(ok(&["model", "check", s(out)]).contains("valid ewr model"));
    let info = info_json(out);
    assert_matches_ccx(
        &frequencies_hz(&info),
        &dat_frequencies(&dir.join("plate-freq.dat")),
    );
    info
}

#[test]
fn committed_calculix_export_matches_calculix_frequencies() {
    let tmp = tempfile::tempdir().unwrap();
    let info = check_plate(&workspace().join("tests/ccx"), &tmp.path().join("plate.h5"));
    assert_eq!(info["n_dofs"], 342);
    assert_eq!(info["contacts"]["kinematics"], "node-to-ground DOFs");
    assert_eq!(info["damping"][0], "Rayleigh alpha = 0e0, beta = 1e-6");
    // No rho in the contacts file: the SI model gets the automatic scaling.
    assert_eq!(info["contacts"]["rho_auto"], true);
    // A rho in the file is kept as given.
    let contacts = tmp.path().join("rho.csv");
    std::fs::write(
        &contacts,
        "node,other,mu_n,rho,nx,ny,nz\n127,ground,5.0,2.5,0,1,0\n",
    )
    .unwrap();
    let out = tmp.path().join("rho.h5");
    let dir = workspace().join("tests/ccx");
    ok(&[
        "import",
        "calculix",
        s(&dir.join("plate")),
        "-o",
        s(&out),
        "--contacts",
        s(&contacts),
    ]);
    let info = info_json(&out);
    assert_eq!(info["contacts"]["rho_auto"], false);
    assert_eq!(info["contacts"]["rho_min"], 2.5);
}

#[test]
fn shipped_blade_matches_calculix_frequencies() {
    let blade = workspace().join("models/blade-ccx.h5");
    assert!(ok(&["model", "check", s(&blade)]).contains("valid ewr model"));
    let info = info_json(&blade);
    assert_eq!(info["n_dofs"], 570);
    assert_eq!(info["contacts"]["count"], 2);
    assert_eq!(info["contacts"]["dim"], 2);
    assert_eq!(info["forcing"]["terms"], 1);
    assert_matches_ccx(
        &frequencies_hz(&info),
        &dat_frequencies(&workspace().join("models/blade-ccx/blade-freq.dat")),
    );
}

/// The same plate through Matrix Market files: the committed CalculiX export rewritten as
/// `symmetric` .mtx (CalculiX's upper triangle, which the reader accepts) plus its DOF map.
#[test]
fn matrix_market_route_gives_the_same_model() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = workspace().join("tests/ccx");
    let n = std::fs::read_to_string(fixture.join("plate.dof"))
        .unwrap()
        .lines()
        .count();
    for (ccx, mtx) in [("plate.sti", "k.mtx"), ("plate.mas", "m.mtx")] {
        let body = std::fs::read_to_string(fixture.join(ccx)).unwrap();
        let nnz = body.lines().count();
        let head = format!("%%MatrixMarket matrix coordinate real symmetric\n{n} {n} {nnz}\n");
        std::fs::write(tmp.path().join(mtx), head + &body).unwrap();
    }
    let out = tmp.path().join("plate-mtx.h5");
    ok(&[
        "import",
        "mtx",
        "--mass",
        s(&tmp.path().join("m.mtx")),
        "--stiffness",
        s(&tmp.path().join("k.mtx")),
        "--dofs",
        s(&fixture.join("plate.dof")),
        "-o",
        s(&out),
        "--contacts",
        s(&fixture.join("plate-contacts.csv")),
        "--forcing",
        s(&fixture.join("plate-forcing.csv")),
        "--rayleigh",
        "0,1e-6",
    ]);
    let via_ccx = tmp.path().join("plate-ccx.h5");
    let mut a = check_plate(&fixture, &via_ccx);
    let mut b = info_json(&out);
    for v in [&mut a, &mut b] {
        v["file"] = serde_json::Value::Null;
        v["title"] = serde_json::Value::Null;
    }
    assert_eq!(a, b);
}

// ---------------------------------------------------------------- CalculiX rerun

/// The `ccx` binary on PATH; `None` (skip) when absent, unless `EWR_REQUIRE_CCX=1`.
fn ccx() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("ccx"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("EWR_REQUIRE_CCX").as_deref() != Ok("1"),
            "EWR_REQUIRE_CCX=1 but `ccx` is not on PATH (apt-get install calculix-ccx)"
        );
        eprintln!("ccx not on PATH: CalculiX rerun skipped (set EWR_REQUIRE_CCX=1 to fail)");
    }
    found
}

/// Copies the inputs of job `name` from `from` to `to` and runs its matrix export and its
/// eigenvalue job there.
fn run_ccx(ccx: &Path, from: &Path, to: &Path, name: &str) {
    for f in [
        format!("{name}.inp"),
        format!("{name}-freq.inp"),
        format!("{name}-model.inp"),
    ] {
        std::fs::copy(from.join(&f), to.join(&f)).unwrap();
    }
    for job in [name.to_string(), format!("{name}-freq")] {
        let o = Command::new(ccx)
            .args(["-i", &job])
            .current_dir(to)
            // One thread: the jobs are tiny and tests run in parallel.
            .env("OMP_NUM_THREADS", "1")
            .output()
            .expect("ccx runs");
        assert!(o.status.success(), "ccx -i {job}: {:?}", text(&o));
    }
}

#[test]
fn calculix_rerun_plate_matches_its_own_frequencies() {
    let Some(ccx) = ccx() else { return };
    let tmp = tempfile::tempdir().unwrap();
    run_ccx(&ccx, &workspace().join("tests/ccx"), tmp.path(), "plate");
    let info = check_plate(tmp.path(), &tmp.path().join("plate.h5"));
    // The fresh export is the committed one, up to CalculiX's printed digits.
    let committed = check_plate(
        &workspace().join("tests/ccx"),
        &tmp.path().join("committed.h5"),
    );
    for (a, b) in frequencies_hz(&info).iter().zip(frequencies_hz(&committed)) {
        assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
    }
}

#[test]
fn calculix_rerun_blade_matches_the_shipped_model() {
    let Some(ccx) = ccx() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let src = workspace().join("models/blade-ccx");
    run_ccx(&ccx, &src, tmp.path(), "blade");
    let out = tmp.path().join("blade.h5");
    // The options of scripts/make-ccx-models.sh that change what is compared below.
    ok(&[
        "import",
        "calculix",
        s(&tmp.path().join("blade")),
        "-o",
        s(&out),
        "--contacts",
        s(&src.join("contacts.csv")),
        "--forcing",
        s(&src.join("forcing.csv")),
    ]);
    let fresh = info_json(&out);
    let shipped = info_json(&workspace().join("models/blade-ccx.h5"));
    assert_matches_ccx(
        &frequencies_hz(&fresh),
        &dat_frequencies(&tmp.path().join("blade-freq.dat")),
    );
    for key in ["n_dofs", "nnz", "contacts", "forcing"] {
        assert_eq!(fresh[key], shipped[key], "{key}");
    }
    for (a, b) in frequencies_hz(&fresh).iter().zip(frequencies_hz(&shipped)) {
        assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
    }
}

// ---------------------------------------------------------------- bad input

struct Files(tempfile::TempDir);

impl Files {
    fn new() -> Self {
        Files(tempfile::tempdir().unwrap())
    }
    fn put(&self, name: &str, text: &str) -> String {
        let p = self.0.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    }
    fn out(&self) -> String {
        s(&self.0.path().join("out.h5")).to_string()
    }
}

const K: &str = "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2\n2 1 -1\n2 2 1\n";
const M: &str = "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 1\n";

#[test]
fn bad_matrix_market_files_exit_2_with_file_and_line() {
    let f = Files::new();
    let m = f.put("m.mtx", M);
    let out = f.out();
    let run = |k: &str, words: &str| {
        let k = f.put("k.mtx", k);
        bad(
            &["import", "mtx", "--mass", &m, "--stiffness", &k, "-o", &out],
            words,
        );
    };
    run(
        "%%MatrixMarket matrix coordinate complex symmetric\n2 2 1\n1 1 1 0\n",
        "k.mtx:1: `complex` matrices are not supported",
    );
    run(
        "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n1 1\n",
        "k.mtx:1: a `pattern` matrix has no values",
    );
    run(
        "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n",
        "k.mtx:1: dense `array` format",
    );
    run("2 2 1\n1 1 1\n", "k.mtx:1: not a Matrix Market file");
    run(
        "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n",
        "k.mtx:2: the matrix is 2 x 3",
    );
    run(
        &K[..K.len() - 6],
        "k.mtx:5: the file ends after 2 of the 3 entries",
    );
    run(
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n0 0 2\n1 0 -1\n1 1 1\n",
        "k.mtx:3: row index 0: Matrix Market indices are 1-based",
    );
    // Sizes that do not agree.
    let k3 = f.put(
        "k3.mtx",
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n3 3 1\n",
    );
    bad(
        &[
            "import",
            "mtx",
            "--mass",
            &m,
            "--stiffness",
            &k3,
            "-o",
            &out,
        ],
        "m.mtx: the matrix is 2 x 2 but the stiffness",
    );
    // A missing file.
    bad(
        &[
            "import",
            "mtx",
            "--mass",
            "nope.mtx",
            "--stiffness",
            &k3,
            "-o",
            &out,
        ],
        "nope.mtx: cannot read",
    );
    assert!(
        !Path::new(&out).exists(),
        "no model is written on bad input"
    );
}

#[test]
fn duplicates_are_summed_and_reported() {
    let f = Files::new();
    let k = f.put(
        "k.mtx",
        "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n1 1 1\n2 1 -1\n1 2 -1\n2 2 1\n",
    );
    let m = f.put("m.mtx", M);
    let out = f.out();
    let msg = ok(&["import", "mtx", "--mass", &m, "--stiffness", &k, "-o", &out]);
    assert!(msg.contains("1 duplicate entries summed"), "{msg}");
    let info = info_json(Path::new(&out));
    // K = [[2, -1], [-1, 1]], M = I: omega^2 = (3 -+ sqrt 5) / 2.
    let w: Vec<f64> = info["natural_frequencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(
        (w[0] - ((3.0 - 5f64.sqrt()) / 2.0).sqrt()).abs() < 1e-12,
        "{w:?}"
    );
    assert_eq!(info["contacts"]["count"], 0);
    assert!(msg.contains("no forcing"), "{msg}");
}

#[test]
fn bad_csv_and_options_exit_2() {
    let f = Files::new();
    let k = f.put("k.mtx", K);
    let m = f.put("m.mtx", M);
    let out = f.out();
    let base = ["import", "mtx", "--mass", &m, "--stiffness", &k, "-o", &out];
    let with = |extra: &[&str], words: &str| {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        bad(&args, words);
    };
    let dofs = f.put("map.dof", "5.1\n5.2\n");
    let c = f.put("c.csv", "node,mu_n,t1x,t1y,t1z\n5,1,1,0,0\n6,1,1,0,0\n");
    with(
        &["--dofs", &dofs, "--contacts", &c],
        "c.csv:3: node 6 (column `node`) is not in",
    );
    let c = f.put("c2.csv", "eq1,mu_n\n0,1\n");
    with(
        &["--contacts", &c],
        "c2.csv:2: `eq1` = 0: equation numbers are 1-based",
    );
    let c = f.put("c3.csv", "5,1,1,0,0\n");
    with(&["--contacts", &c], "c3.csv:1: missing header row");
    let c = f.put("c4.csv", "node,mu_n,nx,ny,nz\n5,1,0,0,1\n");
    with(
        &["--contacts", &c],
        "c4.csv:1: column `node` needs a DOF map",
    );
    let fo = f.put("f.csv", "eq,harmonic,cos\n3,1,1\n");
    with(&["--forcing", &fo], "f.csv:2: `eq` = 3 is out of range");
    with(&["--rayleigh", "-1,0"], "Rayleigh alpha = -1");
    with(&["--eta", "nan"], "hysteretic eta");
    with(&["--eta", "-0.1"], "hysteretic eta = -0.1");
    // clap's own usage errors use exit code 2 as well.
    with(&["--rayleigh", "1"], "ALPHA,BETA");
    // A good CSV on the same files works.
    let c = f.put("ok.csv", "node,mu_n,t1x,t1y,t1z\n5,1,1,0,0\n");
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--dofs", &dofs, "--contacts", &c])
        .collect();
    assert!(ok(&args).contains("1 contacts of dim 1"));
}

#[test]
fn bad_calculix_files_exit_2_with_file_and_line() {
    let f = Files::new();
    let out = f.out();
    let fixture = workspace().join("tests/ccx");
    let job = f.0.path().join("plate");
    let job_s = s(&job);
    bad(
        &["import", "calculix", job_s, "-o", &out],
        "plate.dof: not found",
    );
    std::fs::copy(fixture.join("plate.dof"), job.with_extension("dof")).unwrap();
    std::fs::copy(fixture.join("plate.mas"), job.with_extension("mas")).unwrap();
    // A stiffness file cut in the middle of its last number, then at a line end.
    let sti = std::fs::read_to_string(fixture.join("plate.sti")).unwrap();
    let lines = sti.lines().count();
    std::fs::write(job.with_extension("sti"), &sti[..sti.len() - 4]).unwrap();
    bad(
        &["import", "calculix", job_s, "-o", &out],
        &format!("plate.sti:{lines}: the last line has no end of line"),
    );
    let half: String = sti
        .lines()
        .take(lines / 2)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(job.with_extension("sti"), half).unwrap();
    bad(
        &["import", "calculix", job_s, "-o", &out],
        "no diagonal entry for",
    );
    // Unknown node in the contacts file.
    std::fs::write(job.with_extension("sti"), &sti).unwrap();
    let c = f.put(
        "c.csv",
        "node,other,mu_n,nx,ny,nz\n127,ground,1,0,1,0\n99999,,1,0,1,0\n",
    );
    bad(
        &["import", "calculix", job_s, "-o", &out, "--contacts", &c],
        "c.csv:3: node 99999 (column `node`) is not in",
    );
    // A contact on the clamped root (node 1 has no free DOF).
    let c = f.put("c.csv", "node,mu_n,nx,ny,nz\n1,1,0,1,0\n");
    bad(
        &["import", "calculix", job_s, "-o", &out, "--contacts", &c],
        "c.csv:2: node 1 (column `node`) is not in",
    );
    // And the repaired job imports.
    assert!(ok(&["import", "calculix", job_s, "-o", &out]).contains("342 DOFs"));
}

#[test]
fn friction_frc_on_the_imported_blade() {
    // The shipped CalculiX blade, near its first bending mode (239.1 Hz = 1502 rad/s): with a
    // light normal load (mu N = 2 N) the tip contacts slide and the blade resonates; with
    // mu N = 20 N they stick and hold the tip, so the resonance leaves the band.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("frc.csv");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/blade-ccx.h5");
    let o = common::ewr_command()
        .args(["frc", model.to_str().unwrap()])
        .args([
            "--omega-start",
            "1400",
            "--omega-end",
            "1600",
            "--step",
            "20",
        ])
        .args(["--harmonics", "odd:7", "--mu-n", "20,2"])
        .args(["--csv", csv.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 22);
    assert!(rows.iter().all(|r| r[2] == 1.0), "every point converged");
    // Peak of the total amplitude (column amp_norm) per curve and where it is.
    let peak = |mu: f64| {
        rows.iter()
            .filter(|r| r[0] == mu)
            .map(|r| (r[5], r[1]))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
    };
    let (slide, w_slide) = peak(2.0);
    let (stick, _) = peak(20.0);
    assert!(
        (1480.0..=1520.0).contains(&w_slide),
        "sliding peak at {w_slide}"
    );
    assert!(slide > 10.0 * stick, "sliding {slide} vs stuck {stick}");
}

// ---------------------------------------------------------------- 3-D contacts (issue 13)

/// A node on isotropic springs `k` against a tilted rigid wall (normal `n`, interference
/// `delta`, contact stiffness `k_n`), pressed onto it by a static force `F0` along `-n` and
/// shaken along a tangent: imported through `ewr import mtx` and solved, the normal force
/// is the closed form `lambda = k_n (k delta + F0) / (k + k_n)` at every sample, so the
/// normal's sign convention (the node separates along `n`) and the interference are read
/// as documented. With `n` reversed the static force pulls the node off the wall
/// (`k delta - F0 < 0`): the contact is open all period.
#[test]
fn imported_3d_contact_gives_the_closed_form_preload() {
    let tmp = tempfile::tempdir().unwrap();
    let w = |name: &str, body: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let diag = |v: f64| {
        format!(
            "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 {v}\n2 2 {v}\n3 3 {v}\n"
        )
    };
    let (k, k_n, delta, f0) = (4.0, 2.0, 0.01, 0.3);
    let n = [0.6, 0.0, 0.8];
    let m = w("m.mtx", &diag(1.0));
    let kk = w("k.mtx", &diag(k));
    let c = w("c.mtx", &diag(0.02));
    let dofs = w("n.dof", "1.1\n1.2\n1.3\n");
    // Static -F0 n; 0.05 cos(w t) along the tangent (0.8, 0, -0.6).
    let forcing = w(
        "f.csv",
        &format!(
            "eq,harmonic,cos\n1,0,{}\n3,0,{}\n1,1,0.04\n3,1,-0.03\n",
            -f0 * n[0],
            -f0 * n[2]
        ),
    );
    let lambda = k_n * (k * delta + f0) / (k + k_n);
    for (sign, expect) in [(1.0, lambda), (-1.0, 0.0)] {
        let contacts = w(
            "contacts.csv",
            &format!(
                "node,other,mu,g0,k_n,nx,ny,nz\n1,ground,0.5,{},{k_n},{},0,{}\n",
                -delta,
                sign * n[0],
                sign * n[2]
            ),
        );
        let model = tmp.path().join(format!("one{sign}.h5"));
        let msg = ok(&[
            "import",
            "mtx",
            "--mass",
            s(&m),
            "--stiffness",
            s(&kk),
            "--damping",
            s(&c),
            "--dofs",
            s(&dofs),
            "--contacts",
            s(&contacts),
            "--forcing",
            s(&forcing),
            "-o",
            s(&model),
        ]);
        assert!(msg.contains("1 3-D contacts"), "{msg}");
        let out = ok(&[
            "solve",
            s(&model),
            "--omega",
            "1.5",
            "--harmonics",
            "all:5",
            "--json",
        ]);
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        let r = j["contacts"][0]["normal_force_range"].as_array().unwrap();
        for v in r {
            let v = v.as_f64().unwrap();
            assert!(
                (v - expect).abs() < 1e-8,
                "n sign {sign}: {r:?}, expected {expect}"
            );
        }
    }
}

/// Issue 29's stiff shroud: the shipped blade re-imported with its two tip-shroud faces as
/// 3-D contacts (`k_n = k_t = 1e7`, 67 N interference), swept at all:31 through the re-stick
/// of both contacts (8740-8790 rad/s) into their stuck tail. The held mean forces there come
/// from where each contact re-stuck, located by bisection inside the step; located to `step /
/// 16`, steps 40 and 20 held the tail 27-44 % away from step 5's, because the contact, just
/// past its re-stick, was held where Newton's path left it (docs/stuck-contacts.md, pitfall
/// 6). Now steps 40 and 10 agree within 0.3 % at every shared point.
#[test]
fn a_stiff_shroud_s_stuck_tail_does_not_depend_on_the_step() {
    let Some(ccx) = ccx() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    run_ccx(&ccx, &workspace().join("models/blade-ccx"), dir, "blade");
    let g0 = -67.0 / 1e7;
    std::fs::write(
        dir.join("contacts.csv"),
        format!(
            "node,other,mu,g0,k_n,k_t,nx,ny,nz\n\
             192,ground,0.3,{g0},1e7,1e7,0.000000,-0.866025,0.500000\n\
             202,ground,0.3,{g0},1e7,1e7,0.000000,0.866025,-0.500000\n"
        ),
    )
    .unwrap();
    let model = dir.join("shroud.h5");
    ok(&[
        "import",
        "calculix",
        s(&dir.join("blade")),
        "-o",
        s(&model),
        "--contacts",
        s(&dir.join("contacts.csv")),
        "--forcing",
        s(&workspace().join("models/blade-ccx/forcing.csv")),
        "--rayleigh",
        "0,1e-6",
    ]);
    let sweep = |step: &str| {
        let csv = dir.join(format!("step{step}.csv"));
        ok(&[
            "frc",
            s(&model),
            "--omega-start",
            "8600",
            "--omega-end",
            "9000",
            "--step",
            step,
            "--harmonics",
            "all:31",
            "--no-refine",
            "--csv",
            s(&csv),
        ]);
        csv_table(&csv)
            .iter()
            .map(|r| (r["omega"], r["amp_norm"], r["stick0"].min(r["stick1"])))
            .collect::<Vec<_>>()
    };
    let (coarse, fine) = (sweep("40"), sweep("10"));
    assert_eq!((coarse.len(), fine.len()), (11, 41));
    for (i, c) in coarse.iter().enumerate() {
        let f = fine[4 * i];
        assert!((c.0 - f.0).abs() < 1e-6);
        assert!(
            (c.1 - f.1).abs() < 0.01 * f.1,
            "w = {}: amplitude {} at step 40, {} at step 10",
            c.0,
            c.1,
            f.1
        );
        if c.0 >= 8800.0 {
            assert!(c.2 == 1.0 && f.2 == 1.0, "w = {}: both contacts stuck", c.0);
        }
    }
}
