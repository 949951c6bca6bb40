//! Bounded fuzzing of every reader of user files (issue 14): random byte mutations and random
//! HDF5 structure edits of valid model files, random edits of Matrix Market, CalculiX-style
//! DOF maps and contact CSV files. Each mutated file goes through the `ewr` binary, which must
//! answer 0 (still valid) or 2 (bad input, with a message): never a panic, an abort or a
//! signal, whatever the bytes. The generator is seeded, so a failure names the seed and case
//! that reproduce it and the input is kept in `target/fuzz-failures/`.
//!
//! Budget: `EWR_FUZZ_SECONDS` per target (default 15 s), so CI stays bounded.

mod common;

use common::{shipped_model, text, workspace};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// xorshift64*: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn budget() -> Duration {
    let s = std::env::var("EWR_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15.0);
    Duration::from_secs_f64(s)
}

/// Held while this process has an HDF5 file open and while it starts a child: HDF5 opens
/// files without close-on-exec, so a child started meanwhile would inherit the file and its
/// lock, and the next open of that file in this process would fail.
static HDF5_OR_SPAWN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `ewr args`; panics (keeping `input` for reproduction) unless it exits 0 or 2 without
/// a panic message.
fn run_clean(args: &[&str], input: &Path, label: &str) {
    let child = {
        let _guard = HDF5_OR_SPAWN.lock().unwrap_or_else(|e| e.into_inner());
        common::ewr_command()
            .args(args)
            // A file on which HDF5 loops is refused after this long, not 30 s.
            .env("EWR_PROBE_SECONDS", "5")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the ewr binary runs")
    };
    let o = child.wait_with_output().expect("the ewr binary runs");
    let (_, err) = text(&o);
    let ok = matches!(o.status.code(), Some(0 | 2)) && !err.contains("panicked");
    if !ok {
        let keep = workspace().join("target/fuzz-failures");
        std::fs::create_dir_all(&keep).unwrap();
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let kept = keep.join(format!("{label}-{name}"));
        let _ = std::fs::copy(input, &kept);
        panic!(
            "{label}: ewr {args:?} ended with {:?}\nstderr: {err}\ninput kept as {}",
            o.status,
            kept.display()
        );
    }
}

/// Byte-level mutations: flips, overwrites with extreme bytes, truncation, splices.
fn mutate_bytes(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    for _ in 0..1 + rng.below(8) {
        if v.is_empty() {
            break;
        }
        match rng.below(5) {
            0 => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(v.len());
                let b = [0x00, 0xff, 0x7f, 0x80][rng.below(4)];
                let n = (1 + rng.below(8)).min(v.len() - i);
                v[i..i + n].iter_mut().for_each(|x| *x = b);
            }
            2 => {
                let keep = rng.below(v.len());
                v.truncate(keep.max(1));
            }
            3 => {
                let (a, b) = (rng.below(v.len()), rng.below(v.len()));
                let n = (1 + rng.below(64)).min(v.len() - a.max(b));
                let chunk = v[a..a + n].to_vec();
                v[b..b + n].copy_from_slice(&chunk);
            }
            _ => {
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
            }
        }
    }
    v
}

#[test]
fn model_reader_survives_random_byte_mutations() {
    let seeds: Vec<Vec<u8>> = ["oscillator-2d", "two-dof-1d", "two-mass-damper"]
        .iter()
        .map(|m| std::fs::read(shipped_model(m)).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_0001);
    let t0 = Instant::now();
    let mut case = 0;
    while t0.elapsed() < budget() {
        let seed = &seeds[rng.below(seeds.len())];
        let p = dir.path().join(format!("bytes-{case}.h5"));
        std::fs::write(&p, mutate_bytes(&mut rng, seed)).unwrap();
        run_clean(&["model", "check", p.to_str().unwrap()], &p, "bytes");
        std::fs::remove_file(&p).unwrap();
        case += 1;
    }
    assert!(case > 10, "only {case} cases in the budget");
}

/// One random structural edit of an HDF5 model: a dataset replaced by one of another type,
/// shape or size (empty, huge declared, negative, NaN), an attribute changed, or an object
/// removed.
fn edit_structure(rng: &mut Rng, path: &Path) {
    let _guard = HDF5_OR_SPAWN.lock().unwrap_or_else(|e| e.into_inner());
    let f = hdf5::File::open_rw(path).unwrap();
    // Every handle below is dropped before the file is closed (HDF5 keeps a file open, and
    // locked, while any of its objects is).
    edit_in(rng, &f);
    f.close().unwrap();
}

fn edit_in(rng: &mut Rng, f: &hdf5::File) {
    let mut objects = Vec::new();
    collect(f, "", &mut objects);
    let Some(target) = objects.get(rng.below(objects.len())).cloned() else {
        return;
    };
    let (parent, name) = match target.rsplit_once('/') {
        Some((p, n)) => (p.to_string(), n.to_string()),
        None => (String::new(), target.clone()),
    };
    let g = if parent.is_empty() {
        f.as_group().unwrap()
    } else {
        f.group(&parent).unwrap()
    };
    let is_dataset = g.dataset(&name).is_ok();
    match rng.below(7) {
        0 => {
            let _ = g.unlink(&name);
        }
        1 if is_dataset => {
            let _ = g.unlink(&name);
            let n = rng.below(6);
            let v: Vec<f64> = (0..n)
                .map(|_| [f64::NAN, -1.0, 1e300, 0.5, f64::INFINITY][rng.below(5)])
                .collect();
            let _ = g.new_dataset_builder().with_data(&v).create(name.as_str());
        }
        2 if is_dataset => {
            let _ = g.unlink(&name);
            let v: Vec<i64> = (0..rng.below(6))
                .map(|_| [-1, 0, 1, i64::MAX, i64::MIN, 1 << 40][rng.below(6)])
                .collect();
            let _ = g.new_dataset_builder().with_data(&v).create(name.as_str());
        }
        3 if is_dataset => {
            // Declares far more than it stores.
            let _ = g.unlink(&name);
            let _ = g
                .new_dataset::<f64>()
                .chunk(1 << 12)
                .shape([1usize << (20 + rng.below(12))])
                .create(name.as_str());
        }
        4 if is_dataset => {
            let _ = g.unlink(&name);
            let s: hdf5::types::VarLenUnicode = "not a number".parse().unwrap();
            let _ = g
                .new_dataset_builder()
                .with_data(&[s])
                .create(name.as_str());
        }
        5 => {
            // Attributes of the object: shape, dim, format, version, encoding-type.
            if let Ok(loc) = g.group(&name).map(|x| x.as_location().unwrap()) {
                for a in ["shape", "dim", "encoding-type", "symmetric"] {
                    if rng.below(2) == 0 && loc.attr(a).is_ok() {
                        let _ = loc.delete_attr(a);
                        let v: Vec<i64> = (0..rng.below(4))
                            .map(|_| [-3, 0, 2, 1 << 33][rng.below(4)])
                            .collect();
                        let _ = loc
                            .new_attr::<i64>()
                            .shape([v.len()])
                            .create(a)
                            .and_then(|x| x.write_raw(&v));
                    }
                }
            }
        }
        _ => {
            // A group where a dataset was, or the reverse.
            let _ = g.unlink(&name);
            if is_dataset {
                let _ = g.create_group(&name);
            } else {
                let _ = g
                    .new_dataset_builder()
                    .with_data(&[1.0f64])
                    .create(name.as_str());
            }
        }
    }
}

/// Every group and dataset path below `g`.
fn collect(g: &hdf5::Group, prefix: &str, out: &mut Vec<String>) {
    for name in g.member_names().unwrap_or_default() {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        out.push(path.clone());
        if let Ok(sub) = g.group(&name) {
            collect(&sub, &path, out);
        }
    }
}

#[test]
fn model_reader_survives_random_structure_edits() {
    let seeds: Vec<PathBuf> = ["oscillator-2d", "two-dof-1d", "two-mass-damper", "chain"]
        .iter()
        .map(|m| shipped_model(m))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_0002);
    let t0 = Instant::now();
    let mut case = 0;
    while t0.elapsed() < budget() {
        let p = dir.path().join(format!("edit-{case}.h5"));
        std::fs::copy(&seeds[rng.below(seeds.len())], &p).unwrap();
        for _ in 0..1 + rng.below(3) {
            edit_structure(&mut rng, &p);
        }
        run_clean(&["model", "check", p.to_str().unwrap()], &p, "structure");
        std::fs::remove_file(&p).unwrap();
        case += 1;
    }
    assert!(case > 10, "only {case} cases in the budget");
}

/// Token-level edits of a text file: numbers replaced by extreme ones, lines dropped or
/// repeated, fields added or removed.
fn mutate_text(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(4) {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len());
        match rng.below(6) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 | 3 => {
                let mut f: Vec<String> = lines[i].split_whitespace().map(str::to_string).collect();
                if !f.is_empty() {
                    let k = rng.below(f.len());
                    f[k] = [
                        "0",
                        "-1",
                        "200000000",
                        "18446744073709551616",
                        "nan",
                        "1e309",
                        "2.5",
                        "x",
                        "",
                    ][rng.below(9)]
                    .to_string();
                    lines[i] = f.join(" ");
                }
            }
            4 => lines[i].push_str(" 7"),
            _ => lines[i] = lines[i].replace(',', " ").replace(' ', ","),
        }
    }
    lines.join("\n")
}

#[test]
fn importers_survive_random_text_edits() {
    let k = "%%MatrixMarket matrix coordinate real symmetric\n% stiffness\n3 3 5\n1 1 2.0\n2 1 -1\n2 2 2\n3 2 -1\n3 3 1\n";
    let m = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n3 3 1\n";
    // Constant bounds, and 3-D contacts (normal side, compliance, a fixed load) in turn.
    let contacts_2d = "eq1,eq2,mu_n,rho\n1,2,2.5,1\n";
    let contacts_3d = "eq1,eqn,othern,eqn_sign,mu,g0,k_t,k_n,load\n\
                       1,3,2,-1,0.3,-0.01,100,50,\n2,,,,0.5,,10,20,4\n";
    let forcing = "eq,harmonic,cos,sin\n3,1,1.0,0\n";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng(0x5eed_0003);
    let t0 = Instant::now();
    let mut case = 0;
    while t0.elapsed() < budget() {
        let contacts = if case % 2 == 0 {
            contacts_2d
        } else {
            contacts_3d
        };
        let files = [
            ("k.mtx", k),
            ("m.mtx", m),
            ("c.csv", contacts),
            ("f.csv", forcing),
        ];
        let which = rng.below(files.len());
        for (i, (name, body)) in files.iter().enumerate() {
            let body = if i == which {
                mutate_text(&mut rng, body)
            } else {
                body.to_string()
            };
            std::fs::write(d.join(name), body).unwrap();
        }
        let out = d.join("out.h5");
        let p = |n: &str| d.join(n).to_str().unwrap().to_string();
        let (kp, mp, cp, fp, op) = (p("k.mtx"), p("m.mtx"), p("c.csv"), p("f.csv"), p("out.h5"));
        run_clean(
            &[
                "import",
                "mtx",
                "--stiffness",
                &kp,
                "--mass",
                &mp,
                "--contacts",
                &cp,
                "--forcing",
                &fp,
                "-o",
                &op,
            ],
            &d.join(files[which].0),
            "import",
        );
        let _ = std::fs::remove_file(&out);
        case += 1;
    }
    assert!(case > 10, "only {case} cases in the budget");
}
