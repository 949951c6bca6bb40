//! Cyclic sectors (docs/cyclic.md): the matched left/right boundary DOFs from a CSV file,
//! and the next sector's DOFs that inter-sector contacts name (`other_sector = next` in the
//! contacts file), appended to the sector as right DOFs without mass or stiffness.
//!
//! Boundary file: `left_node,right_node` (with a DOF map: every free direction of the left
//! node is paired with the same direction of the right node) or `left_eq,right_eq` (1-based
//! equations), one pair per row; `right` is the next sector's copy of `left`.

use crate::contacts::{check_equation, parse_node};
use crate::csv::Table;
use crate::text::TextFile;
use crate::{DofSpace, ImportError};
use ewr_model::{Contacts, Kinematics, SparseMatrix};
use faer::sparse::Triplet;
use std::path::Path;

/// Columns a boundary file may have.
pub const BOUNDARY_COLUMNS: [&str; 4] = ["left_node", "right_node", "left_eq", "right_eq"];

/// The matched `(left, right)` DOFs of a boundary CSV file.
pub fn read_boundary(
    path: &Path,
    space: &DofSpace<'_>,
) -> Result<(Vec<usize>, Vec<usize>), ImportError> {
    let t = Table::parse(TextFile::read(path)?, &BOUNDARY_COLUMNS)?;
    let (mut left, mut right) = (Vec::new(), Vec::new());
    match (
        t.has("left_node") && t.has("right_node"),
        t.has("left_eq") && t.has("right_eq"),
    ) {
        (true, false) => {
            let Some(map) = space.map else {
                return Err(t.header_err(
                    "columns `left_node,right_node` need a DOF map (CalculiX's JOB.dof, or \
                     --dofs with `ewr import mtx`); without one, give `left_eq,right_eq`",
                ));
            };
            for row in &t.rows {
                let (l, r) = (
                    parse_node(&t, row, "left_node")?,
                    parse_node(&t, row, "right_node")?,
                );
                let mut found = false;
                for direction in 1..=6u32 {
                    match (map.equation(l, direction), map.equation(r, direction)) {
                        (Some(a), Some(b)) => {
                            left.push(a);
                            right.push(b);
                            found = true;
                        }
                        (None, None) => {}
                        _ => {
                            return Err(t.file.err(
                                row.line,
                                format!(
                                    "nodes {l} and {r} differ in direction {direction}: one is \
                                     free, the other constrained or absent (matched nodes \
                                     must have the same DOFs)"
                                ),
                            ));
                        }
                    }
                }
                if !found {
                    return Err(t
                        .file
                        .err(row.line, format!("node {l} has no free DOF in the DOF map")));
                }
            }
        }
        (false, true) => {
            for row in &t.rows {
                left.push(check_equation(
                    &t.file,
                    row.line,
                    "left_eq",
                    t.index(row, "left_eq")?,
                    space.n,
                )?);
                right.push(check_equation(
                    &t.file,
                    row.line,
                    "right_eq",
                    t.index(row, "right_eq")?,
                    space.n,
                )?);
            }
        }
        _ => {
            return Err(t.header_err(
                "give the matched boundary as `left_node,right_node` (with a DOF map) or \
                 `left_eq,right_eq`",
            ));
        }
    }
    Ok((left, right))
}

/// Moves the next sector's DOFs of `contacts` (encoded as `n + dof` by the contacts
/// reader, in the tangential and the normal maps) to appended DOFs `n, n + 1, ...`, one per
/// distinct DOF in increasing order, and returns the `(left, right)` pairs that tie each to
/// its own sector's DOF. Empty when no contact names the next sector.
pub fn append_next_sector_dofs(
    contacts: &mut Contacts,
    n: usize,
) -> Result<(Vec<usize>, Vec<usize>), String> {
    if contacts.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let nc = contacts.len();
    let w = wide_matrix(&contacts.kinematics, contacts.dim * nc, n)?;
    let w_n = match &contacts.normal {
        Some(normal) => Some(wide_matrix(&normal.kinematics, nc, n)?),
        None => None,
    };
    let mut named: Vec<usize> = w
        .triplet_iter()
        .chain(w_n.iter().flat_map(|m| m.triplet_iter()))
        .filter(|t| t.col >= n)
        .map(|t| t.col - n)
        .collect();
    if named.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    named.sort_unstable();
    named.dedup();
    let n2 = n + named.len();
    let remap = |w: &SparseMatrix| {
        let trip: Vec<Triplet<usize, usize, f64>> = w
            .triplet_iter()
            .map(|t| {
                let col = if t.col >= n {
                    n + named.binary_search(&(t.col - n)).expect("collected above")
                } else {
                    t.col
                };
                Triplet::new(t.row, col, *t.val)
            })
            .collect();
        SparseMatrix::try_new_from_triplets(w.nrows(), n2, &trip)
            .map_err(|_| "cannot build the contact map".to_string())
    };
    contacts.kinematics = Kinematics::Matrix(remap(&w)?);
    if let (Some(normal), Some(w_n)) = (&mut contacts.normal, &w_n) {
        normal.kinematics = Kinematics::Matrix(remap(w_n)?);
    }
    crate::contacts::simplify(contacts);
    let right = (n..n2).collect();
    Ok((named, right))
}

/// A contact map with `2 n` columns, whichever form it has: the readers encode the next
/// sector's DOF `d` as column `n + d`.
fn wide_matrix(k: &Kinematics, rows: usize, n: usize) -> Result<SparseMatrix, String> {
    let trip: Vec<Triplet<usize, usize, f64>> = match k {
        Kinematics::Matrix(w) => w
            .triplet_iter()
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .collect(),
        Kinematics::Dofs { dofs, other } => dofs
            .iter()
            .enumerate()
            .flat_map(|(r, &d)| {
                let o = other.as_ref().and_then(|o| o[r]);
                std::iter::once(Triplet::new(r, d, 1.0)).chain(o.map(|o| Triplet::new(r, o, -1.0)))
            })
            .collect(),
    };
    SparseMatrix::try_new_from_triplets(rows, 2 * n, &trip)
        .map_err(|_| format!("a contact DOF is out of range 0..{}", 2 * n))
}

/// `a` (n x n) widened to `n2 x n2` with zeros.
pub fn widen(a: &SparseMatrix, n2: usize) -> SparseMatrix {
    let trip: Vec<Triplet<usize, usize, f64>> = a
        .triplet_iter()
        .map(|t| Triplet::new(t.row, t.col, *t.val))
        .collect();
    SparseMatrix::try_new_from_triplets(n2, n2, &trip).expect("indices below n <= n2")
}
