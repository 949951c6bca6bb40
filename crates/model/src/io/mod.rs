//! Reading and writing the HDF5 model file (format `ewr-model`, version 1).
//!
//! The layout is documented in `docs/model-format.md`. The reader collects every problem it
//! finds (with the HDF5 path at fault) instead of stopping at the first, so that a user fixing
//! an export sees all of them at once.
//!
//! [`read()`] lives in `read/` (with its value, matrix and contact readers), [`write()`] in
//! `write.rs`; this module holds what both share: the format's name and version, the error
//! and the result of a read.

mod read;
mod write;

pub use read::read;
pub use write::write;

use crate::model::Model;
use crate::validate::Problem;
use std::fmt;
use std::path::{Path, PathBuf};

/// Value of the root attribute `format`.
pub const FORMAT_NAME: &str = "ewr-model";
/// The newest model-file version this build reads and writes: 2 (3-D contacts and contact
/// stiffness). Version 1 files are read unchanged, and a model without the version-2
/// features is written as version 1.
pub const FORMAT_VERSION: i64 = 3;

/// Why a model file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The file does not exist, is not HDF5, or cannot be opened.
    #[error("cannot open model file {path}: {reason}")]
    Open {
        /// The file.
        path: PathBuf,
        /// What the HDF5 library or the OS said.
        reason: String,
    },
    /// The file was read but does not hold a valid model.
    #[error(fmt = invalid_message)]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found (errors and warnings).
        problems: Vec<Problem>,
    },
    /// Writing failed; no partial file is left at the target path.
    #[error("cannot write model file {path}: {reason}")]
    Write {
        /// The target file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// The message of [`ModelError::Invalid`]: the count of errors, then every problem on its
/// own line.
fn invalid_message(path: &Path, problems: &[Problem], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let n = problems
        .iter()
        .filter(|p| p.severity == crate::Severity::Error);
    write!(
        f,
        "{} is not a valid ewr model ({} error(s)):",
        path.display(),
        n.count()
    )?;
    for p in problems {
        write!(f, "\n  {p}")?;
    }
    Ok(())
}

/// A model read from a file, with the warnings validation raised (errors make `read` fail).
#[derive(Clone, Debug)]
pub struct ReadModel {
    /// The model.
    pub model: Model,
    /// Warnings about the model (never errors).
    pub warnings: Vec<Problem>,
}
