//! Friction contacts from a CSV file (format in `docs/importing.md`).
//!
//! Two styles, chosen by the header:
//! - **node style** (`node`, needs a DOF map): the contact plane is given by its normal
//!   `nx,ny,nz` (two tangents are built from it) or by tangents `t1x,t1y,t1z` (1-D) and
//!   optionally `t2x,t2y,t2z` (2-D); an opposite node `other` or ground. Row `c*dim + k` of
//!   `W` is `t_k . (u_node - u_other)` over the nodes' translational DOFs.
//! - **equation style** (`eq1`, optionally `eq2`): each direction is one equation (1-based,
//!   the row number in the matrix files), against ground or `other1`/`other2`.
//!
//! A file of 3-D contacts gives the friction coefficient `mu` instead of the bound `mu_n`
//! and a normal direction: the normal `n` of node style (the node separates along it), or
//! the equation `eqn` (with `othern`, `eqn_sign`); row `c` of `W_N` reads the gap's change.

use crate::contact_law::Laws;
use crate::csv::{Row, Table};
use crate::text::{TextFile, parse_index};
use crate::{DofSpace, ImportError};
use ewr_model::linalg_error::Sentence;
use ewr_model::{Contacts, Kinematics, SparseMatrix};
use faer::sparse::Triplet;
use std::path::Path;

/// Columns a contacts file may have.
pub const CONTACT_COLUMNS: [&str; 26] = [
    "node",
    "other",
    "mu_n",
    "mu",
    "g0",
    "load",
    "rho",
    "k_t",
    "k_n",
    "nx",
    "ny",
    "nz",
    "t1x",
    "t1y",
    "t1z",
    "t2x",
    "t2y",
    "t2z",
    "eq1",
    "eq2",
    "other1",
    "other2",
    "eqn",
    "othern",
    "eqn_sign",
    "other_sector",
];

/// Whether a row's opposite side is on the next sector of a cyclic model
/// (`other_sector = next`); such DOFs are returned as `n + dof` and moved to appended DOFs
/// by [`crate::cyclic::append_next_sector_dofs`].
fn on_next_sector(t: &Table<'_>, row: &Row) -> Result<bool, ImportError> {
    match t
        .get(row, "other_sector")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("same") | Some("0") => Ok(false),
        Some("next") | Some("1") => Ok(true),
        Some(v) => Err(t.file.err(
            row.line,
            format!("other_sector `{v}`: expected `same` (or empty) or `next`"),
        )),
    }
}

/// Two unit tangents given by hand must be orthogonal to this tolerance (`|t1 . t2|`):
/// loose enough for vectors typed with 4 digits, tight enough to catch a wrong vector.
pub const ORTHOGONALITY_TOL: f64 = 1e-3;

/// Tangent components below this (relative to a unit vector) are rounding, not a direction:
/// `cos(90 deg)` computed in a spreadsheet must not couple a DOF.
const COMPONENT_EPS: f64 = 1e-12;

/// Contacts read from a CSV file, with remarks that are not errors.
#[derive(Clone, Debug)]
pub struct ReadContacts {
    /// The contacts.
    pub contacts: Contacts,
    /// Remarks (e.g. a tangent component on a constrained DOF, dropped).
    pub notes: Vec<String>,
}

/// Reads a contacts CSV file against the model's DOFs.
pub fn read_contacts(path: &Path, space: &DofSpace<'_>) -> Result<ReadContacts, ImportError> {
    let t = Table::parse(TextFile::read(path)?, &CONTACT_COLUMNS)?;
    let laws = Laws::from_header(&t)?;
    match (t.has("node"), t.has("eq1")) {
        (true, false) => node_style(&t, space, laws),
        (false, true) => equation_style(&t, space, laws),
        (true, true) => Err(t.header_err(
            "give contacts either by `node` (with a DOF map) or by equations `eq1`[,`eq2`], \
             not both",
        )),
        (false, false) => Err(t.header_err(
            "a contact needs `node` (FE node number, with a DOF map) or `eq1` (equation \
             number)",
        )),
    }
}

/// A field that names the opposite side: empty, `ground` or `-` for ground.
fn is_ground(s: Option<&str>) -> bool {
    matches!(s, None | Some("-")) || s.is_some_and(|s| s.eq_ignore_ascii_case("ground"))
}

fn equation_style(
    t: &Table<'_>,
    space: &DofSpace<'_>,
    mut laws: Laws,
) -> Result<ReadContacts, ImportError> {
    for c in [
        "nx", "ny", "nz", "t1x", "t1y", "t1z", "t2x", "t2y", "t2z", "other",
    ] {
        if t.has(c) {
            return Err(t.header_err(format!(
                "column `{c}` belongs to node-style contacts (`node`); with `eq1` each \
                 direction is one equation and the opposite side is `other1`[,`other2`]"
            )));
        }
    }
    let dim = if t.has("eq2") { 2 } else { 1 };
    if dim == 1 && t.has("other2") {
        return Err(t.header_err("column `other2` without `eq2`"));
    }
    if laws.three_d && !t.has("eqn") {
        return Err(t.header_err(
            "3-D contacts (column `mu`) need the normal direction's equation `eqn` (and \
             `othern` for the opposite side)",
        ));
    }
    let n = space.n;
    let eq = |row: &Row, name: &str| -> Result<usize, ImportError> {
        let e = t.index(row, name)?;
        check_equation(&t.file, row.line, name, e, n)
    };
    // One direction: its equation and the opposite side's (`n + eq` on the next sector).
    let direction = |row: &Row, own: &str, opposite: &str, next: bool| {
        let d = eq(row, own)?;
        let o = if is_ground(t.get(row, opposite)) {
            if next {
                return Err(t.file.err(
                    row.line,
                    format!("other_sector = next needs an opposite equation in `{opposite}`"),
                ));
            }
            None
        } else {
            let o = eq(row, opposite)?;
            if next {
                Some(n + o)
            } else if o == d {
                return Err(t.file.err(
                    row.line,
                    format!("`{opposite}` is the contact's own equation {}", d + 1),
                ));
            } else {
                Some(o)
            }
        };
        Ok((d, o))
    };
    let (mut dofs, mut other, mut normal) = (vec![], vec![], vec![]);
    let mut any_next = false;
    for (c, row) in t.rows.iter().enumerate() {
        let next = on_next_sector(t, row)?;
        any_next |= next;
        for k in 1..=dim {
            let (d, o) = direction(row, &format!("eq{k}"), &format!("other{k}"), next)?;
            dofs.push(d);
            other.push(o);
        }
        laws.push(t, row)?;
        // A contact with a fixed normal force has no normal direction; it may name none,
        // and then nothing about one.
        let tangential = &dofs[dofs.len() - dim..];
        if laws.three_d && laws.has_load(c) && t.get(row, "eqn").is_none() {
            if let Some(c) = ["othern", "eqn_sign"]
                .into_iter()
                .find(|c| t.get(row, c).is_some())
            {
                return Err(t.file.err(
                    row.line,
                    format!("`{c}` without `eqn`: this contact has a fixed load and no normal"),
                ));
            }
        } else if laws.three_d {
            let sign = normal_sign(t, row)?;
            let (d, o) = direction(row, "eqn", "othern", next)?;
            if let Some(k) = tangential.iter().position(|&e| e == d) {
                return Err(t.file.err(
                    row.line,
                    format!(
                        "`eqn` = {} is also `eq{}`: the normal and a friction direction must \
                         be different equations",
                        d + 1,
                        k + 1
                    ),
                ));
            }
            normal.push(Triplet::new(c, d, sign));
            if let Some(o) = o {
                normal.push(Triplet::new(c, o, -sign));
            }
        }
    }
    let mut contacts = if other.iter().all(Option::is_none) {
        Contacts::to_ground(dim, dofs, laws.mu_n())
    } else {
        Contacts::between(dim, dofs, other, laws.mu_n())
    };
    let normal = if laws.three_d {
        let cols = if any_next { 2 * n } else { n };
        Some(normal_map(t, t.rows.len(), cols, &normal)?)
    } else {
        None
    };
    laws.apply(&mut contacts, normal);
    Ok(ReadContacts {
        contacts,
        notes: Vec::new(),
    })
}

/// `eqn_sign` of a row: `+1` (empty) when the gap opens as `eqn` increases, `-1` when it
/// opens as `eqn` decreases.
fn normal_sign(t: &Table<'_>, row: &Row) -> Result<f64, ImportError> {
    match t.f64_opt(row, "eqn_sign")? {
        None => Ok(1.0),
        Some(s) if s == 1.0 || s == -1.0 => Ok(s),
        Some(s) => Err(t.file.err(
            row.line,
            format!(
                "eqn_sign = {s}: expected 1 (the gap opens as equation `eqn` increases) or -1 \
                 (it opens as `eqn` decreases)"
            ),
        )),
    }
}

/// The normal map `W_N` (`nc x cols`) from its entries, as DOFs when every row reads one.
fn normal_map(
    t: &Table<'_>,
    nc: usize,
    cols: usize,
    trip: &[Triplet<usize, usize, f64>],
) -> Result<Kinematics, ImportError> {
    let w = SparseMatrix::try_new_from_triplets(nc, cols, trip)
        .map_err(|e| t.header_err(format!("cannot build W_N: {}", e.sentence())))?;
    let mut k = Kinematics::Matrix(w);
    simplify_kinematics(&mut k);
    Ok(k)
}

/// Checks a 1-based equation number against `n` and returns it 0-based.
pub(crate) fn check_equation(
    file: &TextFile<'_>,
    line: usize,
    what: &str,
    e: usize,
    n: usize,
) -> Result<usize, ImportError> {
    if e == 0 {
        return Err(file.err(
            line,
            format!(
                "`{what}` = 0: equation numbers are 1-based (1..={n}, the row numbers of the \
                 matrix files); is this a 0-based index?"
            ),
        ));
    }
    if e > n {
        return Err(file.err(
            line,
            format!("`{what}` = {e} is out of range: the model has {n} equations"),
        ));
    }
    Ok(e - 1)
}

/// A 3-vector from three columns `{p}x, {p}y, {p}z`, normalised.
fn unit_vector(t: &Table<'_>, row: &Row, p: &str) -> Result<[f64; 3], ImportError> {
    let mut v = [0.0; 3];
    for (k, a) in ["x", "y", "z"].into_iter().enumerate() {
        v[k] = t.f64(row, &format!("{p}{a}"))?;
    }
    // Scaled by the largest component first: the squares of (0, 0, 1e200) overflow to a
    // zero unit vector.
    let big = v.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    if big == 0.0 {
        return Err(t
            .file
            .err(row.line, format!("`{p}x,{p}y,{p}z` is the zero vector")));
    }
    let v = v.map(|x| x / big);
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    Ok(v.map(|x| x / norm))
}

/// Whether a header has all three columns `{p}x, {p}y, {p}z`; an error if only some.
fn vector_columns(t: &Table<'_>, p: &str) -> Result<bool, ImportError> {
    let have: Vec<bool> = ["x", "y", "z"]
        .iter()
        .map(|a| t.has(&format!("{p}{a}")))
        .collect();
    match have.iter().filter(|h| **h).count() {
        0 => Ok(false),
        3 => Ok(true),
        _ => Err(t.header_err(format!(
            "the vector `{p}` needs the three columns `{p}x,{p}y,{p}z`"
        ))),
    }
}

/// Two unit tangents spanning the plane normal to the unit vector `n`, so that
/// `(t1, t2, n)` is right-handed: `t1` is the coordinate axis that follows the normal's
/// dominant one (x -> y -> z -> x), made orthogonal to `n`; `t2 = n x t1`.
///
/// For a normal along an axis the tangents are the other two axes in cyclic order (normal
/// z: x and y; normal y: z and x), so such a contact reads single DOFs.
pub fn tangents_from_normal(n: [f64; 3]) -> ([f64; 3], [f64; 3]) {
    // |n_m| >= 1/sqrt(3) for the dominant axis m, so the next axis keeps at least
    // sqrt(2/3) of its length after projection: t1 is always well defined.
    let m = (0..3)
        .max_by(|&i, &j| n[i].abs().total_cmp(&n[j].abs()).then(j.cmp(&i)))
        .expect("three components");
    let a = (m + 1) % 3;
    let mut t1 = [0.0; 3];
    t1[a] = 1.0;
    let d = n[a];
    for k in 0..3 {
        t1[k] -= d * n[k];
    }
    let norm = t1.iter().map(|x| x * x).sum::<f64>().sqrt();
    let t1 = t1.map(|x| x / norm);
    let t2 = [
        n[1] * t1[2] - n[2] * t1[1],
        n[2] * t1[0] - n[0] * t1[2],
        n[0] * t1[1] - n[1] * t1[0],
    ];
    (t1, t2)
}

fn node_style(
    t: &Table<'_>,
    space: &DofSpace<'_>,
    mut laws: Laws,
) -> Result<ReadContacts, ImportError> {
    let Some(map) = space.map else {
        return Err(t.header_err(
            "column `node` needs a DOF map (CalculiX's JOB.dof, or --dofs with `ewr import \
             mtx`); without one, give each direction's equation in `eq1`[,`eq2`]",
        ));
    };
    let map_name = space
        .map_file
        .map_or_else(|| "the DOF map".to_string(), |p| p.display().to_string());
    for c in ["eq2", "other1", "other2", "eqn", "othern", "eqn_sign"] {
        if t.has(c) {
            return Err(t.header_err(format!(
                "column `{c}` belongs to equation-style contacts (`eq1`); with `node` the \
                 opposite node is `other`"
            )));
        }
    }
    let normal = vector_columns(t, "n")?;
    let t1 = vector_columns(t, "t1")?;
    let t2 = vector_columns(t, "t2")?;
    let dim = match (normal, t1, t2) {
        (_, false, true) => return Err(t.header_err("tangent `t2` without `t1`")),
        (false, false, false) => {
            return Err(t.header_err(
                "no contact directions: add the normal `nx,ny,nz` (2-D friction in the \
                 tangent plane) or tangents `t1x,t1y,t1z`[,`t2x,t2y,t2z`]",
            ));
        }
        (false, _, _) if laws.three_d => {
            return Err(t.header_err(
                "3-D contacts (column `mu`) need the contact normal `nx,ny,nz`: the direction \
                 in which `node` separates from `other` (or from ground)",
            ));
        }
        (true, true, _) if !laws.three_d => {
            return Err(t.header_err(
                "give the contact plane by its normal `nx,ny,nz` or by tangents `t1x,...`, \
                 not both (a normal with tangents is for 3-D contacts, column `mu`)",
            ));
        }
        (true, false, false) => 2,
        (_, true, false) => 1,
        (_, true, true) => 2,
    };
    let lookup = |row: &Row, col: &str| -> Result<u64, ImportError> {
        let node = parse_node(t, row, col)?;
        if !map.contains_node(node) {
            return Err(t.file.err(
                row.line,
                format!(
                    "node {node} (column `{col}`) is not in {map_name}: no such node, or all \
                     its DOFs are constrained (use `ground` for a fixed opposite side)"
                ),
            ));
        }
        Ok(node)
    };
    let orthogonal = |row: &Row, a: &[f64; 3], b: &[f64; 3], what: &str| {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        if dot.abs() > ORTHOGONALITY_TOL {
            return Err(t.file.err(
                row.line,
                format!(
                    "{what} are not orthogonal ({dot:.3e} after normalising): 2-D and 3-D \
                     friction need an orthonormal frame"
                ),
            ));
        }
        Ok(())
    };
    let (mut trip, mut trip_n, mut notes) = (vec![], vec![], vec![]);
    let mut any_next = false;
    for (c, row) in t.rows.iter().enumerate() {
        let node = lookup(row, "node")?;
        let next = on_next_sector(t, row)?;
        any_next |= next;
        let other = if is_ground(t.get(row, "other")) {
            if next {
                return Err(t.file.err(
                    row.line,
                    "other_sector = next needs an opposite node in `other`",
                ));
            }
            None
        } else {
            let o = lookup(row, "other")?;
            if o == node && !next {
                return Err(t.file.err(
                    row.line,
                    format!("`other` is the contact's own node {node}"),
                ));
            }
            Some(o)
        };
        let n_vec = normal.then(|| unit_vector(t, row, "n")).transpose()?;
        let dirs: Vec<[f64; 3]> = match (n_vec, t1) {
            (Some(nv), false) => {
                let (a, b) = tangents_from_normal(nv);
                vec![a, b]
            }
            _ => {
                let a = unit_vector(t, row, "t1")?;
                let mut dirs = vec![a];
                if dim == 2 {
                    let b = unit_vector(t, row, "t2")?;
                    orthogonal(row, &a, &b, "tangents t1 and t2 (t1 . t2)")?;
                    dirs.push(b);
                }
                if let Some(nv) = n_vec {
                    for (k, d) in dirs.iter().enumerate() {
                        orthogonal(row, d, &nv, &format!("tangent t{} and normal n", k + 1))?;
                    }
                }
                dirs
            }
        };
        laws.push(t, row)?;
        let mut read = |r: usize, dir: &[f64; 3], what: &str, out: &mut Vec<_>| {
            let before = out.len();
            for (side, sign) in [(Some(node), 1.0), (other, -1.0)] {
                let Some(nd) = side else { continue };
                for (a, &comp) in dir.iter().enumerate() {
                    if comp.abs() <= COMPONENT_EPS {
                        continue;
                    }
                    let direction = a as u32 + 1;
                    // The next sector's DOFs are encoded as n + eq (crate::cyclic).
                    let shift = if sign < 0.0 && next { space.n } else { 0 };
                    match map.equation(nd, direction) {
                        Some(eq) => out.push(Triplet::new(r, eq + shift, sign * comp)),
                        None => notes.push(format!(
                            "{}:{}: node {nd} has no free DOF in direction {direction} \
                             (constrained): that component ({comp:.3}) of {what} is dropped",
                            t.file.path.display(),
                            row.line,
                        )),
                    }
                }
            }
            if out.len() == before {
                return Err(t.file.err(
                    row.line,
                    format!(
                        "{what} of this contact reads no free DOF: every DOF it points along \
                         is constrained"
                    ),
                ));
            }
            Ok(())
        };
        for (k, dir) in dirs.iter().enumerate() {
            read(c * dim + k, dir, &format!("tangent {}", k + 1), &mut trip)?;
        }
        // The gap n . (u_node - u_other) opens as the node moves along n; a contact with a
        // fixed normal force has no normal direction.
        if let Some(nv) = n_vec.filter(|_| laws.three_d && !laws.has_load(c)) {
            read(c, &nv, "the normal", &mut trip_n)?;
        }
    }
    let nc = t.rows.len();
    let cols = if any_next { 2 * space.n } else { space.n };
    let w = SparseMatrix::try_new_from_triplets(dim * nc, cols, &trip)
        .map_err(|e| t.header_err(format!("cannot build W: {}", e.sentence())))?;
    let mut contacts = Contacts::from_matrix(dim, w, laws.mu_n());
    let normal = if laws.three_d {
        Some(normal_map(t, nc, cols, &trip_n)?)
    } else {
        None
    };
    laws.apply(&mut contacts, normal);
    simplify(&mut contacts);
    Ok(ReadContacts { contacts, notes })
}

/// Replaces `W` (and `W_N`) by the DOF-list form when every row is `+1` on one DOF,
/// optionally `-1` on another: contacts along coordinate axes then read as DOFs in
/// `model info` and files.
pub(crate) fn simplify(c: &mut Contacts) {
    simplify_kinematics(&mut c.kinematics);
    if let Some(n) = &mut c.normal {
        simplify_kinematics(&mut n.kinematics);
    }
}

fn simplify_kinematics(k: &mut Kinematics) {
    let Kinematics::Matrix(w) = k else {
        return;
    };
    let rows = w.nrows();
    let mut plus: Vec<Option<usize>> = vec![None; rows];
    let mut minus: Vec<Option<usize>> = vec![None; rows];
    for e in w.triplet_iter() {
        let slot = match *e.val {
            1.0 => &mut plus[e.row],
            -1.0 => &mut minus[e.row],
            _ => return,
        };
        if slot.replace(e.col).is_some() {
            return;
        }
    }
    let Some(dofs) = plus.into_iter().collect::<Option<Vec<usize>>>() else {
        return;
    };
    *k = Kinematics::Dofs {
        dofs,
        other: minus.iter().any(Option::is_some).then_some(minus),
    };
}

/// Used by the forcing reader too: parses a node number field.
pub(crate) fn parse_node(t: &Table<'_>, row: &Row, col: &str) -> Result<u64, ImportError> {
    let s = t.required(row, col)?;
    parse_index(s, &format!("column `{col}`: node"))
        .map(|v| v as u64)
        .map_err(|m| t.file.err(row.line, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
        a.iter().zip(&b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn tangents_from_a_normal_are_an_orthonormal_right_handed_frame() {
        for n in [
            [0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.5f64.sqrt(), 0.5f64.sqrt()],
            [0.6, 0.0, -0.8],
            [1.0 / 3f64.sqrt(), -1.0 / 3f64.sqrt(), 1.0 / 3f64.sqrt()],
        ] {
            let (t1, t2) = tangents_from_normal(n);
            assert!((dot(t1, t1) - 1.0).abs() < 1e-14 && (dot(t2, t2) - 1.0).abs() < 1e-14);
            assert!(dot(t1, n).abs() < 1e-14 && dot(t2, n).abs() < 1e-14);
            assert!(dot(t1, t2).abs() < 1e-14);
            // t1 x t2 = n.
            let c = [
                t1[1] * t2[2] - t1[2] * t2[1],
                t1[2] * t2[0] - t1[0] * t2[2],
                t1[0] * t2[1] - t1[1] * t2[0],
            ];
            assert!(dot(c, n) > 1.0 - 1e-14, "{n:?}");
        }
        // Normals along axes give the other two axes in cyclic order.
        let (x, y, z) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
        assert_eq!(tangents_from_normal(z), (x, y));
        assert_eq!(tangents_from_normal(y), (z, x));
        assert_eq!(tangents_from_normal(x), (y, z));
    }
}
