//! Result files and figures: the HDF5 and CSV layouts of `docs/results-format.md`, written
//! by every front end (`ewr`, Python, studies) and read back (to resume a sweep, to load a
//! result in Python), and the figures ewr draws. Writers go through a temporary file renamed
//! when complete, so an existing result is only ever replaced by a whole one.

#[cfg(test)]
mod figure_ticks;
pub mod figures;
pub mod frc;
pub mod lock;
pub mod modes;
pub mod peaks;
pub mod read;
pub mod solution;
pub mod stepped;
pub mod study;

use ewr_model::h5::{put_1d, put_f64, put_i64, put_str};
use ewr_solve::Setup;
use std::path::Path;

pub use frc::{FrcCsv, read_stored_curves, write_frc};
pub use peaks::{LocusPoint, locus_points, plot_peaks, write_peaks_csv, write_peaks_h5};
pub use solution::{state_code, write_solution, write_timeseries};

/// Creates the folder a result file goes into, so that `-o out/run.h5` just works.
pub fn ensure_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create folder {}: {e}", dir.display())),
        _ => Ok(()),
    }
}

/// Flushes and closes an HDF5 file being written, so that a full disk or a failed write is an
/// error of the writer rather than a damaged file renamed into place (HDF5 reports nothing
/// when a file is dropped).
pub(crate) fn finish_h5(f: hdf5::File) -> Result<(), String> {
    f.flush().map_err(ewr_model::h5::h5)?;
    f.close().map_err(ewr_model::h5::h5)
}

/// The harmonic set of a run as result files name it: `odd:59`, or `auto:0.01` for
/// automatic sets (each point then records its own).
pub fn harmonics_label(point: &ewr_solve::PointSettings) -> String {
    match point.auto {
        Some(tol) => format!("auto:{tol}"),
        None => point.set.to_string(),
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("cannot write {}: {e}", path.display())
}

/// The root attributes every solve and FRC result file carries: what was computed, on which
/// model, with which settings.
pub(crate) fn common_attrs(
    f: &hdf5::File,
    kind: &str,
    model: &Path,
    setup: &Setup,
) -> Result<(), String> {
    put_str(f, "format", "ewr-result")?;
    put_i64(f, "version", 1)?;
    put_str(f, "kind", kind)?;
    put_str(f, "model", &model.display().to_string())?;
    put_str(f, "harmonics", &harmonics_label(&setup.point))?;
    put_i64(f, "n_samples", setup.point.n_samples as i64)?;
    put_str(f, "law", &setup.point.law.to_string())?;
    // What the amplitudes of the file (amp_norm, dof_peak, peaks) measure.
    put_str(f, "amplitude", setup.point.amplitude.name())?;
    put_str(f, "amplitude_formula", setup.point.amplitude.formula())?;
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
    put_str(f, "rho_mode", if auto { "auto" } else { "fixed" })?;
    put_str(f, "fingerprint", &setup.fingerprint())
}
