//! Semantic checks of a model, reported as a list of problems that name the HDF5 path at fault.
//!
//! Structural problems of a file (missing dataset, wrong type, index out of range in a sparse
//! group) are found while reading; everything that can also be wrong in a model built in code
//! (non-symmetric matrices, NaN, negative friction bound, contact DOF out of range, ...) is
//! checked here, so that the reader and the builders share one set of rules.

use crate::model::{Kinematics, Model, SparseMatrix};
use std::fmt;

/// Relative tolerance of the symmetry check: `|A - A^T|max <= SYMMETRY_TOL * |A|max`.
///
/// FE codes write matrices in text with 10 to 16 significant digits, so exact symmetry
/// cannot be demanded; an asymmetry above 1e-8 is a wrong export, not rounding.
pub const SYMMETRY_TOL: f64 = 1e-8;

/// How serious a problem is: errors make a model unusable, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The model is still usable but probably not what the user meant.
    Warning,
    /// The model cannot be used.
    Error,
}

/// One finding of validation: where in the file, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// HDF5 path of the object at fault (e.g. `/contacts/dofs`), `/` for the file itself.
    pub path: String,
    /// What is wrong, in words an engineer can act on.
    pub message: String,
}

impl Problem {
    /// An error at `path`.
    pub fn error(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Error,
            path: path.into(),
            message: message.into(),
        }
    }

    /// A warning at `path`.
    pub fn warning(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            severity: Severity::Warning,
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{tag}: {}: {}", self.path, self.message)
    }
}

/// True when any of the problems is an error.
pub fn has_errors(problems: &[Problem]) -> bool {
    problems.iter().any(|p| p.severity == Severity::Error)
}

/// Checks a model and returns every problem found (empty when the model is valid).
pub fn validate(model: &Model) -> Vec<Problem> {
    let mut out = Vec::new();
    let n = model.n_dofs();
    if n == 0 {
        out.push(Problem::error("/K", "the model has no degrees of freedom"));
    }
    check_matrix(&mut out, "/M", &model.mass, n);
    check_matrix(&mut out, "/K", &model.stiffness, n);
    if let Some(c) = &model.damping_matrix {
        check_matrix(&mut out, "/C", c, n);
    }
    check_mass_diagonal(&mut out, &model.mass);
    check_damping(&mut out, model);
    check_contacts(&mut out, model);
    check_forcing(&mut out, model);
    if let Some(labels) = &model.dof_labels
        && labels.len() != n
    {
        out.push(Problem::error(
            "/dof_labels",
            format!("has {} labels for {n} DOFs", labels.len()),
        ));
    }
    out
}

fn check_matrix(out: &mut Vec<Problem>, path: &str, a: &SparseMatrix, n: usize) {
    if a.nrows() != n || a.ncols() != n {
        out.push(Problem::error(
            path,
            format!(
                "shape is [{}, {}], expected [{n}, {n}] (the size of /K)",
                a.nrows(),
                a.ncols()
            ),
        ));
        return;
    }
    let mut max_abs = 0.0f64;
    for t in a.triplet_iter() {
        if !t.val.is_finite() {
            out.push(Problem::error(
                path,
                format!(
                    "entry ({}, {}) is {} (values must be finite)",
                    t.row, t.col, t.val
                ),
            ));
            return;
        }
        max_abs = max_abs.max(t.val.abs());
    }
    if let Some((i, j, aij, aji)) = worst_asymmetry(a, SYMMETRY_TOL * max_abs) {
        out.push(Problem::error(
            path,
            format!(
                "matrix is not symmetric: A[{i},{j}] = {aij:e} but A[{j},{i}] = {aji:e} \
                 (relative tolerance {SYMMETRY_TOL:e}); if only one triangle is stored, \
                 set the attribute symmetric = \"upper\" or \"lower\""
            ),
        ));
    }
}

/// The entry pair with the largest `|A_ij - A_ji|` if it exceeds `tol`.
fn worst_asymmetry(a: &SparseMatrix, tol: f64) -> Option<(usize, usize, f64, f64)> {
    let at = a.as_ref().transpose().to_col_major().ok()?;
    let mut worst: Option<(usize, usize, f64, f64)> = None;
    let mut worst_gap = tol;
    for j in 0..a.ncols() {
        let (ra, va) = (a.row_idx_of_col_raw(j), a.val_of_col(j));
        let (rt, vt) = (at.row_idx_of_col_raw(j), at.val_of_col(j));
        // Both columns are sorted by row; walk them together as a sparse difference.
        let (mut p, mut q) = (0, 0);
        while p < ra.len() || q < rt.len() {
            let (i, x, y) = match (ra.get(p), rt.get(q)) {
                (Some(&i1), Some(&i2)) if i1 == i2 => {
                    p += 1;
                    q += 1;
                    (i1, va[p - 1], vt[q - 1])
                }
                (Some(&i1), Some(&i2)) if i1 < i2 => {
                    p += 1;
                    (i1, va[p - 1], 0.0)
                }
                (Some(_), Some(&i2)) => {
                    q += 1;
                    (i2, 0.0, vt[q - 1])
                }
                (Some(&i1), None) => {
                    p += 1;
                    (i1, va[p - 1], 0.0)
                }
                (None, Some(&i2)) => {
                    q += 1;
                    (i2, 0.0, vt[q - 1])
                }
                (None, None) => unreachable!("loop condition"),
            };
            let gap = (x - y).abs();
            if gap > worst_gap {
                worst_gap = gap;
                worst = Some((i, j, x, y));
            }
        }
    }
    worst
}

fn check_mass_diagonal(out: &mut Vec<Problem>, m: &SparseMatrix) {
    for j in 0..m.ncols().min(m.nrows()) {
        let rows = m.row_idx_of_col_raw(j);
        if let Ok(p) = rows.binary_search(&j) {
            let mjj = m.val_of_col(j)[p];
            if mjj < 0.0 {
                out.push(Problem::error(
                    "/M",
                    format!("negative mass on the diagonal: M[{j},{j}] = {mjj:e}"),
                ));
                return;
            }
        }
    }
}

fn check_damping(out: &mut Vec<Problem>, model: &Model) {
    let d = &model.damping;
    if let Some((alpha, beta)) = d.rayleigh {
        for (name, v) in [("alpha", alpha), ("beta", beta)] {
            if !v.is_finite() || v < 0.0 {
                out.push(Problem::error(
                    format!("/damping/{name}"),
                    format!("Rayleigh coefficient is {v}, must be finite and >= 0"),
                ));
            }
        }
    }
    if let Some(eta) = d.hysteretic_eta
        && (!eta.is_finite() || eta < 0.0)
    {
        out.push(Problem::error(
            "/damping/eta",
            format!("loss factor is {eta}, must be finite and >= 0"),
        ));
    }
    if let Some(zeta) = &d.modal_zeta
        && let Some((i, z)) = zeta
            .iter()
            .enumerate()
            .find(|(_, z)| !z.is_finite() || **z < 0.0)
    {
        out.push(Problem::error(
            "/damping/zeta",
            format!("damping ratio of mode {i} is {z}, must be finite and >= 0"),
        ));
    }
}

fn check_contacts(out: &mut Vec<Problem>, model: &Model) {
    let c = &model.contacts;
    let n = model.n_dofs();
    let nc = c.len();
    if c.dim != 1 && c.dim != 2 {
        out.push(Problem::error(
            "/contacts",
            format!("attribute dim = {}, must be 1 or 2", c.dim),
        ));
        return;
    }
    if c.rho.len() != nc {
        out.push(Problem::error(
            "/contacts/rho",
            format!("has {} entries for {nc} contacts", c.rho.len()),
        ));
    }
    for (i, &m) in c.mu_n.iter().enumerate() {
        if !m.is_finite() || m < 0.0 {
            out.push(Problem::error(
                "/contacts/mu_n",
                format!("contact {i} has mu_n = {m}; the friction bound must be finite and >= 0"),
            ));
        }
    }
    for (i, &r) in c.rho.iter().enumerate() {
        if !r.is_finite() || r <= 0.0 {
            out.push(Problem::error(
                "/contacts/rho",
                format!("contact {i} has rho = {r}; the scaling must be finite and > 0"),
            ));
        }
    }
    match &c.kinematics {
        Kinematics::Dofs { dofs, other } => {
            if dofs.len() != nc * c.dim {
                out.push(Problem::error(
                    "/contacts/dofs",
                    format!(
                        "has {} entries, expected nc x dim = {nc} x {}",
                        dofs.len(),
                        c.dim
                    ),
                ));
                return;
            }
            for (row, &d) in dofs.iter().enumerate() {
                if d >= n {
                    out.push(Problem::error(
                        "/contacts/dofs",
                        format!(
                            "contact {} direction {} uses DOF {d}, out of range 0..{n}",
                            row / c.dim,
                            row % c.dim
                        ),
                    ));
                }
            }
            if let Some(other) = other {
                if other.len() != dofs.len() {
                    out.push(Problem::error(
                        "/contacts/dofs_other",
                        format!("has {} entries, expected {}", other.len(), dofs.len()),
                    ));
                    return;
                }
                for (row, (&d, &o)) in dofs.iter().zip(other).enumerate() {
                    let (ci, k) = (row / c.dim, row % c.dim);
                    match o {
                        Some(o) if o >= n => out.push(Problem::error(
                            "/contacts/dofs_other",
                            format!(
                                "contact {ci} direction {k} uses DOF {o}, out of range 0..{n} \
                                 (use -1 for ground)"
                            ),
                        )),
                        Some(o) if o == d => out.push(Problem::error(
                            "/contacts/dofs_other",
                            format!(
                                "contact {ci} direction {k} has the same DOF {d} on both \
                                 sides, so it never slides"
                            ),
                        )),
                        _ => {}
                    }
                }
            }
        }
        Kinematics::Matrix(w) => {
            if w.nrows() != nc * c.dim || w.ncols() != n {
                out.push(Problem::error(
                    "/contacts/W",
                    format!(
                        "shape is [{}, {}], expected [dim * nc, n] = [{}, {n}]",
                        w.nrows(),
                        w.ncols(),
                        nc * c.dim
                    ),
                ));
                return;
            }
            let mut row_used = vec![false; w.nrows()];
            for t in w.triplet_iter() {
                if !t.val.is_finite() {
                    out.push(Problem::error(
                        "/contacts/W",
                        format!("entry ({}, {}) is {}", t.row, t.col, t.val),
                    ));
                    return;
                }
                if *t.val != 0.0 {
                    row_used[t.row] = true;
                }
            }
            if let Some(row) = row_used.iter().position(|u| !u) {
                out.push(Problem::error(
                    "/contacts/W",
                    format!(
                        "row {row} (contact {} direction {}) is empty: that direction reads no DOF",
                        row / c.dim,
                        row % c.dim
                    ),
                ));
            }
        }
    }
    if nc > 0 && c.mu_n.iter().all(|&m| m == 0.0) {
        out.push(Problem::warning(
            "/contacts/mu_n",
            "every friction bound is 0: the contacts transmit no force",
        ));
    }
}

fn check_forcing(out: &mut Vec<Problem>, model: &Model) {
    let n = model.n_dofs();
    for (i, f) in model.forcing.iter().enumerate() {
        if f.dof >= n {
            out.push(Problem::error(
                "/forcing/dof",
                format!(
                    "term {i} loads DOF {}, which does not exist (0..{n})",
                    f.dof
                ),
            ));
        }
        if !f.cos.is_finite() || !f.sin.is_finite() {
            out.push(Problem::error(
                "/forcing",
                format!(
                    "term {i} has a non-finite amplitude (cos {}, sin {})",
                    f.cos, f.sin
                ),
            ));
        }
        if f.harmonic == 0 && f.sin != 0.0 {
            out.push(Problem::warning(
                "/forcing/sin",
                format!("term {i} is static (harmonic 0): its sin amplitude is ignored"),
            ));
        }
    }
    if model.forcing.is_empty() {
        out.push(Problem::warning(
            "/forcing",
            "the model has no forcing: its periodic response is zero",
        ));
    }
}
