//! The linear structure seen from its contacts as a second-order system in time, for the
//! stability of periodic solutions (Hill's method needs the receptance off the imaginary axis,
//! at `s = lambda + i h w`, which the per-frequency backends do not give).
//!
//! `M q'' + C q' + K q = B^T x` and the contact motion `y = B q + R_h x`:
//! * dense and sparse backends: `q` are the model's DOFs, `B = W` (exact);
//! * modal backend: `q` are the retained modes (`M = I`, `K = diag(omega_r^2)`,
//!   `C = diag(c_r)`, `B = W Phi`) and `R_h` the residual flexibility of the omitted modes with
//!   the backend's damping factor `1 / (1 + i eta_h + i h w beta)`, frozen at the harmonic's
//!   frequency (the omitted modes respond quasi-statically);
//! * the contacts' series compliance is added to `R_h` in both.
//!
//! The hysteretic factor `K (1 + i eta)` acts at each harmonic `h > 0` as in the receptance.
//! At `lambda = 0` these give [`super::ReceptanceAt::contact_receptance`] to rounding, which
//! the tests check: the Hill matrix at `lambda = 0` is the Newton Jacobian.

use faer::{Mat, c64};

use super::{Backend, Receptance, ReceptanceError};

/// Largest number of states `q` a dense backend's model may have for stability: the Hill
/// eigenproblem is dense in `2 q` per harmonic coefficient.
pub const DYNAMICS_MAX_STATES: usize = 400;

/// `M q'' + C q' + K (1 + i eta) q = B^T x`, `y = B q + R_h x` (see the module docs).
#[derive(Clone, Debug)]
pub struct ContactDynamics {
    /// Mass `M` (`nq x nq`; may be singular: massless DOFs).
    pub mass: Mat<f64>,
    /// Viscous damping `C`.
    pub damping: Mat<f64>,
    /// Stiffness `K`.
    pub stiffness: Mat<f64>,
    /// Hysteretic loss factor on `K` at every harmonic `h > 0` (none in the static term).
    pub eta: f64,
    /// `B` (`m x nq`): the contact rows' motion per state.
    pub contacts: Mat<f64>,
    /// Residual flexibility of the omitted modes at the contacts (`m x m`; zero for the
    /// direct backends).
    pub residual: Mat<f64>,
    /// Stiffness-proportional damping `beta` in the residual's factor.
    pub residual_beta: f64,
    /// Series compliance per contact row.
    pub compliance: Vec<f64>,
    /// A cyclic sector: the structure differs per harmonic (the nodal diameter it lives on)
    /// and comes from [`Receptance::harmonic_dynamics`]; the matrices above are then empty.
    pub cyclic: bool,
}

/// The structure at one harmonic `h`: `(s^2 M + s C + K (1 + i eta)) q = B^H x` and
/// `y = B q + R x`. Complex: on a cyclic sector the phase-shifted kinematics make `M`, `C`, `K`
/// (Hermitian) and `B` complex on the nodal diameter the harmonic lives on
/// (docs/cyclic.md); real otherwise.
#[derive(Clone, Debug)]
pub struct HarmonicDynamics {
    /// Mass `M` (`nq x nq`).
    pub mass: Mat<c64>,
    /// Viscous damping `C`.
    pub damping: Mat<c64>,
    /// Stiffness `K`.
    pub stiffness: Mat<c64>,
    /// Loss factor on `K` at this harmonic.
    pub eta: f64,
    /// `B` (`m x nq`): the contact rows' motion per state.
    pub contacts: Mat<c64>,
    /// `R`: residual flexibility with its damping factor, plus the series compliance.
    pub flexibility: Mat<c64>,
}

impl HarmonicDynamics {
    /// The contact receptance `B (s^2 M + s C + K (1 + i eta))^{-1} B^H + R` at the Laplace
    /// variable `s`.
    pub fn contact_receptance(&self, s: c64) -> Mat<c64> {
        let nq = self.contacts.ncols();
        let kf = c64::new(1.0, self.eta);
        let z = Mat::from_fn(nq, nq, |i, j| {
            s * s * self.mass[(i, j)] + s * self.damping[(i, j)] + kf * self.stiffness[(i, j)]
        });
        let bh = self.contacts.adjoint().to_owned();
        let x = faer::linalg::solvers::Solve::solve(&z.partial_piv_lu(), &bh);
        &self.contacts * &x + &self.flexibility
    }
}

impl ContactDynamics {
    /// Number of states `q`.
    pub fn n_states(&self) -> usize {
        self.mass.nrows()
    }

    /// Number of contact rows `m`.
    pub fn n_rows(&self) -> usize {
        self.contacts.nrows()
    }

    /// Loss factor at harmonic `h`.
    pub fn eta_h(&self, h: usize) -> f64 {
        if h == 0 { 0.0 } else { self.eta }
    }

    /// `R_h`: the frequency-independent part of the contact receptance at harmonic `h` of
    /// `w` (residual flexibility with its damping factor, plus the series compliance).
    pub fn static_flexibility(&self, h: usize, w: f64) -> Mat<c64> {
        let m = self.n_rows();
        let f = c64::new(1.0, self.eta_h(h) + h as f64 * w * self.residual_beta).inv();
        let mut r = Mat::from_fn(m, m, |i, j| f * self.residual[(i, j)]);
        for (i, c) in self.compliance.iter().enumerate() {
            r[(i, i)] += c64::new(*c, 0.0);
        }
        r
    }

    /// The structure at harmonic `h` of `w` ([`HarmonicDynamics`]), for a structure that is
    /// not a cyclic sector.
    pub fn harmonic(&self, h: usize, w: f64) -> HarmonicDynamics {
        let complex =
            |a: &Mat<f64>| Mat::from_fn(a.nrows(), a.ncols(), |i, j| c64::new(a[(i, j)], 0.0));
        HarmonicDynamics {
            mass: complex(&self.mass),
            damping: complex(&self.damping),
            stiffness: complex(&self.stiffness),
            eta: self.eta_h(h),
            contacts: complex(&self.contacts),
            flexibility: self.static_flexibility(h, w),
        }
    }

    /// The contact receptance `B (s^2 M + s C + K (1 + i eta_h))^{-1} B^T + R_h` at the
    /// Laplace variable `s` (harmonic `h` of `w` sets `eta_h` and `R_h`).
    pub fn contact_receptance(&self, s: c64, h: usize, w: f64) -> Mat<c64> {
        let nq = self.n_states();
        let eta = self.eta_h(h);
        let z = Mat::from_fn(nq, nq, |i, j| {
            s * s * self.mass[(i, j)]
                + s * self.damping[(i, j)]
                + c64::new(1.0, eta) * self.stiffness[(i, j)]
        });
        let bt = Mat::from_fn(nq, self.n_rows(), |i, j| {
            c64::new(self.contacts[(j, i)], 0.0)
        });
        let x = faer::linalg::solvers::Solve::solve(&z.partial_piv_lu(), &bt);
        let b = Mat::from_fn(self.n_rows(), nq, |i, j| {
            c64::new(self.contacts[(i, j)], 0.0)
        });
        &b * &x + self.static_flexibility(h, w)
    }
}

impl Receptance {
    /// The structure at its contacts as a second-order system ([`ContactDynamics`]), for
    /// stability. Refused on cyclic sectors (their phase-shifted kinematics are not in it
    /// yet) and for direct backends above [`DYNAMICS_MAX_STATES`] DOFs (use the modal one).
    pub fn dynamics(&self) -> Result<ContactDynamics, ReceptanceError> {
        let s = &self.s;
        if let Some(cm) = &s.cyclic {
            if matches!(self.backend, Backend::Dense(_) | Backend::Sparse(_))
                && cm.nr > DYNAMICS_MAX_STATES
            {
                return Err(ReceptanceError::BadInput(format!(
                    "stability with a direct receptance takes at most {DYNAMICS_MAX_STATES} \
                     independent DOFs, the sector has {}: use --receptance modal:K",
                    cm.nr
                )));
            }
            return Ok(ContactDynamics {
                mass: Mat::zeros(0, 0),
                damping: Mat::zeros(0, 0),
                stiffness: Mat::zeros(0, 0),
                eta: s.eta,
                contacts: Mat::zeros(s.m, 0),
                residual: Mat::zeros(s.m, s.m),
                residual_beta: s.rayleigh_beta,
                compliance: s.compliance.clone(),
                cyclic: true,
            });
        }
        match &self.backend {
            Backend::Dense(_) | Backend::Sparse(_) => {
                if s.n > DYNAMICS_MAX_STATES {
                    return Err(ReceptanceError::BadInput(format!(
                        "stability with the {} receptance takes at most {DYNAMICS_MAX_STATES} \
                         DOFs, the model has {}: use --receptance modal:K",
                        if matches!(self.backend, Backend::Dense(_)) {
                            "dense"
                        } else {
                            "sparse"
                        },
                        s.n
                    )));
                }
                Ok(ContactDynamics {
                    mass: s.mass.to_dense(),
                    damping: s.c.to_dense(),
                    stiffness: s.k.to_dense(),
                    eta: s.eta,
                    contacts: s.w.to_dense(),
                    residual: Mat::zeros(s.m, s.m),
                    residual_beta: 0.0,
                    compliance: s.compliance.clone(),
                    cyclic: false,
                })
            }
            Backend::Modal(b) => {
                let md = &b.modes;
                let nq = md.omega.len();
                Ok(ContactDynamics {
                    mass: Mat::identity(nq, nq),
                    damping: Mat::from_fn(nq, nq, |i, j| if i == j { md.damping[i] } else { 0.0 }),
                    stiffness: Mat::from_fn(nq, nq, |i, j| {
                        if i == j {
                            md.omega[i] * md.omega[i]
                        } else {
                            0.0
                        }
                    }),
                    eta: s.eta,
                    contacts: md.w_phi.clone(),
                    residual: md.residual.clone(),
                    residual_beta: s.rayleigh_beta,
                    compliance: s.compliance.clone(),
                    cyclic: false,
                })
            }
            Backend::CyclicModal(_) => unreachable!("cyclic sectors are handled above"),
        }
    }

    /// The structure at harmonic `h` of `w` ([`HarmonicDynamics`]). On a cyclic sector, on
    /// the nodal diameter `h` lives on ([`Receptance::nodal_dynamics`]). Otherwise
    /// [`ContactDynamics::harmonic`].
    pub fn harmonic_dynamics(&self, h: usize, w: f64) -> Result<HarmonicDynamics, ReceptanceError> {
        match &self.s.cyclic {
            None => Ok(self.dynamics()?.harmonic(h, w)),
            Some(cm) => self.nodal_dynamics(cm.cyclic.nodal_diameter(h), h, w, false),
        }
    }

    /// A cyclic sector's structure on nodal diameter `nd` for a component at `+h w` of a
    /// perturbation, or at `-h w` (`negative`: the hysteretic factor and the residual
    /// flexibility's damping factor take the frequency's sign). `T^H M T` (and `C`, `K`) and
    /// `W T` for the direct backends, the diameter's modes for the modal one (extracted if
    /// the solve has not).
    pub fn nodal_dynamics(
        &self,
        nd: usize,
        h: usize,
        w: f64,
        negative: bool,
    ) -> Result<HarmonicDynamics, ReceptanceError> {
        let s = &self.s;
        let Some(cm) = &s.cyclic else {
            return Err(ReceptanceError::BadInput(
                "nodal diameters belong to cyclic sectors".into(),
            ));
        };
        let sign = if negative { -1.0 } else { 1.0 };
        let eta = sign * s.eta_h(h);
        let m = s.m;
        let mut flexibility = Mat::<c64>::zeros(m, m);
        for (i, c) in s.compliance.iter().enumerate() {
            flexibility[(i, i)] += c64::new(*c, 0.0);
        }
        match &self.backend {
            Backend::CyclicModal(b) => {
                let modes = b.nd(s, nd % cm.cyclic.sectors)?;
                let p = modes.lambda.len();
                let diag = |v: &dyn Fn(usize) -> f64| {
                    Mat::from_fn(p, p, |i, j| c64::new(if i == j { v(i) } else { 0.0 }, 0.0))
                };
                let res = c64::new(1.0, sign * (s.eta_h(h) + h as f64 * w * s.rayleigh_beta)).inv();
                for j in 0..m {
                    for i in 0..m {
                        flexibility[(i, j)] += res * modes.residual[(i, j)];
                    }
                }
                Ok(HarmonicDynamics {
                    mass: diag(&|_| 1.0),
                    damping: diag(&|i| modes.damping[i]),
                    stiffness: diag(&|i| modes.lambda[i]),
                    eta,
                    contacts: modes.wphi.clone(),
                    flexibility,
                })
            }
            _ => {
                self.dynamics()?;
                let a = std::f64::consts::TAU * (nd % cm.cyclic.sectors) as f64
                    / cm.cyclic.sectors as f64;
                let c = c64::new(a.cos(), a.sin());
                let nr = cm.nr;
                let reduce = |a: &ewr_model::SparseMatrix| {
                    let mut out = Mat::<c64>::zeros(nr, nr);
                    for t in a.triplet_iter() {
                        let (ri, fi) = cm.of(t.row, c);
                        let (rj, fj) = cm.of(t.col, c);
                        out[(ri, rj)] += fi.conj() * *t.val * fj;
                    }
                    out
                };
                Ok(HarmonicDynamics {
                    mass: reduce(&s.mass),
                    damping: reduce(&s.c),
                    stiffness: reduce(&s.k),
                    eta,
                    contacts: s.w_cyclic_phase(c).to_dense(),
                    flexibility,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReceptanceKind;

    fn max_diff(a: &Mat<c64>, b: faer::MatRef<'_, c64>) -> (f64, f64) {
        let mut d: f64 = 0.0;
        let mut n: f64 = 0.0;
        for j in 0..a.ncols() {
            for i in 0..a.nrows() {
                d = d.max((a[(i, j)] - b[(i, j)]).norm());
                n = n.max(b[(i, j)].norm());
            }
        }
        (d, n)
    }

    /// The lumped disk with a spring from the blade's `x` to the next sector's disk `y` (DOF 2 to
    /// DOF 5): a coupling that is not symmetric under reversing the wave, so that a nodal
    /// diameter `k` and `-k` (the conjugate phase) respond differently at the contacts.
    fn with_chiral_spring(mut model: ewr_model::Model) -> ewr_model::Model {
        use faer::sparse::{SparseColMat, Triplet};
        let n = model.n_dofs();
        let mut t: Vec<Triplet<usize, usize, f64>> = model
            .stiffness
            .triplet_iter()
            .map(|t| Triplet::new(t.row, t.col, *t.val))
            .collect();
        let k = 0.4;
        for (i, j, v) in [(2, 2, k), (5, 5, k), (2, 5, -k), (5, 2, -k)] {
            t.push(Triplet::new(i, j, v));
        }
        model.stiffness = SparseColMat::try_new_from_triplets(n, n, &t).unwrap();
        model
    }

    /// A cyclic sector's structure per harmonic gives its receptance on the imaginary axis:
    /// the direct backends' reduction by `T_h` and the modal backend's modes of the harmonic's
    /// nodal diameter, on harmonics that live on different diameters (EO 3 of 12: 0, 3, 9).
    #[test]
    fn cyclic_harmonic_dynamics_on_the_imaginary_axis_is_the_receptance() {
        let model = with_chiral_spring(ewr_model::examples::bladed_disk(
            &ewr_model::examples::BladedDisk {
                sectors: 12,
                engine_order: 3,
            },
        ));
        for kind in [
            ReceptanceKind::Dense,
            ReceptanceKind::Sparse,
            ReceptanceKind::Modal { modes: 4 },
        ] {
            let rec = Receptance::new(&model, kind).unwrap();
            assert!(rec.dynamics().unwrap().cyclic);
            let w = 0.7;
            let at = rec.prepare(w, &[0, 1, 3]).unwrap();
            for h in [0, 1, 3] {
                let hd = rec.harmonic_dynamics(h, w).unwrap();
                let g = hd.contact_receptance(c64::new(0.0, h as f64 * w));
                let (d, n) = max_diff(&g, at.contact_receptance(h).unwrap());
                assert!(d <= 1e-10 * n, "{kind:?} h = {h}: {d:e} of {n:e}");
            }
        }
    }

    #[test]
    fn dynamics_on_the_imaginary_axis_is_the_receptance() {
        for (model, kind) in [
            (
                ewr_model::examples::two_mass_damper(1.0),
                ReceptanceKind::Dense,
            ),
            (
                ewr_model::examples::two_mass_damper(1.0),
                ReceptanceKind::Sparse,
            ),
            (
                ewr_model::examples::two_mass_damper(1.0),
                ReceptanceKind::Modal { modes: 2 },
            ),
            (
                ewr_model::examples::blade_damper_blade(&Default::default()),
                ReceptanceKind::Modal { modes: 4 },
            ),
        ] {
            let rec = Receptance::new(&model, kind).unwrap();
            let dynm = rec.dynamics().unwrap();
            let w = 0.7;
            let at = rec.prepare(w, &[0, 1, 3]).unwrap();
            for h in [0, 1, 3] {
                let s = c64::new(0.0, h as f64 * w);
                let g = dynm.contact_receptance(s, h, w);
                let (d, n) = max_diff(&g, at.contact_receptance(h).unwrap());
                assert!(d <= 1e-10 * n, "{kind:?} h = {h}: {d:e} of {n:e}");
                let g = dynm.harmonic(h, w).contact_receptance(s);
                let (d, n) = max_diff(&g, at.contact_receptance(h).unwrap());
                assert!(
                    d <= 1e-10 * n,
                    "{kind:?} h = {h} per harmonic: {d:e} of {n:e}"
                );
            }
        }
    }
}
