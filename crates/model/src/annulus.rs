//! The full annulus of a cyclic sector model ([`Model::annulus`]): the sector repeated `N`
//! times around the disk, the reference against which the one-sector computation is
//! validated (docs/cyclic.md).

use std::f64::consts::PI;

use faer::c64;
use faer::sparse::Triplet;

use crate::cyclic::Cyclic;
use crate::model::{Contacts, ForcingTerm, Kinematics, Model, NormalContacts, SparseMatrix};

/// The phase `exp(i 2 pi j k_h / N)` of sector `j` at harmonic `h` relative to sector 0.
fn sector_phase(c: &Cyclic, h: usize, j: usize) -> c64 {
    let k = (c.nodal_diameter(h) * j) % c.sectors;
    let a = 2.0 * PI * k as f64 / c.sectors as f64;
    c64::new(a.cos(), a.sin())
}

/// Most DOFs of a full annulus: a disk of 100 sectors of 200 000 DOFs each.
const MAX_ANNULUS_DOFS: usize = 20_000_000;

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
        // Refused before the triplets are reserved: 32 bytes per stored entry.
        let entries = ns as f64 * (self.mass.compute_nnz() + self.stiffness.compute_nnz()) as f64;
        if total > MAX_ANNULUS_DOFS || 32.0 * entries > 64e9 {
            return Err(format!(
                "the full annulus would have {ns} x {nr} = {total} DOFs and {entries:.3e} matrix \
                 entries, more than a model ewr builds (at most {MAX_ANNULUS_DOFS} DOFs)"
            ));
        }
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
