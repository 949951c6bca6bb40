//! Automatic harmonic sets (`--harmonics auto[:TOL]`): the smallest set of the doubling
//! sequence `odd:1, odd:3, odd:7, ...` (or `all:1, all:3, ...` where the static term or even
//! harmonics are needed) whose truncation error ([`crate::estimate`]) is within `TOL` of the
//! amplitude. A set is checked by the re-solve on `2H + 1` with the tail beyond it (the rate
//! from the set below), or, from `h = 31`, from the two sets below it, which cost a fraction
//! of a solve on `2H + 1`. A point found too coarse on `H` continues on `2H + 1`, solved once
//! for the check or the growth and reused by the next check. Along a sweep the set is
//! checked where the curve changes, and may step down where a check is far within `TOL`
//! (docs/accuracy.md, "Automatic harmonics").

use crate::estimate::{
    Estimate, TAIL_RATIO_MAX, compare, enriched, first_set, first_set_at_factor, from_below,
    with_tail,
};
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
    let needs_all = crate::periodic::needs_all_harmonics(model);
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

/// Residual tolerance (scaled, as `NewtonOptions::tol_residual`) of the solves that only judge
/// another solution at the default 1 %: `auto`'s sets below a set, its `2H + 1` and `4H + 3`,
/// and the re-solves of [`crate::truncation_error`], for 1-D and 2-D contacts. Their amplitudes
/// are compared at that level: at 1e-5 an estimate moves by 1.5e-5 of the amplitude at most
/// against 1e-6 on 16 of the 17 sweeps of these kinds in `bench-auto-grids.sh` (Fig. 5 at
/// `mu N = 12`, odd:127 checked from below: 1.9e-4), for up to 8 % fewer Newton iterations a
/// sweep; at 1e-4 blade-damper-blade's moved by up to 1.5e-3 and sets changed. A finer
/// `auto:TOL` scales it in proportion. A richer set `auto` takes as the point's own is first
/// polished to the run's tolerance. docs/accuracy.md, "Checks to a looser tolerance" and
/// "Checks at 1e5 times the default tolerance".
pub const CHECK_TOLERANCE: f64 = 1e-5;

/// [`CHECK_TOLERANCE`] for 3-D contacts: 1e5 times their default tolerance, as for the other
/// kinds ([`crate::DEFAULT_TOL_3D`] against [`crate::DEFAULT_TOL`]). At 1e-4 their estimates
/// move by 6.3e-5 of the amplitude at most against 1e-6 (the 10 sweeps of 3-D contacts in
/// `bench-auto-grids.sh` and the 100-contact sector), for 3-7 % fewer Newton iterations a
/// sweep.
pub const CHECK_TOLERANCE_3D: f64 = 1e-4;

/// `settings` for a solve that only judges another solution's amplitudes to the relative
/// tolerance `tol`: solved to [`CHECK_TOLERANCE`] (3-D contacts: [`CHECK_TOLERANCE_3D`])
/// `* tol / 1 %`, or to their own tolerance where that is looser.
pub(crate) fn judging(settings: &PointSettings, params: &ContactParams, tol: f64) -> PointSettings {
    let mut s = settings.clone();
    s.newton.tol_residual = s.newton.tol_residual.max(judging_residual(params, tol));
    s
}

/// The residual tolerance of a solve judging amplitudes to the relative tolerance `tol`.
fn judging_residual(params: &ContactParams, tol: f64) -> f64 {
    let base = if params.normal.is_some() {
        CHECK_TOLERANCE_3D
    } else {
        CHECK_TOLERANCE
    };
    base * (tol / DEFAULT_TOL).min(1.0)
}

/// From this highest harmonic on, a set is checked from below ([`from_below`]: the two sets
/// below it solved again) instead of on `2H + 1`, which costs 4-8 times a solve on the set
/// itself there (docs/accuracy.md, "A check from below").
pub const CHECK_FROM_BELOW: usize = 31;

/// From this highest harmonic up to [`CHECK_FROM_BELOW`], a set is first checked from below,
/// and accepted where that estimate is within `TOL (1 - TAIL_RATIO_MAX)`; only where it is not
/// is the set re-solved on `2H + 1`, which costs four to eight times a solve on it. Below 15
/// the sets under a set are too coarse to vouch for it (all:1, all:3 and all:7 can agree
/// within 0.5 % where all:15 is 4 % away: docs/accuracy.md, "A check from below first").
pub const PRECHECK_FROM_BELOW: usize = 15;

/// What a sweep's last check of its first set on `4H + 3` measured, so that the next checks
/// of that set can do without it (docs/accuracy.md, "The first set's `4H + 3` along a
/// sweep"). `4H + 3` guards against `H` and `2H + 1` agreeing by chance: a zero of
/// `A(2H + 1) - A(H)` while `4H + 3` is far. Between two points such a zero shows as a change
/// of that difference's sign or as its collapse; where neither happened since a check that
/// saw the series converge (`|A(4H + 3) - A(2H + 1)| <= TAIL_RATIO_MAX |A(2H + 1) - A(H)|`),
/// the check's estimate is its change on `2H + 1` times the factor the estimate with `4H + 3`
/// had over that change there. Where both changes were and are in the noise
/// ([`FIRST_SET_NOISE`]), the series had converged far within the tolerance. A memory serves
/// [`FIRST_SET_REUSES`] checks in a row at most, and a sweep forgets it where it jumps a gap
/// or gives a point up.
#[derive(Clone, Debug)]
pub(crate) struct FirstSetMemory {
    set: HarmonicSet,
    /// `(A(2H + 1) - A(H)) / A(2H + 1)` at the check that solved `4H + 3`.
    change: f64,
    /// The estimate with `4H + 3` there over the change on `2H + 1`.
    factor: f64,
    /// Checks since that took the rate instead of solving `4H + 3`.
    uses: usize,
}

/// Checks of a first set in a row that may take [`FirstSetMemory`]'s rate before one solves
/// `4H + 3` again.
const FIRST_SET_REUSES: usize = 3;

/// A change of `|A(2H + 1) - A(H)|` by more than this factor since the check that solved
/// `4H + 3` calls for it again: a collapse may be nearing a zero of the difference, a growth
/// is a series that is no longer the one measured.
const FIRST_SET_CHANGE: f64 = 4.0;

/// Changes `|A(2H + 1) - A(H)| / A` below this share of the tolerance have no sign to speak of
/// (the judging solves stop at a residual of [`CHECK_TOLERANCE`] or [`CHECK_TOLERANCE_3D`],
/// which move an estimate by 6e-5 of the amplitude at most on every sweep measured but one, and
/// far less on the first sets): where both the remembered and the new change are below it, the
/// series had converged far within the tolerance and still has, and the memory holds without
/// the sign test. A sign that the solves' noise flips above it only calls for `4H + 3` again.
const FIRST_SET_NOISE: f64 = 1e-2;

impl FirstSetMemory {
    /// Whether the rate stands for a check of `set` whose change on `2H + 1` is `change`.
    fn vouches(&self, set: &HarmonicSet, change: f64, tol: f64) -> bool {
        if *set != self.set || self.uses >= FIRST_SET_REUSES || !change.is_finite() {
            return false;
        }
        let noise = FIRST_SET_NOISE * tol;
        let (now, then) = (change.abs(), self.change.abs());
        if now < noise || then < noise {
            // Out of the noise or into it: the series is no longer what was measured (the
            // onset of slip on blade-damper-blade at odd:1 takes the change from 3e-8 to 0.7 %
            // in one step of 1.3 rad/s, where 4H + 3 shows twice that).
            return now < noise && then < noise;
        }
        change.signum() == self.change.signum()
            && now * FIRST_SET_CHANGE >= then
            && now <= FIRST_SET_CHANGE * then
    }
}

/// Solves on `sol`'s set's successors until the truncation error is within `tol` of the
/// amplitude (or [`MAX_HARMONIC`] is reached, or a solve fails to converge): `sol` was solved
/// on its set with `settings`; the result carries its estimate, and the iterations of every
/// solve. Each solve on another set holds the contacts stuck all period where they are at
/// the solution it starts from (`sol`, or the richer set `sol` grew to): the same hold as
/// `sol`'s, so that two sets differ by their truncation, not by where a contact re-stuck
/// (docs/accuracy.md, "Where blade-damper-blade-3d's checks go").
///
/// `memory` carries a sweep's [`FirstSetMemory`] from one check to the next (`&mut None` for a
/// single point).
pub(crate) fn refine(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    tol: f64,
    mut sol: PointSolution,
    memory: &mut Option<FirstSetMemory>,
) -> Result<PointSolution, SolveError> {
    // A sweep that left its first set and came back checks it afresh.
    if memory.as_ref().is_some_and(|m| m.set != sol.set) {
        *memory = None;
    }
    let mut point = Point {
        rec,
        params,
        settings,
        tol,
        solved: Vec::new(),
        iterations: sol.iterations,
        krylov: sol.krylov_iterations,
        memory,
    };
    loop {
        if !sol.status.converged() || sol.set.h_max() >= MAX_HARMONIC {
            return Ok(point.done(sol));
        }
        let rich = enriched(&sol.set)?;
        // A richer set this process has no memory for ends the growth where it is.
        let fits = point.fits(&rich);
        let mut known = None;
        if sol.set.h_max() >= CHECK_FROM_BELOW
            && let Some(estimate) = point.check_from_below(&sol)?
        {
            if estimate.relative <= tol || !fits {
                sol.estimate = Some(estimate);
                return Ok(point.done(sol));
            }
            known = Some(estimate);
        } else if sol.set.h_max() >= PRECHECK_FROM_BELOW
            && let Some(estimate) = point.check_from_below(&sol)?
            && estimate.relative <= tol * (1.0 - TAIL_RATIO_MAX)
        {
            // Within the tolerance even with the largest tail the re-solve would credit: the
            // re-solve on `2H + 1` could only find it finer. Otherwise the re-solve decides,
            // and its tail reuses the set below solved here.
            sol.estimate = Some(estimate);
            return Ok(point.done(sol));
        }
        if !fits {
            return Ok(point.done(sol));
        }
        let finer = point.take(&rich, &sol)?;
        let estimate = match known {
            Some(e) => e,
            None => point.estimate(&sol, &finer)?,
        };
        if estimate.relative <= tol || !finer.status.converged() {
            sol.estimate = Some(estimate);
            return Ok(point.done(sol));
        }
        let finer = point.adopt(finer, &sol)?;
        if !finer.status.converged() {
            sol.estimate = Some(estimate);
            return Ok(point.done(sol));
        }
        point.solved.push(std::mem::replace(&mut sol, finer));
    }
}

/// One frequency of an automatic set's checks: the solutions on the sets tried besides the
/// one at hand (each solved once, from the solution that asked for it), and the iterations
/// of every solve there.
struct Point<'a> {
    rec: &'a Receptance,
    params: &'a ContactParams,
    settings: &'a PointSettings,
    /// The relative tolerance the sets are judged to.
    tol: f64,
    solved: Vec<PointSolution>,
    iterations: usize,
    krylov: usize,
    /// The sweep's memory of its first set's `4H + 3`.
    memory: &'a mut Option<FirstSetMemory>,
}

impl Point<'_> {
    /// `sol` with the iterations of every solve at this point.
    fn done(&self, mut sol: PointSolution) -> PointSolution {
        sol.iterations = self.iterations;
        sol.krylov_iterations = self.krylov;
        sol
    }

    /// Whether this process has the memory for a solve on `set`.
    fn fits(&self, set: &HarmonicSet) -> bool {
        crate::setup::fits_in_memory(self.params, &fixed(self.settings, set))
    }

    /// Solves on `set` from `from`'s coefficients, unless this point has; the index in
    /// `solved`.
    fn solve(&mut self, set: &HarmonicSet, from: &PointSolution) -> Result<usize, SolveError> {
        if let Some(i) = self.solved.iter().position(|s| s.set == *set) {
            return Ok(i);
        }
        let start = Some((&from.set, from.friction.as_slice()));
        let settings = judging(&fixed(self.settings, set), self.params, self.tol);
        let s = solve_point_holding(self.rec, self.params, from.omega, &settings, start, start)?;
        self.iterations += s.iterations;
        self.krylov += s.krylov_iterations;
        self.solved.push(s);
        Ok(self.solved.len() - 1)
    }

    /// `judged` (a judging solve on a richer set, [`judging`]) polished to the run's own
    /// tolerance from its own coefficients, holding at `current`, the solution it replaces: the
    /// judging solve held there too, or, for a `4H + 3` solved from the judged `2H + 1`, at
    /// that one, which `current` is polished from.
    fn adopt(
        &mut self,
        judged: PointSolution,
        current: &PointSolution,
    ) -> Result<PointSolution, SolveError> {
        let settings = fixed(self.settings, &judged.set);
        if settings.newton.tol_residual >= judging_residual(self.params, self.tol) {
            return Ok(judged);
        }
        let s = solve_point_holding(
            self.rec,
            self.params,
            judged.omega,
            &settings,
            Some((&judged.set, judged.friction.as_slice())),
            Some((&current.set, current.friction.as_slice())),
        )?;
        self.iterations += s.iterations;
        self.krylov += s.krylov_iterations;
        Ok(s)
    }

    /// The solution on `set` (solved from `from` where this point has none), out of `solved`.
    fn take(
        &mut self,
        set: &HarmonicSet,
        from: &PointSolution,
    ) -> Result<PointSolution, SolveError> {
        let i = self.solve(set, from)?;
        Ok(self.solved.swap_remove(i))
    }

    /// The converged solution on `set`, solved from `from` where this point has none.
    fn converged(
        &mut self,
        set: &HarmonicSet,
        from: &PointSolution,
    ) -> Result<Option<&PointSolution>, SolveError> {
        let i = self.solve(set, from)?;
        Ok(Some(&self.solved[i]).filter(|s| s.status.converged()))
    }

    /// [`from_below`] for `sol`: the two sets below its own; `None` where no two sets lie
    /// below or one does not converge, and the set is then checked on `2H + 1`.
    fn check_from_below(&mut self, sol: &PointSolution) -> Result<Option<Estimate>, SolveError> {
        let smallest = &self.settings.set;
        let Some(l1) = lower(&sol.set, smallest) else {
            return Ok(None);
        };
        let Some(l2) = lower(&l1, smallest) else {
            return Ok(None);
        };
        let i1 = self.solve(&l1, sol)?;
        if !self.solved[i1].status.converged() {
            return Ok(None);
        }
        // `solve` only appends, so `i1` still points at `l1`'s solution.
        let i2 = self.solve(&l2, sol)?;
        let (a, b) = (&self.solved[i1], &self.solved[i2]);
        Ok(b.status.converged().then(|| from_below(sol, a, b)))
    }

    /// The re-solve's estimate of `sol` against `finer` (its set's `2H + 1`), with the tail
    /// beyond it and the floor from the set below ([`with_tail`]). A set with none below (the
    /// first of the sequence, below `h = 31`) is compared with `4H + 3` as well, and the larger
    /// change counts: the first sets can agree by chance (`single-contact-3d` at `w = 3`:
    /// all:1 and all:3 within 0.4 %, all:7 3.8 % away). docs/accuracy.md, "The tail beyond
    /// the richer set".
    fn estimate(
        &mut self,
        sol: &PointSolution,
        finer: &PointSolution,
    ) -> Result<Estimate, SolveError> {
        let estimate = compare(sol, finer);
        if !finer.status.converged() {
            return Ok(estimate);
        }
        match lower(&sol.set, &self.settings.set) {
            Some(l1) => Ok(match self.converged(&l1, sol)? {
                Some(b) => with_tail(sol, finer, b),
                None => estimate,
            }),
            None => {
                let richer = enriched(&finer.set)?;
                // Only where `4H + 3` is cheap: the chance agreement is of the first sets.
                if !(sol.set.h_max() < CHECK_FROM_BELOW
                    && finer.set.h_max() < MAX_HARMONIC
                    && self.fits(&richer))
                {
                    return Ok(estimate);
                }
                let a = finer.dofs.norm_peak;
                let change = (a - sol.dofs.norm_peak) / a;
                if let Some(m) = self
                    .memory
                    .as_mut()
                    .filter(|m| m.vouches(&sol.set, change, self.tol))
                {
                    m.uses += 1;
                    return Ok(first_set_at_factor(estimate, m.factor));
                }
                let plain = estimate.amplitude;
                let (e, further) = match self.converged(&richer, finer)? {
                    Some(f2) => (
                        first_set(estimate, compare(sol, f2), finer, f2),
                        compare(finer, f2).amplitude,
                    ),
                    None => {
                        *self.memory = None;
                        return Ok(estimate);
                    }
                };
                let rate = further / plain;
                // Two changes in the noise say the series has converged far within the
                // tolerance, at whatever rate their ratio shows.
                let noise = FIRST_SET_NOISE * self.tol * a;
                let converging = rate <= TAIL_RATIO_MAX || (plain < noise && further < noise);
                *self.memory = (change.is_finite() && converging).then(|| FirstSetMemory {
                    set: sol.set.clone(),
                    change,
                    // (NaN for two zero changes: `first_set_at_factor` takes the cap.)
                    factor: e.amplitude / plain,
                    uses: 0,
                });
                Ok(e)
            }
        }
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
    refine(rec, params, settings, tol, sol, &mut None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(change: f64, uses: usize) -> FirstSetMemory {
        FirstSetMemory {
            set: HarmonicSet::all(1).unwrap(),
            change,
            factor: 1.4,
            uses,
        }
    }

    #[test]
    fn the_first_set_s_memory_stands_only_where_no_chance_agreement_can_hide() {
        let set = HarmonicSet::all(1).unwrap();
        let tol = DEFAULT_TOL;
        // The same sign and no collapse: the rate stands.
        assert!(memory(2e-3, 0).vouches(&set, 1e-3, tol));
        assert!(memory(-2e-3, 0).vouches(&set, -5e-3, tol));
        // A change of sign or a collapse beyond FIRST_SET_CHANGE: a zero of A(2H+1) - A(H)
        // may lie between, and 4H + 3 is solved again. So does a growth beyond it.
        assert!(!memory(2e-3, 0).vouches(&set, -1e-3, tol));
        assert!(!memory(2e-3, 0).vouches(&set, 4e-4, tol));
        assert!(!memory(2e-3, 0).vouches(&set, 9e-3, tol));
        // At most FIRST_SET_REUSES checks in a row, then 4H + 3 again.
        assert!(memory(2e-3, FIRST_SET_REUSES - 1).vouches(&set, 2e-3, tol));
        assert!(!memory(2e-3, FIRST_SET_REUSES).vouches(&set, 2e-3, tol));
        // Both changes in the noise: no sign test; one of them out of it (the onset of slip):
        // 4H + 3 again, whatever the signs.
        assert!(memory(-5e-5, 0).vouches(&set, 2e-5, tol));
        assert!(!memory(5e-5, 0).vouches(&set, 2e-4, tol));
        assert!(!memory(2e-4, 0).vouches(&set, 5e-5, tol));
        // Another set, or a change that is not a number.
        assert!(!memory(2e-3, 0).vouches(&HarmonicSet::all(3).unwrap(), 2e-3, tol));
        assert!(!memory(2e-3, 0).vouches(&set, f64::NAN, tol));
    }
}
