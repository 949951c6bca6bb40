//! Turning the entries read from a file into a symmetric sparse matrix, with the checks that
//! need the whole matrix (duplicates, symmetry, both triangles of a one-triangle file).

use crate::ImportError;
use crate::text::TextFile;
use ewr_model::linalg_error::Sentence;
use ewr_model::{SYMMETRY_TOL, SparseMatrix};
use faer::sparse::Triplet;

/// One stored entry, 0-based, with the line it came from (for error messages).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub row: usize,
    pub col: usize,
    pub val: f64,
    pub line: usize,
}

/// Which part of the matrix a file stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Every entry is stored; the matrix must come out symmetric.
    General,
    /// One triangle (with the diagonal) is stored and mirrored. Matrix Market prescribes the
    /// lower one and CalculiX writes the upper one; either is accepted, a mix is not.
    OneTriangle,
}

/// A matrix read from a file and what was noticed on the way.
pub(crate) struct Assembled {
    pub matrix: SparseMatrix,
    /// Entries that repeated an earlier (row, col) and were added to it.
    pub duplicates: usize,
}

/// Sums duplicates, checks symmetry and builds the `n x n` matrix with both triangles.
///
/// Indices must already be range-checked by the caller, which knows how to word a range
/// error for its format (0-based files, equation counts, ...).
pub(crate) fn assemble_symmetric(
    file: &TextFile<'_>,
    n: usize,
    mut entries: Vec<Entry>,
    storage: Storage,
) -> Result<Assembled, ImportError> {
    // Sort by position, file order within a position, so that duplicates are adjacent and
    // the first occurrence is the one errors refer to.
    let key = |e: &Entry| match storage {
        Storage::General => (e.row, e.col, e.line),
        Storage::OneTriangle => (e.row.max(e.col), e.row.min(e.col), e.line),
    };
    entries.sort_unstable_by_key(key);
    let mut merged: Vec<Entry> = Vec::with_capacity(entries.len());
    let mut duplicates = 0;
    for e in entries {
        if let Some(last) = merged.last_mut()
            && key(last).0 == key(&e).0
            && key(last).1 == key(&e).1
        {
            if storage == Storage::OneTriangle && e.row != e.col && e.row != last.row {
                return Err(file.err(
                    e.line,
                    format!(
                        "entry ({}, {}) mirrors entry ({}, {}) of line {}: this file should \
                         store one triangle only but stores both (declare it `general` if \
                         both triangles are meant to be there)",
                        e.row + 1,
                        e.col + 1,
                        last.row + 1,
                        last.col + 1,
                        last.line
                    ),
                ));
            }
            last.val += e.val;
            duplicates += 1;
        } else {
            merged.push(e);
        }
    }
    if storage == Storage::General {
        check_symmetric(file, &merged)?;
    }
    let mut trip = Vec::with_capacity(2 * merged.len());
    for e in &merged {
        trip.push(Triplet::new(e.row, e.col, e.val));
        if storage == Storage::OneTriangle && e.row != e.col {
            trip.push(Triplet::new(e.col, e.row, e.val));
        }
    }
    let matrix = SparseMatrix::try_new_from_triplets(n, n, &trip).map_err(|e| {
        ImportError::file(
            file.path,
            format!("cannot build the matrix: {}", e.sentence()),
        )
    })?;
    Ok(Assembled { matrix, duplicates })
}

/// Fails on the worst `|A_ij - A_ji|` above `SYMMETRY_TOL * max|A|`, naming both lines.
///
/// `merged` must be sorted by (row, col) without duplicates.
fn check_symmetric(file: &TextFile<'_>, merged: &[Entry]) -> Result<(), ImportError> {
    let max_abs = merged.iter().fold(0.0f64, |m, e| m.max(e.val.abs()));
    let tol = SYMMETRY_TOL * max_abs;
    let find = |r: usize, c: usize| {
        merged
            .binary_search_by_key(&(r, c), |e| (e.row, e.col))
            .ok()
            .map(|p| merged[p])
    };
    let mut worst: Option<(f64, Entry, Option<Entry>)> = None;
    for e in merged.iter().filter(|e| e.row != e.col) {
        let mirror = find(e.col, e.row);
        let gap = (e.val - mirror.map_or(0.0, |m| m.val)).abs();
        if gap > tol && worst.as_ref().is_none_or(|w| gap > w.0) {
            worst = Some((gap, *e, mirror));
        }
    }
    let Some((_, e, mirror)) = worst else {
        return Ok(());
    };
    let (i, j) = (e.row + 1, e.col + 1);
    let other = match mirror {
        Some(m) => format!("A({j}, {i}) = {:e} (line {})", m.val, m.line),
        None => format!("A({j}, {i}) is not stored"),
    };
    let hint = if mirror.is_none() {
        "; if the file stores one triangle only, its header must say `symmetric`"
    } else {
        ""
    };
    Err(file.err(
        e.line,
        format!(
            "the matrix is not symmetric: A({i}, {j}) = {:e} but {other} (relative tolerance \
             {SYMMETRY_TOL:e}){hint}",
            e.val
        ),
    ))
}
