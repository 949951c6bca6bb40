//! One periodic solution at one frequency: the E-WR residual of all contacts solved by
//! trust-region Newton, optionally ramping the number of harmonics.

use crate::newton::{self, EvalError, NewtonOptions, NewtonReport, NewtonStatus, Residual};
use crate::post::{ContactSummary, summarise};
use ewr_contact::{ContactHistories, ContactParams, EwrResidual, FrictionLaw, ResidualError};
use ewr_hb::receptance::{Receptance, ReceptanceAt, ReceptanceError};
use ewr_hb::{FourierError, HarmonicSet};
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, c64};
use rayon::prelude::*;
use std::fmt;

/// Why a periodic solution could not be attempted (non-convergence is not an error: it is
/// reported in [`PointSolution::status`]).
#[derive(Debug)]
pub enum SolveError {
    /// The structure could not be condensed at this frequency (e.g. singular `Z_h`).
    Receptance(ReceptanceError),
    /// The residual could not be set up.
    Residual(ResidualError),
    /// A harmonic set or sample count is invalid.
    Fourier(FourierError),
    /// A start vector does not fit.
    Start(String),
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Receptance(e) => write!(f, "condensation: {e}"),
            SolveError::Residual(e) => write!(f, "residual: {e}"),
            SolveError::Fourier(e) => write!(f, "harmonics: {e}"),
            SolveError::Start(e) => write!(f, "start vector: {e}"),
        }
    }
}

impl std::error::Error for SolveError {}

impl From<ReceptanceError> for SolveError {
    fn from(e: ReceptanceError) -> Self {
        SolveError::Receptance(e)
    }
}
impl From<ResidualError> for SolveError {
    fn from(e: ResidualError) -> Self {
        SolveError::Residual(e)
    }
}
impl From<FourierError> for SolveError {
    fn from(e: FourierError) -> Self {
        SolveError::Fourier(e)
    }
}

/// Why `set` cannot carry `model`'s periodic solution, if it cannot: a static load or 3-D
/// contacts (preload and mean forces) need the static term `h = 0`, which a silently dropped
/// term would change the operating point by. Front ends prefix the option's name.
pub fn harmonic_set_problem(model: &ewr_model::Model, set: &HarmonicSet) -> Option<String> {
    let with_zero = || match set.kind() {
        ewr_hb::HarmonicKind::List => format!("0,{set}"),
        _ => format!("all:{}", set.h_max()),
    };
    if let Some(f) = model
        .forcing
        .iter()
        .find(|f| f.harmonic == 0 && !set.contains(0))
    {
        return Some(format!(
            "the model has a static load (DOF {}, harmonic 0), which this set cannot carry; \
             use {}",
            f.dof,
            with_zero()
        ));
    }
    if model.contacts.has_normal() && !set.contains(0) {
        return Some(format!(
            "3-D contacts (normal direction) carry their preload and mean forces in the \
             static term h = 0; use {}",
            with_zero()
        ));
    }
    None
}

/// Default tolerance on the scaled residual of models with constant friction bounds.
pub const DEFAULT_TOL: f64 = 1e-10;

/// Default tolerance of models with 3-D contacts. Their mean friction force of a contact
/// stuck nearly all period is barely fixed by the equations (docs/contact-3d.md, pitfall 3):
/// below about 1e-9 Newton moves it across kinks of the law a per cent at a time, which cost
/// the 200-contact sector sweep twice its time (1077 s against 545 s) for amplitudes that
/// moved less than two sweeps whose modes differ by rounding (docs/performance.md).
pub const DEFAULT_TOL_3D: f64 = 1e-9;

/// The tolerance a front end uses when none is given: [`DEFAULT_TOL_3D`] for 3-D contacts,
/// [`DEFAULT_TOL`] otherwise.
pub fn default_tolerance(model: &ewr_model::Model) -> f64 {
    if model.contacts.has_normal() {
        DEFAULT_TOL_3D
    } else {
        DEFAULT_TOL
    }
}

/// Why `n_samples` cannot sample `set`, if it cannot.
pub fn samples_problem(set: &HarmonicSet, n_samples: usize) -> Option<String> {
    (n_samples <= 2 * set.h_max() || n_samples > ewr_hb::MAX_SAMPLES).then(|| {
        format!(
            "must exceed 2 x the highest harmonic ({}) and be at most {}",
            2 * set.h_max(),
            ewr_hb::MAX_SAMPLES
        )
    })
}

/// How to compute one periodic solution.
#[derive(Clone, Debug)]
pub struct PointSettings {
    /// Harmonics of the friction forces and displacements.
    pub set: HarmonicSet,
    /// Time samples per period for the Galerkin integrals.
    pub n_samples: usize,
    /// The friction law.
    pub law: FrictionLaw,
    /// Newton options; `tol_residual` applies to the scaled residual (see [`scaled_norm`]).
    pub newton: NewtonOptions,
    /// Solve with fewer harmonics first and prolong (paper Table 1: much faster from zero).
    pub ramp: bool,
    /// DOFs whose response is recovered (peak amplitudes in [`PointSolution::dofs`]).
    pub monitor: Vec<usize>,
    /// When a solve stalls, retry it with every `rho` scaled by 10 and by 1/10 (the
    /// solution does not depend on `rho` for the exact and projection laws).
    pub retry_rho: bool,
    /// Preconditioner of the matrix-free path (ignored by dense solves).
    pub preconditioner: Preconditioner,
}

/// Preconditioner `M ~ J` of the matrix-free (GMRES) Newton steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preconditioner {
    /// Block-Jacobi over contacts: each contact's exact diagonal block of `J` (its own
    /// Galerkin blocks with its self-receptance). Exact for one contact; blind to the
    /// coupling of contacts through the structure.
    Contact,
    /// Per harmonic, the Jacobian with period-averaged law derivatives
    /// ([`EwrResidual::averaged_harmonic_jacobians`]): all of the coupling through the
    /// structure, none of the time variation of stick and slip. One complex `m x m` LU per
    /// harmonic.
    Harmonic,
    /// Both, multiplicatively: the harmonic step, then the contact blocks on what is left
    /// (`M^-1 = H^-1 + B^-1 (I - J H^-1)`): one more `J x` per GMRES iteration. The
    /// harmonic factorisation is reused across Newton steps while GMRES stays short.
    #[default]
    TwoLevel,
}

impl std::str::FromStr for Preconditioner {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "contact" => Ok(Preconditioner::Contact),
            "harmonic" => Ok(Preconditioner::Harmonic),
            "two-level" => Ok(Preconditioner::TwoLevel),
            _ => Err(format!(
                "unknown preconditioner '{s}' (expected contact, harmonic or two-level)"
            )),
        }
    }
}

impl fmt::Display for Preconditioner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Preconditioner::Contact => "contact",
            Preconditioner::Harmonic => "harmonic",
            Preconditioner::TwoLevel => "two-level",
        })
    }
}

/// The E-WR residual divided by `(max mu N)^2`, the natural size of `Psi = r max(mu N, |z|)
/// - mu N z` for forces of the order of the bound, so that the tolerance is dimensionless.
///
/// Implements both the dense and the matrix-free interface of [`Residual`]; the matrix-free
/// preconditioner is one of [`Preconditioner`], factorised at every linearisation.
///
/// [`scaled_norm`]: the reported residual is `||g||_2 / (max mu N)^2`.
pub struct ScaledResidual<'a> {
    /// The residual being solved.
    pub inner: EwrResidual<'a>,
    /// `1 / (max mu N)^2` (1 when every bound is 0).
    pub scale: f64,
    kind: Preconditioner,
    /// LU of each contact's diagonal block of the scaled `J`.
    blocks: Vec<PartialPivLu<f64>>,
    /// LU of each harmonic's averaged Jacobian, with the harmonic's coefficient index.
    harmonic: Vec<HarmonicLu>,
    /// Preconditioner applications since the last linearisation (the last GMRES's length).
    applications: usize,
}

/// The harmonic-averaged factorisation (`O(m^3)` per harmonic, the dominant cost with
/// hundreds of contacts) is kept from one Newton step to the next while the GMRES solves it
/// preconditions stay shorter than this; a longer one means it has gone stale.
const HARMONIC_REFRESH_AFTER: usize = 15;

/// Below this many contact rows `m` the harmonic factorisation is cheaper than the GMRES
/// iterations a stale one costs, and is refreshed at every Newton step.
const HARMONIC_REUSE_MIN_ROWS: usize = 256;

impl<'a> ScaledResidual<'a> {
    /// `inner` scaled by `scale` (see [`scaled_norm`]), preconditioned by `kind` on the
    /// matrix-free path.
    pub fn with_preconditioner(inner: EwrResidual<'a>, scale: f64, kind: Preconditioner) -> Self {
        ScaledResidual {
            inner,
            scale,
            kind,
            blocks: Vec::new(),
            harmonic: Vec::new(),
            applications: 0,
        }
    }

    fn factor_contact_blocks(&mut self) -> Result<(), EvalError> {
        let mut blocks = self.inner.contact_jacobian_blocks().map_err(eval_err)?;
        let s = self.scale;
        self.blocks = blocks
            .par_iter_mut()
            .map(|b| {
                *b *= faer::Scale(s);
                b.partial_piv_lu()
            })
            .collect();
        Ok(())
    }

    fn factor_harmonic_blocks(&mut self) -> Result<(), EvalError> {
        let mut ks = self.inner.averaged_harmonic_jacobians().map_err(eval_err)?;
        self.harmonic = factor_harmonics(&mut ks, self.inner.harmonic_set(), self.scale);
        Ok(())
    }

    fn apply_contact_blocks(&self, v: &mut [f64]) {
        if self.blocks.is_empty() {
            return;
        }
        let bs = v.len() / self.blocks.len();
        v.par_chunks_mut(bs)
            .zip(self.blocks.par_iter())
            .for_each(|(chunk, lu)| {
                let keep = chunk.to_vec();
                lu.solve_in_place(faer::MatMut::from_column_major_slice_mut(chunk, bs, 1));
                // A singular block (e.g. a contact whose law derivatives vanish): identity.
                if chunk.iter().any(|x| !x.is_finite()) {
                    chunk.copy_from_slice(&keep);
                }
            });
    }

    fn apply_harmonic_blocks(&self, v: &mut [f64]) {
        apply_harmonics(&self.harmonic, self.inner.harmonic_set().n_coeffs(), v);
    }
}

fn eval_err(e: ResidualError) -> EvalError {
    EvalError(e.to_string())
}

/// A harmonic's LU for the preconditioner: coefficient index, whether it has a sine
/// coefficient, and the factorisation of its (scaled) averaged Jacobian.
pub(crate) type HarmonicLu = (usize, bool, PartialPivLu<c64>);

/// LU of each harmonic's averaged Jacobian `ks` (in the order of `set`), scaled by `scale`.
pub(crate) fn factor_harmonics(
    ks: &mut [faer::Mat<c64>],
    set: &HarmonicSet,
    scale: f64,
) -> Vec<HarmonicLu> {
    ks.par_iter_mut()
        .zip(set.harmonics().par_iter())
        .map(|(k, &h)| {
            *k *= faer::Scale(c64::new(scale, 0.0));
            let p = set.coeff_index(h).expect("h is in the set");
            (p, h > 0, k.partial_piv_lu())
        })
        .collect()
}

/// Applies the harmonic LUs to `v` (hb layout, `nco` coefficients per signal): each harmonic
/// reads and writes its own coefficients only; a singular one leaves them unchanged.
pub(crate) fn apply_harmonics(harmonic: &[HarmonicLu], nco: usize, v: &mut [f64]) {
    if harmonic.is_empty() {
        return;
    }
    let m = v.len() / nco;
    let solved: Vec<Vec<c64>> = harmonic
        .par_iter()
        .map(|(p, sine, lu)| {
            let mut z: Vec<c64> = (0..m)
                .map(|s| {
                    let b = if *sine { v[s * nco + p + 1] } else { 0.0 };
                    c64::new(v[s * nco + p], -b)
                })
                .collect();
            let keep = z.clone();
            lu.solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut z, m, 1));
            if z.iter().any(|x| !x.re.is_finite() || !x.im.is_finite()) {
                return keep;
            }
            z
        })
        .collect();
    for ((p, sine, _), z) in harmonic.iter().zip(&solved) {
        for (s, z) in z.iter().enumerate() {
            v[s * nco + p] = z.re;
            if *sine {
                v[s * nco + p + 1] = -z.im;
            }
        }
    }
}

impl Residual for ScaledResidual<'_> {
    fn len(&self) -> usize {
        self.inner.len()
    }

    fn evaluate(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        jacobian: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        let res = match jacobian {
            Some(mut j) => {
                let r = self.inner.residual_and_jacobian(x, g, j.rb_mut());
                if r.is_ok() {
                    let s = self.scale;
                    for c in 0..j.ncols() {
                        for i in 0..j.nrows() {
                            j[(i, c)] *= s;
                        }
                    }
                }
                r
            }
            None => self.inner.residual(x, g),
        };
        res.map_err(eval_err)?;
        g.iter_mut().for_each(|v| *v *= self.scale);
        Ok(())
    }

    fn supports_matrix_free(&self) -> bool {
        true
    }

    fn prefers_matrix_free(&self) -> bool {
        self.inner.contact_count() > 1
    }

    fn linearize(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        self.inner
            .residual_keep_derivatives(x, g)
            .map_err(eval_err)?;
        g.iter_mut().for_each(|v| *v *= self.scale);
        let m = self.inner.len() / self.inner.harmonic_set().n_coeffs().max(1);
        let stale = self.harmonic.is_empty()
            || self.applications > HARMONIC_REFRESH_AFTER
            || m < HARMONIC_REUSE_MIN_ROWS;
        self.applications = 0;
        match self.kind {
            Preconditioner::Contact => self.factor_contact_blocks(),
            Preconditioner::Harmonic => self.factor_harmonic_blocks(),
            Preconditioner::TwoLevel => {
                self.factor_contact_blocks()?;
                if stale {
                    self.factor_harmonic_blocks()?;
                }
                Ok(())
            }
        }
    }

    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        self.inner.jacobian_product(v, out).map_err(eval_err)?;
        out.iter_mut().for_each(|y| *y *= self.scale);
        Ok(())
    }

    fn jacobian_transpose_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        self.inner
            .jacobian_transpose_product(v, out)
            .map_err(eval_err)?;
        out.iter_mut().for_each(|y| *y *= self.scale);
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        self.applications += 1;
        match self.kind {
            Preconditioner::Contact => self.apply_contact_blocks(v),
            Preconditioner::Harmonic => self.apply_harmonic_blocks(v),
            Preconditioner::TwoLevel => {
                // y = H^-1 v, then y += B^-1 (v - J y).
                let mut y = v.to_vec();
                self.apply_harmonic_blocks(&mut y);
                let mut jy = vec![0.0; v.len()];
                self.jacobian_product(&y, &mut jy)?;
                v.iter_mut().zip(&jy).for_each(|(r, j)| *r -= j);
                self.apply_contact_blocks(v);
                v.iter_mut().zip(&y).for_each(|(r, y)| *r += y);
            }
        }
        Ok(())
    }
}

/// The residual scale `1 / (max mu N)^2`, or 1 when every bound is zero.
pub fn scaled_norm(params: &ContactParams) -> f64 {
    let m = params.mu_n.iter().copied().fold(0.0, f64::max);
    if m > 0.0 { 1.0 / (m * m) } else { 1.0 }
}

/// A periodic solution and what was done to get it.
#[derive(Clone, Debug)]
pub struct PointSolution {
    /// Fundamental circular frequency.
    pub omega: f64,
    /// The harmonic set of `friction`.
    pub set: HarmonicSet,
    /// Friction-force coefficients (hb block layout, signal `c * dim + k`).
    pub friction: Vec<f64>,
    /// Coefficients of the contacts' relative displacement, same layout.
    pub displacement: Vec<f64>,
    /// How the (last stage of the) Newton solve ended.
    pub status: NewtonStatus,
    /// Final scaled residual norm.
    pub residual: f64,
    /// Newton iterations over all ramp stages.
    pub iterations: usize,
    /// GMRES iterations over all ramp stages (0 when every solve was dense).
    pub krylov_iterations: usize,
    /// Factor on every contact's `rho` that the solution satisfies: 1 unless a retry with a
    /// scaled `rho` converged and the final solve with the original `rho` did not.
    pub rho_factor: f64,
    /// Sampled histories at the contacts.
    pub histories: ContactHistories,
    /// Per-contact summary.
    pub contacts: Vec<ContactSummary>,
    /// Response of the monitored DOFs.
    pub dofs: DofResponse,
}

impl PointSolution {
    /// Displacement histories of the monitored DOFs over one period at `n_samples` uniform
    /// samples, DOF-major (`i * n_samples + j`), synthesised from their coefficients.
    pub fn dof_histories(&self, n_samples: usize) -> Result<Vec<f64>, SolveError> {
        let mut out = vec![0.0; self.dofs.dofs.len() * n_samples];
        let mut sampler = ewr_hb::FourierSampler::new(self.set.clone(), n_samples)?;
        sampler.synthesize_many(&self.dofs.coeffs, &mut out)?;
        Ok(out)
    }

    /// Whether each contact sticks at each sample of [`Self::histories`], contact-major
    /// (`c * n_samples + j`): inside one of its stick intervals, the classification of the
    /// summaries.
    pub fn stick_flags(&self) -> Vec<bool> {
        let nt = self.histories.n_samples;
        let period = std::f64::consts::TAU / self.omega;
        let mut out = vec![false; self.contacts.len() * nt];
        for (c, summary) in self.contacts.iter().enumerate() {
            for j in 0..nt {
                let t = period * j as f64 / nt as f64;
                // An interval that wraps past the period ends after T: test t and t + T.
                out[c * nt + j] = summary.stick_intervals.iter().any(|iv| {
                    (iv[0] <= t && t <= iv[1]) || (iv[0] <= t + period && t + period <= iv[1])
                });
            }
        }
        out
    }

    /// The fraction of the period each contact sticks (length of its stick intervals over
    /// the period).
    pub fn stick_fractions(&self) -> Vec<f64> {
        let period = std::f64::consts::TAU / self.omega;
        self.contacts
            .iter()
            .map(|c| {
                let stuck: f64 = c.stick_intervals.iter().map(|i| i[1] - i[0]).sum();
                // `+ 0.0`: an empty sum is -0.0, which would print as "-0%".
                (stuck / period).clamp(0.0, 1.0) + 0.0
            })
            .collect()
    }
}

/// The response of the monitored DOFs, recovered from the contact forces.
#[derive(Clone, Debug, Default)]
pub struct DofResponse {
    /// The DOFs, as in [`PointSettings::monitor`].
    pub dofs: Vec<usize>,
    /// Displacement coefficients per DOF (hb layout, DOF-major).
    pub coeffs: Vec<f64>,
    /// Peak `max_t |u_i(t)|` per DOF.
    pub peak: Vec<f64>,
    /// `max_t sqrt(sum_i u_i(t)^2)` over the monitored DOFs (the paper's "total amplitude").
    pub norm_peak: f64,
}

/// The maximum of a periodic sampled function `f(0..n)`, refined by the vertex of the
/// parabola through the largest sample and its neighbours.
fn refined_max(n: usize, f: impl Fn(usize) -> f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (j, fj) = (0..n)
        .map(|j| (j, f(j)))
        .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
    let (fm, fp) = (f((j + n - 1) % n), f((j + 1) % n));
    let curv = fm - 2.0 * fj + fp;
    if curv < 0.0 {
        let x = 0.5 * (fm - fp) / curv;
        (fj - 0.25 * (fm - fp) * x).max(fj)
    } else {
        fj
    }
}

/// Recovers the monitored DOFs' response for friction coefficients `x` on `set`.
pub(crate) fn dof_response(
    at: &ewr_hb::receptance::ReceptanceAt<'_>,
    set: &HarmonicSet,
    n_samples: usize,
    m: usize,
    x: &[f64],
    dofs: &[usize],
) -> Result<DofResponse, SolveError> {
    let nco = set.n_coeffs();
    let mut coeffs = vec![0.0; dofs.len() * nco];
    for &h in set.harmonics() {
        let p = set.coeff_index(h).expect("h is in the set");
        let r: Vec<faer::c64> = (0..m)
            .map(|s| {
                let b = if h > 0 { x[s * nco + p + 1] } else { 0.0 };
                faer::c64::new(x[s * nco + p], -b)
            })
            .collect();
        let u = at.recover(h, &r, Some(dofs))?;
        for (i, u) in u.iter().enumerate() {
            coeffs[i * nco + p] = u.re;
            if h > 0 {
                coeffs[i * nco + p + 1] = -u.im;
            }
        }
    }
    // Peaks are read on a finer grid than the Galerkin one and refined by a parabola through
    // the largest sample, so that they do not depend on where the samples happen to fall.
    let n_fine = (4 * n_samples).max(64);
    let mut sampler = ewr_hb::FourierSampler::new(set.clone(), n_fine)?;
    let mut samples = vec![0.0; dofs.len() * n_fine];
    sampler.synthesize_many(&coeffs, &mut samples)?;
    let peak = (0..dofs.len())
        .map(|i| {
            let u = &samples[i * n_fine..(i + 1) * n_fine];
            refined_max(n_fine, |j| u[j].abs())
        })
        .collect();
    let norm_peak = refined_max(n_fine, |j| {
        (0..dofs.len())
            .map(|i| samples[i * n_fine + j].powi(2))
            .sum::<f64>()
            .sqrt()
    });
    Ok(DofResponse {
        dofs: dofs.to_vec(),
        coeffs,
        peak,
        norm_peak,
    })
}

/// Factors applied to every contact's `rho` on successive attempts at a stage.
const RHO_RETRIES: [f64; 3] = [1.0, 10.0, 0.1];

/// The harmonic sets of a ramp towards `target`: a few harmonics, then doubling.
pub fn ramp_sets(target: &HarmonicSet) -> Vec<HarmonicSet> {
    let h_max = target.h_max();
    let mut out = Vec::new();
    // Start from the single harmonic: its solution is nearly always reached from zero
    // force, and each doubling then starts close to its answer.
    let mut h = 1usize;
    while h < h_max {
        if let Some(s) = target.up_to(h)
            && out.last() != Some(&s)
        {
            out.push(s);
        }
        h = 2 * h + 1;
    }
    out.push(target.clone());
    out
}

/// Fewest samples of a ramp stage: with fewer, the first stages of a point from zero force
/// (long stick phases, few harmonics) need more Newton iterations than they save (measured on
/// the first point of Fig. 5, which the default 512 samples of odd:59 keep unchanged).
pub const STAGE_MIN_SAMPLES: usize = 512;

/// Time samples of a ramp stage: the final set's samples scaled down with the number of
/// harmonics (same samples per harmonic, a power of two, at least [`STAGE_MIN_SAMPLES`]), the
/// final count for the final set. An early stage only gives the next one its start, and its Galerkin
/// integrals of 4096 or 16384 samples for one harmonic cost FFTs that do not change where the
/// final stage converges.
pub fn stage_samples(stage: &HarmonicSet, target: &HarmonicSet, n_samples: usize) -> usize {
    if stage == target {
        return n_samples;
    }
    let scaled =
        (n_samples as u128 * (stage.h_max() as u128 + 1)).div_ceil(target.h_max() as u128 + 1);
    let scaled = (scaled as usize).max(STAGE_MIN_SAMPLES).next_power_of_two();
    scaled.max(2 * stage.h_max() + 2).min(n_samples)
}

/// The harmonic sets to solve on in turn (a ramp from zero force, or just the target from a
/// given start) and the start on its own set, for `m` force signals.
pub(crate) fn initial_stages(
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
    m: usize,
) -> Result<(Vec<HarmonicSet>, HarmonicSet, Vec<f64>), SolveError> {
    let stages = match start {
        Some(_) => vec![settings.set.clone()],
        None if settings.ramp => ramp_sets(&settings.set),
        None => vec![settings.set.clone()],
    };
    let (x_set, x) = match start {
        Some((set, x)) => {
            if x.len() != m * set.n_coeffs() {
                return Err(SolveError::Start(format!(
                    "{} coefficients given, {} expected for {set}",
                    x.len(),
                    m * set.n_coeffs()
                )));
            }
            (set.clone(), x.to_vec())
        }
        None => (stages[0].clone(), vec![0.0; m * stages[0].n_coeffs()]),
    };
    Ok((stages, x_set, x))
}

/// `params` with `rho_auto` resolved at the prepared frequency: each contact's `rho` times
/// `1 / (h w max_k |G_h,kk|)` on the lowest positive harmonic `h` of `set` (a force per
/// velocity, as `rho_T` of 3-D contacts); unchanged without `rho_auto` or for 3-D contacts,
/// which scale themselves.
pub(crate) fn resolve_rho(
    at: &ReceptanceAt<'_>,
    set: &HarmonicSet,
    params: &ContactParams,
) -> Result<ContactParams, SolveError> {
    let mut p = params.clone();
    if !p.rho_auto || p.normal.is_some() {
        return Ok(p);
    }
    p.rho_auto = false;
    let Some(&h) = set.harmonics().iter().find(|&&h| h > 0) else {
        return Ok(p);
    };
    let w = at.frequency();
    for c in 0..p.len() {
        let block = at.diagonal_block(h, c * p.dim, p.dim)?;
        let g = (0..p.dim).map(|k| block[(k, k)].norm()).fold(0.0, f64::max);
        let velocity_per_force = h as f64 * w * g;
        if velocity_per_force > 0.0 && velocity_per_force.is_finite() {
            p.rho[c] /= velocity_per_force;
        }
    }
    Ok(p)
}

/// Solves for the periodic response at `omega`, from `start` (coefficients on some harmonic
/// set, prolonged to `settings.set`) or from zero friction force.
pub fn solve_point(
    rec: &Receptance,
    params: &ContactParams,
    omega: f64,
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    if params.normal.is_some() {
        return crate::unilateral::solve_point(rec, params, omega, settings, start);
    }
    let at = rec.prepare(omega, settings.set.harmonics())?;
    let resolved = resolve_rho(&at, &settings.set, params)?;
    let params = &resolved;
    let scale = scaled_norm(params);
    let m = params.dim * params.len();
    let (stages, mut x_set, mut x) = initial_stages(settings, start, m)?;
    let mut iterations = 0;
    let mut krylov = 0;
    let mut rho_used = 1.0;
    let mut last: Option<NewtonReport> = None;
    for stage in &stages {
        let x0 = stage.prolong(&x, &x_set)?;
        let n_samples = stage_samples(stage, &settings.set, settings.n_samples);
        let mut report = None;
        // The zero set of the E-WR law is Coulomb's law whatever rho is, so rho mostly
        // changes Newton's path: when a solve stalls in a local minimum of ||g||, the
        // equations with rho scaled by 10 or 1/10 usually get through (paper Table 1). Their
        // Galerkin solution differs from the original rho's by the truncation error only, and
        // is then used as the start of a final solve with the original rho.
        for rho_factor in RHO_RETRIES {
            let mut p = params.clone();
            p.rho.iter_mut().for_each(|r| *r *= rho_factor);
            let sys = EwrResidual::new(&at, stage.clone(), n_samples, settings.law, p)?;
            let mut scaled =
                ScaledResidual::with_preconditioner(sys, scale, settings.preconditioner);
            let mut r = newton::solve(&mut scaled, &x0, &settings.newton);
            iterations += r.iterations;
            krylov += r.krylov_iterations;
            if rho_factor != 1.0 && r.status.converged() {
                let sys =
                    EwrResidual::new(&at, stage.clone(), n_samples, settings.law, params.clone())?;
                let mut scaled =
                    ScaledResidual::with_preconditioner(sys, scale, settings.preconditioner);
                let polished = newton::solve(&mut scaled, &r.x, &settings.newton);
                iterations += polished.iterations;
                krylov += polished.krylov_iterations;
                if polished.status.converged() {
                    r = polished;
                } else {
                    rho_used = rho_factor;
                }
            }
            let done = r.status.converged();
            let better = report
                .as_ref()
                .is_none_or(|b: &NewtonReport| r.residual < b.residual);
            if better {
                report = Some(r);
            }
            // Only the exact and projection laws have a zero set that does not depend on rho.
            if done
                || !settings.retry_rho
                || !matches!(settings.law, FrictionLaw::Exact | FrictionLaw::Projection)
            {
                break;
            }
        }
        let report = report.expect("at least one attempt");
        // A stage that did not converge still gives the next one a better start than zero;
        // only the last stage's status counts.
        x = report.x.clone();
        x_set = stage.clone();
        last = Some(report);
    }
    let report = last.expect("at least one stage");
    let x = settings.set.prolong(&x, &x_set)?;
    let mut sys = EwrResidual::new(
        &at,
        settings.set.clone(),
        settings.n_samples,
        settings.law,
        params.clone(),
    )?;
    let histories = sys.histories(&x)?;
    let displacement = sys.displacement_coeffs(&x)?;
    let contacts = summarise(&histories, params, omega, settings.set.h_max());
    let dofs = dof_response(
        &at,
        &settings.set,
        settings.n_samples,
        m,
        &x,
        &settings.monitor,
    )?;
    Ok(PointSolution {
        omega,
        set: settings.set.clone(),
        friction: x,
        displacement,
        status: report.status,
        residual: report.residual,
        iterations,
        krylov_iterations: krylov,
        rho_factor: rho_used,
        histories,
        contacts,
        dofs,
    })
}
