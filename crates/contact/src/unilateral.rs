//! 3-D contacts as E-WR equalities: a unilateral (Signorini) normal contact whose normal
//! force `lambda(t)` bounds the Coulomb friction force by `mu lambda(t)`, with lift-off.
//! Derivation, Jacobian and pitfalls: `docs/contact-3d.md`.
//!
//! Unknowns are the harmonics of every contact force, in the row order of the condensed
//! structure: signal `c * dim + k` is friction direction `k` of contact `c`, signal
//! `dim * nc + c` the normal force of contact `c` (hb block layout, `n_coeffs` per signal).
//! The structure gives per harmonic `Y_h = G_h X_h + Q_h` at the same rows (the series
//! compliance `1/k` of each row is part of `G_h`); the law reads the tangential velocity
//! `v = d/dt Y` on the friction rows and the gap `g = g0 + Y` on the normal rows. Per
//! sample, with `F` the contact's force scale (every equation has units of force squared):
//!
//! ```text
//! fixed normal load N:         Psi_N = F (lambda - N)   (closed; no normal direction)
//! closed  (lambda > rho_N g):  Psi_N = F rho_N g
//! open    (otherwise):         Psi_N = F lambda
//! friction, b = mu max(0, lambda - rho_N g) (mu max(0, lambda) for a fixed load),
//! z = r - rho_T v, s = |z|:
//!                              Psi_T = k (r - proj_b(z)), k = F clamp(s / max(b, 0.1 F), 1, 50)
//! ```
//!
//! `Psi_N = F min(lambda, rho_N g)` is Signorini's `lambda >= 0, g >= 0, lambda g = 0`. The
//! friction equality is the paper's eq. 2, `max(b, s) (r - proj_b(z)) = r max(b, s) - b z`,
//! with the bound following the normal force and a different positive factor: the paper's
//! `max(b, s)` vanishes at `b = s = 0` and admits the spurious root `r = rho_T v` where the
//! contact is open. The bound uses the augmented normal force, equal to `lambda` at every
//! solution, so that the equality is continuous across the normal switch at iterates.

// Component loops (`i`, `j` over the contact's local signals) mirror the formulas above.
#![allow(clippy::needless_range_loop)]

use crate::error::ResidualError;
pub use crate::kinds::SampleState;
use crate::kinds::{ContactHistories, NormalHistories};
use crate::stuck::{HeldSlip, stick_margin};
use ewr_hb::receptance::ReceptanceAt;
use ewr_hb::{FourierSampler, HarmonicSet, ModalProduct};
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut, c64};
use rayon::prelude::*;
use std::sync::OnceLock;

/// `beta` of the friction equality's factor `k = F clamp(s / max(b, beta F), 1, FACTOR_CAP)`
/// (docs/contact-3d.md, section 3): where the bound is above `beta F`, the paper's factor
/// `max(b, s)` over `b`. In stick `k = F` whatever the bound, so the `h = 0` row of a contact
/// stuck all period is identically zero as for a constant bound; below the floor `k` stops
/// following `b`, so it stays positive at `b = 0` (no spurious root `r = rho_T v` where the
/// contact opens, without a separate, discontinuous open branch) and continuous.
pub const BOUND_FLOOR: f64 = 0.1;

/// Largest `k / F` of the friction equality (docs/contact-3d.md, section 3): 10 stalled the
/// prescribed-motion element with lift-off, 100 and no cap the single 3-D contact at w = 8.
pub const FACTOR_CAP: f64 = 50.0;

/// Parameters of the 3-D contacts as the residual needs them.
#[derive(Clone, Debug, PartialEq)]
pub struct UnilateralParams {
    /// Tangential directions per contact (1 or 2).
    pub dim: usize,
    /// Friction coefficient per contact.
    pub mu: Vec<f64>,
    /// Initial gap per contact (negative: interference).
    pub g0: Vec<f64>,
    /// Tangential scaling `rho_T` (force per velocity) per contact.
    pub rho_t: Vec<f64>,
    /// Normal scaling `rho_N` (force per length) per contact.
    pub rho_n: Vec<f64>,
    /// Force scale `F` per contact (e.g. `mu` times the static normal load), which makes the
    /// open-set and normal equations commensurate with the friction equality.
    pub force_scale: Vec<f64>,
    /// Per contact, a normal force held constant instead of the unilateral law (empty: every
    /// contact is unilateral). Its normal equation is `F (lambda - load)`: with an empty
    /// `W_N` row, the constant-bound contact `mu load` among 3-D ones.
    pub load: Vec<Option<f64>>,
}

impl UnilateralParams {
    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.mu.len()
    }

    /// True without contacts.
    pub fn is_empty(&self) -> bool {
        self.mu.is_empty()
    }

    /// Rows of the condensed structure: `dim * nc` friction rows, then `nc` normal rows.
    pub fn rows(&self) -> usize {
        (self.dim + 1) * self.len()
    }

    /// The constant normal force of contact `c`, `None` for a unilateral contact.
    pub fn fixed_load(&self, c: usize) -> Option<f64> {
        self.load.get(c).copied().flatten()
    }

    fn check(&self) -> Result<(), ResidualError> {
        let nc = self.len();
        if !(self.dim == 1 || self.dim == 2) {
            return Err(ResidualError::Input(format!(
                "3-D contacts have 1 or 2 tangential directions, not {}",
                self.dim
            )));
        }
        for (what, v) in [
            ("initial gaps g0", &self.g0),
            ("tangential scalings rho_T", &self.rho_t),
            ("normal scalings rho_N", &self.rho_n),
            ("force scales", &self.force_scale),
        ] {
            if v.len() != nc {
                return Err(ResidualError::Size {
                    what,
                    expected: nc,
                    got: v.len(),
                });
            }
        }
        if !(self.load.is_empty() || self.load.len() == nc) {
            return Err(ResidualError::Size {
                what: "fixed normal loads",
                expected: nc,
                got: self.load.len(),
            });
        }
        Ok(())
    }
}

/// The condensed structure at one frequency: `G_h` and `Q_h` per harmonic of a set (the
/// `G_h` dense, formed at once or, for products only, on first use).
///
/// Taken from a prepared receptance, or built by hand (a contact under prescribed motion:
/// `G_h` the contact compliance, `Q_h` the prescribed relative motion).
#[derive(Clone, Debug)]
pub struct CondensedContacts {
    /// Fundamental circular frequency.
    pub omega: f64,
    /// Per harmonic of the set, in its order: `h`, `G_h` (`m x m`; on a modal receptance
    /// formed from [`CondensedContacts::product`] on first use where the condensation was
    /// made for products only, [`CondensedContacts::for_products`]) and `Q_h` (`m`).
    harmonics: Vec<(usize, OnceLock<Mat<c64>>, Vec<c64>)>,
    /// The products by every `G_h` at once from the modal receptance's factors (column `j`
    /// for `harmonics[j]`: a condensation built by hand must keep that order), which read far
    /// less memory than the `G_h` one by one; `None` where the receptance is not modal: the
    /// products then use the `G_h` above. The `G_h` left unformed are formed from it.
    pub product: Option<ModalProduct>,
    /// Whether every `G_h` is symmetric (all but a cyclic sector's): the preconditioner then
    /// forms its averaged Jacobians transposed, from columns of `G_h` alone.
    pub symmetric: bool,
}

impl CondensedContacts {
    /// A condensation built by hand: per harmonic `(h, G_h, Q_h)` (a contact under prescribed
    /// motion: `G_h` the contact compliance, `Q_h` the prescribed relative motion), the modal
    /// products where there are any.
    pub fn new(
        omega: f64,
        harmonics: Vec<(usize, Mat<c64>, Vec<c64>)>,
        product: Option<ModalProduct>,
        symmetric: bool,
    ) -> Self {
        CondensedContacts {
            omega,
            harmonics: harmonics
                .into_iter()
                .map(|(h, g, q)| (h, OnceLock::from(g), q))
                .collect(),
            product,
            symmetric,
        }
    }

    /// [`from_receptance`](Self::from_receptance) without forming the `G_h` where the
    /// receptance is modal: the residual multiplies by them through the modal products, and
    /// each `G_h` is formed on the first use that needs the matrix (a Jacobian, a
    /// preconditioner). For evaluations that need the residual alone (a nonlinear mode's
    /// finite differences in `w` and `xi`, each at a new receptance), forming every `G_h`
    /// was most of their cost. `G_0` is formed (the held contacts read it).
    pub fn for_products(at: &ReceptanceAt<'_>, set: &HarmonicSet) -> Result<Self, ResidualError> {
        let lazy = at.modal_product(set.harmonics()).is_some();
        Self::condense(at, set, |h| !lazy || h == 0)
    }

    /// The condensed harmonics, in the set's order.
    pub fn harmonic_list(&self) -> Vec<usize> {
        self.harmonics.iter().map(|x| x.0).collect()
    }

    /// The position of harmonic `h` among the condensed ones.
    pub fn index_of(&self, h: usize) -> Option<usize> {
        self.harmonics.iter().position(|x| x.0 == h)
    }

    /// `G_h` of the `j`-th condensed harmonic (formed from the modal products on first use
    /// where [`for_products`](Self::for_products) left it).
    ///
    /// # Panics
    /// If `j` is out of range.
    pub fn g(&self, j: usize) -> &Mat<c64> {
        let (_, g, _) = &self.harmonics[j];
        if let Some(g) = g.get() {
            return g;
        }
        // Formed outside the cell's lock: forming runs on the thread pool, and a worker
        // waiting inside `get_or_init` could take a task that asks for the same cell (a
        // reentrant initialisation: a deadlock). Two that race form the same bits.
        let formed = self
            .product
            .as_ref()
            .expect("a G_h left unformed has the modal products")
            .dense(j);
        let _ = g.set(formed);
        g.get().expect("set above")
    }

    /// Forms every `G_h` a condensation for products left unformed, one after the other:
    /// called before the parallel regions that read them (each contact's task would otherwise
    /// form the same matrix).
    pub fn form_all(&self) {
        for j in 0..self.harmonics.len() {
            self.g(j);
        }
    }

    /// Entry `(i, i)` of the `j`-th `G_h` (the scalings read them; their condensations are
    /// formed at once).
    ///
    /// # Panics
    /// If `j` or `i` is out of range.
    pub fn g_diagonal(&self, j: usize, i: usize) -> c64 {
        self.g(j)[(i, i)]
    }

    /// `Q_h` of the `j`-th condensed harmonic.
    ///
    /// # Panics
    /// If `j` is out of range.
    pub fn q(&self, j: usize) -> &[c64] {
        &self.harmonics[j].2
    }

    /// `G_h` and the forced contact response `Q_h` of every harmonic of `set`.
    pub fn from_receptance(
        at: &ReceptanceAt<'_>,
        set: &HarmonicSet,
    ) -> Result<Self, ResidualError> {
        Self::condense(at, set, |_| true)
    }

    /// Every harmonic of `set` at `at`, its `G_h` formed where `formed(h)` (the others from
    /// the modal products on first use).
    fn condense(
        at: &ReceptanceAt<'_>,
        set: &HarmonicSet,
        formed: impl Fn(usize) -> bool,
    ) -> Result<Self, ResidualError> {
        let harmonics = set
            .harmonics()
            .iter()
            .map(|&h| {
                let g = OnceLock::new();
                if formed(h) {
                    let _ = g.set(at.contact_receptance(h)?.to_owned());
                }
                let q = at.forced_contact_response(h)?;
                Ok((h, g, q))
            })
            .collect::<Result<Vec<_>, ResidualError>>()?;
        Ok(CondensedContacts {
            omega: at.frequency(),
            harmonics,
            product: at.modal_product(set.harmonics()),
            symmetric: at.is_symmetric(),
        })
    }

    fn rows(&self) -> usize {
        match &self.product {
            Some(p) => p.rows(),
            None => self
                .harmonics
                .first()
                .map_or(0, |(_, g, _)| g.get().map_or(0, |g| g.nrows())),
        }
    }
}

/// Sampled histories of the 3-D contacts over one period (signal-major, `n_samples` each).
#[derive(Clone, Debug)]
pub struct UnilateralHistories {
    /// Samples per period.
    pub n_samples: usize,
    /// Friction force `r`, `dim * nc` signals.
    pub force: Vec<f64>,
    /// Relative tangential displacement (slider position with a contact stiffness).
    pub displacement: Vec<f64>,
    /// Relative tangential velocity.
    pub velocity: Vec<f64>,
    /// Normal force `lambda`, `nc` signals.
    pub normal_force: Vec<f64>,
    /// Gap `g` (at the rigid contact, after a normal contact stiffness), `nc` signals.
    pub gap: Vec<f64>,
    /// State per contact and sample (`c * n_samples + j`).
    pub state: Vec<SampleState>,
}

/// The E-WR system of the 3-D contacts at one frequency, with a dense Jacobian.
pub struct UnilateralResidual {
    cond: CondensedContacts,
    set: HarmonicSet,
    sampler: FourierSampler,
    params: UnilateralParams,
    /// Coefficients of `Y` without contact forces: `Q` (and `g0` on the normal rows'
    /// mean), in law variables (velocity on friction rows, gap on normal rows).
    y_forced: Vec<f64>,
    x_samples: Vec<f64>,
    y_coeffs: Vec<f64>,
    y_samples: Vec<f64>,
    psi: Vec<f64>,
    /// `dPsi/dX` and `dPsi/dY` per contact and sample: `((c * L + i) * L + j) * n_t + s`
    /// with `L = dim + 1` local signals (friction directions, then normal).
    d_x: Vec<f64>,
    d_y: Vec<f64>,
    galerkin: Mat<f64>,
    /// Per contact, the least stick margin `1 - |z| / b` over the period at the last
    /// evaluation (negative where it slips or opens somewhere).
    margins: Vec<f64>,
    /// The mean slip position kept by contacts stuck all period (`crate::stuck`).
    held: HeldSlip,
}

impl UnilateralResidual {
    /// The system of `params` on the structure `cond` (which must hold every harmonic of
    /// `set`, including `h = 0`: the preload and the mean forces live there), with
    /// `n_samples` time samples.
    pub fn new(
        cond: CondensedContacts,
        set: HarmonicSet,
        n_samples: usize,
        params: UnilateralParams,
    ) -> Result<Self, ResidualError> {
        params.check()?;
        let m = params.rows();
        if cond.rows() != m {
            return Err(ResidualError::Size {
                what: "contact rows of the receptance (friction rows, then normal rows)",
                expected: m,
                got: cond.rows(),
            });
        }
        if !set.contains_zero() {
            return Err(ResidualError::Input(format!(
                "the harmonic set {set} has no static term h = 0, where the preload and the \
                 mean contact forces live: 3-D contacts need all:H"
            )));
        }
        let hs = cond.harmonic_list();
        if let Some(&h) = set.harmonics().iter().find(|h| !hs.contains(h)) {
            return Err(ResidualError::Input(format!(
                "harmonic {h} is missing from the condensed structure"
            )));
        }
        let sampler = FourierSampler::new(set.clone(), n_samples)?;
        let nco = set.n_coeffs();
        let nt = n_samples;
        let l = params.dim + 1;
        let nc = params.len();
        let p0 = set.coeff_index(0).expect("h = 0 is in the set");
        let j0 = cond.index_of(0).expect("h = 0 is condensed");
        let (g0, q0) = (cond.g(j0).clone(), cond.q(j0).to_vec());
        let mut this = UnilateralResidual {
            y_forced: vec![0.0; m * nco],
            x_samples: vec![0.0; m * nt],
            y_coeffs: vec![0.0; m * nco],
            y_samples: vec![0.0; m * nt],
            psi: vec![0.0; m * nt],
            d_x: vec![0.0; nc * l * l * nt],
            d_y: vec![0.0; nc * l * l * nt],
            galerkin: Mat::zeros(nco, nco),
            margins: vec![-1.0; nc],
            held: HeldSlip::new(params.dim, &params.force_scale, &g0, &q0, nco, p0),
            cond,
            sampler,
            set,
            params,
        };
        let mut yf = vec![0.0; m * nco];
        this.structure(None, true, &mut yf);
        for c in 0..nc {
            if this.params.fixed_load(c).is_none() {
                yf[(this.friction_rows() + c) * nco + p0] += this.params.g0[c];
            }
        }
        this.y_forced = yf;
        Ok(this)
    }

    fn friction_rows(&self) -> usize {
        self.params.dim * self.params.len()
    }

    /// Number of unknowns (and equations): `(dim + 1) nc n_coeffs`.
    pub fn len(&self) -> usize {
        self.params.rows() * self.set.n_coeffs()
    }

    /// True without contacts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The harmonic set of the unknowns.
    pub fn harmonic_set(&self) -> &HarmonicSet {
        &self.set
    }

    /// The contacts' parameters.
    pub fn params(&self) -> &UnilateralParams {
        &self.params
    }

    /// `out = T x (+ Q with forced)`: law-variable coefficients (velocity on friction rows,
    /// displacement on normal rows) of the contact forces `x` (zero when `None`).
    fn structure(&self, x: Option<&[f64]>, forced: bool, out: &mut [f64]) {
        let nco = self.set.n_coeffs();
        let m = self.params.rows();
        let mt = self.friction_rows();
        out.fill(0.0);
        // `X_h = a_h - i b_h` per harmonic (zero for one the set lacks).
        let coeffs = |x: &[f64], h: usize, s: usize| match self.set.coeff_index(h) {
            Some(p) => {
                let b = if h > 0 { x[s * nco + p + 1] } else { 0.0 };
                c64::new(x[s * nco + p], -b)
            }
            None => c64::new(0.0, 0.0),
        };
        let hs = &self.cond.harmonics;
        let gx = x.map(|x| {
            self.receptance_products(
                Mat::from_fn(m, hs.len(), |s, j| coeffs(x, hs[j].0, s)),
                false,
            )
        });
        for (j, (h, _, q)) in hs.iter().enumerate() {
            let h = *h;
            let Some(p) = self.set.coeff_index(h) else {
                continue;
            };
            let hw = h as f64 * self.cond.omega;
            for s in 0..m {
                let mut y = if forced { q[s] } else { c64::new(0.0, 0.0) };
                if let Some(gx) = &gx {
                    y += gx[(s, j)];
                }
                if s < mt {
                    // Velocity: V = i h w Y.
                    if h > 0 {
                        out[s * nco + p] = -hw * y.im;
                        out[s * nco + p + 1] = -hw * y.re;
                    }
                } else {
                    out[s * nco + p] = y.re;
                    if h > 0 {
                        out[s * nco + p + 1] = -y.im;
                    }
                }
            }
        }
    }

    /// Column `j` of `x` multiplied by `G_h` (by `G_h^T` with `transpose`; they differ only on
    /// a cyclic sector) for the `j`-th condensed harmonic: all at once from the modal
    /// factors where the receptance is modal (symmetric), else one dense `G_h` at a time.
    fn receptance_products(&self, x: Mat<c64>, transpose: bool) -> Mat<c64> {
        let mut y = Mat::zeros(x.nrows(), x.ncols());
        match &self.cond.product {
            Some(product) => product.apply(x.as_ref(), y.as_mut()),
            None => {
                for j in 0..self.cond.harmonics.len() {
                    let g = self.cond.g(j);
                    let g = if transpose { g.transpose() } else { g.as_ref() };
                    y.col_mut(j).copy_from(g * x.col(j));
                }
            }
        }
        y
    }

    /// `out = T^T x` (no forced part). The real `2 x 2` block of a complex entry `a` is
    /// `R(a) = [[Re a, Im a], [-Im a, Re a]]` with `R(a)^T = R(conj a)`, so per harmonic, in
    /// complex form, `(T^T X)_s = conj( sum_t G_ts D_t conj(X_t) )` with `D_t = i h w` on friction rows
    /// and 1 on normal rows.
    fn structure_transpose(&self, x: &[f64], out: &mut [f64]) {
        let nco = self.set.n_coeffs();
        let m = self.params.rows();
        let mt = self.friction_rows();
        out.fill(0.0);
        let w_of = |h: usize, t: usize| match self.set.coeff_index(h) {
            Some(p) => {
                let b = if h > 0 { x[t * nco + p + 1] } else { 0.0 };
                // conj(X) = a + i b; friction rows times i h w.
                let cx = c64::new(x[t * nco + p], b);
                let hw = h as f64 * self.cond.omega;
                if t < mt { c64::new(0.0, hw) * cx } else { cx }
            }
            None => c64::new(0.0, 0.0),
        };
        let hs = &self.cond.harmonics;
        let gw = self.receptance_products(Mat::from_fn(m, hs.len(), |t, j| w_of(hs[j].0, t)), true);
        for (j, (h, _, _)) in hs.iter().enumerate() {
            let h = *h;
            let Some(p) = self.set.coeff_index(h) else {
                continue;
            };
            for s in 0..m {
                let y = gw[(s, j)];
                // conj(y) = Re y - i Im y, i.e. (a, b) = (Re y, Im y).
                out[s * nco + p] = y.re;
                if h > 0 {
                    out[s * nco + p + 1] = y.im;
                }
            }
        }
    }

    fn sample(&mut self, x: &[f64]) -> Result<(), ResidualError> {
        check_len("contact force coefficients", self.len(), x.len())?;
        let mut y = std::mem::take(&mut self.y_coeffs);
        self.structure(Some(x), false, &mut y);
        y.iter_mut().zip(&self.y_forced).for_each(|(a, b)| *a += b);
        self.y_coeffs = y;
        self.sampler.synthesize_many(x, &mut self.x_samples)?;
        self.sampler
            .synthesize_many(&self.y_coeffs, &mut self.y_samples)?;
        Ok(())
    }

    /// The law at every sample: `psi` and, with `derivatives`, `d_x`, `d_y`.
    fn law(&mut self, derivatives: bool) -> Result<(), ResidualError> {
        let p = &self.params;
        let (d, nc, nt) = (p.dim, p.len(), self.sampler.n_samples());
        let l = d + 1;
        let mt = d * nc;
        if derivatives {
            self.d_x.fill(0.0);
            self.d_y.fill(0.0);
        }
        for c in 0..nc {
            let (mu, rt, rn, f) = (p.mu[c], p.rho_t[c], p.rho_n[c], p.force_scale[c]);
            let di = |i: usize, j: usize, s: usize| ((c * l + i) * l + j) * nt + s;
            let mut margin = f64::INFINITY;
            for s in 0..nt {
                let lam = self.x_samples[(mt + c) * nt + s];
                let gap = self.y_samples[(mt + c) * nt + s];
                let mut r = [0.0; 2];
                let mut v = [0.0; 2];
                for k in 0..d {
                    r[k] = self.x_samples[(c * d + k) * nt + s];
                    v[k] = self.y_samples[(c * d + k) * nt + s];
                }
                if !(lam.is_finite() && gap.is_finite())
                    || r.iter().chain(&v).any(|x| !x.is_finite())
                {
                    return Err(ResidualError::Input(format!(
                        "contact {c}: a force or displacement is not finite at sample {s}"
                    )));
                }
                let fixed = p.fixed_load(c);
                let closed = fixed.is_some() || lam > rn * gap;
                self.psi[(mt + c) * nt + s] = match fixed {
                    Some(n) => f * (lam - n),
                    None if closed => f * rn * gap,
                    None => f * lam,
                };
                if derivatives {
                    if closed && fixed.is_none() {
                        self.d_y[di(d, d, s)] = f * rn;
                    } else {
                        self.d_x[di(d, d, s)] = f;
                    }
                }
                // The bound follows the augmented normal force max(0, lambda - rho_N g), which
                // is lambda at every solution (g = 0 where closed, lambda = 0 where open) and
                // continuous across the normal switch at iterates.
                let (aug, da_dgap) = match fixed {
                    Some(_) => (lam, 0.0),
                    None => (lam - rn * gap, -rn),
                };
                let (b, db_dlam, db_dgap) = if aug > 0.0 {
                    (mu * aug, mu, mu * da_dgap)
                } else {
                    (0.0, 0.0, 0.0)
                };
                let slip = (0..d)
                    .map(|k| (r[k] - rt * v[k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                margin = margin.min(stick_margin(slip, b));
                let fr = friction(&r[..d], &v[..d], b, rt, f);
                for i in 0..d {
                    self.psi[(c * d + i) * nt + s] = fr.psi[i];
                    if derivatives {
                        for j in 0..d {
                            self.d_x[di(i, j, s)] = fr.d_r[i][j];
                            self.d_y[di(i, j, s)] = fr.d_v[i][j];
                        }
                        self.d_x[di(i, d, s)] = fr.d_b[i] * db_dlam;
                        self.d_y[di(i, d, s)] = fr.d_b[i] * db_dgap;
                    }
                }
            }
            self.margins[c] = margin;
        }
        Ok(())
    }

    /// Evaluates `g(X)`.
    pub fn residual(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError> {
        check_len("residual g", self.len(), g.len())?;
        self.sample(x)?;
        self.law(false)?;
        self.sampler.project_many(&self.psi, g)?;
        self.held.add_residual(x, g);
        Ok(())
    }

    /// Evaluates `g(X)` and the dense Jacobian `dg/dX` (`len x len`):
    /// `J = P diag(dPsi/dX) S + P diag(dPsi/dY) S T`.
    pub fn residual_and_jacobian(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        mut jac: MatMut<'_, f64>,
    ) -> Result<(), ResidualError> {
        self.cond.form_all();
        let n = self.len();
        check_len("residual g", n, g.len())?;
        check_len("Jacobian rows", n, jac.nrows())?;
        check_len("Jacobian columns", n, jac.ncols())?;
        self.sample(x)?;
        self.law(true)?;
        self.sampler.project_many(&self.psi, g)?;
        self.held.add_residual(x, g);
        jac.fill(0.0);
        self.held.add_jacobian(jac.rb_mut());
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let l = d + 1;
        let m = self.params.rows();
        let nco = self.set.n_coeffs();
        let mt = d * nc;
        let sig = |c: usize, i: usize| if i < d { c * d + i } else { mt + c };
        for c in 0..nc {
            for i in 0..l {
                let row0 = sig(c, i) * nco;
                for j in 0..l {
                    let idx = ((c * l + i) * l + j) * nt;
                    let dx = &self.d_x[idx..idx + nt];
                    if dx.iter().any(|&v| v != 0.0) {
                        self.sampler.galerkin_matrix(dx, self.galerkin.as_mut())?;
                        let col0 = sig(c, j) * nco;
                        let mut blk = jac.rb_mut().submatrix_mut(row0, col0, nco, nco);
                        blk += &self.galerkin;
                    }
                    let dy = &self.d_y[idx..idx + nt];
                    if dy.iter().all(|&v| v == 0.0) {
                        continue;
                    }
                    self.sampler.galerkin_matrix(dy, self.galerkin.as_mut())?;
                    add_structure_columns(
                        &self.cond,
                        &self.set,
                        self.galerkin.as_ref(),
                        (sig(c, j), j < d),
                        (0..m).map(|t| (t, t * nco)),
                        jac.rb_mut(),
                        row0,
                    );
                }
            }
        }
        Ok(())
    }

    /// The law linearised at `x` (see [`crate::Linearization`]): velocity on the friction
    /// rows, the gap on the normal rows; stuck contacts are not held.
    pub fn linearization(&mut self, x: &[f64]) -> Result<crate::Linearization, ResidualError> {
        use crate::system::{all_zero, constant};
        let n = self.len();
        check_len("contact force coefficients", n, x.len())?;
        self.sample(x)?;
        self.law(true)?;
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let l = d + 1;
        let m = self.params.rows();
        let nco = self.set.n_coeffs();
        let mt = d * nc;
        let sig = |c: usize, i: usize| if i < d { c * d + i } else { mt + c };
        let mut d_force = crate::SignalBlocks::new(m, nco);
        let mut d_motion = crate::SignalBlocks::new(m, nco);
        let mut stuck_rows: Vec<bool> = (0..m).map(|s| s < mt).collect();
        for c in 0..nc {
            for i in 0..l {
                let row = sig(c, i);
                for j in 0..l {
                    let idx = ((c * l + i) * l + j) * nt;
                    let (dx, dy) = (&self.d_x[idx..idx + nt], &self.d_y[idx..idx + nt]);
                    stuck_rows[row] &= all_zero(dx) && constant(dy) && (j < d || all_zero(dy));
                    let col = sig(c, j);
                    d_force.push_galerkin(&mut self.sampler, row, col, dx)?;
                    d_motion.push_galerkin(&mut self.sampler, row, col, dy)?;
                }
            }
        }
        Ok(crate::Linearization {
            d_force,
            d_motion,
            velocity: (0..m).map(|s| s < mt).collect(),
            stuck_rows,
        })
    }

    /// Evaluates `g(X)` and keeps the law's derivatives for the matrix-free products.
    pub fn residual_keep_derivatives(
        &mut self,
        x: &[f64],
        g: &mut [f64],
    ) -> Result<(), ResidualError> {
        check_len("residual g", self.len(), g.len())?;
        self.sample(x)?;
        self.law(true)?;
        self.sampler.project_many(&self.psi, g)?;
        self.held.add_residual(x, g);
        Ok(())
    }

    /// `out = J x` at the last point evaluated with derivatives, without forming `J`.
    pub fn jacobian_product(&mut self, x: &[f64], out: &mut [f64]) -> Result<(), ResidualError> {
        self.jacobian_product_then(x, out, &|_, _| {})
    }

    /// [`jacobian_product`](Self::jacobian_product), then `finish(c, part)` on contact `c`'s
    /// unknowns (its friction signals, then its normal one): after the receptance product,
    /// each parallel task synthesises its contacts' signals, applies the law's derivatives,
    /// projects, adds the hold's terms and finishes them, one pass over the threads where the
    /// separate transforms, the law and the finish took five. Each contact's arithmetic is
    /// that of the separate passes, so the result is the same to the last bit.
    pub fn jacobian_product_then(
        &mut self,
        x: &[f64],
        out: &mut [f64],
        finish: &(dyn Fn(usize, &mut [f64]) + Sync),
    ) -> Result<(), ResidualError> {
        let n = self.len();
        check_len("x in J x", n, x.len())?;
        check_len("y in J x", n, out.len())?;
        let product = ewr_hb::profile::span(ewr_hb::profile::Phase::StructureProduct);
        let mut ty = std::mem::take(&mut self.y_coeffs);
        self.structure(Some(x), false, &mut ty);
        self.y_coeffs = ty;
        let held = self.held.product_terms(x);
        drop(product);
        let _pass = ewr_hb::profile::span(ewr_hb::profile::Phase::ContactPass);
        let p0 = self.set.coeff_index(0);
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let (nco, l, mt) = (self.set.n_coeffs(), d + 1, d * nc);
        let sig = |c: usize, i: usize| if i < d { c * d + i } else { mt + c };
        let block = |c: usize, i: usize, j: usize| ((c * l + i) * l + j) * nt;
        // Contacts per task as `apply_derivatives` splits them.
        let group = ewr_hb::fourier::parallel_task(nc, l * nt);
        let (dx, dy) = (&self.d_x, &self.d_y);
        let (sampler, yc) = (&self.sampler, &self.y_coeffs);
        let (friction, normal) = out.split_at_mut(mt * nco);
        friction
            .par_chunks_mut(d * nco * group)
            .zip(normal[..nc * nco].par_chunks_mut(nco * group))
            .enumerate()
            .try_for_each(|(task, (ft, fnorm))| {
                let mut scratch = sampler.scratch();
                let (mut xs, mut ys, mut ps) =
                    (vec![0.0; l * nt], vec![0.0; l * nt], vec![0.0; l * nt]);
                let mut part = vec![0.0; l * nco];
                for k in 0..fnorm.len() / nco {
                    let c = task * group + k;
                    for i in 0..l {
                        let coeffs = sig(c, i) * nco..(sig(c, i) + 1) * nco;
                        let samples = i * nt..(i + 1) * nt;
                        sampler.synthesize_with(
                            &mut scratch,
                            &x[coeffs.clone()],
                            &mut xs[samples.clone()],
                        )?;
                        sampler.synthesize_with(&mut scratch, &yc[coeffs], &mut ys[samples])?;
                    }
                    for i in 0..l {
                        let o = &mut ps[i * nt..][..nt];
                        o.fill(0.0);
                        for j in 0..l {
                            let (xj, yj) = (&xs[j * nt..][..nt], &ys[j * nt..][..nt]);
                            let (ax, ay) =
                                (&dx[block(c, i, j)..][..nt], &dy[block(c, i, j)..][..nt]);
                            for s in 0..nt {
                                o[s] += ax[s] * xj[s] + ay[s] * yj[s];
                            }
                        }
                    }
                    for i in 0..l {
                        let dst = if i < d {
                            &mut ft[(k * d + i) * nco..][..nco]
                        } else {
                            &mut fnorm[k * nco..][..nco]
                        };
                        sampler.project_with(&mut scratch, &ps[i * nt..][..nt], dst)?;
                    }
                    if let (Some(terms), Some(p0)) = (&held, p0) {
                        for i in 0..d {
                            if let Some(t) = terms[c * d + i] {
                                ft[(k * d + i) * nco + p0] += t;
                            }
                        }
                    }
                    // The contact's unknowns in `contact_unknowns` order, finished, put back.
                    for i in 0..l {
                        let src = if i < d {
                            &ft[(k * d + i) * nco..][..nco]
                        } else {
                            &fnorm[k * nco..][..nco]
                        };
                        part[i * nco..][..nco].copy_from_slice(src);
                    }
                    finish(c, &mut part);
                    for i in 0..l {
                        let dst = if i < d {
                            &mut ft[(k * d + i) * nco..][..nco]
                        } else {
                            &mut fnorm[k * nco..][..nco]
                        };
                        dst.copy_from_slice(&part[i * nco..][..nco]);
                    }
                }
                Ok::<_, ResidualError>(())
            })
    }

    /// `out = J^T x` at the last point evaluated with derivatives, without forming `J`:
    /// `J^T = diag(1/w) P D_X^T S diag(w) + T^T diag(1/w) P D_Y^T S diag(w)` (projection
    /// weights `w`), the transpose of [`jacobian_product`](Self::jacobian_product).
    pub fn jacobian_transpose_product(
        &mut self,
        x: &[f64],
        out: &mut [f64],
    ) -> Result<(), ResidualError> {
        let n = self.len();
        check_len("x in J^T x", n, x.len())?;
        check_len("y in J^T x", n, out.len())?;
        let nco = self.set.n_coeffs();
        let nt = self.sampler.n_samples() as f64;
        let mut wts = vec![2.0 / nt; nco];
        if let Some(p) = self.set.coeff_index(0) {
            wts[p] = 1.0 / nt;
        }
        let xw: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| v * wts[i % nco])
            .collect();
        // Samples of P^T x, in psi; D_X^T into x_samples, D_Y^T into y_samples.
        self.sampler.synthesize_many(&xw, &mut self.psi)?;
        self.apply_derivatives(true);
        let mut ax = vec![0.0; n];
        let mut ay = vec![0.0; n];
        self.sampler.project_many(&self.x_samples, &mut ax)?;
        self.sampler.project_many(&self.y_samples, &mut ay)?;
        for (i, v) in ax.iter_mut().chain(ay.iter_mut()).enumerate() {
            *v /= wts[i % nco];
        }
        self.structure_transpose(&ay, out);
        out.iter_mut().zip(&ax).for_each(|(o, a)| *o += a);
        self.held.add_transpose_product(x, out);
        Ok(())
    }

    /// Per sample and contact: `psi = dX xs + dY ys` (forward, from `x_samples`,
    /// `y_samples`), or `xs = dX^T psi, ys = dY^T psi` (transposed, from `psi`). Each term is
    /// a product of two sampled signals, taken a whole signal at a time (contiguous, so it
    /// vectorises: GMRES calls this twice per iteration).
    fn apply_derivatives(&mut self, transpose: bool) {
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let l = d + 1;
        let mt = d * nc;
        let (dx, dy) = (&self.d_x, &self.d_y);
        // Contact by contact, on every thread where there are many: each contact's rows are
        // its `d` friction signals (in the first `mt` signals) and its normal one (after).
        let group = ewr_hb::fourier::parallel_task(nc, l * nt);
        /// Per task: its first contact, and its contacts' friction rows and normal rows.
        fn by_contacts(
            v: &mut [f64],
            (d, nc, nt): (usize, usize, usize),
            group: usize,
        ) -> impl IndexedParallelIterator<Item = (usize, &mut [f64], &mut [f64])> {
            let (t, n) = v.split_at_mut(d * nc * nt);
            t.par_chunks_mut(d * nt * group)
                .zip(n[..nc * nt].par_chunks_mut(nt * group))
                .enumerate()
                .map(move |(task, (t, n))| (task * group, t, n))
        }
        let sizes = (d, nc, nt);
        let sig = |c: usize, i: usize| if i < d { c * d + i } else { mt + c };
        let block = |c: usize, i: usize, j: usize| ((c * l + i) * l + j) * nt;
        // Signal `i` of the contact `k` places into a task's chunks (friction, normal).
        let at = |k: usize, i: usize| if i < d { (k * d + i) * nt } else { k * nt };
        if transpose {
            let psi = &self.psi;
            by_contacts(&mut self.x_samples, sizes, group)
                .zip(by_contacts(&mut self.y_samples, sizes, group))
                .for_each(|((first, xt, xn), (_, yt, yn))| {
                    for k in 0..xn.len() / nt {
                        let c = first + k;
                        for j in 0..l {
                            let (ox, oy) = if j < d {
                                (&mut xt[at(k, j)..][..nt], &mut yt[at(k, j)..][..nt])
                            } else {
                                (&mut xn[at(k, j)..][..nt], &mut yn[at(k, j)..][..nt])
                            };
                            ox.fill(0.0);
                            oy.fill(0.0);
                            for i in 0..l {
                                let a = &psi[sig(c, i) * nt..][..nt];
                                let (ax, ay) =
                                    (&dx[block(c, i, j)..][..nt], &dy[block(c, i, j)..][..nt]);
                                for s in 0..nt {
                                    ox[s] += ax[s] * a[s];
                                    oy[s] += ay[s] * a[s];
                                }
                            }
                        }
                    }
                });
        } else {
            let (xs, ys) = (&self.x_samples, &self.y_samples);
            by_contacts(&mut self.psi, sizes, group).for_each(|(first, pt, pn)| {
                for k in 0..pn.len() / nt {
                    let c = first + k;
                    for i in 0..l {
                        let out = if i < d {
                            &mut pt[at(k, i)..][..nt]
                        } else {
                            &mut pn[at(k, i)..][..nt]
                        };
                        out.fill(0.0);
                        for j in 0..l {
                            let sj = sig(c, j);
                            let (x, y) = (&xs[sj * nt..][..nt], &ys[sj * nt..][..nt]);
                            let (ax, ay) =
                                (&dx[block(c, i, j)..][..nt], &dy[block(c, i, j)..][..nt]);
                            for s in 0..nt {
                                out[s] += ax[s] * x[s] + ay[s] * y[s];
                            }
                        }
                    }
                }
            });
        }
    }

    /// Each contact's diagonal block of `J` (its `dim + 1` signals, `(dim + 1) n_coeffs`
    /// square, signals in the order friction directions then normal), at the last point
    /// evaluated with derivatives: the block-Jacobi preconditioner of the matrix-free path.
    pub fn contact_jacobian_blocks(&mut self) -> Result<Vec<Mat<f64>>, ResidualError> {
        self.cond.form_all();
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let l = d + 1;
        let nco = self.set.n_coeffs();
        let mt = d * nc;
        let sig = |c: usize, i: usize| if i < d { c * d + i } else { mt + c };
        let (d_x, d_y, cond, set, held) = (&self.d_x, &self.d_y, &self.cond, &self.set, &self.held);
        let block = |c: usize,
                     sampler: &mut FourierSampler,
                     galerkin: &mut Mat<f64>|
         -> Result<Mat<f64>, ResidualError> {
            let mut blk = Mat::<f64>::zeros(l * nco, l * nco);
            for i in 0..l {
                for j in 0..l {
                    let idx = ((c * l + i) * l + j) * nt;
                    let dx = &d_x[idx..idx + nt];
                    if dx.iter().any(|&v| v != 0.0) {
                        sampler.galerkin_matrix(dx, galerkin.as_mut())?;
                        let mut b = blk.as_mut().submatrix_mut(i * nco, j * nco, nco, nco);
                        b += &*galerkin;
                    }
                    let dy = &d_y[idx..idx + nt];
                    if dy.iter().all(|&v| v == 0.0) {
                        continue;
                    }
                    sampler.galerkin_matrix(dy, galerkin.as_mut())?;
                    add_structure_columns(
                        cond,
                        set,
                        galerkin.as_ref(),
                        (sig(c, j), j < d),
                        (0..l).map(|tl| (sig(c, tl), tl * nco)),
                        blk.as_mut(),
                        i * nco,
                    );
                }
            }
            held.add_to_block(c, &contact_unknowns_of(d, nc, nco, c), blk.as_mut());
            Ok(blk)
        };
        // Contact by contact, on every thread where there are many (each block's arithmetic
        // is the same whichever thread runs it): serial, this was 4 % of the 200-contact 3-D
        // sector's sweep on two threads.
        let group = ewr_hb::fourier::parallel_task(nc, 2 * l * l * nt);
        if group >= nc {
            return (0..nc)
                .map(|c| block(c, &mut self.sampler, &mut self.galerkin))
                .collect();
        }
        let (sampler, galerkin) = (&self.sampler, &self.galerkin);
        (0..nc)
            .into_par_iter()
            .with_min_len(group)
            .map_init(
                || (sampler.clone(), galerkin.clone()),
                |(s, g), c| block(c, s, g),
            )
            .collect()
    }

    /// Per harmonic of the set (in its order), the complex `m x m` Jacobian with the law's
    /// derivatives averaged over the period: all of the coupling through the structure, none
    /// of the time variation of stick, slip and lift-off (the harmonic level of the two-level
    /// preconditioner), at the last point evaluated with derivatives.
    pub fn averaged_harmonic_jacobians(&self) -> Vec<Mat<c64>> {
        self.averaged_harmonic_jacobians_as(false)
    }

    /// [`averaged_harmonic_jacobians`](Self::averaged_harmonic_jacobians), or with
    /// `transposed` their transposes. Where `G_h` is symmetric the transposes are formed a
    /// contiguous column at a time, `K_h^T[:, sig(c, i)] = sum_j f_cij G_h[:, sig(c, j)]`:
    /// on the 200-contact 3-D sector forming `K_h` row by row from `G_h`'s columns cost a
    /// sixth of its LU (docs/performance.md).
    pub fn averaged_harmonic_jacobians_as(&self, transposed: bool) -> Vec<Mat<c64>> {
        self.cond.form_all();
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let l = d + 1;
        let m = self.params.rows();
        let mt = d * nc;
        let sig = |c: usize, i: usize| if i < d { c * d + i } else { mt + c };
        let mean = |v: &[f64], idx: usize| v[idx..idx + nt].iter().sum::<f64>() / nt as f64;
        let mut ax = vec![0.0; nc * l * l];
        let mut ay = vec![0.0; nc * l * l];
        for (k, (a, b)) in ax.iter_mut().zip(ay.iter_mut()).enumerate() {
            *a = mean(&self.d_x, k * nt);
            *b = mean(&self.d_y, k * nt);
        }
        let omega = self.cond.omega;
        // Row sig(c, i) of K_h is a_ci + sum_j f_cij G_h[sig(c, j), :].
        let rows: Vec<usize> = (0..nc)
            .flat_map(|c| (0..l).map(move |i| sig(c, i)))
            .collect();
        let by_columns = transposed && self.cond.symmetric;
        self.set
            .harmonics()
            .par_iter()
            .map(|&h| {
                let gh = self.cond.g(self
                    .cond
                    .index_of(h)
                    .expect("every harmonic of the set is condensed"));
                let f: Vec<c64> = ay
                    .iter()
                    .enumerate()
                    .map(|(k, &b)| {
                        let j = k % l;
                        if b == 0.0 || (j < d && h == 0) {
                            c64::new(0.0, 0.0)
                        } else if j < d {
                            c64::new(0.0, h as f64 * omega * b)
                        } else {
                            c64::new(b, 0.0)
                        }
                    })
                    .collect();
                let mut k = Mat::<c64>::zeros(m, m);
                if by_columns {
                    // K_h^T[t, sig_i] = sum_j f_ij G_h[sig_j, t] = sum_j f_ij G_h[t, sig_j].
                    let mut gcol = vec![c64::new(0.0, 0.0); m];
                    for c in 0..nc {
                        let sigs = &rows[c * l..(c + 1) * l];
                        for (i, &row) in sigs.iter().enumerate() {
                            let kt = crate::columns::column_mut(k.as_mut(), row);
                            for (j, &sj) in sigs.iter().enumerate() {
                                let fij = f[(c * l + i) * l + j];
                                if fij == c64::new(0.0, 0.0) {
                                    continue;
                                }
                                let g = crate::columns::column(gh.as_ref(), sj, &mut gcol);
                                for (kt, g) in kt.iter_mut().zip(g) {
                                    *kt += fij * g;
                                }
                            }
                        }
                    }
                } else {
                    let mut g = vec![c64::new(0.0, 0.0); l];
                    let mut gcol = vec![c64::new(0.0, 0.0); m];
                    for t in 0..m {
                        // Both columns as plain slices: faer's checked indexing cost several
                        // times the arithmetic here.
                        let gt = crate::columns::column(gh.as_ref(), t, &mut gcol);
                        let kt = crate::columns::column_mut(k.as_mut(), t);
                        for c in 0..nc {
                            let sigs = &rows[c * l..(c + 1) * l];
                            for (gj, &sj) in g.iter_mut().zip(sigs) {
                                *gj = gt[sj];
                            }
                            for (i, &row) in sigs.iter().enumerate() {
                                let fi = &f[(c * l + i) * l..(c * l + i + 1) * l];
                                kt[row] += fi.iter().zip(&g).map(|(a, b)| *a * *b).sum::<c64>();
                            }
                        }
                    }
                }
                for c in 0..nc {
                    let sigs = &rows[c * l..(c + 1) * l];
                    for (i, &row) in sigs.iter().enumerate() {
                        for (j, &col) in sigs.iter().enumerate() {
                            let a = c64::new(ax[(c * l + i) * l + j], 0.0);
                            if by_columns {
                                k[(col, row)] += a;
                            } else {
                                k[(row, col)] += a;
                            }
                        }
                    }
                }
                if h == 0 {
                    self.held.add_to_static_harmonic_as(&mut k, by_columns);
                }
                if transposed && !by_columns {
                    k.transpose().to_owned()
                } else {
                    k
                }
            })
            .collect()
    }

    /// Mean slip position (tangential law variable at `h = 0`) of each friction row for the
    /// force coefficients `x`: where a contact stuck all period stays (`crate::stuck`).
    pub fn mean_slip(&self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        check_len("contact force coefficients", self.len(), x.len())?;
        Ok(self.held.positions(x))
    }

    /// Holds the contacts flagged in `held` at these mean slip positions (one per friction
    /// row, from [`mean_slip`](Self::mean_slip)); the law alone decides the others. None is
    /// held until called (a solve from zero force has no loading history).
    pub fn hold_mean_slip(
        &mut self,
        positions: &[f64],
        held: &[bool],
    ) -> Result<(), ResidualError> {
        check_len("held slip positions", self.friction_rows(), positions.len())?;
        check_len("held contacts", self.params.len(), held.len())?;
        self.held.hold(positions, held);
        Ok(())
    }

    /// The mean slip position of contact `c` nearest `target` on the segment from `current`
    /// (one per direction) at which it still sticks all period, predicted from the last
    /// evaluation: its mean friction force moved by its own static stiffness
    /// ([`crate::stuck`]), its dynamic forces, motion and normal force as they are. `target`
    /// itself where it sticks there; `current` where the prediction cannot be made.
    /// Holding a contact that slipped at the reference there, rather than at its reference
    /// position, is the stepped sine's shakedown onto the bound (docs/stuck-contacts.md).
    pub fn stuck_toward(&self, c: usize, current: &[f64], target: &[f64]) -> Vec<f64> {
        let p = &self.params;
        let d = p.dim;
        let dp: Vec<f64> = target.iter().zip(current).map(|(t, c)| t - c).collect();
        let (Some(shift), true) = (self.held.force_shift(c, &dp), c < p.len() && dp.len() == d)
        else {
            return current.to_vec();
        };
        let (z, b) = self.slip_samples(c);
        let margin = |theta: f64| -> f64 {
            let mut m = f64::INFINITY;
            for (zs, &bs) in z.chunks_exact(d).zip(&b) {
                let slip = zs
                    .iter()
                    .zip(&shift)
                    .map(|(zk, f)| {
                        let zk = zk + theta * f;
                        zk * zk
                    })
                    .sum::<f64>()
                    .sqrt();
                m = m.min(stick_margin(slip, bs));
            }
            m
        };
        crate::stuck::stuck_toward(current, target, margin)
    }

    /// Where contact `c`, which slips somewhere in the period at the last evaluation, would
    /// stick again: its mean slip position `current` moved as a stepped sine's slip would move
    /// it (`crate::stuck::shakedown` on its mean friction force, through its own static
    /// compliance), its dynamic forces, motion and normal load as they are. `None` where it
    /// opens, or no mean force keeps it stuck all period. Its mean friction force in the
    /// coefficients `x` is moved with it.
    pub fn shaken_down(&self, c: usize, current: &[f64], x: &mut [f64]) -> Option<Vec<f64>> {
        if c >= self.params.len() || current.len() != self.params.dim {
            return None;
        }
        let (z, b) = self.slip_samples(c);
        let df = crate::stuck::shakedown(self.params.dim, &z, &b)?;
        Some(self.held.shaken(c, &df, current, x))
    }

    /// Contact `c`'s law variable `z = r - rho_T v` (`dim` components a sample, sample after
    /// sample) and its friction bound `mu max(0, lambda - rho_N g)` per sample, at the last
    /// evaluation.
    fn slip_samples(&self, c: usize) -> (Vec<f64>, Vec<f64>) {
        let p = &self.params;
        let (d, nt) = (p.dim, self.sampler.n_samples());
        let mt = d * p.len();
        let (mu, rt, rn) = (p.mu[c], p.rho_t[c], p.rho_n[c]);
        let fixed = p.fixed_load(c).is_some();
        let mut z = Vec::with_capacity(d * nt);
        let mut b = Vec::with_capacity(nt);
        for s in 0..nt {
            let lam = self.x_samples[(mt + c) * nt + s];
            let gap = self.y_samples[(mt + c) * nt + s];
            let aug = if fixed { lam } else { lam - rn * gap };
            b.push(mu * aug.max(0.0));
            z.extend((0..d).map(|k| {
                self.x_samples[(c * d + k) * nt + s] - rt * self.y_samples[(c * d + k) * nt + s]
            }));
        }
        (z, b)
    }

    /// Per contact, the least stick margin `1 - |r - rho_T v| / (mu lambda)` over the period
    /// at the last evaluation: positive where it sticks all period.
    pub fn stick_margins(&self) -> &[f64] {
        &self.margins
    }

    /// Number of contacts.
    pub fn contact_count(&self) -> usize {
        self.params.len()
    }

    /// Time histories of forces, kinematics and contact state for the force coefficients `x`.
    pub fn histories(&mut self, x: &[f64]) -> Result<UnilateralHistories, ResidualError> {
        self.sample(x)?;
        let (d, nc, nt) = (self.params.dim, self.params.len(), self.sampler.n_samples());
        let mt = d * nc;
        // Tangential displacement: the structure's displacement coefficients on friction rows.
        let mut disp = vec![0.0; self.len()];
        self.displacement_into(x, &mut disp);
        let mut displacement = vec![0.0; mt * nt];
        self.sampler
            .synthesize_many(&disp[..mt * self.set.n_coeffs()], &mut displacement)?;
        let mut state = Vec::with_capacity(nc * nt);
        for c in 0..nc {
            let (mu, rt, rn) = (
                self.params.mu[c],
                self.params.rho_t[c],
                self.params.rho_n[c],
            );
            for s in 0..nt {
                let lam = self.x_samples[(mt + c) * nt + s];
                let gap = self.y_samples[(mt + c) * nt + s];
                let z: f64 = (0..d)
                    .map(|k| {
                        let i = (c * d + k) * nt + s;
                        (self.x_samples[i] - rt * self.y_samples[i]).powi(2)
                    })
                    .sum::<f64>()
                    .sqrt();
                let closed = self.params.fixed_load(c).is_some() || lam > rn * gap;
                state.push(if !(closed && lam > 0.0) {
                    SampleState::Separated
                } else if z > mu * lam {
                    SampleState::Slip
                } else {
                    SampleState::Stick
                });
            }
        }
        Ok(UnilateralHistories {
            n_samples: nt,
            force: self.x_samples[..mt * nt].to_vec(),
            displacement,
            velocity: self.y_samples[..mt * nt].to_vec(),
            normal_force: self.x_samples[mt * nt..].to_vec(),
            gap: self.y_samples[mt * nt..].to_vec(),
            state,
        })
    }

    /// Displacement coefficients of every row (`Y = G X + Q`, plus `g0` on normal rows).
    fn displacement_into(&self, x: &[f64], out: &mut [f64]) {
        let nco = self.set.n_coeffs();
        let m = self.params.rows();
        let mt = self.friction_rows();
        out.fill(0.0);
        for (j, (h, _, q)) in self.cond.harmonics.iter().enumerate() {
            let Some(p) = self.set.coeff_index(*h) else {
                continue;
            };
            let g = self.cond.g(j);
            let xc = Mat::from_fn(m, 1, |t, _| {
                let b = if *h > 0 { x[t * nco + p + 1] } else { 0.0 };
                c64::new(x[t * nco + p], -b)
            });
            let gx = g * &xc;
            for s in 0..m {
                let y = q[s] + gx[(s, 0)];
                out[s * nco + p] = y.re;
                if *h > 0 {
                    out[s * nco + p + 1] = -y.im;
                }
            }
        }
        if let Some(p0) = self.set.coeff_index(0) {
            for c in 0..self.params.len() {
                out[(mt + c) * nco + p0] += self.params.g0[c];
            }
        }
    }

    /// Coefficients of every contact row's displacement: tangential relative displacement
    /// on friction rows, gap on normal rows.
    pub fn displacement_coeffs(&self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        check_len("contact force coefficients", self.len(), x.len())?;
        let mut out = vec![0.0; self.len()];
        self.displacement_into(x, &mut out);
        Ok(out)
    }
}

/// Adds the Galerkin block `gal` of a `dPsi/dY` derivative times the structure's map from
/// force signal `t` to the law variable of signal `sj` (velocity when `velocity`, else
/// displacement), for each `(t, col0)` of `targets`, into `dst` at rows `row0 ..` and columns
/// `col0 + (cos, sin coefficient of each harmonic)`.
/// The weighted friction equality of one sample and its derivatives (`dim` = `r.len()`).
#[derive(Clone, Copy, Debug, Default)]
struct FrictionSample {
    psi: [f64; 2],
    d_r: [[f64; 2]; 2],
    d_v: [[f64; 2]; 2],
    d_b: [f64; 2],
}

/// `Psi_T = k (r - proj_b(z))`, `k = F clamp(s / max(b, beta F), 1, FACTOR_CAP)`,
/// `z = r - rho_T v`, `s = |z|`, `proj_b` the projection on the disc of radius `b`
/// (docs/contact-3d.md, section 3). A positive factor times `r - proj_b(z)`, so its zero set
/// is Coulomb's law with bound `b` (`r = 0` at `b = 0`: no spurious root), and continuous in
/// `(r, v, b)`. In stick `F rho_T v`; in slip with `b >= beta F` and `s < FACTOR_CAP b` the
/// paper's form times `F / b`, `(F / b) (r s - b z)`.
fn friction(r: &[f64], v: &[f64], b: f64, rho: f64, f: f64) -> FrictionSample {
    match r.len() {
        1 => friction_in::<1>(r, v, b, rho, f),
        _ => friction_in::<2>(r, v, b, rho, f),
    }
}

/// [`friction`] for `D` tangential directions.
fn friction_in<const D: usize>(r: &[f64], v: &[f64], b: f64, rho: f64, f: f64) -> FrictionSample {
    let d = D;
    let mut out = FrictionSample::default();
    let z: [f64; D] = std::array::from_fn(|k| r[k] - rho * v[k]);
    // e = r - P(z), P the projection on the disc of radius b, and dP/dz.
    let disc = crate::disc::project(z, b);
    let (sn, zh) = (disc.norm, disc.unit);
    let mut e = [0.0; 2];
    let mut de_db = [0.0; 2];
    if disc.slip {
        for i in 0..d {
            e[i] = r[i] - disc.factor * z[i];
            de_db[i] = -zh[i];
        }
    } else {
        for i in 0..d {
            // r - z, written so that stick gives exactly rho v.
            e[i] = rho * v[i];
        }
    }
    let dp = disc.jacobian(if disc.slip { disc.factor } else { 1.0 });
    // k = F clamp(s / m, 1, FACTOR_CAP), m = max(b, beta F); its derivatives where it varies.
    let m = b.max(BOUND_FLOOR * f);
    let ratio = sn / m;
    let (k, varies) = if ratio <= 1.0 {
        (f, false)
    } else if ratio >= FACTOR_CAP {
        (f * FACTOR_CAP, false)
    } else {
        (f * ratio, true)
    };
    let mut dk_dz = [0.0; 2];
    let mut dk_db = 0.0;
    if varies {
        for j in 0..d {
            dk_dz[j] = f * zh[j] / m;
        }
        if b > BOUND_FLOOR * f {
            dk_db = -f * sn / (m * m);
        }
    }
    for i in 0..d {
        out.psi[i] = k * e[i];
        for j in 0..d {
            let id = if i == j { 1.0 } else { 0.0 };
            out.d_r[i][j] = k * (id - dp[i][j]) + e[i] * dk_dz[j];
            out.d_v[i][j] = rho * (k * dp[i][j] - e[i] * dk_dz[j]);
        }
        out.d_b[i] = k * de_db[i] + e[i] * dk_db;
    }
    out
}

/// Contact `c`'s unknowns among `nc` contacts of `d` tangential directions, `nco`
/// coefficients per signal: its friction signals' coefficients, then its normal one's.
fn contact_unknowns_of(d: usize, nc: usize, nco: usize, c: usize) -> Vec<usize> {
    (0..d)
        .map(|k| c * d + k)
        .chain([d * nc + c])
        .flat_map(|s| (0..nco).map(move |q| s * nco + q))
        .collect()
}

fn add_structure_columns(
    cond: &CondensedContacts,
    set: &HarmonicSet,
    gal: faer::MatRef<'_, f64>,
    (sj, velocity): (usize, bool),
    targets: impl Iterator<Item = (usize, usize)> + Clone,
    mut dst: MatMut<'_, f64>,
    row0: usize,
) {
    let nco = set.n_coeffs();
    for (j, (h, _, _)) in cond.harmonics.iter().enumerate() {
        let h = *h;
        let Some(p) = set.coeff_index(h) else {
            continue;
        };
        if velocity && h == 0 {
            continue;
        }
        let gm = cond.g(j);
        let factor = if velocity {
            c64::new(0.0, h as f64 * cond.omega)
        } else {
            c64::new(1.0, 0.0)
        };
        for (t, col0) in targets.clone() {
            let gh = factor * gm[(sj, t)];
            let col = col0 + p;
            if h == 0 {
                for r in 0..nco {
                    dst[(row0 + r, col)] += gal[(r, p)] * gh.re;
                }
            } else {
                // (a, b) -> (Re Y, -Im Y) = [[gr, gi], [-gi, gr]] (a, b).
                for r in 0..nco {
                    let (ga, gb) = (gal[(r, p)], gal[(r, p + 1)]);
                    dst[(row0 + r, col)] += ga * gh.re - gb * gh.im;
                    dst[(row0 + r, col + 1)] += ga * gh.im + gb * gh.re;
                }
            }
        }
    }
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

impl UnilateralHistories {
    /// The histories in the layout of every contact kind: tangential signals, and the normal
    /// side apart.
    pub fn into_contact_histories(self) -> ContactHistories {
        ContactHistories {
            n_samples: self.n_samples,
            displacement: self.displacement,
            velocity: self.velocity,
            force: self.force,
            normal: Some(NormalHistories {
                force: self.normal_force,
                gap: self.gap,
                state: self.state,
            }),
        }
    }
}

impl crate::ContactSystem for UnilateralResidual {
    fn len(&self) -> usize {
        UnilateralResidual::len(self)
    }

    fn contact_count(&self) -> usize {
        UnilateralResidual::contact_count(self)
    }

    fn harmonic_set(&self) -> &HarmonicSet {
        UnilateralResidual::harmonic_set(self)
    }

    /// Contact `c`'s friction signals, then its normal signal.
    fn contact_unknowns(&self, c: usize) -> Vec<usize> {
        contact_unknowns_of(self.params.dim, self.params.len(), self.set.n_coeffs(), c)
    }

    fn residual(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError> {
        UnilateralResidual::residual(self, x, g)
    }

    fn residual_and_jacobian(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        j: MatMut<'_, f64>,
    ) -> Result<(), ResidualError> {
        UnilateralResidual::residual_and_jacobian(self, x, g, j)
    }

    fn residual_keep_derivatives(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), ResidualError> {
        UnilateralResidual::residual_keep_derivatives(self, x, g)
    }

    fn jacobian_product(&mut self, v: &[f64], y: &mut [f64]) -> Result<(), ResidualError> {
        UnilateralResidual::jacobian_product(self, v, y)
    }

    fn jacobian_product_then(
        &mut self,
        v: &[f64],
        y: &mut [f64],
        finish: &(dyn Fn(usize, &mut [f64]) + Sync),
    ) -> Result<(), ResidualError> {
        UnilateralResidual::jacobian_product_then(self, v, y, finish)
    }

    fn jacobian_transpose_product(
        &mut self,
        v: &[f64],
        y: &mut [f64],
    ) -> Result<(), ResidualError> {
        UnilateralResidual::jacobian_transpose_product(self, v, y)
    }

    fn contact_jacobian_blocks(&mut self) -> Result<Vec<Mat<f64>>, ResidualError> {
        UnilateralResidual::contact_jacobian_blocks(self)
    }

    fn averaged_harmonic_jacobians(&self) -> Result<Vec<Mat<c64>>, ResidualError> {
        Ok(UnilateralResidual::averaged_harmonic_jacobians(self))
    }

    fn averaged_harmonic_jacobians_to_factor(
        &self,
    ) -> Result<(Vec<Mat<c64>>, bool), ResidualError> {
        let transposed = self.cond.symmetric;
        Ok((self.averaged_harmonic_jacobians_as(transposed), transposed))
    }

    fn histories(&mut self, x: &[f64]) -> Result<ContactHistories, ResidualError> {
        UnilateralResidual::histories(self, x).map(UnilateralHistories::into_contact_histories)
    }

    fn displacement_coeffs(&mut self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        UnilateralResidual::displacement_coeffs(self, x)
    }

    fn mean_slip(&mut self, x: &[f64]) -> Result<Vec<f64>, ResidualError> {
        UnilateralResidual::mean_slip(self, x)
    }

    fn hold_mean_slip(&mut self, positions: &[f64], held: &[bool]) -> Result<(), ResidualError> {
        UnilateralResidual::hold_mean_slip(self, positions, held)
    }

    fn stick_margins(&self) -> Vec<f64> {
        UnilateralResidual::stick_margins(self).to_vec()
    }

    fn stuck_toward(&self, c: usize, current: &[f64], target: &[f64]) -> Vec<f64> {
        UnilateralResidual::stuck_toward(self, c, current, target)
    }

    fn shaken_down(&self, c: usize, current: &[f64], x: &mut [f64]) -> Option<Vec<f64>> {
        UnilateralResidual::shaken_down(self, c, current, x)
    }

    fn linearization(&mut self, x: &[f64]) -> Result<crate::Linearization, ResidualError> {
        UnilateralResidual::linearization(self, x)
    }

    fn tangential_rho(&self) -> Vec<f64> {
        self.params.rho_t.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `r - proj_b(z)`: Coulomb's law as a projection, written independently of `friction`.
    fn coulomb_gap(r: &[f64], v: &[f64], b: f64, rho: f64) -> Vec<f64> {
        let z: Vec<f64> = r.iter().zip(v).map(|(r, v)| r - rho * v).collect();
        let s = z.iter().map(|x| x * x).sum::<f64>().sqrt();
        let t = if s > b { b / s } else { 1.0 };
        r.iter().zip(&z).map(|(r, z)| r - t * z).collect()
    }

    #[test]
    fn friction_is_a_positive_multiple_of_the_projection_law_and_continuous() {
        let (rho, f) = (0.7, 3.0);
        let v = [0.4, -0.9];
        // Along a line in r crossing stick, both slip pieces and back, at bounds from 0 up.
        for &b in &[0.0, 1e-3, 0.05, 0.5, 2.0] {
            for i in 0..=4000 {
                let t = -4.0 + 8.0 * i as f64 / 4000.0;
                let r = [rho * v[0] + t, rho * v[1] + 0.3 * t];
                let out = friction(&r, &v, b, rho, f);
                let gap = coulomb_gap(&r, &v, b, rho);
                // Psi = k gap with one k in [F, F / beta] for both components.
                let k: Vec<f64> = (0..2)
                    .filter(|&c| gap[c].abs() > 1e-9)
                    .map(|c| out.psi[c] / gap[c])
                    .collect();
                for w in k.windows(2) {
                    assert!(
                        (w[0] - w[1]).abs() < 1e-9 * w[0].abs(),
                        "b {b} t {t}: {k:?}"
                    );
                }
                for &k in &k {
                    assert!(
                        k >= f * (1.0 - 1e-12) && k <= f * FACTOR_CAP * (1.0 + 1e-12),
                        "b {b} t {t}: k = {k}"
                    );
                }
            }
            // Continuous across the piece boundaries: stick/slip at s = b, and the clamp of k
            // at s = m and s = m / beta, m = max(b, beta F) (|z| = 1.044 |t| on this line).
            let m = b.max(BOUND_FLOOR * f);
            {
                for t0 in [b, m, m * FACTOR_CAP].into_iter().filter(|&t| t > 0.0) {
                    let t0 = t0 / 1.09f64.sqrt();
                    let at = |t: f64| {
                        let r = [rho * v[0] + t, rho * v[1] + 0.3 * t];
                        friction(&r, &v, b, rho, f).psi
                    };
                    let (lo, hi) = (at(t0 * (1.0 - 1e-10)), at(t0 * (1.0 + 1e-10)));
                    let jump = (0..2).map(|c| (lo[c] - hi[c]).abs()).fold(0.0, f64::max);
                    let size = lo[0].abs().max(lo[1].abs());
                    assert!(jump < 1e-6 * size, "b {b}: jump {jump} at |z| = {t0}");
                }
            }
        }
        // In stick the equality does not depend on the bound: F rho v.
        let r = [0.1, 0.2];
        let a = friction(&r, &v, 5.0, rho, f);
        let b = friction(&r, &v, 50.0, rho, f);
        assert_eq!(a.psi, b.psi);
        assert!((a.psi[0] - f * rho * v[0]).abs() < 1e-15);
        // Open (b = 0) with a large slip: the clamped k, FACTOR_CAP F r.
        let o = friction(&[20.0, -10.0], &v, 0.0, rho, f);
        assert!((o.psi[0] - 20.0 * f * FACTOR_CAP).abs() < 1e-10);
        assert!((o.psi[1] + 10.0 * f * FACTOR_CAP).abs() < 1e-10);
    }

    #[test]
    fn friction_derivatives_equal_finite_differences_in_every_piece() {
        let (rho, f) = (0.7, 3.0);
        let v = [0.4, -0.9];
        // Stick; slip with k = F s / b, clamped at FACTOR_CAP F, below the floor (k = F and
        // k = F s / (beta F)); open.
        let cases = [
            ([0.5, -0.3], 2.0),
            ([1.5, -1.0], 1.0),
            ([80.0, 2.0], 1.0),
            ([0.4, -0.5], 0.1),
            ([1.0, 0.5], 0.1),
            ([1.0, 0.5], 0.0),
        ];
        for (r, b) in cases {
            let out = friction(&r, &v, b, rho, f);
            let h = 1e-6;
            for j in 0..2 {
                let mut rp = r;
                let mut rm = r;
                rp[j] += h;
                rm[j] -= h;
                let (p, m) = (friction(&rp, &v, b, rho, f), friction(&rm, &v, b, rho, f));
                let mut vp = v;
                let mut vm = v;
                vp[j] += h;
                vm[j] -= h;
                let (pv, mv) = (friction(&r, &vp, b, rho, f), friction(&r, &vm, b, rho, f));
                for i in 0..2 {
                    let fd = (p.psi[i] - m.psi[i]) / (2.0 * h);
                    assert!(
                        (fd - out.d_r[i][j]).abs() < 1e-6,
                        "r {r:?} b {b}: d_r[{i}][{j}]"
                    );
                    let fd = (pv.psi[i] - mv.psi[i]) / (2.0 * h);
                    assert!(
                        (fd - out.d_v[i][j]).abs() < 1e-6,
                        "r {r:?} b {b}: d_v[{i}][{j}]"
                    );
                }
            }
            if b > 0.0 {
                let (p, m) = (
                    friction(&r, &v, b + 1e-6, rho, f),
                    friction(&r, &v, b - 1e-6, rho, f),
                );
                for i in 0..2 {
                    let fd = (p.psi[i] - m.psi[i]) / 2e-6;
                    assert!((fd - out.d_b[i]).abs() < 1e-5, "r {r:?} b {b}: d_b[{i}]");
                }
            }
        }
    }
}
