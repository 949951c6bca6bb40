//! Result files other tools read: time-series CSV, FRC CSV (written point by point), and the
//! HDF5 result files documented in `docs/results-format.md`.

use crate::solve_cmd::{Curve, Setup};
use ewr_contact::ContactParams;
use ewr_model::h5::{atomically, create_h5, h5, put_1d, put_2d, put_f64, put_i64, put_str};
use ewr_simulate::timeseries::TimeSeries;
use ewr_solve::{FrcPoint, PointSolution};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Creates the folder a result file goes into, so that `-o out/run.h5` just works.
pub fn ensure_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create folder {}: {e}", dir.display())),
        _ => Ok(()),
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("cannot write {}: {e}", path.display())
}

/// Writes one period of contact histories as the time-series CSV that `ewr simulate` also
/// writes (columns in `docs/results-format.md`), so that `ewr compare` can read both.
pub fn write_timeseries(
    path: &Path,
    s: &PointSolution,
    params: &ContactParams,
) -> Result<(), String> {
    ensure_parent(path)?;
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

/// The FRC table, one row per point, flushed as each point arrives so that an interrupted
/// sweep keeps every finished point.
pub struct FrcCsv {
    out: BufWriter<File>,
    path: std::path::PathBuf,
}

impl FrcCsv {
    /// Creates the file and writes the header: `mu_n, omega, converged, iterations, residual,
    /// amp_norm`, then `amp_w<c>` per contact (max over the period of |w_c(t)|), then
    /// `peak_u<i>` per monitored DOF, then `stick<c>` (stick fraction of the period) and
    /// `energy<c>` (energy dissipated per cycle) per contact.
    pub fn create(path: &Path, n_contacts: usize, monitor: &[usize]) -> Result<Self, String> {
        ensure_parent(path)?;
        let f = File::create(path).map_err(io_err(path))?;
        let mut out = BufWriter::new(f);
        let mut cols: Vec<String> = [
            "mu_n",
            "omega",
            "converged",
            "iterations",
            "residual",
            "amp_norm",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cols.extend((0..n_contacts).map(|c| format!("amp_w{c}")));
        cols.extend(monitor.iter().map(|i| format!("peak_u{i}")));
        cols.extend((0..n_contacts).map(|c| format!("stick{c}")));
        cols.extend((0..n_contacts).map(|c| format!("energy{c}")));
        writeln!(out, "{}", cols.join(",")).map_err(io_err(path))?;
        out.flush().map_err(io_err(path))?;
        Ok(FrcCsv {
            out,
            path: path.to_path_buf(),
        })
    }

    /// Appends one point and flushes it to the file.
    pub fn row(&mut self, mu_n: f64, p: &FrcPoint) -> Result<(), String> {
        let s = &p.solution;
        let mut row = vec![
            format!("{mu_n}"),
            format!("{}", s.omega),
            format!("{}", u8::from(s.status.converged())),
            format!("{}", s.iterations),
            format!("{}", s.residual),
            format!("{}", s.dofs.norm_peak),
        ];
        row.extend(
            s.contacts
                .iter()
                .map(|c| format!("{}", c.displacement_amplitude)),
        );
        row.extend(s.dofs.peak.iter().map(|v| format!("{v}")));
        row.extend(s.stick_fractions().iter().map(|v| format!("{v}")));
        row.extend(
            s.contacts
                .iter()
                .map(|c| format!("{}", c.dissipated_energy)),
        );
        let path = self.path.clone();
        writeln!(self.out, "{}", row.join(",")).map_err(io_err(&path))?;
        self.out.flush().map_err(io_err(&path))
    }
}

fn common_attrs(f: &hdf5::File, kind: &str, model: &Path, setup: &Setup) -> Result<(), String> {
    put_str(f, "format", "ewr-result")?;
    put_i64(f, "version", 1)?;
    put_str(f, "kind", kind)?;
    put_str(f, "model", &model.display().to_string())?;
    put_str(f, "harmonics", &setup.point.set.to_string())?;
    put_i64(f, "n_samples", setup.point.n_samples as i64)?;
    put_str(f, "law", &setup.point.law.to_string())?;
    put_f64(f, "tolerance", setup.point.newton.tol_residual)?;
    put_str(f, "linear", &setup.point.newton.linear.to_string())?;
    put_str(f, "preconditioner", &setup.point.preconditioner.to_string())?;
    put_i64(f, "contact_dim", setup.model.contacts.dim as i64)?;
    put_i64(f, "n_contacts", setup.model.contacts.len() as i64)?;
    let hs: Vec<i64> = setup
        .point
        .set
        .harmonics()
        .iter()
        .map(|&h| h as i64)
        .collect();
    put_1d(f, "harmonic_list", &hs)?;
    if let Some(cy) = &setup.model.cyclic {
        // What a reader needs to expand sector 0's results to the disk (docs/cyclic.md).
        put_i64(f, "cyclic_sectors", cy.sectors as i64)?;
        put_i64(f, "cyclic_engine_order", cy.engine_order)?;
        let nd: Vec<i64> = setup
            .point
            .set
            .harmonics()
            .iter()
            .map(|&h| cy.nodal_diameter(h) as i64)
            .collect();
        put_1d(f, "nodal_diameters", &nd)?;
    }
    let dofs: Vec<i64> = setup.point.monitor.iter().map(|&d| d as i64).collect();
    put_1d(f, "monitored_dofs", &dofs)?;
    put_1d(f, "mu_n", &setup.model.contacts.mu_n)?;
    put_1d(f, "rho", &setup.model.contacts.rho)?;
    // "auto": `rho` holds factors on 1 / (h w |G_h|) at each point (3-D contacts: always).
    let c = &setup.model.contacts;
    let auto = c.rho_auto || c.has_normal();
    put_str(f, "rho_mode", if auto { "auto" } else { "fixed" })
}

/// Writes one periodic solution (layout in docs/results-format.md).
pub fn write_solution(
    path: &Path,
    model: &Path,
    setup: &Setup,
    s: &PointSolution,
) -> Result<(), String> {
    atomically(path, |tmp| {
        let f = &create_h5(tmp)?;
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
        Ok(())
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

/// Writes frequency response curves (layout in docs/results-format.md).
pub fn write_frc(path: &Path, model: &Path, setup: &Setup, curves: &[Curve]) -> Result<(), String> {
    atomically(path, |tmp| {
        let f = &create_h5(tmp)?;
        common_attrs(f, "frc", model, setup)?;
        put_i64(f, "n_curves", curves.len() as i64)?;
        for (i, c) in curves.iter().enumerate() {
            let g = f.create_group(&format!("curve_{i}")).map_err(h5)?;
            put_f64(&g, "mu_n_override", c.mu_n.unwrap_or(f64::NAN))?;
            put_str(&g, "status", c.stopped.as_deref().unwrap_or("complete"))?;
            let pts = &c.points;
            let np = pts.len();
            put_1d(
                &g,
                "omega",
                &pts.iter().map(|p| p.solution.omega).collect::<Vec<_>>(),
            )?;
            put_1d(
                &g,
                "converged",
                &pts.iter()
                    .map(|p| i64::from(p.solution.status.converged()))
                    .collect::<Vec<_>>(),
            )?;
            put_1d(
                &g,
                "iterations",
                &pts.iter()
                    .map(|p| p.solution.iterations as i64)
                    .collect::<Vec<_>>(),
            )?;
            put_1d(
                &g,
                "residual",
                &pts.iter().map(|p| p.solution.residual).collect::<Vec<_>>(),
            )?;
            put_1d(&g, "step", &pts.iter().map(|p| p.step).collect::<Vec<_>>())?;
            put_1d(
                &g,
                "amp_norm",
                &pts.iter()
                    .map(|p| p.solution.dofs.norm_peak)
                    .collect::<Vec<_>>(),
            )?;
            let nc = setup.model.contacts.len();
            let amp_w: Vec<f64> = pts
                .iter()
                .flat_map(|p| p.solution.contacts.iter().map(|c| c.displacement_amplitude))
                .collect();
            put_2d(&g, "amp_w", np, nc, &amp_w)?;
            let stick: Vec<f64> = pts
                .iter()
                .flat_map(|p| p.solution.stick_fractions())
                .collect();
            put_2d(&g, "stick_fraction", np, nc, &stick)?;
            let energy: Vec<f64> = pts
                .iter()
                .flat_map(|p| p.solution.contacts.iter().map(|c| c.dissipated_energy))
                .collect();
            put_2d(&g, "dissipated_energy", np, nc, &energy)?;
            let nd = setup.point.monitor.len();
            let peaks: Vec<f64> = pts
                .iter()
                .flat_map(|p| p.solution.dofs.peak.iter().copied())
                .collect();
            put_2d(&g, "dof_peak", np, nd, &peaks)?;
            let len = pts.first().map_or(0, |p| p.solution.friction.len());
            let fr: Vec<f64> = pts
                .iter()
                .flat_map(|p| p.solution.friction.iter().copied())
                .collect();
            put_2d(&g, "friction", np, len, &fr)?;
            let cd: Vec<f64> = pts
                .iter()
                .flat_map(|p| p.solution.displacement.iter().copied())
                .collect();
            put_2d(&g, "contact_displacement", np, len, &cd)?;
            let pg = g.create_group("peaks").map_err(h5)?;
            let pk = &c.peaks;
            put_1d(
                &pg,
                "omega",
                &pk.iter().map(|p| p.omega).collect::<Vec<_>>(),
            )?;
            put_1d(
                &pg,
                "amplitude",
                &pk.iter().map(|p| p.amplitude).collect::<Vec<_>>(),
            )?;
            put_1d(
                &pg,
                "evaluations",
                &pk.iter().map(|p| p.evaluations as i64).collect::<Vec<_>>(),
            )?;
            let stick: Vec<f64> = pk
                .iter()
                .flat_map(|p| p.solution.stick_fractions())
                .collect();
            put_2d(&pg, "stick_fraction", pk.len(), nc, &stick)?;
            let fr: Vec<f64> = pk
                .iter()
                .flat_map(|p| p.solution.friction.iter().copied())
                .collect();
            put_2d(&pg, "friction", pk.len(), len, &fr)?;
            let ph = g.create_group("phase_resonances").map_err(h5)?;
            put_1d(
                &ph,
                "omega",
                &c.phase.iter().map(|p| p.omega).collect::<Vec<_>>(),
            )?;
            put_1d(
                &ph,
                "amplitude",
                &c.phase.iter().map(|p| p.amplitude).collect::<Vec<_>>(),
            )?;
            put_1d(
                &ph,
                "evaluations",
                &c.phase
                    .iter()
                    .map(|p| p.evaluations as i64)
                    .collect::<Vec<_>>(),
            )?;
        }
        Ok(())
    })
}

/// The points of one curve of an FRC result file, as `--resume` needs them.
pub struct StoredCurve {
    /// Frequencies, in the order computed.
    pub omega: Vec<f64>,
    /// The step that led to each point.
    pub step: Vec<f64>,
    /// Friction coefficients of each point (hb layout).
    pub friction: Vec<Vec<f64>>,
}

/// Reads the curves of an FRC result file written by `ewr frc -o` with the same options
/// (harmonics, contacts, `--mu-n` values), to resume the sweep.
pub fn read_frc(
    path: &Path,
    setup: &Setup,
    mu_values: &[Option<f64>],
) -> Result<Vec<StoredCurve>, String> {
    use ewr_model::h5::{get_1d, get_f64, get_i64, get_str};
    let at = |e: String| format!("--resume: {}: {e}", path.display());
    let f = hdf5::File::open(path).map_err(|e| at(e.to_string()))?;
    if get_str(&f, "kind").map_err(at)? != "frc" {
        return Err(at("not an FRC result file (ewr frc -o)".into()));
    }
    let same = |name: &str, stored: String, now: String| {
        if stored == now {
            Ok(())
        } else {
            Err(at(format!(
                "computed with {name} {stored}, this run has {now}: resume with the options \
                 of the interrupted run"
            )))
        }
    };
    let set = setup.point.set.to_string();
    same("harmonics", get_str(&f, "harmonics").map_err(at)?, set)?;
    let nc = setup.model.contacts.len().to_string();
    same(
        "contacts",
        get_i64(&f, "n_contacts").map_err(at)?.to_string(),
        nc,
    )?;
    let n = get_i64(&f, "n_curves").map_err(at)?;
    same(
        "curves (--mu-n values)",
        n.to_string(),
        mu_values.len().to_string(),
    )?;
    mu_values
        .iter()
        .enumerate()
        .map(|(i, mu)| {
            let g = f
                .group(&format!("curve_{i}"))
                .map_err(|e| at(e.to_string()))?;
            let stored = get_f64(&g, "mu_n_override").map_err(at)?;
            let fmt = |x: Option<f64>| x.map_or("the model's".to_string(), |m| m.to_string());
            let stored = (!stored.is_nan()).then_some(stored);
            same("mu_n", fmt(stored), fmt(*mu))?;
            let omega: Vec<f64> = get_1d(&g, "omega").map_err(at)?;
            let step: Vec<f64> = get_1d(&g, "step").map_err(at)?;
            let flat: Vec<f64> = get_1d(&g, "friction").map_err(at)?;
            let np = omega.len();
            if step.len() != np || (np > 0 && !flat.len().is_multiple_of(np)) {
                return Err(at(format!("curve_{i}: inconsistent dataset sizes")));
            }
            let len = flat.len().checked_div(np).unwrap_or(0);
            Ok(StoredCurve {
                omega,
                step,
                friction: flat.chunks(len.max(1)).map(<[f64]>::to_vec).collect(),
            })
        })
        .collect()
}
