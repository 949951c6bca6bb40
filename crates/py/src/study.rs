//! `ewr.Study` (a parameter study from a TOML file or a dict, run as `ewr study` runs it, with
//! the same files) and `ewr.read_result` (any result file ewr writes, as nested dicts of numpy
//! arrays).

use crate::convert::warn;
use crate::{InputError, SolveError};
use ewr_results::read::{Tree, Values};
use ewr_results::study::{StudyRun, StudyRunError};
use ewr_study::{CaseResult, Event, Study, Value};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A Python value of a study dict as TOML.
fn toml_value(v: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if let Ok(b) = v.extract::<bool>() {
        return Ok(toml::Value::Boolean(b));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(toml::Value::Float(x));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(toml::Value::String(s));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        return Ok(toml::Value::Table(toml_table(d, at)?));
    }
    if let Ok(list) = v.extract::<Vec<Bound<'_, PyAny>>>() {
        return list
            .iter()
            .enumerate()
            .map(|(i, x)| toml_value(x, &format!("{at}[{i}]")))
            .collect::<PyResult<Vec<_>>>()
            .map(toml::Value::Array);
    }
    Err(InputError::new_err(format!(
        "{at}: a number, string, bool, list or dict, not {}",
        v.get_type().name()?
    )))
}

fn toml_table(d: &Bound<'_, PyDict>, at: &str) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        let k: String = k
            .extract()
            .map_err(|_| InputError::new_err(format!("{at}: keys are strings")))?;
        let path = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        t.insert(k, toml_value(&v, &path)?);
    }
    Ok(t)
}

/// A parameter study: a model, a frequency band and a grid (or list) of parameter values,
/// as the study files of `ewr study` (docs/study.md).
#[pyclass(name = "Study", module = "ewr", frozen)]
pub struct PyStudy {
    study: Arc<Study>,
}

fn value(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Value::Num(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

#[pymethods]
impl PyStudy {
    /// Reads a study file (TOML), or takes the same content as a dict (a relative model path
    /// is then relative to the current folder). Every setting and case is checked now.
    #[new]
    fn new(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Self> {
        let study = if let Ok(d) = source.cast::<PyDict>() {
            let text = toml::to_string(&toml_table(d, "")?)
                .map_err(|e| InputError::new_err(format!("study: {e}")))?;
            let cwd = std::env::current_dir()
                .map_err(|e| InputError::new_err(format!("current folder: {e}")))?;
            let at = cwd.join("study (from a dict).toml");
            py.detach(|| Study::from_str_at(&at, &text))
        } else {
            let path: PathBuf = source
                .extract()
                .map_err(|_| InputError::new_err("Study(source): a study file path or a dict"))?;
            py.detach(|| Study::load(&path))
        }
        .map_err(|e| InputError::new_err(e.to_string()))?;
        Ok(PyStudy {
            study: Arc::new(study),
        })
    }

    /// The study's title, if any.
    #[getter]
    fn title(&self) -> Option<String> {
        self.study.title.clone()
    }

    /// The model file, resolved against the study file's folder.
    #[getter]
    fn model_path(&self) -> PathBuf {
        self.study.model_path.clone()
    }

    /// The swept parameters, in column order (`mu_n`, `mass`, ...).
    #[getter]
    fn parameters(&self) -> Vec<&'static str> {
        self.study.parameters.iter().map(|p| p.name()).collect()
    }

    /// Every case: `{"index", "key", <parameter>: value, ...}`.
    #[getter]
    fn cases<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.study
            .cases
            .iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("index", c.index)?;
                d.set_item("key", self.study.key(c))?;
                for (p, v) in self.study.parameters.iter().zip(&c.values) {
                    d.set_item(p.name(), value(py, v)?)?;
                }
                Ok(d)
            })
            .collect()
    }

    fn __len__(&self) -> usize {
        self.study.cases.len()
    }

    /// Runs every case (in parallel, `jobs` at a time) as `ewr study -o output` does: each
    /// finished case is kept in `output + ".cases/"` at once, so a rerun after Ctrl-C or a
    /// crash resumes; then the result file, the summary table (`.csv`) and the figures
    /// (unless `plots=False`) are written beside `output`. Without `output` nothing is kept.
    /// `progress(done, total, key)` is called as each case finishes.
    #[pyo3(signature = (output=None, *, jobs=None, progress=None, retry_failed=false, plots=true))]
    fn run(
        &self,
        py: Python<'_>,
        output: Option<PathBuf>,
        jobs: Option<usize>,
        progress: Option<Py<PyAny>>,
        retry_failed: bool,
        plots: bool,
    ) -> PyResult<PyStudyResult> {
        if jobs == Some(0) {
            return Err(InputError::new_err("jobs=0: give at least 1"));
        }
        let scratch = match &output {
            Some(_) => None,
            None => Some(
                tempfile::tempdir()
                    .map_err(|e| SolveError::new_err(format!("temporary folder: {e}")))?,
            ),
        };
        let output = match (&output, &scratch) {
            (Some(p), _) => p.clone(),
            (None, Some(d)) => d.path().join("study.h5"),
            (None, None) => unreachable!("a scratch folder without an output"),
        };
        if output.extension().and_then(|e| e.to_str()) != Some("h5") {
            return Err(InputError::new_err(format!(
                "output={:?}: the file name must end in .h5",
                output.display().to_string()
            )));
        }
        ewr_results::ensure_parent(&output).map_err(SolveError::new_err)?;
        let cancel = Arc::new(AtomicBool::new(false));
        let runner = StudyRun {
            study: &self.study,
            output,
            shard: None,
            jobs,
            retry_failed,
            plots: plots && scratch.is_none(),
            cancel: Some(cancel.clone()),
        };
        // Claimed as `ewr study` claims them: a second run or a merge into the same files
        // is refused while this one works.
        let mut _claims = Vec::new();
        if scratch.is_none() {
            for p in std::iter::once(runner.output_file()).chain(runner.derived_outputs()) {
                ewr_results::lock::probe_writable(&p).map_err(SolveError::new_err)?;
                _claims.push(ewr_results::lock::claim(&p).map_err(InputError::new_err)?);
            }
        }
        let total = runner.indices().len();
        let done = AtomicUsize::new(0);
        let callback_error = std::sync::Mutex::new(None::<PyErr>);
        let report = |ev: Event<'_>| {
            let r = match ev {
                Event::Reused(r) | Event::Computed(r, _) => r,
            };
            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some(cb) = &progress
                && let Some(e) = Python::attach(|py| cb.call1(py, (n, total, r.key.clone())).err())
            {
                cancel.store(true, Ordering::SeqCst);
                callback_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
            }
        };
        let outcome = crate::run::run_interruptible(py, &cancel, || runner.run(&report));
        if let Some(e) = callback_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            return Err(e);
        }
        let outcome = outcome.map_err(|e| match e {
            StudyRunError::Busy(m) => InputError::new_err(m),
            e => SolveError::new_err(e.to_string()),
        })?;
        if outcome.cancelled {
            let kept = if scratch.is_none() {
                "; rerun to resume from the finished cases"
            } else {
                ""
            };
            return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(format!(
                "study interrupted after {} of {total} cases{kept}",
                outcome.results.len()
            )));
        }
        let bad = outcome
            .results
            .iter()
            .filter(|r| r.status != ewr_study::CaseStatus::Ok)
            .count();
        if bad > 0 {
            warn(
                py,
                &format!(
                    "{bad} of {} cases did not fully converge (StudyResult.table() gives each \
                     status and reason)",
                    outcome.results.len()
                ),
            )?;
        }
        for w in ewr_study::result::distinct_warnings(&outcome.results) {
            warn(py, w.trim_start_matches("warning: "))?;
        }
        Ok(PyStudyResult {
            study: self.study.clone(),
            results: outcome.results,
            files: if scratch.is_some() {
                Vec::new()
            } else {
                outcome.written
            },
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<ewr.Study {} cases over [{}] on {}>",
            self.study.cases.len(),
            self.parameters().join(", "),
            self.study.model_path.display()
        )
    }
}

/// The results of a study run: every case's curve (or locus) and peak.
#[pyclass(name = "StudyResult", module = "ewr", frozen)]
pub struct PyStudyResult {
    study: Arc<Study>,
    results: Vec<CaseResult>,
    files: Vec<PathBuf>,
}

#[pymethods]
impl PyStudyResult {
    /// The files written (result file, table, figures); empty for a run without `output`.
    #[getter]
    fn files(&self) -> Vec<PathBuf> {
        self.files.clone()
    }

    /// One dict per case: `index`, `key`, the parameter values, `status`, `reason`,
    /// `peak_omega`, `peak_amplitude`, `optimum_value`, `optimum_plateau` (`(from, to)` where
    /// the optimum is flat, else None), and the curve (`omega`, `amplitude`,
    /// `converged`, `iterations`), the refined peaks (`peaks_omega`, `peaks_amplitude`) and
    /// the locus of `[optimize]` studies (`locus_value`, `locus_omega`, `locus_amplitude`) as
    /// numpy arrays; with `solver.stability`, `stable` and `max_multiplier` per point,
    /// `peak_stable` and `locus_stable` (1 stable, 0 unstable, -1 not classified); `warnings`,
    /// what the case's numbers should be read with (a list of strings, mostly empty).
    #[getter]
    fn cases<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.results
            .iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("index", r.index)?;
                d.set_item("key", &r.key)?;
                for (p, v) in self.study.parameters.iter().zip(&r.values) {
                    d.set_item(p.name(), value(py, v)?)?;
                }
                d.set_item("status", r.status.as_str())?;
                d.set_item("reason", &r.reason)?;
                d.set_item("warnings", r.warnings.clone())?;
                d.set_item("peak_omega", r.peak_omega)?;
                d.set_item("peak_amplitude", r.peak_amplitude)?;
                d.set_item("optimum_value", r.optimum_value)?;
                let [lo, hi] = r.optimum_plateau;
                d.set_item("optimum_plateau", (!lo.is_nan()).then_some((lo, hi)))?;
                d.set_item("omega", r.omega.clone().into_pyarray(py))?;
                d.set_item("amplitude", r.amp_norm.clone().into_pyarray(py))?;
                d.set_item("converged", r.converged.clone().into_pyarray(py))?;
                d.set_item("iterations", r.iterations.clone().into_pyarray(py))?;
                d.set_item("peaks_omega", r.peaks_omega.clone().into_pyarray(py))?;
                d.set_item(
                    "peaks_amplitude",
                    r.peaks_amplitude.clone().into_pyarray(py),
                )?;
                d.set_item("locus_value", r.locus_value.clone().into_pyarray(py))?;
                d.set_item("locus_omega", r.locus_omega.clone().into_pyarray(py))?;
                d.set_item(
                    "locus_amplitude",
                    r.locus_amplitude.clone().into_pyarray(py),
                )?;
                if self.study.solver.stability {
                    d.set_item("stable", r.stable.clone().into_pyarray(py))?;
                    d.set_item("max_multiplier", r.max_multiplier.clone().into_pyarray(py))?;
                    d.set_item("peak_stable", r.peak_stable)?;
                    d.set_item("locus_stable", r.locus_stable.clone().into_pyarray(py))?;
                }
                Ok(d)
            })
            .collect()
    }

    /// The summary as columns (`pandas.DataFrame(result.table())`), named as the study's CSV:
    /// `case`, the parameters, `status`, `peak_omega`, `peak_amplitude`, `points`,
    /// `unconverged`, `iterations`, `reason` (`[optimize]`: `optimum_<param>`, `values`,
    /// `solves`, `plateau_from`, `plateau_to` instead of the curve's counts).
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let rs = &self.results;
        let ints = |f: &dyn Fn(&CaseResult) -> i64| rs.iter().map(f).collect::<Vec<i64>>();
        let floats = |f: &dyn Fn(&CaseResult) -> f64| rs.iter().map(f).collect::<Vec<f64>>();
        d.set_item("case", ints(&|r| r.index as i64).into_pyarray(py))?;
        for (p, kind) in self.study.parameters.iter().enumerate() {
            if kind.numeric() {
                d.set_item(kind.name(), floats(&|r| r.values[p].num()).into_pyarray(py))?;
            } else {
                let text: Vec<String> = rs.iter().map(|r| r.values[p].to_string()).collect();
                d.set_item(kind.name(), PyList::new(py, text)?)?;
            }
        }
        let status: Vec<&str> = rs.iter().map(|r| r.status.as_str()).collect();
        d.set_item("status", PyList::new(py, status)?)?;
        if let Some(o) = &self.study.optimize {
            d.set_item(
                format!("optimum_{}", o.kind.name()),
                floats(&|r| r.optimum_value).into_pyarray(py),
            )?;
        }
        d.set_item("peak_omega", floats(&|r| r.peak_omega).into_pyarray(py))?;
        d.set_item(
            "peak_amplitude",
            floats(&|r| r.peak_amplitude).into_pyarray(py),
        )?;
        if self.study.optimize.is_some() {
            d.set_item(
                "values",
                ints(&|r| r.locus_value.len() as i64).into_pyarray(py),
            )?;
            d.set_item("solves", ints(&|r| r.solves).into_pyarray(py))?;
            d.set_item(
                "plateau_from",
                floats(&|r| r.optimum_plateau[0]).into_pyarray(py),
            )?;
            d.set_item(
                "plateau_to",
                floats(&|r| r.optimum_plateau[1]).into_pyarray(py),
            )?;
        } else {
            d.set_item("points", ints(&|r| r.omega.len() as i64).into_pyarray(py))?;
            d.set_item(
                "unconverged",
                ints(&|r| r.n_unconverged() as i64).into_pyarray(py),
            )?;
            d.set_item(
                "iterations",
                ints(&|r| r.total_iterations()).into_pyarray(py),
            )?;
        }
        let reason: Vec<&str> = rs.iter().map(|r| r.reason.as_str()).collect();
        d.set_item("reason", PyList::new(py, reason)?)?;
        Ok(d)
    }

    /// The case the study is read for, as in `cases`: the smallest peak (among fully
    /// converged cases if any), or over the engine order the largest (the critical engine
    /// order), as the CLI's summary and figures mark it.
    #[getter]
    fn optimum<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let info = ewr_study::StudyInfo::of(&self.study);
        let Some((best, _)) = ewr_results::study::highlight(&info, &self.results) else {
            return Ok(None);
        };
        let i = self
            .results
            .iter()
            .position(|r| std::ptr::eq(r, best))
            .unwrap_or(0);
        Ok(self.cases(py)?.into_iter().nth(i))
    }

    fn __len__(&self) -> usize {
        self.results.len()
    }

    fn __repr__(&self) -> String {
        let ok = self
            .results
            .iter()
            .filter(|r| r.status == ewr_study::CaseStatus::Ok)
            .count();
        format!("<ewr.StudyResult {} cases, {ok} ok>", self.results.len())
    }
}

fn values_object(py: Python<'_>, v: &Values) -> PyResult<Py<PyAny>> {
    fn shaped<'py>(a: Bound<'py, PyAny>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
        if shape.len() <= 1 {
            return Ok(a);
        }
        a.call_method1("reshape", (shape.to_vec(),))
    }
    Ok(match v {
        Values::Float(x, shape) if shape.is_empty() => x[0].into_pyobject(py)?.into_any().unbind(),
        Values::Int(x, shape) if shape.is_empty() => x[0].into_pyobject(py)?.into_any().unbind(),
        Values::Text(x, shape) if shape.is_empty() => {
            x[0].clone().into_pyobject(py)?.into_any().unbind()
        }
        Values::Float(x, shape) => shaped(x.clone().into_pyarray(py).into_any(), shape)?.unbind(),
        Values::Int(x, shape) => shaped(x.clone().into_pyarray(py).into_any(), shape)?.unbind(),
        Values::Text(x, _) => PyList::new(py, x)?.into_any().unbind(),
    })
}

fn tree_dict<'py>(py: Python<'py>, t: &Tree) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in t.attrs.iter().chain(&t.datasets) {
        d.set_item(k, values_object(py, v)?)?;
    }
    for (k, g) in &t.groups {
        d.set_item(k, tree_dict(py, g)?)?;
    }
    Ok(d)
}

/// Any result file ewr writes (`ewr solve/frc/peaks/simulate -o`, a study file), as a dict:
/// attributes and datasets by name (numbers, strings, numpy arrays in their stored shape),
/// groups as nested dicts (layout in docs/results-format.md).
#[pyfunction]
pub fn read_result(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let tree = py
        .detach(|| ewr_results::read::read_tree(&path))
        .map_err(InputError::new_err)?;
    tree_dict(py, &tree)
}
