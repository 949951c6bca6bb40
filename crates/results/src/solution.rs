//! One periodic solution: its HDF5 result file and its time-series CSV.

use crate::common_attrs;
use ewr_contact::ContactParams;
use ewr_model::h5::{atomically, create_h5, h5, put_1d, put_2d, put_f64, put_i64, put_str};
use ewr_simulate::timeseries::TimeSeries;
use ewr_solve::{PointSolution, Setup};
use std::path::Path;

/// Writes one period of contact histories as the time-series CSV that `ewr simulate` also
/// writes (columns in `docs/results-format.md`), so that `ewr compare` can read both.
pub fn write_timeseries(
    path: &Path,
    s: &PointSolution,
    params: &ContactParams,
) -> Result<(), String> {
    crate::ensure_parent(path)?;
    let h = &s.histories;
    let nt = h.n_samples;
    let period = std::f64::consts::TAU / s.omega;
    let t: Vec<f64> = (0..nt).map(|j| period * j as f64 / nt as f64).collect();
    let mut ts = TimeSeries::from_contact_rows(
        &t,
        params.dim,
        params.len(),
        &h.displacement,
        &h.velocity,
        &h.force,
    );
    match &h.normal {
        Some(nh) => {
            for c in 0..params.len() {
                let [n, g, st] = ewr_simulate::timeseries::normal_column_names(c);
                let rows = c * nt..(c + 1) * nt;
                let state = nh.state[rows.clone()]
                    .iter()
                    .map(|s| state_code(*s) as f64)
                    .collect();
                for (name, data) in [
                    (n, nh.force[rows.clone()].to_vec()),
                    (g, nh.gap[rows].to_vec()),
                    (st, state),
                ] {
                    ts.push(name, data).map_err(|e| e.to_string())?;
                }
            }
        }
        None => {
            let stick = s.stick_flags();
            for c in 0..params.len() {
                let state = stick[c * nt..(c + 1) * nt]
                    .iter()
                    .map(|&st| if st { 2.0 } else { 1.0 })
                    .collect();
                ts.push(ewr_simulate::timeseries::state_column_name(c), state)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    let u = s.dof_histories(nt).map_err(|e| e.to_string())?;
    for (i, &d) in s.dofs.dofs.iter().enumerate() {
        ts.push(format!("u{d}"), u[i * nt..(i + 1) * nt].to_vec())
            .map_err(|e| e.to_string())?;
    }
    ts.save(path).map_err(|e| e.to_string())
}

/// Writes one periodic solution (layout in docs/results-format.md).
pub fn write_solution(
    path: &Path,
    model: &Path,
    setup: &Setup,
    s: &PointSolution,
) -> Result<(), String> {
    atomically(path, |tmp| {
        let file = create_h5(tmp)?;
        {
            let f = &file;
            common_attrs(f, "solve", model, setup)?;
            put_f64(f, "omega", s.omega)?;
            put_i64(f, "converged", i64::from(s.status.converged()))?;
            put_str(f, "status", &s.status.to_string())?;
            put_f64(f, "residual", s.residual)?;
            put_i64(f, "iterations", s.iterations as i64)?;
            put_i64(f, "gmres_iterations", s.krylov_iterations as i64)?;
            let nco = s.set.n_coeffs();
            let m = s.friction.len() / nco.max(1);
            put_2d(f, "friction", m, nco, &s.friction)?;
            put_2d(f, "contact_displacement", m, nco, &s.displacement)?;
            put_2d(
                f,
                "dof_displacement",
                s.dofs.dofs.len(),
                nco,
                &s.dofs.coeffs,
            )?;
            put_1d(f, "dof_peak", &s.dofs.peak)?;
            if let Some(e) = &s.estimate {
                // The truncation error: the same point on a richer set (docs/accuracy.md).
                put_str(f, "estimate_harmonics", &e.set.to_string())?;
                put_str(f, "estimate_method", e.method.name())?;
                put_f64(f, "estimate_amplitude", e.amplitude)?;
                put_f64(f, "estimate_relative", e.relative)?;
                put_f64(f, "estimate_force", e.force)?;
                put_i64(f, "estimate_converged", i64::from(e.converged))?;
                put_1d(f, "dof_peak_error", &e.dof_peaks)?;
            }
            if let Some(st) = &s.stability {
                // Floquet multipliers by Hill's method (docs/stability.md).
                put_i64(f, "stable", i64::from(st.is_stable()))?;
                put_f64(f, "max_multiplier", st.max_multiplier)?;
                // None where no exponent is resolved (contacts hold every DOF).
                if st.exponent.re.is_finite() {
                    put_f64(f, "leading_exponent_re", st.exponent.re)?;
                    put_f64(f, "leading_exponent_im", st.exponent.im)?;
                }
                put_i64(f, "unstable_multipliers", st.unstable as i64)?;
                // A cyclic sector's: which perturbations were checked, and with
                // --all-phases each inter-sector phase's family.
                if st.travelling_wave_only || !st.phases.is_empty() {
                    put_i64(
                        f,
                        "travelling_wave_only",
                        i64::from(st.travelling_wave_only),
                    )?;
                }
                if !st.phases.is_empty() {
                    let m: Vec<f64> = st
                        .phases
                        .iter()
                        .map(|p| p.max_multiplier.unwrap_or(f64::NAN))
                        .collect();
                    put_1d(f, "phase_max_multiplier", &m)?;
                }
            }
            let h = &s.histories;
            let g = f.create_group("time").map_err(h5)?;
            let nt = h.n_samples;
            let period = std::f64::consts::TAU / s.omega;
            let t: Vec<f64> = (0..nt).map(|j| period * j as f64 / nt as f64).collect();
            put_1d(&g, "t", &t)?;
            // Tangential rows only: 3-D contacts add their normal rows below.
            let mt = h.force.len() / nt.max(1);
            put_2d(&g, "w", mt, nt, &h.displacement)?;
            put_2d(&g, "v", mt, nt, &h.velocity)?;
            put_2d(&g, "r", mt, nt, &h.force)?;
            let stick: Vec<i64> = s.stick_flags().into_iter().map(i64::from).collect();
            put_2d(&g, "stick", s.contacts.len(), nt, &stick)?;
            put_2d(
                &g,
                "u",
                s.dofs.dofs.len(),
                nt,
                &s.dof_histories(nt).map_err(|e| e.to_string())?,
            )?;
            if let Some(labels) = &setup.model.dof_labels {
                let l: Vec<String> = s.dofs.dofs.iter().map(|&d| labels[d].clone()).collect();
                ewr_model::h5::put_strs(f, "monitored_dof_labels", &l)?;
            }
            if let Some(nh) = &h.normal {
                let nc = nh.force.len() / nt.max(1);
                put_2d(&g, "lambda", nc, nt, &nh.force)?;
                put_2d(&g, "gap", nc, nt, &nh.gap)?;
                let state: Vec<i64> = nh.state.iter().map(|s| state_code(*s)).collect();
                put_2d(&g, "state", nc, nt, &state)?;
            }
            let c = f.create_group("contacts").map_err(h5)?;
            let col = |f: &dyn Fn(&ewr_solve::ContactSummary) -> f64| -> Vec<f64> {
                s.contacts.iter().map(f).collect()
            };
            put_1d(
                &c,
                "max_coulomb_violation",
                &col(&|x| x.max_coulomb_violation),
            )?;
            put_1d(&c, "dissipated_energy", &col(&|x| x.dissipated_energy))?;
            put_1d(
                &c,
                "displacement_amplitude",
                &col(&|x| x.displacement_amplitude),
            )?;
            put_1d(&c, "force_amplitude", &col(&|x| x.force_amplitude))?;
            let mut flat = Vec::new();
            let mut owner = Vec::new();
            for (i, cs) in s.contacts.iter().enumerate() {
                for iv in &cs.stick_intervals {
                    flat.extend_from_slice(iv);
                    owner.push(i as i64);
                }
            }
            put_2d(&c, "stick_intervals", owner.len(), 2, &flat)?;
            put_1d(&c, "stick_interval_contact", &owner)?;
            if h.normal.is_some() {
                let (mut flat, mut owner) = (Vec::new(), Vec::new());
                for (i, cs) in s.contacts.iter().enumerate() {
                    for iv in &cs.separation_intervals {
                        flat.extend_from_slice(iv);
                        owner.push(i as i64);
                    }
                }
                put_2d(&c, "separation_intervals", owner.len(), 2, &flat)?;
                put_1d(&c, "separation_interval_contact", &owner)?;
                let range = |k: usize| -> Vec<f64> {
                    s.contacts
                        .iter()
                        .map(|x| x.normal_force_range.map_or(f64::NAN, |r| r[k]))
                        .collect()
                };
                put_1d(&c, "normal_force_min", &range(0))?;
                put_1d(&c, "normal_force_max", &range(1))?;
            }
        }
        // Groups are closed above; flushing and closing here turns a full disk into an
        // error instead of a truncated file renamed into place.
        crate::finish_h5(file)
    })
}

/// Code of a sample's contact state in result files, as `ewr simulate` writes it:
/// 0 separated, 1 slip, 2 stick.
pub fn state_code(s: ewr_contact::SampleState) -> i64 {
    match s {
        ewr_contact::SampleState::Separated => 0,
        ewr_contact::SampleState::Slip => 1,
        ewr_contact::SampleState::Stick => 2,
    }
}
