//! The importers' error: which file, which line, what is wrong.

use ewr_model::Problem;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why an import failed.
///
/// Every variant names what the user has to fix: the file and line at fault for a bad input
/// file, the option for a bad option, the model path for a model that does not validate.
#[derive(Debug)]
pub enum ImportError {
    /// An input file cannot be read, or its contents are wrong.
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
    Option {
        /// What is wrong.
        message: String,
    },
    /// Every file read fine but the assembled model does not validate.
    Model {
        /// The errors (and warnings) of [`ewr_model::validate`].
        problems: Vec<Problem>,
    },
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

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // `file:line: message`, the form editors and terminals turn into links.
            ImportError::File {
                path,
                line: Some(l),
                message,
            } => write!(f, "{}:{l}: {message}", path.display()),
            ImportError::File {
                path,
                line: None,
                message,
            } => write!(f, "{}: {message}", path.display()),
            ImportError::Option { message } => write!(f, "{message}"),
            ImportError::Model { problems } => {
                write!(f, "the imported model is not valid:")?;
                for p in problems {
                    write!(f, "\n  {p}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ImportError {}
