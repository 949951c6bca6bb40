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
        if s.cyclic.is_some() {
            return Err(ReceptanceError::BadInput(
                "stability is not available on cyclic sectors yet".into(),
            ));
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
                })
            }
            Backend::CyclicModal(_) => Err(ReceptanceError::BadInput(
                "stability is not available on cyclic sectors yet".into(),
            )),
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
            }
        }
    }
}
