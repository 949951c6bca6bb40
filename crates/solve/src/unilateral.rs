//! Periodic solutions of models with 3-D contacts (normal load that varies and lifts off):
//! the automatic scaling of the equations and the Newton solve of
//! [`ewr_contact::UnilateralResidual`] (`docs/contact-3d.md`).

use crate::newton::{self, EvalError, NewtonOptions, NewtonReport, Residual, pin_empty_rows};
use crate::periodic::{
    HarmonicLu, PointSettings, PointSolution, SolveError, apply_harmonics, dof_response,
    factor_harmonics, initial_stages, stage_samples,
};
use crate::post::summarise;
use ewr_contact::{
    CondensedContacts, ContactHistories, ContactParams, NormalHistories, ResidualError,
    UnilateralParams, UnilateralResidual,
};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceAt};
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, c64};
use rayon::prelude::*;

/// The 3-D contact residual divided by the square of the largest force scale, so that the
/// Newton tolerance is dimensionless as for constant bounds.
pub struct ScaledUnilateral {
    /// The residual being solved.
    pub inner: UnilateralResidual,
    /// `1 / (max F)^2`.
    pub scale: f64,
    /// LU of each contact's diagonal block of the scaled `J` (matrix-free preconditioner).
    blocks: Vec<PartialPivLu<f64>>,
    /// LU of each harmonic's averaged Jacobian, with its coefficient index and whether it
    /// has a sine coefficient (the harmonic level of the two-level preconditioner).
    harmonic: Vec<HarmonicLu>,
}

impl ScaledUnilateral {
    /// `inner` scaled by `scale`.
    pub fn new(inner: UnilateralResidual, scale: f64) -> Self {
        ScaledUnilateral {
            inner,
            scale,
            blocks: Vec::new(),
            harmonic: Vec::new(),
        }
    }

    fn apply_contact_blocks(&self, v: &mut [f64]) {
        for c in 0..self.blocks.len() {
            let idx: Vec<usize> = self.contact_indices(c).collect();
            let mut z: Vec<f64> = idx.iter().map(|&i| v[i]).collect();
            let keep = z.clone();
            let n = z.len();
            self.blocks[c].solve_in_place(faer::MatMut::from_column_major_slice_mut(&mut z, n, 1));
            // A singular block (e.g. a contact whose law derivatives vanish): identity.
            let z = if z.iter().all(|x| x.is_finite()) {
                z
            } else {
                keep
            };
            for (&i, zi) in idx.iter().zip(z) {
                v[i] = zi;
            }
        }
    }

    fn apply_harmonic_blocks(&self, v: &mut [f64]) {
        apply_harmonics(&self.harmonic, self.inner.harmonic_set().n_coeffs(), v);
    }

    /// The unknowns of contact `c`: its friction signals, then its normal signal.
    fn contact_indices(&self, c: usize) -> impl Iterator<Item = usize> + use<> {
        let p = self.inner.params();
        let (d, nc) = (p.dim, p.len());
        let nco = self.inner.harmonic_set().n_coeffs();
        let sigs: Vec<usize> = (0..d).map(|k| c * d + k).chain([d * nc + c]).collect();
        sigs.into_iter()
            .flat_map(move |s| (0..nco).map(move |q| s * nco + q))
    }
}

impl Residual for ScaledUnilateral {
    fn len(&self) -> usize {
        self.inner.len()
    }

    fn evaluate(
        &mut self,
        x: &[f64],
        g: &mut [f64],
        jacobian: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        let s = self.scale;
        match jacobian {
            Some(mut j) => {
                self.inner
                    .residual_and_jacobian(x, g, j.rb_mut())
                    .map_err(|e| EvalError(e.to_string()))?;
                j *= faer::Scale(s);
            }
            None => self
                .inner
                .residual(x, g)
                .map_err(|e| EvalError(e.to_string()))?,
        }
        g.iter_mut().for_each(|v| *v *= s);
        Ok(())
    }

    fn supports_matrix_free(&self) -> bool {
        true
    }

    fn prefers_matrix_free(&self) -> bool {
        self.inner.contact_count() > 1
    }

    fn linearize(&mut self, x: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        let err = |e: ResidualError| EvalError(e.to_string());
        self.inner.residual_keep_derivatives(x, g).map_err(err)?;
        let s = self.scale;
        g.iter_mut().for_each(|v| *v *= s);
        let mut blocks = self.inner.contact_jacobian_blocks().map_err(err)?;
        self.blocks = blocks
            .par_iter_mut()
            .map(|b| {
                *b *= faer::Scale(s);
                pin_empty_rows(b.as_mut(), f64::abs, |a| a);
                b.partial_piv_lu()
            })
            .collect();
        // Refactorised at every linearisation: keeping them while GMRES stays short, as
        // constant bounds do, cost as much GMRES as it saved factorisations on the 3-D sector
        // (measured twice, before and after the continuous friction equality).
        let mut ks = self.inner.averaged_harmonic_jacobians();
        ks.iter_mut()
            .for_each(|k| pin_empty_rows(k.as_mut(), |x| x.norm(), |a| c64::new(a, 0.0)));
        self.harmonic = factor_harmonics(&mut ks, self.inner.harmonic_set(), s);
        Ok(())
    }

    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        self.inner
            .jacobian_product(v, out)
            .map_err(|e| EvalError(e.to_string()))?;
        out.iter_mut().for_each(|y| *y *= self.scale);
        Ok(())
    }

    fn jacobian_transpose_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        self.inner
            .jacobian_transpose_product(v, out)
            .map_err(|e| EvalError(e.to_string()))?;
        out.iter_mut().for_each(|y| *y *= self.scale);
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        // Two-level, as for constant bounds: y = H^-1 v, then y += B^-1 (v - J y).
        let mut y = v.to_vec();
        self.apply_harmonic_blocks(&mut y);
        let mut jy = vec![0.0; v.len()];
        self.jacobian_product(&y, &mut jy)?;
        v.iter_mut().zip(&jy).for_each(|(r, j)| *r -= j);
        self.apply_contact_blocks(v);
        v.iter_mut().zip(&y).for_each(|(r, y)| *r += y);
        Ok(())
    }
}

/// The scalings of the 3-D contact equations at one frequency, from the structure alone:
/// `rho_N = 1 / |G_1,NN|` (force per gap), `rho_T = 1 / (w |G_1,TT|)` (force per velocity),
/// each times the model's `rho` (default 1), and the force scale `F = max(mu, 0.05) lambda_ref`
/// with `lambda_ref` a contact's fixed normal load, else the static normal load the
/// interference and static forcing would give it alone, else the dynamic one. The zero set does not depend on them; Newton's
/// path does (see docs/contact-3d.md, "Scaling").
pub fn auto_params(params: &ContactParams, cond: &CondensedContacts) -> UnilateralParams {
    let normal = params.normal.as_ref().expect("3-D contacts");
    let (d, nc) = (params.dim, params.len());
    let mt = d * nc;
    let get = |h: usize| cond.harmonics.iter().find(|x| x.0 == h);
    let diag = |h: usize, i: usize| get(h).map_or(0.0, |x| x.1[(i, i)].norm());
    let w = cond.omega;
    let mut rho_t = Vec::with_capacity(nc);
    let mut rho_n = Vec::with_capacity(nc);
    let mut force_scale = Vec::with_capacity(nc);
    for c in 0..nc {
        let gt = (0..d).map(|k| diag(1, c * d + k)).fold(0.0, f64::max);
        let gn = diag(1, mt + c);
        let inv = |x: f64| {
            if x > 0.0 && x.is_finite() {
                1.0 / x
            } else {
                1.0
            }
        };
        rho_t.push(params.rho[c] * inv(w * gt));
        rho_n.push(params.rho[c] * inv(gn));
        let stat = get(0).map_or(0.0, |x| {
            let g0n = x.1[(mt + c, mt + c)].norm();
            let closing = -(normal.g0[c] + x.2[mt + c].re);
            if g0n > 0.0 {
                closing.max(0.0) / g0n
            } else {
                0.0
            }
        });
        let dynamic = get(1).map_or(0.0, |x| {
            let g1 = x.1[(mt + c, mt + c)].norm();
            if g1 > 0.0 {
                x.2[mt + c].norm() / g1
            } else {
                0.0
            }
        });
        let lambda_ref = if let Some(n) = normal.load[c].filter(|&n| n > 0.0) {
            n
        } else if stat > 0.0 {
            stat
        } else if dynamic > 0.0 {
            dynamic
        } else {
            1.0
        };
        force_scale.push(normal.mu[c].max(0.05) * lambda_ref);
    }
    UnilateralParams {
        dim: d,
        mu: normal.mu.clone(),
        g0: normal.g0.clone(),
        load: normal.load.clone(),
        rho_t,
        rho_n,
        force_scale,
    }
}

fn system(
    at: &ReceptanceAt<'_>,
    params: &ContactParams,
    set: &HarmonicSet,
    n_samples: usize,
    rho_factor: f64,
) -> Result<ScaledUnilateral, SolveError> {
    let cond = CondensedContacts::from_receptance(at, set)?;
    let mut p = auto_params(params, &cond);
    p.rho_t.iter_mut().for_each(|r| *r *= rho_factor);
    p.rho_n.iter_mut().for_each(|r| *r *= rho_factor);
    scaled_system(cond, set, n_samples, p)
}

/// The scaled 3-D contact system at a prepared frequency with given scalings (arclength
/// continuation fixes them along a curve).
pub(crate) fn scaled_system(
    cond: CondensedContacts,
    set: &HarmonicSet,
    n_samples: usize,
    p: UnilateralParams,
) -> Result<ScaledUnilateral, SolveError> {
    let f = p.force_scale.iter().copied().fold(0.0, f64::max);
    let scale = if f > 0.0 { 1.0 / (f * f) } else { 1.0 };
    let inner = UnilateralResidual::new(cond, set.clone(), n_samples, p)?;
    Ok(ScaledUnilateral::new(inner, scale))
}

/// [`crate::KrylovOptions::stagnation_window`] of 3-D contact solves: contacts stuck all
/// period make `J` nearly singular, and a stagnating GMRES then spent up to its 1000 products
/// per Newton step (17 s on the 200-contact sector). Measured there on 5 points near the
/// resonance: 50 products gave 464 Newton iterations; 100 products with a tenth as the
/// required gain gave more than 1400 (an early-stopped Krylov step is also a regularised one).
pub(crate) const STAGNATION_WINDOW_3D: usize = 50;

/// `opts` with [`STAGNATION_WINDOW_3D`] unless the caller chose a window.
pub(crate) fn with_stagnation_window(opts: &NewtonOptions) -> NewtonOptions {
    let mut o = opts.clone();
    if o.krylov.stagnation_window == 0 {
        o.krylov.stagnation_window = STAGNATION_WINDOW_3D;
    }
    o
}

/// [`NewtonOptions::stall_window`] of a 3-D solve that another `rho` may retry: the stall
/// traced at 4120 rad/s on the 100-contact sector held `||g||` at 0.46 from iteration 80 to
/// its cap of 200 (25 iterations cutting it by less than 5 % from iteration 85), then
/// `rho x 0.1` converged in 10; the slowest real progress traced, the last digits above the
/// tolerance, cut it by 12 % or more per 25 iterations.
const STALL_WINDOW_3D: usize = 25;

/// Factors on both scalings tried when a solve stalls (the zero set does not depend on them).
/// A smaller `rho` first: the stalls traced on the 3-D sectors are local minima of `||g||`
/// that `x 10` crawled out of for its whole iteration budget and `x 0.1` left in about ten
/// iterations (docs/performance.md, "3-D contacts": 200-contact sector, first 63 points of
/// the 100-point sweep 2655 -> 2455 Newton iterations; 100-contact sector 1485 -> 1285).
const RHO_RETRIES: [f64; 3] = [1.0, 0.1, 10.0];

/// As [`crate::solve_point`], for a model with 3-D contacts: the unknowns are the friction
/// and normal forces (`ContactParams::rows` signals), and the harmonic set must hold `h = 0`.
pub fn solve_point(
    rec: &Receptance,
    params: &ContactParams,
    omega: f64,
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    if !settings.set.contains_zero() {
        return Err(SolveError::Residual(ResidualError::Input(format!(
            "the harmonic set {} has no static term h = 0: 3-D contacts carry their preload \
             and mean forces there, use all:{}",
            settings.set,
            settings.set.h_max()
        ))));
    }
    let at = rec.prepare(omega, settings.set.harmonics())?;
    let newton_opts = with_stagnation_window(&settings.newton);
    let m = params.rows();
    let (stages, mut x_set, mut x) = initial_stages(settings, start, m)?;
    let mut iterations = 0;
    let mut krylov = 0;
    let mut last: Option<NewtonReport> = None;
    let mut rho_used = 1.0;
    for stage in &stages {
        let x0 = stage.prolong(&x, &x_set)?;
        let n_samples = stage_samples(stage, &settings.set, settings.n_samples);
        let mut best: Option<NewtonReport> = None;
        for (attempt, rho_factor) in RHO_RETRIES.into_iter().enumerate() {
            let mut sys = system(&at, params, stage, n_samples, rho_factor)?;
            // An attempt that another scaling follows stops at a stall instead of spending
            // the rest of its budget there (x 0.1 too: a stalled x 0.1 run is no closer to a
            // root, and x 10 then gets the whole budget).
            let last = !settings.retry_rho || attempt + 1 == RHO_RETRIES.len();
            let opts = NewtonOptions {
                stall_window: if last { 0 } else { STALL_WINDOW_3D },
                ..newton_opts.clone()
            };
            let mut r = newton::solve(&mut sys, &x0, &opts);
            iterations += r.iterations;
            krylov += r.krylov_iterations;
            if rho_factor != 1.0 && r.status.converged() {
                let mut sys = system(&at, params, stage, n_samples, 1.0)?;
                let polished = newton::solve(&mut sys, &r.x, &newton_opts);
                iterations += polished.iterations;
                krylov += polished.krylov_iterations;
                if polished.status.converged() {
                    r = polished;
                } else {
                    rho_used = rho_factor;
                }
            }
            let done = r.status.converged();
            if best.as_ref().is_none_or(|b| r.residual < b.residual) {
                best = Some(r);
            }
            if done || !settings.retry_rho {
                break;
            }
        }
        let report = best.expect("at least one attempt");
        x = report.x.clone();
        x_set = stage.clone();
        last = Some(report);
    }
    let report = last.expect("at least one stage");
    let x = settings.set.prolong(&x, &x_set)?;
    let mut sys = system(&at, params, &settings.set, settings.n_samples, 1.0)?;
    let uh = sys.inner.histories(&x)?;
    let displacement = sys.inner.displacement_coeffs(&x)?;
    let histories = ContactHistories {
        n_samples: uh.n_samples,
        displacement: uh.displacement,
        velocity: uh.velocity,
        force: uh.force,
        normal: Some(NormalHistories {
            force: uh.normal_force,
            gap: uh.gap,
            state: uh.state,
        }),
    };
    // The stick test of the summary uses the law's tangential rho.
    let mut sp = params.clone();
    sp.rho = sys.inner.params().rho_t.clone();
    let contacts = summarise(&histories, &sp, omega, settings.set.h_max());
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
