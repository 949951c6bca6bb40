//! Nonlinear modes (`ewr modes`): the backbone as HDF5 and CSV (layout in
//! docs/results-format.md).

use crate::{common_attrs, io_err};
use ewr_model::h5::{atomically, create_h5, put_1d, put_2d, put_i64, put_str};
use ewr_solve::Setup;
use ewr_solve::nonlinear_mode::{ModePoint, Synthesis};
use std::io::Write;
use std::path::Path;

/// Writes the backbone of mode `mode`: per amplitude, frequency, damping, status, the
/// fundamental of every DOF and the contact-force coefficients; and the forced response
/// synthesised from the mode (group `synthesis`).
pub fn write_modes_h5(
    path: &Path,
    model: &Path,
    setup: &Setup,
    (mode, points, synthesis): (usize, &[ModePoint], &Synthesis),
    status: &str,
) -> Result<(), String> {
    atomically(path, |tmp| {
        let f = create_h5(tmp)?;
        {
            let f = &f;
            common_attrs(f, "modes", model, setup)?;
            put_i64(f, "mode", mode as i64)?;
            put_str(f, "status", status)?;
            let col = |g: fn(&ModePoint) -> f64| points.iter().map(g).collect::<Vec<f64>>();
            put_1d(f, "amplitude", &col(|p| p.amplitude))?;
            put_1d(f, "omega", &col(|p| p.omega))?;
            put_1d(f, "damping_ratio", &col(|p| p.damping_ratio))?;
            put_1d(f, "xi", &col(|p| p.xi))?;
            put_1d(f, "residual", &col(|p| p.residual))?;
            put_1d(
                f,
                "converged",
                &points
                    .iter()
                    .map(|p| i64::from(p.converged))
                    .collect::<Vec<_>>(),
            )?;
            // Newton converged, but to no free oscillation (pitfall 7): not the mode.
            put_1d(
                f,
                "no_oscillation",
                &points
                    .iter()
                    .map(|p| i64::from(p.no_oscillation))
                    .collect::<Vec<_>>(),
            )?;
            put_1d(
                f,
                "iterations",
                &points
                    .iter()
                    .map(|p| p.iterations as i64)
                    .collect::<Vec<_>>(),
            )?;
            put_1d(
                f,
                "gmres_iterations",
                &points
                    .iter()
                    .map(|p| p.krylov_iterations as i64)
                    .collect::<Vec<_>>(),
            )?;
            let n = setup.model.n_dofs();
            let np = points.len();
            let re: Vec<f64> = points
                .iter()
                .flat_map(|p| p.shape.iter().map(|c| c.re))
                .collect();
            let im: Vec<f64> = points
                .iter()
                .flat_map(|p| p.shape.iter().map(|c| c.im))
                .collect();
            put_2d(f, "shape_re", np, n, &re)?;
            put_2d(f, "shape_im", np, n, &im)?;
            // Every harmonic of every DOF, where each point has them (NaN rows elsewhere).
            if let Some((u, nco)) = ewr_solve::nonlinear_mode::displacement_rows(points, n) {
                put_2d(f, "displacement", np, n * nco, &u)?;
            }
            let len = points.first().map_or(0, |p| p.friction.len());
            let fr: Vec<f64> = points.iter().flat_map(|p| p.friction.clone()).collect();
            put_2d(f, "friction", np, len, &fr)?;
            let sg = f.create_group("synthesis").map_err(ewr_model::h5::h5)?;
            put_1d(
                &sg,
                "omega",
                &synthesis.curve.iter().map(|c| c.0).collect::<Vec<_>>(),
            )?;
            put_1d(
                &sg,
                "amplitude",
                &synthesis.curve.iter().map(|c| c.1).collect::<Vec<_>>(),
            )?;
            let (pa, pw, pd) =
                synthesis
                    .peak
                    .clone()
                    .unwrap_or((f64::NAN, f64::NAN, vec![f64::NAN; n]));
            put_1d(&sg, "peak", &[pa, pw])?;
            put_1d(&sg, "peak_dof_amplitude", &pd)?;
        }
        crate::finish_h5(f)
    })
}

/// Writes the backbone as a table: `amplitude, omega, damping_ratio, xi, converged,
/// iterations, residual, no_oscillation`.
pub fn write_modes_csv(path: &Path, points: &[ModePoint]) -> Result<(), String> {
    crate::ensure_parent(path)?;
    atomically(path, |tmp| {
        let mut out = std::io::BufWriter::new(std::fs::File::create(tmp).map_err(io_err(path))?);
        writeln!(
            out,
            "amplitude,omega,damping_ratio,xi,converged,iterations,residual,no_oscillation"
        )
        .map_err(io_err(path))?;
        for p in points {
            writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                p.amplitude,
                p.omega,
                p.damping_ratio,
                p.xi,
                u8::from(p.converged),
                p.iterations,
                p.residual,
                u8::from(p.no_oscillation)
            )
            .map_err(io_err(path))?;
        }
        out.flush().map_err(io_err(path))
    })
}
