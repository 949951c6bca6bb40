//! User files read first in a child process. The HDF5 library is C and not memory-safe
//! against damaged files: a corrupt global heap, for one, makes it copy out of bounds and
//! die of SIGSEGV (found by `tests/fuzz_inputs.rs`). A child `ewr` reads the file with the
//! very code the command will use; if the child dies of a signal the file is refused with
//! exit 2, and if it lives this process reads the same bytes the same way, safely. The child
//! costs one process start and one extra read of the file.

use crate::Failure;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

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
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Model => "model",
            Kind::Study => "study",
            Kind::StudyResult => "study-result",
        }
    }
}

/// Reads `path` as `kind` in a child process; exit 2 if the reader crashes on it. Errors the
/// reader reports are left to the caller's own read, which gives them with their context.
pub fn readable(kind: Kind, path: &Path) -> Result<(), Failure> {
    let Ok(exe) = std::env::current_exe() else {
        return Ok(());
    };
    let status = Command::new(exe)
        .arg(PROBE)
        .arg(kind.name())
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match status {
        Ok(s) if s.code().is_some() => Ok(()),
        Ok(s) => Err(Failure::input(format!(
            "cannot read {}: the HDF5 library crashed on it ({}): the file is damaged",
            path.display(),
            s.signal()
                .map_or("killed".to_string(), |sig| format!("signal {sig}"))
        ))),
        // The probe could not start: read in this process as before.
        Err(_) => Ok(()),
    }
}

/// The child mode: `ewr __probe KIND PATH` reads and exits 0 (whatever the reader said), or
/// dies if the reader crashes. `None` when this process is not a probe.
pub fn child() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != PROBE {
        return None;
    }
    let (Some(kind), Some(path)) = (args.next(), args.next()) else {
        return Some(ExitCode::from(2));
    };
    let path = Path::new(&path);
    match kind.to_str() {
        Some("model") => drop(ewr_model::read(path)),
        Some("study") => drop(ewr_study::Study::load(path)),
        Some("study-result") => drop(ewr_study::read_study_file(path)),
        _ => return Some(ExitCode::from(2)),
    }
    Some(ExitCode::SUCCESS)
}
