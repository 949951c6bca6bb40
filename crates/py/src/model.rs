//! `ewr.Model`: a model from arrays, a file or a built-in example, and the computations on it.

use crate::convert::{sparse, to_scipy, warn};
use crate::options::{PyOptions, Rho, option_error};
use crate::results::{PySimulation, PySolution};
use crate::run::{FrcCall, MuN, Outputs, PeaksCall};
use crate::{InputError, SolveError};
use ewr_model::{
    Contacts, Damping, Example, ExampleOptions, ForcingTerm, Kinematics, Model, NormalContacts,
    has_errors, validate,
};
use ewr_solve::SweepOptions;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// A linear structure with dry-friction contacts under periodic forcing (immutable).
#[pyclass(name = "Model", module = "ewr", frozen)]
pub struct PyModel {
    pub model: Model,
    /// The file it was read from, named in result files as `ewr` names its MODEL.
    pub source: Option<std::path::PathBuf>,
}

impl PyModel {
    /// A model built in Python (no file behind it).
    pub fn built(model: Model) -> Self {
        PyModel {
            model,
            source: None,
        }
    }

    /// What result files name as the model: its file, or where it came from.
    pub fn source_path(&self) -> std::path::PathBuf {
        self.source
            .clone()
            .unwrap_or_else(|| "(built in Python)".into())
    }
}

/// Reads an optional key of a contacts dict.
fn key<'py>(d: &Bound<'py, PyDict>, k: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(k)?.filter(|v| !v.is_none()))
}

fn floats(v: &Bound<'_, PyAny>, what: &str, n: usize) -> PyResult<Vec<f64>> {
    let x: Vec<f64> = match v.extract::<f64>() {
        Ok(s) => vec![s; n],
        Err(_) => v.extract().map_err(|_| {
            InputError::new_err(format!("contacts[{what:?}]: a number or a list of numbers"))
        })?,
    };
    if x.len() != n {
        return Err(InputError::new_err(format!(
            "contacts[{what:?}]: {} values for {n} contacts",
            x.len()
        )));
    }
    Ok(x)
}

/// DOF indices as a flat list: nested per contact (`[[0, 1], [2, 3]]`) or flat.
fn dof_indices(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Option<usize>>> {
    let flat: Vec<Option<i64>> = match v.extract::<Vec<Vec<Option<i64>>>>() {
        Ok(nested) => nested.into_iter().flatten().collect(),
        Err(_) => v.extract().map_err(|_| {
            InputError::new_err(format!(
                "contacts[{what:?}]: DOF indices, one list per contact or one flat list"
            ))
        })?,
    };
    // -1 or None: ground.
    Ok(flat
        .into_iter()
        .map(|d| d.filter(|&d| d >= 0).map(|d| d as usize))
        .collect())
}

/// One side (tangential or normal) of the contacts' kinematics: `dofs` (+ `other`) or `W`.
/// With `blank`, a negative entry of `dofs` marks a row without a DOF (returned in the third
/// item; the row's DOF is then 0, unused).
fn kinematics(
    d: &Bound<'_, PyDict>,
    n: usize,
    what: &str,
    blank: bool,
) -> PyResult<(Kinematics, usize, Vec<bool>)> {
    if let Some(w) = key(d, "W")? {
        let w = sparse(&w, &format!("{what}[\"W\"]"), None)?;
        if w.ncols() != n {
            return Err(InputError::new_err(format!(
                "{what}[\"W\"]: {} columns for a model of {n} DOFs",
                w.ncols()
            )));
        }
        let r = w.nrows();
        return Ok((Kinematics::Matrix(w), r, vec![false; r]));
    }
    let dofs = key(d, "dofs")?
        .ok_or_else(|| InputError::new_err(format!("{what}: give \"dofs\" or \"W\"")))?;
    let dofs = dof_indices(&dofs, "dofs")?;
    if !blank && dofs.iter().any(Option::is_none) {
        return Err(InputError::new_err(format!(
            "{what}[\"dofs\"]: a negative DOF index"
        )));
    }
    let blanks: Vec<bool> = dofs.iter().map(Option::is_none).collect();
    let dofs: Vec<usize> = dofs.into_iter().map(|d| d.unwrap_or(0)).collect();
    let other = match key(d, "other")? {
        Some(o) => {
            let o = dof_indices(&o, "other")?;
            if o.len() != dofs.len() {
                return Err(InputError::new_err(format!(
                    "{what}[\"other\"]: {} entries for {} in \"dofs\"",
                    o.len(),
                    dofs.len()
                )));
            }
            Some(o)
        }
        None => None,
    };
    let r = dofs.len();
    Ok((Kinematics::Dofs { dofs, other }, r, blanks))
}

/// The contacts of a model from the dict documented in `_ewr.pyi`.
fn contacts(d: &Bound<'_, PyDict>, n: usize) -> PyResult<Contacts> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !["dim", "dofs", "other", "W", "mu_n", "rho", "k_t", "normal"].contains(&k.as_str()) {
            return Err(InputError::new_err(format!(
                "contacts: unknown key {k:?} (dim, dofs, other, W, mu_n, rho, k_t, normal)"
            )));
        }
    }
    let dim: usize = match key(d, "dim")? {
        Some(v) => v.extract()?,
        None => 1,
    };
    if !(1..=2).contains(&dim) {
        return Err(InputError::new_err(format!(
            "contacts[\"dim\"]={dim}: 1 or 2 tangential directions"
        )));
    }
    let (kin, rows, _) = kinematics(d, n, "contacts", false)?;
    if rows % dim != 0 || rows == 0 {
        return Err(InputError::new_err(format!(
            "contacts: {rows} tangential rows is not a positive multiple of dim = {dim}"
        )));
    }
    let nc = rows / dim;
    let normal = match key(d, "normal")? {
        Some(nd) => {
            let nd = nd.cast_into::<PyDict>().map_err(|_| {
                InputError::new_err(
                    "contacts[\"normal\"]: a dict with dofs or W, g0, mu, k_n, load",
                )
            })?;
            let (kn, rows_n, blanks) = kinematics(&nd, n, "contacts[\"normal\"]", true)?;
            if rows_n != nc {
                return Err(InputError::new_err(format!(
                    "contacts[\"normal\"]: {rows_n} normal rows for {nc} contacts"
                )));
            }
            let get = |k: &str, default: Option<f64>| -> PyResult<Option<Vec<f64>>> {
                match key(&nd, k)? {
                    Some(v) => floats(&v, &format!("normal.{k}"), nc).map(Some),
                    None => Ok(default.map(|x| vec![x; nc])),
                }
            };
            Some(NormalContacts {
                kinematics: kn,
                g0: get("g0", Some(0.0))?.unwrap_or_default(),
                mu: get("mu", None)?.ok_or_else(|| {
                    InputError::new_err(
                        "contacts[\"normal\"]: \"mu\" (friction coefficient) is required",
                    )
                })?,
                k_n: get("k_n", None)?,
                load: {
                    let load = get("load", None)?;
                    let fixed = |c: usize| load.as_ref().is_some_and(|l| !l[c].is_nan());
                    if let Some(c) = (0..nc).find(|&c| blanks[c] && !fixed(c)) {
                        return Err(InputError::new_err(format!(
                            "contacts[\"normal\"][\"dofs\"]: contact {c} has no normal DOF \
                             (-1) but no fixed load either: give its DOF, or its constant normal \
                             force in \"load\""
                        )));
                    }
                    load
                },
            })
        }
        None => None,
    };
    let mu_n = match (key(d, "mu_n")?, &normal) {
        (Some(v), None) => floats(&v, "mu_n", nc)?,
        (None, None) => {
            return Err(InputError::new_err(
                "contacts: \"mu_n\" (friction bound per contact) is required without \"normal\"",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(InputError::new_err(
                "contacts: \"mu_n\" and \"normal\" exclude each other: a 3-D contact's bound is \
                 mu times its normal force",
            ));
        }
        (None, Some(_)) => vec![0.0; nc],
    };
    // "auto": rho scaled at each frequency from the structure (docs/contact-3d.md, Scaling).
    let (rho, rho_auto) = match key(d, "rho")? {
        Some(v) => match v.extract::<String>() {
            Ok(s) if s == "auto" => (vec![1.0; nc], true),
            Ok(s) => {
                return Err(InputError::new_err(format!(
                    "contacts[\"rho\"]={s:?}: \"auto\" or numbers > 0, one per contact"
                )));
            }
            Err(_) => (floats(&v, "rho", nc)?, false),
        },
        None => (vec![1.0; nc], false),
    };
    let k_t = match key(d, "k_t")? {
        Some(v) => Some(floats(&v, "k_t", nc)?),
        None => None,
    };
    Ok(Contacts {
        dim,
        mu_n,
        rho,
        rho_auto,
        kinematics: kin,
        k_t,
        normal,
    })
}

/// Forcing terms from `(dof, harmonic, cos[, sin])` tuples.
fn forcing(list: &Bound<'_, PyAny>) -> PyResult<Vec<ForcingTerm>> {
    let items: Vec<Bound<'_, PyAny>> = list.extract().map_err(|_| {
        InputError::new_err("forcing: a list of (dof, harmonic, cos[, sin]) tuples")
    })?;
    items
        .iter()
        .map(|t| {
            let (dof, harmonic, cos, sin) = match t.extract::<(usize, usize, f64, f64)>() {
                Ok(x) => x,
                Err(_) => {
                    let (d, h, c): (usize, usize, f64) = t.extract().map_err(|_| {
                        InputError::new_err(format!(
                            "forcing: {t} is not a (dof, harmonic, cos[, sin]) tuple"
                        ))
                    })?;
                    (d, h, c, 0.0)
                }
            };
            Ok(ForcingTerm {
                dof,
                harmonic,
                cos,
                sin,
            })
        })
        .collect()
}

/// Raises every validation error at once; warnings become Python warnings.
/// `cyclic={"sectors": N, "engine_order": EO, "left": [...], "right": [...]}`.
fn cyclic(d: &Bound<'_, PyDict>) -> PyResult<ewr_model::Cyclic> {
    let need = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        key(d, k)?.ok_or_else(|| InputError::new_err(format!("cyclic: missing {k:?}")))
    };
    let int = |k: &str| -> PyResult<i64> {
        need(k)?
            .extract::<i64>()
            .map_err(|_| InputError::new_err(format!("cyclic: {k} must be an integer")))
    };
    let list = |k: &str| -> PyResult<Vec<usize>> {
        need(k)?
            .extract::<Vec<i64>>()
            .map_err(|_| InputError::new_err(format!("cyclic: {k} must be a list of DOF indices")))?
            .into_iter()
            .map(|v| {
                usize::try_from(v)
                    .map_err(|_| InputError::new_err(format!("cyclic: {k} has DOF {v} < 0")))
            })
            .collect()
    };
    let sectors = int("sectors")?;
    Ok(ewr_model::Cyclic {
        sectors: usize::try_from(sectors)
            .map_err(|_| InputError::new_err(format!("cyclic: sectors = {sectors} < 0")))?,
        engine_order: int("engine_order")?,
        left: list("left")?,
        right: list("right")?,
    })
}

fn checked(py: Python<'_>, model: Model) -> PyResult<PyModel> {
    let problems = validate(&model);
    if has_errors(&problems) {
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        return Err(InputError::new_err(format!(
            "invalid model:\n  {}",
            lines.join("\n  ")
        )));
    }
    for p in &problems {
        warn(py, &p.to_string())?;
    }
    Ok(PyModel::built(model))
}

fn model_error(e: impl std::fmt::Display) -> PyErr {
    InputError::new_err(e.to_string())
}

#[pymethods]
impl PyModel {
    /// Builds a model from its matrices (numpy arrays, nested lists or scipy.sparse).
    #[new]
    #[pyo3(signature = (mass, stiffness, damping=None, *, contacts=None, forcing=None,
        rayleigh=None, eta=None, dof_labels=None, title=None, units=None, cyclic=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        mass: &Bound<'_, PyAny>,
        stiffness: &Bound<'_, PyAny>,
        damping: Option<&Bound<'_, PyAny>>,
        contacts: Option<&Bound<'_, PyDict>>,
        forcing: Option<&Bound<'_, PyAny>>,
        rayleigh: Option<(f64, f64)>,
        eta: Option<f64>,
        dof_labels: Option<Vec<String>>,
        title: Option<String>,
        units: Option<String>,
        cyclic: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let k = sparse(stiffness, "stiffness", None)?;
        let n = k.nrows();
        if k.ncols() != n {
            return Err(InputError::new_err(format!(
                "stiffness: shape {} x {}, a square matrix is needed",
                n,
                k.ncols()
            )));
        }
        let m = sparse(mass, "mass", Some((n, n)))?;
        let c = match damping {
            Some(c) if !c.is_none() => Some(sparse(c, "damping", Some((n, n)))?),
            _ => None,
        };
        let model = Model {
            title,
            units,
            mass: m,
            stiffness: k,
            damping_matrix: c,
            damping: Damping {
                rayleigh,
                hysteretic_eta: eta,
                modal_zeta: None,
            },
            contacts: match contacts {
                Some(d) => self::contacts(d, n)?,
                None => Contacts::none(),
            },
            forcing: match forcing {
                Some(f) => self::forcing(f)?,
                None => Vec::new(),
            },
            dof_labels,
            cyclic: cyclic.map(self::cyclic).transpose()?,
        };
        checked(py, model)
    }

    /// Reads a model file (HDF5, docs/model-format.md); warnings become Python warnings.
    #[staticmethod]
    fn read(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let read = py.detach(|| ewr_model::read(&path)).map_err(model_error)?;
        for w in &read.warnings {
            warn(py, &w.to_string())?;
        }
        Ok(PyModel {
            model: read.model,
            source: Some(path),
        })
    }

    /// A built-in example model by name (see `ewr.examples()`).
    #[staticmethod]
    #[pyo3(signature = (name, *, mu_n=None, contacts=None, refine=None, contact_3d=false,
        damper_mass=None, sectors=None, engine_order=None))]
    #[allow(clippy::too_many_arguments)]
    fn example(
        name: &str,
        mu_n: Option<f64>,
        contacts: Option<usize>,
        refine: Option<usize>,
        contact_3d: bool,
        damper_mass: Option<f64>,
        sectors: Option<usize>,
        engine_order: Option<i64>,
    ) -> PyResult<Self> {
        let ex: Example = name.parse().map_err(InputError::new_err)?;
        if (sectors.is_some() || engine_order.is_some())
            && !matches!(ex, Example::BladedDisk | Example::Sector)
        {
            return Err(InputError::new_err(
                "sectors and engine_order apply to the bladed-disk and sector examples only",
            ));
        }
        if sectors.is_some_and(|s| s < 2) {
            return Err(InputError::new_err("sectors: a disk needs at least 2"));
        }
        let model = ex.build(&ExampleOptions {
            mu_n,
            contacts,
            refine,
            contact_3d,
            damper_mass,
            sectors,
            engine_order,
        });
        Ok(PyModel::built(model))
    }

    /// Writes the model file (HDF5, format v2 when the contacts need it).
    fn write(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| ewr_model::write(&path, &self.model))
            .map_err(|e| SolveError::new_err(e.to_string()))
    }

    /// Number of DOFs.
    #[getter]
    fn n_dofs(&self) -> usize {
        self.model.n_dofs()
    }

    /// Number of friction contacts.
    #[getter]
    fn n_contacts(&self) -> usize {
        self.model.contacts.len()
    }

    /// Tangential directions per contact (1 or 2).
    #[getter]
    fn contact_dim(&self) -> usize {
        self.model.contacts.dim
    }

    /// True for 3-D contacts (a normal direction: varying normal load, lift-off).
    #[getter]
    fn has_normal(&self) -> bool {
        self.model.contacts.has_normal()
    }

    /// Friction bound `mu N` per contact (zeros for 3-D contacts).
    #[getter]
    fn mu_n(&self) -> Vec<f64> {
        self.model.contacts.mu_n.clone()
    }

    #[getter]
    fn title(&self) -> Option<String> {
        self.model.title.clone()
    }

    #[getter]
    fn units(&self) -> Option<String> {
        self.model.units.clone()
    }

    #[getter]
    fn dof_labels(&self) -> Option<Vec<String>> {
        self.model.dof_labels.clone()
    }

    /// Mass matrix as a `scipy.sparse.csc_array`.
    #[getter]
    fn mass<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_scipy(py, &self.model.mass)
    }

    /// Stiffness matrix as a `scipy.sparse.csc_array`.
    #[getter]
    fn stiffness<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_scipy(py, &self.model.stiffness)
    }

    /// Total viscous damping `C + alpha M + beta K` as a `scipy.sparse.csc_array`.
    #[getter]
    fn damping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_scipy(py, &self.model.viscous_damping())
    }

    /// Contact map: tangential rows `W` (`dim * nc`), then normal rows for 3-D contacts.
    #[getter]
    fn contact_matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let w = self
            .model
            .contacts
            .contact_matrix(self.model.n_dofs())
            .map_err(InputError::new_err)?;
        to_scipy(py, &w)
    }

    /// Forcing terms `(dof, harmonic, cos, sin)`.
    #[getter]
    fn forcing(&self) -> Vec<(usize, usize, f64, f64)> {
        self.model
            .forcing
            .iter()
            .map(|f| (f.dof, f.harmonic, f.cos, f.sin))
            .collect()
    }

    /// Undamped natural circular frequencies (ascending) with the friction removed, or with
    /// every contact stuck (`stuck=True`: contact stiffnesses as springs, rigid contacts by a
    /// penalty 1e6 times the stiffest DOF), as `ewr model info` lists them: a sweep should
    /// cover both. Dense eigensolver, up to 3000 DOFs.
    #[pyo3(signature = (*, stuck=false, nodal_diameter=None))]
    fn natural_frequencies(
        &self,
        py: Python<'_>,
        stuck: bool,
        nodal_diameter: Option<usize>,
    ) -> PyResult<Vec<f64>> {
        if nodal_diameter.is_some() && self.model.cyclic.is_none() {
            return Err(InputError::new_err(
                "nodal_diameter applies to cyclic sector models only",
            ));
        }
        // On one of rayon's workers (the modal extraction's parallel calls, run::run_interruptible).
        py.detach(|| {
            rayon::scope(|_| -> Result<Vec<f64>, String> {
                let model = if stuck {
                    match self.model.stuck_default()? {
                        Some(m) => m,
                        None => self.model.clone(),
                    }
                } else {
                    self.model.clone()
                };
                match &model.cyclic {
                    // A sector: the nodal diameter asked for, or that of the forced harmonic 1.
                    Some(cy) => ewr_hb::modes::cyclic_natural_frequencies(
                        &model,
                        nodal_diameter.unwrap_or_else(|| cy.nodal_diameter(1)),
                    ),
                    None => ewr_hb::modes::natural_frequencies(&model),
                }
                .map_err(|e| format!("natural frequencies: {e}"))
            })
        })
        .map_err(InputError::new_err)
    }

    /// The cyclic symmetry of a sector model as a dict (`sectors`, `engine_order`, `left`,
    /// `right`), `None` for an ordinary model.
    #[getter]
    fn cyclic<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(c) = &self.model.cyclic else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("sectors", c.sectors)?;
        d.set_item("engine_order", c.engine_order)?;
        d.set_item("left", c.left.clone())?;
        d.set_item("right", c.right.clone())?;
        Ok(Some(d))
    }

    /// The full annulus of a cyclic sector model (as `ewr model annulus`): an ordinary model,
    /// the reference for sector results and what `simulate` takes.
    fn annulus(&self, py: Python<'_>) -> PyResult<Self> {
        let model = py
            .detach(|| self.model.annulus())
            .map_err(InputError::new_err)?;
        Ok(PyModel::built(model))
    }

    /// The same model with every contact's friction bound set to `mu_n`.
    fn with_mu_n(&self, py: Python<'_>, mu_n: f64) -> PyResult<Self> {
        let mut model = self.model.clone();
        model
            .contacts
            .set_mu_n(mu_n)
            .map_err(|e| InputError::new_err(format!("mu_n={mu_n}: {e}")))?;
        checked(py, model)
    }

    fn __repr__(&self) -> String {
        let m = &self.model;
        format!(
            "<ewr.Model {}{} DOFs, {} contact(s) ({}{}), {} forcing term(s)>",
            m.title
                .as_deref()
                .map(|t| format!("{t:?}: "))
                .unwrap_or_default(),
            m.n_dofs(),
            m.contacts.len(),
            if m.contacts.has_normal() { "3-D, " } else { "" },
            format_args!("{} tangential", m.contacts.dim),
            m.forcing.len()
        )
    }

    /// One periodic solution at ``omega``, as ``ewr solve`` (same options, same checks and
    /// messages). A solution that did not converge is returned with ``converged == False``;
    /// bad options raise ``InputError``. ``tol=None`` is 1e-10, or 1e-9 for a model with 3-D
    /// contacts. ``rho`` is a number or ``"auto"`` (``1 / (h w |G_h|)`` at each frequency).
    /// ``output``, ``timeseries`` and ``plot`` write the files of ``ewr solve -o``,
    /// ``--timeseries`` and ``--plot`` (.png or .svg). ``estimate`` solves the point again on
    /// the richer set 2H+1 for ``Solution.error_estimate`` (``ewr solve`` without
    /// ``--no-estimate``); above 1 % of the amplitude it warns. ``harmonics="default"`` is
    /// odd:59, or all:59 where the model needs the static term or even harmonics (3-D
    /// contacts, a static load, even forcing harmonics). ``harmonics="auto"`` (or
    /// ``"auto:0.01"``) chooses the smallest set of ``odd:1, odd:3, odd:7, ...`` within that
    /// error (docs/accuracy.md). ``amplitude`` is what the DOF amplitudes measure: ``"max"``
    /// (``max_t ||u(t)||``), ``"dynamic"`` (about the mean), ``"h1"`` (first harmonic) or
    /// ``"pp"`` (peak to peak), as ``--amplitude``. ``engine_order`` overrides a cyclic
    /// sector model's engine order, as ``--engine-order``. ``stability`` computes the Floquet
    /// multipliers (``Solution.stable``, ``max_multiplier``; ``ewr solve`` without
    /// ``--no-stability``, docs/stability.md); on a cyclic sector against the travelling
    /// wave's perturbations, and with ``all_phases`` every other inter-sector phase's too
    /// (``Solution.phases``, ``--all-phases``).
    #[pyo3(signature = (omega, *, harmonics="default", mu_n=None, rho=None,
        law="exact", samples=None, tol=None, max_iter=200, ramp=true, dofs=None,
        receptance="auto", linear="auto",
        preconditioner="two-level", amplitude="max", engine_order=None, output=None, timeseries=None, plot=None,
        estimate=true, stability=true, all_phases=false))]
    #[allow(clippy::too_many_arguments)]
    fn solve(
        &self,
        py: Python<'_>,
        omega: f64,
        harmonics: &str,
        mu_n: Option<f64>,
        rho: Option<Rho>,
        law: &str,
        samples: Option<usize>,
        tol: Option<f64>,
        max_iter: usize,
        ramp: bool,
        dofs: Option<Vec<Bound<'_, PyAny>>>,
        receptance: &str,
        linear: &str,
        preconditioner: &str,
        amplitude: &str,
        engine_order: Option<i64>,
        output: Option<PathBuf>,
        timeseries: Option<PathBuf>,
        plot: Option<PathBuf>,
        estimate: bool,
        stability: bool,
        all_phases: bool,
    ) -> PyResult<PySolution> {
        let opts = PyOptions {
            harmonics: harmonics.into(),
            samples,
            mu_n,
            rho,
            law: law.into(),
            receptance: receptance.into(),
            linear: linear.into(),
            preconditioner: preconditioner.into(),
            amplitude: amplitude.into(),
            engine_order,
            tol,
            max_iter,
            ramp,
            dofs,
        };
        let outputs = Outputs {
            output,
            timeseries,
            plot,
            ..Outputs::default()
        };
        crate::run::solve(
            py,
            &self.model,
            &self.source_path(),
            omega,
            (estimate, stability, all_phases),
            &opts,
            &outputs,
        )
    }

    /// The resonance peak followed as ``param`` goes from ``start`` to ``end`` (``count``
    /// values), and the value with the smallest peak, as ``ewr peaks``: ``param`` is ``mu_n``,
    /// ``forcing``, ``mass:DOF`` (index or label), or for 3-D contacts ``mu`` and
    /// ``normal-preload``. Coarse sweeps over ``omega_start..omega_end`` (``step``, adaptive if
    /// given) at both ends find the maxima; each is followed without full curves; golden
    /// section refines the optimum when ``optimum``. Returns ``{"parameter", "value",
    /// "omega", "amplitude", "evaluations", "switched"`` (arrays over the evaluated values,
    /// sorted; ``switched`` true where the highest peak is another resonance's than at the
    /// previous value),
    /// ``"optimum": {"value", "amplitude", "omega", "interior", "plateau"} or None, "solves",
    /// "error"}`` (``plateau`` is ``(from, to)`` where the peak stays within 1 % of the
    /// optimum over three grid values or more: a flat optimum; else None); a peak lost midway
    /// warns and returns the locus so far. ``output``,
    /// ``csv`` and ``plot`` write the files of ``ewr peaks -o``, ``--csv`` and ``--plot``.
    /// ``stability=True`` adds ``"stable"`` (1 stable, 0 unstable, -1 not classified) and
    /// ``"max_multiplier"`` per peak (``ewr peaks --stability``; a peak past a fold is no
    /// physical maximum); with ``all_phases=True`` on a cyclic sector against every
    /// inter-sector phase (``--all-phases``). ``tol=None`` is 1e-10, or 1e-9 for a model
    /// with 3-D contacts.
    #[pyo3(signature = (param, start, end, *, omega_start, omega_end, step, count=11,
        optimum=true, adaptive=None, harmonics="default", mu_n=None, rho=None,
        law="exact", samples=None, tol=None, max_iter=200, ramp=true, dofs=None,
        receptance="auto", linear="auto",
        preconditioner="two-level", amplitude="max", engine_order=None, output=None, csv=None, plot=None,
        stability=false, all_phases=false))]
    #[allow(clippy::too_many_arguments)]
    fn peaks<'py>(
        &self,
        py: Python<'py>,
        param: String,
        start: f64,
        end: f64,
        omega_start: f64,
        omega_end: f64,
        step: f64,
        count: usize,
        optimum: bool,
        adaptive: Option<f64>,
        harmonics: &str,
        mu_n: Option<f64>,
        rho: Option<Rho>,
        law: &str,
        samples: Option<usize>,
        tol: Option<f64>,
        max_iter: usize,
        ramp: bool,
        dofs: Option<Vec<Bound<'py, PyAny>>>,
        receptance: &str,
        linear: &str,
        preconditioner: &str,
        amplitude: &str,
        engine_order: Option<i64>,
        output: Option<PathBuf>,
        csv: Option<PathBuf>,
        plot: Option<PathBuf>,
        stability: bool,
        all_phases: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let opts = PyOptions {
            harmonics: harmonics.into(),
            samples,
            mu_n,
            rho,
            law: law.into(),
            receptance: receptance.into(),
            linear: linear.into(),
            preconditioner: preconditioner.into(),
            amplitude: amplitude.into(),
            engine_order,
            tol,
            max_iter,
            ramp,
            dofs,
        };
        let call = PeaksCall {
            param,
            start,
            end,
            count,
            optimum,
            omega_start,
            omega_end,
            step,
            adaptive,
            stability,
            all_phases,
        };
        let outputs = Outputs {
            output,
            csv,
            plot,
            ..Outputs::default()
        };
        crate::run::peaks(py, &self.model, &self.source_path(), &call, &opts, &outputs)
    }

    /// Frequency response curve(s), as ``ewr frc`` (same options). A list of ``mu_n``
    /// gives one curve per value, computed in parallel over one condensation, returned as a
    /// list. ``adaptive=1e-2`` lets the step follow the curve (smaller at peaks and folds, up
    /// to 8 ``step`` where it is straight) so that the polyline through the points is within
    /// that relative tolerance of the amplitude. ``refine`` refines every local maximum and
    /// phase resonance (``ewr frc`` without ``--no-refine``). ``progress(points_done, omega,
    /// amplitude)`` is called after every point. Ctrl-C stops the sweep and returns the points
    /// computed so far (``Frc.stopped`` says so, with a warning); unconverged points warn.
    /// ``output``, ``csv`` and ``plot`` write the files of ``ewr frc -o``, ``--csv`` and
    /// ``--plot``; ``resume=True`` continues an interrupted sweep from its ``output`` file.
    /// ``estimate=True`` estimates every point's truncation error (``Frc.amplitude_error``,
    /// one more solve per point, ``ewr frc --estimate``); refined peaks are estimated anyway.
    /// ``stability=True`` classifies every converged point and peak by its Floquet multipliers
    /// (``Frc.stable``, ``Frc.max_multiplier``, ``ewr frc --stability``); with
    /// ``all_phases=True`` on a cyclic sector against every inter-sector phase
    /// (``Frc.phase_max_multiplier``, ``--all-phases``).
    /// ``tol=None`` is 1e-10, or 1e-9 for a model with 3-D contacts.
    #[pyo3(signature = (omega_start, omega_end, step, *, continuation="sequential",
        adaptive=None, refine=true, progress=None, harmonics="default", mu_n=None,
        rho=None, law="exact", samples=None, tol=None, max_iter=200, ramp=true,
        dofs=None, receptance="auto", linear="auto",
        preconditioner="two-level", amplitude="max", engine_order=None, output=None, csv=None, plot=None, hz=false,
        resume=false, estimate=false, stability=false, all_phases=false))]
    #[allow(clippy::too_many_arguments)]
    fn frc(
        &self,
        py: Python<'_>,
        omega_start: f64,
        omega_end: f64,
        step: f64,
        continuation: &str,
        adaptive: Option<f64>,
        refine: bool,
        progress: Option<Py<PyAny>>,
        harmonics: &str,
        mu_n: Option<MuN>,
        rho: Option<Rho>,
        law: &str,
        samples: Option<usize>,
        tol: Option<f64>,
        max_iter: usize,
        ramp: bool,
        dofs: Option<Vec<Bound<'_, PyAny>>>,
        receptance: &str,
        linear: &str,
        preconditioner: &str,
        amplitude: &str,
        engine_order: Option<i64>,
        output: Option<PathBuf>,
        csv: Option<PathBuf>,
        plot: Option<PathBuf>,
        hz: bool,
        resume: bool,
        estimate: bool,
        stability: bool,
        all_phases: bool,
    ) -> PyResult<Py<PyAny>> {
        let opts = PyOptions {
            harmonics: harmonics.into(),
            samples,
            mu_n: None,
            rho,
            law: law.into(),
            receptance: receptance.into(),
            linear: linear.into(),
            preconditioner: preconditioner.into(),
            amplitude: amplitude.into(),
            engine_order,
            tol,
            max_iter,
            ramp,
            dofs,
        };
        let sweep = SweepOptions {
            method: ewr_solve::setup::parse_continuation(continuation).map_err(option_error)?,
            adaptive,
            refine_peaks: refine,
            phase_resonances: refine,
            // `frc[i]` is a whole periodic solution, with its histories.
            keep_histories: true,
            estimate_points: estimate,
            estimate_peaks: refine,
            stability,
            all_phases,
            ..SweepOptions::new(omega_start, omega_end, step)
        };
        let call = FrcCall {
            sweep,
            mu_n,
            progress,
            resume,
            hz,
        };
        let outputs = Outputs {
            output,
            csv,
            plot,
            ..Outputs::default()
        };
        crate::run::frc(py, &self.model, &self.source_path(), call, &opts, &outputs)
    }

    /// Nonlinear mode ``mode`` (counted from 1 in the structure with every contact stuck)
    /// by the extended periodic motion concept with the exact friction law, at ``points``
    /// modal amplitudes ``sqrt(Q1^H M Q1)`` from ``start`` to ``end`` (logarithmic), as
    /// ``ewr modes`` (docs/nonlinear-modes.md). Returns ``{"amplitude", "omega",
    /// "damping_ratio", "xi", "converged", "no_oscillation", "iterations",
    /// "gmres_iterations", "residual"}`` (arrays per amplitude; ``no_oscillation`` where
    /// Newton converged to no free oscillation; Newton and GMRES iterations and the final
    /// scaled residual, as in ``ewr modes --json``), ``"shape"`` (the
    /// fundamental of every DOF, complex, ``(points, n_dofs)``), ``"displacement"`` (every
    /// harmonic of every DOF, ``(points, n_dofs, n_coeffs)``, coefficients as in
    /// docs/results-format.md), ``"synthesis_peak"``
    /// (``(modal amplitude, omega, |Q1| per DOF)`` of the model's forcing synthesised from
    /// the mode, or ``None``) and ``"frc"``: with ``frc=True`` the forced response swept
    /// through that resonance (``ewr modes --frc``), ``(omega, |Q1|)`` rows at the forced DOF
    /// the mode moves most, ``"frc_dof"`` (the upward sweep's rows, then, for a mode that
    /// softens past its resonance's width, those of a sweep down from above), else ``None``.
    /// ``output``, ``csv`` and ``plot`` write the files of ``ewr modes -o``, ``--csv`` and
    /// ``--plot``. The backbone uses the exact law and a dense receptance (above 500 DOFs or
    /// with modal damping ratios the modes that cover its harmonics, extracted once)
    /// whatever the solver keywords say, and dense Newton steps but on the modal receptance
    /// or with 3-D contacts, where ``linear`` chooses as for a forced solve; the keywords
    /// apply to the forced sweep. Warns where an amplitude did not converge. Ctrl-C
    /// keeps the amplitudes computed (their files written, ``"interrupted"`` True, a warning).
    #[pyo3(signature = (start, end, *, mode=1, points=30, harmonics="default",
        mu_n=None, rho=None, law="exact", samples=None, tol=None, max_iter=200, ramp=true,
        dofs=None, receptance="auto", linear="auto", preconditioner="two-level",
        amplitude="max", engine_order=None, output=None, csv=None, plot=None, frc=false))]
    #[allow(clippy::too_many_arguments)]
    fn modes<'py>(
        &self,
        py: Python<'py>,
        start: f64,
        end: f64,
        mode: usize,
        points: usize,
        harmonics: &str,
        mu_n: Option<f64>,
        rho: Option<Rho>,
        law: &str,
        samples: Option<usize>,
        tol: Option<f64>,
        max_iter: usize,
        ramp: bool,
        dofs: Option<Vec<Bound<'py, PyAny>>>,
        receptance: &str,
        linear: &str,
        preconditioner: &str,
        amplitude: &str,
        engine_order: Option<i64>,
        output: Option<PathBuf>,
        csv: Option<PathBuf>,
        plot: Option<PathBuf>,
        frc: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        if !(start.is_finite() && start > 0.0 && end.is_finite() && end >= start) {
            return Err(InputError::new_err(format!(
                "start = {start}, end = {end}: the modal amplitudes must be positive, end at \
                 least start"
            )));
        }
        if points == 0 || points > ewr_solve::MAX_POINTS {
            return Err(InputError::new_err(format!(
                "points = {points}: between 1 and {}",
                ewr_solve::MAX_POINTS
            )));
        }
        let opts = PyOptions {
            harmonics: harmonics.into(),
            samples,
            mu_n,
            rho,
            law: law.into(),
            receptance: receptance.into(),
            linear: linear.into(),
            preconditioner: preconditioner.into(),
            amplitude: amplitude.into(),
            engine_order,
            tol,
            max_iter,
            ramp,
            dofs,
        };
        ewr_solve::nonlinear_mode::check_options(&opts.solve_options(mu_n)?)
            .map_err(option_error)?;
        let setup = opts.resolve(&self.model, mu_n)?;
        crate::run::warn_setup(py, &setup)?;
        let outputs = crate::run::Outputs {
            output,
            csv,
            plot,
            ..Default::default()
        };
        let _claims = outputs.check()?;
        let amps = ewr_solve::nonlinear_mode::modal_amplitudes(start, end, points);
        let params = setup.params();
        // Ctrl-C: the amplitudes computed are kept, written and returned, as the command does.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
        let mut notes = Vec::new();
        let result = crate::run::run_interruptible(py, &stop, || {
            ewr_solve::nonlinear_mode::backbone_noting(
                &setup.model,
                &params,
                &setup.point,
                mode,
                &amps,
                &mut |_| !stopped(),
                &mut |w| notes.push(w),
            )
        });
        // The condensation's warnings also where the backbone fails.
        for w in &notes {
            crate::convert::warn(py, w.trim_start_matches("warning: "))?;
        }
        let pts = result.map_err(|e| match e {
            ewr_solve::SolveError::Start(_) => InputError::new_err(format!("mode {mode}: {e}")),
            e => SolveError::new_err(format!("mode {mode}: {e}")),
        })?;
        let interrupted = stopped();
        let syn = ewr_solve::nonlinear_mode::synthesise(&setup.model, &pts);
        let fail = |e: String| SolveError::new_err(e);
        // The backbone's files first: a forced sweep that fails leaves them written.
        if let Some(p) = &outputs.output {
            ewr_results::modes::write_modes_h5(
                p,
                &self.source_path(),
                &setup,
                (mode, &pts, &syn),
                if interrupted {
                    "interrupted"
                } else {
                    "complete"
                },
            )
            .map_err(fail)?;
        }
        if let Some(p) = &outputs.csv {
            ewr_results::modes::write_modes_csv(p, &pts).map_err(fail)?;
        }
        let swept = if frc && !interrupted {
            let rec = setup
                .receptance()
                .map_err(|e| InputError::new_err(format!("cannot condense the model: {e}")))?;
            let top = ewr_solve::nonlinear_mode::forced_sweep_top(&pts);
            crate::run::warn_receptance(py, &rec, &setup, top)?;
            crate::run::run_interruptible(py, &stop, || {
                ewr_solve::nonlinear_mode::forced_sweep(&rec, &setup, &pts, &syn, &mut || {
                    !stopped()
                })
            })
            .map_err(|e| SolveError::new_err(format!("frc: {e}")))?
        } else {
            None
        };
        if let Some(p) = &outputs.plot {
            let title = ewr_results::figures::backbone_title(&setup.model, mode);
            let panel = ewr_results::figures::ResponsePanel::of_mode(
                &setup.model,
                &pts,
                &syn,
                swept.as_ref().map(|s| s.curve.clone()).unwrap_or_default(),
            );
            py.detach(|| ewr_results::figures::backbone(p, &title, &pts, &panel))
                .map_err(fail)?;
        }
        if stopped() {
            warn(
                py,
                &format!(
                    "interrupted: the {} amplitudes computed are returned{}",
                    pts.len(),
                    if frc {
                        " (the forced sweep stopped or was not started)"
                    } else {
                        ""
                    }
                ),
            )?;
        } else if frc && swept.is_none() {
            warn(
                py,
                "frc=True: no synthesised resonance (or no forcing at harmonic 1) to sweep \
                 through",
            )?;
        }
        let failed = pts.iter().filter(|p| !p.converged).count();
        if failed > 0 {
            warn(
                py,
                &format!(
                    "{failed} of {} amplitudes did not converge (\"converged\" is False \
                     there){}",
                    pts.len(),
                    match pts.iter().filter(|p| p.no_oscillation).count() {
                        0 => String::new(),
                        n => format!(
                            "; {n} converged to no oscillation (|damping ratio| of 1 or \
                             more, or no positive frequency): no free motion there"
                        ),
                    } + &ewr_solve::nonlinear_mode::penalty_mode_hint(&setup.model, mode)
                        .map(|h| format!(". The {h}"))
                        .unwrap_or_default()
                ),
            )?;
        }
        let d = PyDict::new(py);
        let col = |f: fn(&ewr_solve::nonlinear_mode::ModePoint) -> f64| -> Vec<f64> {
            pts.iter().map(f).collect()
        };
        d.set_item(
            "amplitude",
            numpy::PyArray1::from_vec(py, col(|p| p.amplitude)),
        )?;
        d.set_item("omega", numpy::PyArray1::from_vec(py, col(|p| p.omega)))?;
        d.set_item(
            "damping_ratio",
            numpy::PyArray1::from_vec(py, col(|p| p.damping_ratio)),
        )?;
        d.set_item("xi", numpy::PyArray1::from_vec(py, col(|p| p.xi)))?;
        d.set_item(
            "converged",
            numpy::PyArray1::from_vec(py, pts.iter().map(|p| p.converged).collect::<Vec<_>>()),
        )?;
        d.set_item(
            "no_oscillation",
            numpy::PyArray1::from_vec(py, pts.iter().map(|p| p.no_oscillation).collect::<Vec<_>>()),
        )?;
        let count = |f: fn(&ewr_solve::nonlinear_mode::ModePoint) -> usize| -> Vec<u64> {
            pts.iter().map(|p| f(p) as u64).collect()
        };
        d.set_item(
            "iterations",
            numpy::PyArray1::from_vec(py, count(|p| p.iterations)),
        )?;
        d.set_item(
            "gmres_iterations",
            numpy::PyArray1::from_vec(py, count(|p| p.krylov_iterations)),
        )?;
        d.set_item(
            "residual",
            numpy::PyArray1::from_vec(py, col(|p| p.residual)),
        )?;
        let n = setup.model.n_dofs();
        let shape: Vec<numpy::Complex64> = pts
            .iter()
            .flat_map(|p| p.shape.iter().map(|c| numpy::Complex64::new(c.re, c.im)))
            .collect();
        let shape =
            numpy::PyArrayMethods::reshape(&numpy::PyArray1::from_vec(py, shape), [pts.len(), n])?;
        d.set_item("shape", shape)?;
        // Every harmonic of every DOF (NaN rows where a point's could not be recovered).
        let (u, nco) = ewr_solve::nonlinear_mode::displacement_rows(&pts, n).unwrap_or_else(|| {
            let nco = pts.first().map_or(0, |p| p.set.n_coeffs());
            (vec![f64::NAN; pts.len() * n * nco], nco)
        });
        d.set_item(
            "displacement",
            crate::convert::array3(py, u, [pts.len(), n, nco])?,
        )?;
        d.set_item("synthesis_peak", syn.peak)?;
        match swept {
            Some(ewr_solve::nonlinear_mode::ForcedSweep { dof, curve }) => {
                let rows = curve.len();
                let flat: Vec<f64> = curve.into_iter().flat_map(|(w, q)| [w, q]).collect();
                let arr = numpy::PyArrayMethods::reshape(
                    &numpy::PyArray1::from_vec(py, flat),
                    [rows, 2],
                )?;
                d.set_item("frc", arr)?;
                d.set_item("frc_dof", dof)?;
            }
            None => {
                d.set_item("frc", py.None())?;
                d.set_item("frc_dof", py.None())?;
            }
        }
        d.set_item("interrupted", stopped())?;
        Ok(d)
    }

    /// The independent time-domain reference, as ``ewr simulate`` (same options, checks and
    /// files: ``output``, ``timeseries``, ``plot``). ``progress(period, max_periods,
    /// change)`` is called after every period; a run that does not reach the steady state
    /// within ``periods`` warns and returns its last period. With ``omega_start``,
    /// ``omega_end`` and ``step`` instead of ``omega``, a stepped sine: each frequency from
    /// the state the one before ended in (the first from rest), returned as a
    /// ``SteppedSine``, its rows in ``csv`` as they are done, its curve in ``plot``, its last
    /// period in ``output`` and ``timeseries``; ``progress(frequency, frequencies, omega)``
    /// is then called once a frequency, after its first period.
    #[pyo3(signature = (omega=None, *, omega_start=None, omega_end=None, step=None, dt=None,
        periods=1000, tol=1e-6, mu_n=None, static_factor=1.0, jenkins=None,
        eta_as_viscous=false, linear_solver="auto", dofs=None, progress=None, output=None,
        timeseries=None, plot=None, csv=None))]
    #[allow(clippy::too_many_arguments)]
    fn simulate(
        &self,
        py: Python<'_>,
        omega: Option<f64>,
        omega_start: Option<f64>,
        omega_end: Option<f64>,
        step: Option<f64>,
        dt: Option<f64>,
        periods: usize,
        tol: f64,
        mu_n: Option<f64>,
        static_factor: f64,
        jenkins: Option<f64>,
        eta_as_viscous: bool,
        linear_solver: &str,
        dofs: Option<Vec<Bound<'_, PyAny>>>,
        progress: Option<Py<PyAny>>,
        output: Option<PathBuf>,
        timeseries: Option<PathBuf>,
        plot: Option<PathBuf>,
        csv: Option<PathBuf>,
    ) -> PyResult<Py<PyAny>> {
        let stepped = match (omega, omega_start, omega_end, step) {
            (None, Some(a), Some(b), Some(s)) => Some(
                ewr_simulate::setup::stepped(a, b, s, dt)
                    .map_err(|e| InputError::new_err(e.render(false)))?,
            ),
            (Some(_), None, None, None) => None,
            _ => {
                return Err(InputError::new_err(
                    "give omega, or omega_start, omega_end and step (a stepped sine)",
                ));
            }
        };
        if stepped.is_none() && csv.is_some() {
            return Err(InputError::new_err(
                "csv: the table of a stepped sine (omega_start, omega_end, step); one \
                 frequency's period is written by timeseries",
            ));
        }
        // A stepped sine's lowest frequency: the most steps a period, which the recording
        // limit is checked at.
        let first = stepped.as_ref().map_or(omega.unwrap_or(0.0), |w| {
            w.iter().copied().fold(f64::INFINITY, f64::min)
        });
        let linear_solver = match linear_solver {
            "auto" => ewr_simulate::LinearSolver::Auto,
            "dense" => ewr_simulate::LinearSolver::Dense,
            "sparse" => ewr_simulate::LinearSolver::Sparse,
            other => {
                return Err(InputError::new_err(format!(
                    "linear_solver={other:?}: use auto, dense or sparse"
                )));
            }
        };
        let record_dofs = match &dofs {
            Some(items) => ewr_solve::setup::resolve_dofs(
                &self.model,
                &crate::options::dof_refs(items, "dofs")?,
                ewr_solve::Opt::Dofs,
            )
            .map_err(option_error)?,
            None => ewr_solve::setup::default_monitor(&self.model),
        };
        let run = ewr_simulate::setup::RunOptions {
            dt,
            periods,
            tol,
            mu_n,
            static_factor,
            jenkins,
            eta_as_viscous,
            record_dofs: Some(record_dofs),
            linear_solver,
            ..ewr_simulate::setup::RunOptions::new(first)
        };
        let (model, mut opts) = ewr_simulate::setup::prepare(self.model.clone(), &run)
            .map_err(|e| InputError::new_err(e.render(false)))?;
        // Ctrl-C: one more period is integrated and returned, marked interrupted.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        opts.stop = Some(stop.clone());
        let outputs = crate::run::Outputs {
            output,
            timeseries,
            plot,
            csv,
        };
        let _claims = outputs.check()?;
        if let Some(ws) = stepped {
            return self.stepped_sine(py, &model, &opts, &ws, &stop, progress, &outputs);
        }
        let mut callback_error: Option<PyErr> = None;
        let sim = crate::run::run_interruptible(py, &stop, || {
            ewr_simulate::simulate(&model, &opts, &mut |p| {
                if callback_error.is_some() {
                    return;
                }
                if let Some(cb) = &progress {
                    Python::attach(|py| {
                        if let Err(e) = cb.call1(py, (p.period, periods, p.error)) {
                            callback_error = Some(e);
                        }
                    });
                }
            })
        });
        if let Some(e) = callback_error {
            return Err(e);
        }
        let sim = sim.map_err(simulate_error)?;
        self.write_period(&model, &sim, &outputs, true)?;
        if sim.interrupted {
            warn(
                py,
                &format!(
                    "interrupted after {} periods, before the steady state: the last period \
                     is returned",
                    sim.periods_run
                ),
            )?;
        } else if !sim.converged {
            warn(
                py,
                &format!(
                    "no periodic steady state within {} periods (last change {:.2e} > tol \
                     {:.1e}); the last period is returned",
                    sim.periods_run, sim.steady_state_error, sim.tol
                ),
            )?;
        }
        Ok(Py::new(py, PySimulation::new(sim, &model))?.into_any())
    }
}

/// The time-domain runs' pieces that Python's `simulate` shares between one frequency and a
/// stepped sine.
impl PyModel {
    /// `output` and `timeseries` of one period, and with `plot_period` its figure.
    fn write_period(
        &self,
        model: &Model,
        sim: &ewr_simulate::Simulation,
        outputs: &Outputs,
        plot_period: bool,
    ) -> PyResult<()> {
        let fail = |e: String| SolveError::new_err(e);
        if let Some(p) = &outputs.timeseries {
            sim.timeseries()
                .save(p)
                .map_err(|e| fail(format!("cannot write {e}")))?;
        }
        if let Some(p) = &outputs.output {
            sim.write_h5(p, &self.source_path().display().to_string())
                .map_err(fail)?;
        }
        if let (Some(p), true) = (&outputs.plot, plot_period) {
            if sim.n_contacts == 0 {
                return Err(InputError::new_err(
                    "plot: the model has no contact to plot",
                ));
            }
            let fig = ewr_results::figures::PeriodFigure::of_simulation(sim, model);
            ewr_results::figures::period(p, &fig).map_err(fail)?;
        }
        Ok(())
    }

    /// `simulate` with `omega_start`, `omega_end` and `step`.
    #[allow(clippy::too_many_arguments)]
    fn stepped_sine(
        &self,
        py: Python<'_>,
        model: &Model,
        opts: &ewr_simulate::Options,
        omegas: &[f64],
        stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
        progress: Option<Py<PyAny>>,
        outputs: &Outputs,
    ) -> PyResult<Py<PyAny>> {
        let fail = |e: String| SolveError::new_err(e);
        let mut table = match &outputs.csv {
            Some(p) => Some(
                ewr_results::stepped::SteppedCsv::create(
                    p,
                    model.contacts.len(),
                    &opts.record_dofs,
                )
                .map_err(fail)?,
            ),
            None => None,
        };
        let mut last = None;
        let mut callback_error: Option<PyErr> = None;
        let mut write_error: Option<PyErr> = None;
        let mut started = usize::MAX;
        let run = crate::run::run_interruptible(py, stop, || {
            ewr_simulate::stepped_sine(
                model,
                opts,
                omegas,
                &mut |p| {
                    if p.index == started || callback_error.is_some() {
                        return;
                    }
                    started = p.index;
                    if let Some(cb) = &progress {
                        Python::attach(|py| {
                            if let Err(e) = cb.call1(py, (p.index, p.count, p.omega)) {
                                // The error is raised once the frequency under way stops.
                                callback_error = Some(e);
                                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                            }
                        });
                    }
                },
                &mut |p, sim| {
                    last = Some(sim.clone());
                    match table.as_mut().map(|t| t.row(p)) {
                        Some(Err(e)) => {
                            write_error = Some(fail(e));
                            false
                        }
                        _ => true,
                    }
                },
            )
        });
        if let Some(e) = callback_error.or(write_error) {
            return Err(e);
        }
        let points = run.points;
        if let Some(sim) = &last {
            self.write_period(model, sim, outputs, false)?;
        }
        if let Some(p) = &outputs.plot {
            ewr_results::stepped::plot(
                p,
                model,
                &self.source_path().display().to_string(),
                &points,
            )
            .map_err(fail)?;
        }
        let failure = run.failure.map(|e| {
            format!(
                "{e} (at omega = {}; the {} frequencies before it are returned)",
                omegas.get(points.len()).copied().unwrap_or(f64::NAN),
                points.len()
            )
        });
        if let Some(f) = &failure {
            warn(py, &format!("the stepped sine stopped early: {f}"))?;
        }
        if points.last().is_some_and(|p| p.interrupted) {
            warn(
                py,
                &format!(
                    "interrupted at omega = {} ({} of {} frequencies): what was done is returned",
                    points.last().map_or(0.0, |p| p.omega),
                    points.len(),
                    omegas.len()
                ),
            )?;
        }
        let failed: Vec<String> = points
            .iter()
            .filter(|p| !p.converged && !p.interrupted)
            .map(|p| p.omega.to_string())
            .collect();
        if !failed.is_empty() {
            warn(
                py,
                &format!(
                    "no periodic steady state within {} periods at {} of {} frequencies \
                     (omega = {}); their last periods are returned",
                    opts.max_periods,
                    failed.len(),
                    points.len(),
                    failed.join(", ")
                ),
            )?;
        }
        let last = match last {
            Some(sim) => Some(Py::new(py, PySimulation::new(sim, model))?),
            None => None,
        };
        let out =
            crate::results::PySteppedSine::new(points, opts.record_dofs.clone(), last, failure);
        Ok(Py::new(py, out)?.into_any())
    }
}

fn simulate_error(e: ewr_simulate::SimulateError) -> PyErr {
    match e {
        ewr_simulate::SimulateError::Numerical(_) => SolveError::new_err(e.to_string()),
        _ => InputError::new_err(e.to_string()),
    }
}

/// The built-in example models: `{name: summary}`.
#[pyfunction]
pub fn examples(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for e in Example::ALL {
        d.set_item(e.name(), e.summary())?;
    }
    Ok(d)
}
