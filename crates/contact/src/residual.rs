//! The E-WR weighted residual of all contacts at one frequency, its Jacobian and J x.
//!
//! Unknowns are the friction-force coefficients `R` of every contact and direction, in hb's
//! block layout: signal `s = c * dim + k` (contact `c`, direction `k`) holds the
//! coefficients `s * n_coeffs .. (s + 1) * n_coeffs` of the harmonic set (method.md sec. 5):
//!
//! ```text
//! g(R) = P[ Psi( S R, S (T R + v_f) ) ],     T: R -> velocity coefficients,
//! J    = P diag(dPsi/dr) S  +  P diag(dPsi/dv) S T
//! ```
//!
//! `T` is the condensed structure: per harmonic `h`, the complex amplitudes obey
//! `V_h = i h w (G_h R_h + Q_h)` with `G_h` the contact receptance and `Q_h` the forced
//! contact displacement (see `ewr_hb::receptance` for the amplitude convention
//! `x(t) = Re(X e^{i h w t})`, `X = a - i b`). The first factor of each Jacobian term is
//! block-diagonal over contacts, each block a Galerkin matrix computed from one FFT of the
//! sampled derivative, so `J` is never assembled sample by sample.

use crate::law::{self, Bound, FrictionLaw, LawInput, LawOutput};
use crate::stuck::{HeldSlip, stick_margin};
use ewr_hb::receptance::ReceptanceAt;
use ewr_hb::{FourierSampler, HarmonicSet};
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut, MatRef, c64};
use rayon::prelude::*;

pub use crate::error::ResidualError;
pub use crate::kinds::{ContactHistories, ContactParams, NormalHistories, NormalParams};

/// The E-WR system `g(R) = 0` of all contacts at one frequency.
///
/// Holds the scratch it needs, so evaluations do not allocate; the derivatives of the last
/// evaluation with a Jacobian are kept for [`jacobian_product`](Self::jacobian_product).
pub struct EwrResidual<'a> {
    rec: AtRef<'a>,
    set: HarmonicSet,
    sampler: FourierSampler,
    law: FrictionLaw,
    params: ContactParams,
    omega: f64,
    /// Velocity coefficients of the forced response (no friction).
    v_forced: Vec<f64>,
    /// Displacement coefficients of the forced response.
    w_forced: Vec<f64>,
    // Scratch, all sized once.
    r_samples: Vec<f64>,
    v_coeffs: Vec<f64>,
    v_samples: Vec<f64>,
    psi: Vec<f64>,
    d_r: Vec<f64>,
    d_v: Vec<f64>,
    cx: Mat<c64>,
    cy: Mat<c64>,
    /// The products by every `G_h` of the set at once (column `j` for the set's `j`-th
    /// harmonic) where the receptance is modal: they read its residual flexibility once
    /// instead of once per harmonic.
    product: Option<ewr_hb::ModalProduct>,
    galerkin: Mat<f64>,
    /// The hold of contacts stuck all period (`crate::stuck`): on sets with `h = 0`, where
    /// such a contact's mean friction force is free, with the exact or the projection law
    /// (the regularised ones never stick); `None` otherwise.
    held: Option<HeldSlip>,
    /// Per contact, the least stick margin `1 - |r - rho v| / (mu N)` over the period at the
    /// last evaluation (kept with `held` only).
    margins: Vec<f64>,
    /// Each contact's self-receptance (the `dim x dim` diagonal blocks of every `G_h`,
    /// `h > 0`, harmonic-major) for the block-Jacobi preconditioner: they depend on the
    /// frequency only, so they are formed once, at the first build, not at every Newton step
    /// (serial there, they were a tenth of a build on the 500-contact sector).
    self_receptance: std::sync::OnceLock<Vec<Vec<Mat<c64>>>>,
}

/// The prepared receptance, borrowed or owned: a system that outlives one evaluation (the
/// matrix-free arclength corrector) keeps its own.
enum AtRef<'a> {
    Borrowed(&'a ReceptanceAt<'a>),
    Owned(Box<ReceptanceAt<'a>>),
}

impl<'a> std::ops::Deref for AtRef<'a> {
    type Target = ReceptanceAt<'a>;
    fn deref(&self) -> &ReceptanceAt<'a> {
        match self {
            AtRef::Borrowed(r) => r,
            AtRef::Owned(r) => r,
        }
    }
}

/// Columns per task where an averaged harmonic Jacobian is formed.
const AVERAGED_COLUMNS: usize = 64;

impl<'a> EwrResidual<'a> {
    /// The system at the frequency `rec` was prepared for, on `set` with `n_samples` time
    /// samples (see `ewr_hb::default_samples`); `rec` must hold every harmonic of `set`.
    pub fn new(
        rec: &'a ReceptanceAt<'a>,
        set: HarmonicSet,
        n_samples: usize,
        law: FrictionLaw,
        params: ContactParams,
    ) -> Result<Self, ResidualError> {
        Self::build(AtRef::Borrowed(rec), set, n_samples, law, params)
    }

    /// As [`new`](Self::new), owning the prepared receptance.
    pub fn owning(
        rec: ReceptanceAt<'a>,
        set: HarmonicSet,
        n_samples: usize,
        law: FrictionLaw,
        params: ContactParams,
    ) -> Result<Self, ResidualError> {
        Self::build(AtRef::Owned(Box::new(rec)), set, n_samples, law, params)
    }

    fn build(
        rec: AtRef<'a>,
        set: HarmonicSet,
        n_samples: usize,
        law: FrictionLaw,
        params: ContactParams,
    ) -> Result<Self, ResidualError> {
        law.validate()?;
        let sampler = FourierSampler::new(set.clone(), n_samples)?;
        let m = params.dim * params.len();
        let nco = set.n_coeffs();
        let omega = rec.frequency();
        let mut v_forced = vec![0.0; m * nco];
        let mut w_forced = vec![0.0; m * nco];
        for &h in set.harmonics() {
            let q = rec.forced_contact_response(h)?;
            if q.len() != m {
                return Err(ResidualError::Size {
                    what: "contact rows of the receptance",
                    expected: m,
                    got: q.len(),
                });
            }
            let p = set.coeff_index(h).expect("h is in the set");
            let hw = h as f64 * omega;
            for (s, q) in q.iter().enumerate() {
                w_forced[s * nco + p] = q.re;
                if h > 0 {
                    w_forced[s * nco + p + 1] = -q.im;
                    // V = i h w Q: a = Re V = -hw Im Q, b = -Im V = -hw Re Q.
                    v_forced[s * nco + p] = -hw * q.im;
                    v_forced[s * nco + p + 1] = -hw * q.re;
                }
            }
        }
        let nt = n_samples;
        let d = params.dim;
        // The hold's rows scale as the law's: `mu N` times a force for the exact law, a force
        // for the projection (`r - proj(z)`, `rho v` in stick). The regularised laws never
        // stick.
        let scale = match law {
            FrictionLaw::Exact => Some(params.mu_n.clone()),
            FrictionLaw::Projection => Some(vec![1.0; params.len()]),
            _ => None,
        };
        let held = match (set.coeff_index(0), scale) {
            (Some(p0), Some(scale)) => {
                let g0 = rec.contact_receptance(0)?.to_owned();
                let q0 = rec.forced_contact_response(0)?;
                Some(HeldSlip::new(d, &scale, &g0, &q0, nco, p0))
            }
            _ => None,
        };
        let product = rec.modal_product(set.harmonics());
        Ok(EwrResidual {
            held,
            margins: vec![-1.0; params.len()],
            self_receptance: std::sync::OnceLock::new(),
            rec,
            sampler,
            law,
            omega,
            v_forced,
            w_forced,
            r_samples: vec![0.0; m * nt],
            v_coeffs: vec![0.0; m * nco],
            v_samples: vec![0.0; m * nt],
            psi: vec![0.0; m * nt],
            d_r: vec![0.0; m * d * nt],
            d_v: vec![0.0; m * d * nt],
            cx: Mat::zeros(m, 1),
            cy: Mat::zeros(m, 1),
            product,
            galerkin: Mat::zeros(nco, nco),
            set,
            params,
        })
    }

    /// Number of unknowns (and equations): `dim * nc * n_coeffs`.
    pub fn len(&self) -> usize {
        self.params.dim * self.params.len() * self.set.n_coeffs()
    }

    /// True when there are no unknowns (no contacts).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of contacts.
    pub fn contact_count(&self) -> usize {
        self.params.len()
    }

    /// The harmonic set of the unknowns.
    pub fn harmonic_set(&self) -> &HarmonicSet {
        &self.set
    }

    /// Samples per period used for the Galerkin integrals.
    pub fn n_samples(&self) -> usize {
        self.sampler.n_samples()
    }

    /// The fundamental frequency `w`.
    pub fn frequency(&self) -> f64 {
        self.omega
    }

    fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), ResidualError> {
        if expected != got {
            return Err(ResidualError::Size {
                what,
                expected,
                got,
            });
        }
        Ok(())
    }

    /// Applies the condensed structure: `out = T x + add` (velocity coefficients of the
    /// contacts for friction coefficients `x`, plus `add`), or the displacement
    /// coefficients with `velocity = false`.
    fn structure(
        &mut self,
        x: &[f64],
        add: Option<&[f64]>,
        velocity: bool,
        out: &mut [f64],
    ) -> Result<(), ResidualError> {
        self.structure_with(x, add, velocity, false, out)
    }

    /// [`structure`](Self::structure) with `G_h^T` in place of `G_h` when `transpose` (they
    /// differ only on a cyclic sector).
    fn structure_with(
        &mut self,
        x: &[f64],
        add: Option<&[f64]>,
        velocity: bool,
        transpose: bool,
        out: &mut [f64],
    ) -> Result<(), ResidualError> {
        let nco = self.set.n_coeffs();
        let m = self.params.dim * self.params.len();
        match add {
            Some(a) => out.copy_from_slice(a),
            None => out.fill(0.0),
        }
        let coeffs = |h: usize, s: usize| {
            let p = self.set.coeff_index(h).expect("h is in the set");
            let b = if h > 0 { x[s * nco + p + 1] } else { 0.0 };
            c64::new(x[s * nco + p], -b)
        };
        // The modal product's `G_h` are symmetric (never a cyclic sector's): `transpose` is
        // the same product.
        let all = self.product.as_ref().map(|product| {
            let hs = self.set.harmonics();
            let xc = Mat::from_fn(m, hs.len(), |s, j| coeffs(hs[j], s));
            let mut y = Mat::zeros(m, hs.len());
            product.apply(xc.as_ref(), y.as_mut());
            y
        });
        for (j, &h) in self.set.harmonics().iter().enumerate() {
            if velocity && h == 0 {
                continue;
            }
            let p = self.set.coeff_index(h).expect("h is in the set");
            if let Some(all) = &all {
                self.cy.col_mut(0).copy_from(all.col(j));
            } else {
                for s in 0..m {
                    self.cx[(s, 0)] = coeffs(h, s);
                }
                if transpose {
                    self.rec
                        .apply_transpose(h, self.cx.as_ref(), self.cy.as_mut())
                } else {
                    self.rec.apply(h, self.cx.as_ref(), self.cy.as_mut())
                }
                .map_err(ResidualError::Receptance)?;
            }
            let hw = h as f64 * self.omega;
            for s in 0..m {
                let y = self.cy[(s, 0)];
                if velocity {
                    out[s * nco + p] += -hw * y.im;
                    out[s * nco + p + 1] += -hw * y.re;
                } else {
                    out[s * nco + p] += y.re;
                    if h > 0 {
                        out[s * nco + p + 1] += -y.im;
                    }
                }
            }
        }
        Ok(())
    }

    /// Synthesises `r = S R` and `v = S (T R + v_f)` into the scratch buffers.
    fn sample(&mut self, r: &[f64]) -> Result<(), ResidualError> {
        Self::check_len("friction coefficients R", self.len(), r.len())?;
        let mut v = std::mem::take(&mut self.v_coeffs);
        let vf = std::mem::take(&mut self.v_forced);
        let res = self.structure(r, Some(&vf), true, &mut v);
        self.v_forced = vf;
        self.v_coeffs = v;
        res?;
        self.sampler.synthesize_many(r, &mut self.r_samples)?;
        self.sampler
            .synthesize_many(&self.v_coeffs, &mut self.v_samples)?;
        if self.held.is_some() {
            for c in 0..self.params.len() {
                self.margins[c] = self.least_margin(c, &[], 0.0);
            }
        }
        Ok(())
    }

    /// Contact `c`'s least stick margin over the period at the last sampling, with its
    /// friction force moved by `theta * shift` (one per direction; none when empty).
    fn least_margin(&self, c: usize, shift: &[f64], theta: f64) -> f64 {
        let (d, nt) = (self.params.dim, self.sampler.n_samples());
        let (b, rho) = (self.params.mu_n[c], self.params.rho[c]);
        let mut m = f64::INFINITY;
        for s in 0..nt {
            let z = (0..d)
                .map(|k| {
                    let i = (c * d + k) * nt + s;
                    let zk = self.r_samples[i] - rho * self.v_samples[i]
                        + shift.get(k).map_or(0.0, |f| theta * f);
                    zk * zk
                })
                .sum::<f64>()
                .sqrt();
            m = m.min(stick_margin(z, b));
        }
        m
    }

    fn law_input(&self) -> LawInput<'_> {
        LawInput {
            dim: self.params.dim,
            n_samples: self.sampler.n_samples(),
            r: &self.r_samples,
            v: &self.v_samples,
            mu_n: Bound::PerContact(&self.params.mu_n),
            rho: &self.params.rho,
        }
    }

    /// Evaluates `g(R)` into `g`.
    pub fn residual(&mut self, r: &[f64], g: &mut [f64]) -> Result<(), ResidualError> {
        Self::check_len("residual g", self.len(), g.len())?;
        self.sample(r)?;
        let mut psi = std::mem::take(&mut self.psi);
        let res = law::evaluate_residual(self.law, &self.law_input(), &mut psi);
        self.psi = psi;
        res?;
        self.sampler.project_many(&self.psi, g)?;
        if let Some(h) = &self.held {
            h.add_residual(r, g);
        }
        Ok(())
    }

    /// Evaluates `g(R)` and the dense Jacobian `dg/dR` (`len x len`), and keeps the law's
    /// derivatives for [`jacobian_product`](Self::jacobian_product).
    pub fn residual_and_jacobian(
        &mut self,
        r: &[f64],
        g: &mut [f64],
        mut jac: MatMut<'_, f64>,
    ) -> Result<(), ResidualError> {
        let n = self.len();
        Self::check_len("residual g", n, g.len())?;
        Self::check_len("Jacobian rows", n, jac.nrows())?;
        Self::check_len("Jacobian columns", n, jac.ncols())?;
        self.evaluate_with_derivatives(r)?;
        self.sampler.project_many(&self.psi, g)?;
        jac.fill(0.0);
        let d = self.params.dim;
        let m = d * self.params.len();
        let nco = self.set.n_coeffs();
        let nt = self.sampler.n_samples();
        // Real 2 x 2 blocks of T per harmonic, looked up from G_h on the fly.
        let hs: Vec<(usize, usize)> = self
            .set
            .harmonics()
            .iter()
            .filter(|&&h| h > 0)
            .map(|&h| (h, self.set.coeff_index(h).expect("h is in the set")))
            .collect();
        let ghs: Vec<MatRef<'_, c64>> = hs
            .iter()
            .map(|&(h, _)| self.rec.contact_receptance(h))
            .collect::<Result<_, _>>()?;
        // dPsi/dr: one Galerkin block per (contact, direction pair) on the diagonal of the
        // contact, written straight into J. Every such block of J receives exactly one, and
        // the velocity terms below are added after it in the same order as they always
        // were, so J is bit for bit what accumulating them block by block gave.
        for c in 0..self.params.len() {
            for mi in 0..d {
                let row0 = (c * d + mi) * nco;
                for ni in 0..d {
                    let idx = ((c * d + mi) * d + ni) * nt;
                    let col0 = (c * d + ni) * nco;
                    self.sampler.galerkin_matrix(
                        &self.d_r[idx..idx + nt],
                        jac.rb_mut().submatrix_mut(row0, col0, nco, nco),
                    )?;
                }
            }
        }
        for c in 0..self.params.len() {
            for mi in 0..d {
                let row0 = (c * d + mi) * nco;
                for ni in 0..d {
                    let idx = ((c * d + mi) * d + ni) * nt;
                    // dPsi/dv: Galerkin block times T, restricted to velocity signal c*d+ni.
                    self.sampler
                        .galerkin_matrix(&self.d_v[idx..idx + nt], self.galerkin.as_mut())?;
                    let s = c * d + ni;
                    for (&(h, p), gh) in hs.iter().zip(&ghs) {
                        let hw = h as f64 * self.omega;
                        for jsig in 0..m {
                            add_velocity_block(
                                self.galerkin.as_ref(),
                                p,
                                hw * gh[(s, jsig)],
                                jac.rb_mut(),
                                (row0, jsig * nco + p),
                            );
                        }
                    }
                }
            }
        }
        if let Some(h) = &self.held {
            h.add_residual(r, g);
            h.add_jacobian(jac.rb_mut());
        }
        Ok(())
    }

    fn evaluate_with_derivatives(&mut self, r: &[f64]) -> Result<(), ResidualError> {
        self.sample(r)?;
        let (mut psi, mut d_r, mut d_v) = (
            std::mem::take(&mut self.psi),
            std::mem::take(&mut self.d_r),
            std::mem::take(&mut self.d_v),
        );
        let res = law::evaluate(
            self.law,
            &self.law_input(),
            &mut LawOutput {
                psi: &mut psi,
                d_r: &mut d_r,
                d_v: &mut d_v,
            },
        );
        (self.psi, self.d_r, self.d_v) = (psi, d_r, d_v);
        res?;
        Ok(())
    }

    /// Evaluates `g(R)` and keeps the law's derivatives, without forming the Jacobian: the
    /// matrix-free path, followed by [`jacobian_product`](Self::jacobian_product) calls.
    pub fn residual_keep_derivatives(
        &mut self,
        r: &[f64],
        g: &mut [f64],
    ) -> Result<(), ResidualError> {
        Self::check_len("residual g", self.len(), g.len())?;
        self.evaluate_with_derivatives(r)?;
        self.sampler.project_many(&self.psi, g)?;
        if let Some(h) = &self.held {
            h.add_residual(r, g);
        }
        Ok(())
    }

    /// `y = J x` at the point of the last evaluation with derivatives, without forming `J`:
    /// FFTs and one receptance product per harmonic.
    pub fn jacobian_product(&mut self, x: &[f64], y: &mut [f64]) -> Result<(), ResidualError> {
        self.jacobian_product_then(x, y, &|_, _| {})
    }

    /// [`jacobian_product`](Self::jacobian_product), then `finish(c, part)` on contact `c`'s
    /// part of `y` (its `dim * n_coeffs` unknowns, contiguous): after the receptance product,
    /// each parallel task synthesises its contacts' signals, applies the law's derivatives,
    /// projects and finishes them, one pass over the threads for what took four (the
    /// `_many` transforms and the law between them; with 16 threads each pass is short
    /// beside the threads' wake-up: docs/performance.md, "Sixteen cores measured").
    /// Each contact's arithmetic is that of the separate passes, so the result is the same
    /// to the last bit.
    pub fn jacobian_product_then(
        &mut self,
        x: &[f64],
        y: &mut [f64],
        finish: &(dyn Fn(usize, &mut [f64]) + Sync),
    ) -> Result<(), ResidualError> {
        let n = self.len();
        Self::check_len("x in J x", n, x.len())?;
        Self::check_len("y in J x", n, y.len())?;
        let product = ewr_hb::profile::span(ewr_hb::profile::Phase::StructureProduct);
        let mut tv = std::mem::take(&mut self.v_coeffs);
        let res = self.structure(x, None, true, &mut tv);
        self.v_coeffs = tv;
        res?;
        // The hold's terms, added to each contact's part before it is finished.
        let held = self.held.as_ref().and_then(|h| h.product_terms(x));
        drop(product);
        let _pass = ewr_hb::profile::span(ewr_hb::profile::Phase::ContactPass);
        let p0 = self.set.coeff_index(0);
        let d = self.params.dim;
        let nt = self.sampler.n_samples();
        let nco = self.set.n_coeffs();
        let per = d * nco;
        // Contacts per task as the `_many` transforms split signals: the same tasks.
        let group = ewr_hb::fourier::parallel_task(self.params.len(), d * nt);
        let (d_r, d_v) = (&self.d_r, &self.d_v);
        let (sampler, vc) = (&self.sampler, &self.v_coeffs);
        y.par_chunks_mut(per * group)
            .enumerate()
            .try_for_each(|(task, outs)| {
                let mut scratch = sampler.scratch();
                let (mut rs, mut vs, mut out) =
                    (vec![0.0; d * nt], vec![0.0; d * nt], vec![0.0; d * nt]);
                for (k, part) in outs.chunks_exact_mut(per).enumerate() {
                    let c = task * group + k;
                    for mi in 0..d {
                        let sig = c * d + mi;
                        let samples = mi * nt..(mi + 1) * nt;
                        let coeffs = sig * nco..(sig + 1) * nco;
                        sampler.synthesize_with(
                            &mut scratch,
                            &x[coeffs.clone()],
                            &mut rs[samples.clone()],
                        )?;
                        sampler.synthesize_with(&mut scratch, &vc[coeffs], &mut vs[samples])?;
                    }
                    for mi in 0..d {
                        for j in 0..nt {
                            let mut acc = 0.0;
                            for ni in 0..d {
                                let idx = ((c * d + mi) * d + ni) * nt + j;
                                acc += d_r[idx] * rs[ni * nt + j] + d_v[idx] * vs[ni * nt + j];
                            }
                            out[mi * nt + j] = acc;
                        }
                    }
                    for mi in 0..d {
                        sampler.project_with(
                            &mut scratch,
                            &out[mi * nt..(mi + 1) * nt],
                            &mut part[mi * nco..(mi + 1) * nco],
                        )?;
                    }
                    if let (Some(terms), Some(p0)) = (&held, p0) {
                        for mi in 0..d {
                            if let Some(t) = terms[c * d + mi] {
                                part[mi * nco + p0] += t;
                            }
                        }
                    }
                    finish(c, part);
                }
                Ok::<_, ResidualError>(())
            })
    }

    /// Weights of the Galerkin projection per coefficient: `P = diag(w) S^T` with
    /// `w = 1 / N_t` for the mean and `2 / N_t` for every cosine and sine coefficient.
    fn projection_weights(&self) -> Vec<f64> {
        let nt = self.sampler.n_samples() as f64;
        let mut w = vec![2.0 / nt; self.set.n_coeffs()];
        if let Some(p) = self.set.coeff_index(0) {
            w[p] = 1.0 / nt;
        }
        w
    }

    /// `y = J^T x` at the point of the last evaluation with derivatives, without forming `J`.
    ///
    /// With `P = diag(w) S^T` (projection weights `w`), the transpose of
    /// `J = P D_r S + P D_v S T` is
    /// `J^T = diag(1/w) P D_r^T S diag(w) + T^T diag(1/w) P D_v^T S diag(w)`, where
    /// `T^T = C T' C`, `C` flips the sign of every sine coefficient and `T'` is `T` with
    /// `G_h^T` for `G_h` (the same on all but cyclic sectors): the same FFTs and
    /// receptance products as [`jacobian_product`](Self::jacobian_product). Needed for the
    /// steepest-descent (Cauchy) part of a matrix-free trust-region step.
    pub fn jacobian_transpose_product(
        &mut self,
        x: &[f64],
        y: &mut [f64],
    ) -> Result<(), ResidualError> {
        let n = self.len();
        Self::check_len("x in J^T x", n, x.len())?;
        Self::check_len("y in J^T x", n, y.len())?;
        let d = self.params.dim;
        let nt = self.sampler.n_samples();
        let nco = self.set.n_coeffs();
        let w = self.projection_weights();
        // u = P^T x = S diag(w) x, in r_samples.
        let xw: Vec<f64> = x.iter().enumerate().map(|(i, v)| v * w[i % nco]).collect();
        self.sampler.synthesize_many(&xw, &mut self.r_samples)?;
        // D_r^T u into psi, D_v^T u into v_samples.
        for c in 0..self.params.len() {
            for ni in 0..d {
                let out = (c * d + ni) * nt;
                for j in 0..nt {
                    let (mut ar, mut av) = (0.0, 0.0);
                    for mi in 0..d {
                        let idx = ((c * d + mi) * d + ni) * nt + j;
                        let u = self.r_samples[(c * d + mi) * nt + j];
                        ar += self.d_r[idx] * u;
                        av += self.d_v[idx] * u;
                    }
                    self.psi[out + j] = ar;
                    self.v_samples[out + j] = av;
                }
            }
        }
        self.sampler.project_many(&self.psi, y)?;
        let mut t = vec![0.0; n];
        self.sampler.project_many(&self.v_samples, &mut t)?;
        // diag(1/w), then C before and after T.
        let sine = self.sine_mask();
        for (i, v) in t.iter_mut().enumerate() {
            *v /= w[i % nco];
            if sine[i % nco] {
                *v = -*v;
            }
        }
        let mut tv = std::mem::take(&mut self.v_coeffs);
        let res = self.structure_with(&t, None, true, true, &mut tv);
        self.v_coeffs = tv;
        res?;
        for (i, v) in y.iter_mut().enumerate() {
            let k = i % nco;
            let tt = if sine[k] {
                -self.v_coeffs[i]
            } else {
                self.v_coeffs[i]
            };
            *v = *v / w[k] + tt;
        }
        if let Some(h) = &self.held {
            h.add_transpose_product(x, y);
        }
        Ok(())
    }

    /// True for the sine coefficients `b_h` of the coefficient layout.
    fn sine_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.set.n_coeffs()];
        for &h in self.set.harmonics() {
            if h > 0 {
                mask[self.set.coeff_index(h).expect("h is in the set") + 1] = true;
            }
        }
        mask
    }

    /// The diagonal blocks of `J` at the last evaluation with derivatives, one per contact
    /// (`dim * n_coeffs` square, row-major over the contact's signals like `J`): the
    /// contact's own Galerkin blocks with its self-receptance (the `dim x dim` diagonal block
    /// of every `G_h`, which the modal backend gives without forming `G_h`). This is the
    /// block-Jacobi part of the matrix-free Newton-Krylov preconditioners.
    ///
    /// Contacts are processed in parallel (rayon), each with its own FFT plan; every block
    /// is computed independently, so the result does not depend on the thread count.
    pub fn contact_jacobian_blocks(&self) -> Result<Vec<Mat<f64>>, ResidualError> {
        use rayon::prelude::*;
        let d = self.params.dim;
        let nc = self.params.len();
        let nco = self.set.n_coeffs();
        let nt = self.sampler.n_samples();
        // Real 2 x 2 blocks of T for each harmonic h > 0 and each contact: (p, hw, G_cc).
        let hs: Vec<(usize, usize)> = self
            .set
            .harmonics()
            .iter()
            .filter(|&&h| h > 0)
            .map(|&h| (h, self.set.coeff_index(h).expect("h is in the set")))
            .collect();
        let g_blocks = match self.self_receptance.get() {
            Some(g) => g,
            None => {
                let mut g_blocks: Vec<Vec<Mat<c64>>> = Vec::with_capacity(hs.len());
                for &(h, _) in &hs {
                    g_blocks.push(
                        (0..nc)
                            .into_par_iter()
                            .map(|c| self.rec.diagonal_block(h, c * d, d))
                            .collect::<Result<_, _>>()?,
                    );
                }
                self.self_receptance.get_or_init(|| g_blocks)
            }
        };
        let set = self.set.clone();
        (0..nc)
            .into_par_iter()
            .map_init(
                || {
                    (
                        FourierSampler::new(set.clone(), nt).expect("same as the residual's"),
                        Mat::<f64>::zeros(nco, nco),
                    )
                },
                |(sampler, gal), c| {
                    let mut b = Mat::<f64>::zeros(d * nco, d * nco);
                    for mi in 0..d {
                        for ni in 0..d {
                            let idx = ((c * d + mi) * d + ni) * nt;
                            sampler.galerkin_matrix(&self.d_r[idx..idx + nt], gal.as_mut())?;
                            for i in 0..nco {
                                for j in 0..nco {
                                    b[(mi * nco + i, ni * nco + j)] += gal[(i, j)];
                                }
                            }
                            sampler.galerkin_matrix(&self.d_v[idx..idx + nt], gal.as_mut())?;
                            for (k, &(h, p)) in hs.iter().enumerate() {
                                let hw = h as f64 * self.omega;
                                for nj in 0..d {
                                    add_velocity_block(
                                        gal.as_ref(),
                                        p,
                                        hw * g_blocks[k][c][(ni, nj)],
                                        b.as_mut(),
                                        (mi * nco, nj * nco + p),
                                    );
                                }
                            }
                        }
                    }
                    if let Some(held) = &self.held {
                        let block = d * nco;
                        let idx: Vec<usize> = (c * block..(c + 1) * block).collect();
                        held.add_to_block(c, &idx, b.as_mut());
                    }
                    Ok::<_, ResidualError>(b)
                },
            )
            .collect()
    }

    /// The Jacobian with every law derivative replaced by its mean over the period, one
    /// complex `m x m` matrix per harmonic of the set (`m = dim * nc`), in the order of
    /// [`HarmonicSet::harmonics`]:
    /// `K_h = mean(dPsi/dr) + i h w mean(dPsi/dv) G_h` acting on `Z = a_h - i b_h`.
    ///
    /// With time-constant coefficients the Galerkin blocks are the identity, so this
    /// approximation of `J` decouples harmonic by harmonic while keeping every contact's
    /// coupling through the structure: the global part of the matrix-free preconditioner
    /// (block-Jacobi over contacts misses exactly that coupling). It is exact when every
    /// contact sticks over the whole period.
    pub fn averaged_harmonic_jacobians(&self) -> Result<Vec<Mat<c64>>, ResidualError> {
        let d = self.params.dim;
        let nc = self.params.len();
        let m = d * nc;
        let nt = self.sampler.n_samples();
        let mean = |v: &[f64], idx: usize| v[idx..idx + nt].iter().sum::<f64>() / nt as f64;
        // mean dPsi/dr and dPsi/dv, m x d each (row s = c * d + mi, column ni).
        let mut ar = vec![0.0; m * d];
        let mut av = vec![0.0; m * d];
        for s in 0..m {
            for ni in 0..d {
                let idx = (s * d + ni) * nt;
                ar[s * d + ni] = mean(&self.d_r, idx);
                av[s * d + ni] = mean(&self.d_v, idx);
            }
        }
        // The harmonics in parallel, each column of `G_h` read as a slice (faer's checked
        // indexing cost several times the arithmetic).
        self.set
            .harmonics()
            .par_iter()
            .map(|&h| {
                let mut k = Mat::<c64>::zeros(m, m);
                if h > 0 {
                    let gh = self.rec.contact_receptance(h)?;
                    let hw = h as f64 * self.omega;
                    // Columns on every thread too: a set of few harmonics leaves most idle.
                    k.par_col_chunks_mut(AVERAGED_COLUMNS).enumerate().for_each(
                        |(c, mut chunk)| {
                            let mut gcol = vec![c64::new(0.0, 0.0); m];
                            for jj in 0..chunk.ncols() {
                                let j = c * AVERAGED_COLUMNS + jj;
                                let gj = crate::columns::column(gh.as_ref(), j, &mut gcol);
                                let kj = crate::columns::column_mut(chunk.rb_mut(), jj);
                                for (s, kj) in kj.iter_mut().enumerate() {
                                    let c0 = (s / d) * d;
                                    let mut acc = c64::new(0.0, 0.0);
                                    for ni in 0..d {
                                        acc += gj[c0 + ni] * av[s * d + ni];
                                    }
                                    *kj = c64::new(-hw * acc.im, hw * acc.re);
                                }
                            }
                        },
                    );
                }
                for s in 0..m {
                    let c0 = (s / d) * d;
                    for ni in 0..d {
                        k[(s, c0 + ni)] += c64::new(ar[s * d + ni], 0.0);
                    }
                }
                if let (0, Some(held)) = (h, &self.held) {
                    held.add_to_static_harmonic(&mut k);
                }
                Ok(k)
            })
            .collect()
    }

    /// Time histories of displacement, velocity and friction force at every contact for the
    /// friction coefficients `r`.
    pub fn histories(&mut self, r: &[f64]) -> Result<ContactHistories, ResidualError> {
        self.sample(r)?;
        let n = self.len();
        let mut w = vec![0.0; n];
        let wf = self.w_forced.clone();
        self.structure(r, Some(&wf), false, &mut w)?;
        let mut displacement = vec![0.0; self.r_samples.len()];
        self.sampler.synthesize_many(&w, &mut displacement)?;
        Ok(ContactHistories {
            n_samples: self.sampler.n_samples(),
            displacement,
            velocity: self.v_samples.clone(),
            force: self.r_samples.clone(),
            normal: None,
        })
    }

    /// Coefficients of the contacts' relative displacement (`W u`) for friction `r`.
    pub fn displacement_coeffs(&mut self, r: &[f64]) -> Result<Vec<f64>, ResidualError> {
        Self::check_len("friction coefficients R", self.len(), r.len())?;
        let mut w = vec![0.0; self.len()];
        let wf = self.w_forced.clone();
        self.structure(r, Some(&wf), false, &mut w)?;
        Ok(w)
    }
}

impl EwrResidual<'_> {
    /// Mean slip position (the contact's displacement at `h = 0`, the slider's for a Jenkins
    /// contact) of each friction row for the force coefficients `r`: where a contact stuck
    /// all period stays (`crate::stuck`). Empty without the hold (no `h = 0`, or a
    /// regularised law).
    pub fn mean_slip(&self, r: &[f64]) -> Result<Vec<f64>, ResidualError> {
        Self::check_len("friction coefficients R", self.len(), r.len())?;
        Ok(self.held.as_ref().map_or_else(Vec::new, |h| h.positions(r)))
    }

    /// Holds the contacts flagged in `held` at these mean slip positions (one per friction
    /// row, from [`mean_slip`](Self::mean_slip)); the law alone decides the others. None is
    /// held until called (a solve from zero force has no loading history).
    pub fn hold_mean_slip(
        &mut self,
        positions: &[f64],
        held: &[bool],
    ) -> Result<(), ResidualError> {
        Self::check_len(
            "held slip positions",
            self.len() / self.set.n_coeffs(),
            positions.len(),
        )?;
        Self::check_len("held contacts", self.params.len(), held.len())?;
        if let Some(h) = &mut self.held {
            h.hold(positions, held);
        }
        Ok(())
    }

    /// Per contact, the least stick margin `1 - |r - rho v| / (mu N)` over the period at the
    /// last evaluation: positive where it sticks all period. Empty without the hold.
    pub fn stick_margins(&self) -> Vec<f64> {
        if self.held.is_some() {
            self.margins.clone()
        } else {
            Vec::new()
        }
    }

    /// The mean slip position of contact `c` nearest `target` on the segment from `current`
    /// (one per direction) at which it still sticks all period, predicted from the last
    /// evaluation: its mean friction force moved by its own static stiffness, its dynamic
    /// forces and motion as they are (as [`crate::UnilateralResidual::stuck_toward`]).
    pub fn stuck_toward(&self, c: usize, current: &[f64], target: &[f64]) -> Vec<f64> {
        let d = self.params.dim;
        let dp: Vec<f64> = target.iter().zip(current).map(|(t, c)| t - c).collect();
        let shift = match &self.held {
            Some(h) if c < self.params.len() && dp.len() == d => h.force_shift(c, &dp),
            _ => None,
        };
        let Some(shift) = shift else {
            return current.to_vec();
        };
        crate::stuck::stuck_toward(current, target, |theta| self.least_margin(c, &shift, theta))
    }

    /// Where contact `c`, which slips somewhere in the period at the last evaluation, would
    /// stick again: its mean slip position `current` moved as a stepped sine's slip would move
    /// it (as [`crate::UnilateralResidual::shaken_down`]). `None` without the hold, or where no
    /// mean force keeps it stuck all period. Its mean friction force in `x` is moved with it.
    pub fn shaken_down(&self, c: usize, current: &[f64], x: &mut [f64]) -> Option<Vec<f64>> {
        let held = self.held.as_ref()?;
        let (d, nt) = (self.params.dim, self.sampler.n_samples());
        if c >= self.params.len() || current.len() != d {
            return None;
        }
        let rho = self.params.rho[c];
        let mut z = Vec::with_capacity(d * nt);
        for s in 0..nt {
            z.extend((0..d).map(|k| {
                let i = (c * d + k) * nt + s;
                self.r_samples[i] - rho * self.v_samples[i]
            }));
        }
        let df = crate::stuck::shakedown(d, &z, &vec![self.params.mu_n[c]; nt])?;
        Some(held.shaken(c, &df, current, x))
    }

    /// The law linearised at `r` (see [`crate::Linearization`]): every law variable is a
    /// velocity.
    pub fn linearization(&mut self, r: &[f64]) -> Result<crate::Linearization, ResidualError> {
        use crate::system::{all_zero, constant};
        let n = self.len();
        Self::check_len("contact force coefficients", n, r.len())?;
        self.evaluate_with_derivatives(r)?;
        let d = self.params.dim;
        let m = d * self.params.len();
        let nco = self.set.n_coeffs();
        let nt = self.sampler.n_samples();
        let mut d_force = crate::SignalBlocks::new(m, nco);
        let mut d_motion = crate::SignalBlocks::new(m, nco);
        let mut stuck_rows = vec![true; m];
        for c in 0..self.params.len() {
            for mi in 0..d {
                let row = c * d + mi;
                for ni in 0..d {
                    let idx = ((c * d + mi) * d + ni) * nt;
                    let col = c * d + ni;
                    let (dr, dv) = (&self.d_r[idx..idx + nt], &self.d_v[idx..idx + nt]);
                    stuck_rows[row] &= all_zero(dr) && constant(dv);
                    d_force.push_galerkin(&mut self.sampler, row, col, dr)?;
                    d_motion.push_galerkin(&mut self.sampler, row, col, dv)?;
                }
            }
        }
        Ok(crate::Linearization {
            d_force,
            d_motion,
            velocity: vec![true; m],
            stuck_rows,
        })
    }
}

/// Adds the Galerkin columns `p, p + 1` (harmonic `h`'s cosine and sine) of `gal` times the
/// real `2 x 2` velocity block of `T` for the receptance entry `hwg = h w G_h[s, j]`:
/// `(a_j, b_j) -> (a_v, b_v) = [[-Im, Re], [-Re, -Im]] (a, b)`, into `dst` at rows
/// `row0 ..` and columns `col, col + 1`.
fn add_velocity_block(
    gal: MatRef<'_, f64>,
    p: usize,
    hwg: c64,
    mut dst: MatMut<'_, f64>,
    (row0, col): (usize, usize),
) {
    let (t00, t01, t10, t11) = (-hwg.im, hwg.re, -hwg.re, -hwg.im);
    let n = gal.nrows();
    let ga = gal.col(p).try_as_col_major().map(|c| c.as_slice());
    let gb = gal.col(p + 1).try_as_col_major().map(|c| c.as_slice());
    if let (Some(ga), Some(gb)) = (ga, gb) {
        // Contiguous columns: the same sums, without per-entry index checks.
        for (cj, (ta, tb)) in [(col, (t00, t10)), (col + 1, (t01, t11))] {
            if let Some(d) = dst.rb_mut().col_mut(cj).try_as_col_major_mut() {
                let d = &mut d.as_slice_mut()[row0..row0 + n];
                for ((d, &a), &b) in d.iter_mut().zip(ga).zip(gb) {
                    *d += a * ta + b * tb;
                }
            } else {
                for i in 0..n {
                    dst[(row0 + i, cj)] += ga[i] * ta + gb[i] * tb;
                }
            }
        }
        return;
    }
    for i in 0..n {
        let (ga, gb) = (gal[(i, p)], gal[(i, p + 1)]);
        dst[(row0 + i, col)] += ga * t00 + gb * t10;
        dst[(row0 + i, col + 1)] += ga * t01 + gb * t11;
    }
}

impl crate::ContactSystem for EwrResidual<'_> {
    fn len(&self) -> usize {
        EwrResidual::len(self)
    }

    fn contact_count(&self) -> usize {
        EwrResidual::contact_count(self)
    }

    fn harmonic_set(&self) -> &HarmonicSet {
        EwrResidual::harmonic_set(self)
    }

    /// Contact `c`'s friction signals `c * dim ..`, contiguous.
    fn contact_unknowns(&self, c: usize) -> Vec<usize> {
        let block = self.params.dim * self.set.n_coeffs();
        (c * block..(c + 1) * block).collect()
    }

    fn residual(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError> {
        EwrResidual::residual(self, x, g)
    }

    fn residual_and_jacobian(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        j: MatMut<'_, f64>,
    ) -> Result<(), ResidualError> {
        EwrResidual::residual_and_jacobian(self, x, g, j)
    }

    fn residual_keep_derivatives(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError> {
        EwrResidual::residual_keep_derivatives(self, x, g)
    }

    fn jacobian_product(&mut self, v: &[f64], y: &mut [f64]) -> Result<(), ResidualError> {
        EwrResidual::jacobian_product(self, v, y)
    }

    fn jacobian_product_then(
        &mut self,
        v: &[f64],
        y: &mut [f64],
        finish: &(dyn Fn(usize, &mut [f64]) + Sync),
    ) -> Result<(), ResidualError> {
        EwrResidual::jacobian_product_then(self, v, y, finish)
    }

    fn jacobian_transpose_product(
        &mut self,
        v: &[f64],
        y: &mut [f64],
    ) -> Result<(), ResidualError> {
        EwrResidual::jacobian_transpose_product(self, v, y)
    }

    fn contact_jacobian_blocks(&mut self) -> Result<Vec<Mat<f64>>, ResidualError> {
        EwrResidual::contact_jacobian_blocks(self)
    }

    fn averaged_harmonic_jacobians(&self) -> Result<Vec<Mat<c64>>, ResidualError> {
        EwrResidual::averaged_harmonic_jacobians(self)
    }

    fn histories(&mut self, x: &[f64]) -> Result<ContactHistories, ResidualError> {
        EwrResidual::histories(self, x)
    }

    fn displacement_coeffs(&mut self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        EwrResidual::displacement_coeffs(self, x)
    }

    fn linearization(&mut self, x: &[f64]) -> Result<crate::Linearization, ResidualError> {
        EwrResidual::linearization(self, x)
    }

    fn tangential_rho(&self) -> Vec<f64> {
        self.params.rho.clone()
    }

    fn mean_slip(&mut self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        EwrResidual::mean_slip(self, x)
    }

    fn hold_mean_slip(&mut self, positions: &[f64], held: &[bool]) -> Result<(), ResidualError> {
        EwrResidual::hold_mean_slip(self, positions, held)
    }

    fn stick_margins(&self) -> Vec<f64> {
        EwrResidual::stick_margins(self)
    }

    fn stuck_toward(&self, c: usize, current: &[f64], target: &[f64]) -> Vec<f64> {
        EwrResidual::stuck_toward(self, c, current, target)
    }

    fn shaken_down(&self, c: usize, current: &[f64], x: &mut [f64]) -> Option<Vec<f64>> {
        EwrResidual::shaken_down(self, c, current, x)
    }
}
