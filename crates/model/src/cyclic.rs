//! Cyclic symmetry: a model that is one sector of a tuned disk of `N` identical sectors under
//! engine-order excitation, and its expansion into the full annulus (docs/cyclic.md).
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
use faer::sparse::Triplet;

use crate::model::{Contacts, ForcingTerm, Kinematics, Model, NormalContacts, SparseMatrix};

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

/// The phase `exp(i 2 pi j k_h / N)` of sector `j` at harmonic `h` relative to sector 0.
fn sector_phase(c: &Cyclic, h: usize, j: usize) -> c64 {
    let k = (c.nodal_diameter(h) * j) % c.sectors;
    let a = 2.0 * PI * k as f64 / c.sectors as f64;
    c64::new(a.cos(), a.sin())
}

impl Model {
    /// The full annulus of a cyclic sector model: `N` copies of the sector, each right DOF
    /// merged with the next sector's left partner, the contacts repeated per sector and the
    /// forcing of sector `j` phase-shifted by `exp(i 2 pi j h EO / N)`. It is an ordinary
    /// model (no `cyclic`), which every solver and `ewr simulate` handle: the reference
    /// against which the one-sector computation is validated.
    ///
    /// DOF `i` of sector `j` becomes `j * nr + red[i]` (see [`Cyclic::reduction`], `nr` the
    /// number of non-right DOFs); contact `c` of sector `j` becomes contact `j * nc + c`.
    pub fn annulus(&self) -> Result<Model, String> {
        let Some(cy) = &self.cyclic else {
            return Err("the model is not a cyclic sector".into());
        };
        let n = self.n_dofs();
        if let Some(p) = cy.problems(n).first() {
            return Err(format!("cyclic: {p}"));
        }
        if self.damping.modal_zeta.is_some() {
            return Err("modal damping ratios of a sector do not carry over to the annulus".into());
        }
        let ns = cy.sectors;
        let (red, is_right) = cy.reduction(n);
        let nr = n - cy.right.len();
        let total = ns * nr;
        let global = |j: usize, i: usize| {
            let s = if is_right[i] { (j + 1) % ns } else { j };
            s * nr + red[i]
        };
        let repeat = |a: &SparseMatrix| -> Result<SparseMatrix, String> {
            let mut trip = Vec::with_capacity(ns * a.compute_nnz());
            for j in 0..ns {
                for t in a.triplet_iter() {
                    trip.push(Triplet::new(global(j, t.row), global(j, t.col), *t.val));
                }
            }
            SparseMatrix::try_new_from_triplets(total, total, &trip)
                .map_err(|_| "annulus assembly failed".to_string())
        };
        // Contact maps: rows of sector j follow those of sector j - 1.
        let rows_map = |w: &SparseMatrix, per: usize| -> Result<SparseMatrix, String> {
            let mut trip = Vec::new();
            for j in 0..ns {
                for t in w.triplet_iter() {
                    trip.push(Triplet::new(j * per + t.row, global(j, t.col), *t.val));
                }
            }
            SparseMatrix::try_new_from_triplets(ns * per, total, &trip)
                .map_err(|_| "annulus contact map failed".to_string())
        };
        let c = &self.contacts;
        let nc = c.len();
        let rep = |v: &[f64]| -> Vec<f64> { (0..ns).flat_map(|_| v.iter().copied()).collect() };
        let contacts = if c.is_empty() {
            Contacts::none()
        } else {
            let w = c.w_matrix(n)?;
            let normal = match &c.normal {
                None => None,
                Some(nm) => {
                    let wn = crate::model::kinematic_matrix(&nm.kinematics, nc, n, "normal")?;
                    Some(NormalContacts {
                        kinematics: Kinematics::Matrix(rows_map(&wn, nc)?),
                        g0: rep(&nm.g0),
                        mu: rep(&nm.mu),
                        k_n: nm.k_n.as_deref().map(rep),
                        load: nm.load.as_deref().map(rep),
                    })
                }
            };
            Contacts {
                dim: c.dim,
                mu_n: rep(&c.mu_n),
                rho: rep(&c.rho),
                rho_auto: c.rho_auto,
                kinematics: Kinematics::Matrix(rows_map(&w, c.dim * nc)?),
                k_t: c.k_t.as_deref().map(rep),
                normal,
            }
        };
        let mut forcing = Vec::with_capacity(ns * self.forcing.len());
        for j in 0..ns {
            for t in &self.forcing {
                let f = c64::new(t.cos, -t.sin) * sector_phase(cy, t.harmonic, j);
                forcing.push(ForcingTerm {
                    dof: global(j, t.dof),
                    harmonic: t.harmonic,
                    cos: f.re,
                    sin: -f.im,
                });
            }
        }
        let mut labels = vec![String::new(); total];
        for j in 0..ns {
            for i in (0..n).filter(|&i| !is_right[i]) {
                let name = self
                    .dof_labels
                    .as_ref()
                    .map_or_else(|| i.to_string(), |l| l[i].clone());
                labels[global(j, i)] = format!("s{j}:{name}");
            }
        }
        Ok(Model {
            title: Some(format!(
                "{} (full annulus of {ns} sectors, EO {})",
                self.title.as_deref().unwrap_or("cyclic sector"),
                cy.engine_order
            )),
            units: self.units.clone(),
            mass: repeat(&self.mass)?,
            stiffness: repeat(&self.stiffness)?,
            damping_matrix: self.damping_matrix.as_ref().map(repeat).transpose()?,
            damping: self.damping.clone(),
            contacts,
            forcing,
            dof_labels: Some(labels),
            cyclic: None,
        })
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
