//! Results as Python objects whose arrays are numpy arrays: a periodic solution, a frequency
//! response curve and a time-domain simulation.

use crate::SolveError;
use crate::convert::{array2, array3, to_python};
use ewr_contact::unilateral::SampleState;
use ewr_model::Model;
use ewr_solve::{Curve, FrcPoint, Peak, PointSolution, Setup};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::f64::consts::TAU;
use std::path::PathBuf;
use std::sync::Arc;

/// `cos`/`sin` coefficient names of a harmonic set, in storage order (`a0, a1, b1, ...`).
fn coefficient_names(set: &ewr_hb::HarmonicSet) -> Vec<String> {
    let mut names = vec![String::new(); set.n_coeffs()];
    for &h in set.harmonics() {
        let p = set.coeff_index(h).expect("h is in the set");
        names[p] = format!("a{h}");
        if h > 0 {
            names[p + 1] = format!("b{h}");
        }
    }
    names
}

/// Signal-major histories (`signal * ns + j`) of `nc * dim` signals as `(nc, dim, ns)`.
fn contact_array<'py>(
    py: Python<'py>,
    data: &[f64],
    nc: usize,
    dim: usize,
    ns: usize,
) -> PyResult<Bound<'py, PyAny>> {
    array3(py, data.to_vec(), [nc, dim, ns])
}

/// A truncation-error estimate as a dict.
fn estimate_dict<'py>(py: Python<'py>, e: &ewr_solve::Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("harmonics", e.set.to_string())?;
    d.set_item("method", e.method.name())?;
    d.set_item("amplitude", e.amplitude)?;
    d.set_item("relative", e.relative)?;
    d.set_item("force", e.force)?;
    d.set_item("dof_peaks", e.dof_peaks.clone())?;
    d.set_item("converged", e.converged)?;
    Ok(d)
}

/// One periodic solution (harmonic balance) and its post-processing.
#[pyclass(name = "Solution", module = "ewr", frozen)]
pub struct PySolution {
    s: PointSolution,
    nc: usize,
    dim: usize,
    labels: Option<Vec<String>>,
}

impl PySolution {
    pub fn new(s: PointSolution, model: &Model) -> Self {
        PySolution {
            s,
            nc: model.contacts.len(),
            dim: model.contacts.dim,
            labels: model.dof_labels.clone(),
        }
    }
}

#[pymethods]
impl PySolution {
    /// Fundamental circular frequency `w`.
    #[getter]
    fn omega(&self) -> f64 {
        self.s.omega
    }

    /// True when Newton met the tolerance (a point that did not converge is still returned).
    #[getter]
    fn converged(&self) -> bool {
        self.s.status.converged()
    }

    /// How Newton ended, in words.
    #[getter]
    fn status(&self) -> String {
        self.s.status.to_string()
    }

    /// Final scaled residual `||g|| / (max mu N)^2`.
    #[getter]
    fn residual(&self) -> f64 {
        self.s.residual
    }

    /// Newton iterations over all harmonic-ramp stages.
    #[getter]
    fn iterations(&self) -> usize {
        self.s.iterations
    }

    /// Harmonic set, `odd:H` or `all:H`.
    #[getter]
    fn harmonics(&self) -> String {
        self.s.set.to_string()
    }

    /// Names of the Fourier coefficient columns: `a0, a1, b1, ...` for
    /// `a_h cos(h w t) + b_h sin(h w t)`.
    #[getter]
    fn coefficient_names(&self) -> Vec<String> {
        coefficient_names(&self.s.set)
    }

    /// Samples per period of the contact histories.
    #[getter]
    fn samples(&self) -> usize {
        self.s.histories.n_samples
    }

    /// Sample times over one period, `(samples,)`.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let ns = self.s.histories.n_samples;
        let period = TAU / self.s.omega;
        PyArray1::from_vec(py, (0..ns).map(|j| period * j as f64 / ns as f64).collect())
    }

    /// Friction-force Fourier coefficients, `(n_contacts * dim, n_coeffs)`.
    #[getter]
    fn friction_coefficients<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nco = self.s.set.n_coeffs();
        array2(
            py,
            self.s.friction.clone(),
            self.s.friction.len() / nco,
            nco,
        )
    }

    /// Relative contact displacement coefficients, same layout.
    #[getter]
    fn displacement_coefficients<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nco = self.s.set.n_coeffs();
        array2(
            py,
            self.s.displacement.clone(),
            self.s.displacement.len() / nco,
            nco,
        )
    }

    /// Relative tangential displacement of each contact, `(n_contacts, dim, samples)`.
    #[getter]
    fn contact_displacement<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let h = &self.s.histories;
        contact_array(py, &h.displacement, self.nc, self.dim, h.n_samples)
    }

    /// Relative tangential velocity, `(n_contacts, dim, samples)`.
    #[getter]
    fn contact_velocity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let h = &self.s.histories;
        contact_array(py, &h.velocity, self.nc, self.dim, h.n_samples)
    }

    /// Friction force on the structure, `(n_contacts, dim, samples)`.
    #[getter]
    fn friction_force<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let h = &self.s.histories;
        contact_array(py, &h.force, self.nc, self.dim, h.n_samples)
    }

    /// Normal force of 3-D contacts, `(n_contacts, samples)`; `None` for constant bounds.
    #[getter]
    fn normal_force<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let h = &self.s.histories;
        h.normal
            .as_ref()
            .map(|n| array2(py, n.force.clone(), self.nc, h.n_samples))
            .transpose()
    }

    /// Gap of 3-D contacts, `(n_contacts, samples)`; `None` for constant bounds.
    #[getter]
    fn gap<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let h = &self.s.histories;
        h.normal
            .as_ref()
            .map(|n| array2(py, n.gap.clone(), self.nc, h.n_samples))
            .transpose()
    }

    /// State of 3-D contacts per sample, `(n_contacts, samples)`: 0 separated, 1 slip, 2
    /// stick (the codes of the HDF5 results and `ewr simulate`); `None` for constant bounds.
    #[getter]
    fn contact_state<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let h = &self.s.histories;
        h.normal
            .as_ref()
            .map(|n| {
                let codes = n
                    .state
                    .iter()
                    .map(|s| match s {
                        SampleState::Separated => 0.0,
                        SampleState::Slip => 1.0,
                        SampleState::Stick => 2.0,
                    })
                    .collect();
                array2(py, codes, self.nc, h.n_samples)
            })
            .transpose()
    }

    /// Whether each contact sticks at each sample, `(n_contacts, samples)` (bool).
    #[getter]
    fn stick<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let flags: Vec<f64> = self
            .s
            .stick_flags()
            .into_iter()
            .map(|b| f64::from(u8::from(b)))
            .collect();
        array2(py, flags, self.nc, self.s.histories.n_samples)?.call_method1("astype", ("bool",))
    }

    /// Per contact: stick intervals, dissipated energy, amplitudes, Coulomb check (dicts with
    /// the keys of `ewr solve --json`).
    #[getter]
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.s.contacts)
    }

    /// Fraction of the period each contact sticks.
    #[getter]
    fn stick_fraction(&self) -> Vec<f64> {
        self.s.stick_fractions()
    }

    /// Energy dissipated by friction per cycle, per contact.
    #[getter]
    fn dissipated_energy(&self) -> Vec<f64> {
        self.s
            .contacts
            .iter()
            .map(|c| c.dissipated_energy)
            .collect()
    }

    /// The monitored DOFs (indices).
    #[getter]
    fn dofs(&self) -> Vec<usize> {
        self.s.dofs.dofs.clone()
    }

    /// Labels of the monitored DOFs (`None` when the model has no labels).
    #[getter]
    fn dof_labels(&self) -> Option<Vec<String>> {
        let l = self.labels.as_ref()?;
        Some(self.s.dofs.dofs.iter().map(|&d| l[d].clone()).collect())
    }

    /// Displacement coefficients of the monitored DOFs, `(n_monitored, n_coeffs)`.
    #[getter]
    fn dof_coefficients<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nco = self.s.set.n_coeffs();
        array2(py, self.s.dofs.coeffs.clone(), self.s.dofs.dofs.len(), nco)
    }

    /// Peak `max_t |u_i(t)|` of each monitored DOF.
    #[getter]
    fn dof_peaks(&self) -> Vec<f64> {
        self.s.dofs.peak.clone()
    }

    /// `max_t ||u(t)||` over the monitored DOFs, the amplitude `frc` follows.
    #[getter]
    fn amplitude(&self) -> f64 {
        self.s.dofs.norm_peak
    }

    /// The truncation error, where it was estimated: the same point solved on the richer set
    /// `harmonics` (2H+1, with the tail beyond it from the set below; for `auto` on sets from
    /// h = 31, the conservative check from the set below, docs/accuracy.md), `{"harmonics",
    /// "method" ("richer", "richer-with-tail", "from-below"), "amplitude" (|A' - A|),
    /// "relative", "force", "dof_peaks", "converged"}`; `None` otherwise.
    #[getter]
    fn error_estimate<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.s
            .estimate
            .as_ref()
            .map(|e| estimate_dict(py, e))
            .transpose()
    }

    /// Whether no Floquet multiplier is outside the unit circle (Hill's method,
    /// docs/stability.md); `None` where not classified.
    #[getter]
    fn stable(&self) -> Option<bool> {
        self.s.stability.as_ref().map(|s| s.is_stable())
    }

    /// The largest Floquet multiplier modulus; `None` where not classified.
    #[getter]
    fn max_multiplier(&self) -> Option<f64> {
        self.s.stability.as_ref().map(|s| s.max_multiplier)
    }

    /// With ``solve(all_phases=True)`` on a cyclic sector: per inter-sector phase ``2 pi p /
    /// N`` of the perturbation (``p = 0``, the travelling wave's, to ``N/2``), ``{"p",
    /// "stable", "max_multiplier", "reason"}`` (``None`` values where not classified, with
    /// the reason); ``stable`` and ``max_multiplier`` then cover every family. ``None``
    /// otherwise (docs/stability.md, section 2).
    #[getter]
    fn phases<'py>(&self, py: Python<'py>) -> PyResult<Option<Vec<Bound<'py, PyDict>>>> {
        let Some(st) = self.s.stability.as_ref().filter(|st| !st.phases.is_empty()) else {
            return Ok(None);
        };
        st.phases
            .iter()
            .map(|f| {
                let d = PyDict::new(py);
                d.set_item("p", f.p)?;
                d.set_item("stable", f.unstable.map(|n| n == 0))?;
                d.set_item("max_multiplier", f.max_multiplier)?;
                d.set_item("reason", f.reason.clone())?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    }

    /// A cyclic sector's: whether it was classified against the perturbations that keep its
    /// travelling wave only (``False`` with ``all_phases=True``); ``None`` on ordinary
    /// models or where not classified.
    #[getter]
    fn travelling_wave_only(&self) -> Option<bool> {
        self.s
            .stability
            .as_ref()
            .filter(|st| st.travelling_wave_only || !st.phases.is_empty())
            .map(|st| st.travelling_wave_only)
    }

    /// The Floquet exponents kept (one per family, rad per time unit), by decreasing real
    /// part; `None` where not classified.
    #[getter]
    fn floquet_exponents<'py>(
        &self,
        py: Python<'py>,
    ) -> Option<Bound<'py, PyArray1<numpy::Complex64>>> {
        self.s.stability.as_ref().map(|s| {
            let v = s
                .exponents
                .iter()
                .map(|l| numpy::Complex64::new(l.re, l.im))
                .collect();
            PyArray1::from_vec(py, v)
        })
    }

    /// Time histories of the monitored DOFs over one period: `(time, u)` with `u` of shape
    /// `(n_monitored, samples)`.
    #[pyo3(signature = (samples=None))]
    fn dof_history<'py>(
        &self,
        py: Python<'py>,
        samples: Option<usize>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyAny>)> {
        let ns = samples.unwrap_or(self.s.histories.n_samples);
        if ns <= 2 * self.s.set.h_max() {
            return Err(crate::InputError::new_err(format!(
                "samples={ns}: must exceed 2 x the highest harmonic ({})",
                2 * self.s.set.h_max()
            )));
        }
        let nd = self.s.dofs.dofs.len();
        let out = self
            .s
            .dof_histories(ns)
            .map_err(|e| SolveError::new_err(e.to_string()))?;
        let period = TAU / self.s.omega;
        let t = PyArray1::from_vec(py, (0..ns).map(|j| period * j as f64 / ns as f64).collect());
        Ok((t, array2(py, out, nd, ns)?))
    }

    fn __repr__(&self) -> String {
        format!(
            "<ewr.Solution w = {} {} {}, amplitude {:.6e}, {} iterations>",
            self.s.omega,
            self.s.set,
            if self.s.status.converged() {
                "converged"
            } else {
                "NOT converged"
            },
            self.s.dofs.norm_peak,
            self.s.iterations
        )
    }
}

/// A frequency response curve: one periodic solution per point, and the refined peaks.
#[pyclass(name = "Frc", module = "ewr", frozen)]
pub struct PyFrc {
    points: Vec<FrcPoint>,
    peaks: Vec<Peak>,
    phase: Vec<ewr_solve::PhaseResonance>,
    phase_dof: Option<usize>,
    stopped: Option<String>,
    mu_n: Option<f64>,
    model_mu_n: Vec<f64>,
    nc: usize,
    dim: usize,
    labels: Option<Vec<String>>,
    /// The run's setup and model file, to write the same result files as `ewr frc`.
    setup: Arc<Setup>,
    source: PathBuf,
    /// How the curve ended, for the HDF5 file (`ewr frc`'s wording).
    status: Option<ewr_solve::StopReason>,
}

impl PyFrc {
    /// The curve of a sweep; `stopped` is why it stopped, in Python's words.
    pub fn new(curve: Curve, stopped: Option<String>, setup: Arc<Setup>, source: PathBuf) -> Self {
        let model = &setup.model;
        PyFrc {
            model_mu_n: model.contacts.mu_n.clone(),
            nc: model.contacts.len(),
            dim: model.contacts.dim,
            labels: model.dof_labels.clone(),
            points: curve.points,
            peaks: curve.peaks,
            phase: curve.phase,
            phase_dof: curve.phase_dof,
            stopped,
            mu_n: curve.mu_n,
            status: curve.stopped,
            setup,
            source,
        }
    }

    /// The curve as the run layer holds it (for the result files).
    fn curve(&self) -> Curve {
        Curve {
            mu_n: self.mu_n,
            points: self.points.clone(),
            stopped: self.status.clone(),
            peaks: self.peaks.clone(),
            phase: self.phase.clone(),
            phase_dof: self.phase_dof,
            // Not known again once the curve is a result.
            beside: 0,
        }
    }

    fn solutions(&self) -> Vec<&PointSolution> {
        self.points.iter().map(|p| &p.solution).collect()
    }

    fn column(&self, f: impl Fn(&PointSolution) -> f64) -> Vec<f64> {
        self.points.iter().map(|p| f(&p.solution)).collect()
    }

    fn per_contact<'py>(
        &self,
        py: Python<'py>,
        f: impl Fn(&PointSolution) -> Vec<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data: Vec<f64> = self.points.iter().flat_map(|p| f(&p.solution)).collect();
        array2(py, data, self.points.len(), self.nc)
    }

    fn monitored(&self) -> Vec<usize> {
        self.points
            .first()
            .map(|p| p.solution.dofs.dofs.clone())
            .unwrap_or_default()
    }
}

#[pymethods]
impl PyFrc {
    /// Number of points.
    fn __len__(&self) -> usize {
        self.points.len()
    }

    /// The periodic solution of point `i` (negative indices count from the end).
    fn __getitem__(&self, i: isize) -> PyResult<PySolution> {
        let n = self.points.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if !(0..n).contains(&j) {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "point {i} of a curve of {n}"
            )));
        }
        Ok(PySolution {
            s: self.points[j as usize].solution.clone(),
            nc: self.nc,
            dim: self.dim,
            labels: self.labels.clone(),
        })
    }

    /// Why the sweep stopped before `omega_end` (an error, the point cap, an interruption);
    /// `None` when it completed.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.stopped.clone()
    }

    /// Frequencies of the points.
    #[getter]
    fn omega<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.column(|s| s.omega))
    }

    /// `max_t ||u(t)||` over the monitored DOFs per point.
    #[getter]
    fn amplitude<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.column(|s| s.dofs.norm_peak))
    }

    /// The truncation error of `amplitude` per point (`frc(estimate=True)`: the point on the
    /// richer set 2H+1 with the tail beyond it; `auto`'s checked points, from below on sets from
    /// h = 31), NaN where not estimated.
    #[getter]
    fn amplitude_error<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(
            py,
            self.column(|s| s.estimate.as_ref().map_or(f64::NAN, |e| e.amplitude)),
        )
    }

    /// How each point's `amplitude_error` was obtained: ``"richer-with-tail"`` (the point on
    /// 2H+1 with the tail beyond it, from the set below), ``"richer"`` (the change on 2H+1, and
    /// on 4H+3 for a first set, which has none below) or ``"from-below"`` (`auto` from h = 31);
    /// None where not estimated.
    #[getter]
    fn amplitude_error_method(&self) -> Vec<Option<&'static str>> {
        self.points
            .iter()
            .map(|p| p.solution.estimate.as_ref().map(|e| e.method.name()))
            .collect()
    }

    /// Largest Floquet multiplier modulus per point (`frc(stability=True)`), NaN where not
    /// classified; a point is stable where it is at most 1.
    #[getter]
    fn max_multiplier<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(
            py,
            self.column(|s| {
                s.stability
                    .as_ref()
                    .map_or(f64::NAN, |st| st.max_multiplier)
            }),
        )
    }

    /// A cyclic sector's, per point: 1 classified against the perturbations that keep the
    /// travelling wave only, 0 against every inter-sector phase (``frc(all_phases=True)``),
    /// -1 not classified; ``None`` on ordinary models.
    #[getter]
    fn travelling_wave_only<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<i64>>> {
        ewr_solve::travelling_wave_flags(&self.solutions()).map(|v| PyArray1::from_vec(py, v))
    }

    /// With ``frc(all_phases=True)`` on a cyclic sector: per point and inter-sector phase
    /// family ``p = 0 .. N/2``, the largest Floquet multiplier modulus (NaN where not
    /// classified); ``None`` otherwise. ``max_multiplier`` is each row's largest.
    #[getter]
    fn phase_max_multiplier<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        ewr_solve::phase_multipliers(&self.solutions())
            .map(|(m, families)| array2(py, m, self.points.len(), families))
            .transpose()
    }

    /// Stability per point: 1 stable, 0 unstable, -1 not classified.
    #[getter]
    fn stable<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v = self
            .points
            .iter()
            .map(|p| {
                p.solution
                    .stability
                    .as_ref()
                    .map_or(-1, |st| i64::from(st.is_stable()))
            })
            .collect();
        PyArray1::from_vec(py, v)
    }

    /// Whether each point converged.
    #[getter]
    fn converged<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_vec(
            py,
            self.points
                .iter()
                .map(|p| p.solution.status.converged())
                .collect(),
        )
    }

    /// Newton iterations per point.
    #[getter]
    fn iterations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_vec(
            py,
            self.points
                .iter()
                .map(|p| p.solution.iterations as u64)
                .collect(),
        )
    }

    /// Peak of each monitored DOF per point, `(n_points, n_monitored)`.
    #[getter]
    fn dof_peaks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nd = self.monitored().len();
        let data: Vec<f64> = self
            .points
            .iter()
            .flat_map(|p| p.solution.dofs.peak.clone())
            .collect();
        array2(py, data, self.points.len(), nd)
    }

    /// The monitored DOFs.
    #[getter]
    fn dofs(&self) -> Vec<usize> {
        self.monitored()
    }

    /// Largest relative displacement `max_t |w_c(t)|` per point and contact.
    #[getter]
    fn contact_amplitude<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_contact(py, |s| {
            s.contacts
                .iter()
                .map(|c| c.displacement_amplitude)
                .collect()
        })
    }

    /// Fraction of the period each contact sticks, per point, `(n_points, n_contacts)`.
    #[getter]
    fn stick_fraction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_contact(py, |s| s.stick_fractions())
    }

    /// Energy dissipated per cycle by each contact, per point, `(n_points, n_contacts)`.
    #[getter]
    fn dissipated_energy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_contact(py, |s| {
            s.contacts.iter().map(|c| c.dissipated_energy).collect()
        })
    }

    /// Each local maximum refined to the true maximum in frequency: dicts with `omega`,
    /// `amplitude`, `evaluations`, `stick_fraction`.
    #[getter]
    fn peaks<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.peaks
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("omega", p.omega)?;
                d.set_item("amplitude", p.amplitude)?;
                d.set_item("evaluations", p.evaluations)?;
                d.set_item("stick_fraction", p.solution.stick_fractions())?;
                d.set_item(
                    "amplitude_error",
                    p.solution.estimate.as_ref().map(|e| e.amplitude),
                )?;
                Ok(d)
            })
            .collect()
    }

    /// The curve as columns (`pandas.DataFrame(frc.table())`), named as the columns of
    /// `ewr frc --csv` (`mu_n, omega, converged, iterations, residual, amp_norm, amp_w<c>,
    /// peak_u<i>`), plus `stick<c>` and `energy<c>` per contact.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let n = self.points.len();
        let mu = self
            .mu_n
            .or_else(|| self.model_mu_n.first().copied())
            .unwrap_or(f64::NAN);
        d.set_item("mu_n", PyArray1::from_vec(py, vec![mu; n]))?;
        d.set_item("omega", self.omega(py))?;
        d.set_item("converged", self.converged(py))?;
        d.set_item("iterations", self.iterations(py))?;
        d.set_item(
            "residual",
            PyArray1::from_vec(py, self.column(|s| s.residual)),
        )?;
        let (total, per_dof) = ewr_results::frc::amplitude_columns(self.setup.point.amplitude);
        d.set_item(total, self.amplitude(py))?;
        for c in 0..self.nc {
            d.set_item(
                format!("amp_w{c}"),
                PyArray1::from_vec(py, self.column(|s| s.contacts[c].displacement_amplitude)),
            )?;
        }
        for (i, dof) in self.monitored().into_iter().enumerate() {
            d.set_item(
                format!("{per_dof}_u{dof}"),
                PyArray1::from_vec(py, self.column(|s| s.dofs.peak[i])),
            )?;
        }
        for c in 0..self.nc {
            d.set_item(
                format!("stick{c}"),
                PyArray1::from_vec(py, self.column(|s| s.stick_fractions()[c])),
            )?;
            d.set_item(
                format!("energy{c}"),
                PyArray1::from_vec(py, self.column(|s| s.contacts[c].dissipated_energy)),
            )?;
        }
        Ok(d)
    }

    /// The friction bound of this curve when it overrides the model's (`mu_n=`), else `None`.
    #[getter]
    fn mu_n(&self) -> Option<f64> {
        self.mu_n
    }

    /// Phase resonances of the forced DOF (its first harmonic in quadrature with its force):
    /// dicts with `dof`, `omega`, `amplitude`, `evaluations`.
    #[getter]
    fn phase_resonances<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.phase
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("dof", self.phase_dof)?;
                d.set_item("omega", p.omega)?;
                d.set_item("amplitude", p.amplitude)?;
                d.set_item("evaluations", p.evaluations)?;
                Ok(d)
            })
            .collect()
    }

    /// Writes the curve as the HDF5 result file of `ewr frc -o` (docs/results-format.md).
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let curve = self.curve();
        py.detach(|| ewr_results::write_frc(&path, &self.source, &self.setup, &[curve]))
            .map_err(SolveError::new_err)
    }

    /// Writes the curve as the table of `ewr frc --csv`.
    fn write_csv(&self, path: PathBuf) -> PyResult<()> {
        let estimated = self.points.iter().any(|p| p.solution.estimate.is_some());
        let classified = self.points.iter().any(|p| p.solution.stability.is_some());
        let mut csv = ewr_results::FrcCsv::create(
            &path,
            self.nc,
            &self.setup.point.monitor,
            (estimated, self.setup.point.auto.is_some(), classified),
            self.setup.point.amplitude,
        )
        .map_err(SolveError::new_err)?;
        for p in &self.points {
            csv.row(0, self.mu_n.unwrap_or(f64::NAN), p)
                .map_err(SolveError::new_err)?;
        }
        Ok(())
    }

    /// Draws the curve as `ewr frc --plot` (.png or .svg), against `f = w / 2 pi` with `hz`.
    #[pyo3(signature = (path, *, hz=false))]
    fn plot(&self, py: Python<'_>, path: PathBuf, hz: bool) -> PyResult<()> {
        let axis = ewr_results::figures::FrequencyAxis {
            hz,
            units: self.setup.model.units.clone(),
            amplitude: self.setup.point.amplitude,
            model_title: self.setup.model.title.clone(),
            three_d: self.setup.model.contacts.has_normal(),
        };
        let curve = self.curve();
        py.detach(|| ewr_results::figures::frc(&path, &[curve], axis))
            .map_err(SolveError::new_err)
    }

    fn __repr__(&self) -> String {
        let failed = self
            .points
            .iter()
            .filter(|p| !p.solution.status.converged())
            .count();
        format!(
            "<ewr.Frc {} points ({} not converged), {} peak(s){}>",
            self.points.len(),
            failed,
            self.peaks.len(),
            self.stopped
                .as_ref()
                .map(|s| format!(", stopped: {s}"))
                .unwrap_or_default()
        )
    }
}

/// A time-domain simulation to the periodic steady state (the independent reference).
#[pyclass(name = "Simulation", module = "ewr", frozen)]
pub struct PySimulation {
    sim: ewr_simulate::Simulation,
}

impl PySimulation {
    pub fn new(sim: ewr_simulate::Simulation, _model: &Model) -> Self {
        PySimulation { sim }
    }

    /// Sample-major contact data (`j * nc * dim + c * dim + k`) as `(nc, dim, ns)`.
    fn contact<'py>(&self, py: Python<'py>, a: &[f64]) -> PyResult<Bound<'py, PyAny>> {
        let (ns, nc, dim) = (self.sim.t.len(), self.sim.n_contacts, self.sim.dim);
        let mut out = vec![0.0; nc * dim * ns];
        for j in 0..ns {
            for c in 0..nc {
                for k in 0..dim {
                    out[(c * dim + k) * ns + j] = self.sim.at(a, j, c, k);
                }
            }
        }
        array3(py, out, [nc, dim, ns])
    }

    /// Sample-major per-contact data (`j * nc + c`) as `(nc, ns)`.
    fn per_contact<'py>(&self, py: Python<'py>, a: &[f64]) -> PyResult<Bound<'py, PyAny>> {
        let (ns, nc) = (self.sim.t.len(), self.sim.n_contacts);
        let mut out = vec![0.0; nc * ns];
        for j in 0..ns {
            for c in 0..nc {
                out[c * ns + j] = a[j * nc + c];
            }
        }
        array2(py, out, nc, ns)
    }
}

#[pymethods]
impl PySimulation {
    /// Forcing circular frequency.
    #[getter]
    fn omega(&self) -> f64 {
        self.sim.omega
    }

    /// True when the periodic steady state was reached within `tol`.
    #[getter]
    fn converged(&self) -> bool {
        self.sim.converged
    }

    /// True when Ctrl-C stopped the run before the steady state (the last period is kept).
    #[getter]
    fn interrupted(&self) -> bool {
        self.sim.interrupted
    }

    /// Periods integrated.
    #[getter]
    fn periods_run(&self) -> usize {
        self.sim.periods_run
    }

    /// Sample times over the last period.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.sim.t.clone())
    }

    /// Relative tangential displacement, `(n_contacts, dim, samples)`.
    #[getter]
    fn contact_displacement<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.contact(py, &self.sim.w)
    }

    /// Relative tangential velocity, `(n_contacts, dim, samples)`.
    #[getter]
    fn contact_velocity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.contact(py, &self.sim.v)
    }

    /// Friction force on the structure, `(n_contacts, dim, samples)`.
    #[getter]
    fn friction_force<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.contact(py, &self.sim.r)
    }

    /// Stick flag per contact and sample, `(n_contacts, samples)`.
    #[getter]
    fn stick<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s: Vec<f64> = self
            .sim
            .stick
            .iter()
            .map(|&b| f64::from(u8::from(b)))
            .collect();
        let a = self.per_contact(py, &s)?;
        a.call_method1("astype", ("bool",))
    }

    /// Normal force of 3-D contacts, `(n_contacts, samples)`; `None` for constant bounds.
    #[getter]
    fn normal_force<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.sim
            .normal
            .as_ref()
            .map(|n| self.per_contact(py, &n.lambda))
            .transpose()
    }

    /// The recorded DOFs.
    #[getter]
    fn dofs(&self) -> Vec<usize> {
        self.sim.dofs.clone()
    }

    /// Displacements of the recorded DOFs, `(n_recorded, samples)`.
    #[getter]
    fn u<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (ns, nd) = (self.sim.t.len(), self.sim.dofs.len());
        let mut out = vec![0.0; nd * ns];
        for j in 0..ns {
            for i in 0..nd {
                out[i * ns + j] = self.sim.u[j * nd + i];
            }
        }
        array2(py, out, nd, ns)
    }

    /// The summary of `ewr simulate --json` (energy balance, per-contact stick intervals,
    /// dissipated energy, Coulomb check) as a dict.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.sim.summary())
    }

    fn __repr__(&self) -> String {
        format!(
            "<ewr.Simulation w = {}, {} periods, {}>",
            self.sim.omega,
            self.sim.periods_run,
            if self.sim.converged {
                "steady state"
            } else {
                "NOT at steady state"
            }
        )
    }
}

/// A stepped sine (`ewr simulate --omega-start ...`): one steady state per frequency, each
/// from the state the one before ended in.
#[pyclass(name = "SteppedSine", module = "ewr", frozen)]
pub struct PySteppedSine {
    points: Vec<ewr_simulate::SteppedPoint>,
    dofs: Vec<usize>,
    last: Option<Py<PySimulation>>,
    failure: Option<String>,
}

impl PySteppedSine {
    pub fn new(
        points: Vec<ewr_simulate::SteppedPoint>,
        dofs: Vec<usize>,
        last: Option<Py<PySimulation>>,
        failure: Option<String>,
    ) -> Self {
        PySteppedSine {
            points,
            dofs,
            last,
            failure,
        }
    }

    fn column(&self, f: impl Fn(&ewr_simulate::SteppedPoint) -> f64) -> Vec<f64> {
        self.points.iter().map(f).collect()
    }

    /// A per-point vector field as `(points, len)`.
    fn per_point<'py>(
        &self,
        py: Python<'py>,
        field: impl Fn(&ewr_simulate::SteppedPoint) -> &Vec<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cols = self.points.first().map_or(0, |p| field(p).len());
        let data: Vec<f64> = self.points.iter().flat_map(|p| field(p).clone()).collect();
        array2(py, data, self.points.len(), cols)
    }
}

#[pymethods]
impl PySteppedSine {
    /// Forcing frequencies, in the order integrated.
    #[getter]
    fn omega<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.points.iter().map(|p| p.omega).collect())
    }

    /// Per frequency: the steady state reached within `tol`.
    #[getter]
    fn converged(&self) -> Vec<bool> {
        self.points.iter().map(|p| p.converged).collect()
    }

    /// True when Ctrl-C stopped the sweep (its last frequency before the steady state).
    #[getter]
    fn interrupted(&self) -> bool {
        self.points.last().is_some_and(|p| p.interrupted)
    }

    /// Per frequency: periods integrated.
    #[getter]
    fn periods_run(&self) -> Vec<usize> {
        self.points.iter().map(|p| p.periods_run).collect()
    }

    /// Per frequency: `max_t ||u(t)||` over the recorded DOFs (`Frc`'s `amplitude`).
    #[getter]
    fn amplitude<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.points.iter().map(|p| p.amplitude).collect())
    }

    /// The recorded DOFs.
    #[getter]
    fn dofs(&self) -> Vec<usize> {
        self.dofs.clone()
    }

    /// `max_t |u_i(t)|`, `(frequencies, dofs)`.
    #[getter]
    fn dof_peak<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_point(py, |p| &p.dof_max)
    }

    /// Mean of `u_i` over the period, `(frequencies, dofs)`.
    #[getter]
    fn dof_mean<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_point(py, |p| &p.dof_mean)
    }

    /// First-harmonic amplitude of `u_i`, `(frequencies, dofs)`.
    #[getter]
    fn dof_h1<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_point(py, |p| &p.dof_h1)
    }

    /// Fraction of the period each contact sticks, `(frequencies, contacts)`.
    #[getter]
    fn stick_fraction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_point(py, |p| &p.stick_fraction)
    }

    /// Energy each contact dissipates per period, `(frequencies, contacts)`.
    #[getter]
    fn dissipated_energy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_point(py, |p| &p.dissipated_energy)
    }

    /// Per frequency: the change of the state over its last period (relative).
    #[getter]
    fn steady_state_error<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.column(|p| p.steady_state_error))
    }

    /// Largest `|w|` of each contact's relative tangential displacement, `(frequencies,
    /// contacts)`.
    #[getter]
    fn contact_amplitude<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.per_point(py, |p| &p.displacement_amplitude)
    }

    /// The numerical failure that ended the sweep early (the frequencies before it are
    /// here), else `None`.
    #[getter]
    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    /// The columns of ``ewr simulate --csv`` as ``{name: array}`` (``pandas.DataFrame(s.table())``).
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("omega", self.omega(py))?;
        d.set_item("converged", self.converged())?;
        d.set_item("periods", self.periods_run())?;
        d.set_item("steady_state_error", self.steady_state_error(py))?;
        d.set_item("amp_norm", self.amplitude(py))?;
        let nc = self.points.first().map_or(0, |p| p.stick_fraction.len());
        let per_contact = |name: &str, f: fn(&ewr_simulate::SteppedPoint) -> &Vec<f64>| {
            (0..nc).try_for_each(|c| {
                d.set_item(
                    format!("{name}{c}"),
                    PyArray1::from_vec(py, self.column(|p| f(p)[c])),
                )
            })
        };
        per_contact("amp_w", |p| &p.displacement_amplitude)?;
        let per_dof = |name: &str, f: fn(&ewr_simulate::SteppedPoint) -> &Vec<f64>| {
            self.dofs.iter().enumerate().try_for_each(|(i, dof)| {
                d.set_item(
                    format!("{name}_u{dof}"),
                    PyArray1::from_vec(py, self.column(|p| f(p)[i])),
                )
            })
        };
        per_dof("peak", |p| &p.dof_max)?;
        per_dof("mean", |p| &p.dof_mean)?;
        per_dof("h1", |p| &p.dof_h1)?;
        per_contact("stick", |p| &p.stick_fraction)?;
        per_contact("energy", |p| &p.dissipated_energy)?;
        Ok(d)
    }

    /// The last frequency's period in full.
    #[getter]
    fn last(&self, py: Python<'_>) -> Option<Py<PySimulation>> {
        self.last.as_ref().map(|s| s.clone_ref(py))
    }

    fn __len__(&self) -> usize {
        self.points.len()
    }
}
