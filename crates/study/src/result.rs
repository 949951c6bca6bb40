//! The result of one case: its frequency response curve, peak and status, and how it is
//! computed (a failure of any kind becomes a recorded status, never an abort).

use crate::param::{Case, Value};
use crate::shared::Receptances;
use crate::spec::{Objective, Optimize, Study};
use crate::track::{TrackSettings, track};
use ewr_hb::receptance::Receptance;
use ewr_solve::sweep::Quiet;
use ewr_solve::{CurveSpec, FrcPoint, Setup, StopReason, SweepOptions, sweep_curve};

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseStatus {
    /// Every point converged.
    Ok,
    /// The curve was computed but some points did not converge (they are kept, flagged).
    Unconverged,
    /// No curve: bad parameter combination, condensation failure, solver error, or no point
    /// converged.
    Failed,
}

impl CaseStatus {
    /// `ok`, `unconverged` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Ok => "ok",
            CaseStatus::Unconverged => "unconverged",
            CaseStatus::Failed => "failed",
        }
    }

    /// The status of its name.
    pub fn parse(s: &str) -> Option<CaseStatus> {
        match s {
            "ok" => Some(CaseStatus::Ok),
            "unconverged" => Some(CaseStatus::Unconverged),
            "failed" => Some(CaseStatus::Failed),
            _ => None,
        }
    }
}

/// One case's results (layout of its HDF5 group in `docs/study.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// Index in the study.
    pub index: usize,
    /// Identity (`name=value,...`), checked on resume and merge.
    pub key: String,
    /// Parameter values, in the study's parameter order.
    pub values: Vec<Value>,
    /// How it ended.
    pub status: CaseStatus,
    /// Why it failed or which points did not converge; empty when ok.
    pub reason: String,
    /// Frequency of each point, in the order computed.
    pub omega: Vec<f64>,
    /// `max_t ||u(t)||` over the monitored DOFs, per point.
    pub amp_norm: Vec<f64>,
    /// Whether each point converged.
    pub converged: Vec<bool>,
    /// Newton iterations per point.
    pub iterations: Vec<i64>,
    /// Scaled residual per point.
    pub residual: Vec<f64>,
    /// Number of contacts (columns of `amp_w`).
    pub n_contacts: usize,
    /// `max_t |w_c(t)|`, `points x n_contacts`, row-major.
    pub amp_w: Vec<f64>,
    /// Number of monitored DOFs (columns of `dof_peak`).
    pub n_monitored: usize,
    /// `max_t |u_i(t)|`, `points x n_monitored`, row-major.
    pub dof_peak: Vec<f64>,
    /// Frequency of the peak: the highest local maximum of the curve refined to the true
    /// maximum in frequency, else the largest converged `amp_norm` (NaN if none).
    pub peak_omega: f64,
    /// The peak's amplitude (NaN if none).
    pub peak_amplitude: f64,
    /// `[optimize]` studies: the optimised parameter's value with the smallest peak (then
    /// `peak_omega`, `peak_amplitude` are that peak's); NaN otherwise.
    pub optimum_value: f64,
    /// `[optimize]`: where the optimum is flat, the range of the parameter over which the
    /// peak stays within 1 % of it (`[from, to]`, [`crate::track::plateau`]; from a contact
    /// sticking all period on, any value of it does as well). NaN otherwise, and in case
    /// files written before it was recorded.
    pub optimum_plateau: [f64; 2],
    /// `[optimize]`: periodic solutions computed for the case (0 otherwise).
    pub solves: i64,
    /// `[optimize]`: the peak locus, sorted by value: the optimised parameter's values, ...
    pub locus_value: Vec<f64>,
    /// ... the frequency of the highest peak at each value, ...
    pub locus_omega: Vec<f64>,
    /// ... its amplitude, ...
    pub locus_amplitude: Vec<f64>,
    /// ... and the periodic solutions that found it.
    pub locus_evaluations: Vec<i64>,
    /// `objective = "peak"`: every local maximum of the curve refined, by frequency: ...
    pub peaks_omega: Vec<f64>,
    /// ... and amplitude.
    pub peaks_amplitude: Vec<f64>,
    /// `solver.stability`: per point 1 stable, 0 unstable, -1 not classified (empty
    /// otherwise), ...
    pub stable: Vec<i64>,
    /// ... the largest Floquet multiplier modulus per point (NaN where not classified), ...
    pub max_multiplier: Vec<f64>,
    /// ... the same code for the case's peak (-1 where not classified or not asked), ...
    pub peak_stable: i64,
    /// ... and for `[optimize]` per locus value.
    pub locus_stable: Vec<i64>,
    /// What the user should hear about the case's numbers though it did not stop the case
    /// (the modal receptance dropping a damping matrix's coupling of the modes, as `ewr frc`
    /// warns); empty when none.
    pub warnings: Vec<String>,
}

/// Each distinct warning of `results` once, followed by the cases it concerns (`(every
/// case)`, or their indices): a study's cases mostly share a structure, and so its warning.
pub fn distinct_warnings(results: &[CaseResult]) -> Vec<String> {
    let mut seen: Vec<(&str, Vec<usize>)> = Vec::new();
    for r in results {
        for w in &r.warnings {
            match seen.iter_mut().find(|(x, _)| *x == w.as_str()) {
                Some((_, cases)) => cases.push(r.index),
                None => seen.push((w, vec![r.index])),
            }
        }
    }
    seen.into_iter()
        .map(|(w, cases)| {
            let which = if cases.len() == results.len() {
                "every case".to_string()
            } else {
                let listed: Vec<String> = cases.iter().take(10).map(usize::to_string).collect();
                let more = cases.len().saturating_sub(10);
                format!(
                    "case{} {}{}",
                    if cases.len() > 1 { "s" } else { "" },
                    listed.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )
            };
            format!("{w} ({which})")
        })
        .collect()
}

/// 1 stable, 0 unstable, -1 not classified: the code of a solution's stability in files.
pub fn stable_code(s: &ewr_solve::PointSolution) -> i64 {
    s.stability
        .as_ref()
        .map_or(-1, |st| i64::from(st.is_stable()))
}

impl CaseResult {
    /// A case that produced no curve.
    pub fn failed(study: &Study, case: &Case, reason: String) -> Self {
        CaseResult {
            index: case.index,
            key: study.key(case),
            values: case.values.clone(),
            status: CaseStatus::Failed,
            reason,
            omega: Vec::new(),
            amp_norm: Vec::new(),
            converged: Vec::new(),
            iterations: Vec::new(),
            residual: Vec::new(),
            n_contacts: study.base.contacts.len(),
            amp_w: Vec::new(),
            n_monitored: study.solver.monitor.len(),
            dof_peak: Vec::new(),
            peak_omega: f64::NAN,
            peak_amplitude: f64::NAN,
            optimum_value: f64::NAN,
            optimum_plateau: [f64::NAN; 2],
            solves: 0,
            locus_value: Vec::new(),
            locus_omega: Vec::new(),
            locus_amplitude: Vec::new(),
            locus_evaluations: Vec::new(),
            peaks_omega: Vec::new(),
            peaks_amplitude: Vec::new(),
            stable: Vec::new(),
            max_multiplier: Vec::new(),
            peak_stable: -1,
            locus_stable: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Whether the reported peak of a curve is a band-edge value (the largest amplitude at
    /// its first or last point) rather than a resonance inside the band.
    pub fn peak_at_edge(&self) -> bool {
        if !self.locus_value.is_empty() || !self.peak_omega.is_finite() {
            return false;
        }
        [self.omega.first(), self.omega.last()]
            .into_iter()
            .flatten()
            .any(|&w| w == self.peak_omega)
    }

    /// Total Newton iterations.
    pub fn total_iterations(&self) -> i64 {
        self.iterations.iter().sum()
    }

    /// Points that did not converge.
    pub fn n_unconverged(&self) -> usize {
        self.converged.iter().filter(|c| !**c).count()
    }

    fn from_points(study: &Study, case: &Case, points: &[FrcPoint]) -> Self {
        let mut r = CaseResult::failed(study, case, String::new());
        for p in points {
            let s = &p.solution;
            r.omega.push(s.omega);
            r.amp_norm.push(s.dofs.norm_peak);
            r.converged.push(s.status.converged());
            r.iterations.push(s.iterations as i64);
            r.residual.push(s.residual);
            r.amp_w
                .extend(s.contacts.iter().map(|c| c.displacement_amplitude));
            r.dof_peak.extend(s.dofs.peak.iter().copied());
            if study.solver.stability {
                r.stable.push(stable_code(s));
                r.max_multiplier.push(
                    s.stability
                        .as_ref()
                        .map_or(f64::NAN, |st| st.max_multiplier),
                );
            }
        }
        let best = (0..r.omega.len())
            .filter(|&i| r.converged[i] && r.amp_norm[i].is_finite())
            .max_by(|&a, &b| r.amp_norm[a].total_cmp(&r.amp_norm[b]));
        let bad = r.n_unconverged();
        match best {
            None => {
                r.status = CaseStatus::Failed;
                r.reason = format!("none of the {} points converged", r.omega.len());
            }
            Some(i) => {
                r.peak_omega = r.omega[i];
                r.peak_amplitude = r.amp_norm[i];
                r.peak_stable = r.stable.get(i).copied().unwrap_or(-1);
                if bad > 0 {
                    r.status = CaseStatus::Unconverged;
                    r.reason = format!("{bad} of {} points did not converge", r.omega.len());
                } else {
                    r.status = CaseStatus::Ok;
                }
            }
        }
        r
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The receptance of a case's structure, with what a cyclic sector's modal backend would
/// otherwise extract on first use (`Receptance::warm`), as the other backends extract theirs
/// here: cases that start together would each extract their own copy. With `all_phases`
/// (the study's stability against every inter-sector phase), the diameters that reaches.
pub(crate) fn condense(setup: &crate::CaseSetup, all_phases: bool) -> Result<Receptance, String> {
    let rec = Receptance::new(&setup.model, setup.kind)
        .map_err(|e| format!("cannot condense the model: {e}"))?;
    warm(&rec, setup, all_phases);
    Ok(rec)
}

/// Extracts what a case's sweep will reach ([`condense`]'s note), on a receptance built or
/// derived for it.
fn warm(rec: &Receptance, setup: &crate::CaseSetup, all_phases: bool) {
    let f = &setup.settings;
    rec.warm(f.point.set.harmonics(), f.omega_max());
    if all_phases && let Some(cy) = rec.cyclic() {
        rec.warm_nodal_diameters(ewr_solve::stability::phase_diameters(cy, &f.point.set));
    }
}

/// Computes one case: its frequency response curve, or for an `[optimize]` study its peak
/// locus and optimum. Never fails: errors (and even panics of the solver) become a
/// [`CaseStatus::Failed`] result with the reason. With `shared`, the receptance comes from
/// (or goes to) the run's cache, keyed by [`Study::structure_key`].
pub fn compute_case(study: &Study, case: &Case, shared: Option<&Receptances>) -> CaseResult {
    // Kept for a case that fails after them too: they may say why.
    let mut said = Vec::new();
    let run = || -> Result<CaseResult, String> {
        if let Some(o) = &study.optimize {
            return Ok(optimize_case(study, case, o));
        }
        let setup = study.case_setup(case)?;
        let build = || condense(&setup, study.all_phase_stability());
        let rec = match shared {
            Some(cache) => cache.get(
                &study.structure_key(case),
                &study.dynamics_key(case),
                |member| match member {
                    // Another load of the same dynamics: its modes serve.
                    Some(m) if m.keeps_modes_for_other_forcing() => {
                        match m.with_forcing(&setup.model) {
                            Ok(rec) => {
                                warm(&rec, &setup, study.all_phase_stability());
                                Ok((rec, true))
                            }
                            // Not the same dynamics after all: condensed on its own.
                            Err(_) => build().map(|r| (r, false)),
                        }
                    }
                    _ => build().map(|r| (r, false)),
                },
            )?,
            None => std::sync::Arc::new(build()?),
        };
        let rec = rec.as_ref();
        let f = &setup.settings;
        said = ewr_solve::setup::receptance_warnings(rec, &f.point, f.omega_max());
        let sweep = SweepOptions {
            min_step: Some(f.min_step),
            max_step: Some(f.max_step),
            method: f.method,
            adaptive: f.adaptive,
            max_points: f.max_points,
            // The case's peak is the true maximum in frequency, not the largest grid point: a
            // sharp peak falls between grid points (issue 15).
            refine_peaks: true,
            phase_resonances: false,
            keep_histories: false,
            estimate_points: false,
            estimate_peaks: false,
            stability: study.solver.stability,
            all_phases: study.solver.all_phases,
            ..SweepOptions::new(f.omega_start, f.omega_end, f.step)
        };
        let run = Setup {
            model: setup.model,
            point: f.point.clone(),
            kind: setup.kind,
            warnings: Vec::new(),
        };
        let spec = CurveSpec {
            mu_n: None,
            setup: &run,
            resume: None,
        };
        let curve = sweep_curve(rec, 0, &spec, &sweep, &Quiet);
        if let Some(StopReason::Error(e)) = &curve.stopped {
            return Err(format!("frequency sweep: {e}"));
        }
        let mut r = CaseResult::from_points(study, case, &curve.points);
        r.warnings = said.clone();
        // A refinement that fails leaves the grid's value.
        if r.status != CaseStatus::Failed {
            let mut peaks = curve.peaks;
            if study.objective == Objective::Peak {
                peaks.sort_by(|a, b| a.omega.total_cmp(&b.omega));
                r.peaks_omega = peaks.iter().map(|p| p.omega).collect();
                r.peaks_amplitude = peaks.iter().map(|p| p.amplitude).collect();
            }
            if let Some(top) = peaks
                .iter()
                .max_by(|a, b| a.amplitude.total_cmp(&b.amplitude))
                && top.amplitude > r.peak_amplitude
            {
                r.peak_omega = top.omega;
                r.peak_amplitude = top.amplitude;
                if study.solver.stability {
                    r.peak_stable = stable_code(&top.solution);
                }
            }
        }
        // A largest amplitude at the band's edge is no resonance peak: say so, and for an
        // objective of peaks only it is no result at all.
        if r.status != CaseStatus::Failed && r.peak_at_edge() {
            let note = format!(
                "no resonance peak inside the band: the amplitude is largest at its edge, w = {}",
                r.peak_omega
            );
            if study.objective == Objective::Peak {
                r.status = CaseStatus::Failed;
                r.reason = note;
            } else if r.reason.is_empty() {
                r.reason = note;
            } else {
                r.reason = format!("{}; {note}", r.reason);
            }
        }
        Ok(r)
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
    match outcome {
        Ok(Ok(r)) => r,
        Ok(Err(reason)) => CaseResult {
            warnings: said,
            ..CaseResult::failed(study, case, reason)
        },
        Err(p) => CaseResult {
            warnings: said,
            ..CaseResult::failed(
                study,
                case,
                format!("internal error (panic): {}", panic_message(p.as_ref())),
            )
        },
    }
}

/// The peak locus of one case over the optimised parameter, and its optimum.
fn optimize_case(study: &Study, case: &Case, o: &Optimize) -> CaseResult {
    let mut r = CaseResult::failed(study, case, String::new());
    let first = match study.case_setup_with(case, Some((o.kind, o.from))) {
        Ok(s) => s,
        Err(e) => {
            r.reason = e;
            return r;
        }
    };
    let f = &first.settings;
    let settings = TrackSettings {
        omega_start: f.omega_start,
        omega_end: f.omega_end,
        step: f.step,
        adaptive: f.adaptive,
        point: f.point.clone(),
        kind: first.kind,
        structural: o.kind.structural(),
        stability: study.solver.stability,
        all_phases: study.solver.all_phases,
    };
    let model_at = |v: f64| {
        study
            .case_setup_with(case, Some((o.kind, v)))
            .map(|s| s.model)
    };
    let locus = track(&model_at, &settings, &o.values(), true, &mut || {}, &|| {
        false
    });
    r.solves = locus.solves as i64;
    r.warnings = locus.warnings.clone();
    for e in &locus.points {
        r.locus_value.push(e.value);
        r.locus_omega.push(e.peak.omega);
        r.locus_amplitude.push(e.peak.amplitude);
        r.locus_evaluations.push(e.peak.evaluations as i64);
        if study.solver.stability {
            r.locus_stable.push(stable_code(&e.peak.solution));
        }
    }
    let name = o.kind.name();
    match (locus.optimum, &locus.failure) {
        (None, failure) => {
            r.reason = failure
                .as_ref()
                .map_or("no peak found".into(), |e| format!("{name} = {e}"));
        }
        (Some((v, amp, w)), failure) => {
            r.optimum_value = v;
            r.peak_amplitude = amp;
            r.peak_omega = w;
            if let Some(e) = locus.points.iter().find(|e| e.value == v) {
                r.peak_stable = if study.solver.stability {
                    stable_code(&e.peak.solution)
                } else {
                    -1
                };
            }
            match failure {
                Some(e) => {
                    r.status = CaseStatus::Unconverged;
                    r.reason =
                        format!("the peak was lost at {name} = {e}; the locus up to there is kept");
                }
                None => {
                    r.status = CaseStatus::Ok;
                    if let Some((lo, hi)) = locus.plateau {
                        r.optimum_plateau = [lo, hi];
                        r.reason = format!(
                            "the optimum is flat: the peak is within 1 % of it from {name} = \
                             {lo} to {hi}"
                        );
                    } else if !locus.interior && locus.points.len() > 1 {
                        r.reason = format!(
                            "the smallest peak is at the end of the range ({name} = {v}): \
                             widen [optimize] from/to"
                        );
                    }
                }
            }
        }
    }
    r
}
