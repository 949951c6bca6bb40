//! Helpers shared by the end-to-end tests of the `ewr` binary.
// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `ewr` binary built for this test with `args`.
pub fn ewr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ewr"))
        .args(args)
        .output()
        .expect("the ewr binary runs")
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
