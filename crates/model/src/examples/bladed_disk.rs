//! The lumped tuned bladed disk: one sector with shroud and platform contacts, the
//! cyclic-symmetry example.

use super::built::built;
use crate::builder::ModelBuilder;
use crate::model::{Contacts, Model};

/// Parameters of [`bladed_disk`].
#[derive(Clone, Debug, PartialEq)]
pub struct BladedDisk {
    /// Number of sectors `N`.
    pub sectors: usize,
    /// Engine order of the excitation.
    pub engine_order: i64,
}

impl Default for BladedDisk {
    fn default() -> Self {
        BladedDisk {
            sectors: 12,
            engine_order: 3,
        }
    }
}

/// One sector of a lumped tuned bladed disk, the cyclic-symmetry example: a disk mass
/// (`m = 2`, circumferential `x` and axial `y`) on ground springs (4, 6) coupled to the next
/// sector's disk (2, 1), a blade mass (`m = 1`) on the disk (1, 1.5), Rayleigh damping
/// `0.005 K`. Two 2-D friction contacts: the shroud, blade against the next sector's blade
/// (`muN = 0.5`), and the platform, blade against its own disk (`muN = 0.3`). Forcing
/// `cos(w t)` circumferential and `0.5 sin(w t)` axial on the blade, engine order `EO`.
///
/// DOFs 4..8 are the next sector's disk and blade (the right boundary, matched with
/// DOFs 0..4): the next disk carries the coupling springs, the next blade only the shroud
/// contact. Built for this project (no published source); small enough to compare with its
/// full annulus (`Model::annulus`).
pub fn bladed_disk(p: &BladedDisk) -> Model {
    let labels = [
        "disk_x",
        "disk_y",
        "blade_x",
        "blade_y",
        "next_disk_x",
        "next_disk_y",
        "next_blade_x",
        "next_blade_y",
    ];
    built(
        ModelBuilder::new(8)
            .title(format!(
                "bladed-disk: one sector of a lumped tuned bladed disk, N = {}, EO {}",
                p.sectors, p.engine_order
            ))
            .units("consistent, non-dimensional")
            .dof_labels(labels)
            .mass(0, 2.0)
            .mass(1, 2.0)
            .mass(2, 1.0)
            .mass(3, 1.0)
            .spring_to_ground(0, 4.0)
            .spring_to_ground(1, 6.0)
            .spring(0, 4, 2.0)
            .spring(1, 5, 1.0)
            .spring(0, 2, 1.0)
            .spring(1, 3, 1.5)
            .rayleigh(0.0, 0.005)
            .contacts(Contacts {
                k_t: Some(vec![1.0, 1.0]),
                ..Contacts::between(
                    2,
                    vec![2, 3, 2, 3],
                    vec![Some(6), Some(7), Some(0), Some(1)],
                    vec![0.5, 0.3],
                )
            })
            .force(2, 1, 1.0, 0.0)
            .force(3, 1, 0.0, 0.5)
            .cyclic(crate::Cyclic {
                sectors: p.sectors,
                engine_order: p.engine_order,
                left: vec![0, 1, 2, 3],
                right: vec![4, 5, 6, 7],
            }),
    )
}
