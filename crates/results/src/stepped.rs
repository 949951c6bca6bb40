//! A stepped sine's table (`ewr simulate --omega-start ... --csv`): one row per frequency,
//! flushed as each is done, with the columns of an FRC table where they mean the same thing
//! (`omega`, `converged`, `amp_norm`, `amp_w<c>`, `peak_u<i>`, `stick<c>`, `energy<c>`), so
//! the two overlay column for column.

use crate::io_err;
use ewr_simulate::SteppedPoint;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The table being written.
pub struct SteppedCsv {
    out: BufWriter<File>,
    path: PathBuf,
}

impl SteppedCsv {
    /// Creates the file and writes the header: `omega, converged, periods,
    /// steady_state_error, amp_norm`, then `amp_w<c>` per contact (largest `|w_c|`),
    /// `peak_u<i>`, `mean_u<i>` and `h1_u<i>` per recorded DOF, `stick<c>` and `energy<c>` per
    /// contact.
    pub fn create(path: &Path, n_contacts: usize, dofs: &[usize]) -> Result<Self, String> {
        crate::ensure_parent(path)?;
        let f = File::create(path).map_err(io_err(path))?;
        let mut out = BufWriter::new(f);
        let mut cols: Vec<String> = [
            "omega",
            "converged",
            "periods",
            "steady_state_error",
            "amp_norm",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cols.extend((0..n_contacts).map(|c| format!("amp_w{c}")));
        for what in ["peak", "mean", "h1"] {
            cols.extend(dofs.iter().map(|i| format!("{what}_u{i}")));
        }
        cols.extend((0..n_contacts).map(|c| format!("stick{c}")));
        cols.extend((0..n_contacts).map(|c| format!("energy{c}")));
        writeln!(out, "{}", cols.join(",")).map_err(io_err(path))?;
        out.flush().map_err(io_err(path))?;
        Ok(SteppedCsv {
            out,
            path: path.to_path_buf(),
        })
    }

    /// Appends one frequency and flushes it to the file.
    pub fn row(&mut self, p: &SteppedPoint) -> Result<(), String> {
        let mut row = vec![
            format!("{}", p.omega),
            format!("{}", u8::from(p.converged)),
            format!("{}", p.periods_run),
            format!("{}", p.steady_state_error),
            format!("{}", p.amplitude),
        ];
        let all = [
            &p.displacement_amplitude,
            &p.dof_max,
            &p.dof_mean,
            &p.dof_h1,
            &p.stick_fraction,
            &p.dissipated_energy,
        ];
        for v in all {
            row.extend(v.iter().map(|x| format!("{x}")));
        }
        writeln!(self.out, "{}", row.join(",")).map_err(io_err(&self.path))?;
        self.out.flush().map_err(io_err(&self.path))
    }
}

/// The stepped sine's curve (`amp_norm` against `w`), drawn as `ewr frc --plot` draws a
/// curve; `name` titles it where the model has no title.
pub fn plot(
    path: &Path,
    model: &ewr_model::Model,
    name: &str,
    points: &[SteppedPoint],
) -> Result<(), String> {
    let title = format!(
        "{}: stepped sine (ewr simulate)",
        model
            .title
            .as_deref()
            .map(crate::figures::short_title)
            .unwrap_or_else(|| name.to_string())
    );
    let style = crate::figures::FrcStyle {
        title: &title,
        axis: crate::figures::FrequencyAxis::of_model(model, ewr_solve::Amplitude::Max, false),
        parameter: None,
    };
    let line = crate::figures::FrcLine {
        label: "stepped sine".into(),
        points: points
            .iter()
            .map(|p| (p.omega, p.amplitude, p.converged))
            .collect(),
        peaks: Vec::new(),
        value: None,
        inaccurate: Vec::new(),
        unstable: Vec::new(),
    };
    crate::figures::frc_lines(path, &style, &[line])
}
