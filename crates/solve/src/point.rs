//! One periodic solution at one frequency, for every contact kind: the kind's scaled E-WR
//! system ([`ScaledContacts`]) solved by trust-region Newton along the harmonic ramp, with
//! `rho` retries where a solve stalls, then post-processed (histories, summaries, the
//! monitored DOFs).

use crate::newton::{self, NewtonOptions, NewtonReport};
use crate::periodic::{
    Amplitude, DofResponse, PointSettings, PointSolution, SolveError, scaled_norm,
};
use crate::post::summarise;
use crate::ramp::{initial_stages, stage_samples};
use crate::scaled::{Policy, ScaledContacts};
use crate::unilateral::{STALL_WINDOW_3D, auto_params, with_stagnation_window};
use ewr_contact::{
    CondensedContacts, ContactParams, EwrResidual, FrictionLaw, ResidualError, UnilateralResidual,
};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceAt};

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

/// The amplitude of each of `nd` signals (coefficients on `set`, hb layout) and of the vector
/// of them, in the measure `measure`. Maxima are read on a finer grid than the Galerkin one
/// (`n_samples`) and refined by a parabola through the largest sample, so that they do not
/// depend on where the samples happen to fall.
pub(crate) fn amplitudes(
    set: &HarmonicSet,
    n_samples: usize,
    nd: usize,
    coeffs: &[f64],
    measure: Amplitude,
) -> Result<(Vec<f64>, f64), SolveError> {
    let nco = set.n_coeffs();
    // The part of the series the measure reads.
    let mut part = coeffs.to_vec();
    for &h in set.harmonics() {
        let drop = match measure {
            Amplitude::Dynamic => h == 0,
            Amplitude::H1 => h != 1,
            Amplitude::Max | Amplitude::PeakToPeak => false,
        };
        if drop {
            let p = set.coeff_index(h).expect("h is in the set");
            let w = if h > 0 { 2 } else { 1 };
            for s in 0..nd {
                part[s * nco + p..s * nco + p + w].fill(0.0);
            }
        }
    }
    let n_fine = (4 * n_samples).max(64);
    let mut sampler = ewr_hb::FourierSampler::new(set.clone(), n_fine)?;
    let mut samples = vec![0.0; nd * n_fine];
    sampler.synthesize_many(&part, &mut samples)?;
    if measure == Amplitude::PeakToPeak {
        let peak: Vec<f64> = (0..nd)
            .map(|i| {
                let u = &samples[i * n_fine..(i + 1) * n_fine];
                refined_max(n_fine, |j| u[j]) + refined_max(n_fine, |j| -u[j])
            })
            .collect();
        // The largest distance between two instants, on a grid of at most 512 samples (the
        // pairs grow as its square); exact for one DOF, where it is the per-DOF value.
        let norm = if nd == 1 {
            peak.first().copied().unwrap_or(0.0)
        } else {
            let stride = n_fine.div_ceil(512).max(1);
            let pts: Vec<usize> = (0..n_fine).step_by(stride).collect();
            let mut best = 0.0f64;
            for (a, &i) in pts.iter().enumerate() {
                for &j in &pts[a + 1..] {
                    let d2: f64 = (0..nd)
                        .map(|k| (samples[k * n_fine + i] - samples[k * n_fine + j]).powi(2))
                        .sum();
                    best = best.max(d2);
                }
            }
            best.sqrt()
        };
        return Ok((peak, norm));
    }
    let peak = (0..nd)
        .map(|i| {
            let u = &samples[i * n_fine..(i + 1) * n_fine];
            refined_max(n_fine, |j| u[j].abs())
        })
        .collect();
    let norm_peak = refined_max(n_fine, |j| {
        (0..nd)
            .map(|i| samples[i * n_fine + j].powi(2))
            .sum::<f64>()
            .sqrt()
    });
    Ok((peak, norm_peak))
}

/// Recovers the monitored DOFs' response for friction coefficients `x` on `set`, with its
/// amplitudes in the measure `measure`.
pub(crate) fn dof_response(
    at: &ewr_hb::receptance::ReceptanceAt<'_>,
    set: &HarmonicSet,
    n_samples: usize,
    m: usize,
    x: &[f64],
    dofs: &[usize],
    measure: Amplitude,
) -> Result<DofResponse, SolveError> {
    let coeffs = dof_coefficients(at, set, m, x, dofs)?;
    let (peak, norm_peak) = amplitudes(set, n_samples, dofs.len(), &coeffs, measure)?;
    Ok(DofResponse {
        dofs: dofs.to_vec(),
        coeffs,
        peak,
        norm_peak,
    })
}

/// The displacement coefficients of `dofs` (hb layout, DOF-major) for the contact forces `x`
/// (`m` rows on `set`): [`dof_response`] without the amplitudes, which synthesise every DOF
/// on a fine grid (a nonlinear mode's shapes need the coefficients of every DOF only).
pub(crate) fn dof_coefficients(
    at: &ewr_hb::receptance::ReceptanceAt<'_>,
    set: &HarmonicSet,
    m: usize,
    x: &[f64],
    dofs: &[usize],
) -> Result<Vec<f64>, SolveError> {
    let nco = set.n_coeffs();
    let mut coeffs = vec![0.0; dofs.len() * nco];
    let forces: Vec<(usize, Vec<faer::c64>)> = set
        .harmonics()
        .iter()
        .map(|&h| {
            let p = set.coeff_index(h).expect("h is in the set");
            let r = (0..m)
                .map(|s| {
                    let b = if h > 0 { x[s * nco + p + 1] } else { 0.0 };
                    faer::c64::new(x[s * nco + p], -b)
                })
                .collect();
            (h, r)
        })
        .collect();
    // Beyond the DOFs a receptance recovers from cached columns, every DOF of every harmonic
    // at once: one static solve for the whole set where the receptance is modal (a nonlinear
    // mode's shape of every DOF, 49 s of 279 on a 108k-DOF sector one harmonic at a time).
    let every = (dofs.len() > ewr_hb::receptance::RECOVER_AT_MAX_DOFS.max(at.n_dofs() / 4))
        .then(|| {
            let loads: Vec<(usize, &[faer::c64])> =
                forces.iter().map(|(h, r)| (*h, r.as_slice())).collect();
            at.recover_every(&loads)
        })
        .transpose()?;
    for (k, (h, r)) in forces.iter().enumerate() {
        let (h, p) = (*h, set.coeff_index(*h).expect("h is in the set"));
        let u = match &every {
            Some(all) => dofs.iter().map(|&d| all[k][d]).collect(),
            None => at.recover(h, r, Some(dofs))?,
        };
        for (i, u) in u.iter().enumerate() {
            coeffs[i * nco + p] = u.re;
            if h > 0 {
                coeffs[i * nco + p + 1] = -u.im;
            }
        }
    }
    Ok(coeffs)
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

/// A model's contacts as the point solver treats them: the kind of their equations and what
/// is fixed for the whole solve at one frequency.
pub(crate) enum Kind {
    /// Constant friction bounds `mu N`: `rho` resolved at the frequency, the residual scale
    /// `1 / (max mu N)^2`.
    ConstantBounds {
        params: ContactParams,
        scale: f64,
        law: FrictionLaw,
        preconditioner: crate::periodic::Preconditioner,
    },
    /// 3-D contacts (a unilateral normal): their scalings come from the structure at each
    /// system ([`auto_params`]).
    Unilateral { params: ContactParams },
}

impl Kind {
    /// The kind of `params` at the frequency of `at`.
    pub(crate) fn at(
        at: &ReceptanceAt<'_>,
        params: &ContactParams,
        settings: &PointSettings,
    ) -> Result<Kind, SolveError> {
        if params.normal.is_some() {
            return Ok(Kind::Unilateral {
                params: params.clone(),
            });
        }
        let params = resolve_rho(at, &settings.set, params)?;
        Ok(Kind::ConstantBounds {
            scale: scaled_norm(&params),
            params,
            law: settings.law,
            preconditioner: settings.preconditioner,
        })
    }

    /// Factors on `rho` tried in turn where a solve stalls (the zero set does not depend on
    /// them). 3-D contacts try a smaller `rho` first: the stalls traced on the 3-D sectors are
    /// local minima of `||g||` that `x 10` crawled out of for its whole iteration budget and
    /// `x 0.1` left in about ten iterations (docs/performance.md, "3-D contacts": 200-contact
    /// sector, first 63 points of the 100-point sweep 2655 -> 2455 Newton iterations;
    /// 100-contact sector 1485 -> 1285).
    fn rho_retries(&self) -> [f64; 3] {
        match self {
            Kind::ConstantBounds { .. } => [1.0, 10.0, 0.1],
            Kind::Unilateral { .. } => [1.0, 0.1, 10.0],
        }
    }

    /// Whether another `rho` may be tried: only the exact and projection laws have a zero set
    /// that does not depend on it (3-D contacts always do).
    fn retry_allowed(&self) -> bool {
        match self {
            Kind::ConstantBounds { law, .. } => {
                matches!(law, FrictionLaw::Exact | FrictionLaw::Projection)
            }
            Kind::Unilateral { .. } => true,
        }
    }

    /// Newton's options for every solve of the point.
    fn newton_options(&self, opts: &NewtonOptions) -> NewtonOptions {
        match self {
            Kind::ConstantBounds { .. } => opts.clone(),
            Kind::Unilateral { .. } => with_stagnation_window(opts),
        }
    }

    /// Newton's options for one attempt: a 3-D attempt that another scaling follows stops at
    /// a stall instead of spending the rest of its budget there (`x 0.1` too: a stalled
    /// `x 0.1` run is no closer to a root, and `x 10` then gets the whole budget).
    fn attempt_options(&self, opts: &NewtonOptions, last: bool) -> NewtonOptions {
        match self {
            Kind::ConstantBounds { .. } => opts.clone(),
            Kind::Unilateral { .. } => NewtonOptions {
                stall_window: if last { 0 } else { STALL_WINDOW_3D },
                ..opts.clone()
            },
        }
    }

    /// The scaled system at the frequency of `at` on `set`, with every `rho` times
    /// `rho_factor`.
    pub(crate) fn system<'a>(
        &self,
        at: &'a ReceptanceAt<'a>,
        set: &HarmonicSet,
        n_samples: usize,
        rho_factor: f64,
    ) -> Result<ScaledContacts<'a>, SolveError> {
        match self {
            Kind::ConstantBounds {
                params,
                scale,
                law,
                preconditioner,
            } => {
                let mut p = params.clone();
                if rho_factor != 1.0 {
                    p.rho.iter_mut().for_each(|r| *r *= rho_factor);
                }
                let sys = EwrResidual::new(at, set.clone(), n_samples, *law, p)?;
                Ok(constant_bounds_system(sys, *scale, *preconditioner))
            }
            Kind::Unilateral { params } => {
                let cond = {
                    let _t = crate::profile::span(crate::profile::Phase::Condense);
                    CondensedContacts::from_receptance(at, set)?
                };
                let mut p = auto_params(params, &cond);
                p.rho_t.iter_mut().for_each(|r| *r *= rho_factor);
                p.rho_n.iter_mut().for_each(|r| *r *= rho_factor);
                unilateral_system(cond, set, n_samples, p)
            }
        }
    }

    /// [`Kind::system`] owning the prepared receptance, for a system kept beyond the call that
    /// prepared it (a nonlinear mode's matrix-free linearisation); `None` for 3-D contacts,
    /// whose systems own their condensation anyway ([`unilateral_system`]).
    pub(crate) fn system_owning<'a>(
        &self,
        at: ReceptanceAt<'a>,
        set: &HarmonicSet,
        n_samples: usize,
    ) -> Result<Option<ScaledContacts<'a>>, SolveError> {
        match self {
            Kind::ConstantBounds {
                params,
                scale,
                law,
                preconditioner,
            } => {
                let sys = EwrResidual::owning(at, set.clone(), n_samples, *law, params.clone())?;
                Ok(Some(constant_bounds_system(sys, *scale, *preconditioner)))
            }
            Kind::Unilateral { .. } => Ok(None),
        }
    }

    /// The contacts' parameters the summaries read, with the tangential `rho` the law was
    /// solved with.
    fn summary_params(&self, sys: &ScaledContacts<'_>) -> ContactParams {
        let mut p = match self {
            Kind::ConstantBounds { params, .. } | Kind::Unilateral { params } => params.clone(),
        };
        p.rho = sys.inner.tangential_rho();
        p
    }
}

/// A constant-bound E-WR system scaled by `scale` with its preconditioner's policy.
fn constant_bounds_system<'a>(
    sys: EwrResidual<'a>,
    scale: f64,
    preconditioner: crate::periodic::Preconditioner,
) -> ScaledContacts<'a> {
    ScaledContacts::new(
        Box::new(sys),
        scale,
        Policy::constant_bounds(preconditioner),
    )
}

/// Which contacts a system holds, and where (docs/stuck-contacts.md, section 3).
#[derive(Debug)]
pub(crate) struct HeldContacts {
    /// Held mean slip position per friction row.
    positions: Vec<f64>,
    /// Per contact: held.
    held: Vec<bool>,
    /// Per contact: its position at the reference was tried (a contact that slips there and
    /// is released is next held where it re-sticks).
    tried: Vec<bool>,
    /// Per contact: moved once where a stepped sine's slip would stick it again, after it
    /// slipped where it was held (released if it slips there too).
    shaken: Vec<bool>,
}

/// Holds `sys`'s contacts that stick all period at `held` (a solution, prolonged to `set`, the
/// system's harmonics) where they are there; nothing is held without it. Returns the hold, for
/// [`solve_holding`]'s active set.
pub(crate) fn hold(
    sys: &mut ScaledContacts<'_>,
    set: &HarmonicSet,
    held: Option<(&HarmonicSet, &[f64])>,
) -> Result<Option<HeldContacts>, SolveError> {
    let Some((from, x)) = held else {
        return Ok(None);
    };
    let x = set.prolong(x, from)?;
    if x.len() != sys.inner.len() {
        return Err(SolveError::Start(format!(
            "held solution: {} coefficients, {} expected",
            x.len(),
            sys.inner.len()
        )));
    }
    let positions = sys.inner.mean_slip(&x)?;
    if positions.is_empty() {
        return Ok(None);
    }
    let mut g = vec![0.0; x.len()];
    sys.inner.residual(&x, &mut g)?;
    let flags: Vec<bool> = sys
        .inner
        .stick_margins()
        .iter()
        .map(|&m| m >= -ewr_contact::HOLD_MARGIN)
        .collect();
    sys.inner.hold_mean_slip(&positions, &flags)?;
    Ok(Some(HeldContacts {
        positions,
        tried: flags.clone(),
        shaken: vec![false; flags.len()],
        held: flags,
    }))
}

/// Most rounds of [`solve_holding`]'s active set.
const HOLD_ROUNDS: usize = 8;

/// Residual tolerance (scaled, as `NewtonOptions::tol_residual`) of the rounds whose held set
/// may still change: margins this close decide the same contacts as converged ones, at a
/// fraction of the iterations.
const HOLD_ROUND_TOLERANCE: f64 = 1e-6;

/// Newton on `sys` with its active set of held contacts (docs/stuck-contacts.md, section 3):
/// solved with the contacts held as `hold` says (as [`hold`] applied it to `sys`), then a
/// held contact that slips beyond `HOLD_MARGIN` is moved once where a stepped sine's slip would
/// leave it (`shaken_down`) and released to the law if it cannot stick or slips there too, and
/// a free one that
/// sticks all period is held (first where it was at the reference, then, if that makes it
/// slip, where it re-stuck), and solved again from that solution, until no contact changes.
/// Each solve's hold is linear in the unknowns, so it converges as fast as the law alone.
pub(crate) fn solve_holding(
    sys: &mut ScaledContacts<'_>,
    x0: &[f64],
    opts: &newton::NewtonOptions,
    hold: Option<HeldContacts>,
) -> Result<newton::NewtonReport, SolveError> {
    let Some(mut hold) = hold else {
        return Ok(newton::solve(sys, x0, opts));
    };
    let dim = hold.positions.len() / hold.held.len().max(1);
    let mut x = x0.to_vec();
    let mut g = vec![0.0; x.len()];
    let (mut iterations, mut evaluations, mut krylov) = (0, 0, 0);
    // Rounds whose held set may still change are solved to a loose tolerance; once a round
    // changes nothing, its solution is polished to the full one and checked again.
    let loose = newton::NewtonOptions {
        tol_residual: opts.tol_residual.max(HOLD_ROUND_TOLERANCE),
        ..opts.clone()
    };
    let mut precise = false;
    for round in 0.. {
        let last = round + 1 == HOLD_ROUNDS;
        let o = if precise || last { opts } else { &loose };
        let mut r = newton::solve(sys, &x, o);
        r.iterations += iterations;
        r.evaluations += evaluations;
        r.krylov_iterations += krylov;
        if !r.status.converged() || last {
            return Ok(r);
        }
        sys.inner.residual(&r.x, &mut g)?;
        let positions = sys.inner.mean_slip(&r.x)?;
        let mut changed = false;
        for (c, &m) in sys.inner.stick_margins().iter().enumerate() {
            if hold.held[c] && m < -ewr_contact::HOLD_MARGIN {
                // Held where it cannot stick: held instead where the slip of a stepped sine
                // would leave it, once; released to the law if it slips there too, or if no
                // mean force sticks it.
                let rows = c * dim..(c + 1) * dim;
                let moved = (!hold.shaken[c])
                    .then(|| sys.inner.shaken_down(c, &positions[rows.clone()], &mut r.x))
                    .flatten();
                match moved {
                    Some(at) => {
                        hold.positions[rows].copy_from_slice(&at);
                        hold.shaken[c] = true;
                    }
                    None => hold.held[c] = false,
                }
                changed = true;
            } else if !hold.held[c] && m >= -ewr_contact::STICK_MARGIN {
                let rows = c * dim..(c + 1) * dim;
                let at = if hold.tried[c] {
                    positions[rows.clone()].to_vec()
                } else {
                    sys.inner.stuck_toward(
                        c,
                        &positions[rows.clone()],
                        &hold.positions[rows.clone()],
                    )
                };
                hold.positions[rows].copy_from_slice(&at);
                hold.tried[c] = true;
                hold.held[c] = true;
                changed = true;
            }
        }
        if !changed && o.tol_residual <= opts.tol_residual {
            return Ok(r);
        }
        precise = !changed;
        sys.inner.hold_mean_slip(&hold.positions, &hold.held)?;
        iterations = r.iterations;
        evaluations = r.evaluations + 1;
        krylov = r.krylov_iterations;
        x = r.x;
    }
    unreachable!("the loop returns")
}

/// The scaled 3-D contact system with given scalings (arclength continuation fixes them along
/// a curve): divided by the square of the largest force scale.
pub(crate) fn unilateral_system(
    cond: CondensedContacts,
    set: &HarmonicSet,
    n_samples: usize,
    p: ewr_contact::UnilateralParams,
) -> Result<ScaledContacts<'static>, SolveError> {
    let f = p.force_scale.iter().copied().fold(0.0, f64::max);
    let scale = if f > 0.0 { 1.0 / (f * f) } else { 1.0 };
    let inner = UnilateralResidual::new(cond, set.clone(), n_samples, p)?;
    Ok(ScaledContacts::new(
        Box::new(inner),
        scale,
        Policy::unilateral(),
    ))
}

/// Solves for the periodic response at `omega`, from `start` (coefficients on some harmonic
/// set, prolonged to `settings.set`) or from zero force. For 3-D contacts the unknowns are the
/// friction and normal forces (`ContactParams::rows` signals) and the set must hold `h = 0`.
///
/// A contact stuck all period keeps the mean slip position it has at `start`; from zero force
/// its mean force is what Newton leaves (docs/stuck-contacts.md). [`solve_point_holding`]
/// holds it elsewhere.
pub fn solve_point(
    rec: &Receptance,
    params: &ContactParams,
    omega: f64,
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    solve_point_holding(rec, params, omega, settings, start, start)
}

/// Most unknowns a stalled matrix-free solve is finished with dense Newton steps at: an LU
/// of this size is about 140 GFLOP (seconds a step on a workstation), its matrices 0.9 GB.
pub const DENSE_FALLBACK_MAX_UNKNOWNS: usize = 6000;

/// Most dense Newton steps after a stalled matrix-free solve: from a start that close they
/// converge in a few where a root is near; past the end of a branch (a sweep's fold) none is,
/// and the steps would only add their LUs to the failed point.
pub(crate) const DENSE_FALLBACK_ITERATIONS: usize = 50;

/// Whether dense Newton steps on `n` unknowns fit: at most
/// [`DENSE_FALLBACK_MAX_UNKNOWNS`], and their Jacobian, LU and products (three `n x n`) within
/// half the memory this process can still get.
pub(crate) fn dense_fits(n: usize) -> bool {
    let need = 3.0 * 8.0 * (n as f64) * (n as f64);
    n <= DENSE_FALLBACK_MAX_UNKNOWNS
        && crate::setup::available_memory().is_none_or(|have| need <= 0.5 * have)
}

/// [`solve_point`] from `start`, with every contact stuck all period held at the mean slip
/// position it has at `held` (a solution's set and coefficients: the previous point of a
/// sweep, whose secant predictor `start` is); nothing is held where `held` is `None`.
pub fn solve_point_holding(
    rec: &Receptance,
    params: &ContactParams,
    omega: f64,
    settings: &PointSettings,
    start: Option<(&HarmonicSet, &[f64])>,
    held: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    if let Some(tol) = settings.auto {
        return crate::auto::solve_auto(rec, params, omega, settings, tol, start, held);
    }
    if params.normal.is_some() && !settings.set.contains_zero() {
        // Refused before the structure is condensed at this frequency.
        return Err(SolveError::Residual(ResidualError::Input(format!(
            "the harmonic set {} has no static term h = 0: 3-D contacts carry their preload \
             and mean forces there, use all:{}",
            settings.set,
            settings.set.h_max()
        ))));
    }
    let at = {
        let _t = crate::profile::span(crate::profile::Phase::Condense);
        rec.prepare(omega, settings.set.harmonics())?
    };
    let kind = Kind::at(&at, params, settings)?;
    let newton_opts = kind.newton_options(&settings.newton);
    let m = params.rows();
    let (stages, mut x_set, mut x) = initial_stages(settings, start, m)?;
    let mut iterations = 0;
    let mut krylov = 0;
    let mut rho_used = 1.0;
    let mut last: Option<NewtonReport> = None;
    let retries = kind.rho_retries();
    for stage in &stages {
        let x0 = stage.prolong(&x, &x_set)?;
        let n_samples = stage_samples(stage, &settings.set, settings.n_samples);
        let mut best: Option<NewtonReport> = None;
        // The zero set of the E-WR law is Coulomb's law whatever rho is, so rho mostly
        // changes Newton's path: when a solve stalls in a local minimum of ||g||, the
        // equations with rho scaled usually get through (paper Table 1). Their Galerkin
        // solution differs from the original rho's by the truncation error only, and is then
        // used as the start of a final solve with the original rho.
        for (attempt, rho_factor) in retries.into_iter().enumerate() {
            let mut sys = kind.system(&at, stage, n_samples, rho_factor)?;
            let held_contacts = hold(&mut sys, stage, held)?;
            let final_attempt = !settings.retry_rho || attempt + 1 == retries.len();
            let opts = kind.attempt_options(&newton_opts, final_attempt);
            let mut r = solve_holding(&mut sys, &x0, &opts, held_contacts)?;
            iterations += r.iterations;
            krylov += r.krylov_iterations;
            if rho_factor != 1.0 && r.status.converged() {
                let mut sys = kind.system(&at, stage, n_samples, 1.0)?;
                let held_contacts = hold(&mut sys, stage, held)?;
                let polished = solve_holding(&mut sys, &r.x, &newton_opts, held_contacts)?;
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
            if done || !settings.retry_rho || !kind.retry_allowed() {
                break;
            }
        }
        let report = best.expect("at least one attempt");
        // A stage that did not converge still gives the next one a better start than zero;
        // only the last stage's status counts.
        x = report.x.clone();
        x_set = stage.clone();
        last = Some(report);
    }
    let mut report = last.expect("at least one stage");
    if !report.status.converged()
        && report.matrix_free
        && settings.newton.linear == newton::LinearSolve::Auto
        && dense_fits(report.x.len())
    {
        // A matrix-free solve that stalled (a weak preconditioner, GMRES on its floor) is
        // finished with dense Newton steps where they fit: `auto` never stops where the
        // other linear path converges (docs/performance.md, "Dense steps after a stalled
        // matrix-free solve").
        crate::profile::count("matrix-free solves finished with dense Newton steps");
        let mut sys = kind.system(&at, &settings.set, settings.n_samples, 1.0)?;
        let held_contacts = hold(&mut sys, &settings.set, held)?;
        let opts = NewtonOptions {
            linear: newton::LinearSolve::Dense,
            max_iterations: newton_opts.max_iterations.min(DENSE_FALLBACK_ITERATIONS),
            ..newton_opts.clone()
        };
        let dense = solve_holding(&mut sys, &report.x, &opts, held_contacts)?;
        iterations += dense.iterations;
        krylov += dense.krylov_iterations;
        if dense.status.converged() || dense.residual < report.residual {
            rho_used = 1.0;
            report = dense;
            x = report.x.clone();
        }
    }
    let x = settings.set.prolong(&x, &x_set)?;
    let _post = crate::profile::span(crate::profile::Phase::Post);
    let mut sys = kind.system(&at, &settings.set, settings.n_samples, 1.0)?;
    let histories = sys.inner.histories(&x)?;
    let displacement = sys.inner.displacement_coeffs(&x)?;
    let contacts = summarise(
        &histories,
        &kind.summary_params(&sys),
        omega,
        settings.set.h_max(),
    );
    let dofs = dof_response(
        &at,
        &settings.set,
        settings.n_samples,
        m,
        &x,
        &settings.monitor,
        settings.amplitude,
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
        estimate: None,
        stability: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_to_peak_of_two_dofs_is_the_largest_distance_between_two_instants() {
        // u = (a cos, b sin) with a = 2, b = 1, plus a static (1, 0): an ellipse whose largest
        // chord is its major axis, 2 a; the largest |u| is 1 + a.
        let set: HarmonicSet = "all:1".parse().unwrap();
        let coeffs = [1.0, 2.0, 0.0, 0.0, 0.0, 1.0];
        let (per, pp) = amplitudes(&set, 64, 2, &coeffs, Amplitude::PeakToPeak).unwrap();
        assert!(
            (per[0] - 4.0).abs() < 1e-9 && (per[1] - 2.0).abs() < 1e-9,
            "{per:?}"
        );
        assert!((pp - 4.0).abs() < 1e-3, "{pp}");
        let (_, max) = amplitudes(&set, 64, 2, &coeffs, Amplitude::Max).unwrap();
        assert!((max - 3.0).abs() < 1e-9, "{max}");
        let (_, dynamic) = amplitudes(&set, 64, 2, &coeffs, Amplitude::Dynamic).unwrap();
        assert!((dynamic - 2.0).abs() < 1e-9, "{dynamic}");
    }
}
