//! Cyclic symmetry: a model that is one sector of a tuned disk of `N` identical sectors under
//! engine-order excitation (docs/cyclic.md); its expansion into the full annulus is
//! `Model::annulus` (`annulus.rs`).
//!
//! The sector carries two matched DOF sets: `left[i]` and `right[i]`, where `right[i]` *is*
//! the next sector's `left[i]`. A shared FE boundary node appears in both; a contact against
//! the next sector's blade names the neighbour's DOF as a `right` DOF (a DOF of the sector
//! model with no mass or stiffness of its own, paired with the blade DOF in `left`).
//! Harmonic `h` of the response is a travelling wave of nodal diameter
//! `k_h = (h EO) mod N`: sector `j`'s complex amplitude is sector 0's times
//! `exp(i 2 pi j k_h / N)`, and so is its forcing.

use std::f64::consts::PI;

use faer::c64;

/// Most sectors a cyclic model may have: far above real disks (a few hundred blades), far
/// below the sizes whose annulus or per-diameter tables cannot be allocated.
pub const MAX_SECTORS: usize = 10_000;

/// One sector of a tuned cyclic structure under engine-order excitation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cyclic {
    /// Number of sectors `N` of the full disk (>= 2).
    pub sectors: usize,
    /// Engine order `EO` of the excitation; its sign sets the direction in which the wave
    /// travels (sector `j` lags or leads sector 0 by `2 pi j h EO / N` at harmonic `h`).
    pub engine_order: i64,
    /// Left boundary DOFs, matched one to one with `right`.
    pub left: Vec<usize>,
    /// Right boundary DOFs: `right[i]` of sector `j` is `left[i]` of sector `j + 1`.
    pub right: Vec<usize>,
}

impl Cyclic {
    /// Nodal diameter of harmonic `h`: `(h EO) mod N`, in `0 .. N`.
    pub fn nodal_diameter(&self, h: usize) -> usize {
        let n = self.sectors as i128;
        ((h as i128 * self.engine_order as i128).rem_euclid(n)) as usize
    }

    /// The inter-sector phase of harmonic `h`: `exp(i 2 pi k_h / N)`, the factor from a
    /// sector's complex amplitude to the next sector's.
    pub fn phase(&self, h: usize) -> c64 {
        let a = 2.0 * PI * self.nodal_diameter(h) as f64 / self.sectors as f64;
        c64::new(a.cos(), a.sin())
    }

    /// `red[i]`: the index of DOF `i` among the sector's independent DOFs (every DOF but the
    /// right ones, in order), a right DOF mapping to its left partner's; and whether each DOF
    /// is a right DOF. Assumes a valid model ([`problems`](Self::problems) empty).
    pub fn reduction(&self, n: usize) -> (Vec<usize>, Vec<bool>) {
        let mut is_right = vec![false; n];
        for &r in &self.right {
            is_right[r] = true;
        }
        let mut red = vec![usize::MAX; n];
        let mut next = 0;
        for (i, slot) in red.iter_mut().enumerate() {
            if !is_right[i] {
                *slot = next;
                next += 1;
            }
        }
        for (&l, &r) in self.left.iter().zip(&self.right) {
            red[r] = red[l];
        }
        (red, is_right)
    }

    /// What is wrong with this description for a model of `n` DOFs (empty when valid).
    pub fn problems(&self, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        if self.sectors < 2 {
            out.push(format!(
                "sectors = {}: a disk needs at least 2",
                self.sectors
            ));
        }
        if self.sectors > MAX_SECTORS {
            out.push(format!(
                "sectors = {}: at most {MAX_SECTORS} (bladed disks have a few hundred at most; \
                 the annulus and the per-diameter tables are sized by it)",
                self.sectors
            ));
        }
        if self.left.len() != self.right.len() {
            out.push(format!(
                "left has {} DOFs and right {}: they are matched pairs",
                self.left.len(),
                self.right.len()
            ));
        }
        let mut seen = vec![0u8; n];
        for (name, set, bit) in [("left", &self.left, 1u8), ("right", &self.right, 2u8)] {
            for &d in set {
                if d >= n {
                    out.push(format!("{name} DOF {d} is out of range 0..{n}"));
                    continue;
                }
                if seen[d] & bit != 0 {
                    out.push(format!("{name} lists DOF {d} twice"));
                }
                seen[d] |= bit;
            }
        }
        if let Some(d) = seen.iter().position(|&s| s == 3) {
            out.push(format!(
                "DOF {d} is both a left and a right DOF: the right DOFs are the next sector's \
                 copies of the left ones"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cy(ns: usize, eo: i64) -> Cyclic {
        Cyclic {
            sectors: ns,
            engine_order: eo,
            left: vec![0, 1],
            right: vec![3, 4],
        }
    }

    #[test]
    fn nodal_diameters_alias_and_reverse() {
        let c = cy(12, 7);
        assert_eq!(c.nodal_diameter(0), 0);
        assert_eq!(c.nodal_diameter(1), 7);
        assert_eq!(c.nodal_diameter(2), 2);
        assert_eq!(cy(12, -1).nodal_diameter(1), 11);
        // ND 7 of 12 is ND 5 travelling backwards: conjugate phases.
        let (a, b) = (cy(12, 7).phase(1), cy(12, 5).phase(1));
        assert!((a - b.conj()).norm() < 1e-15);
    }

    #[test]
    fn reduction_maps_right_to_left_and_problems_are_named() {
        let c = cy(4, 1);
        let (red, right) = c.reduction(5);
        assert_eq!(red, vec![0, 1, 2, 0, 1]);
        assert_eq!(right, vec![false, false, false, true, true]);
        assert!(c.problems(5).is_empty());
        let bad = Cyclic {
            sectors: 1,
            engine_order: 1,
            left: vec![0, 7],
            right: vec![0],
        };
        let p = bad.problems(5).join("\n");
        for s in [
            "at least 2",
            "matched pairs",
            "out of range",
            "both a left and a right",
        ] {
            assert!(p.contains(s), "{s} missing in {p}");
        }
    }
}
