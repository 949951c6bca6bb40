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
    /// Cyclic symmetry: the model is one sector of a tuned disk (`/cyclic`, format v3).
    pub cyclic: Option<crate::cyclic::Cyclic>,
}

/// Stiffness of a rigid stuck contact row relative to the stiffest DOF in
/// [`Model::stuck_default`].
pub const STUCK_PENALTY: f64 = 1e6;

impl Model {
    /// Sets the engine order of a cyclic sector model's excitation (every run of the sector
    /// at another engine order, without a model per engine order); an error without
    /// `/cyclic`.
    pub fn set_engine_order(&mut self, eo: i64) -> Result<(), String> {
        let cy = self.cyclic.as_mut().ok_or(
            "the model is not a cyclic sector (no /cyclic group); an engine order applies to \
             one sector of a tuned disk",
        )?;
        cy.engine_order = eo;
        Ok(())
    }

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

    /// [`Model::stuck`] with rigid contact rows as springs [`STUCK_PENALTY`] times stiffer
    /// than the stiffest DOF: the constrained frequencies come out about `1 / STUCK_PENALTY`
    /// high, 6 significant digits.
    pub fn stuck_default(&self) -> Result<Option<Model>, String> {
        let k_max = self
            .stiffness
            .triplet_iter()
            .filter(|t| t.row == t.col)
            .fold(0.0f64, |a, t| a.max(t.val.abs()));
        self.stuck(STUCK_PENALTY * k_max.max(f64::MIN_POSITIVE))
    }

    /// The linear structure with every contact stuck (and 3-D contacts closed), the other
    /// limit of the nonlinear system beside friction removed: each contact row `w` adds
    /// `k w w^T` to `K`, with the row's contact stiffness (`k_t`, `k_n`) or, for a rigid row,
    /// `penalty` (a stiffness far above the structure's, approximating `w . u = 0`). The
    /// contacts themselves are removed. `None` without contacts.
    pub fn stuck(&self, penalty: f64) -> Result<Option<Model>, String> {
        if self.contacts.is_empty() {
            return Ok(None);
        }
        let n = self.n_dofs();
        let w = self.contacts.contact_matrix(n)?;
        let compliance = self
            .contacts
            .compliance()
            .unwrap_or_else(|| vec![0.0; w.nrows()]);
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); w.nrows()];
        for t in w.triplet_iter() {
            rows[t.row].push((t.col, *t.val));
        }
        let mut trip: Vec<Triplet<usize, usize, f64>> = self
            .stiffness
            .triplet_iter()
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .collect();
        for (row, &c) in rows.iter().zip(&compliance) {
            let k = if c > 0.0 { 1.0 / c } else { penalty };
            for &(i, a) in row {
                for &(j, b) in row {
                    trip.push(Triplet::new(i, j, k * a * b));
                }
            }
        }
        let mut stuck = self.clone();
        stuck.stiffness = SparseMatrix::try_new_from_triplets(n, n, &trip)
            .map_err(|_| format!("a contact DOF is out of range 0..{n}"))?;
        stuck.contacts = Contacts::none();
        Ok(Some(stuck))
    }

    /// Total viscous damping `C + alpha M + beta K` as one sparse matrix.
    ///
    /// Hysteretic `eta` and modal `zeta` are not viscous and are left to the receptance.
    pub fn viscous_damping(&self) -> SparseMatrix {
        let mut terms = Vec::new();
        if let Some(c) = &self.damping_matrix {
            terms.push((c, 1.0));
        }
        if let Some((alpha, beta)) = self.damping.rayleigh {
            terms.push((&self.mass, alpha));
            terms.push((&self.stiffness, beta));
        }
        terms.retain(|&(_, s)| s != 0.0);
        linear_combination(self.n_dofs(), &terms)
    }
}

/// `sum_k s_k A_k` of `n x n` sparse matrices, column by column: the pattern is the union of
/// the terms' (an entry present in a term is kept even where the sum cancels), each column's
/// rows ascending. Unlike a list of triplets sorted as a whole, it holds only the result and
/// a row marker (an FE model's `alpha M + beta K` is millions of entries).
pub fn linear_combination(n: usize, terms: &[(&SparseMatrix, f64)]) -> SparseMatrix {
    let cap = terms
        .iter()
        .map(|(a, _)| a.compute_nnz())
        .max()
        .unwrap_or(0);
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx: Vec<usize> = Vec::with_capacity(cap);
    let mut vals: Vec<f64> = Vec::with_capacity(cap);
    // Where row i sits in the column being built (usize::MAX: not yet in it).
    let mut at = vec![usize::MAX; n];
    let mut order: Vec<(usize, f64)> = Vec::new();
    col_ptr.push(0);
    for j in 0..n {
        let start = row_idx.len();
        for (a, s) in terms {
            for (&i, &v) in a.row_idx_of_col_raw(j).iter().zip(a.val_of_col(j)) {
                if at[i] == usize::MAX {
                    at[i] = row_idx.len();
                    row_idx.push(i);
                    vals.push(s * v);
                } else {
                    vals[at[i]] += s * v;
                }
            }
        }
        let rows = &mut row_idx[start..];
        for &i in rows.iter() {
            at[i] = usize::MAX;
        }
        if !rows.is_sorted() {
            order.clear();
            order.extend(rows.iter().copied().zip(vals[start..].iter().copied()));
            order.sort_unstable_by_key(|&(i, _)| i);
            for (k, (i, v)) in order.iter().enumerate() {
                row_idx[start + k] = *i;
                vals[start + k] = *v;
            }
        }
        col_ptr.push(row_idx.len());
    }
    let symbolic = faer::sparse::SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx);
    SparseMatrix::new(symbolic, vals)
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
    /// Scaling parameter `rho` of the E-WR law per contact (default 1); with `rho_auto` a
    /// factor on the automatic scaling.
    pub rho: Vec<f64>,
    /// Scale `rho` at each frequency from the structure, `rho = factor / (h w |G_h|)` on the
    /// lowest harmonic (`/contacts@rho_mode = "auto"`, `--rho auto`), so that a model in any
    /// units converges without a hand-picked `rho`. 3-D contacts always do this.
    pub rho_auto: bool,
    /// How `W` was given; kept so that a model is written back in the form it was read.
    pub kinematics: Kinematics,
    /// Tangential contact stiffness per contact in series with the friction law (a Jenkins
    /// element), `None` for rigid contacts (format v2).
    pub k_t: Option<Vec<f64>>,
    /// Normal directions, when the normal load varies and the contacts may lift off
    /// (format v2); `None` for contacts with a constant bound `mu_n`.
    pub normal: Option<NormalContacts>,
}

/// The normal side of 3-D contacts: a unilateral (Signorini) contact per friction contact,
/// whose compressive normal force `lambda(t) >= 0` bounds the friction force by
/// `mu lambda(t)` (docs/contact-3d.md).
///
/// The gap of contact `c` is `g = g0[c] + (W_N u)[c]` (positive = open) and the normal force
/// acts on the structure as `W_N^T lambda`, pushing the gap open. With these contacts the
/// model's `mu_n` is not used (all zeros).
#[derive(Clone, Debug)]
pub struct NormalContacts {
    /// How `W_N` (`nc x n`) was given: one DOF per contact (against ground or the opposite
    /// node) or a sparse matrix.
    pub kinematics: Kinematics,
    /// Initial gap per contact; negative is an interference, i.e. a static preload.
    pub g0: Vec<f64>,
    /// Friction coefficient per contact.
    pub mu: Vec<f64>,
    /// Normal contact stiffness per contact in series with the unilateral law, `None` for
    /// rigid contacts.
    pub k_n: Option<Vec<f64>>,
    /// Per contact, a normal force held constant instead of the unilateral law (`NaN`: the
    /// contact is unilateral; `None`: all are). Such a contact has no normal direction: its
    /// `W_N` row, `g0` and `k_n` are not used and its friction bound is `mu * load`, the
    /// constant-bound contact of a model whose other contacts lift off.
    pub load: Option<Vec<f64>>,
}

impl NormalContacts {
    /// The constant normal force of contact `c`, `None` for a unilateral contact.
    pub fn fixed_load(&self, c: usize) -> Option<f64> {
        self.load
            .as_ref()
            .and_then(|l| l.get(c).copied())
            .filter(|x| !x.is_nan())
    }
}

impl Contacts {
    /// No contacts (a linear model).
    pub fn none() -> Self {
        Contacts {
            dim: 1,
            mu_n: Vec::new(),
            rho: Vec::new(),
            rho_auto: false,
            kinematics: Kinematics::Dofs {
                dofs: Vec::new(),
                other: None,
            },
            k_t: None,
            normal: None,
        }
    }

    /// Sets every contact's friction bound to `x` (a `--mu-n` override); refused for 3-D
    /// contacts, whose bound is `mu` times the normal force, and for a negative or non-finite
    /// `x`. The message is a sentence the front ends prefix with their option's name.
    pub fn set_mu_n(&mut self, x: f64) -> Result<(), String> {
        if self.has_normal() {
            return Err(
                "the contacts are 3-D (normal direction): their friction bound is mu \
                        times the normal force, set by the model's mu and preload"
                    .into(),
            );
        }
        if !x.is_finite() || x < 0.0 {
            return Err("the friction bound must be finite and >= 0".into());
        }
        self.mu_n.iter_mut().for_each(|m| *m = x);
        Ok(())
    }

    /// Number of contacts `nc`.
    pub fn len(&self) -> usize {
        self.mu_n.len()
    }

    /// True when the model has no contacts.
    pub fn is_empty(&self) -> bool {
        self.mu_n.is_empty()
    }

    /// True for 3-D contacts (a normal direction with a varying normal load).
    pub fn has_normal(&self) -> bool {
        self.normal.is_some()
    }

    /// Rows of the contact map: `dim * nc` tangential rows, then `nc` normal rows when the
    /// contacts have a normal direction.
    pub fn rows(&self) -> usize {
        (self.dim + usize::from(self.has_normal())) * self.len()
    }

    /// Series compliance `1/k` of each contact row (tangential rows, then normal rows), 0 for
    /// a rigid row; `None` when every row is rigid.
    pub fn compliance(&self) -> Option<Vec<f64>> {
        let k_n = self.normal.as_ref().and_then(|n| n.k_n.as_ref());
        if self.k_t.is_none() && k_n.is_none() {
            return None;
        }
        let inv = |k: f64| {
            if k.is_finite() && k > 0.0 {
                1.0 / k
            } else {
                0.0
            }
        };
        let mut c = Vec::with_capacity(self.rows());
        for i in 0..self.len() {
            let ct = self.k_t.as_ref().map_or(0.0, |k| inv(k[i]));
            c.extend(std::iter::repeat_n(ct, self.dim));
        }
        if let Some(n) = &self.normal {
            c.extend((0..self.len()).map(|i| match n.fixed_load(i) {
                Some(_) => 0.0,
                None => n.k_n.as_ref().map_or(0.0, |k| inv(k[i])),
            }));
        }
        Some(c)
    }

    /// The full contact map: the tangential `W` stacked over the normal `W_N` (see
    /// [`rows`](Self::rows)); just `W` for contacts without a normal direction.
    pub fn contact_matrix(&self, n_dofs: usize) -> Result<SparseMatrix, String> {
        let w = self.w_matrix(n_dofs)?;
        let Some(normal) = &self.normal else {
            return Ok(w);
        };
        let wn = kinematic_matrix(&normal.kinematics, self.len(), n_dofs, "normal")?;
        let top = w.nrows();
        // A contact with a fixed normal load has no normal direction: an empty row.
        let trip: Vec<Triplet<usize, usize, f64>> = w
            .triplet_iter()
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .chain(
                wn.triplet_iter()
                    .filter(|t| normal.fixed_load(t.row).is_none())
                    .map(|t| Triplet::new(top + t.row, t.col, *t.val)),
            )
            .collect();
        SparseMatrix::try_new_from_triplets(top + wn.nrows(), n_dofs, &trip)
            .map_err(|_| format!("a contact DOF is out of range 0..{n_dofs}"))
    }

    /// The kinematic map `W` (`dim * nc` x `n_dofs`) whatever form the contacts were given in.
    ///
    /// Fails only when a DOF index is out of range, which validation reports first.
    pub fn w_matrix(&self, n_dofs: usize) -> Result<SparseMatrix, String> {
        kinematic_matrix(
            &self.kinematics,
            self.dim * self.len(),
            n_dofs,
            "tangential",
        )
    }
}

/// The sparse map of `rows` contact directions, from either form of [`Kinematics`].
pub(crate) fn kinematic_matrix(
    kinematics: &Kinematics,
    rows: usize,
    n_dofs: usize,
    what: &str,
) -> Result<SparseMatrix, String> {
    match kinematics {
        Kinematics::Matrix(w) => {
            if w.nrows() != rows || w.ncols() != n_dofs {
                return Err(format!(
                    "the {what} W is {} x {}, expected {rows} x {n_dofs}",
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
                .map_err(|_| format!("a {what} contact DOF is out of range 0..{n_dofs}"))
        }
    }
}

/// `a`'s values on the pattern of `on`, which holds `a`'s (as a [`linear_combination`] with
/// `a` among its terms does): zero where `a` has no entry.
pub fn values_on(on: &SparseMatrix, a: &SparseMatrix) -> Vec<f64> {
    let mut out = vec![0.0; on.compute_nnz()];
    let mut at = vec![usize::MAX; on.nrows()];
    let mut start = 0;
    for j in 0..on.ncols() {
        let rows = on.row_idx_of_col_raw(j);
        for (k, &i) in rows.iter().enumerate() {
            at[i] = start + k;
        }
        for (&i, &v) in a.row_idx_of_col_raw(j).iter().zip(a.val_of_col(j)) {
            out[at[i]] += v;
        }
        for &i in rows {
            at[i] = usize::MAX;
        }
        start += rows.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_combination_is_the_dense_sum_on_the_union_pattern() {
        let n = 7;
        let a = SparseMatrix::try_new_from_triplets(
            n,
            n,
            &[
                Triplet::new(0, 0, 2.0),
                Triplet::new(5, 0, -1.0),
                Triplet::new(3, 2, 4.0),
                Triplet::new(6, 6, 1.5),
            ],
        )
        .unwrap();
        let b = SparseMatrix::try_new_from_triplets(
            n,
            n,
            &[
                Triplet::new(1, 0, 3.0),
                Triplet::new(5, 0, 0.5),
                Triplet::new(3, 2, -4.0),
                Triplet::new(0, 4, 1.0),
            ],
        )
        .unwrap();
        let c = linear_combination(n, &[(&b, 2.0), (&a, 0.5)]);
        let want = a.to_dense() * 0.5 + b.to_dense() * 2.0;
        assert!((c.to_dense() - &want).norm_max() < 1e-15);
        // The union: (3, 2) cancels and stays; rows ascending although b's come first.
        assert_eq!(c.compute_nnz(), 6);
        for j in 0..n {
            assert!(c.row_idx_of_col_raw(j).is_sorted(), "column {j}");
        }
        assert_eq!(c.row_idx_of_col_raw(0), &[0, 1, 5]);
    }
}
