//! Helpers shared by the end-to-end tests of the `ewr` binary.
// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `ewr` binary built for this test with `args`.
pub fn ewr(args: &[&str]) -> Output {
    ewr_command()
        .args(args)
        .output()
        .expect("the ewr binary runs")
}

/// The `ewr` binary built for this test as a command, without HDF5's file locks: a test
/// writing a model in this process holds HDF5's lock on it through a descriptor that a child
/// spawned meanwhile by a parallel test inherits (the library opens files without
/// close-on-exec), and the run on that model then failed with "unable to lock file" (once in
/// many CI runs, `cli_modes`). ewr's own output locks are not HDF5's and stay.
pub fn ewr_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ewr"));
    c.env("HDF5_USE_FILE_LOCKING", "FALSE");
    c
}

/// Standard output and standard error as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A shipped model, `models/NAME.h5`.
pub fn shipped_model(name: &str) -> PathBuf {
    workspace().join("models").join(format!("{name}.h5"))
}

/// A path as the `&str` argument of a command line.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The rows of a CSV table written by `ewr` (`frc --csv`, `simulate --csv`) by column name;
/// a cell that is not a number reads as NaN.
pub fn csv_table(path: &Path) -> Vec<std::collections::HashMap<String, f64>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            head.iter()
                .cloned()
                .zip(l.split(',').map(|v| v.parse::<f64>().unwrap_or(f64::NAN)))
                .collect()
        })
        .collect()
}

/// Three masses in a chain with a dashpot to ground at the first and the friction contact at
/// the last: a damping matrix the modes do not diagonalise, whose dropped coupling moves the
/// third mode's response by about 4.6 % (docs/receptance.md, "Non-proportional damping").
pub fn dashpot_chain() -> ewr_model::Model {
    ewr_model::ModelBuilder::new(3)
        .rayleigh(0.0, 1e-4)
        .mass(0, 1.0)
        .mass(1, 1.2)
        .mass(2, 0.9)
        .spring_to_ground(0, 1.0)
        .spring(0, 1, 0.3)
        .spring(1, 2, 1.3)
        .damper_to_ground(0, 0.05)
        .contacts(ewr_model::Contacts::to_ground(1, vec![2], vec![0.1]))
        .force(2, 1, 1.0, 0.0)
        .build()
        .unwrap()
}

/// A chain of 520 unit masses grounded at the first, a friction contact and the forcing at the
/// last, Rayleigh-damped; with `dashpot` also a dashpot to ground mid-chain, a damping matrix
/// that couples the modes. Above 500 DOFs the automatic receptance condenses by modes, and
/// drops that coupling to its diagonal (docs/receptance.md, "Non-proportional damping").
pub fn long_chain(dashpot: bool) -> ewr_model::Model {
    let n = 520;
    let mut b = ewr_model::ModelBuilder::new(n).rayleigh(0.0, 1e-4);
    for i in 0..n {
        b = b.mass(i, 1.0);
        if i + 1 < n {
            b = b.spring(i, i + 1, 1e4);
        }
    }
    b = b.spring_to_ground(0, 1e4);
    if dashpot {
        b = b.damper_to_ground(n / 2, 20.0);
    }
    b.contacts(ewr_model::Contacts::to_ground(1, vec![n - 1], vec![1.0]))
        .force(n - 1, 1, 1.0, 0.0)
        .build()
        .unwrap()
}
