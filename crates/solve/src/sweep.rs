//! The sweep driver every front end runs: frequency response curves for one or several
//! friction bounds (in parallel, over one condensation), resumed from stored points, capped,
//! interrupted, their peaks and phase resonances refined, each stop with its reason. Points
//! reach the caller as they are computed ([`SweepObserver`]), so that a CSV row, a progress
//! bar or a Python callback sees them at once and nothing computed is lost. A point's
//! stability and truncation estimate need only that point: on small models they run on the
//! other threads while the sweep goes on, and the caller still sees the points in order.

use crate::continuation::{Continuation, FrcPoint, FrcSettings, frc_resume_until, frc_until};
use crate::estimate::truncation_error;
use crate::peaks::{Peak, refine_peaks};
use crate::periodic::{PointSolution, SolveError};
use crate::point::solve_point;
use crate::quadrature::{PhaseResonance, phase_resonances};
use crate::setup::{Setup, SweepOptions};
use crate::stability::{stability, stability_all_phases};
use ewr_contact::ContactParams;
use ewr_hb::receptance::ContactDynamics;
use ewr_hb::receptance::Receptance;
use rayon::prelude::*;
use std::fmt;

/// Why a curve stopped before its end.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StopReason {
    /// The solver failed (e.g. a singular structure at a frequency); the message says why.
    Error(String),
    /// The point cap was reached at `at` before `end`.
    Cap {
        /// Frequency of the last point.
        at: f64,
        /// The end the curve did not reach.
        end: f64,
        /// The cap.
        max_points: usize,
    },
    /// The user interrupted the run (Ctrl-C, SIGTERM) after the point at `at`.
    Interrupted {
        /// Frequency of the last point.
        at: f64,
    },
    /// The caller stopped the curve (e.g. an output could not be written).
    Caller(String),
    /// A stored point of a resumed curve could not be solved again: the stored sweep belongs
    /// to another model or other options (or is damaged), and must be kept as it is.
    Resume(String),
    /// The curve ended at `at` without reaching `end`: arclength continuation turned back
    /// and left the band at its start, or lost the curve's tangent.
    ShortOfEnd {
        /// Frequency of the last point.
        at: f64,
        /// The end the curve did not reach.
        end: f64,
    },
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Error(e) | StopReason::Caller(e) => f.write_str(e),
            StopReason::Resume(e) => write!(f, "a stored point could not be solved again: {e}"),
            StopReason::ShortOfEnd { at, end } => write!(
                f,
                "the curve ended at w = {at} without reaching {end}: it turned back and left the \
                 band (or its tangent was lost); its points are kept"
            ),
            StopReason::Cap {
                at,
                end,
                max_points,
            } => write!(
                f,
                "stopped at the cap of {max_points} points at w = {at} before reaching {end}; \
                 use a larger --step"
            ),
            StopReason::Interrupted { at } => {
                write!(f, "interrupted at w = {at}; `--resume` continues the sweep")
            }
        }
    }
}

/// One frequency response curve: its bound (if overridden), its points and how it ended.
#[derive(Clone, Debug)]
pub struct Curve {
    /// The friction bound of this curve, when it overrides the model's.
    pub mu_n: Option<f64>,
    /// Every point computed, in the order computed (also when the curve stopped early).
    pub points: Vec<FrcPoint>,
    /// `None` when the sweep ran to its end, else why it stopped.
    pub stopped: Option<StopReason>,
    /// The local maxima of the amplitude, refined to the true maximum in frequency.
    pub peaks: Vec<Peak>,
    /// Phase resonances of [`Curve::phase_dof`].
    pub phase: Vec<PhaseResonance>,
    /// The forced DOF whose phase defines phase resonance ([`Setup::phase_dof`]).
    pub phase_dof: Option<usize>,
    /// Points whose stability or estimate ran beside the sweep, on another thread (the
    /// others' in line): what `--profile`-style checks and tests read.
    pub beside: usize,
}

impl Curve {
    /// Points that did not converge.
    pub fn unconverged(&self) -> usize {
        self.points
            .iter()
            .filter(|p| !p.solution.status.converged())
            .count()
    }

    /// Newton iterations over every point.
    pub fn iterations(&self) -> usize {
        self.points.iter().map(|p| p.solution.iterations).sum()
    }

    /// GMRES iterations over every point.
    pub fn krylov_iterations(&self) -> usize {
        self.points
            .iter()
            .map(|p| p.solution.krylov_iterations)
            .sum()
    }
}

/// The points of a curve stored by an earlier run, to resume it.
#[derive(Clone, Debug, Default)]
pub struct StoredCurve {
    /// Frequencies, in the order computed.
    pub omega: Vec<f64>,
    /// The step that led to each point.
    pub step: Vec<f64>,
    /// Friction coefficients of each point (hb layout).
    pub friction: Vec<Vec<f64>>,
    /// The set the coefficients are on, where it is not the run's own (automatic sets).
    pub set: Option<ewr_hb::HarmonicSet>,
}

/// One curve to compute: its bound override, its setup (the model with that bound) and,
/// to resume, the points an earlier run stored.
pub struct CurveSpec<'a> {
    /// The friction bound of the curve, when it overrides the model's.
    pub mu_n: Option<f64>,
    /// The resolved setup of the curve.
    pub setup: &'a Setup,
    /// Points of an interrupted run of the same curve.
    pub resume: Option<&'a StoredCurve>,
}

/// What a front end does with a sweep as it runs. Called from the threads that compute the
/// curves, so it must be `Sync`.
pub trait SweepObserver: Sync {
    /// Every point as soon as it is computed (converged or not); `Err` stops its curve with
    /// that reason (the point is kept).
    fn point(&self, curve: usize, mu_n: Option<f64>, p: &FrcPoint) -> Result<(), StopReason>;

    /// Whether the whole run is being stopped: no peak is refined then.
    fn stopping(&self) -> bool {
        false
    }

    /// Something the user should hear that does not stop the run.
    fn warn(&self, _message: &str) {}
}

/// An observer that keeps going and tells nothing.
pub struct Quiet;

impl SweepObserver for Quiet {
    fn point(&self, _: usize, _: Option<f64>, _: &FrcPoint) -> Result<(), StopReason> {
        Ok(())
    }
}

/// Floquet multipliers of a curve's points, with the structure's dynamics built once.
struct Classifier<'r> {
    rec: &'r Receptance,
    dynamics: Option<ContactDynamics>,
    /// Every inter-sector phase of a cyclic sector's perturbation.
    all_phases: bool,
}

impl<'r> Classifier<'r> {
    fn new(rec: &'r Receptance, all_phases: bool, observer: &dyn SweepObserver) -> Self {
        let dynamics = rec
            .dynamics()
            .map_err(|e| observer.warn(&format!("warning: no stability: {e}")))
            .ok();
        Classifier {
            rec,
            dynamics,
            all_phases,
        }
    }

    /// Whether `sol`'s pencil is small enough to classify several at once (memory), and
    /// small enough that faer's kernels gain little from the cores on one of them.
    fn small(&self, sol: &PointSolution) -> bool {
        self.dynamics.as_ref().is_some_and(|d| {
            let copies = if self.all_phases { 2 } else { 1 };
            let n_force = sol.friction.len() * copies;
            // A cyclic sector's dynamics hold no states: each harmonic's are its diameter's,
            // doubled in the other phases' pencils.
            let states = match self.rec.cyclic_states() {
                Some(p) if d.cyclic => p * copies,
                _ => d.n_states(),
            };
            crate::stability::pencil_unknowns(states, &sol.set, n_force) <= CONCURRENT_PENCIL_UP_TO
                && n_force <= CONCURRENT_FORCES_UP_TO
        })
    }

    fn classify(
        &self,
        params: &ContactParams,
        settings: &crate::periodic::PointSettings,
        sol: &mut PointSolution,
        observer: &dyn SweepObserver,
    ) {
        let Some(d) = &self.dynamics else { return };
        if !sol.status.converged() || sol.stability.is_some() {
            return;
        }
        let classified = if self.all_phases {
            stability_all_phases(self.rec, d, params, settings, sol)
        } else {
            stability(self.rec, d, params, settings, sol)
        };
        match classified {
            Ok(s) => sol.stability = Some(s),
            Err(e) => observer.warn(&format!("warning: no stability at w = {}: {e}", sol.omega)),
        }
    }
}

/// Largest pencil (unknowns) classified beside other points: the Arnoldi basis and the dense
/// blocks of one then take tens of MB, and its kernels are too small to split well.
const CONCURRENT_PENCIL_UP_TO: usize = 6000;

/// Largest force part of a pencil classified beside other points (its Schur complement's
/// dense LU, 11.5 MB at this size, is the part faer would otherwise run on every core).
const CONCURRENT_FORCES_UP_TO: usize = 1200;

/// Largest model whose direct receptance (dense or sparse) is used beside the sweep: above,
/// each frequency's factorisation is large, and tasks at other frequencies would throw away the
/// one the sweep keeps for its next solve.
const CONCURRENT_DIRECT_DOFS_UP_TO: usize = 3000;

/// Point work running beside the sweeps of the whole process, at most one per thread however
/// many curves (or study cases) run at once.
static BESIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Takes one of the process's places for work beside a sweep (one per thread), if one is
/// free; the task gives it back when done.
fn claim_beside() -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    let most = rayon::current_num_threads();
    BESIDE
        .fetch_update(SeqCst, SeqCst, |n| (n < most).then_some(n + 1))
        .is_ok()
}

/// Whether work on `rec` may run beside the sweep. Not on a modal receptance that condenses
/// its highest harmonics exactly, nor on a large direct one (`CONCURRENT_DIRECT_DOFS_UP_TO`).
/// A cyclic sector's modes are extracted per nodal diameter on first use: the diameters the
/// work reaches are extracted before the curve starts ([`warm_for`]), but an automatic
/// harmonic set (`auto_set`) may reach new ones mid-sweep, where two tasks beside it would each
/// extract and hold a copy; its work stays in line.
fn beside_allowed(rec: &Receptance, auto_set: bool) -> bool {
    if rec.modal_coverage().is_some() {
        return false;
    }
    match rec.kind() {
        ewr_hb::ReceptanceKind::Modal { .. } => rec.cyclic().is_none() || !auto_set,
        _ => rec.n_dofs() <= CONCURRENT_DIRECT_DOFS_UP_TO,
    }
}

/// Extracts what the condensation extracts on first use and a curve's work will reach, once,
/// before curves or the work beside them race for it (each would otherwise make its own
/// copy): the set's harmonics, those the estimates solve on (with `peaks`, the refined
/// peaks' too, estimated side by side as the curves end), and the diameters every
/// inter-sector phase reaches.
fn warm_for(rec: &Receptance, set: &ewr_hb::HarmonicSet, opts: &SweepOptions, peaks: bool) {
    let mut hs = set.harmonics().to_vec();
    if opts.estimate_points || peaks && opts.refine_peaks && opts.estimate_peaks {
        let forced: Vec<usize> = rec.forced_harmonics().collect();
        hs.extend(crate::estimate::estimate_harmonics(set, &forced));
    }
    rec.warm(&hs, opts.omega_max());
    if opts.stability
        && opts.all_phases
        && let Some(cy) = rec.cyclic()
    {
        rec.warm_nodal_diameters(crate::stability::phase_diameters(cy, set));
    }
}

/// What is done to each point once it is solved and before the caller sees it: its
/// stability and its truncation estimate. Neither changes the sweep's next points, so on
/// small models they run beside the sweep, on the other cores (one point's stability is ten
/// times its solve there, and its kernels too small to split).
struct PointWork<'a> {
    rec: &'a Receptance,
    params: &'a ContactParams,
    point: &'a crate::periodic::PointSettings,
    classifier: Option<Classifier<'a>>,
    estimate: bool,
    observer: &'a dyn SweepObserver,
    /// [`beside_allowed`] for this receptance.
    allowed: bool,
}

impl PointWork<'_> {
    fn needed(&self) -> bool {
        self.classifier.is_some() || self.estimate
    }

    /// Whether work on `sol` may run beside other work: more than one thread, and small
    /// enough that several at once fit in memory (an estimate is a solve on about twice the
    /// harmonics).
    fn fits_beside(&self, sol: &PointSolution) -> bool {
        self.allowed
            && rayon::current_num_threads() > 1
            && sol.friction.len() <= CONCURRENT_FORCES_UP_TO
            && self.classifier.as_ref().is_none_or(|c| c.small(sol))
    }

    /// Whether `p`'s work may run beside the sweep.
    fn concurrent(&self, p: &FrcPoint) -> bool {
        p.solution.status.converged() && self.fits_beside(&p.solution)
    }

    fn apply(&self, p: &mut FrcPoint) {
        self.finish(&mut p.solution, self.estimate, "");
    }

    /// Classifies `sol` and, with `estimate`, estimates its truncation error (`what` names it
    /// in a warning: a point, or " of the peak").
    fn finish(&self, sol: &mut PointSolution, estimate: bool, what: &str) {
        if let Some(c) = &self.classifier {
            c.classify(self.params, self.point, sol, self.observer);
        }
        if estimate && sol.status.converged() {
            match truncation_error(self.rec, self.params, self.point, sol) {
                Ok(e) => sol.estimate = Some(e),
                Err(e) => self.observer.warn(&format!(
                    "warning: no truncation estimate{what} at w = {}: {e}",
                    sol.omega
                )),
            }
        }
    }
}

/// Points handed to the caller in the order they were solved, whatever order their work
/// finished in; the first `Err` of the caller is kept as the curve's stop.
struct InOrder<'a> {
    curve: usize,
    mu_n: Option<f64>,
    observer: &'a dyn SweepObserver,
    next: usize,
    done: std::collections::BTreeMap<usize, FrcPoint>,
    points: Vec<FrcPoint>,
    stop: Option<StopReason>,
}

impl InOrder<'_> {
    fn finished(&mut self, index: usize, p: FrcPoint) {
        self.done.insert(index, p);
        while let Some(p) = self.done.remove(&self.next) {
            self.next += 1;
            // After a stop, points already solved are still kept and shown (nothing computed
            // is lost); the caller's further refusals say nothing new.
            if let Err(reason) = self.observer.point(self.curve, self.mu_n, &p) {
                self.stop.get_or_insert(reason);
            }
            self.points.push(p);
        }
    }
}

/// Computes every curve of `specs` in parallel over the one condensation `rec` (the curves
/// differ in their friction bounds, which the receptance does not see).
pub fn sweep(
    rec: &Receptance,
    specs: &[CurveSpec<'_>],
    opts: &SweepOptions,
    observer: &dyn SweepObserver,
) -> Vec<Curve> {
    if specs.len() > 1 {
        warm_for(rec, &specs[0].setup.point.set, opts, true);
    }
    specs
        .par_iter()
        .enumerate()
        .map(|(i, spec)| sweep_curve(rec, i, spec, opts, observer))
        .collect()
}

/// Computes one curve (number `index` for the observer).
pub fn sweep_curve(
    rec: &Receptance,
    index: usize,
    spec: &CurveSpec<'_>,
    opts: &SweepOptions,
    observer: &dyn SweepObserver,
) -> Curve {
    let setup = spec.setup;
    let params = setup.params();
    let settings = opts.settings(&setup.point);
    // A cyclic sector's work beside the sweep reaches diameters the sweep's own solves may
    // not have extracted yet.
    if rec.cyclic().is_some() && (opts.stability || opts.estimate_points) {
        warm_for(rec, &setup.point.set, opts, false);
    }
    let work = PointWork {
        rec,
        params: &params,
        point: &setup.point,
        classifier: opts
            .stability
            .then(|| Classifier::new(rec, opts.all_phases, observer)),
        estimate: opts.estimate_points,
        observer,
        allowed: beside_allowed(rec, setup.point.auto.is_some()),
    };
    // Points are kept as they arrive, so that a curve that stops on an error still has every
    // point it computed.
    let mut order = InOrder {
        curve: index,
        mu_n: spec.mu_n,
        observer,
        next: 0,
        done: Default::default(),
        points: Vec::new(),
        stop: None,
    };
    let stopping = || observer.stopping();
    let finished = std::sync::Mutex::new(Vec::<(usize, FrcPoint)>::new());
    let take = |finished: &std::sync::Mutex<Vec<(usize, FrcPoint)>>| {
        std::mem::take(&mut *finished.lock().unwrap_or_else(|e| e.into_inner()))
    };
    // A task that panicked: the sweep stops at its next point and the panic goes on once the
    // work already running is done (the points before it are handed over first).
    let panicked = std::sync::Mutex::new(None::<Box<dyn std::any::Any + Send>>);
    let mut beside = 0;
    let result = rayon::scope(|scope| {
        let (work, order, finished, panicked) = (&work, &mut order, &finished, &panicked);
        let beside = &mut beside;
        let mut solved = 0;
        let mut on_point = |p: &FrcPoint| {
            let index = solved;
            solved += 1;
            for (i, q) in take(finished) {
                order.finished(i, q);
            }
            let mut p = p.clone();
            if work.needed() && work.concurrent(&p) && claim_beside() {
                *beside += 1;
                scope.spawn(move |_| {
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        work.apply(&mut p)
                    }));
                    BESIDE.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    if let Err(payload) = run {
                        let mut first = panicked.lock().unwrap_or_else(|e| e.into_inner());
                        first.get_or_insert(payload);
                    }
                    finished
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((index, p));
                });
            } else {
                work.apply(&mut p);
                order.finished(index, p);
            }
            let failed = panicked.lock().unwrap_or_else(|e| e.into_inner()).is_some();
            order.stop.is_none() && !failed
        };
        match spec.resume {
            Some(old) => resume_curve(rec, &params, &settings, old, &mut on_point, &stopping),
            None => frc_until(rec, &params, &settings, &mut on_point, &stopping)
                .map(drop)
                .map_err(|e| StopReason::Error(e.to_string())),
        }
    });
    // The scope has waited for every point's work.
    for (i, q) in take(&finished) {
        order.finished(i, q);
    }
    if let Some(payload) = panicked.into_inner().unwrap_or_else(|e| e.into_inner()) {
        std::panic::resume_unwind(payload);
    }
    let InOrder { points, stop, .. } = order;
    let stopped = match (result, stop) {
        (Err(e), _) => Some(e),
        (Ok(()), Some(reason)) => Some(reason),
        (Ok(()), None) if points.len() >= opts.max_points => Some(StopReason::Cap {
            at: points.last().map_or(f64::NAN, |p| p.solution.omega),
            end: opts.omega_end,
            max_points: opts.max_points,
        }),
        (Ok(()), None) => short_of_end(&points, opts),
    };
    // Refine each local maximum of what was computed, even if the sweep stopped.
    let mut peaks = if !opts.refine_peaks || observer.stopping() {
        Vec::new()
    } else {
        refine_peaks(rec, &params, &setup.point, &points).unwrap_or_else(|e| {
            observer.warn(&format!("warning: peak refinement failed: {e}"));
            Vec::new()
        })
    };
    // Each refined peak is estimated and classified alone: small ones side by side.
    let estimate_peaks = opts.estimate_peaks && !observer.stopping();
    let finish_peak = |pk: &mut Peak| work.finish(&mut pk.solution, estimate_peaks, " of the peak");
    if peaks.len() > 1 && peaks.iter().all(|pk| work.fits_beside(&pk.solution)) {
        if rec.cyclic().is_some() && estimate_peaks {
            warm_for(rec, &setup.point.set, opts, true);
        }
        peaks.par_iter_mut().for_each(finish_peak);
    } else {
        peaks.iter_mut().for_each(finish_peak);
    }
    let forced = setup.phase_dof();
    let phase = match forced {
        Some((dof, force)) if opts.phase_resonances && !observer.stopping() => {
            phase_resonances(rec, &params, &setup.point, &points, dof, force).unwrap_or_else(|e| {
                observer.warn(&format!("warning: phase resonance failed: {e}"));
                Vec::new()
            })
        }
        _ => Vec::new(),
    };
    Curve {
        mu_n: spec.mu_n,
        points,
        stopped,
        peaks,
        phase,
        phase_dof: forced.map(|f| f.0),
        beside,
    }
}

/// An arclength curve that stopped before the end of the band: its last point lies short of
/// the end (a sequential sweep always lands on it).
fn short_of_end(points: &[FrcPoint], opts: &SweepOptions) -> Option<StopReason> {
    if opts.method != Continuation::Arclength {
        return None;
    }
    let at = points.last()?.solution.omega;
    let dir = if opts.omega_end >= opts.omega_start {
        1.0
    } else {
        -1.0
    };
    let tol_w = 1e-12 * opts.omega_end.abs().max(1.0);
    (dir * (at - opts.omega_end) < -tol_w).then_some(StopReason::ShortOfEnd {
        at,
        end: opts.omega_end,
    })
}

/// Resumes one curve: re-solves its stored points from their coefficients (one Newton
/// iteration each when they still hold, so a file from other options or a damaged one is
/// caught), hands them to `on_point` as if just computed, then continues the sweep after the
/// last one.
fn resume_curve(
    rec: &Receptance,
    params: &ContactParams,
    settings: &FrcSettings,
    old: &StoredCurve,
    on_point: &mut dyn FnMut(&FrcPoint) -> bool,
    stop: &dyn Fn() -> bool,
) -> Result<(), StopReason> {
    let point = &settings.point;
    let from = old.set.as_ref().unwrap_or(&point.set);
    let mut good: Vec<PointSolution> = Vec::new();
    for ((&w, &step), x) in old.omega.iter().zip(&old.step).zip(&old.friction) {
        let solution = solve_point(rec, params, w, point, Some((from, x)))
            .map_err(|e| StopReason::Resume(format!("at w = {w}: {e}")))?;
        if solution.status.converged() {
            good.push(solution.clone());
        }
        if !on_point(&FrcPoint { solution, step }) {
            return Ok(());
        }
    }
    let fail = |e: SolveError| StopReason::Error(e.to_string());
    let Some(&last) = old.omega.last() else {
        return frc_until(rec, params, settings, on_point, stop)
            .map(drop)
            .map_err(fail);
    };
    let dir = if settings.omega_end >= settings.omega_start {
        1.0
    } else {
        -1.0
    };
    // A sweep that had reached its end is complete: resuming it adds nothing (not a point past
    // the end, not a duplicate of the last).
    let tol_w = 1e-12 * settings.omega_end.abs().max(1.0);
    if dir * (last - settings.omega_end) >= -tol_w {
        return Ok(());
    }
    // The next point: on a fixed grid its next grid point (the sweep may have left it at
    // halved steps), landing on the end rather than past it.
    let w = if settings.adaptive.is_none() {
        crate::continuation::grid_after(settings, dir, last)
    } else {
        last + dir * settings.step
    };
    let next = FrcSettings {
        omega_start: if dir * (w - settings.omega_end) > 0.0 {
            settings.omega_end
        } else {
            w
        },
        ..settings.clone()
    };
    let tail = good.len().saturating_sub(2);
    frc_resume_until(rec, params, &next, &good[tail..], on_point, stop)
        .map(drop)
        .map_err(fail)
}

/// Whether a sweep of `method` can be resumed from a stored curve.
pub fn resumable(method: Continuation) -> bool {
    method == Continuation::Sequential
}
