//! `Model.solve`, `Model.frc` and `Model.peaks`: the Python spelling of `ewr solve`, `ewr frc`
//! and `ewr peaks`, through the same run layer (`ewr_solve::setup`, `ewr_solve::sweep`,
//! `ewr_study::track`) and the same result files (`ewr_results`).
//!
//! Sweeps run on worker threads while the calling thread keeps the interpreter responsive:
//! it checks for Ctrl-C between waits (signals are only seen on the main thread), and the
//! workers take the GIL only to call the progress callback.

use crate::convert::warn;
use crate::options::{PyOptions, option_error};
use crate::results::{PyFrc, PySolution};
use crate::{InputError, SolveError};
use ewr_model::Model;
use ewr_solve::setup::{Opt, OptionError, SweepOptions, positive};
use ewr_solve::{Curve, CurveSpec, FrcPoint, Setup, StopReason, SweepObserver, solve_point};
use ewr_study::track::{PeakParam, TrackSettings, track};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Friction bounds of `frc`: one value, or several curves.
#[derive(FromPyObject)]
pub enum MuN {
    /// One curve.
    One(f64),
    /// One curve per value, computed in parallel.
    Many(Vec<f64>),
}

/// The result files a call writes, as `ewr`'s `-o`, `--csv`, `--timeseries` and `--plot`.
#[derive(Default)]
pub struct Outputs {
    pub output: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub timeseries: Option<PathBuf>,
    pub plot: Option<PathBuf>,
}

impl Outputs {
    /// Refuses a figure that is neither PNG nor SVG and two outputs on one file, before any
    /// work; creates the outputs' folders, claims them against another run writing the same
    /// files (held until the returned claims are dropped) and probes that each can be written.
    pub(crate) fn check(&self) -> PyResult<Vec<ewr_results::lock::OutputLock>> {
        if let Some(p) = &self.plot {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ext != "png" && ext != "svg" {
                return Err(InputError::new_err(format!(
                    "plot={:?}: the file name must end in .png or .svg",
                    p.display().to_string()
                )));
            }
        }
        let given: Vec<&PathBuf> = [&self.output, &self.csv, &self.timeseries, &self.plot]
            .into_iter()
            .flatten()
            .collect();
        let mut claims = Vec::with_capacity(given.len());
        for (i, a) in given.iter().enumerate() {
            if given[..i].contains(a) {
                return Err(InputError::new_err(format!(
                    "{}: two outputs are the same file",
                    a.display()
                )));
            }
            ewr_results::ensure_parent(a).map_err(SolveError::new_err)?;
            ewr_results::lock::probe_writable(a).map_err(SolveError::new_err)?;
            claims.push(ewr_results::lock::claim(a).map_err(InputError::new_err)?);
        }
        Ok(claims)
    }
}

/// Setup warnings (e.g. forcing outside the harmonic set) as Python warnings.
pub(crate) fn warn_setup(py: Python<'_>, setup: &Setup) -> PyResult<()> {
    for w in &setup.warnings {
        warn(py, w.trim_start_matches("warning: "))?;
    }
    Ok(())
}

/// The receptance's own warnings (the modal backend's diagonal damping) as Python warnings,
/// for a run of `setup` up to fundamental `omega_max`.
pub(crate) fn warn_receptance(
    py: Python<'_>,
    rec: &ewr_hb::Receptance,
    setup: &Setup,
    omega_max: f64,
) -> PyResult<()> {
    for w in ewr_solve::setup::receptance_warnings(rec, &setup.point, omega_max) {
        warn(py, w.trim_start_matches("warning: "))?;
    }
    Ok(())
}

fn receptance(setup: &Setup) -> PyResult<ewr_hb::Receptance> {
    setup
        .receptance()
        .map_err(|e| InputError::new_err(format!("cannot condense the model: {e}")))
}

/// Runs `work` on one of rayon's worker threads; the calling thread waits with the GIL released and checks
/// for Ctrl-C every 50 ms, raising `interrupted` when one arrives (the work sees it and
/// finishes early).
pub(crate) fn run_interruptible<T: Send>(
    py: Python<'_>,
    interrupted: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> T {
    if rayon::current_thread_index().is_some() {
        // Called from a worker already (a progress callback that runs a model): the outer call
        // watches for Ctrl-C; handing this work to the pool and waiting would hold the worker
        // it may need.
        return py.detach(work);
    }
    std::thread::scope(|scope| {
        // On one of rayon's workers, as the command line does (ewr_cli::run): parallel calls
        // from a thread outside the pool each cost a handover through the kernel.
        let handle = scope.spawn(|| rayon::scope(|_| work()));
        while !handle.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(50)));
            if let Err(e) = py.check_signals() {
                drop(e);
                interrupted.store(true, Ordering::SeqCst);
            }
        }
        match handle.join() {
            Ok(t) => t,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

/// One periodic solution (`Model.solve`).
pub fn solve(
    py: Python<'_>,
    model: &Model,
    source: &Path,
    omega: f64,
    (estimate, stability, all_phases): (bool, bool, bool),
    opts: &PyOptions<'_>,
    outputs: &Outputs,
) -> PyResult<PySolution> {
    positive(Opt::Omega, omega).map_err(option_error)?;
    if all_phases && model.cyclic.is_none() {
        return Err(InputError::new_err(
            "all_phases: the model is not a cyclic sector (its stability has no other \
             inter-sector phases)",
        ));
    }
    let setup = opts.resolve(model, opts.mu_n)?;
    warn_setup(py, &setup)?;
    let _claims = outputs.check()?;
    let rec = py.detach(|| rayon::scope(|_| receptance(&setup)))?;
    warn_receptance(py, &rec, &setup, omega)?;
    let sol = py.detach(|| {
        rayon::scope(|_| -> PyResult<_> {
            let params = setup.params();
            let mut sol = solve_point(&rec, &params, omega, &setup.point, None)
                .map_err(|e| SolveError::new_err(format!("at w = {omega}: {e}")))?;
            if estimate && sol.status.converged() && sol.estimate.is_none() {
                sol.estimate = ewr_solve::truncation_error(&rec, &params, &setup.point, &sol).ok();
            }
            // Where it cannot be classified (too large, a direct receptance on a large model),
            // `stable` stays None and the reason is a warning.
            let mut unclassified = None;
            if stability && sol.status.converged() {
                match rec
                    .dynamics()
                    .map_err(|e| ewr_solve::StabilityError::Unsupported(e.to_string()))
                    .and_then(|d| {
                        if all_phases {
                            ewr_solve::stability_all_phases(&rec, &d, &params, &setup.point, &sol)
                        } else {
                            ewr_solve::stability(&rec, &d, &params, &setup.point, &sol)
                        }
                    }) {
                    Ok(st) => sol.stability = Some(st),
                    Err(e) => unclassified = Some(e.to_string()),
                }
            }
            Ok((sol, unclassified))
        })
    })?;
    let (sol, unclassified) = sol;
    if let Some(why) = unclassified {
        warn(py, &format!("stability not classified: {why}"))?;
    }
    if let Some(e) = sol
        .estimate
        .as_ref()
        .filter(|e| e.relative > ewr_solve::estimate::WARN_ABOVE)
    {
        warn(
            py,
            &format!(
                "the truncation error is {:.1}% of the amplitude: use more harmonics (e.g. \
                 harmonics=\"{}\", or harmonics=\"auto\")",
                100.0 * e.relative,
                ewr_solve::estimate::suggested(&sol.set, e)
            ),
        )?;
    }
    let params = setup.params();
    let fail = |e: String| SolveError::new_err(e);
    if let Some(p) = &outputs.timeseries {
        ewr_results::write_timeseries(p, &sol, &params).map_err(fail)?;
    }
    if let Some(p) = &outputs.output {
        ewr_results::write_solution(p, source, &setup, &sol).map_err(fail)?;
    }
    if let Some(p) = &outputs.plot {
        let fig = ewr_results::figures::PeriodFigure::of_solution(&sol, &params, &setup.model);
        ewr_results::figures::period(p, &fig).map_err(fail)?;
    }
    for f in sol.stability.iter().flat_map(|st| &st.phases) {
        if let Some(why) = &f.reason {
            warn(
                py,
                &format!("inter-sector phase {} not classified: {why}", f.p),
            )?;
        }
    }
    Ok(PySolution::new(sol, &setup.model))
}

/// What a Python sweep does with each point: the CSV row, the progress callback, Ctrl-C.
struct PyObserver {
    progress: Option<Py<PyAny>>,
    done: AtomicUsize,
    csv: Option<Mutex<ewr_results::FrcCsv>>,
    interrupted: Arc<AtomicBool>,
    /// The first error of the progress callback: raised once the sweep has stopped.
    callback_error: Mutex<Option<PyErr>>,
    warnings: Mutex<Vec<String>>,
}

impl SweepObserver for PyObserver {
    fn point(&self, curve: usize, mu_n: Option<f64>, p: &FrcPoint) -> Result<(), StopReason> {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(csv) = &self.csv {
            let mut w = csv.lock().unwrap_or_else(|e| e.into_inner());
            w.row(curve, mu_n.unwrap_or(f64::NAN), p)
                .map_err(StopReason::Caller)?;
        }
        if let Some(cb) = &self.progress {
            // Once it has raised, it is not called again (points solved beside the sweep may
            // still arrive): the sweep is stopping.
            if self
                .callback_error
                .lock()
                .map(|e| e.is_some())
                .unwrap_or(true)
            {
                return Err(StopReason::Caller("the progress callback failed".into()));
            }
            let s = &p.solution;
            let failed = Python::attach(|py| cb.call1(py, (done, s.omega, s.dofs.norm_peak)).err());
            if let Some(e) = failed {
                let msg = e.to_string();
                self.callback_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
                return Err(StopReason::Caller(format!(
                    "the progress callback failed: {msg}"
                )));
            }
        }
        if self.stopping() {
            return Err(StopReason::Interrupted {
                at: p.solution.omega,
            });
        }
        Ok(())
    }

    fn stopping(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
            || self
                .callback_error
                .lock()
                .map(|e| e.is_some())
                .unwrap_or(true)
    }

    fn warn(&self, message: &str) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message.trim_start_matches("warning: ").to_string());
    }
}

/// How a sweep is given in Python, beside the solver options.
pub struct FrcCall {
    pub sweep: SweepOptions,
    pub mu_n: Option<MuN>,
    pub progress: Option<Py<PyAny>>,
    pub resume: bool,
    pub hz: bool,
}

/// Frequency response curve(s) (`Model.frc`): one `Frc`, or a list for a list of `mu_n`.
pub fn frc(
    py: Python<'_>,
    model: &Model,
    source: &Path,
    call: FrcCall,
    opts: &PyOptions<'_>,
    outputs: &Outputs,
) -> PyResult<Py<PyAny>> {
    let sweep = &call.sweep;
    sweep.check().map_err(option_error)?;
    let (mu_values, many): (Vec<Option<f64>>, bool) = match &call.mu_n {
        None => (vec![None], false),
        Some(MuN::One(x)) => (vec![Some(*x)], false),
        Some(MuN::Many(v)) if v.is_empty() => {
            return Err(option_error(OptionError::new(Opt::MuN, "no value given")));
        }
        Some(MuN::Many(v)) => (v.iter().copied().map(Some).collect(), true),
    };
    let setups: Vec<Setup> = mu_values
        .iter()
        .map(|&mu| opts.resolve(model, mu))
        .collect::<PyResult<_>>()?;
    warn_setup(py, &setups[0])?;
    sweep.check_point(&setups[0].point).map_err(option_error)?;
    if sweep.all_phases && setups[0].model.cyclic.is_none() {
        return Err(InputError::new_err(
            "all_phases: the model is not a cyclic sector (its stability has no other \
             inter-sector phases)",
        ));
    }
    if sweep.all_phases && !sweep.stability {
        return Err(InputError::new_err(
            "all_phases=True classifies the points' stability: give stability=True too",
        ));
    }
    if call.resume && outputs.output.is_none() {
        return Err(InputError::new_err(
            "resume=True: give the output file of the interrupted run (output=...)",
        ));
    }
    let stored = match &outputs.output {
        Some(p) if call.resume && p.exists() => {
            if !ewr_solve::sweep::resumable(sweep.method) {
                return Err(InputError::new_err(
                    "resume=True: only sequential sweeps can be resumed",
                ));
            }
            Some(
                ewr_results::read_stored_curves(p, &setups[0], &mu_values)
                    .map_err(InputError::new_err)?,
            )
        }
        _ => None,
    };
    let _claims = outputs.check()?;
    let csv = match &outputs.csv {
        Some(p) => Some(Mutex::new(
            ewr_results::FrcCsv::create(
                p,
                setups[0].model.contacts.len(),
                &setups[0].point.monitor,
                (
                    sweep.estimate_points,
                    setups[0].point.auto.is_some(),
                    sweep.stability,
                ),
                setups[0].point.amplitude,
            )
            .map_err(SolveError::new_err)?,
        )),
        None => None,
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    let mut observer = PyObserver {
        progress: call.progress,
        done: AtomicUsize::new(0),
        csv,
        interrupted: interrupted.clone(),
        callback_error: Mutex::new(None),
        warnings: Mutex::new(Vec::new()),
    };
    // One condensation for every curve: they differ only in their friction bounds. On a
    // worker, as the sweep (run_interruptible).
    let rec = py.detach(|| rayon::scope(|_| receptance(&setups[0])))?;
    let top = sweep.omega_max();
    warn_receptance(py, &rec, &setups[0], top)?;
    let specs: Vec<CurveSpec<'_>> = setups
        .iter()
        .zip(&mu_values)
        .enumerate()
        .map(|(i, (setup, &mu_n))| CurveSpec {
            mu_n,
            setup,
            resume: stored.as_ref().map(|s| &s[i]),
        })
        .collect();
    let curves: Vec<Curve> = run_interruptible(py, &interrupted, || {
        ewr_solve::sweep(&rec, &specs, sweep, &observer)
    });
    if let Some(csv) = observer.csv.take() {
        let csv = csv.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = csv.finish() {
            // Raised with the sweep's own warnings.
            observer
                .warnings
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!(
                    "{e}: the CSV keeps its rows in the order they were solved"
                ));
        }
    }
    for w in observer
        .warnings
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
    {
        warn(py, w)?;
    }
    // A stored sweep that cannot be continued is kept as it is: nothing is written over it.
    if let Some(e) = curves.iter().find_map(|c| match &c.stopped {
        Some(e @ StopReason::Resume(_)) => Some(e),
        _ => None,
    }) {
        return Err(InputError::new_err(format!(
            "resume=True: {e}; the output file was left as it was"
        )));
    }
    let fail = |e: String| SolveError::new_err(e);
    if let Some(p) = &outputs.output {
        ewr_results::write_frc(p, source, &setups[0], &curves).map_err(fail)?;
    }
    if let Some(p) = &outputs.plot {
        let axis = ewr_results::figures::FrequencyAxis::of_model(
            &setups[0].model,
            setups[0].point.amplitude,
            call.hz,
        );
        ewr_results::figures::frc(p, &curves, axis).map_err(fail)?;
    }
    if let Some(e) = observer
        .callback_error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        return Err(e);
    }
    let setup = Arc::new(setups[0].clone());
    let mut out = Vec::with_capacity(curves.len());
    for (curve, s) in curves.into_iter().zip(&setups) {
        let stopped = match &curve.stopped {
            Some(StopReason::Interrupted { at }) => {
                let msg = format!(
                    "interrupted at w = {at}: the curve has the {} points computed so far",
                    curve.points.len()
                );
                warn(py, &msg)?;
                Some(msg)
            }
            Some(StopReason::Cap {
                at,
                end,
                max_points,
            }) => {
                let msg = format!(
                    "stopped at the cap of {max_points} points at w = {at} before reaching \
                     {end}; use a larger step"
                );
                warn(py, &msg)?;
                Some(msg)
            }
            Some(r) => {
                let msg = r.to_string();
                warn(py, &format!("the curve stopped early: {msg}"))?;
                Some(msg)
            }
            None => None,
        };
        let unconverged = curve.unconverged();
        if unconverged > 0 {
            warn(
                py,
                &format!(
                    "{unconverged} of {} points did not converge (Frc.converged says which)",
                    curve.points.len()
                ),
            )?;
        }
        let setup = if many {
            Arc::new(s.clone())
        } else {
            setup.clone()
        };
        out.push(PyFrc::new(curve, stopped, setup, source.to_path_buf()));
    }
    if many {
        Ok(out
            .into_iter()
            .map(|f| Py::new(py, f).map(Py::into_any))
            .collect::<PyResult<Vec<_>>>()?
            .into_pyobject(py)?
            .into_any()
            .unbind())
    } else {
        Ok(Py::new(py, out.pop().expect("one curve"))?.into_any())
    }
}

/// How peak tracking is given in Python, beside the solver options.
pub struct PeaksCall {
    pub param: String,
    pub start: f64,
    pub end: f64,
    pub count: usize,
    pub optimum: bool,
    pub omega_start: f64,
    pub omega_end: f64,
    pub step: f64,
    pub adaptive: Option<f64>,
    pub stability: bool,
    pub all_phases: bool,
}

/// The resonance peak followed over a parameter, and the optimum (`Model.peaks`).
pub fn peaks<'py>(
    py: Python<'py>,
    model: &Model,
    source: &Path,
    c: &PeaksCall,
    opts: &PyOptions<'_>,
    outputs: &Outputs,
) -> PyResult<Bound<'py, PyDict>> {
    // The coarse sweeps obey the rules of a sweep: positive band, the point cap.
    SweepOptions {
        adaptive: c.adaptive,
        ..SweepOptions::new(c.omega_start, c.omega_end, c.step)
    }
    .check()
    .map_err(option_error)?;
    if c.count == 0 {
        return Err(InputError::new_err("count=0: give at least 1 value"));
    }
    if c.count > ewr_study::track::MAX_VALUES {
        return Err(InputError::new_err(format!(
            "count={}: at most {} values",
            c.count,
            ewr_study::track::MAX_VALUES
        )));
    }
    let r = opts.resolve(model, opts.mu_n)?;
    warn_setup(py, &r)?;
    let param = PeakParam::parse(&c.param, &r.model).map_err(option_error)?;
    if let Some(why) = param.range_problem(c.start, c.end) {
        return Err(InputError::new_err(format!(
            "start={}, end={}: {why}",
            c.start, c.end
        )));
    }
    if c.all_phases && (r.model.cyclic.is_none() || !c.stability) {
        return Err(InputError::new_err(
            "all_phases=True needs stability=True and a cyclic sector model (the travelling \
             wave's other inter-sector phases)",
        ));
    }
    let model_at = |v: f64| param.model_at(&r.model, v);
    // Refused at once where the parameter gives an invalid model.
    model_at(c.start).map_err(InputError::new_err)?;
    model_at(c.end).map_err(InputError::new_err)?;
    let _claims = outputs.check()?;
    let settings = TrackSettings {
        omega_start: c.omega_start,
        omega_end: c.omega_end,
        step: c.step,
        adaptive: c.adaptive,
        point: r.point.clone(),
        kind: r.kind,
        structural: param.kind.structural(),
        stability: c.stability,
        all_phases: c.all_phases,
    };
    let values = ewr_study::track::values(c.start, c.end, c.count);
    let interrupted = AtomicBool::new(false);
    let locus = run_interruptible(py, &interrupted, || {
        track(
            &model_at,
            &settings,
            &values,
            c.optimum,
            &mut || {},
            &|| interrupted.load(Ordering::SeqCst),
        )
    });
    let name = &param.name;
    for w in &locus.warnings {
        warn(py, w.trim_start_matches("warning: "))?;
    }
    for e in &locus.points {
        if let Some(why) = &e.unclassified {
            warn(
                py,
                &format!("stability not classified at {name} = {}: {why}", e.value),
            )?;
        }
    }
    let points = ewr_results::locus_points(&locus.points);
    let fail = |e: String| SolveError::new_err(e);
    if let Some(p) = &outputs.csv {
        ewr_results::write_peaks_csv(p, name, &points).map_err(fail)?;
    }
    if let Some(p) = &outputs.output {
        let status = match (&locus.failure, locus.interrupted) {
            (_, true) => "interrupted".to_string(),
            (Some(e), false) => format!("stopped: the peak was lost at {} = {e}", c.param),
            (None, false) => "complete".to_string(),
        };
        ewr_results::write_peaks_h5(
            p,
            source,
            name,
            &points,
            locus.optimum,
            locus.plateau,
            &status,
        )
        .map_err(fail)?;
    }
    if let Some(p) = &outputs.plot {
        let axis =
            ewr_results::figures::FrequencyAxis::of_model(&r.model, r.point.amplitude, false);
        ewr_results::plot_peaks(p, name, &points, locus.optimum, axis).map_err(fail)?;
    }
    let d = PyDict::new(py);
    let col = |f: &dyn Fn(&ewr_results::LocusPoint) -> f64| -> Vec<f64> {
        points.iter().map(f).collect()
    };
    // The parameter as the caller spelled it (`normal_preload` stays `normal_preload`).
    d.set_item("parameter", &c.param)?;
    d.set_item("value", col(&|e| e.value).into_pyarray(py))?;
    d.set_item("omega", col(&|e| e.omega).into_pyarray(py))?;
    d.set_item("amplitude", col(&|e| e.amplitude).into_pyarray(py))?;
    d.set_item(
        "evaluations",
        points
            .iter()
            .map(|e| e.evaluations as u64)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    d.set_item(
        "switched",
        points
            .iter()
            .map(|e| e.switched)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    if c.stability {
        // 1 stable, 0 unstable, -1 not classified; NaN multipliers where not classified.
        let codes: Vec<i64> = points
            .iter()
            .map(ewr_results::LocusPoint::stable_code)
            .collect();
        d.set_item("stable", codes.into_pyarray(py))?;
        d.set_item(
            "max_multiplier",
            col(&|e| e.max_multiplier.unwrap_or(f64::NAN)).into_pyarray(py),
        )?;
    }
    match locus.optimum {
        Some((v, a, w)) => {
            let o = PyDict::new(py);
            o.set_item("value", v)?;
            o.set_item("amplitude", a)?;
            o.set_item("omega", w)?;
            o.set_item("interior", locus.interior)?;
            o.set_item("plateau", locus.plateau)?;
            d.set_item("optimum", o)?;
        }
        None => d.set_item("optimum", py.None())?,
    }
    d.set_item("solves", locus.solves)?;
    d.set_item("interrupted", locus.interrupted)?;
    match locus.failure {
        Some(e) if locus.interrupted => {
            warn(py, &format!("{e}: the locus so far is returned"))?;
            d.set_item("error", e)?;
            Ok(d)
        }
        Some(e) if locus.points.is_empty() => {
            Err(SolveError::new_err(format!("{} = {e}", c.param)))
        }
        Some(e) => {
            warn(
                py,
                &format!(
                    "the peak was lost at {} = {e}; the locus up to there is returned",
                    c.param
                ),
            )?;
            d.set_item("error", e)?;
            Ok(d)
        }
        None => {
            d.set_item("error", py.None())?;
            Ok(d)
        }
    }
}
