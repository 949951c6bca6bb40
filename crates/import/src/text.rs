//! Reading text files line by line with the line number at hand, and parsing numbers the way
//! FE codes write them.

use crate::ImportError;
use std::path::Path;

/// A whole text file, read at once so that every later error can name its line.
pub(crate) struct TextFile<'p> {
    pub path: &'p Path,
    pub text: String,
}

/// One line of a [`TextFile`]: 1-based number, content without the end of line, and whether
/// it had one (a missing final newline is how a cut-off file often shows).
pub(crate) struct Line<'a> {
    pub no: usize,
    pub text: &'a str,
    pub terminated: bool,
}

impl<'p> TextFile<'p> {
    /// Reads `path`; a file that is not UTF-8 text (an HDF5 or binary file given by mistake)
    /// is refused with the line where the first non-text byte is.
    pub fn read(path: &'p Path) -> Result<Self, ImportError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ImportError::file(path, format!("cannot read: {e}")))?;
        match String::from_utf8(bytes) {
            Ok(text) => Ok(TextFile { path, text }),
            Err(e) => {
                let good = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..good].iter().filter(|&&b| b == b'\n').count();
                Err(ImportError::at(
                    path,
                    line,
                    "not a text file (invalid UTF-8); is this a binary file?",
                ))
            }
        }
    }

    /// The lines, numbered from 1; `\r\n` ends are accepted (files written on Windows).
    pub fn lines(&self) -> impl Iterator<Item = Line<'_>> {
        self.text.split_inclusive('\n').enumerate().map(|(i, raw)| {
            let terminated = raw.ends_with('\n');
            let text = raw.trim_end_matches(['\n', '\r']);
            Line {
                no: i + 1,
                text,
                terminated,
            }
        })
    }

    /// Number of the line after the last one (where "expected more" errors point).
    pub fn end_line(&self) -> usize {
        self.text.split_inclusive('\n').count() + 1
    }

    /// An error at line `no` of this file.
    pub fn err(&self, no: usize, message: impl Into<String>) -> ImportError {
        ImportError::at(self.path, no, message)
    }
}

/// Parses a real number as FE codes write it: also accepts Fortran's `D` exponent
/// (`1.5D+03`), and refuses NaN and infinities, which no valid matrix or load contains.
pub(crate) fn parse_f64(s: &str) -> Result<f64, String> {
    let v: f64 = if s.contains(['d', 'D']) && !s.to_ascii_lowercase().contains("inf") {
        s.replace(['d', 'D'], "e").parse()
    } else {
        s.parse()
    }
    .map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!(
            "`{s}` is not finite; values must be finite numbers"
        ))
    }
}

/// Parses a non-negative integer (an index, a node number, a count).
pub(crate) fn parse_index(s: &str, what: &str) -> Result<usize, String> {
    s.parse::<usize>().map_err(|_| {
        if s.parse::<f64>().is_ok() {
            format!("{what} `{s}` must be a non-negative integer")
        } else {
            format!("{what} `{s}` is not an integer")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_fortran_and_c_notation() {
        assert_eq!(parse_f64("1.5D+03"), Ok(1500.0));
        assert_eq!(parse_f64("-2.5e-1"), Ok(-0.25));
        assert!(parse_f64("nan").unwrap_err().contains("finite"));
        assert!(parse_f64("inf").unwrap_err().contains("finite"));
        assert!(parse_f64("1,5").unwrap_err().contains("not a number"));
        assert_eq!(parse_index("12", "row"), Ok(12));
        assert!(parse_index("1.0", "row").unwrap_err().contains("integer"));
        assert!(parse_index("-1", "row").unwrap_err().contains("integer"));
    }
}
