//! The truncation error of a periodic solution: how far its amplitudes are from those of the
//! same problem on a richer harmonic set. The solution is solved again on the enriched set
//! `2H + 1` (same parity rule), warm-started from its own coefficients, and the error is the
//! change of the amplitudes. Chosen by measurement over the alternatives (docs/accuracy.md):
//! one Newton step on the enriched set, or the tail of the force spectrum, miss the change of
//! the retained harmonics when stick and slip move, by orders of magnitude at some points.

use crate::periodic::{PointSettings, PointSolution, SolveError};
use crate::point::solve_point;
use ewr_contact::ContactParams;
use ewr_hb::receptance::Receptance;
use ewr_hb::{HarmonicKind, HarmonicSet, default_samples};

/// Relative truncation error above which front ends warn and figures mark the point: 1 % of
/// the amplitude (the default tolerance of `--harmonics auto`).
pub const WARN_ABOVE: f64 = 0.01;

/// How an [`Estimate`] was obtained (docs/accuracy.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimateMethod {
    /// The change on the richer set ([`truncation_error`], [`compare`]).
    Richer,
    /// The change on the richer set times `1 / (1 - r)`, the tail beyond it from the rate
    /// `r` seen against the set below (`auto`'s checks below `h = 31`).
    RicherWithTail,
    /// [`from_below`]: the conservative change from the two sets below (`auto`'s checks from
    /// `h = 31`).
    FromBelow,
}

impl EstimateMethod {
    /// Its name in result files, JSON and Python: `richer`, `richer-with-tail`, `from-below`.
    pub fn name(self) -> &'static str {
        match self {
            EstimateMethod::Richer => "richer",
            EstimateMethod::RicherWithTail => "richer-with-tail",
            EstimateMethod::FromBelow => "from-below",
        }
    }

    /// Its code in the integer columns of FRC result files: 0 `richer`, 1 `richer-with-tail`,
    /// 2 `from-below` (-1 there where a point has no estimate).
    pub fn code(self) -> i64 {
        match self {
            EstimateMethod::Richer => 0,
            EstimateMethod::RicherWithTail => 1,
            EstimateMethod::FromBelow => 2,
        }
    }
}

/// The estimated truncation error of a periodic solution's amplitudes.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// How it was obtained.
    pub method: EstimateMethod,
    /// The harmonic set the solution was compared with: the enriched set `2H + 1`, or the next
    /// coarser set for `auto`'s checks from below ([`from_below`]).
    pub set: HarmonicSet,
    /// `|A' - A|` of the monitored amplitude `max_t ||u(t)||` ([`crate::DofResponse::norm_peak`]).
    pub amplitude: f64,
    /// `|A' - A| / A'` (0 when both are 0).
    pub relative: f64,
    /// `|peak'_i - peak_i|` per monitored DOF.
    pub dof_peaks: Vec<f64>,
    /// Largest change of a contact force coefficient (friction and, for 3-D contacts, normal),
    /// relative to the largest coefficient.
    pub force: f64,
    /// Whether the enriched solution converged (otherwise the estimate is only indicative).
    pub converged: bool,
}

/// The richer set a solution on `set` is compared with: odd or all harmonics up to
/// `2 h_max + 1`, keeping every harmonic of a list.
pub fn enriched(set: &HarmonicSet) -> Result<HarmonicSet, SolveError> {
    let h = (2 * set.h_max() + 1).min(ewr_hb::MAX_HARMONIC);
    let richer = match set.kind() {
        HarmonicKind::Odd => HarmonicSet::odd(h | 1)?,
        HarmonicKind::All => HarmonicSet::all(h)?,
        HarmonicKind::List => {
            // A list of odd harmonics stays odd; one with even or static terms takes them all.
            let mut hs: Vec<usize> = if set.all_odd() {
                (1..=h).step_by(2).collect()
            } else {
                (usize::from(!set.contains_zero())..=h).collect()
            };
            hs.extend(set.harmonics());
            HarmonicSet::list(&hs)?
        }
    };
    Ok(richer)
}

/// The settings of the enriched solve of a solution on `set`: the richer set, enough samples
/// for it (at least the solution's own), no ramp (it starts from the solution), and no
/// automatic set (an `auto` point's estimate is the change on its own `2H + 1`; before, its
/// solve was automatic too and checked `2H + 1` on `4H + 3`, the cost of most of a curve's
/// peak estimates).
pub fn enriched_settings(
    settings: &PointSettings,
    set: &HarmonicSet,
) -> Result<PointSettings, SolveError> {
    let set = enriched(set)?;
    let n_samples = default_samples(&set).max(settings.n_samples);
    Ok(PointSettings {
        n_samples,
        set,
        ramp: false,
        auto: None,
        ..settings.clone()
    })
}

/// The truncation error of `sol` (computed with `settings`): `sol` solved again on the
/// enriched set from its own coefficients, and the change of its amplitudes and forces.
pub fn truncation_error(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Estimate, SolveError> {
    let rich = enriched_settings(settings, &sol.set)?;
    let finer = solve_point(
        rec,
        params,
        sol.omega,
        &rich,
        Some((&sol.set, &sol.friction)),
    )?;
    Ok(compare(sol, &finer))
}

/// The estimate of `sol` from the same problem solved on the two sets below its own, `l1` (the
/// next coarser, about half the harmonics) and `l2` (about a quarter): the larger of half the
/// change from `l1` and a quarter of the change from `l2`, for the amplitudes and the forces.
///
/// Where the error falls like `H^-p` with `p >= 1` (dry friction's kinks give `p` about 1 to
/// 2), the error of `l1` is at least twice that of `sol`, so half the change from `l1` is at
/// least the change [`compare`] would see on `2H + 1` for `p = 1` and larger for faster
/// convergence: a conservative estimate that needs no solve on a richer set. The change from
/// `l2` guards against `l1` crossing `sol`'s answer by chance. Measured against the enriched
/// re-solve in docs/accuracy.md ("A check from below").
pub fn from_below(sol: &PointSolution, l1: &PointSolution, l2: &PointSolution) -> Estimate {
    let (e1, e2) = (compare(l1, sol), compare(l2, sol));
    // Both changes are relative to `sol`'s amplitude, so their relatives combine as they do.
    let amplitude = (0.5 * e1.amplitude).max(0.25 * e2.amplitude);
    let relative = (0.5 * e1.relative).max(0.25 * e2.relative);
    let dof_peaks = e1
        .dof_peaks
        .iter()
        .zip(&e2.dof_peaks)
        .map(|(d1, d2)| (0.5 * d1).max(0.25 * d2))
        .collect();
    Estimate {
        method: EstimateMethod::FromBelow,
        set: l1.set.clone(),
        amplitude,
        relative,
        dof_peaks,
        force: (0.5 * e1.force).max(0.25 * e2.force),
        converged: l1.status.converged() && l2.status.converged(),
    }
}

/// The estimate of `coarse` from the same problem solved on a richer set, `fine`.
pub fn compare(coarse: &PointSolution, fine: &PointSolution) -> Estimate {
    let (a, a1) = (coarse.dofs.norm_peak, fine.dofs.norm_peak);
    let amplitude = (a1 - a).abs();
    let relative = if a1.abs() > 0.0 {
        amplitude / a1.abs()
    } else if amplitude == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    let dof_peaks = coarse
        .dofs
        .peak
        .iter()
        .zip(&fine.dofs.peak)
        .map(|(p, q)| (q - p).abs())
        .collect();
    // Forces on the coarse set's coefficients against the fine solution restricted to them,
    // and every coefficient the coarse set lacks.
    let coarse_on_fine = fine
        .set
        .prolong(&coarse.friction, &coarse.set)
        .unwrap_or_else(|_| vec![f64::NAN; fine.friction.len()]);
    let scale = fine
        .friction
        .iter()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    let force = coarse_on_fine
        .iter()
        .zip(&fine.friction)
        .map(|(c, f)| (f - c).abs())
        .fold(0.0f64, f64::max)
        / scale;
    Estimate {
        method: EstimateMethod::Richer,
        set: fine.set.clone(),
        amplitude,
        relative,
        dof_peaks,
        force,
        converged: fine.status.converged(),
    }
}
