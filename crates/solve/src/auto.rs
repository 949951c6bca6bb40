//! Automatic harmonic sets (`--harmonics auto[:TOL]`): the smallest set of the doubling
//! sequence `odd:1, odd:3, odd:7, ...` (or `all:1, all:3, ...` where the static term or even
//! harmonics are needed) whose truncation error ([`crate::estimate`]) is within `TOL` of the
//! amplitude. A point solved on `H` and found too coarse continues on `2H + 1`, where the
//! estimate has already solved it, so no solve is wasted. Along a sweep the set only grows
//! (docs/accuracy.md, "Automatic harmonics").

use crate::estimate::{compare, enriched};
use crate::periodic::{PointSettings, PointSolution, SolveError};
use crate::point::solve_point_holding;
use ewr_contact::ContactParams;
use ewr_hb::receptance::Receptance;
use ewr_hb::{HarmonicKind, HarmonicSet, default_samples};

/// Default relative tolerance of `auto`: 1 % of the amplitude.
pub const DEFAULT_TOL: f64 = 0.01;

/// Largest harmonic an automatic set grows to (`odd:255`, `all:255`).
pub const MAX_HARMONIC: usize = 255;

/// The first set `auto` tries for `model`: `odd:H`, or `all:H` where a static load, 3-D
/// contacts or forcing on an even harmonic need the static term or even harmonics, with `H`
/// the first of `1, 3, 7, 15, ...` that holds every forcing harmonic.
pub fn start_set(model: &ewr_model::Model) -> HarmonicSet {
    let needs_all = model.contacts.has_normal()
        || model
            .forcing
            .iter()
            .any(|f| f.harmonic == 0 || f.harmonic % 2 == 0);
    let top = model.forcing.iter().map(|f| f.harmonic).max().unwrap_or(1);
    let mut h = 1;
    while h < top && h < MAX_HARMONIC {
        h = 2 * h + 1;
    }
    if needs_all {
        HarmonicSet::all(h).expect("a valid set")
    } else {
        HarmonicSet::odd(h).expect("a valid set")
    }
}

/// `auto` or `auto:TOL`: the tolerance, `None` for an explicit set.
pub fn parse(spec: &str) -> Option<Result<f64, String>> {
    let rest = spec.trim().strip_prefix("auto")?;
    if rest.is_empty() {
        return Some(Ok(DEFAULT_TOL));
    }
    let tol = rest.strip_prefix(':').map(str::parse::<f64>);
    Some(match tol {
        Some(Ok(t)) if t.is_finite() && t > 0.0 && t < 1.0 => Ok(t),
        _ => Err(format!(
            "{spec:?}: auto takes a relative tolerance between 0 and 1, as auto:0.01"
        )),
    })
}

/// The set below `set` in the doubling sequence (`odd:15` below `odd:31`), if it is not below
/// `smallest`.
pub fn lower(set: &HarmonicSet, smallest: &HarmonicSet) -> Option<HarmonicSet> {
    let h = (set.h_max().checked_sub(1)?) / 2;
    if h < smallest.h_max().max(1) {
        return None;
    }
    match set.kind() {
        HarmonicKind::Odd => HarmonicSet::odd(h | 1).ok(),
        HarmonicKind::All => HarmonicSet::all(h).ok(),
        HarmonicKind::List => None,
    }
}

/// The settings of one fixed set within an automatic run: the set's default samples, at
/// least those asked for, and no further automation.
pub(crate) fn fixed(settings: &PointSettings, set: &HarmonicSet) -> PointSettings {
    PointSettings {
        set: set.clone(),
        n_samples: default_samples(set).max(settings.n_samples),
        auto: None,
        ..settings.clone()
    }
}

/// Solves on `sol`'s set's successors until the truncation error is within `tol` of the
/// amplitude (or [`MAX_HARMONIC`] is reached, or a solve fails to converge): `sol` was solved
/// on its set with `settings`; the result carries its estimate, and the iterations of every
/// solve. Stuck contacts are held where they are at `held` (the previous point of a sweep),
/// as `sol` was; without it, at `sol`.
pub(crate) fn refine(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    tol: f64,
    mut sol: PointSolution,
    held: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    loop {
        if !sol.status.converged() || sol.set.h_max() >= MAX_HARMONIC {
            return Ok(sol);
        }
        let rich = enriched(&sol.set)?;
        // A richer set this process has no memory for ends the growth where it is.
        let next = fixed(settings, &rich);
        let (dim, nc) = (params.dim, params.len());
        if crate::setup::available_memory().is_some_and(|have| {
            crate::setup::memory_for(dim, nc, params.normal.is_some(), &next) > have
        }) {
            return Ok(sol);
        }
        let start = Some((&sol.set, sol.friction.as_slice()));
        let finer = solve_point_holding(rec, params, sol.omega, &next, start, held.or(start))?;
        let estimate = compare(&sol, &finer);
        let (iterations, krylov) = (sol.iterations, sol.krylov_iterations);
        if estimate.relative <= tol || !finer.status.converged() {
            sol.iterations += finer.iterations;
            sol.krylov_iterations += finer.krylov_iterations;
            sol.estimate = Some(estimate);
            return Ok(sol);
        }
        sol = finer;
        sol.iterations += iterations;
        sol.krylov_iterations += krylov;
    }
}

/// One periodic solution with an automatic set, from `start` (a solution's set and
/// coefficients: the set is kept as the first tried) or from [`PointSettings::set`].
pub(crate) fn solve_auto(
    rec: &Receptance,
    params: &ContactParams,
    omega: f64,
    settings: &PointSettings,
    tol: f64,
    start: Option<(&HarmonicSet, &[f64])>,
    held: Option<(&HarmonicSet, &[f64])>,
) -> Result<PointSolution, SolveError> {
    let first = match start {
        Some((set, _)) if set.h_max() > settings.set.h_max() => set.clone(),
        _ => settings.set.clone(),
    };
    let sol = solve_point_holding(rec, params, omega, &fixed(settings, &first), start, held)?;
    refine(rec, params, settings, tol, sol, held)
}
