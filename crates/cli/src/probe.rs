//! User files read first in a child process. The HDF5 library is C and not memory-safe
//! against damaged files: a corrupt global heap makes it copy out of bounds and die of
//! SIGSEGV, or loop forever (both found by `tests/fuzz_inputs.rs`, in variable-length string
//! attributes). A child `ewr` reads the file with the very code the command will use; if the
//! child dies of a signal, or has not finished in a time generous for the file's size, the
//! file is refused with exit 2; if it finishes, this process reads the same bytes the same
//! way, safely. The child costs one process start and one extra read of the file.

use crate::Failure;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How to start this program again when it is not its own executable (the Python package's
/// `ewr`: the interpreter and `-m ewr`); unset, the current executable.
static RELAUNCH: OnceLock<Vec<OsString>> = OnceLock::new();

/// Sets how a child of this program is started ([`crate::run`]); the first setting stays.
pub fn set_relaunch(program_and_args: Vec<OsString>) {
    if !program_and_args.is_empty() {
        let _ = RELAUNCH.set(program_and_args);
    }
}

/// First argument of the hidden child mode.
const PROBE: &str = "__probe";

/// What a child reads.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A model file (`ewr_model::read`).
    Model,
    /// A study file with its model (`ewr_study::Study::load`).
    Study,
    /// A study result or shard file (`ewr_study::read_study_file`).
    StudyResult,
    /// Any result file read whole (`ewr_results::read::read_tree`): a `--resume` file, a
    /// study's case file.
    Result,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Model => "model",
            Kind::Study => "study",
            Kind::StudyResult => "study-result",
            Kind::Result => "result",
        }
    }
}

/// Reads `path` as `kind` in a child process; exit 2 if the reader crashes on it. Errors the
/// reader reports are left to the caller's own read, which gives them with their context.
pub fn readable(kind: Kind, path: &Path) -> Result<(), Failure> {
    // A FIFO or a device would block the reader: refuse it by name instead of timing out.
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
    {
        return Err(Failure::input(format!(
            "{}: not a regular file (a folder, a FIFO or a device)",
            path.display()
        )));
    }
    let mut command = match RELAUNCH.get() {
        Some(r) => {
            let mut c = Command::new(&r[0]);
            c.args(&r[1..]);
            c
        }
        None => match std::env::current_exe() {
            Ok(exe) => Command::new(exe),
            Err(_) => return Ok(()),
        },
    };
    let child = command
        .arg(PROBE)
        .arg(kind.name())
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    // The probe could not start: read in this process as before.
    let Ok(mut child) = child else {
        return Ok(());
    };
    // Reading runs at well over 10 MB/s; a damaged file loops forever. EWR_PROBE_SECONDS
    // replaces the 30 s base (tests use a short one).
    let size_mb = std::fs::metadata(path).map_or(0, |m| m.len() >> 20);
    let base = std::env::var("EWR_PROBE_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(30);
    let limit = Duration::from_secs(base + size_mb);
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if t0.elapsed() < limit => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Failure::input(format!(
                    "cannot read {}: the HDF5 library did not finish reading it in {} s: the \
                     file is damaged",
                    path.display(),
                    limit.as_secs()
                )));
            }
            Err(_) => return Ok(()),
        }
    };
    match status.signal() {
        None => Ok(()),
        Some(sig) => Err(Failure::input(format!(
            "cannot read {}: the HDF5 library crashed on it (signal {sig}): the file is damaged",
            path.display()
        ))),
    }
}

/// The child mode: `ewr __probe KIND PATH` reads and exits 0 (whatever the reader said), or
/// dies if the reader crashes. `None` when `args` (the program's name first) are no probe's.
pub fn child(args: &[OsString]) -> Option<u8> {
    let mut args = args.iter().skip(1);
    if args.next()? != PROBE {
        return None;
    }
    let (Some(kind), Some(path)) = (args.next(), args.next()) else {
        return Some(2);
    };
    let path = Path::new(&path);
    match kind.to_str() {
        Some("model") => drop(ewr_model::read(path)),
        Some("study") => drop(ewr_study::Study::load(path)),
        Some("study-result") => drop(ewr_study::read_study_file(path)),
        Some("result") => drop(ewr_results::read::read_tree(path)),
        _ => return Some(2),
    }
    Some(0)
}
