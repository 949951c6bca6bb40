//! Frequency response curves: the HDF5 result file (written whole at the end, read back to
//! resume) and the CSV table (written row by row as points arrive, put in curve order at the
//! end).

use crate::{common_attrs, io_err};
use ewr_model::h5::{atomically, create_h5, h5, put_1d, put_2d, put_f64, put_i64, put_str};
use ewr_solve::{Curve, FrcPoint, Setup, StoredCurve};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The FRC table, one row per point, flushed as each point arrives so that an interrupted
/// sweep keeps every finished point. Curves solved side by side (several `--mu-n`) arrive
/// interleaved in the order their points finish; [`FrcCsv::finish`] rewrites the table with
/// each curve's rows together, in curve order, so that a run's table does not depend on
/// thread timing.
pub struct FrcCsv {
    out: BufWriter<File>,
    path: std::path::PathBuf,
    header: String,
    /// Each row written, with its curve.
    rows: Vec<(usize, String)>,
    /// Whether rows end with the truncation error `amp_error`.
    estimate: bool,
    /// Whether they end with the point's highest harmonic `h_max` (automatic sets).
    auto: bool,
    /// Whether they end with `stable` and `max_multiplier` (`--stability`).
    stability: bool,
}

/// The names of the amplitude columns of an FRC table in the measure `amplitude`: the total
/// (`amp_norm` for `max`, else `amp_<measure>`) and the per-DOF prefix (`peak`, else the
/// measure), as in `peak_u0` or `dynamic_u0`.
pub fn amplitude_columns(amplitude: ewr_solve::Amplitude) -> (String, String) {
    match amplitude {
        ewr_solve::Amplitude::Max => ("amp_norm".to_string(), "peak".to_string()),
        a => (format!("amp_{a}"), a.to_string()),
    }
}

impl FrcCsv {
    /// Creates the file and writes the header: `mu_n, omega, converged, iterations, residual,
    /// amp_norm`, then `amp_w<c>` per contact (max over the period of |w_c(t)|), then
    /// `peak_u<i>` per monitored DOF, then `stick<c>` (stick fraction of the period) and
    /// `energy<c>` (energy dissipated per cycle) per contact. An amplitude measure other than
    /// `max` names its columns: `amp_<measure>` and `<measure>_u<i>` (e.g. `amp_dynamic`,
    /// `dynamic_u0`). With `stability`, rows end with `stable` (1, 0, empty where not
    /// classified) and `max_multiplier` (largest Floquet multiplier modulus).
    pub fn create(
        path: &Path,
        n_contacts: usize,
        monitor: &[usize],
        (estimate, auto, stability): (bool, bool, bool),
        amplitude: ewr_solve::Amplitude,
    ) -> Result<Self, String> {
        crate::ensure_parent(path)?;
        let f = File::create(path).map_err(io_err(path))?;
        let mut out = BufWriter::new(f);
        let mut cols: Vec<String> = ["mu_n", "omega", "converged", "iterations", "residual"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (total, per_dof) = amplitude_columns(amplitude);
        cols.push(total);
        cols.extend((0..n_contacts).map(|c| format!("amp_w{c}")));
        cols.extend(monitor.iter().map(|i| format!("{per_dof}_u{i}")));
        cols.extend((0..n_contacts).map(|c| format!("stick{c}")));
        cols.extend((0..n_contacts).map(|c| format!("energy{c}")));
        if estimate || auto {
            cols.push("amp_error".into());
            cols.push("amp_error_method".into());
        }
        if auto {
            cols.push("h_max".into());
        }
        if stability {
            cols.push("stable".into());
            cols.push("max_multiplier".into());
        }
        let header = cols.join(",");
        writeln!(out, "{header}").map_err(io_err(path))?;
        out.flush().map_err(io_err(path))?;
        Ok(FrcCsv {
            out,
            path: path.to_path_buf(),
            header,
            rows: Vec::new(),
            estimate: estimate || auto,
            auto,
            stability,
        })
    }

    /// Appends one point of curve `curve` and flushes it to the file.
    pub fn row(&mut self, curve: usize, mu_n: f64, p: &FrcPoint) -> Result<(), String> {
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
        if self.estimate {
            row.push(format!(
                "{}",
                s.estimate.as_ref().map_or(f64::NAN, |e| e.amplitude)
            ));
            row.push(
                s.estimate
                    .as_ref()
                    .map_or("", |e| e.method.name())
                    .to_string(),
            );
        }
        if self.auto {
            row.push(format!("{}", s.set.h_max()));
        }
        if self.stability {
            match &s.stability {
                Some(st) => {
                    row.push(format!("{}", u8::from(st.is_stable())));
                    row.push(format!("{}", st.max_multiplier));
                }
                None => {
                    row.push(String::new());
                    row.push("nan".into());
                }
            }
        }
        let path = self.path.clone();
        let row = row.join(",");
        writeln!(self.out, "{row}").map_err(io_err(&path))?;
        self.out.flush().map_err(io_err(&path))?;
        self.rows.push((curve, row));
        Ok(())
    }

    /// Puts the rows in curve order (each curve's in the order it was solved), where curves
    /// arrived interleaved: the table is rewritten beside the file and renamed over it, so
    /// that a failure leaves the streamed table as it was.
    pub fn finish(mut self) -> Result<(), String> {
        if self.rows.is_sorted_by_key(|r| r.0) {
            return Ok(());
        }
        // The streamed file is complete; its handle is not needed for the rewrite.
        drop(self.out);
        self.rows.sort_by_key(|r| r.0);
        let (header, rows) = (&self.header, &self.rows);
        atomically(&self.path, |tmp| {
            let mut out = BufWriter::new(File::create(tmp).map_err(io_err(tmp))?);
            writeln!(out, "{header}").map_err(io_err(tmp))?;
            for (_, row) in rows {
                writeln!(out, "{row}").map_err(io_err(tmp))?;
            }
            out.flush().map_err(io_err(tmp))
        })
    }
}

/// Writes frequency response curves (layout in docs/results-format.md).
pub fn write_frc(path: &Path, model: &Path, setup: &Setup, curves: &[Curve]) -> Result<(), String> {
    atomically(path, |tmp| {
        let file = create_h5(tmp)?;
        {
            let f = &file;
            common_attrs(f, "frc", model, setup)?;
            put_i64(f, "n_curves", curves.len() as i64)?;
            for (i, c) in curves.iter().enumerate() {
                let g = f.create_group(&format!("curve_{i}")).map_err(h5)?;
                put_f64(&g, "mu_n_override", c.mu_n.unwrap_or(f64::NAN))?;
                put_str(
                    &g,
                    "status",
                    &c.stopped
                        .as_ref()
                        .map_or("complete".to_string(), ToString::to_string),
                )?;
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
                // Only where estimated (--estimate), so that other files keep their layout.
                let error = |s: &ewr_solve::PointSolution| s.estimate.as_ref().map(|e| e.amplitude);
                if pts.iter().any(|p| p.solution.estimate.is_some()) {
                    let e: Vec<f64> = pts
                        .iter()
                        .map(|p| error(&p.solution).unwrap_or(f64::NAN))
                        .collect();
                    put_1d(&g, "amp_error", &e)?;
                    put_1d(
                        &g,
                        "amp_error_method",
                        &methods(pts.iter().map(|p| &p.solution)),
                    )?;
                }
                // Only where classified (--stability), so that other files keep their layout.
                if pts.iter().any(|p| p.solution.stability.is_some()) {
                    let sols: Vec<&ewr_solve::PointSolution> =
                        pts.iter().map(|p| &p.solution).collect();
                    write_stability(&g, &sols)?;
                    let omegas: Vec<f64> = sols.iter().map(|s| s.omega).collect();
                    let turns: Vec<i64> = ewr_solve::turning_points(&omegas)
                        .into_iter()
                        .map(|i| i as i64)
                        .collect();
                    put_1d(&g, "turning_points", &turns)?;
                }
                // Automatic sets differ from point to point: every point's coefficients are
                // written on the curve's largest set (the others' harmonics are zero there),
                // and each point's own highest harmonic beside them.
                let pk = &c.peaks;
                let fset = pts
                    .iter()
                    .map(|p| &p.solution.set)
                    .chain(pk.iter().map(|p| &p.solution.set))
                    .max_by_key(|s| s.n_coeffs())
                    .cloned()
                    .unwrap_or_else(|| setup.point.set.clone());
                let on_fset = |s: &ewr_solve::PointSolution, x: &[f64]| -> Vec<f64> {
                    if s.set == fset {
                        x.to_vec()
                    } else {
                        fset.prolong(x, &s.set)
                            .unwrap_or_else(|_| vec![f64::NAN; x.len()])
                    }
                };
                let signals = pts.first().map_or(0, |p| {
                    p.solution.friction.len() / p.solution.set.n_coeffs().max(1)
                });
                let len = signals * fset.n_coeffs();
                if setup.point.auto.is_some() {
                    put_str(&g, "friction_harmonics", &fset.to_string())?;
                    put_1d(
                        &g,
                        "harmonics_h_max",
                        &pts.iter()
                            .map(|p| p.solution.set.h_max() as i64)
                            .collect::<Vec<_>>(),
                    )?;
                }
                let fr: Vec<f64> = pts
                    .iter()
                    .flat_map(|p| on_fset(&p.solution, &p.solution.friction))
                    .collect();
                put_2d(&g, "friction", np, len, &fr)?;
                let cd: Vec<f64> = pts
                    .iter()
                    .flat_map(|p| on_fset(&p.solution, &p.solution.displacement))
                    .collect();
                put_2d(&g, "contact_displacement", np, len, &cd)?;
                let pg = g.create_group("peaks").map_err(h5)?;
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
                    .flat_map(|p| on_fset(&p.solution, &p.solution.friction))
                    .collect();
                put_2d(&pg, "friction", pk.len(), len, &fr)?;
                if pk.iter().any(|p| p.solution.stability.is_some()) {
                    let sols: Vec<&ewr_solve::PointSolution> =
                        pk.iter().map(|p| &p.solution).collect();
                    let (stable, mult) = stability_columns(&sols);
                    put_1d(&pg, "stable", &stable)?;
                    put_1d(&pg, "max_multiplier", &mult)?;
                    write_phase_columns(&pg, &sols)?;
                }
                if pk.iter().any(|p| p.solution.estimate.is_some()) {
                    let e: Vec<f64> = pk
                        .iter()
                        .map(|p| error(&p.solution).unwrap_or(f64::NAN))
                        .collect();
                    put_1d(&pg, "amp_error", &e)?;
                    put_1d(
                        &pg,
                        "amp_error_method",
                        &methods(pk.iter().map(|p| &p.solution)),
                    )?;
                }
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
        }
        // Groups are closed above; flushing and closing here turns a full disk into an
        // error instead of a truncated file renamed into place.
        crate::finish_h5(file)
    })
}

/// How each point's estimate was obtained ([`ewr_solve::EstimateMethod::code`], -1 for none).
fn methods<'a>(points: impl Iterator<Item = &'a ewr_solve::PointSolution>) -> Vec<i64> {
    points
        .map(|s| s.estimate.as_ref().map_or(-1, |e| e.method.code()))
        .collect()
}

/// Per point: `stable` (1, 0, -1 where not classified) and the largest multiplier modulus
/// (NaN where not classified).
fn stability_columns(sols: &[&ewr_solve::PointSolution]) -> (Vec<i64>, Vec<f64>) {
    sols.iter()
        .map(|s| match &s.stability {
            Some(st) => (i64::from(st.is_stable()), st.max_multiplier),
            None => (-1, f64::NAN),
        })
        .unzip()
}

/// A cyclic sector's stability, per point: `travelling_wave_only` (1 classified against the
/// perturbations that keep the travelling wave only, 0 against every inter-sector phase, -1
/// not classified) and, with `--all-phases`, `phase_max_multiplier` (`n x (N/2 + 1)`: each
/// family `p`'s largest multiplier, NaN where not classified). Nothing on ordinary models.
fn write_phase_columns(g: &hdf5::Group, sols: &[&ewr_solve::PointSolution]) -> Result<(), String> {
    if let Some(only) = ewr_solve::travelling_wave_flags(sols) {
        put_1d(g, "travelling_wave_only", &only)?;
    }
    if let Some((m, families)) = ewr_solve::phase_multipliers(sols) {
        put_2d(g, "phase_max_multiplier", sols.len(), families, &m)?;
    }
    Ok(())
}

/// A curve's stability: per point `stable` and `max_multiplier`, and the group
/// `stability_changes` (`index` of the first point on the new side, `omega` midway, `crossing`
/// 1 through +1, 2 through -1, 3 a complex pair, `to_unstable` 1 or 0).
fn write_stability(g: &hdf5::Group, sols: &[&ewr_solve::PointSolution]) -> Result<(), String> {
    let (stable, mult) = stability_columns(sols);
    put_1d(g, "stable", &stable)?;
    put_1d(g, "max_multiplier", &mult)?;
    write_phase_columns(g, sols)?;
    let changes = ewr_solve::stability_changes(sols);
    let cg = g.create_group("stability_changes").map_err(h5)?;
    put_1d(
        &cg,
        "index",
        &changes.iter().map(|c| c.index as i64).collect::<Vec<_>>(),
    )?;
    put_1d(
        &cg,
        "omega",
        &changes.iter().map(|c| c.omega).collect::<Vec<_>>(),
    )?;
    put_1d(
        &cg,
        "crossing",
        &changes
            .iter()
            .map(|c| c.crossing.code())
            .collect::<Vec<_>>(),
    )?;
    put_1d(
        &cg,
        "to_unstable",
        &changes
            .iter()
            .map(|c| i64::from(c.to_unstable))
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}

/// Reads the curves of an FRC result file written by `ewr frc -o` with the same options
/// (harmonics, contacts, `--mu-n` values), to resume the sweep.
pub fn read_stored_curves(
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
    let set = crate::harmonics_label(&setup.point);
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
    let curves = mu_values
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
            // Automatic sets: the coefficients are stored on the curve's largest set.
            let set = match get_str(&g, "friction_harmonics") {
                Ok(s) => Some(
                    s.parse::<ewr_hb::HarmonicSet>()
                        .map_err(|e| at(format!("curve_{i}/friction_harmonics: {e}")))?,
                ),
                Err(_) => None,
            };
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
                set,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    // What the checks above do not name (the model itself, samples, law); files written
    // before fingerprints were stored are checked point by point only.
    if let Ok(stored) = get_str(&f, "fingerprint")
        && stored != setup.fingerprint()
    {
        return Err(at(format!(
            "computed for another model or other options (fingerprint {stored}, this run {}): \
             resume with the model and options of the interrupted run; the file was left as it \
             was",
            setup.fingerprint()
        )));
    }
    Ok(curves)
}
