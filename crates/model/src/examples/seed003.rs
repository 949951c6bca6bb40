//! Seed 003 (Pierre & Legrand, IDETC 2023): the two-DOF chain with 1-D friction.

use super::built::built;
use crate::builder::ModelBuilder;
use crate::model::{Contacts, Model};

/// Seed 003 (IDETC 2023 slides): `m x1'' + d(2x1' - x2') + k(2x1 - x2) = f1 cos(w t)`,
/// `m x2'' + d(x2' - x1') + k(x2 - x1) = r`, 1-D friction on mass 2 with `muN = 9`.
///
/// The slides print only `muN = 9` (and `w = 0.308`); `m = k = 1`, `d = 0.02` and `f1 = 20`
/// are taken from seed 000 section 5, which continues this work with the same chain.
pub fn two_dof_1d() -> Model {
    built(
        ModelBuilder::new(2)
            .title("two-dof-1d: 2-DOF chain with 1-D friction on mass 2 (Pierre & Legrand, IDETC 2023)")
            .units("consistent, non-dimensional")
            .dof_labels(["x1", "x2"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .spring_to_ground(0, 1.0)
            .spring(0, 1, 1.0)
            .damper_to_ground(0, 0.02)
            .damper(0, 1, 0.02)
            .contacts(Contacts::to_ground(1, vec![1], vec![9.0]))
            .force(0, 1, 20.0, 0.0),
    )
}
