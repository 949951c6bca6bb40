//! Semantic checks of a model, reported as a list of problems that name the HDF5 path at fault.
//!
//! Structural problems of a file (missing dataset, wrong type, index out of range in a sparse
//! group) are found while reading; everything that can also be wrong in a model built in code
//! (non-symmetric matrices, NaN, negative friction bound, contact DOF out of range, ...) is
//! checked here, so that the reader and the builders share one set of rules.

use crate::model::{
    Contacts, Damping, ForcingTerm, Kinematics, Model, NormalContacts, SparseMatrix,
};
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
    validate_parts(&Parts {
        mass: Some(&model.mass),
        stiffness: Some(&model.stiffness),
        damping_matrix: model.damping_matrix.as_ref(),
        damping: Some(&model.damping),
        contacts: Some(&model.contacts),
        forcing: Some(&model.forcing),
        dof_labels: model.dof_labels.as_deref(),
        cyclic: model.cyclic.as_ref(),
    })
}

/// The parts of a model that could be read from a file; a part that could not be read is
/// `None` and the checks that need it are skipped, so that one run reports every problem of
/// the others too.
pub(crate) struct Parts<'a> {
    pub mass: Option<&'a SparseMatrix>,
    pub stiffness: Option<&'a SparseMatrix>,
    pub damping_matrix: Option<&'a SparseMatrix>,
    pub damping: Option<&'a Damping>,
    pub contacts: Option<&'a Contacts>,
    pub forcing: Option<&'a [ForcingTerm]>,
    pub dof_labels: Option<&'a [String]>,
    pub cyclic: Option<&'a crate::cyclic::Cyclic>,
}

/// [`validate`] on the parts at hand.
pub(crate) fn validate_parts(p: &Parts<'_>) -> Vec<Problem> {
    let mut out = Vec::new();
    let n = p.stiffness.map(|k| k.nrows());
    if n == Some(0) {
        out.push(Problem::error("/K", "the model has no degrees of freedom"));
    }
    let sound = |out: &mut Vec<Problem>, path: &str, a: Option<&SparseMatrix>| {
        a.is_some_and(|a| check_matrix(out, path, a, n.unwrap_or(a.nrows())))
    };
    let mass_ok = sound(&mut out, "/M", p.mass);
    let stiffness_ok = sound(&mut out, "/K", p.stiffness);
    sound(&mut out, "/C", p.damping_matrix);
    if let Some(m) = p.mass.filter(|_| mass_ok) {
        check_mass_diagonal(&mut out, m);
    }
    if let Some(k) = p.stiffness.filter(|_| stiffness_ok) {
        check_definite(&mut out, k);
        if let Some(m) = p.mass.filter(|_| mass_ok) {
            let right = p.cyclic.map_or(&[][..], |c| &c.right[..]);
            check_every_dof_has_inertia_or_stiffness(&mut out, m, k, right);
        }
    }
    if let Some(d) = p.damping {
        check_damping(&mut out, d);
    }
    if let Some(c) = p.contacts {
        check_contacts(&mut out, c, n);
    }
    if let Some(f) = p.forcing {
        check_forcing(&mut out, f, n);
    }
    if let (Some(c), Some(n)) = (p.cyclic, n) {
        for e in c.problems(n) {
            out.push(Problem::error("/cyclic", e));
        }
        if p.damping.is_some_and(|d| d.modal_zeta.is_some()) {
            out.push(Problem::error(
                "/damping/zeta",
                "modal damping ratios are not supported for cyclic sectors (their modes \
                 depend on the nodal diameter): use Rayleigh, eta or /C",
            ));
        }
    }
    if let (Some(labels), Some(n)) = (p.dof_labels, n)
        && labels.len() != n
    {
        out.push(Problem::error(
            "/dof_labels",
            format!("has {} labels for {n} DOFs", labels.len()),
        ));
    }
    out
}

/// A DOF whose rows of `M` and `K` are both empty has no inertia and no elasticity: reported
/// here rather than as a singular matrix in the middle of a sweep.
fn check_every_dof_has_inertia_or_stiffness(
    out: &mut Vec<Problem>,
    m: &SparseMatrix,
    k: &SparseMatrix,
    right: &[usize],
) {
    // Both are symmetric (checked before), so columns stand for rows. A cyclic sector's
    // right DOFs are the next sector's: their inertia is that of their left partners.
    let empty = |a: &SparseMatrix, j: usize| a.val_of_col(j).iter().all(|&v| v == 0.0);
    let lonely: Vec<usize> = (0..k.ncols())
        .filter(|&j| empty(m, j) && empty(k, j) && !right.contains(&j))
        .collect();
    // A warning, not an error: damping or a contact may still hold such a DOF, and the
    // solvers report a singular matrix with its frequency if nothing does.
    if let Some(&first) = lonely.first() {
        out.push(Problem::warning(
            "/K",
            format!(
                "{} DOF(s) have neither mass nor stiffness (first: DOF {first}): unless damping \
                 holds them, every solve will meet a singular matrix",
                lonely.len()
            ),
        ));
    }
}

/// Cheap necessary conditions of a positive semi-definite `K`: non-negative diagonal and
/// `K_ij^2 <= K_ii K_jj`. A failure proves `K` indefinite (a wrong sign or a mixed-up
/// export), which no structure has; `ewr model check` also factorises for the full test.
fn check_definite(out: &mut Vec<Problem>, k: &SparseMatrix) {
    let n = k.ncols();
    let mut diag = vec![0.0; n];
    for (j, d) in diag.iter_mut().enumerate() {
        let rows = k.row_idx_of_col_raw(j);
        if let Ok(p) = rows.binary_search(&j) {
            *d = k.val_of_col(j)[p];
        }
    }
    if let Some((j, d)) = diag.iter().enumerate().find(|(_, d)| **d < 0.0) {
        out.push(Problem::error(
            "/K",
            format!("K is indefinite: negative stiffness on the diagonal, K[{j},{j}] = {d:e}"),
        ));
        return;
    }
    let scale = diag.iter().fold(0.0f64, |a, &b| a.max(b));
    for j in 0..n {
        for (&i, &v) in k.row_idx_of_col_raw(j).iter().zip(k.val_of_col(j)) {
            // Relative slack for rounding in exported matrices (rigid-body modes make
            // K_ij^2 = K_ii K_jj exactly in exact arithmetic).
            if i < j && v * v > diag[i] * diag[j] + 1e-10 * scale * scale {
                out.push(Problem::error(
                    "/K",
                    format!(
                        "K is indefinite: K[{i},{j}]^2 = {:e} exceeds K[{i},{i}] K[{j},{j}] = {:e}",
                        v * v,
                        diag[i] * diag[j]
                    ),
                ));
                return;
            }
        }
    }
}

/// Shape, finite values and symmetry; true when the matrix passed.
fn check_matrix(out: &mut Vec<Problem>, path: &str, a: &SparseMatrix, n: usize) -> bool {
    if a.nrows() != n || a.ncols() != n {
        out.push(Problem::error(
            path,
            format!(
                "shape is [{}, {}], expected [{n}, {n}] (the size of /K)",
                a.nrows(),
                a.ncols()
            ),
        ));
        return false;
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
            return false;
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
        return false;
    }
    true
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

fn check_damping(out: &mut Vec<Problem>, d: &Damping) {
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

/// Contact checks; `n` is `None` when K could not be read (DOF ranges are then not checked).
fn check_contacts(out: &mut Vec<Problem>, c: &Contacts, n: Option<usize>) {
    let n = n.unwrap_or(usize::MAX);
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
            if w.nrows() != nc * c.dim || (n != usize::MAX && w.ncols() != n) {
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
    check_compliance_and_normal(out, c, n);
    if nc > 0 && !c.has_normal() && c.mu_n.iter().all(|&m| m == 0.0) {
        out.push(Problem::warning(
            "/contacts/mu_n",
            "every friction bound is 0: the contacts transmit no force",
        ));
    }
}

/// Version-2 contact data: contact stiffnesses and the normal directions.
fn check_compliance_and_normal(out: &mut Vec<Problem>, c: &Contacts, n: usize) {
    let nc = c.len();
    let mut positive = |path: &str, name: &str, v: &[f64]| {
        if v.len() != nc {
            out.push(Problem::error(
                path,
                format!("has {} entries for {nc} contacts", v.len()),
            ));
            return;
        }
        for (i, &k) in v.iter().enumerate() {
            if !(k.is_finite() && k > 0.0) {
                out.push(Problem::error(
                    path,
                    format!(
                        "contact {i} has {name} = {k}; a contact stiffness must be finite and > 0"
                    ),
                ));
            }
        }
    };
    if let Some(k) = &c.k_t {
        positive("/contacts/k_t", "k_t", k);
    }
    let Some(normal) = &c.normal else {
        return;
    };
    if let Some(k) = &normal.k_n {
        positive("/contacts/normal/k_n", "k_n", k);
    }
    if let Some(load) = &normal.load {
        if load.len() != nc {
            out.push(Problem::error(
                "/contacts/normal/load",
                format!("has {} entries for {nc} contacts", load.len()),
            ));
        }
        for (i, &x) in load.iter().enumerate() {
            let valid = x.is_nan() || (x.is_finite() && x >= 0.0);
            if !valid {
                out.push(Problem::error(
                    "/contacts/normal/load",
                    format!(
                        "contact {i} has load = {x}; a fixed normal force must be finite and \
                         >= 0 (NaN: the contact is unilateral)"
                    ),
                ));
            }
        }
    }
    check_normal_kinematics(out, c, normal);
    for (name, v) in [("mu", &normal.mu), ("g0", &normal.g0)] {
        let path = format!("/contacts/normal/{name}");
        if v.len() != nc {
            out.push(Problem::error(
                path.clone(),
                format!("has {} entries for {nc} contacts", v.len()),
            ));
            continue;
        }
        for (i, &x) in v.iter().enumerate() {
            if !x.is_finite() || (name == "mu" && x < 0.0) {
                out.push(Problem::error(
                    path.clone(),
                    format!(
                        "contact {i} has {name} = {x}; it must be finite{}",
                        if name == "mu" { " and >= 0" } else { "" }
                    ),
                ));
            }
        }
    }
    if n != usize::MAX
        && let Err(e) = c.contact_matrix(n)
    {
        out.push(Problem::error("/contacts/normal", e));
    }
}

/// The normal rows of 3-D contacts: finite, not empty where the contact has no fixed load, a
/// normal DOF that is not its own opposite and not one of the contact's friction DOFs (the
/// checks the contacts CSV importer makes, for model files written by other tools).
fn check_normal_kinematics(out: &mut Vec<Problem>, c: &Contacts, normal: &NormalContacts) {
    let nc = c.len();
    let fixed = |i: usize| normal.fixed_load(i).is_some();
    match &normal.kinematics {
        Kinematics::Matrix(w) => {
            if w.nrows() != nc {
                return;
            }
            let mut row_used = vec![false; nc];
            for t in w.triplet_iter() {
                if !t.val.is_finite() {
                    out.push(Problem::error(
                        "/contacts/normal/W",
                        format!("entry ({}, {}) is {}", t.row, t.col, t.val),
                    ));
                    return;
                }
                if *t.val != 0.0 {
                    row_used[t.row] = true;
                }
            }
            if let Some(i) = (0..nc).find(|&i| !row_used[i] && !fixed(i)) {
                out.push(Problem::error(
                    "/contacts/normal/W",
                    format!(
                        "row {i} (contact {i}) is empty: its normal reads no DOF; give it a DOF, \
                         or a fixed normal force in /contacts/normal/load"
                    ),
                ));
            }
        }
        Kinematics::Dofs { dofs, other } => {
            if dofs.len() != nc {
                return;
            }
            let tangential: Option<&Vec<usize>> = match &c.kinematics {
                Kinematics::Dofs { dofs, .. } if dofs.len() == nc * c.dim => Some(dofs),
                _ => None,
            };
            for (i, &d) in dofs.iter().enumerate() {
                if fixed(i) {
                    continue;
                }
                if other
                    .as_ref()
                    .and_then(|o| o.get(i).copied().flatten())
                    .is_some_and(|o| o == d)
                {
                    out.push(Problem::error(
                        "/contacts/normal/dofs_other",
                        format!(
                            "contact {i} has the same normal DOF {d} on both sides, so it never \
                             opens or closes"
                        ),
                    ));
                }
                if let Some(t) = tangential
                    && t[i * c.dim..(i + 1) * c.dim].contains(&d)
                {
                    out.push(Problem::error(
                        "/contacts/normal/dofs",
                        format!(
                            "contact {i}: normal DOF {d} is also one of its friction directions"
                        ),
                    ));
                }
            }
        }
    }
}

fn check_forcing(out: &mut Vec<Problem>, forcing: &[ForcingTerm], n: Option<usize>) {
    let n = n.unwrap_or(usize::MAX);
    for (i, f) in forcing.iter().enumerate() {
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
    if forcing.is_empty() {
        out.push(Problem::warning(
            "/forcing",
            "the model has no forcing: its periodic response is zero",
        ));
    }
}

/// The full test that `K` is positive semi-definite: a sparse Cholesky factorisation of
/// `K + eps I` with `eps = 1e-9 max K_ii` (the shift lets the rigid-body modes of a free
/// structure through). Costs a factorisation, so `ewr model check` runs it, not every read.
/// Returns a warning when the factorisation fails (K has a negative eigenvalue below
/// `-eps`), `None` when it succeeds or `K` is empty.
pub fn check_semidefinite(k: &SparseMatrix) -> Option<Problem> {
    use faer::Side;
    use faer::sparse::Triplet;
    let n = k.ncols();
    let mut t: Vec<Triplet<usize, usize, f64>> = k
        .triplet_iter()
        .map(|e| Triplet::new(e.row, e.col, *e.val))
        .collect();
    let scale = t
        .iter()
        .filter(|e| e.row == e.col)
        .fold(0.0f64, |a, e| a.max(e.val.abs()));
    if n == 0 || scale == 0.0 {
        return None;
    }
    t.extend((0..n).map(|i| Triplet::new(i, i, 1e-9 * scale)));
    let shifted = SparseMatrix::try_new_from_triplets(n, n, &t).ok()?;
    match shifted.as_ref().sp_cholesky(Side::Lower) {
        Ok(_) => None,
        Err(_) => Some(Problem::warning(
            "/K",
            "K is not positive semi-definite: the Cholesky factorisation of K + 1e-9 max(K_ii) I \
             fails, so K has a negative eigenvalue (a sign error or a mixed-up export?)",
        )),
    }
}
