//! Automatic harmonic sets (`--harmonics auto[:TOL]`): the smallest set of the doubling
//! sequence `odd:1, odd:3, odd:7, ...` (or `all:1, all:3, ...` where the static term or even
//! harmonics are needed) whose truncation error ([`crate::estimate`]) is within `TOL` of the
//! amplitude. A point solved on `H` and found too coarse continues on `2H + 1`, where the
//! estimate has already solved it, so no solve is wasted. Along a sweep the set only grows
//! (docs/accuracy.md, "Automatic harmonics").

use crate::estimate::{Estimate, compare, enriched, from_below};
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

/// From this highest harmonic on, a set is checked from below ([`from_below`]: the two sets
/// below it solved again) instead of on `2H + 1`, which costs 4-8 times a solve on the set
/// itself there (docs/accuracy.md, "A check from below").
pub const CHECK_FROM_BELOW: usize = 31;

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
    // This point's solutions on the sets below `sol`'s, as the checks and the growth solve them.
    let mut below: Vec<PointSolution> = Vec::new();
    // Iterations of the solves that are not `sol`'s own (checks, the sets grown past).
    let (mut iterations, mut krylov) = (0, 0);
    let done = |mut sol: PointSolution, iterations: usize, krylov: usize| {
        sol.iterations += iterations;
        sol.krylov_iterations += krylov;
        Ok(sol)
    };
    loop {
        if !sol.status.converged() || sol.set.h_max() >= MAX_HARMONIC {
            return done(sol, iterations, krylov);
        }
        let rich = enriched(&sol.set)?;
        // A richer set this process has no memory for ends the growth where it is.
        let next = fixed(settings, &rich);
        let (dim, nc) = (params.dim, params.len());
        let fits = crate::setup::available_memory().is_none_or(|have| {
            crate::setup::memory_for(dim, nc, params.normal.is_some(), &next) <= have
        });
        let start = Some((&sol.set, sol.friction.as_slice()));
        let mut known = None;
        if sol.set.h_max() >= CHECK_FROM_BELOW {
            let (checked, its, kr) =
                check_from_below(rec, params, settings, &sol, &mut below, held.or(start))?;
            iterations += its;
            krylov += kr;
            if let Some(estimate) = checked {
                if estimate.relative <= tol || !fits {
                    sol.estimate = Some(estimate);
                    return done(sol, iterations, krylov);
                }
                known = Some(estimate);
            }
        }
        if !fits {
            return done(sol, iterations, krylov);
        }
        let finer = solve_point_holding(rec, params, sol.omega, &next, start, held.or(start))?;
        let estimate = known.unwrap_or_else(|| compare(&sol, &finer));
        if estimate.relative <= tol || !finer.status.converged() {
            sol.estimate = Some(estimate);
            return done(
                sol,
                iterations + finer.iterations,
                krylov + finer.krylov_iterations,
            );
        }
        iterations += sol.iterations;
        krylov += sol.krylov_iterations;
        below.push(std::mem::replace(&mut sol, finer));
    }
}

/// [`from_below`] for `sol`: the two sets below its own, solved from `sol`'s coefficients
/// where `below` (this point's earlier solutions, kept for the next check) has none, with the
/// iterations of those solves; no estimate where no two sets lie below or a solve fails to
/// converge, and the set is then checked on `2H + 1`.
fn check_from_below(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
    below: &mut Vec<PointSolution>,
    held: Option<(&HarmonicSet, &[f64])>,
) -> Result<(Option<Estimate>, usize, usize), SolveError> {
    let (Some(l1), mut iterations, mut krylov) = (lower(&sol.set, &settings.set), 0, 0) else {
        return Ok((None, 0, 0));
    };
    let Some(l2) = lower(&l1, &settings.set) else {
        return Ok((None, 0, 0));
    };
    for set in [&l1, &l2] {
        if below.iter().any(|b| b.set == *set) {
            continue;
        }
        let start = Some((&sol.set, sol.friction.as_slice()));
        let s = solve_point_holding(rec, params, sol.omega, &fixed(settings, set), start, held)?;
        iterations += s.iterations;
        krylov += s.krylov_iterations;
        let converged = s.status.converged();
        below.push(s);
        if !converged {
            return Ok((None, iterations, krylov));
        }
    }
    let find = |set: &HarmonicSet| below.iter().find(|b| b.set == *set);
    let estimate = match (find(&l1), find(&l2)) {
        (Some(a), Some(b)) if a.status.converged() && b.status.converged() => {
            Some(from_below(sol, a, b))
        }
        _ => None,
    };
    Ok((estimate, iterations, krylov))
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
