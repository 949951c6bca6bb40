//! CalculiX (`ccx`) matrix export: `JOB.sti`, `JOB.mas` and `JOB.dof`, written by a step
//!
//! ```text
//! *STEP
//! *FREQUENCY, SOLVER=MATRIXSTORAGE
//! *END STEP
//! ```
//!
//! `.sti` (stiffness) and `.mas` (mass) hold one `row col value` per line: 1-based, upper
//! triangle with the diagonal, explicit zeros kept. `.dof` holds one `node.direction` per
//! equation; constrained DOFs have no equation. (A `*MATRIX STORAGE` step is silently
//! ignored by ccx 2.20: "No analysis was selected".)
//!
//! Also here: the eigenvalue table of a normal `*FREQUENCY` step's `.dat` file, to check an
//! import against CalculiX's own eigensolver.

use crate::assemble::{Entry, Storage, assemble_symmetric};
use crate::dofs::DofMap;
use crate::text::{TextFile, parse_f64, parse_index};
use crate::{FeMatrices, ImportError};
use ewr_model::SparseMatrix;
use std::path::{Path, PathBuf};

/// The three files of a CalculiX matrix export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFiles {
    /// Stiffness, `JOB.sti`.
    pub stiffness: PathBuf,
    /// Mass, `JOB.mas`.
    pub mass: PathBuf,
    /// Equation map, `JOB.dof`.
    pub dofs: PathBuf,
}

impl JobFiles {
    /// The files of job `job` (`dir/blade` or `dir/blade.inp`: a `.inp`, `.sti`, `.mas`,
    /// `.dof` or `.dat` extension is dropped, so any of the job's files names the job).
    pub fn of(job: &Path) -> Self {
        let base = match job.extension().and_then(|e| e.to_str()) {
            Some("inp" | "sti" | "mas" | "dof" | "dat") => job.with_extension(""),
            _ => job.to_path_buf(),
        };
        let with = |ext: &str| {
            let mut s = base.clone().into_os_string();
            s.push(".");
            s.push(ext);
            PathBuf::from(s)
        };
        JobFiles {
            stiffness: with("sti"),
            mass: with("mas"),
            dofs: with("dof"),
        }
    }
}

/// Reads the `.dof`, `.sti` and `.mas` files of a CalculiX job.
///
/// The `.dof` file sets the number of equations `n`; both matrices must fit it, have every
/// diagonal entry (CalculiX writes them all, so a missing one means a truncated file or a
/// file from another job) and finite values.
pub fn read_job(job: &Path) -> Result<FeMatrices, ImportError> {
    let files = JobFiles::of(job);
    for p in [&files.dofs, &files.stiffness, &files.mass] {
        if !p.exists() {
            return Err(ImportError::file(
                p,
                "not found; CalculiX writes JOB.sti, JOB.mas and JOB.dof for a step \
                 `*FREQUENCY, SOLVER=MATRIXSTORAGE` (see docs/importing.md)",
            ));
        }
    }
    let dofs = DofMap::read(&files.dofs)?;
    let stiffness = read_matrix(&files.stiffness, &files.dofs, dofs.len())?;
    let mass = read_matrix(&files.mass, &files.dofs, dofs.len())?;
    Ok(FeMatrices {
        mass,
        stiffness,
        damping: None,
        dofs: Some(dofs),
        source: format!("CalculiX job {}", job.display()),
        notes: Vec::new(),
    })
}

/// Reads one CalculiX `.sti` or `.mas` file of `n` equations (`n` from `dof_file`, named in
/// range errors).
pub fn read_matrix(path: &Path, dof_file: &Path, n: usize) -> Result<SparseMatrix, ImportError> {
    let file = TextFile::read(path)?;
    let mut entries = Vec::new();
    for l in file.lines() {
        let t = l.text.trim();
        if t.is_empty() {
            continue;
        }
        // CalculiX ends every line; a last line without its newline was cut while being
        // written, and its last number may be cut short without looking wrong.
        if !l.terminated {
            return Err(file.err(
                l.no,
                "the last line has no end of line: the file looks truncated",
            ));
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        if f.len() != 3 {
            return Err(file.err(
                l.no,
                format!(
                    "expected `row col value`, found {} field(s): `{t}` (truncated file?)",
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
                        "{what} 0: CalculiX equations are numbered from 1; is this file \
                         0-based?"
                    ),
                ));
            }
            if i > n {
                return Err(file.err(
                    l.no,
                    format!(
                        "{what} {i} is beyond the {n} equations of {} (files of different \
                         jobs?)",
                        dof_file.display()
                    ),
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
    if entries.is_empty() {
        return Err(ImportError::file(path, "the file has no entries"));
    }
    let mut has_diag = vec![false; n];
    for e in entries.iter().filter(|e| e.row == e.col) {
        has_diag[e.row] = true;
    }
    if let Some(first) = has_diag.iter().position(|d| !d) {
        let missing = has_diag.iter().filter(|d| !**d).count();
        return Err(file.err(
            file.end_line(),
            format!(
                "no diagonal entry for {missing} of the {n} equations (the first is equation \
                 {}): CalculiX writes every diagonal entry, so the file looks truncated or \
                 comes from another job than {}",
                first + 1,
                dof_file.display()
            ),
        ));
    }
    Ok(assemble_symmetric(&file, n, entries, Storage::OneTriangle)?.matrix)
}

/// One mode of CalculiX's eigenvalue table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcxMode {
    /// Mode number (1-based).
    pub mode: usize,
    /// Eigenvalue `omega^2`.
    pub eigenvalue: f64,
    /// Circular frequency `omega` (rad per time unit).
    pub omega: f64,
    /// Frequency `omega / 2 pi` (cycles per time unit).
    pub frequency: f64,
}

/// Reads the first `E I G E N V A L U E   O U T P U T` table of a CalculiX `.dat` file
/// (written by a normal `*FREQUENCY` step). CalculiX prints 7 significant digits.
pub fn read_dat_eigenvalues(path: &Path) -> Result<Vec<CcxMode>, ImportError> {
    let file = TextFile::read(path)?;
    let mut in_table = false;
    let mut modes = Vec::new();
    for l in file.lines() {
        let t = l.text.trim();
        if !in_table {
            in_table = t.replace(' ', "").eq_ignore_ascii_case("EIGENVALUEOUTPUT");
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let row = (f.len() == 5)
            .then(|| {
                let mode = f[0].parse::<usize>().ok()?;
                let v: Vec<f64> = f[1..]
                    .iter()
                    .map(|s| parse_f64(s).ok())
                    .collect::<Option<_>>()?;
                Some(CcxMode {
                    mode,
                    eigenvalue: v[0],
                    omega: v[1],
                    frequency: v[2],
                })
            })
            .flatten();
        match row {
            Some(m) => modes.push(m),
            // The column headings come before the rows; anything else after them ends it.
            None if modes.is_empty() => {}
            None if t.is_empty() => {}
            None => break,
        }
    }
    if modes.is_empty() {
        return Err(ImportError::file(
            path,
            "no eigenvalue table (`E I G E N V A L U E   O U T P U T`) found: was the job a \
             *FREQUENCY step without SOLVER=MATRIXSTORAGE?",
        ));
    }
    Ok(modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_with_or_without_extension() {
        let a = JobFiles::of(Path::new("dir/blade"));
        assert_eq!(a.stiffness, PathBuf::from("dir/blade.sti"));
        assert_eq!(JobFiles::of(Path::new("dir/blade.inp")), a);
        assert_eq!(JobFiles::of(Path::new("dir/blade.sti")), a);
        // A dot inside the job name is not an extension.
        let b = JobFiles::of(Path::new("dir/blade.v2"));
        assert_eq!(b.dofs, PathBuf::from("dir/blade.v2.dof"));
    }
}
