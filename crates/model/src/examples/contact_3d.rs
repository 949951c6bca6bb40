//! The 3-D contact examples: one mass on a 3-D contact to ground, and seed 004's wedge
//! damper moving out of plane (2 tangential directions per face).

use super::blade_damper_blade::{
    BDB_LABELS, BladeDamperBlade3d, blade_damper_blade_structure, face_row, rows_matrix,
    wedge_faces, wedge_normal,
};
use super::built::built;
use crate::builder::ModelBuilder;
use crate::model::{Contacts, Kinematics, Model, NormalContacts};

/// The wedge damper of [`blade_damper_blade_3d`](super::blade_damper_blade_3d) (its default parameters) moving out of
/// plane as well: the platforms and the damper also move along the blade axis (DOFs `z2`,
/// `z4`, `z6`: platform axial springs `k_blade`, damper axial spring `k_damper.1`, masses as
/// in plane), each face has two tangential directions, its in-plane tangent and the axis,
/// with the Coulomb disc of radius `mu lambda(t)`, and the left platform is also pushed
/// axially by `F/2 sin(w t)`. The faces slide along elliptical paths, so the friction force
/// turns (2-D friction) while the normal load varies and lifts off.
pub fn wedge_damper_3d() -> Model {
    let p = BladeDamperBlade3d::default();
    let b0 = &p.base;
    let (z2, z4, z6) = (8, 9, 10);
    let (_, m2, md) = b0.masses;
    let (kb, kzd) = (b0.k_blade, b0.k_damper.1);
    let c = |k: f64| b0.beta * k;
    let b = blade_damper_blade_structure(
        b0,
        11,
        "wedge-damper-3d: lumped wedge damper between two blade platforms, in plane and axial (2 tangential directions per face), normal load varies and lifts off",
    )
    .mass(z2, m2)
    .mass(z6, m2)
    .mass(z4, md)
    .spring_to_ground(z2, kb)
    .damper_to_ground(z2, c(kb))
    .spring_to_ground(z6, kb)
    .damper_to_ground(z6, c(kb))
    .spring_to_ground(z4, kzd)
    .damper_to_ground(z4, c(kzd))
    .force(z2, 1, 0.0, 0.5 * b0.force);
    let faces = wedge_faces(b0.angles);
    let axial = [z2, z6];
    // Per face: its in-plane tangent, then the axis, both as platform - damper.
    let w_t = rows_matrix(
        &faces
            .iter()
            .zip(axial)
            .flat_map(|(f, z)| [face_row(f.0, f.1, f.2, 1.0), vec![(z, 1.0), (z4, -1.0)]])
            .collect::<Vec<_>>(),
        11,
    );
    let w_n = rows_matrix(
        &faces
            .iter()
            .map(|f| face_row(f.0, f.1, f.3, -1.0))
            .collect::<Vec<_>>(),
        11,
    );
    let k_t = b0.k_contact.0.unwrap_or(f64::INFINITY);
    let mut contacts = Contacts::from_matrix(2, w_t, vec![0.0; 2]);
    contacts.k_t = Some(vec![k_t; 2]);
    contacts.normal = Some(wedge_normal(&p, w_n));
    let mut labels = BDB_LABELS.to_vec();
    labels.extend([
        "z2 platform L axial",
        "z4 damper axial",
        "z6 platform R axial",
    ]);
    built(b.dof_labels(labels).contacts(contacts))
}

/// One unit mass with DOFs `x, y` (tangential, springs 1 and 2) and `z` (normal, spring 3),
/// damping 0.01 on each, on a 3-D contact to ground: 2 tangential directions with friction
/// coefficient `mu = 0.4`, and a unilateral normal contact behind a contact stiffness
/// `k_n = 100`, pressed by a static load of 20 on `z` (so `mu lambda = 8` at rest, as in
/// seed 000's oscillator), shaken by `10 cos(w t)` on `x`, `y` and `15 cos(w t)` on `z`:
/// the normal force swings more as `w` approaches the contact resonance (about 10), and the
/// mass lifts off part of the period above `w` about 5.5.
pub fn single_contact_3d() -> Model {
    let mut contacts = Contacts::to_ground(2, vec![0, 1], vec![0.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Dofs {
            dofs: vec![2],
            other: None,
        },
        g0: vec![0.0],
        mu: vec![0.4],
        k_n: Some(vec![100.0]),
        load: None,
    });
    built(
        ModelBuilder::new(3)
            .title("single-contact-3d: one mass on a 3-D friction contact to ground (2 tangential directions + unilateral normal)")
            .units("consistent, non-dimensional")
            .dof_labels(["x", "y", "z"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .mass(2, 1.0)
            .spring_to_ground(0, 1.0)
            .spring_to_ground(1, 2.0)
            .spring_to_ground(2, 3.0)
            .damper_to_ground(0, 0.01)
            .damper_to_ground(1, 0.01)
            .damper_to_ground(2, 0.01)
            .contacts(contacts)
            .force(0, 1, 10.0, 0.0)
            .force(1, 1, 10.0, 0.0)
            .force(2, 0, -20.0, 0.0)
            .force(2, 1, 15.0, 0.0),
    )
}
