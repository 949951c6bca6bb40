//! The in-memory model: linear structure, friction contacts and periodic forcing.

use faer::sparse::{SparseColMat, Triplet};

/// A real sparse matrix stored by columns with both triangles present.
///
/// Symmetric files that store one triangle are expanded on read, so every consumer sees the
/// whole matrix and never has to remember which half is stored.
pub type SparseMatrix = SparseColMat<usize, f64>;

/// A linear structure with dry-friction contacts under periodic forcing.
///
/// `M u'' + C u' + K u (+ i eta K) = f(t) + W^T r(t)`, with `r` the friction forces of the
/// contacts and `W` their kinematic map (see [`Contacts`]).
#[derive(Clone, Debug)]
pub struct Model {
    /// Free-text title (root attribute `title`).
    pub title: Option<String>,
    /// Free-text statement of the unit system (root attribute `units`).
    pub units: Option<String>,
    /// Mass matrix `M` (n x n, symmetric, non-negative diagonal).
    pub mass: SparseMatrix,
    /// Stiffness matrix `K` (n x n, symmetric).
    pub stiffness: SparseMatrix,
    /// Explicit viscous damping matrix `C` (n x n, symmetric), if the file has `/C`.
    pub damping_matrix: Option<SparseMatrix>,
    /// Proportional, hysteretic and modal damping from the `/damping` group.
    pub damping: Damping,
    /// Friction contacts; empty for a purely linear model.
    pub contacts: Contacts,
    /// External periodic forcing terms.
    pub forcing: Vec<ForcingTerm>,
    /// Optional human-readable name per DOF (`/dof_labels`).
    pub dof_labels: Option<Vec<String>>,
}

impl Model {
    /// Sets the diagonal mass of `dofs` to `m`, other entries unchanged (a damper mass in a
    /// parameter study or a peak continuation).
    pub fn set_mass(&mut self, dofs: &[usize], m: f64) -> Result<(), String> {
        use crate::linalg_error::Sentence;
        let n = self.mass.nrows();
        let mut trip: Vec<Triplet<usize, usize, f64>> = self
            .mass
            .triplet_iter()
            .filter(|t| !(t.row == t.col && dofs.contains(&t.row)))
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .collect();
        trip.extend(dofs.iter().map(|&d| Triplet::new(d, d, m)));
        self.mass = SparseMatrix::try_new_from_triplets(n, n, &trip)
            .map_err(|e| format!("mass matrix: {}", e.sentence()))?;
        Ok(())
    }

    /// Number of degrees of freedom `n`.
    pub fn n_dofs(&self) -> usize {
        self.stiffness.nrows()
    }

    /// Index of the DOF with this label, if the model has labels.
    pub fn dof_by_label(&self, label: &str) -> Option<usize> {
        self.dof_labels.as_ref()?.iter().position(|l| l == label)
    }

    /// Total viscous damping `C + alpha M + beta K` as one sparse matrix.
    ///
    /// Hysteretic `eta` and modal `zeta` are not viscous and are left to the receptance.
    pub fn viscous_damping(&self) -> SparseMatrix {
        let n = self.n_dofs();
        let mut trip = Vec::new();
        let mut push = |a: &SparseMatrix, s: f64| {
            if s != 0.0 {
                for t in a.triplet_iter() {
                    trip.push(Triplet::new(t.row, t.col, s * *t.val));
                }
            }
        };
        if let Some(c) = &self.damping_matrix {
            push(c, 1.0);
        }
        if let Some((alpha, beta)) = self.damping.rayleigh {
            push(&self.mass, alpha);
            push(&self.stiffness, beta);
        }
        // Building from triplets of valid matrices cannot go out of bounds.
        SparseMatrix::try_new_from_triplets(n, n, &trip).expect("indices come from n x n matrices")
    }
}

/// Damping other than an explicit `C` matrix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Damping {
    /// Rayleigh coefficients `(alpha, beta)`: adds `alpha M + beta K` to `C`.
    pub rayleigh: Option<(f64, f64)>,
    /// Hysteretic loss factor: adds `i eta K` to the dynamic stiffness (frequency domain only).
    pub hysteretic_eta: Option<f64>,
    /// Modal damping ratios, one per retained mode (modal receptance only).
    pub modal_zeta: Option<Vec<f64>>,
}

impl Damping {
    /// True when no damping of any kind is set.
    pub fn is_empty(&self) -> bool {
        self.rayleigh.is_none() && self.hysteretic_eta.is_none() && self.modal_zeta.is_none()
    }
}

/// One term of the external forcing: `f_dof(t) += cos * cos(h w t) + sin * sin(h w t)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForcingTerm {
    /// Loaded DOF (0-based).
    pub dof: usize,
    /// Harmonic index `h` (0 is a static load).
    pub harmonic: usize,
    /// Amplitude of `cos(h w t)`.
    pub cos: f64,
    /// Amplitude of `sin(h w t)`.
    pub sin: f64,
}

/// How the contacts' tangential relative displacements are read from the DOFs.
#[derive(Clone, Debug)]
pub enum Kinematics {
    /// Each contact direction is one DOF, against ground or against the opposite node's DOF.
    ///
    /// `dofs[c * dim + k]` is direction `k` of contact `c`; `other` has the same layout, with
    /// `None` for ground. The relative displacement is `u[dof] - u[other]`.
    Dofs {
        /// The contact node's tangential DOFs, `nc * dim` entries.
        dofs: Vec<usize>,
        /// The opposite node's DOFs (node-to-node contacts), `None` for ground.
        other: Option<Vec<Option<usize>>>,
    },
    /// A general sparse map `W` (`dim * nc` x n), for rotated frames or DOF combinations.
    Matrix(SparseMatrix),
}

/// The friction contacts of a model, all with the same number of tangential directions.
///
/// Contact `c`, direction `k` is row `c * dim + k` of `W`; its relative tangential
/// displacement is `w = W u` and its friction force acts on the structure as `W^T r`.
#[derive(Clone, Debug)]
pub struct Contacts {
    /// Tangential directions per contact: 1 or 2.
    pub dim: usize,
    /// Friction bound `mu N` per contact.
    pub mu_n: Vec<f64>,
    /// Scaling parameter `rho` of the E-WR law per contact (default 1).
    pub rho: Vec<f64>,
    /// How `W` was given; kept so that a model is written back in the form it was read.
    pub kinematics: Kinematics,
}

impl Contacts {
    /// No contacts (a linear model).
    pub fn none() -> Self {
        Contacts {
            dim: 1,
            mu_n: Vec::new(),
            rho: Vec::new(),
            kinematics: Kinematics::Dofs {
                dofs: Vec::new(),
                other: None,
            },
        }
    }

    /// Number of contacts `nc`.
    pub fn len(&self) -> usize {
        self.mu_n.len()
    }

    /// True when the model has no contacts.
    pub fn is_empty(&self) -> bool {
        self.mu_n.is_empty()
    }

    /// The kinematic map `W` (`dim * nc` x `n_dofs`) whatever form the contacts were given in.
    ///
    /// Fails only when a DOF index is out of range, which validation reports first.
    pub fn w_matrix(&self, n_dofs: usize) -> Result<SparseMatrix, String> {
        let rows = self.dim * self.len();
        match &self.kinematics {
            Kinematics::Matrix(w) => {
                if w.nrows() != rows || w.ncols() != n_dofs {
                    return Err(format!(
                        "W is {} x {}, expected {rows} x {n_dofs}",
                        w.nrows(),
                        w.ncols()
                    ));
                }
                Ok(w.clone())
            }
            Kinematics::Dofs { dofs, other } => {
                let mut trip = Vec::with_capacity(2 * dofs.len());
                for (row, &d) in dofs.iter().enumerate() {
                    trip.push(Triplet::new(row, d, 1.0));
                    if let Some(Some(o)) = other.as_ref().map(|o| o[row]) {
                        trip.push(Triplet::new(row, o, -1.0));
                    }
                }
                SparseMatrix::try_new_from_triplets(rows, n_dofs, &trip)
                    .map_err(|_| format!("a contact DOF is out of range 0..{n_dofs}"))
            }
        }
    }
}
