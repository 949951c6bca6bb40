//! Seed 000 (Pierre & Legrand, JSD 2025): the oscillator with 2-D friction (sections 3-4)
//! and the blade mass with a friction damper mass (section 5).

use super::built::built;
use crate::builder::ModelBuilder;
use crate::model::{Contacts, Model};

/// Seed 000 sections 3-4: `m = 1`, `c1 = c2 = 0.01`, `k1 = 1`, `k2 = 2`, `muN = 8`,
/// `f1 = f2 = 10 cos(w t)`; DOFs `u1`, `u2`, one 2-D contact to ground.
pub fn oscillator_2d() -> Model {
    built(
        ModelBuilder::new(2)
            .title(
                "oscillator-2d: one mass with 2-D friction (Pierre & Legrand, JSD 2025, sec. 3-4)",
            )
            .units("consistent, non-dimensional")
            .dof_labels(["u1", "u2"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .spring_to_ground(0, 1.0)
            .spring_to_ground(1, 2.0)
            .damper_to_ground(0, 0.01)
            .damper_to_ground(1, 0.01)
            .contacts(Contacts::to_ground(2, vec![0, 1], vec![8.0]))
            .force(0, 1, 10.0, 0.0)
            .force(1, 1, 10.0, 0.0),
    )
}

/// Seed 000 section 5: `m1 = m2 = 1`, every `c = 0.02`, `k11 = k21 = 1`, `k12 = k22 = 2`,
/// `muN = 8` on mass 2, `f11 = f12 = 20 cos(w t)` on mass 1.
///
/// DOFs `u11, u12` (mass 1, directions 1 and 2) and `u21, u22` (mass 2, the damper).
/// `damper_mass` replaces `m2` (section 5.4; 0 is the massless damper of Fig. 23).
pub fn two_mass_damper(damper_mass: f64) -> Model {
    built(
        ModelBuilder::new(4)
            .title("two-mass-damper: blade mass + damper mass with 2-D friction (Pierre & Legrand, JSD 2025, sec. 5)")
            .units("consistent, non-dimensional")
            .dof_labels(["u11", "u12", "u21", "u22"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .mass(2, damper_mass)
            .mass(3, damper_mass)
            .spring_to_ground(0, 1.0)
            .spring_to_ground(1, 2.0)
            .spring(0, 2, 1.0)
            .spring(1, 3, 2.0)
            .damper_to_ground(0, 0.02)
            .damper_to_ground(1, 0.02)
            .damper(0, 2, 0.02)
            .damper(1, 3, 0.02)
            .contacts(Contacts::to_ground(2, vec![2, 3], vec![8.0]))
            .force(0, 1, 20.0, 0.0)
            .force(1, 1, 20.0, 0.0),
    )
}
