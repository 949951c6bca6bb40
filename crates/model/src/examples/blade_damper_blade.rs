//! Seed 004 (Wen, Qi & Wen, section 5.2, Table 2): the lumped blade-damper-blade model with
//! its wedge damper, at constant normal load and with 2-D contact elements. The structure and
//! the damper faces are shared with the 3-D wedge damper of `contact_3d`.

use super::built::built;
use crate::builder::ModelBuilder;
use crate::model::{Contacts, Kinematics, Model, NormalContacts};

/// Parameters of the lumped blade-damper-blade model (seed 004, Table 2).
#[derive(Clone, Debug, PartialEq)]
pub struct BladeDamperBlade {
    /// Blade spring `k_x1` between blade and platform, and platform springs `k_x`, `k_y` (N/m).
    pub k_blade: f64,
    /// Damper springs to ground `k_xd`, `k_yd` (N/m).
    pub k_damper: (f64, f64),
    /// Contact stiffness, tangential (in series with the slider) and normal (N/m).
    /// `None` for the tangential one makes the contact rigid (pure Coulomb).
    pub k_contact: (Option<f64>, f64),
    /// Blade mass `m1`, platform mass `m2`, damper mass `m_d` (kg).
    pub masses: (f64, f64, f64),
    /// Inclinations `alpha_1`, `alpha_2` of the two damper faces (rad).
    pub angles: (f64, f64),
    /// Stiffness-proportional damping factor `beta` on the structural springs (s).
    pub beta: f64,
    /// Friction coefficient times normal preload, `mu N0` (N).
    pub mu_n: f64,
    /// Amplitude of the force `F cos(w t)` on the left platform x-DOF `x2` (N).
    pub force: f64,
}

impl Default for BladeDamperBlade {
    fn default() -> Self {
        BladeDamperBlade {
            k_blade: 3.95e5,
            k_damper: (2e5, 1e5),
            k_contact: (Some(1e5), 1e5),
            masses: (0.1, 0.1, 0.0044),
            angles: (std::f64::consts::FRAC_PI_6, std::f64::consts::FRAC_PI_6),
            beta: 1.5e-5,
            mu_n: 0.3 * 50.0,
            force: 10.0,
        }
    }
}

/// A sparse contact map from its rows, each a list of `(DOF, coefficient)` within `n` DOFs.
pub(super) fn rows_matrix(rows: &[Vec<(usize, f64)>], n: usize) -> crate::SparseMatrix {
    let trip: Vec<_> = rows
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.iter()
                .map(move |&(j, v)| faer::sparse::Triplet::new(r, j, v))
        })
        .collect();
    crate::SparseMatrix::try_new_from_triplets(rows.len(), n, &trip)
        .expect("contact rows use DOFs of the model")
}

/// DOF labels of the blade-damper-blade structure.
pub(super) const BDB_LABELS: [&str; 8] = [
    "x1 blade L",
    "x2 platform L",
    "y3 platform L",
    "x4 damper",
    "y5 damper",
    "x6 platform R",
    "y7 platform R",
    "x8 blade R",
];

/// A damper face: platform x DOF, platform y DOF, tangent, normal.
type Face = (usize, usize, (f64, f64), (f64, f64));

/// The damper faces as `(platform x, platform y, tangent, normal)`, left then right: the left
/// face has tangent `(cos a1, sin a1)` and normal `(sin a1, -cos a1)`, the right one is its
/// mirror image.
pub(super) fn wedge_faces((a1, a2): (f64, f64)) -> [Face; 2] {
    [
        (1, 2, (a1.cos(), a1.sin()), (a1.sin(), -a1.cos())),
        (5, 6, (-a2.cos(), a2.sin()), (-a2.sin(), -a2.cos())),
    ]
}

/// The row `s d . (platform - damper)` of a face (damper DOFs `x4`, `y5`).
pub(super) fn face_row(px: usize, py: usize, d: (f64, f64), s: f64) -> Vec<(usize, f64)> {
    vec![(px, s * d.0), (py, s * d.1), (3, -s * d.0), (4, -s * d.1)]
}

/// The unilateral side of the wedge damper's 2-D contact elements: normal rows `w_n`, the
/// interference `-N0 / k_n` that preloads each face, `mu`, `k_n`.
pub(super) fn wedge_normal(p: &BladeDamperBlade3d, w_n: crate::SparseMatrix) -> NormalContacts {
    let k_n = p.base.k_contact.1;
    NormalContacts {
        kinematics: Kinematics::Matrix(w_n),
        g0: vec![-p.preload / k_n; 2],
        mu: vec![p.mu; 2],
        k_n: Some(vec![k_n; 2]),
        load: None,
    }
}

/// The structure shared by [`blade_damper_blade`] and [`blade_damper_blade_3d`]: masses,
/// springs and dampers of DOFs `x1 x2 y3 x4 y5 x6 y7 x8`, and the forcing on `x2`, in a model
/// of `n` DOFs.
pub(super) fn blade_damper_blade_structure(
    p: &BladeDamperBlade,
    n: usize,
    title: &str,
) -> ModelBuilder {
    let (x1, x2, y3, x4, y5, x6, y7, x8) = (0, 1, 2, 3, 4, 5, 6, 7);
    let (m1, m2, md) = p.masses;
    let kb = p.k_blade;
    let (kxd, kyd) = p.k_damper;
    let c = |k: f64| p.beta * k;
    ModelBuilder::new(n)
        .title(title)
        .units("SI: kg, N/m, N, s")
        .mass(x1, m1)
        .mass(x8, m1)
        .mass(x2, m2)
        .mass(y3, m2)
        .mass(x6, m2)
        .mass(y7, m2)
        .mass(x4, md)
        .mass(y5, md)
        .spring(x1, x2, kb)
        .damper(x1, x2, c(kb))
        .spring(x6, x8, kb)
        .damper(x6, x8, c(kb))
        .spring_to_ground(x2, kb)
        .damper_to_ground(x2, c(kb))
        .spring_to_ground(y3, kb)
        .damper_to_ground(y3, c(kb))
        .spring_to_ground(x6, kb)
        .damper_to_ground(x6, c(kb))
        .spring_to_ground(y7, kb)
        .damper_to_ground(y7, c(kb))
        .spring_to_ground(x4, kxd)
        .damper_to_ground(x4, c(kxd))
        .spring_to_ground(y5, kyd)
        .damper_to_ground(y5, c(kyd))
        .force(x2, 1, p.force, 0.0)
}

/// Seed 004 section 5.2, Eq. 66, at constant normal load: DOFs `x1 x2 y3 x4 y5 x6 y7 x8`
/// (blade L, platform L, damper, platform R, blade R), plus one massless slider DOF per
/// contact when the tangential contact stiffness is finite (a Jenkins element: contact spring
/// in series with the Coulomb slider, the slider's DOF against ground).
///
/// The left face has tangent `(cos a1, sin a1)`, normal `(sin a1, -cos a1)`; the right face is
/// its mirror image, tangent `(-cos a2, sin a2)`, normal `(-sin a2, -cos a2)`. The normal
/// contact springs stay closed (constant normal load, so separation is not modelled).
pub fn blade_damper_blade(p: &BladeDamperBlade) -> Model {
    let jenkins = p.k_contact.0.is_some();
    let n = if jenkins { 10 } else { 8 };
    let mut b = blade_damper_blade_structure(
        p,
        n,
        "blade-damper-blade: lumped wedge-damper model (Wen, Qi & Wen, Table 2), constant normal load",
    );
    let rel = |px: usize, py: usize, d: (f64, f64)| face_row(px, py, d, 1.0);
    let mut w_rows = Vec::new();
    for (i, &(px, py, t, nrm)) in wedge_faces(p.angles).iter().enumerate() {
        b = b.spring_along(&rel(px, py, nrm), p.k_contact.1);
        match p.k_contact.0 {
            Some(kt) => {
                let mut bt = rel(px, py, t);
                bt.push((8 + i, -1.0));
                b = b.spring_along(&bt, kt);
            }
            None => w_rows.push(rel(px, py, t)),
        }
    }
    let mut labels = BDB_LABELS.to_vec();
    let contacts = if jenkins {
        labels.extend(["slider L", "slider R"]);
        Contacts::to_ground(1, vec![8, 9], vec![p.mu_n; 2])
    } else {
        let w = rows_matrix(&w_rows, n);
        Contacts::from_matrix(1, w, vec![p.mu_n; 2])
    };
    built(b.dof_labels(labels).contacts(contacts))
}

/// Parameters of [`blade_damper_blade_3d`]: the structure of [`BladeDamperBlade`] (its
/// `k_contact` are the element's tangential and normal stiffnesses; its `mu_n` is unused)
/// with a friction coefficient and a normal preload per face.
#[derive(Clone, Debug, PartialEq)]
pub struct BladeDamperBlade3d {
    /// Structure, masses, damping, forcing and contact stiffnesses.
    pub base: BladeDamperBlade,
    /// Friction coefficient of both faces.
    pub mu: f64,
    /// Normal preload `N0` of each face (N): the element's force at zero relative motion.
    pub preload: f64,
}

impl Default for BladeDamperBlade3d {
    fn default() -> Self {
        BladeDamperBlade3d {
            // 40 N (chosen; the paper gives no level): both faces slip near the first
            // resonance and lift off part of the period at its peak.
            base: BladeDamperBlade {
                force: 40.0,
                ..BladeDamperBlade::default()
            },
            mu: 0.3,
            preload: 50.0,
        }
    }
}

/// Seed 004 section 5.2 with its 2-D contact element (Yang, Chu & Menq): on each damper face
/// a tangential stiffness `k_t` in series with Coulomb friction of bound `mu lambda(t)`, and a
/// normal stiffness `k_n` in series with a unilateral contact, preloaded by an interference
/// `g0 = -N0 / k_n` so that the element carries `lambda = N0 + k_n (compression)` as in the
/// paper's element and lifts off when that reaches zero. DOFs `x1 x2 y3 x4 y5 x6 y7 x8` as in
/// [`blade_damper_blade`], without slider DOFs (the compliance is part of the contacts).
///
/// The normal row of a face reads `n . (damper - platform)` with `n` the face normal of
/// [`blade_damper_blade`] (`(sin a1, -cos a1)`, `(-sin a2, -cos a2)`), so that the gap closes
/// when the damper moves up into the platforms (the centrifugal direction) and the normal
/// force pushes the damper down and the platforms up.
pub fn blade_damper_blade_3d(p: &BladeDamperBlade3d) -> Model {
    let b0 = &p.base;
    let b = blade_damper_blade_structure(
        b0,
        8,
        "blade-damper-blade-3d: lumped wedge-damper model with 2-D contact elements (Wen, Qi & Wen, Table 2), normal load varies and lifts off",
    );
    let faces = wedge_faces(b0.angles);
    // d . (platform - damper) for the tangent, n . (damper - platform) for the normal.
    let matrix = |rows: Vec<Vec<(usize, f64)>>| rows_matrix(&rows, 8);
    let w_t = matrix(faces.iter().map(|f| face_row(f.0, f.1, f.2, 1.0)).collect());
    let w_n = matrix(
        faces
            .iter()
            .map(|f| face_row(f.0, f.1, f.3, -1.0))
            .collect(),
    );
    let mut contacts = Contacts::from_matrix(1, w_t, vec![0.0; 2]);
    if let Some(k_t) = b0.k_contact.0 {
        contacts.k_t = Some(vec![k_t; 2]);
    }
    contacts.normal = Some(wedge_normal(p, w_n));
    built(b.dof_labels(BDB_LABELS).contacts(contacts))
}
