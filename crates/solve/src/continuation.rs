//! Frequency response curves: periodic solutions followed in `w`, by sequential
//! continuation (secant extrapolation of the last two points, or the previous solution as
//! in the paper, as the start) or pseudo-arclength
//! continuation (tangent predictor, adaptive step, passes turning points).

use crate::newton::{self, EvalError, NewtonStatus, Residual};
use crate::periodic::{PointSettings, PointSolution, SolveError, scaled_norm};
use crate::point::{solve_point, solve_point_holding};
use crate::step_control::{self, Verdict};
use ewr_contact::{ContactParams, UnilateralParams};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::Receptance;
use faer::linalg::solvers::Solve;
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut};

/// How to follow the curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// Fixed frequency steps, each started from the secant through the last two solutions
    /// (from the previous one if Newton fails there); the step is halved where a point fails
    /// and grows back after successes.
    Sequential,
    /// Pseudo-arclength in `(R, w)`: follows the curve through turning points.
    Arclength,
}

impl std::str::FromStr for Continuation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sequential" => Ok(Continuation::Sequential),
            "arclength" => Ok(Continuation::Arclength),
            _ => Err(format!(
                "unknown continuation {s:?}: use \"sequential\" or \"arclength\""
            )),
        }
    }
}

/// Settings of a frequency sweep.
#[derive(Clone, Debug)]
pub struct FrcSettings {
    /// First frequency.
    pub omega_start: f64,
    /// Last frequency (may be below the start: the sweep goes down).
    pub omega_end: f64,
    /// Nominal step: in `w` for sequential, in scaled arclength for arclength.
    pub step: f64,
    /// Smallest step before a point is given up (sequential) or the curve is stopped
    /// (arclength).
    pub min_step: f64,
    /// Largest step (arclength grows the step on easy points up to this).
    pub max_step: f64,
    /// Sequential or arclength.
    pub method: Continuation,
    /// How each periodic solution is computed.
    pub point: PointSettings,
    /// Safety cap on the number of points.
    pub max_points: usize,
    /// Adaptive steps ([`crate::step_control`]): the relative tolerance on the polyline
    /// through the points (e.g. 1e-2), within `[min_step, max_step]`; `None` keeps the
    /// nominal step (halved only where a point fails).
    pub adaptive: Option<f64>,
    /// Keep each point's sampled contact histories ([`PointSolution::histories`], one period:
    /// about 50 KB per point at 512 samples and one 2-D contact). Sweeps that read amplitudes
    /// and summaries only drop them, which on a 1500-point curve saves 70 MB and a tenth of
    /// the run time (fresh pages, not arithmetic).
    pub keep_histories: bool,
}

impl FrcSettings {
    /// The band's highest fundamental, `max(|omega_start|, |omega_end|)`: how far up its
    /// harmonics reach.
    pub fn omega_max(&self) -> f64 {
        self.omega_start.abs().max(self.omega_end.abs())
    }
}

/// One point of a frequency response curve.
#[derive(Clone, Debug)]
pub struct FrcPoint {
    /// The periodic solution (its status says whether it converged).
    pub solution: PointSolution,
    /// The step that led to this point.
    pub step: f64,
}

/// Follows the frequency response from `omega_start` to `omega_end`.
///
/// `on_point` is called with every point as soon as it is computed, converged or not, so that
/// a caller can write it out at once; returning `false` from it stops the sweep.
pub fn frc(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
) -> Result<Vec<FrcPoint>, SolveError> {
    frc_until(rec, params, s, on_point, &|| false)
}

/// [`frc`] that also looks at `stop` where it works a while without a point to report (the
/// search beyond the end of a branch): once `stop` says so, the search ends and the point
/// at hand is reported, so that `on_point` can stop the sweep.
pub fn frc_until(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<FrcPoint>, SolveError> {
    check_steps(s)?;
    match s.method {
        Continuation::Sequential => sequential(rec, params, s, &[], on_point, stop),
        Continuation::Arclength => arclength(rec, params, s, on_point),
    }
}

fn check_steps(s: &FrcSettings) -> Result<(), SolveError> {
    if s.step > 0.0 && s.min_step > 0.0 && s.min_step <= s.step && s.max_step >= s.step {
        Ok(())
    } else {
        Err(SolveError::Start(format!(
            "steps must satisfy 0 < min_step <= step <= max_step (got {}, {}, {})",
            s.min_step, s.step, s.max_step
        )))
    }
}

/// Continues a sequential sweep from `omega_start` after the converged points `previous`
/// (oldest first) of an interrupted one: its first point is predicted from their secant, as
/// if the sweep had never stopped. Only the points computed here are returned.
pub fn frc_resume(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    previous: &[PointSolution],
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
) -> Result<Vec<FrcPoint>, SolveError> {
    frc_resume_until(rec, params, s, previous, on_point, &|| false)
}

/// [`frc_resume`] with the `stop` of [`frc_until`].
pub fn frc_resume_until(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    previous: &[PointSolution],
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<FrcPoint>, SolveError> {
    if s.method != Continuation::Sequential {
        return Err(SolveError::Start(
            "only sequential sweeps can be resumed".into(),
        ));
    }
    check_steps(s)?;
    sequential(rec, params, s, previous, on_point, stop)
}

/// When an automatic set is checked along a sweep: at the first point, then whenever the
/// amplitude or a monitored DOF's peak has moved by more than 5 % since the last check (more
/// after a check far within the tolerance), a contact's stick fraction by as much of the
/// period, or at all near stick or slip all period, where the upper half of the forces'
/// spectrum has grown by half, every 8 points, and after a check that
/// came close to the tolerance or whose estimate more than doubled on the same set (above an
/// eighth of the tolerance); the points
/// between keep the set (docs/accuracy.md, "When a sweep checks its set").
#[derive(Default)]
struct AutoCheck {
    /// `ln A` and relative estimate at the last check.
    last: Option<(f64, f64)>,
    /// Each monitored DOF's peak at the last check.
    peaks: Vec<f64>,
    /// Each contact's stick fraction at the last check.
    stick: Vec<f64>,
    /// The force spectrum's upper half at the last check ([`spectrum_tail`]).
    tail: f64,
    /// Points since then.
    since: usize,
    /// The smaller set the next point tries (and is checked on).
    shrinking: Option<HarmonicSet>,
    /// Check the next point whatever else says (it tries a smaller set, or the estimate grew
    /// fast).
    force: bool,
    /// The set of the last check.
    set: Option<HarmonicSet>,
    /// The last check of the first set on `4H + 3` ([`crate::auto::FirstSetMemory`]).
    first_set: Option<crate::auto::FirstSetMemory>,
}

/// Growth of the estimate between two checks on the same set beyond which it calls for a check at the
/// next point, where the estimate is above [`AUTO_ESTIMATE_GROWTH_FLOOR`] of the tolerance:
/// between two checks the error can outrun the response (blade-damper-blade by 0.5 rad/s at
/// the onset of slip, odd:1: 0.004 % at 1260, 0.39 % at 1260.5, 1.2 % at 1261 and 1.7 % at
/// 1261.5 with its stick fraction still and its amplitude within 2 %).
const AUTO_ESTIMATE_GROWTH: f64 = 2.0;

/// See [`AUTO_ESTIMATE_GROWTH`]: below this share of the tolerance an estimate's growth is
/// left to the other rules.
const AUTO_ESTIMATE_GROWTH_FLOOR: f64 = 0.125;

/// Points between two checks of an automatic set at most.
const AUTO_RECHECK_POINTS: usize = 8;

/// Change of `ln A` since the last check that calls for another (and of a DOF's peak, of a
/// stick fraction as a share of the period), times the headroom of the last estimate.
const AUTO_RECHECK_CHANGE: f64 = 0.05;

/// A contact whose stick fraction is this close to 1 or 0 (at the last check or now) calls
/// for a check at any change of it: the truncation error comes from stick-slip transitions,
/// a linear response (every contact stuck) is estimated at zero error, and at the onset of
/// slip (or of stick) the error grows much faster than the response (blade-damper-blade on
/// odd:1, by 1.3 rad/s: 0.12 % at a stick fraction of 0.984, 1.5 % at 0.953: one sample of
/// the period, then two). Away from the
/// edges it calls for one where it moves by [`AUTO_RECHECK_CHANGE`] of the period (more after
/// a check far within the tolerance), as the amplitude does.
const AUTO_STICK_EDGE: f64 = 0.1;

/// Growth of [`spectrum_tail`] since the last check that calls for another: the forces'
/// harmonics near the top of the set are what the truncation cuts off, and where they grow
/// the error does, whatever the amplitude does (Fig. 5 at `mu N = 12` below `w = 0.1`, where
/// the oscillator's own frequency is the 10th to 20th harmonic of the forcing: odd:63,
/// checked at 0.05, was 2.1 % off at 0.062 and 1.1 % at 0.086 with the amplitude and the
/// stick fraction nearly still).
const AUTO_TAIL_GROWTH: f64 = 1.5;

/// Largest spectrum share ([`spectrum_tail`]) that never calls for a check, as a share of the
/// tolerance: below it the harmonics the truncation cuts are far below the tolerance, and a
/// set whose upper harmonics are rounding (every contact stuck) would otherwise be checked at
/// random.
const AUTO_TAIL_FLOOR: f64 = 0.01;

/// The largest share, over the force signals (each contact row's friction or normal force),
/// of a signal's dynamic spectrum in the upper half of the set's harmonics above zero (by the
/// norm of their coefficients); signals below `1e-12` of the largest are left out, and the
/// static term is not counted (a preload's or a stuck contact's mean force would hide the
/// rest). `NaN` for a set of fewer than four harmonics above zero or forces all zero.
fn spectrum_tail(sol: &PointSolution) -> f64 {
    let set = &sol.set;
    let n = set.n_coeffs();
    let hs: Vec<usize> = set.harmonics().iter().copied().filter(|&h| h > 0).collect();
    if hs.len() < 4 || n == 0 {
        return f64::NAN;
    }
    let cut = hs[hs.len() / 2];
    let parts: Vec<(f64, f64)> = sol
        .friction
        .chunks_exact(n)
        .map(|c| {
            let (mut top, mut all) = (0.0, 0.0);
            for &h in &hs {
                if let Some(i) = set.coeff_index(h) {
                    let e = c[i] * c[i] + c[i + 1] * c[i + 1];
                    all += e;
                    if h >= cut {
                        top += e;
                    }
                }
            }
            (top, all)
        })
        .collect();
    let largest = parts.iter().fold(0.0f64, |m, p| m.max(p.1));
    if !(largest > 0.0 && largest.is_finite()) {
        return f64::NAN;
    }
    parts
        .iter()
        .filter(|p| p.1 > 1e-12 * largest)
        .map(|p| (p.0 / p.1).sqrt())
        .fold(0.0f64, f64::max)
}

/// Each contact's stick fraction as the recheck rules read it: a 3-D contact whose least
/// stick margin is within the hold's ([`ewr_contact::HOLD_MARGIN`]) counts as stuck all
/// period: the solver keeps a held contact down to that margin, and a free one there slips
/// by less than 3 % of its bound at its worst sample (a contact that separates anywhere has
/// margin -1). Such samples above the bound are the truncated law's rounding of a stuck
/// contact, and they come and go from point to point:
/// on the 100-contact 3-D sector off its resonance, every contact held, the fractions read
/// 0.72-0.98 and back to 1 from one point to the next, which called for a check at every
/// point (docs/accuracy.md, "Held contacts at the edges").
fn recheck_fractions(sol: &PointSolution) -> Vec<f64> {
    sol.stick_fractions()
        .into_iter()
        .zip(&sol.contacts)
        .map(|(s, c)| {
            if c.normal_force_range.is_some() && c.least_stick_margin >= -ewr_contact::HOLD_MARGIN {
                1.0
            } else {
                s
            }
        })
        .collect()
}

/// Each monitored DOF's peak (absolute value).
fn dof_peaks(sol: &PointSolution) -> Vec<f64> {
    sol.dofs.peak.iter().map(|p| p.abs()).collect()
}

/// The largest change of a monitored DOF's peak between `now` and `then`, relative to the
/// DOF's peak where it is at least half the largest, else to half the largest: the
/// tolerance is a share of the amplitude, and a DOF far below the largest moves the
/// response in proportion to its own size (a DOF at 5 % of the largest peak that doubles
/// counts as a change of 10 %, not 100 %). Infinite where a peak is not finite.
fn peak_change(now: &[f64], then: &[f64]) -> f64 {
    if now.iter().chain(then).any(|p| !p.is_finite()) {
        return f64::INFINITY;
    }
    let top = now.iter().chain(then).fold(0.0f64, |m, &p| m.max(p));
    if top <= 0.0 {
        return 0.0;
    }
    now.iter()
        .zip(then)
        .map(|(p, q)| (p - q).abs() / p.max(*q).max(0.5 * top))
        .fold(0.0f64, f64::max)
}

impl AutoCheck {
    fn due(&self, sol: &PointSolution, tol: f64) -> bool {
        if self.force {
            return true;
        }
        match self.last {
            None => true,
            Some((ln_a, rel)) => {
                // An estimate that is not a number vouches for nothing.
                let rel = if rel.is_nan() { f64::INFINITY } else { rel };
                // A set checked far within the tolerance stands a larger change of the
                // response before its error could reach it.
                let headroom = (0.5 * tol / rel.max(f64::MIN_POSITIVE)).clamp(1.0, 8.0);
                let limit = AUTO_RECHECK_CHANGE * headroom;
                // The amplitude can stay put while the DOFs' peaks trade places (two-mass-damper
                // at w = 0.30-0.34 on odd:7: A within 2 %, one peak -5 %, another +12 %, and
                // the error from 0.4 to 1.5 %).
                let peak_moved = peak_change(&dof_peaks(sol), &self.peaks) > limit;
                let edge = |s: f64| s >= 1.0 - AUTO_STICK_EDGE || s <= AUTO_STICK_EDGE;
                let stick_moved = recheck_fractions(sol)
                    .iter()
                    .zip(&self.stick)
                    .any(|(s, t)| {
                        let d = (s - t).abs();
                        d > limit || ((edge(*s) || edge(*t)) && d > 1e-9)
                    });
                let (tail, tail_then) = (spectrum_tail(sol), self.tail);
                let tail_grew = tail.is_finite()
                    && tail > AUTO_TAIL_FLOOR * tol
                    && (tail_then.is_nan() || tail > AUTO_TAIL_GROWTH * tail_then);
                self.since + 1 >= AUTO_RECHECK_POINTS
                    || tail_grew
                    || rel > 0.5 * tol
                    || (sol.dofs.norm_peak.ln() - ln_a).abs() > limit
                    || peak_moved
                    || stick_moved
            }
        }
    }

    fn checked(&mut self, sol: &PointSolution, tol: f64) {
        let rel = sol.estimate.as_ref().map_or(f64::INFINITY, |e| e.relative);
        let growing = self.last.is_some_and(|(_, then)| {
            self.set.as_ref() == Some(&sol.set)
                && rel > AUTO_ESTIMATE_GROWTH * then
                && rel > AUTO_ESTIMATE_GROWTH_FLOOR * tol
        });
        self.set = Some(sol.set.clone());
        self.last = Some((sol.dofs.norm_peak.ln(), rel));
        self.peaks = dof_peaks(sol);
        self.stick = recheck_fractions(sol);
        self.tail = spectrum_tail(sol);
        self.since = 0;
        self.force = growing;
    }

    fn skipped(&mut self) {
        self.since += 1;
    }
}

fn sequential(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    previous: &[PointSolution],
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<FrcPoint>, SolveError> {
    let dir = if s.omega_end >= s.omega_start {
        1.0
    } else {
        -1.0
    };
    let tol_w = 1e-12 * s.omega_end.abs().max(1.0);
    let beyond = |w: f64| (w - s.omega_end) * dir > tol_w;
    let mut out = Vec::new();
    let mut prev: Option<PointSolution> = previous.last().cloned();
    let mut before: Option<(f64, HarmonicSet, Vec<f64>)> = previous.len().checked_sub(2).map(|i| {
        let p = &previous[i];
        (p.omega, p.set.clone(), p.friction.clone())
    });
    // Automatic harmonics: each point is solved on the set of the point before, and that set
    // is checked (and grown) where the curve changes.
    let mut auto_check = AutoCheck::default();
    let mut auto_set = prev
        .as_ref()
        .map_or_else(|| s.point.set.clone(), |p| p.set.clone());
    let mut w = s.omega_start;
    let mut step = s.step;
    // The step the sweep meant to take to `w` (`step` is shorter where the grid cut it).
    let mut stride = s.step;
    // Whether a failed point searches for the branch on the far side of the gap.
    let mut probing = true;
    // The last two kept points as (w, ln A), for the adaptive step.
    let mut kept: Vec<(f64, f64)> = previous
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(|p| (p.omega, p.dofs.norm_peak.ln()))
        .collect();
    while !beyond(w) && out.len() < s.max_points {
        let auto_point;
        let point_settings = match s.point.auto {
            Some(_) => {
                auto_point = crate::auto::fixed(&s.point, &auto_set);
                &auto_point
            }
            None => &s.point,
        };
        // Secant predictor from the last two points (the paper restarts from the previous
        // one); if Newton does not converge from it, the previous point is tried as well.
        let secant = match (&prev, &before) {
            (Some(p), Some((w0, set0, x0))) if p.omega != *w0 => {
                // Automatic sets may differ from one point to the next.
                let x0 = if *set0 == p.set {
                    Some(x0.clone())
                } else {
                    p.set.prolong(x0, set0).ok()
                };
                x0.map(|x0| secant(w, (p.omega, &p.friction), (*w0, &x0)))
            }
            _ => None,
        };
        let mut sol = None;
        if let (Some(p), Some(x)) = (&prev, &secant) {
            // Contacts stuck all period stay where they were at the last point, not where
            // the secant puts their free mean force (docs/stuck-contacts.md).
            let first = solve_point_holding(
                rec,
                params,
                w,
                point_settings,
                Some((&p.set, x)),
                Some((&p.set, &p.friction)),
            )?;
            if first.status.converged() {
                sol = Some(first);
            } else {
                let mut again =
                    solve_point(rec, params, w, point_settings, Some((&p.set, &p.friction)))?;
                again.iterations += first.iterations;
                again.krylov_iterations += first.krylov_iterations;
                sol = Some(again);
            }
        }
        let sol = match sol {
            Some(sol) => sol,
            None => {
                let start = prev.as_ref().map(|p| (&p.set, p.friction.as_slice()));
                solve_point(rec, params, w, point_settings, start)?
            }
        };
        // A contact that slipped at the last point and sticks all period here is held where
        // it re-stuck in between, located to a fraction of the step.
        let sol = match &prev {
            Some(p) if sol.status.converged() => {
                held_where_restuck(rec, params, point_settings, s.step, p, sol, stop)?
            }
            _ => sol,
        };
        let sol = match s.point.auto {
            Some(tol) if sol.status.converged() && auto_check.due(&sol, tol) => {
                let sol = crate::auto::refine(
                    rec,
                    params,
                    &s.point,
                    tol,
                    sol,
                    &mut auto_check.first_set,
                )?;
                auto_check.checked(&sol, tol);
                // Far within the tolerance: the next point tries the set below (checked there).
                if sol
                    .estimate
                    .as_ref()
                    .is_some_and(|e| e.relative < tol / 16.0)
                    && let Some(lower) = crate::auto::lower(&sol.set, &s.point.set)
                {
                    auto_check.shrinking = Some(lower);
                }
                sol
            }
            _ => {
                auto_check.skipped();
                sol
            }
        };
        let ok = sol.status.converged();
        if !ok && prev.is_some() && step / 2.0 >= s.min_step {
            // Retry closer to the last good point.
            step /= 2.0;
            stride = step;
            w = prev.as_ref().map_or(w, |p| p.omega) + dir * step;
            continue;
        }
        let mut next_step = (stride * 1.5).min(s.step);
        if let (true, Some(tol), Some(p)) = (ok, s.adaptive, &prev) {
            match step_control::judge(
                tol,
                &kept,
                w,
                sol.dofs.norm_peak,
                step,
                s.min_step,
                s.max_step,
            ) {
                Verdict::Retry(smaller) => {
                    step = smaller;
                    stride = step;
                    w = p.omega + dir * step;
                    continue;
                }
                Verdict::Accept(next) => next_step = next,
            }
        }
        // A branch that ends (a fold) leaves the next frequencies unreachable from the last
        // point: they are found from the far side of the gap instead.
        if !ok && prev.is_some() && probing {
            if let Some(filled) = from_far_side(rec, params, s, point_settings, &sol, dir, stop)? {
                let mut go_on = true;
                let (mut last, mut prior): (Option<PointSolution>, Option<PointSolution>) =
                    (None, None);
                for (i, mut solution) in filled.into_iter().enumerate() {
                    if i == 0 {
                        solution.iterations += sol.iterations;
                        solution.krylov_iterations += sol.krylov_iterations;
                    }
                    if !s.keep_histories {
                        solution.histories = solution.histories.emptied();
                    }
                    let point = FrcPoint { solution, step };
                    go_on = on_point(&point);
                    if point.solution.status.converged() {
                        prior = last.take();
                        last = Some(point.solution.clone());
                    }
                    out.push(point);
                    if !go_on {
                        break;
                    }
                }
                if !go_on {
                    break;
                }
                // The last point returned converged (the far point, or the last stepping
                // stone inside the band).
                let Some(p) = last else { break };
                before = prior.map(|b| (b.omega, b.set, b.friction));
                auto_set = p.set.clone();
                // The far side is another stretch of the curve: no rate measured before holds.
                auto_check.first_set = None;
                kept = vec![(p.omega, p.dofs.norm_peak.ln())];
                let last_w = p.omega;
                prev = Some(p);
                let Some((next_w, next_step)) = next_frequency(s, dir, tol_w, last_w, s.step)
                else {
                    break;
                };
                (w, step, stride) = (next_w, next_step, s.step);
                continue;
            }
            // Nothing converges ahead either: give up the frequencies one by one, without
            // searching again until a point converges.
            probing = false;
        }
        let mut point = FrcPoint {
            solution: sol,
            step,
        };
        if !s.keep_histories {
            point.solution.histories = point.solution.histories.emptied();
        }
        let go_on = on_point(&point);
        if ok {
            probing = true;
            before = prev.take().map(|p| (p.omega, p.set, p.friction));
            prev = Some(point.solution.clone());
            auto_set = match auto_check.shrinking.take() {
                Some(lower) => {
                    auto_check.force = true;
                    lower
                }
                None => point.solution.set.clone(),
            };
            kept.push((point.solution.omega, point.solution.dofs.norm_peak.ln()));
            if kept.len() > 2 {
                kept.remove(0);
            }
            step = next_step;
        } else {
            // Give this frequency up; restart the next one from zero friction with ramping.
            prev = None;
            auto_check.first_set = None;
            before = None;
            kept.clear();
            step = s.step;
        }
        let last_w = point.solution.omega;
        out.push(point);
        if !go_on {
            break;
        }
        let Some((next_w, next_step)) = next_frequency(s, dir, tol_w, last_w, step) else {
            break;
        };
        (w, step, stride) = (next_w, next_step, step);
    }
    Ok(out)
}

/// The frequency after `last_w` at `step` and the step to it, or `None` where `last_w` is
/// the end of the band: a point within rounding of the end frequency ends the sweep (the
/// steps add up to it only to rounding; a step of that size would creep on by ever longer
/// tiny steps), and a step past the end lands exactly on it, the step then being what is
/// left, so that a retry (a failed or refused point) halves the real distance and stays
/// inside the band. On a fixed grid a step past the next grid point lands on it likewise:
/// after halved steps (or a branch found from the far side of a gap) the sweep comes back
/// to `omega_start + k step`, so that curves of one grid share their frequencies.
fn next_frequency(
    s: &FrcSettings,
    dir: f64,
    tol_w: f64,
    last_w: f64,
    step: f64,
) -> Option<(f64, f64)> {
    if (last_w - s.omega_end).abs() <= tol_w {
        return None;
    }
    let beyond = |w: f64| (w - s.omega_end) * dir > tol_w;
    let mut w = last_w + dir * step;
    if s.adaptive.is_none() {
        let g = grid_after(s, dir, last_w);
        if (w - g) * dir > tol_w {
            w = g;
        }
    }
    Some(if beyond(w) && !beyond(last_w) {
        (s.omega_end, (s.omega_end - last_w).abs())
    } else {
        (w, (w - last_w).abs())
    })
}

/// The first point of the sweep's nominal grid `omega_start + k step` beyond `w` in the
/// sweep's direction (a point within rounding of `w` counts as `w`).
pub(crate) fn grid_after(s: &FrcSettings, dir: f64, w: f64) -> f64 {
    let k = ((w - s.omega_start) * dir / s.step + 1e-9).floor() + 1.0;
    s.omega_start + dir * k * s.step
}

/// The finest frequency interval a re-stick is located to, as a fraction of the sweep's
/// nominal step (docs/stuck-contacts.md, section 3). Fine enough that the contact, just past
/// its re-stick, sticks where it was at the last slipping frequency: coarser, it is held
/// where Newton's path left it on the way (issue 29's stiff shroud at all:31 held its tail
/// 27-44 % apart between steps 20 and 40 and step 5 with `step / 16`, 0.1-0.8 % with
/// `step / 32` and finer).
const RESTICK_DIVISIONS: f64 = 256.0;

/// Most solves spent locating re-sticks between two points of a sweep: one bisection to
/// `step / 256` (eight halvings), the solve at its end and the one after it, with room for
/// two more. Where many contacts re-stick at different frequencies of one step (a 100-contact
/// sector), the search is not made at all ([`RESTICK_MAX_CONTACTS`]).
const RESTICK_MAX_SOLVES: usize = 12;

/// The stick fraction from which a contact counts as re-stuck while a re-stick is located.
/// A solve that starts before the re-stick and lands well beyond it converges onto the edge of
/// the stick region with a slip of a few samples (the Galerkin law tolerates it; 0.996 of the
/// period stuck on the model of docs/stuck-contacts.md, section 5), a state the slow sweep
/// never passes through; counted as slipping, it would be taken for the branch and the re-stick
/// placed beyond it.
const RESTICK_FRACTION: f64 = 0.99;

/// Whether a contact that slips over more than 1 % of `before`'s period slips over less than
/// that of `sol`'s.
fn newly_stuck(sol: &PointSolution, before: &PointSolution) -> bool {
    count_newly_stuck(sol, before) > 0
}

/// How many contacts that slip over more than 1 % of `before`'s period slip over less than
/// that of `sol`'s.
fn count_newly_stuck(sol: &PointSolution, before: &PointSolution) -> usize {
    let (now, was) = (sol.stick_fractions(), before.stick_fractions());
    now.iter()
        .zip(&was)
        .filter(|(n, w)| **n >= RESTICK_FRACTION && **w < RESTICK_FRACTION)
        .count()
}

/// Most contacts re-sticking in one step for which the re-stick is searched. On a
/// 100-contact 3-D sector many contacts re-stick within each step near the resonance; the
/// search then cost 3-5 times the sweep's Newton iterations (21 points: 487 -> 1430-2266), so
/// such steps keep the hold at the previous point (docs/stuck-contacts.md, section 3).
const RESTICK_MAX_CONTACTS: usize = 2;

/// Least share of the model's contacts that must re-stick in a step for the re-stick to be
/// searched. A contact's held mean force moves the response by about its share of the
/// interface: on the 100-contact 3-D sector (one or two re-stick per step) the search
/// changed the amplitudes between steps 10 and 5 by 0.01 % of them, at twice the cost
/// (docs/stuck-contacts.md, section 3), while a damper's one or two contacts decide it.
const RESTICK_MIN_SHARE: f64 = 0.1;

/// Whether a step in which `n_new` of `n_contacts` contacts re-stick is searched.
fn restick_searched(n_new: usize, n_contacts: usize) -> bool {
    n_new > 0
        && n_new <= RESTICK_MAX_CONTACTS
        && n_new as f64 >= RESTICK_MIN_SHARE * n_contacts as f64
}

/// `sol` (converged at its frequency, its stuck contacts held at `prev`, the sweep's last
/// point) with every contact that slipped at `prev` and sticks at `sol` (over at least
/// [`RESTICK_FRACTION`] of the period) held where
/// a slow sweep leaves it: where it re-stuck between the two frequencies, located by
/// bisection to `step / RESTICK_DIVISIONS` (each frequency solved from, and held at, the one
/// before). Holding at `prev` instead makes the held mean force, and `max_t |u|` with it,
/// depend on where the grid put the last slipping point (docs/stuck-contacts.md, section 3).
/// Where a solve on the way does not converge, the budget of [`RESTICK_MAX_SOLVES`] is spent
/// or the sweep is stopping, the search ends with the last solution at `sol`'s frequency it has (`sol` itself
/// if none).
fn held_where_restuck(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    step: f64,
    prev: &PointSolution,
    sol: PointSolution,
    stop: &dyn Fn() -> bool,
) -> Result<PointSolution, SolveError> {
    let resolution = step / RESTICK_DIVISIONS;
    let target = sol.omega;
    let n_new = count_newly_stuck(&sol, prev);
    if !restick_searched(n_new, sol.contacts.len()) || (target - prev.omega).abs() <= resolution {
        return Ok(sol);
    }
    let (mut iterations, mut krylov, mut solves) = (0, 0, 0);
    let mut solve_held = |w: f64,
                          start: &PointSolution,
                          held: &PointSolution|
     -> Result<Option<PointSolution>, SolveError> {
        if solves >= RESTICK_MAX_SOLVES || stop() {
            return Ok(None);
        }
        solves += 1;
        let s = solve_point_holding(
            rec,
            params,
            w,
            settings,
            Some((&start.set, &start.friction)),
            Some((&held.set, &held.friction)),
        )?;
        iterations += s.iterations;
        krylov += s.krylov_iterations;
        Ok(s.status.converged().then_some(s))
    };
    let mut reference = prev.clone();
    let mut here = sol.clone();
    // `here` is always a converged solution at `target` held at `reference`.
    'search: while newly_stuck(&here, &reference) && (target - reference.omega).abs() > resolution {
        // The first re-stick after `reference`: `lo` slips where `reference` does, `hi` (at
        // `hi_w`, held at `lo`) has a contact stuck that slipped at `lo`.
        let mut lo = reference.clone();
        let (mut hi_w, mut hi) = (target, None);
        while (hi_w - lo.omega).abs() > resolution {
            let mid_w = 0.5 * (lo.omega + hi_w);
            let Some(mid) = solve_held(mid_w, &lo, &lo)? else {
                break 'search;
            };
            if newly_stuck(&mid, &lo) {
                (hi_w, hi) = (mid_w, Some(mid));
            } else {
                (lo, hi) = (mid, None);
            }
        }
        let hi = match hi {
            Some(hi) => hi,
            None => match solve_held(hi_w, &here, &lo)? {
                Some(hi) => hi,
                None => break 'search,
            },
        };
        if hi_w == target {
            here = hi;
            break;
        }
        let Some(next) = solve_held(target, &here, &hi)? else {
            break 'search;
        };
        (here, reference) = (next, hi);
    }
    // Every solve's work, the first included (`here` is `sol` or one of them).
    here.iterations = sol.iterations + iterations;
    here.krylov_iterations = sol.krylov_iterations + krylov;
    Ok(here)
}

/// The forces at `w` on the secant through `(w1, x1)` and `(w0, x0)`.
fn secant(w: f64, (w1, x1): (f64, &[f64]), (w0, x0): (f64, &[f64])) -> Vec<f64> {
    let t = (w - w1) / (w1 - w0);
    x1.iter().zip(x0).map(|(a, b)| a + t * (a - b)).collect()
}

/// Grid points ahead of a point that cannot be reached where a cold start (the harmonic ramp
/// from zero force) is tried besides the 1st, 2nd, 4th, ... (the points between 1 and 16 steps
/// ahead).
const FAR_SIDE_PROBES: usize = 16;

/// How far the search for a branch's far side looks in grid steps, past the band's end where
/// the band is shorter: the probes must not depend on where the band ends, or a sweep that
/// ends inside the gap gives up points that a longer one fills (the CalculiX area contact,
/// 4400..5240 against 4400..6160: the gap after its fold at 5150.5 is bridged by a cold start
/// at 5280 and not before; single-contact-3d at 6.3..6.9 against 6.3..7.5 likewise).
const FAR_SIDE_REACH: usize = 64;

/// The frequencies from `failed` (not reached from the last converged point, most often where
/// the branch ended at a fold) to the first point ahead that a cold start reaches: cold starts
/// at the 1st, 2nd, 4th, ... 16th point of the sweep's grid (`omega_start + k step`) ahead,
/// then at the grid points between, then at the 32nd, 64th, ... up to [`FAR_SIDE_REACH`] or
/// the band's end, whichever is further; the first that converges is swept back over the grid
/// points to `failed`, each point started from its neighbour: the branch a
/// continuation from above follows, and where a stepped sine lands after the fold on
/// single-contact-3d (docs/accuracy.md, "A sweep past the end of its branch"). The probes do
/// not depend on the band's end: those past it (never at or below zero frequency) are only
/// stepping stones of the way back and are not returned.
/// Returned in sweep order, the last converged; a point of the way back that does not converge ends it
/// there and stays as computed (the first entry is `failed` itself where the way back did not
/// reach it). `None` where no cold start ahead converges, or where only points past the band's
/// end did.
fn from_far_side(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    settings: &PointSettings,
    failed: &PointSolution,
    dir: f64,
    stop: &dyn Fn() -> bool,
) -> Result<Option<Vec<PointSolution>>, SolveError> {
    let w0 = failed.omega;
    let room = (s.omega_end - w0) * dir;
    // The nominal step: `failed` was reached by halving it to the smallest.
    let step = s.step;
    if room <= 0.0 {
        return Ok(None);
    }
    // The grid points ahead, `first + (k - 1) step` (`failed` was reached by halved steps
    // and is seldom one of them): `grid` of them inside the band, `span` searched.
    let first = (grid_after(s, dir, w0) - w0) * dir;
    let at = |k: usize| first + (k - 1) as f64 * step;
    let grid = if room + 1e-9 * step >= first {
        ((room - first) / step + 1e-9).floor() as usize + 1
    } else {
        0
    };
    // Downward, the search stops short of zero frequency.
    let positive = |k: usize| (w0 + dir * at(k)) * w0.signum() > 1e-9 * step;
    let span = (1..=grid.max(FAR_SIDE_REACH))
        .take_while(|&k| k <= grid || positive(k))
        .last()
        .unwrap_or(0);
    let in_band = |d: f64| d <= room + 1e-9 * step;
    // The 1st, 2nd, 4th, ... (long gaps cheaply) up to 16, those between (a cold start's
    // success is erratic near a fold), then the 32nd, 64th, ...; where the band's end lies
    // short of the next grid point, it is probed first.
    let powers = |lo: usize, hi: usize| {
        std::iter::successors(Some(1usize), |k| k.checked_mul(2))
            .take_while(move |&k| k <= hi)
            .filter(move |&k| k >= lo)
    };
    let mut ahead: Vec<f64> = Vec::new();
    if grid == 0 {
        ahead.push(room);
    }
    ahead.extend(powers(1, span.min(FAR_SIDE_PROBES)).map(at));
    ahead.extend(
        (1..=span.min(FAR_SIDE_PROBES))
            .filter(|j| !j.is_power_of_two())
            .map(at),
    );
    ahead.extend(powers(FAR_SIDE_PROBES + 1, span).map(at));
    let mut far = None;
    for d in ahead {
        if stop() {
            return Ok(None);
        }
        // Past the band an error (a frequency the user did not ask for) is a probe that
        // did not converge.
        let sol = match solve_point(rec, params, w0 + dir * d, settings, None) {
            Ok(sol) => sol,
            Err(_) if !in_band(d) => continue,
            Err(e) => return Err(e),
        };
        if sol.status.converged() {
            far = Some((d, sol));
            break;
        }
    }
    let Some((ahead, far)) = far else {
        return Ok(None);
    };
    // Back to `failed` over the grid points before the far point, then `failed` itself.
    let mut way: Vec<f64> = vec![0.0];
    way.extend((1..=span).map(at).take_while(|d| *d < ahead - 1e-9 * step));
    let n_back = way.len();
    let mut back: Vec<PointSolution> = Vec::new();
    for &d in way.iter().rev() {
        if stop() {
            break;
        }
        let w = w0 + dir * d;
        let (p, b) = match back.last() {
            Some(p) => (
                p,
                back.len().checked_sub(2).map(|i| &back[i]).or(Some(&far)),
            ),
            None => (&far, None),
        };
        let start = match b {
            Some(b) if b.omega != p.omega && b.set == p.set => {
                secant(w, (p.omega, &p.friction), (b.omega, &b.friction))
            }
            _ => p.friction.clone(),
        };
        let own = crate::auto::fixed(settings, &p.set);
        let settings_here = if settings.auto.is_some() {
            &own
        } else {
            settings
        };
        let solved = solve_point_holding(
            rec,
            params,
            w,
            settings_here,
            Some((&p.set, &start)),
            Some((&p.set, &p.friction)),
        )
        .and_then(|sol| {
            if sol.status.converged() {
                return Ok(sol);
            }
            let mut again =
                solve_point(rec, params, w, settings_here, Some((&p.set, &p.friction)))?;
            again.iterations += sol.iterations;
            Ok(again)
        });
        // A stepping stone past the band that fails with an error ends the way back there.
        let sol = match solved {
            Ok(sol) => sol,
            Err(_) if !in_band(d) => break,
            Err(e) => return Err(e),
        };
        let converged = sol.status.converged();
        back.push(sol);
        if !converged {
            break;
        }
    }
    let reached = back.len() == n_back && back.last().is_some_and(|p| p.status.converged());
    let mut out: Vec<PointSolution> = Vec::with_capacity(back.len() + 2);
    if !reached {
        out.push(failed.clone());
        // The unconverged end of the way back is the failed frequency's neighbour or a
        // point between: keep only the converged stretch next to the far point.
        while back.last().is_some_and(|p| !p.status.converged()) {
            back.pop();
        }
    }
    out.extend(back.into_iter().rev());
    out.push(far);
    // Points past the band's end were stepping stones; their work counts in the first point's.
    let (mut iterations, mut krylov) = (0, 0);
    out.retain(|p| {
        let kept = in_band((p.omega - w0) * dir);
        if !kept {
            iterations += p.iterations;
            krylov += p.krylov_iterations;
        }
        kept
    });
    if let Some(first) = out.first_mut() {
        first.iterations += iterations;
        first.krylov_iterations += krylov;
    }
    if !out.iter().any(|p| p.status.converged()) {
        return Ok(None);
    }
    Ok(Some(out))
}

/// The E-WR equations with the frequency as an unknown, bordered by the arclength
/// constraint `t . (y - y_pred) = 0` in the scaled variables `(R / r_scale, w)`.
///
/// Dense (assembled `J_R` and a difference column `dg/dw`) or matrix-free: the scaled E-WR
/// system at the linearised frequency is kept with its preconditioner `M`, and the bordered
/// preconditioner `[[r_scale M, dg/dw], [t_R^T, t_w]]` is inverted exactly by block
/// elimination (one more application of `M^-1`), so GMRES sees the border too.
struct Bordered<'r> {
    rec: &'r Receptance,
    params: ContactParams,
    point: PointSettings,
    scale: f64,
    /// 3-D contacts: the scalings of their equations, fixed along the curve (at its first
    /// point) so that `g(R, w)` is one smooth function; `None` for constant bounds.
    unilateral: Option<UnilateralParams>,
    r_scale: f64,
    tangent: Vec<f64>,
    predicted: Vec<f64>,
    /// The last point of the curve: contacts stuck all period are held where they were there.
    held: Vec<f64>,
    /// Matrix-free linearisation: the system, `dg/dw`, `M^-1 dg/dw / r_scale`.
    lin: Option<BorderedLinearization<'r>>,
}

fn err(e: impl std::fmt::Display) -> EvalError {
    EvalError(e.to_string())
}

impl<'r> Bordered<'r> {
    fn n(&self) -> usize {
        self.tangent.len() - 1
    }

    /// The scaled system at frequency `w` (owning its prepared receptance): the E-WR
    /// equations of constant bounds, or of 3-D contacts with the curve's fixed scalings.
    fn system(&self, w: f64) -> Result<Box<dyn Residual + 'r>, EvalError> {
        let cond_span = crate::profile::span(crate::profile::Phase::Condense);
        let at = self
            .rec
            .prepare(w, self.point.set.harmonics())
            .map_err(err)?;
        if let Some(p) = &self.unilateral {
            let cond = ewr_contact::CondensedContacts::from_receptance(&at, &self.point.set)
                .map_err(err)?;
            drop(cond_span);
            let mut sys = crate::point::unilateral_system(
                cond,
                &self.point.set,
                self.point.n_samples,
                p.clone(),
            )
            .map_err(err)?;
            let set = &self.point.set;
            crate::point::hold(&mut sys, set, Some((set, &self.held))).map_err(err)?;
            return Ok(Box::new(sys));
        }
        drop(cond_span);
        let sys = ewr_contact::EwrResidual::owning(
            at,
            self.point.set.clone(),
            self.point.n_samples,
            self.point.law,
            self.params.clone(),
        )
        .map_err(err)?;
        Ok(Box::new(crate::ScaledContacts::new(
            Box::new(sys),
            self.scale,
            crate::Policy::constant_bounds(self.point.preconditioner),
        )))
    }

    fn friction(&self, y: &[f64]) -> Vec<f64> {
        y[..self.n()].iter().map(|v| v * self.r_scale).collect()
    }

    /// g(R, w) scaled, and optionally its R-Jacobian into `jr`.
    fn g(&self, y: &[f64], g: &mut [f64], jr: Option<MatMut<'_, f64>>) -> Result<(), EvalError> {
        let r = self.friction(y);
        self.system(y[self.n()])?.evaluate(&r, g, jr)
    }

    /// `dg/dw` at `y` by a forward difference from `g = g(y)`: the receptance's frequency
    /// dependence has no cheap analytic derivative for every backend.
    fn dg_dw(&self, y: &[f64], g: &[f64]) -> Result<Vec<f64>, EvalError> {
        let n = self.n();
        let dw = 1e-7 * y[n].abs().max(1.0);
        let mut yp = y.to_vec();
        yp[n] += dw;
        let mut gp = vec![0.0; n];
        self.g(&yp, &mut gp, None)?;
        Ok(gp.iter().zip(g).map(|(p, g)| (p - g) / dw).collect())
    }

    fn constraint(&self, y: &[f64]) -> f64 {
        (0..=self.n())
            .map(|i| self.tangent[i] * (y[i] - self.predicted[i]))
            .sum()
    }
}

/// The matrix-free linearisation of a [`Bordered`] system, borrowed apart from its other
/// fields so that products need not copy the tangent.
type BorderedLinearization<'r> = (Box<dyn Residual + 'r>, Vec<f64>, Vec<f64>);

fn linearized<'a, 'r>(
    lin: &'a mut Option<BorderedLinearization<'r>>,
) -> Result<&'a mut BorderedLinearization<'r>, EvalError> {
    lin.as_mut()
        .ok_or_else(|| EvalError("bordered system used before linearize".into()))
}

impl Residual for Bordered<'_> {
    fn len(&self) -> usize {
        self.tangent.len()
    }

    fn evaluate(
        &mut self,
        y: &[f64],
        out: &mut [f64],
        jacobian: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        let n = self.n();
        match jacobian {
            None => self.g(y, &mut out[..n], None)?,
            Some(mut j) => {
                let mut jr = Mat::<f64>::zeros(n, n);
                self.g(y, &mut out[..n], Some(jr.as_mut()))?;
                let d = self.dg_dw(y, &out[..n])?;
                let mut jm = j.rb_mut();
                for i in 0..n {
                    for c in 0..n {
                        // Unknowns are R / r_scale.
                        jm[(i, c)] = jr[(i, c)] * self.r_scale;
                    }
                    jm[(i, n)] = d[i];
                }
                for c in 0..=n {
                    jm[(n, c)] = self.tangent[c];
                }
            }
        }
        out[n] = self.constraint(y);
        Ok(())
    }

    fn supports_matrix_free(&self) -> bool {
        true
    }

    fn prefers_matrix_free(&self) -> bool {
        self.params.len() > 1
    }

    fn linearize(&mut self, y: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let n = self.n();
        let mut sys = self.system(y[n])?;
        sys.linearize(&self.friction(y), &mut out[..n])?;
        let d = self.dg_dw(y, &out[..n])?;
        let mut z = d.clone();
        sys.precondition(&mut z)?;
        z.iter_mut().for_each(|v| *v /= self.r_scale);
        out[n] = self.constraint(y);
        self.lin = Some((sys, d, z));
        Ok(())
    }

    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let n = self.n();
        let (rs, t) = (self.r_scale, &self.tangent);
        let (sys, d, _) = linearized(&mut self.lin)?;
        sys.jacobian_product(&v[..n], &mut out[..n])?;
        for i in 0..n {
            out[i] = rs * out[i] + d[i] * v[n];
        }
        out[n] = t.iter().zip(v).map(|(a, b)| a * b).sum();
        Ok(())
    }

    fn jacobian_transpose_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let n = self.n();
        let (rs, t) = (self.r_scale, &self.tangent);
        let (sys, d, _) = linearized(&mut self.lin)?;
        sys.jacobian_transpose_product(&v[..n], &mut out[..n])?;
        for i in 0..n {
            out[i] = rs * out[i] + t[i] * v[n];
        }
        out[n] = d.iter().zip(v).map(|(a, b)| a * b).sum::<f64>() + t[n] * v[n];
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        // [[s M, d], [t_R^T, t_w]] [x; xi] = [a; beta] with z = M^-1 d / s:
        // x = M^-1 a / s - xi z, xi = (beta - t_R . M^-1 a / s) / (t_w - t_R . z).
        let n = self.n();
        let (rs, t) = (self.r_scale, &self.tangent);
        let (sys, _, z) = linearized(&mut self.lin)?;
        sys.precondition(&mut v[..n])?;
        v[..n].iter_mut().for_each(|x| *x /= rs);
        let tz: f64 = t[..n].iter().zip(z.iter()).map(|(a, b)| a * b).sum();
        let ta: f64 = t[..n].iter().zip(v[..n].iter()).map(|(a, b)| a * b).sum();
        let den = t[n] - tz;
        if den.abs() > 1e-12 * (t[n].abs() + tz.abs()) && den.is_finite() {
            let xi = (v[n] - ta) / den;
            v[..n]
                .iter_mut()
                .zip(z.iter())
                .for_each(|(x, z)| *x -= xi * z);
            v[n] = xi;
        }
        Ok(())
    }
}

/// Unit tangent of the curve at `y`, oriented along `previous` (or towards increasing `w`
/// times `dir` when there is none): `J_R dR/dw = -dg/dw`, by dense LU or by GMRES.
fn tangent(
    b: &Bordered<'_>,
    y: &[f64],
    previous: Option<&[f64]>,
    dir: f64,
) -> Result<Vec<f64>, EvalError> {
    let n = b.n();
    let mut g = vec![0.0; n];
    let dr: Vec<f64> = if newton::uses_matrix_free(b, b.point.newton.linear) {
        let mut sys = b.system(y[n])?;
        sys.linearize(&b.friction(y), &mut g)?;
        let rhs: Vec<f64> = b.dg_dw(y, &g)?.iter().map(|v| -v).collect();
        let sol = newton::gmres(sys.as_mut(), &rhs, 1e-8, &b.point.newton.krylov)?;
        if sol.converged {
            sol.x.iter().map(|v| v / b.r_scale).collect()
        } else {
            vec![f64::NAN; n]
        }
    } else {
        let mut jr = Mat::<f64>::zeros(n, n);
        b.g(y, &mut g, Some(jr.as_mut()))?;
        let d = b.dg_dw(y, &g)?;
        let rhs = faer::Col::<f64>::from_fn(n, |i| -d[i]);
        for c in 0..n {
            for i in 0..n {
                jr[(i, c)] *= b.r_scale;
            }
        }
        let x = jr.partial_piv_lu().solve(&rhs);
        let lu: Vec<f64> = (0..n).map(|i| x[i]).collect();
        // A contact stuck all period leaves its mean friction force free (no equation fixes
        // it): J_R is singular while dg/dw is in its range, and the LU solution runs off along
        // that free direction, turning the curve into it. The least-squares solution of
        // smallest norm keeps the free force where it is and the curve going in w. At a fold
        // (dg/dw not in the range) both are dominated by the null vector, as they should be.
        match min_norm_solution(&jr, &rhs) {
            // Also when the LU solution is not finite (NaN compares false).
            Some(mn) if norm2(&lu) > 10.0 * norm2(&mn) || !norm2(&lu).is_finite() => mn,
            _ => lu,
        }
    };
    let mut t: Vec<f64> = dr.into_iter().chain([1.0]).collect();
    if t.iter().any(|v| !v.is_finite()) {
        // Singular J_R (a fold in w): the tangent is its null vector; keep the previous one.
        t = previous
            .map(<[f64]>::to_vec)
            .ok_or_else(|| EvalError("singular Jacobian at the first point".into()))?;
    }
    orient(t, previous, dir, n)
}

/// `t` normalised and oriented along `previous` (or towards increasing `w` times `dir`).
fn orient(
    mut t: Vec<f64>,
    previous: Option<&[f64]>,
    dir: f64,
    n: usize,
) -> Result<Vec<f64>, EvalError> {
    let norm = t.iter().map(|v| v * v).sum::<f64>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return Err(EvalError("the tangent of the curve vanished".into()));
    }
    t.iter_mut().for_each(|v| *v /= norm);
    let sign = match previous {
        Some(p) => p.iter().zip(&t).map(|(a, b)| a * b).sum::<f64>().signum(),
        None => t[n].signum() * dir,
    };
    if sign < 0.0 {
        t.iter_mut().for_each(|v| *v = -*v);
    }
    Ok(t)
}

fn norm2(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The least-squares solution of `a x = b` of smallest norm, up to a Tikhonov term
/// `1e-12 ||a||_F^2 / n` (normal equations): for the singular Jacobians of a contact stuck
/// all period.
fn min_norm_solution(a: &Mat<f64>, b: &faer::Col<f64>) -> Option<Vec<f64>> {
    let n = a.ncols();
    let mut ata = a.transpose() * a;
    let fro: f64 = (0..n).map(|i| ata[(i, i)]).sum();
    let mu = 1e-12 * fro / n.max(1) as f64;
    for i in 0..n {
        ata[(i, i)] += mu;
    }
    let atb = a.transpose() * b;
    let x = ata.llt(faer::Side::Lower).ok()?.solve(&atb);
    let x: Vec<f64> = (0..n).map(|i| x[i]).collect();
    x.iter().all(|v| v.is_finite()).then_some(x)
}

fn arclength(
    rec: &Receptance,
    params: &ContactParams,
    s: &FrcSettings,
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
) -> Result<Vec<FrcPoint>, SolveError> {
    let dir = if s.omega_end >= s.omega_start {
        1.0
    } else {
        -1.0
    };
    let (lo, hi) = if dir > 0.0 {
        (s.omega_start, s.omega_end)
    } else {
        (s.omega_end, s.omega_start)
    };
    let mut out = Vec::new();
    let first = solve_point(rec, params, s.omega_start, &s.point, None)?;
    let first_ok = first.status.converged();
    let mut point = FrcPoint {
        solution: first,
        step: 0.0,
    };
    if !s.keep_histories {
        point.solution.histories = point.solution.histories.emptied();
    }
    let go_on = on_point(&point);
    out.push(point);
    if !first_ok || !go_on {
        return Ok(out);
    }
    let n = out[0].solution.friction.len();
    // Automatic rho of constant bounds is fixed at the first frequency along the curve, as
    // the scalings of 3-D contacts are.
    let resolved = if params.rho_auto && params.normal.is_none() {
        let at = rec.prepare(s.omega_start, s.point.set.harmonics())?;
        crate::point::resolve_rho(&at, &s.point.set, params)?
    } else {
        params.clone()
    };
    // Unknowns are scaled by the force level: the friction bound, or for 3-D contacts the
    // largest force of the first solution (normal and friction forces together).
    let (r_scale, unilateral, scale) = match params.normal {
        None => (
            params.mu_n.iter().copied().fold(0.0, f64::max).max(1e-300),
            None,
            scaled_norm(params),
        ),
        Some(_) => {
            let at = rec.prepare(s.omega_start, s.point.set.harmonics())?;
            let cond = ewr_contact::CondensedContacts::from_receptance(&at, &s.point.set)?;
            let p = crate::unilateral::auto_params(params, &cond);
            let f = p.force_scale.iter().copied().fold(0.0, f64::max);
            let largest = out[0]
                .solution
                .friction
                .iter()
                .fold(0.0f64, |a, v| a.max(v.abs()));
            (
                largest.max(f).max(1e-300),
                Some(p),
                if f > 0.0 { 1.0 / (f * f) } else { 1.0 },
            )
        }
    };
    let mut b = Bordered {
        rec,
        params: resolved,
        point: s.point.clone(),
        scale,
        unilateral,
        r_scale,
        tangent: vec![0.0; n + 1],
        predicted: vec![0.0; n + 1],
        held: out[0].solution.friction.clone(),
        lin: None,
    };
    let to_y = |sol: &PointSolution| -> Vec<f64> {
        sol.friction
            .iter()
            .map(|v| v / r_scale)
            .chain([sol.omega])
            .collect()
    };
    let mut y = to_y(&out[0].solution);
    let mut t_prev: Option<Vec<f64>> = None;
    let mut step = s.step;
    let mut arc = 0.0;
    let mut kept: Vec<(f64, f64)> = vec![(arc, out[0].solution.dofs.norm_peak.ln())];
    let mut newton_opts = s.point.newton.clone();
    newton_opts.max_iterations = newton_opts.max_iterations.min(30);
    if params.normal.is_some() {
        newton_opts = crate::unilateral::with_stagnation_window(&newton_opts);
    }
    while out.len() < s.max_points {
        let t = match tangent(&b, &y, t_prev.as_deref(), dir) {
            Ok(t) => t,
            Err(_) => break,
        };
        b.tangent = t.clone();
        b.predicted = y.iter().zip(&t).map(|(a, d)| a + step * d).collect();
        let x0 = b.predicted.clone();
        let mut report = newton::solve(&mut b, &x0, &newton_opts);
        // A corrector that lands ten steps from the prediction has found
        // another part of the curve (or of another curve): at a nonsmooth turn (a contact that
        // starts to close, grazing) it can jump across, even to negative frequencies. Such a
        // point is refused like a failed one, so the step shrinks.
        let moved = norm2(
            &report
                .x
                .iter()
                .zip(&b.predicted)
                .map(|(a, p)| a - p)
                .collect::<Vec<f64>>(),
        );
        if report.status.converged() && (moved > 10.0 * step || report.x[n] <= 0.0) {
            report.status = NewtonStatus::Stalled;
        }
        if !report.status.converged() {
            if step / 2.0 >= s.min_step {
                step /= 2.0;
                continue;
            }
            // Record the failure at the predicted frequency and stop: the curve is lost.
            let mut failed = out.last().expect("first point").solution.clone();
            failed.omega = b.predicted[n];
            failed.status = match report.status {
                NewtonStatus::Converged => NewtonStatus::Stalled,
                other => other,
            };
            failed.residual = report.residual;
            failed.iterations = report.iterations;
            let p = FrcPoint {
                solution: failed,
                step,
            };
            on_point(&p);
            out.push(p);
            break;
        }
        let yn = report.x;
        let w = yn[n];
        // Post-process with the regular point solver from the corrected point (it converges
        // at once and gives histories, summaries and the status on the plain equations).
        let r: Vec<f64> = yn[..n].iter().map(|v| v * r_scale).collect();
        let set = s.point.set.clone();
        let mut sol = solve_point(rec, params, w, &s.point, Some((&set, &r)))?;
        sol.iterations += report.iterations;
        sol.krylov_iterations += report.krylov_iterations;
        // Adaptive steps measure the bending of ln A along the arclength, which stays smooth
        // through a fold where w turns back.
        let mut bent = None;
        if let (Some(tol), true) = (s.adaptive, sol.status.converged()) {
            match step_control::judge(
                tol,
                &kept,
                arc + step,
                sol.dofs.norm_peak,
                step,
                s.min_step,
                s.max_step,
            ) {
                Verdict::Retry(smaller) => {
                    step = smaller;
                    continue;
                }
                Verdict::Accept(next) => bent = Some(next),
            }
        }
        arc += step;
        kept.push((arc, sol.dofs.norm_peak.ln()));
        if kept.len() > 2 {
            kept.remove(0);
        }
        let mut p = FrcPoint {
            solution: sol,
            step,
        };
        if !s.keep_histories {
            p.solution.histories = p.solution.histories.emptied();
        }
        b.held = p.solution.friction.clone();
        let go_on = on_point(&p);
        out.push(p);
        if !go_on || w < lo || w > hi {
            break;
        }
        if report.iterations <= 3 {
            step = (step * 1.5).min(s.max_step);
        } else if report.iterations > 8 {
            step = (step / 1.5).max(s.min_step);
        }
        if let Some(next) = bent {
            step = step.min(next);
        }
        y = yn;
        t_prev = Some(t);
    }
    Ok(out)
}
