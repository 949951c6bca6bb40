//! Matrix Market (`.mtx`) reader for real, square, symmetric matrices (M, K, C).
//!
//! Accepted: `%%MatrixMarket matrix coordinate real|integer|double general|symmetric`.
//! Refused with a message that says why and what to do: `complex`, `pattern`, `array`,
//! `skew-symmetric`, `hermitian`, non-square sizes. Duplicate entries are summed, as the
//! format prescribes. Indices are 1-based; a 0 index is reported as a 0-based file.
//!
//! Our own reader rather than `sprs::io` so that every error names the file and line.

use crate::ImportError;
use crate::assemble::{Entry, Storage, assemble_symmetric};
use crate::text::{TextFile, parse_f64, parse_index};
use ewr_model::SparseMatrix;
use std::path::Path;

/// A square symmetric matrix read from a Matrix Market file.
#[derive(Clone, Debug)]
pub struct MtxMatrix {
    /// The matrix, both triangles stored.
    pub matrix: SparseMatrix,
    /// True when the file declared `symmetric` (one triangle stored and mirrored).
    pub symmetric_storage: bool,
    /// Entries the file stores (the header's third number).
    pub stored_entries: usize,
    /// Entries that repeated an earlier position and were summed into it.
    pub duplicates: usize,
}

/// Reads a real square symmetric matrix from a Matrix Market coordinate file.
///
/// Checks: header, the size line, the entry count (a truncated file has fewer entries than
/// announced), 1-based indices in range, finite values, square shape, and symmetry (a
/// `general` file must hold a symmetric matrix to `ewr_model::SYMMETRY_TOL`).
pub fn read_matrix(path: &Path) -> Result<MtxMatrix, ImportError> {
    parse(path)?.assemble()
}

/// A Matrix Market file read and checked entry by entry, before its matrix is built: the
/// size it declares can be checked against other files first (see [`crate::read_mtx`]).
pub struct MtxEntries<'p> {
    file: TextFile<'p>,
    n: usize,
    entries: Vec<Entry>,
    symmetric: bool,
}

impl MtxEntries<'_> {
    /// The declared size `n` (the matrix is `n x n`).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Entries stored in the file.
    pub fn stored(&self) -> usize {
        self.entries.len()
    }

    /// An error about the whole file.
    pub fn error(&self, message: impl Into<String>) -> ImportError {
        ImportError::file(self.file.path, message)
    }

    /// Builds the matrix (both triangles), summing duplicates; checks symmetry.
    pub fn assemble(self) -> Result<MtxMatrix, ImportError> {
        let storage = if self.symmetric {
            Storage::OneTriangle
        } else {
            Storage::General
        };
        let stored_entries = self.entries.len();
        let a = assemble_symmetric(&self.file, self.n, self.entries, storage)?;
        Ok(MtxMatrix {
            matrix: a.matrix,
            symmetric_storage: self.symmetric,
            stored_entries,
            duplicates: a.duplicates,
        })
    }
}

/// Reads and checks a Matrix Market file's header and entries (see [`read_matrix`]) without
/// building the matrix.
pub fn parse(path: &Path) -> Result<MtxEntries<'_>, ImportError> {
    let file = TextFile::read(path)?;
    let mut lines = file.lines();
    let Some(first) = lines.next() else {
        return Err(ImportError::file(
            path,
            "the file is empty (expected a Matrix Market header)",
        ));
    };
    let symmetric = parse_header(&file, first.no, first.text)?;

    // Size line: the first line after the header that is neither a comment nor blank.
    let mut size = None;
    for l in lines.by_ref() {
        let t = l.text.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        size = Some((l.no, t.to_string()));
        break;
    }
    let Some((size_line, size_text)) = size else {
        return Err(file.err(
            file.end_line(),
            "the file ends before the size line `rows cols entries`",
        ));
    };
    let fields: Vec<&str> = size_text.split_whitespace().collect();
    if fields.len() != 3 {
        return Err(file.err(
            size_line,
            format!("expected the size line `rows cols entries` (3 integers), found `{size_text}`"),
        ));
    }
    let parse = |s: &str, what: &str| parse_index(s, what).map_err(|m| file.err(size_line, m));
    let rows = parse(fields[0], "row count")?;
    let cols = parse(fields[1], "column count")?;
    let nnz = parse(fields[2], "entry count")?;
    if rows != cols {
        return Err(file.err(
            size_line,
            format!(
                "the matrix is {rows} x {cols}; mass, stiffness and damping matrices must be \
                 square"
            ),
        ));
    }
    if rows == 0 {
        return Err(file.err(size_line, "the matrix is 0 x 0"));
    }
    let n = rows;
    // An entry line takes at least 5 bytes (`1 1 1`): a count the file cannot hold is refused
    // before memory is reserved for it.
    let room = file.text.len() / 5 + 1;
    if nnz > room {
        return Err(file.err(
            size_line,
            format!(
                "the size line announces {nnz} entries but the file has only {} bytes: \
                 truncated or corrupt?",
                file.text.len()
            ),
        ));
    }

    let mut entries = Vec::with_capacity(nnz);
    for l in lines {
        let t = l.text.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        if entries.len() == nnz {
            return Err(file.err(
                l.no,
                format!(
                    "more entries than the {nnz} announced on the size line (line {size_line})"
                ),
            ));
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        if f.len() != 3 {
            let why = match f.len() {
                2 => " (no value: a `pattern` matrix?)",
                4 => " (two values: a `complex` matrix?)",
                _ => "",
            };
            return Err(file.err(
                l.no,
                format!(
                    "expected an entry `row col value`, found {} field(s){why}",
                    f.len()
                ),
            ));
        }
        let mut idx = [0usize; 2];
        for (k, what) in ["row", "column"].into_iter().enumerate() {
            let i = parse_index(f[k], what).map_err(|m| file.err(l.no, m))?;
            if i == 0 {
                return Err(file.err(
                    l.no,
                    format!(
                        "{what} index 0: Matrix Market indices are 1-based (1..={n}); this \
                         file looks like it was written with 0-based indices"
                    ),
                ));
            }
            if i > n {
                return Err(file.err(
                    l.no,
                    format!("{what} index {i} is out of range 1..={n} (size line {size_line})"),
                ));
            }
            idx[k] = i - 1;
        }
        let val = parse_f64(f[2]).map_err(|m| file.err(l.no, m))?;
        entries.push(Entry {
            row: idx[0],
            col: idx[1],
            val,
            line: l.no,
        });
    }
    if entries.len() < nnz {
        return Err(file.err(
            file.end_line(),
            format!(
                "the file ends after {} of the {nnz} entries announced on line {size_line}: \
                 truncated?",
                entries.len()
            ),
        ));
    }
    Ok(MtxEntries {
        file,
        n,
        entries,
        symmetric,
    })
}

/// Checks the `%%MatrixMarket` banner; returns true for `symmetric`, false for `general`.
fn parse_header(file: &TextFile<'_>, no: usize, text: &str) -> Result<bool, ImportError> {
    let t = text.trim_start_matches('\u{feff}').trim();
    let words: Vec<String> = t.split_whitespace().map(str::to_ascii_lowercase).collect();
    let expected = "%%MatrixMarket matrix coordinate real general (or symmetric)";
    if words.first().map(String::as_str) != Some("%%matrixmarket") {
        let hint = if t.split_whitespace().count() == 3
            && t.split_whitespace().all(|w| w.parse::<u64>().is_ok())
        {
            " (this looks like a size line: the header line is missing)"
        } else {
            ""
        };
        return Err(file.err(
            no,
            format!("not a Matrix Market file: the first line must be `{expected}`{hint}"),
        ));
    }
    if words.len() != 5 {
        return Err(file.err(
            no,
            format!(
                "the header has {} word(s), expected 5: `{expected}`",
                words.len()
            ),
        ));
    }
    if words[1] != "matrix" {
        return Err(file.err(
            no,
            format!("object `{}`: only `matrix` is supported", words[1]),
        ));
    }
    match words[2].as_str() {
        "coordinate" => {}
        "array" => {
            return Err(file.err(
                no,
                "dense `array` format is not supported: write the matrix in `coordinate` \
                 format (scipy: `scipy.io.mmwrite(f, scipy.sparse.coo_matrix(A))`)",
            ));
        }
        other => {
            return Err(file.err(no, format!("format `{other}`: expected `coordinate`")));
        }
    }
    match words[3].as_str() {
        "real" | "double" | "integer" => {}
        "complex" => {
            return Err(file.err(
                no,
                "`complex` matrices are not supported: M, K and C must be real (hysteretic \
                 damping is the option --eta, not an imaginary stiffness)",
            ));
        }
        "pattern" => {
            return Err(file.err(
                no,
                "a `pattern` matrix has no values, only positions: export the matrix with \
                 its values (`real`)",
            ));
        }
        other => {
            return Err(file.err(no, format!("field `{other}`: expected `real`")));
        }
    }
    match words[4].as_str() {
        "general" => Ok(false),
        "symmetric" => Ok(true),
        other @ ("skew-symmetric" | "hermitian") => Err(file.err(
            no,
            format!("`{other}` matrices are not supported: M, K and C must be symmetric"),
        )),
        other => Err(file.err(
            no,
            format!("symmetry `{other}`: expected `general` or `symmetric`"),
        )),
    }
}
