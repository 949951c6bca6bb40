//! Building models in code: lumped springs, masses and dampers, contacts and forcing.
//!
//! Entries are accumulated as triplets (duplicates add up, as in FE assembly) and turned into
//! sparse matrices once, in [`ModelBuilder::build`], which also validates the result.

use crate::model::{Contacts, Damping, ForcingTerm, Kinematics, Model, SparseMatrix};
use crate::validate::{Problem, has_errors, validate};
use faer::sparse::Triplet;

/// Accumulates a model entry by entry; [`build`](Self::build) validates it.
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    n: usize,
    m: Vec<Triplet<usize, usize, f64>>,
    k: Vec<Triplet<usize, usize, f64>>,
    c: Vec<Triplet<usize, usize, f64>>,
    damping: Damping,
    contacts: Option<Contacts>,
    forcing: Vec<ForcingTerm>,
    title: Option<String>,
    units: Option<String>,
    labels: Option<Vec<String>>,
    cyclic: Option<crate::cyclic::Cyclic>,
    out_of_range: Vec<Problem>,
}

impl ModelBuilder {
    /// A model with `n` DOFs and nothing in it yet.
    pub fn new(n: usize) -> Self {
        ModelBuilder {
            n,
            m: Vec::new(),
            k: Vec::new(),
            c: Vec::new(),
            damping: Damping::default(),
            contacts: None,
            forcing: Vec::new(),
            title: None,
            units: None,
            labels: None,
            cyclic: None,
            out_of_range: Vec::new(),
        }
    }

    /// Sets the title stored in the file.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the free-text unit statement stored in the file.
    pub fn units(mut self, units: impl Into<String>) -> Self {
        self.units = Some(units.into());
        self
    }

    /// Names the DOFs (one label per DOF).
    pub fn dof_labels<S: Into<String>>(mut self, labels: impl IntoIterator<Item = S>) -> Self {
        self.labels = Some(labels.into_iter().map(Into::into).collect());
        self
    }

    fn check(&mut self, what: &str, dofs: &[usize]) -> bool {
        if let Some(&d) = dofs.iter().find(|&&d| d >= self.n) {
            self.out_of_range.push(Problem::error(
                format!("/{what}"),
                format!("DOF {d} is out of range 0..{}", self.n),
            ));
            return false;
        }
        true
    }

    /// Adds a point mass `m` on DOF `i`.
    pub fn mass(mut self, i: usize, m: f64) -> Self {
        if self.check("M", &[i]) {
            self.m.push(Triplet::new(i, i, m));
        }
        self
    }

    /// Adds `v` to `M[i,j]` and, off the diagonal, to `M[j,i]` (consistent-mass coupling).
    pub fn mass_entry(mut self, i: usize, j: usize, v: f64) -> Self {
        if self.check("M", &[i, j]) {
            push_sym(&mut self.m, i, j, v);
        }
        self
    }

    /// Adds a spring of stiffness `k` between DOFs `i` and `j`.
    pub fn spring(mut self, i: usize, j: usize, k: f64) -> Self {
        if self.check("K", &[i, j]) {
            push_link(&mut self.k, i, j, k);
        }
        self
    }

    /// Adds a spring of stiffness `k` from DOF `i` to ground.
    pub fn spring_to_ground(mut self, i: usize, k: f64) -> Self {
        if self.check("K", &[i]) {
            self.k.push(Triplet::new(i, i, k));
        }
        self
    }

    /// Adds a general spring `k * (b . u)^2 / 2` on a combination `b` of DOFs (sparse pairs).
    ///
    /// Used for springs along directions that are not coordinate axes.
    pub fn spring_along(mut self, b: &[(usize, f64)], k: f64) -> Self {
        let dofs: Vec<usize> = b.iter().map(|p| p.0).collect();
        if self.check("K", &dofs) {
            for &(i, bi) in b {
                for &(j, bj) in b {
                    self.k.push(Triplet::new(i, j, k * bi * bj));
                }
            }
        }
        self
    }

    /// Adds a viscous damper `c` between DOFs `i` and `j`.
    pub fn damper(mut self, i: usize, j: usize, c: f64) -> Self {
        if self.check("C", &[i, j]) {
            push_link(&mut self.c, i, j, c);
        }
        self
    }

    /// Adds a viscous damper `c` from DOF `i` to ground.
    pub fn damper_to_ground(mut self, i: usize, c: f64) -> Self {
        if self.check("C", &[i]) {
            self.c.push(Triplet::new(i, i, c));
        }
        self
    }

    /// Sets Rayleigh damping `alpha M + beta K`.
    pub fn rayleigh(mut self, alpha: f64, beta: f64) -> Self {
        self.damping.rayleigh = Some((alpha, beta));
        self
    }

    /// Sets hysteretic (structural) damping `i eta K`.
    pub fn hysteretic(mut self, eta: f64) -> Self {
        self.damping.hysteretic_eta = Some(eta);
        self
    }

    /// Adds the harmonic load `cos * cos(h w t) + sin * sin(h w t)` on DOF `dof`.
    pub fn force(mut self, dof: usize, harmonic: usize, cos: f64, sin: f64) -> Self {
        self.forcing.push(ForcingTerm {
            dof,
            harmonic,
            cos,
            sin,
        });
        self
    }

    /// Sets the contacts (replacing any set before).
    pub fn contacts(mut self, contacts: Contacts) -> Self {
        self.contacts = Some(contacts);
        self
    }

    /// Makes the model one sector of a tuned disk (see [`crate::Cyclic`]).
    pub fn cyclic(mut self, cyclic: crate::cyclic::Cyclic) -> Self {
        self.cyclic = Some(cyclic);
        self
    }

    /// Assembles and validates the model; on failure returns every error found.
    pub fn build(self) -> Result<Model, Vec<Problem>> {
        if !self.out_of_range.is_empty() {
            return Err(self.out_of_range);
        }
        let n = self.n;
        let make = |t: &[Triplet<usize, usize, f64>]| {
            SparseMatrix::try_new_from_triplets(n, n, t).expect("indices were checked against n")
        };
        let model = Model {
            title: self.title,
            units: self.units,
            mass: make(&self.m),
            stiffness: make(&self.k),
            damping_matrix: (!self.c.is_empty()).then(|| make(&self.c)),
            damping: self.damping,
            contacts: self.contacts.unwrap_or_else(Contacts::none),
            forcing: self.forcing,
            dof_labels: self.labels,
            cyclic: self.cyclic,
        };
        let problems = validate(&model);
        if has_errors(&problems) {
            return Err(problems);
        }
        Ok(model)
    }
}

impl Contacts {
    /// Contacts whose directions are single DOFs against ground (`dofs[c * dim + k]`).
    pub fn to_ground(dim: usize, dofs: Vec<usize>, mu_n: Vec<f64>) -> Self {
        let rho = vec![1.0; mu_n.len()];
        Contacts {
            dim,
            mu_n,
            rho,
            rho_auto: false,
            kinematics: Kinematics::Dofs { dofs, other: None },
            k_t: None,
            normal: None,
        }
    }

    /// Node-to-node contacts: direction `k` of contact `c` reads `u[dofs] - u[other]`.
    pub fn between(
        dim: usize,
        dofs: Vec<usize>,
        other: Vec<Option<usize>>,
        mu_n: Vec<f64>,
    ) -> Self {
        let rho = vec![1.0; mu_n.len()];
        Contacts {
            dim,
            mu_n,
            rho,
            rho_auto: false,
            kinematics: Kinematics::Dofs {
                dofs,
                other: Some(other),
            },
            k_t: None,
            normal: None,
        }
    }

    /// Contacts given by a general kinematic map `W` (`dim * nc` x n).
    pub fn from_matrix(dim: usize, w: SparseMatrix, mu_n: Vec<f64>) -> Self {
        let rho = vec![1.0; mu_n.len()];
        Contacts {
            dim,
            mu_n,
            rho,
            rho_auto: false,
            kinematics: Kinematics::Matrix(w),
            k_t: None,
            normal: None,
        }
    }

    /// Sets the same scaling `rho` on every contact.
    pub fn with_rho(mut self, rho: f64) -> Self {
        self.rho = vec![rho; self.mu_n.len()];
        self
    }
}

fn push_sym(t: &mut Vec<Triplet<usize, usize, f64>>, i: usize, j: usize, v: f64) {
    t.push(Triplet::new(i, j, v));
    if i != j {
        t.push(Triplet::new(j, i, v));
    }
}

fn push_link(t: &mut Vec<Triplet<usize, usize, f64>>, i: usize, j: usize, k: f64) {
    t.push(Triplet::new(i, i, k));
    t.push(Triplet::new(j, j, k));
    t.push(Triplet::new(i, j, -k));
    t.push(Triplet::new(j, i, -k));
}
