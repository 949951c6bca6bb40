//! The importers' error: which file, which line, what is wrong.

use ewr_model::Problem;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why an import failed.
///
/// Every variant names what the user has to fix: the file and line at fault for a bad input
/// file, the option for a bad option, the model path for a model that does not validate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// An input file cannot be read, or its contents are wrong.
    #[error(fmt = file_message)]
    File {
        /// The file at fault.
        path: PathBuf,
        /// 1-based line at fault, when one line is to blame.
        line: Option<usize>,
        /// What is wrong, in words an engineer can act on.
        message: String,
    },
    /// An option or argument is invalid (a negative damping coefficient; matrices of
    /// different sizes passed to [`build_model`](crate::build_model)).
    #[error("{message}")]
    Option {
        /// What is wrong.
        message: String,
    },
    /// Every file read fine but the assembled model does not validate.
    #[error(fmt = model_message)]
    Model {
        /// The errors (and warnings) of [`ewr_model::validate`].
        problems: Vec<Problem>,
    },
}

/// The message of [`ImportError::File`]: `file:line: message`, the form editors and
/// terminals turn into links, or `file: message` without a line.
fn file_message(
    path: &Path,
    line: &Option<usize>,
    message: &str,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    match line {
        Some(l) => write!(f, "{}:{l}: {message}", path.display()),
        None => write!(f, "{}: {message}", path.display()),
    }
}

/// The message of [`ImportError::Model`]: every problem on its own line.
fn model_message(problems: &[Problem], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "the imported model is not valid:")?;
    for p in problems {
        write!(f, "\n  {p}")?;
    }
    Ok(())
}

impl ImportError {
    /// An error at `line` of `path`.
    pub fn at(path: &Path, line: usize, message: impl Into<String>) -> Self {
        ImportError::File {
            path: path.to_path_buf(),
            line: Some(line),
            message: message.into(),
        }
    }

    /// An error about `path` as a whole.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        ImportError::File {
            path: path.to_path_buf(),
            line: None,
            message: message.into(),
        }
    }

    /// The line at fault, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            ImportError::File { line, .. } => *line,
            _ => None,
        }
    }
}
